/* The replayed cgroup walk (src/cgroup/cgwalk_cache.c) on fixture trees
 * under a temp dir: a replay calls the callback with exactly what a real
 * walk of the unchanged tree calls (paths, depths, inodes, the parent's
 * context), a mkdir or rmdir anywhere in the tree (a leaf included) makes
 * the next call a real walk that sees it, full_every bounds the replays in
 * a row, SKIP on a replay skips the recorded children, a changed root or
 * options walk again, a directory made between the walker's leaf test and
 * its watch is not lost (fixture and cgroupfs); and on the host's cgroupfs (root; skipped otherwise)
 * that a mkdir and an rmdir in a cgroup directory reach inotify, which the
 * cache relies on. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cgroup/cgwalk_cache.h"

static char root[64];

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(p);
}

static int setup(void **st)
{
	(void)st;
	strcpy(root, "/tmp/sl-cgwcache-XXXXXX");
	assert_non_null(mkdtemp(root));
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

static void mk(const char *rel)
{
	char p[256];
	snprintf(p, sizeof(p), "%s%s", root, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

/* What the callback saw: one line per directory "depth rel ino parent" (the
 * parent's context: its rel), and its own rel in its context. */
struct seen {
	char text[16384];
	size_t len;
	const char *skip; /* return SKIP for this rel */
};

struct ctx {
	char rel[128];
};

static int cb(const struct sl_cgwalk_ent *e, void *arg)
{
	struct seen *s = arg;
	const struct ctx *pa = e->parent;
	struct ctx *me = e->ctx;
	s->len += (size_t)snprintf(s->text + s->len, sizeof(s->text) - s->len, "%d %s %s %llu <%s>\n", e->depth,
				   e->rel, e->name, (unsigned long long)e->ino, pa ? pa->rel : "-");
	snprintf(me->rel, sizeof(me->rel), "%s", e->rel);
	return s->skip && !strcmp(s->skip, e->rel) ? SL_CGWALK_SKIP : SL_CGWALK_DESCEND;
}

static const struct sl_cgwalk_opts opts = {.ctx_size = sizeof(struct ctx)};

/* One call through the cache and one plain walk of the same tree: the same
 * callbacks. Returns the cache's counters after the call. */
static struct sl_cgwalk_cache_stats both(struct sl_cgwalk_cache *c, struct seen *via_cache)
{
	struct seen plain = {.skip = via_cache->skip};
	struct sl_cgwalk_stats a, b;
	struct sl_cgwalk_cache_stats cs;
	via_cache->len = 0;
	via_cache->text[0] = 0;
	assert_int_equal(sl_cgwalk_cached(c, root, &opts, cb, via_cache, &a), 0);
	assert_int_equal(sl_cgwalk(root, &opts, cb, &plain, &b), 0);
	assert_string_equal(via_cache->text, plain.text);
	assert_int_equal(a.dirs, b.dirs);
	sl_cgwalk_cache_stats(c, &cs);
	return cs;
}

static void replay_until_change(void **st)
{
	(void)st;
	struct sl_cgwalk_cache *c = sl_cgwalk_cache_new(100);
	struct seen s = {0};
	struct sl_cgwalk_cache_stats cs;
	mk("/kubepods");
	mk("/kubepods/podA");
	mk("/kubepods/podA/ctr1");
	mk("/kubepods/podA/ctr2");
	mk("/kubepods/podB");
	mk("/system.slice");

	cs = both(c, &s);
	assert_int_equal(cs.walks, 1);
	assert_int_equal(cs.replays, 0);
	assert_non_null(strstr(s.text, "2 /kubepods/podA ")); /* something was walked */
	assert_non_null(strstr(s.text, "3 /kubepods/podA/ctr2 ctr2 "));
	assert_non_null(strstr(s.text, "<" "/kubepods/podA>\n")); /* parent context carried */
	cs = both(c, &s);
	assert_int_equal(cs.walks, 1);
	assert_int_equal(cs.replays, 1); /* nothing changed: replayed, same callbacks */
	cs = both(c, &s);
	assert_int_equal(cs.replays, 2);

	mk("/kubepods/podB/ctr3"); /* in a directory that was a leaf */
	cs = both(c, &s);
	assert_int_equal(cs.walks, 2);
	assert_int_equal(cs.events, 1);
	assert_non_null(strstr(s.text, "/kubepods/podB/ctr3"));
	cs = both(c, &s);
	assert_int_equal(cs.walks, 2);
	assert_int_equal(cs.replays, 3);

	char p[256];
	snprintf(p, sizeof(p), "%s/kubepods/podA/ctr1", root);
	assert_int_equal(rmdir(p), 0); /* a removed directory */
	cs = both(c, &s);
	assert_int_equal(cs.walks, 3);
	assert_null(strstr(s.text, "ctr1"));

	snprintf(p, sizeof(p), "%s/kubepods/podA/ctr2", root);
	char q[256];
	snprintf(q, sizeof(q), "%s/kubepods/podA/ctr9", root);
	assert_int_equal(rename(p, q), 0); /* a renamed one */
	cs = both(c, &s);
	assert_int_equal(cs.walks, 4);
	assert_non_null(strstr(s.text, "ctr9"));
	assert_null(strstr(s.text, "ctr2"));

	/* a file made in the tree is a change too (cgroupfs makes none by
	 * VFS; a fixture tree does): walked again, never a stale replay */
	snprintf(p, sizeof(p), "%s/kubepods/memory.stat", root);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
	cs = both(c, &s);
	assert_int_equal(cs.walks, 5);
	assert_int_equal(cs.watch_failures, 0);
	sl_cgwalk_cache_free(c);
}

