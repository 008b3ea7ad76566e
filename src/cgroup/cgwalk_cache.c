/* A cgroup-tree walk replayed while inotify reports no change
 * (cgwalk_cache.h). */
#include "cgroup/cgwalk_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define WATCH_MASK                                                                                \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | \
	 IN_ONLYDIR | IN_DONT_FOLLOW)

struct rec {
	char *rel;    /* relative path ("" for the root) */
	size_t name;  /* offset of the last component in rel */
	int depth;
	int ret;      /* what the callback returned when recorded */
	uint64_t ino;
	uint64_t nlink; /* st_nlink once watched (2 + subdirectories on cgroupfs); 0 = not known */
};

static const struct sl_cgwalk_opts no_opts;

struct sl_cgwalk_cache {
	unsigned full_every, replays_in_row;
	int ifd;   /* inotify, -1 when unavailable */
	int valid; /* the record stands for the tree (no event seen since) */
	char *root;
	struct sl_cgwalk_opts opts;
	struct rec *v;
	size_t n, cap;
	struct sl_cgwalk_stats st;
	struct sl_cgwalk_cache_stats cs;
};

struct sl_cgwalk_cache *sl_cgwalk_cache_new(unsigned full_every)
{
	struct sl_cgwalk_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->full_every = full_every ? full_every : 12;
	c->ifd = -1;
	return c;
}

static void drop_record(struct sl_cgwalk_cache *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].rel);
	c->n = 0;
	c->valid = 0;
	if (c->ifd >= 0) {
		close(c->ifd); /* removes every watch */
		c->ifd = -1;
	}
}

void sl_cgwalk_cache_free(struct sl_cgwalk_cache *c)
{
	if (!c)
		return;
	drop_record(c);
	free(c->v);
	free(c->root);
	free(c);
}

void sl_cgwalk_cache_stats(const struct sl_cgwalk_cache *c, struct sl_cgwalk_cache_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (c)
		*out = c->cs;
}

/* Events queued since the record was made: drained; 1 when any (or the
 * queue cannot be read), else 0. */
static int changed(struct sl_cgwalk_cache *c)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int any = 0;

	for (;;) {
		ssize_t r = read(c->ifd, buf, sizeof(buf));
		if (r > 0) {
			any = 1; /* create, delete, move, overflow, a watch gone */
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return any;
		return 1;
	}
}

struct recording {
	struct sl_cgwalk_cache *c;
	sl_cgwalk_fn fn;
	void *arg;
	int failed; /* out of memory or a watch not added */
};

static int record_one(struct recording *r, const struct sl_cgwalk_ent *e, int ret)
{
	struct sl_cgwalk_cache *c = r->c;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct rec *v = realloc(c->v, cap * sizeof(*v));
		if (!v)
			return -1;
		c->v = v;
		c->cap = cap;
	}
	char *rel = strdup(e->rel);
	if (!rel)
		return -1;
	/* the root's name is "" (not inside rel): its offset is rel's end */
	size_t name = e->depth > 0 ? (size_t)(e->name - e->rel) : strlen(rel);
	c->v[c->n++] = (struct rec){rel, name, e->depth, ret, e->ino, 0};
	return 0;
}

static int record_fn(const struct sl_cgwalk_ent *e, void *arg)
{
	struct recording *r = arg;
	int ret = r->fn(e, r->arg);
	/* watched before the walker lists it: a mkdir in it is either listed
	 * now or queued as an event (the root is watched before the walk).
	 * The walker decided before this call, from an earlier fstat, whether
	 * the directory is a leaf (st_nlink 2: not listed); a mkdir between
	 * that fstat and the watch would be neither listed nor queued, so the
	 * link count is read again now that the watch is on and checked
	 * against the children recorded (settled()). */
	if (!r->failed && (record_one(r, e, ret) ||
			   (e->depth > 0 && inotify_add_watch(r->c->ifd, e->abs, WATCH_MASK) < 0)))
		r->failed = 1;
	struct stat sb;
	if (!r->failed && e->fd >= 0 && fstat(e->fd, &sb) == 0)
		r->c->v[r->c->n - 1].nlink = (uint64_t)sb.st_nlink;
	return ret;
}

/* Every recorded directory that was descended into and whose link count
 * (read once watched) says how many subdirectories it has has that many
 * recorded children. A directory made between the walker's leaf test and
 * the watch breaks this (and a bound, loop, other filesystem or unreadable
 * directory that left a child out): the record is not used. Filesystems
 * whose directories do not count subdirectories (st_nlink < 2) are not
 * checked (the walker lists them all). */
static int settled(const struct sl_cgwalk_cache *c)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct rec *r = &c->v[i];
		if (r->ret != SL_CGWALK_DESCEND || r->nlink < 2)
			continue;
		uint64_t kids = 0;
		for (size_t j = i + 1; j < c->n && c->v[j].depth > r->depth; j++)
			kids += c->v[j].depth == r->depth + 1;
		if (kids != r->nlink - 2)
			return 0;
	}
	return 1;
}

