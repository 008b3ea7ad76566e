/* The one cgroup-tree walker (src/cgroup/cgwalk.c) on fixture trees made
 * under a temp dir: the depth bound (42 levels found, 200 levels stopped at
 * SL_CGWALK_MAX_DEPTH and counted), symlinks not followed, a bind-mount
 * loop not entered (root only), the directory and path-length bounds, the
 * per-directory context, and a cgroup v2 and a v1 fixture tree attributed
 * with the path rules. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cgroup/attr.h"
#include "cgroup/cgwalk.h"

#define CID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define POD "0a1b2c3d-aaaa-bbbb-cccc-0123456789ab"
#define POD_ "0a1b2c3d_aaaa_bbbb_cccc_0123456789ab"

static char root[64];

static int setup(void **st)
{
	(void)st;
	strcpy(root, "/tmp/sl-cgwalk-XXXXXX");
	assert_non_null(mkdtemp(root));
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

/* mkdir of root/rel, one level (the parent exists). */
static void mkd(const char *rel)
{
	char p[SL_CGWALK_PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s%s", root, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static void touch(const char *rel)
{
	char p[SL_CGWALK_PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s%s", root, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0\n", 2), 2);
	close(fd);
}

/* A chain root/c/c/.../c of n levels, the last one named `last`; its
 * relative path in rel. */
static void chain(int n, const char *last, char *rel, size_t len)
{
	rel[0] = 0;
	for (int i = 1; i <= n; i++) {
		size_t l = strlen(rel);
		snprintf(rel + l, len - l, "/%s", i == n ? last : "c");
		mkd(rel);
	}
}

struct seen {
	int ndirs, max_depth, target_depth;
	char target_rel[SL_CGWALK_PATH_MAX];
	const char *want; /* name to look for */
	const char *top;  /* the walk's root; NULL = root */
	int containers;
	char cid[SL_CONTAINER_ID_LEN], pod[SL_POD_UID_LEN];
};

static int record(const struct sl_cgwalk_ent *e, void *arg)
{
	struct seen *s = arg;
	s->ndirs++;
	if (e->depth > s->max_depth)
		s->max_depth = e->depth;
	if (s->want && !strcmp(e->name, s->want)) {
		s->target_depth = e->depth;
		snprintf(s->target_rel, sizeof(s->target_rel), "%s", e->rel);
	}
	/* abs is root + rel, and fd is the directory itself */
	const char *top = s->top ? s->top : root;
	assert_int_equal(strncmp(e->abs, top, strlen(top)), 0);
	assert_string_equal(e->abs + strlen(top), e->rel);
	struct stat a, b;
	assert_int_equal(fstat(e->fd, &a), 0);
	assert_int_equal(lstat(e->abs, &b), 0);
	assert_true(a.st_ino == b.st_ino && (uint64_t)a.st_ino == e->ino);
	return SL_CGWALK_DESCEND;
}

static int count_only(const struct sl_cgwalk_ent *e, void *arg)
{
	(void)e;
	(*(int *)arg)++;
	return SL_CGWALK_DESCEND;
}

static void depth_42_found(void **st)
{
	(void)st;
	char rel[1024];
	chain(42, "target", rel, sizeof(rel));
	struct seen s = {.want = "target"};
	struct sl_cgwalk_stats ws;
	assert_int_equal(sl_cgwalk(root, NULL, record, &s, &ws), 0);
	assert_int_equal(s.target_depth, 42);
	assert_string_equal(s.target_rel, rel);
	assert_int_equal(s.ndirs, 42);
	assert_int_equal(ws.dirs, 42);
	assert_int_equal(sl_cgwalk_cut(&ws), 0);
	assert_int_equal(ws.depth_cut, 0);
}

static void depth_200_stopped_at_bound(void **st)
{
	(void)st;
	char rel[1024];
	chain(200, "target", rel, sizeof(rel));
	struct seen s = {.want = "target"};
	struct sl_cgwalk_stats ws;
	assert_int_equal(sl_cgwalk(root, NULL, record, &s, &ws), 0);
	assert_int_equal(s.target_depth, 0); /* never reached */
	assert_int_equal(s.max_depth, SL_CGWALK_MAX_DEPTH);
	assert_int_equal(s.ndirs, SL_CGWALK_MAX_DEPTH);
	assert_int_equal(ws.depth_cut, 1); /* the one directory at depth 129 */
	assert_int_equal(sl_cgwalk_cut(&ws), 1);
	/* a smaller bound asked for is honoured, a larger one is clamped */
	struct sl_cgwalk_opts o = {.max_depth = 10};
	memset(&s, 0, sizeof(s));
	assert_int_equal(sl_cgwalk(root, &o, record, &s, &ws), 0);
	assert_int_equal(s.max_depth, 10);
	assert_int_equal(ws.depth_cut, 1);
	o.max_depth = 100000;
	memset(&s, 0, sizeof(s));
	assert_int_equal(sl_cgwalk(root, &o, record, &s, &ws), 0);
	assert_int_equal(s.max_depth, SL_CGWALK_MAX_DEPTH);
}

static void symlink_not_followed(void **st)
{
	(void)st;
	char p[256], q[256];
	mkd("/a");
	mkd("/a/b");
	mkd("/a/b/real"); /* b has a subdirectory: it is listed (no leaf) */
	mkd("/elsewhere");
	mkd("/elsewhere/hidden");
	/* a link back up (a loop if followed) and one to another subtree */
	snprintf(p, sizeof(p), "%s/a/b/up", root);
	assert_int_equal(symlink("..", p), 0);
	snprintf(p, sizeof(p), "%s/a/b/side", root);
	snprintf(q, sizeof(q), "%s/elsewhere", root);
	assert_int_equal(symlink(q, p), 0);
	snprintf(p, sizeof(p), "%s/a", root);
	struct seen s = {.want = "hidden", .top = p};
	struct sl_cgwalk_stats ws;
	assert_int_equal(sl_cgwalk(p, NULL, record, &s, &ws), 0);
	assert_int_equal(s.ndirs, 2); /* only /b and /b/real */
	assert_int_equal(s.target_depth, 0);
	assert_int_equal(ws.symlinks, 2);
	assert_int_equal(ws.leaves, 1); /* /b/real */
	assert_int_equal(ws.loops, 0);
}

/* A directory without subdirectories (st_nlink 2) is visited but not
 * listed; one that gets a subdirectory is listed by the next walk. */
static void leaves_not_listed(void **st)
{
	(void)st;
	struct stat sb;
	assert_int_equal(stat(root, &sb), 0);
	if (sb.st_nlink != 2) {
		skip(); /* SKIP: this filesystem does not count subdirectories in st_nlink */
		return;
	}
	mkd("/p");
	mkd("/p/c1");
	mkd("/p/c2");
	touch("/p/c1/memory.stat");
	struct seen s = {.want = "deep"};
	struct sl_cgwalk_stats ws;
	assert_int_equal(sl_cgwalk(root, NULL, record, &s, &ws), 0);
	assert_int_equal(s.ndirs, 3);
	assert_int_equal(ws.leaves, 2);
	mkd("/p/c2/deep");
	memset(&s, 0, sizeof(s));
	s.want = "deep";
	assert_int_equal(sl_cgwalk(root, NULL, record, &s, &ws), 0);
	assert_int_equal(s.ndirs, 4);
	assert_int_equal(s.target_depth, 3);
	assert_int_equal(ws.leaves, 2); /* c1 and deep */
}

/* A cgroup bound onto its own descendant (a hostile bind mount): the walk
 * does not enter the directory that is its own ancestor. Needs root. */
static void bind_mount_loop_not_entered(void **st)
{
	(void)st;
	if (geteuid() != 0) {
		print_message("SKIP: bind mounts need root\n");
		skip();
	}
	char a[128], c[128];
	mkd("/a");
	mkd("/a/b");
	mkd("/a/b/c");
	snprintf(a, sizeof(a), "%s/a", root);
	snprintf(c, sizeof(c), "%s/a/b/c", root);
	if (mount(a, c, NULL, MS_BIND, NULL) != 0) {
		print_message("SKIP: mount --bind failed: %s\n", strerror(errno));
		skip();
	}
	struct seen s = {.top = a};
	struct sl_cgwalk_stats ws;
	int rc = sl_cgwalk(a, NULL, count_only, &s.ndirs, &ws);
	umount2(c, MNT_DETACH);
	assert_int_equal(rc, 0);
	assert_int_equal(s.ndirs, 1); /* /b; /b/c is /a again */
	assert_int_equal(ws.loops, 1);
}

static void dir_and_path_bounds(void **st)
{
	(void)st;
	char rel[64];
	for (int i = 0; i < 20; i++) {
		snprintf(rel, sizeof(rel), "/d%02d", i);
		mkd(rel);
	}
	int n = 0;
	struct sl_cgwalk_stats ws;
	struct sl_cgwalk_opts o = {.max_dirs = 5};
	assert_int_equal(sl_cgwalk(root, &o, count_only, &n, &ws), 0);
	assert_int_equal(n, 5);
	assert_int_equal(ws.dirs_cut, 1);
	n = 0;
	o.max_dirs = 20; /* exactly enough: not cut */
	assert_int_equal(sl_cgwalk(root, &o, count_only, &n, &ws), 0);
	assert_int_equal(n, 20);
	assert_int_equal(ws.dirs_cut, 0);

	/* 200-byte names: the 20th level would pass SL_CGWALK_PATH_MAX */
	char name[201], path[SL_CGWALK_PATH_MAX + 256] = "/long";
	memset(name, 'x', 200);
	name[200] = 0;
	mkd(path);
	int levels = 0;
	for (;;) {
		size_t l = strlen(path);
		if (strlen(root) + l + 1 + 200 >= SL_CGWALK_PATH_MAX) {
			/* one more made by *at() calls: the path no longer fits */
			char sub[256];
			snprintf(sub, sizeof(sub), "%s%s", root, "/long");
			int fd = open(sub, O_RDONLY | O_DIRECTORY);
			assert_true(fd >= 0);
			for (int i = 0; i < levels; i++) {
				int nfd = openat(fd, name, O_RDONLY | O_DIRECTORY);
				assert_true(nfd >= 0);
				close(fd);
				fd = nfd;
			}
			assert_int_equal(mkdirat(fd, name, 0755), 0);
			close(fd);
			break;
		}
		snprintf(path + l, sizeof(path) - l, "/%s", name);
		mkd(path);
		levels++;
	}
	n = 0;
	assert_int_equal(sl_cgwalk(root, NULL, count_only, &n, &ws), 0);
	assert_int_equal(n, 20 + 1 + levels);
	assert_int_equal(ws.path_cut, 1);
	assert_int_equal(ws.depth_cut, 0);
}

/* The per-directory slot: children see their parent's. */
struct anc {
	char container[SL_CONTAINER_ID_LEN];
};

static int inherit(const struct sl_cgwalk_ent *e, void *arg)
{
	struct seen *s = arg;
	const struct anc *p = e->parent;
	struct anc *me = e->ctx;
	assert_non_null(me);
	if (p)
		*me = *p;
	struct sl_attr a;
	sl_cgpath_parse(e->rel[0] ? e->rel : "/", &a);
	if (a.is_container == SL_YES && !me->container[0]) {
		snprintf(me->container, sizeof(me->container), "%s", a.container_id);
		snprintf(s->cid, sizeof(s->cid), "%s", a.container_id);
		snprintf(s->pod, sizeof(s->pod), "%s", a.pod_uid);
		s->containers++;
	} else if (!strcmp(e->name, "inner")) {
		/* below the container: its id came down from the parent slot */
		assert_string_equal(me->container, CID);
		s->target_depth = e->depth;
	}
	s->ndirs++;
	return SL_CGWALK_DESCEND;
}

/* cgroup v2 (systemd driver): files beside directories, the container
 * 4 levels down, a cgroup the workload made inside it. */
static void v2_fixture_tree(void **st)
{
	(void)st;
	mkd("/kubepods.slice");
	mkd("/kubepods.slice/kubepods-burstable.slice");
	mkd("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" POD_ ".slice");
	const char *c = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" POD_
			".slice/cri-containerd-" CID ".scope";
	char p[512];
	mkd(c);
	snprintf(p, sizeof(p), "%s/inner", c);
	mkd(p);
	touch("/cgroup.controllers");
	snprintf(p, sizeof(p), "%s/memory.current", c);
	touch(p);
	snprintf(p, sizeof(p), "%s/cgroup.procs", c);
	touch(p);
	mkd("/system.slice");
	mkd("/system.slice/ssh.service");
	struct seen s = {0};
	struct sl_cgwalk_opts o = {.ctx_size = sizeof(struct anc), .same_dev = 1, .visit_root = 1};
	struct sl_cgwalk_stats ws;
	assert_int_equal(sl_cgwalk(root, &o, inherit, &s, &ws), 0);
	assert_int_equal(s.ndirs, 1 + 7); /* the root too */
	assert_int_equal(s.containers, 1);
	assert_string_equal(s.cid, CID);
	assert_string_equal(s.pod, POD);
	assert_int_equal(s.target_depth, 5);
	assert_int_equal(sl_cgwalk_cut(&ws), 0);
}

/* cgroup v1 (cgroupfs driver), one controller hierarchy. */
static void v1_fixture_tree(void **st)
{
	(void)st;
	mkd("/memory");
	mkd("/memory/kubepods");
	mkd("/memory/kubepods/besteffort");
	mkd("/memory/kubepods/besteffort/pod" POD);
	mkd("/memory/kubepods/besteffort/pod" POD "/" CID);
	mkd("/memory/kubepods/besteffort/pod" POD "/" CID "/inner");
	touch("/memory/memory.usage_in_bytes");
	touch("/memory/kubepods/besteffort/pod" POD "/" CID "/memory.usage_in_bytes");
	touch("/memory/kubepods/besteffort/pod" POD "/" CID "/tasks");
	mkd("/memory/user.slice");
	struct seen s = {0};
	struct sl_cgwalk_opts o = {.ctx_size = sizeof(struct anc)};
	struct sl_cgwalk_stats ws;
	char m[128];
	snprintf(m, sizeof(m), "%s/memory/", root); /* a trailing '/' is dropped */
	assert_int_equal(sl_cgwalk(m, &o, inherit, &s, &ws), 0);
	assert_int_equal(s.ndirs, 6);
	assert_int_equal(s.containers, 1);
	assert_string_equal(s.cid, CID);
	assert_string_equal(s.pod, POD);
	assert_int_equal(s.target_depth, 5);
}

static int stop_at(const struct sl_cgwalk_ent *e, void *arg)
{
	int *n = arg;
	(*n)++;
	return !strcmp(e->name, "skip") ? SL_CGWALK_SKIP
	       : !strcmp(e->name, "stop") ? SL_CGWALK_STOP
					   : SL_CGWALK_DESCEND;
}

static void skip_stop_and_errors(void **st)
{
	(void)st;
	mkd("/skip");
	mkd("/skip/below");
	int n = 0;
	struct sl_cgwalk_stats ws;
	assert_int_equal(sl_cgwalk(root, NULL, stop_at, &n, &ws), 0);
	assert_int_equal(n, 1); /* below not visited */
	assert_int_equal(ws.stopped, 0);
	mkd("/skip/below/stop");
	mkd("/skip/below/stop/x");
	n = 0;
	char p[128];
	snprintf(p, sizeof(p), "%s/skip", root);
	assert_int_equal(sl_cgwalk(p, NULL, stop_at, &n, &ws), 0);
	assert_int_equal(n, 2); /* below, stop */
	assert_int_equal(ws.stopped, 1);
	assert_int_equal(sl_cgwalk("/nonexistent/sl-cgwalk", NULL, stop_at, &n, &ws), -ENOENT);
	assert_int_equal(sl_cgwalk(NULL, NULL, stop_at, &n, &ws), -EINVAL);
	touch("/file");
	snprintf(p, sizeof(p), "%s/file", root);
	assert_int_equal(sl_cgwalk(p, NULL, stop_at, &n, &ws), -ENOTDIR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(depth_42_found, setup, teardown),
		cmocka_unit_test_setup_teardown(depth_200_stopped_at_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(symlink_not_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(leaves_not_listed, setup, teardown),
		cmocka_unit_test_setup_teardown(bind_mount_loop_not_entered, setup, teardown),
		cmocka_unit_test_setup_teardown(dir_and_path_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(v2_fixture_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(v1_fixture_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(skip_stop_and_errors, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