static void bounded_and_skip(void **st)
{
	(void)st;
	struct sl_cgwalk_cache *c = sl_cgwalk_cache_new(2);
	struct seen s = {0};
	struct sl_cgwalk_cache_stats cs;
	mk("/a");
	mk("/a/b");
	mk("/a/b/c");
	mk("/d");

	cs = both(c, &s);
	cs = both(c, &s);
	cs = both(c, &s);
	assert_int_equal(cs.walks, 1);
	assert_int_equal(cs.replays, 2);
	cs = both(c, &s); /* full_every = 2 replays in a row, then a real walk */
	assert_int_equal(cs.walks, 2);
	assert_int_equal(cs.replays, 2);

	s.skip = "/a/b"; /* SKIP on a replay: its recorded children are not passed */
	cs = both(c, &s);
	assert_int_equal(cs.replays, 3);
	assert_null(strstr(s.text, "/a/b/c"));
	assert_non_null(strstr(s.text, "1 /d d "));
	sl_cgwalk_cache_free(c);

	/* recorded with SKIP, asked to DESCEND on a replay: that replay lacks
	 * the children (they were never listed), and the next call walks */
	c = sl_cgwalk_cache_new(100);
	struct seen t = {.skip = "/a/b"};
	assert_int_equal(sl_cgwalk_cached(c, root, &opts, cb, &t, NULL), 0); /* recorded with the skip */
	t = (struct seen){0};
	assert_int_equal(sl_cgwalk_cached(c, root, &opts, cb, &t, NULL), 0);
	sl_cgwalk_cache_stats(c, &cs);
	assert_int_equal(cs.walks, 1);
	assert_int_equal(cs.replays, 1);
	assert_null(strstr(t.text, "/a/b/c"));
	s.skip = NULL;
	cs = both(c, &s);
	assert_int_equal(cs.walks, 2);
	assert_non_null(strstr(s.text, "/a/b/c"));
	uint64_t walks;

	/* other options or another root: a real walk */
	struct sl_cgwalk_opts o2 = opts;
	o2.max_depth = 1;
	sl_cgwalk_cache_stats(c, &cs);
	walks = cs.walks;
	assert_int_equal(sl_cgwalk_cached(c, root, &o2, cb, &t, NULL), 0);
	sl_cgwalk_cache_stats(c, &cs);
	assert_int_equal(cs.walks, walks + 1);
	sl_cgwalk_cache_free(c);
	assert_int_equal(sl_cgwalk_cached(NULL, root, &opts, cb, &t, NULL), 0); /* no cache: a walk */
}

/* A directory made inside a leaf after the walker's leaf test (st_nlink 2)
 * and before its watch (here: by the callback, as a runtime making a
 * pod's first container right after the pod would): no event, not listed;
 * the recording is not used and the next call walks and sees it. Also on
 * the real cgroupfs when writable. */
struct racer {
	struct seen s;
	char dir[256]; /* rel of the leaf to make a child in, once */
	char mk[320];  /* absolute path to make */
};

static int race_cb(const struct sl_cgwalk_ent *e, void *arg)
{
	struct racer *r = arg;
	if (r->mk[0] && !strcmp(e->rel, r->dir)) {
		assert_int_equal(mkdir(r->mk, 0755), 0);
		r->mk[0] = 0;
	}
	return cb(e, &r->s);
}