static int same_opts(const struct sl_cgwalk_opts *a, const struct sl_cgwalk_opts *b)
{
	return a->visit_root == b->visit_root && a->same_dev == b->same_dev && a->ctx_size == b->ctx_size &&
	       a->max_dirs == b->max_dirs && a->max_depth == b->max_depth;
}

static int record(struct sl_cgwalk_cache *c, const char *root, const struct sl_cgwalk_opts *o,
		  sl_cgwalk_fn fn, void *arg, struct sl_cgwalk_stats *st)
{
	struct recording r = {c, fn, arg, 0};

	drop_record(c);
	c->cs.walks++;
	c->replays_in_row = 0;
	if (!c->root || strcmp(c->root, root)) {
		free(c->root);
		c->root = strdup(root);
	}
	c->opts = o ? *o : no_opts;
	c->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (c->ifd < 0 || !c->root || inotify_add_watch(c->ifd, root, WATCH_MASK & ~IN_DONT_FOLLOW) < 0)
		r.failed = 1; /* the root may be a configured symlink: followed, as sl_cgwalk does */
	int rc = sl_cgwalk(root, o, record_fn, &r, &c->st);
	if (st)
		*st = c->st;
	if (rc == 0 && !r.failed && !c->st.stopped && settled(c)) {
		c->valid = 1;
	} else {
		if (r.failed)
			c->cs.watch_failures++;
		else if (rc == 0 && !c->st.stopped)
			c->cs.unsettled++;
		drop_record(c);
	}
	return rc;
}

/* The record, in its (depth-first) order, through fn: what a walk of the
 * unchanged tree would call. */
static int replay(struct sl_cgwalk_cache *c, const char *root, sl_cgwalk_fn fn, void *arg,
		  struct sl_cgwalk_stats *st)
{
	const struct sl_cgwalk_opts *o = &c->opts;
	int max_depth = o->max_depth > 0 && o->max_depth < SL_CGWALK_MAX_DEPTH ? o->max_depth
									   : SL_CGWALK_MAX_DEPTH;
	size_t rootlen = strlen(root);
	while (rootlen > 1 && root[rootlen - 1] == '/')
		rootlen--;
	char *buf = malloc(SL_CGWALK_PATH_MAX);
	unsigned char *ctx = o->ctx_size ? calloc((size_t)max_depth + 1, o->ctx_size) : NULL;
	int skip_below = -1; /* skip entries deeper than this (fn returned SKIP) */
	uint64_t dirs = 0;

	if (!buf || (o->ctx_size && !ctx)) {
		free(buf);
		free(ctx);
		return -ENOMEM;
	}
	memcpy(buf, root, rootlen);
	c->cs.replays++;
	c->replays_in_row++;
	for (size_t i = 0; i < c->n; i++) {
		const struct rec *r = &c->v[i];
		if (skip_below >= 0 && r->depth > skip_below)
			continue;
		skip_below = -1;
		size_t rl = strlen(r->rel);
		if (r->depth > max_depth || rootlen + rl >= SL_CGWALK_PATH_MAX)
			continue; /* not in the record's walk either */
		memcpy(buf + rootlen, r->rel, rl + 1);
		unsigned char *me = ctx ? ctx + (size_t)r->depth * o->ctx_size : NULL;
		if (me)
			memset(me, 0, o->ctx_size);
		/* every replayed entry is visited; the root only with visit_root
		 * (as in sl_cgwalk, its children then have no parent context) */
		const void *parent = ctx && r->depth > 0 && (r->depth > 1 || o->visit_root)
					     ? ctx + (size_t)(r->depth - 1) * o->ctx_size
					     : NULL;
		struct sl_cgwalk_ent e = {buf, buf + rootlen, buf + rootlen + r->name, r->depth, r->ino, -1,
					  parent, me};
		int ret = fn(&e, arg);
		dirs++;
		if (ret == SL_CGWALK_STOP)
			break;
		if (ret == SL_CGWALK_SKIP)
			skip_below = r->depth;
		else if (ret == SL_CGWALK_DESCEND && r->ret != SL_CGWALK_DESCEND)
			c->valid = 0; /* its children were not recorded: walk next time */
	}
	if (st) {
		*st = c->st;
		st->dirs = dirs;
	}
	free(buf);
	free(ctx);
	return 0;
}

int sl_cgwalk_cached(struct sl_cgwalk_cache *c, const char *root, const struct sl_cgwalk_opts *o,
		     sl_cgwalk_fn fn, void *arg, struct sl_cgwalk_stats *st)
{
	if (!c)
		return sl_cgwalk(root, o, fn, arg, st);
	if (!root || !fn)
		return -EINVAL;
	if (c->valid && c->root && !strcmp(c->root, root) && same_opts(&c->opts, o ? o : &no_opts) &&
	    c->replays_in_row < c->full_every) {
		if (!changed(c))
			return replay(c, root, fn, arg, st);
		c->cs.events++;
	}
	return record(c, root, o, fn, arg, st);
}