static void race_in(const char *top)
{
	struct sl_cgwalk_cache *c = sl_cgwalk_cache_new(100);
	struct sl_cgwalk_cache_stats cs;
	struct racer r = {0};
	char p[300];
	snprintf(p, sizeof(p), "%s/pod", top);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(r.dir, sizeof(r.dir), "/pod");
	snprintf(r.mk, sizeof(r.mk), "%s/pod/ctr", top);
	assert_int_equal(sl_cgwalk_cached(c, top, &opts, race_cb, &r, NULL), 0);
	assert_null(strstr(r.s.text, "/pod/ctr")); /* the walker took /pod for a leaf */
	sl_cgwalk_cache_stats(c, &cs);
	assert_int_equal(cs.unsettled, 1);
	r.s = (struct seen){0};
	assert_int_equal(sl_cgwalk_cached(c, top, &opts, race_cb, &r, NULL), 0);
	sl_cgwalk_cache_stats(c, &cs);
	assert_int_equal(cs.walks, 2); /* not a replay of the stale record */
	assert_int_equal(cs.replays, 0);
	assert_non_null(strstr(r.s.text, "2 /pod/ctr ctr "));
	r.s = (struct seen){0};
	assert_int_equal(sl_cgwalk_cached(c, top, &opts, race_cb, &r, NULL), 0);
	sl_cgwalk_cache_stats(c, &cs);
	assert_int_equal(cs.replays, 1); /* settled now */
	assert_non_null(strstr(r.s.text, "2 /pod/ctr ctr "));
	sl_cgwalk_cache_free(c);
	snprintf(p, sizeof(p), "%s/pod/ctr", top);
	assert_int_equal(rmdir(p), 0);
	snprintf(p, sizeof(p), "%s/pod", top);
	assert_int_equal(rmdir(p), 0);
}

static void mkdir_before_watch(void **st)
{
	(void)st;
	race_in(root);
	char top[256];
	const char *base = access("/sys/fs/cgroup/unified/cgroup.controllers", F_OK) == 0 ? "/sys/fs/cgroup/unified"
			   : access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0	   ? "/sys/fs/cgroup"
											   : NULL;
	if (!base || geteuid() != 0)
		return; /* the fixture tree above is the test; the cgroupfs run needs root */
	snprintf(top, sizeof(top), "%s/sl-cgwrace-%d", base, (int)getpid());
	rmdir(top);
	if (mkdir(top, 0755) != 0)
		return;
	race_in(top);
	assert_int_equal(rmdir(top), 0);
}

/* The kernel behaviour the cache relies on, on the real cgroupfs: mkdir and
 * rmdir of a cgroup reach an inotify watch on its parent. */
static void host_cgroupfs(void **st)
{
	(void)st;
	const char *base = NULL;
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0)
		base = "/sys/fs/cgroup";
	else if (access("/sys/fs/cgroup/unified/cgroup.controllers", F_OK) == 0)
		base = "/sys/fs/cgroup/unified";
	else if (access("/sys/fs/cgroup/memory/memory.usage_in_bytes", F_OK) == 0)
		base = "/sys/fs/cgroup/memory";
	if (!base || geteuid() != 0) {
		skip(); /* SKIP: no cgroup hierarchy we may write (needs root) */
		return;
	}
	char top[256], kid[300];
	snprintf(top, sizeof(top), "%s/sl-cgwcache-%d", base, (int)getpid());
	snprintf(kid, sizeof(kid), "%s/kid", top);
	rmdir(kid);
	rmdir(top);
	if (mkdir(top, 0755) != 0) {
		skip();
		return;
	}
	struct sl_cgwalk_cache *c = sl_cgwalk_cache_new(100);
	struct seen s = {0};
	struct sl_cgwalk_cache_stats cs;
	assert_int_equal(sl_cgwalk_cached(c, top, &opts, cb, &s, NULL), 0);
	assert_int_equal(sl_cgwalk_cached(c, top, &opts, cb, &s, NULL), 0);
	sl_cgwalk_cache_stats(c, &cs);
	assert_int_equal(cs.walks, 1);
	assert_int_equal(cs.replays, 1);
	assert_int_equal(mkdir(kid, 0755), 0);
	s.len = 0;
	assert_int_equal(sl_cgwalk_cached(c, top, &opts, cb, &s, NULL), 0);
	sl_cgwalk_cache_stats(c, &cs);
	assert_int_equal(cs.walks, 2); /* the mkdir was seen */
	assert_non_null(strstr(s.text, "1 /kid kid "));
	assert_int_equal(rmdir(kid), 0);
	s.len = 0;
	s.text[0] = 0;
	assert_int_equal(sl_cgwalk_cached(c, top, &opts, cb, &s, NULL), 0);
	sl_cgwalk_cache_stats(c, &cs);
	assert_int_equal(cs.walks, 3); /* the rmdir too */
	assert_null(strstr(s.text, "kid"));
	sl_cgwalk_cache_free(c);
	assert_int_equal(rmdir(top), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(replay_until_change, setup, teardown),
		cmocka_unit_test_setup_teardown(bounded_and_skip, setup, teardown),
		cmocka_unit_test_setup_teardown(mkdir_before_watch, setup, teardown),
		cmocka_unit_test(host_cgroupfs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
