/* Plain runc state index (src/cgroup/runc_state.c) on fixture state roots. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>

#include "cgroup/runc_state.h"

static char root[64];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void add_container(const char *id, const char *v2dir, int with_state)
{
	char p[256], j[1024];
	snprintf(p, sizeof(p), "%s/%s", root, id);
	assert_int_equal(mkdir(p, 0700), 0);
	if (!with_state)
		return;
	snprintf(j, sizeof(j),
		 "{\"id\":\"%s\",\"cgroup_paths\":{\"\":\"%s\",\"memory\":\"/sys/fs/cgroup/memory/x/%s\"}}",
		 id, v2dir, id);
	snprintf(p, sizeof(p), "%s/%s/state.json", root, id);
	write_file(p, j);
}

static void bump_root_mtime(void)
{
	/* make sure the next change is visible even on coarse timestamps */
	struct timespec ts[2] = {{0, UTIME_NOW}, {time(NULL) + 5, 0}};
	utimensat(AT_FDCWD, root, ts, 0);
}

static int setup(void **state)
{
	(void)state;
	strcpy(root, "/tmp/sl-runc-XXXXXX");
	assert_non_null(mkdtemp(root));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static void finds_by_any_controller_dir(void **state)
{
	(void)state;
	char id[80];
	add_container("web1", "/sys/fs/cgroup/unified/mytest/web1", 1);
	struct sl_runc_index *ix = sl_runc_index_new(root);
	sl_runc_index_set_min_interval(ix, 0);
	assert_int_equal(sl_runc_index_lookup(ix, "/sys/fs/cgroup/unified/mytest/web1", id, sizeof(id)), 1);
	assert_string_equal(id, "web1");
	assert_int_equal(sl_runc_index_lookup(ix, "/sys/fs/cgroup/memory/x/web1", id, sizeof(id)), 1);
	assert_int_equal(sl_runc_index_lookup(ix, "/sys/fs/cgroup/unified/mytest", id, sizeof(id)), 0);
	assert_int_equal(sl_runc_index_size(ix), 2);
	sl_runc_index_free(ix);
}

static void sees_new_and_removed_containers(void **state)
{
	(void)state;
	char id[80], p[256];
	struct sl_runc_index *ix = sl_runc_index_new(root);
	sl_runc_index_set_min_interval(ix, 0);
	assert_int_equal(sl_runc_index_lookup(ix, "/c/a", id, sizeof(id)), 0);
	add_container("a", "/c/a", 1);
	bump_root_mtime();
	assert_int_equal(sl_runc_index_lookup(ix, "/c/a", id, sizeof(id)), 1);
	snprintf(p, sizeof(p), "rm -rf '%s/a'", root);
	assert_int_equal(system(p), 0);
	struct timespec ts[2] = {{0, UTIME_NOW}, {time(NULL) + 10, 0}};
	utimensat(AT_FDCWD, root, ts, 0);
	/* deleted: still answers within its grace (late samples are its own) */
	assert_int_equal(sl_runc_index_lookup(ix, "/c/a", id, sizeof(id)), 1);
	assert_string_equal(id, "a");
	/* past it, gone */
	sl_runc_index_set_grace(ix, 1000000); /* 1 ms */
	struct timespec nap = {0, 5000000};
	nanosleep(&nap, NULL);
	assert_int_equal(sl_runc_index_lookup(ix, "/c/a", id, sizeof(id)), 0);
	assert_int_equal(sl_runc_index_lookup(ix, "/sys/fs/cgroup/memory/x/a", id, sizeof(id)), 0);
	assert_int_equal(sl_runc_index_size(ix), 0);
	/* a new container in the same directory replaces a deleted one at once */
	sl_runc_index_set_grace(ix, 60ull * 1000000000ull);
	add_container("b", "/c/b", 1);
	struct timespec t2[2] = {{0, UTIME_NOW}, {time(NULL) + 20, 0}};
	utimensat(AT_FDCWD, root, t2, 0);
	assert_int_equal(sl_runc_index_lookup(ix, "/c/b", id, sizeof(id)), 1);
	snprintf(p, sizeof(p), "rm -rf '%s/b'", root);
	assert_int_equal(system(p), 0);
	add_container("b2", "/c/b", 1);
	struct timespec t3[2] = {{0, UTIME_NOW}, {time(NULL) + 30, 0}};
	utimensat(AT_FDCWD, root, t3, 0);
	assert_int_equal(sl_runc_index_lookup(ix, "/c/b", id, sizeof(id)), 1);
	assert_string_equal(id, "b2");
	sl_runc_index_free(ix);
}

/* runc makes <root>/<id> before it writes state.json: the index must pick
 * the state up without another change of the root's mtime. */
static void state_written_after_directory(void **state)
{
	(void)state;
	char id[80], p[256];
	add_container("late", "/c/late", 0);
	struct sl_runc_index *ix = sl_runc_index_new(root);
	sl_runc_index_set_min_interval(ix, 0);
	assert_int_equal(sl_runc_index_lookup(ix, "/c/late", id, sizeof(id)), 0);
	snprintf(p, sizeof(p), "%s/late/state.json", root);
	write_file(p, "{\"id\":\"late\",\"cgroup_paths\":{\"\":\"/c/late\"}}");
	assert_int_equal(sl_runc_index_lookup(ix, "/c/late", id, sizeof(id)), 1);
	assert_string_equal(id, "late");
	assert_int_equal(sl_runc_index_errors(ix), 0);
	sl_runc_index_free(ix);
}

static void garbage_and_missing_root(void **state)
{
	(void)state;
	char id[80], p[256];
	add_container("bad", "/c/bad", 0);
	snprintf(p, sizeof(p), "%s/bad/state.json", root);
	write_file(p, "{not json");
	add_container("noid", "/c/noid", 0);
	snprintf(p, sizeof(p), "%s/noid/state.json", root);
	write_file(p, "{\"cgroup_paths\":{\"\":\"/c/noid\"}}");
	struct sl_runc_index *ix = sl_runc_index_new(root);
	sl_runc_index_set_min_interval(ix, 0);
	assert_int_equal(sl_runc_index_lookup(ix, "/c/bad", id, sizeof(id)), 0);
	assert_int_equal(sl_runc_index_errors(ix), 2);
	sl_runc_index_free(ix);
	ix = sl_runc_index_new("/nonexistent/runc/root");
	assert_int_equal(sl_runc_index_lookup(ix, "/c/bad", id, sizeof(id)), 0);
	sl_runc_index_free(ix);
}

/* sl_runc_index_add_state: a state.json given as text, not NUL-terminated;
 * malformed text and missing keys are counted errors. */
static void state_from_buffer(void **state)
{
	(void)state;
	struct sl_runc_index *ix = sl_runc_index_new("/nonexistent/sl-runc-buf");
	assert_non_null(ix);
	static const char st[] = "{\"id\":\"web1\",\"cgroup_paths\":{\"\":\"/u/mytest/web1\","
				 "\"memory\":\"/m/mytest/web1\",\"x\":7}}XXXX";
	assert_int_equal(sl_runc_index_add_state(ix, st, sizeof(st) - 5), 0);
	assert_int_equal(sl_runc_index_size(ix), 2);
	assert_int_equal(sl_runc_index_add_state(ix, "{\"id\":\"a\"}", 10), -EINVAL);
	assert_int_equal(sl_runc_index_add_state(ix, "{\"id\":", 6), -EINVAL);
	assert_int_equal(sl_runc_index_add_state(ix, "{\"id\":1,\"cgroup_paths\":{}}", 26), -EINVAL);
	assert_int_equal(sl_runc_index_errors(ix), 3);
	assert_int_equal(sl_runc_index_size(ix), 2);
	sl_runc_index_free(ix);
}

/* The shared index (issue 9 item 3): readers on several threads get, look
 * up and put while another thread adds and removes containers; a snapshot
 * held across a rebuild stays whole (ASan checks the frees), an answer is
 * either "not found" or the right id, and rebuilds are rate-limited. */
#define NREADERS 4
#define NCTR 8

struct race {
	struct sl_runc_index *ix;
	atomic_int stop;
	atomic_ulong lookups, found, wrong;
};

static void *reader(void *arg)
{
	struct race *r = arg;
	char dir[64], id[80], want[16];
	unsigned i = 0;
	while (!atomic_load(&r->stop)) {
		unsigned k = i++ % NCTR;
		snprintf(dir, sizeof(dir), "/c/r%u", k);
		snprintf(want, sizeof(want), "r%u", k);
		int hit;
		if (i % 2) {
			hit = sl_runc_index_lookup(r->ix, dir, id, sizeof(id));
		} else { /* one snapshot for several lookups, as the stats pass does */
			struct sl_runc_snap *s = sl_runc_index_get(r->ix);
			assert_non_null(s);
			hit = sl_runc_snap_lookup(s, dir, id, sizeof(id));
			for (unsigned j = 0; j < NCTR; j++) {
				char d2[64], i2[80];
				snprintf(d2, sizeof(d2), "/c/r%u", j);
				sl_runc_snap_lookup(s, d2, i2, sizeof(i2));
			}
			sl_runc_snap_put(s);
		}
		atomic_fetch_add(&r->lookups, 1);
		if (hit) {
			atomic_fetch_add(&r->found, 1);
			if (strcmp(id, want))
				atomic_fetch_add(&r->wrong, 1);
		}
	}
	return NULL;
}

static void concurrent_get_put_vs_rebuild(void **state)
{
	(void)state;
	struct race r = {.ix = sl_runc_index_new(root)};
	assert_non_null(r.ix);
	sl_runc_index_set_min_interval(r.ix, 1000000); /* 1 ms: many rebuilds */
	sl_runc_index_set_grace(r.ix, 2000000);
	pthread_t th[NREADERS];
	for (int i = 0; i < NREADERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, reader, &r), 0);
	char id[16], dir[32], p[256];
	struct timespec nap = {0, 300000};
	for (int round = 0; round < 200; round++) {
		unsigned k = (unsigned)round % NCTR;
		snprintf(id, sizeof(id), "r%u", k);
		snprintf(dir, sizeof(dir), "/c/r%u", k);
		snprintf(p, sizeof(p), "%s/%s", root, id);
		struct stat sb;
		if (stat(p, &sb) == 0) {
			snprintf(p, sizeof(p), "rm -rf '%s/%s'", root, id);
			assert_int_equal(system(p), 0);
		} else {
			add_container(id, dir, 1);
		}
		struct timespec ts[2] = {{0, UTIME_NOW}, {time(NULL) + 100 + round, 0}};
		utimensat(AT_FDCWD, root, ts, 0);
		nanosleep(&nap, NULL);
	}
	atomic_store(&r.stop, 1);
	for (int i = 0; i < NREADERS; i++)
		pthread_join(th[i], NULL);
	/* a snapshot held across a rebuild keeps answering from its own map
	 * (after the readers: one of them may be rebuilding, and a lookup
	 * never waits for that) */
	sl_runc_index_set_min_interval(r.ix, 0);
	struct sl_runc_snap *held = sl_runc_index_get(r.ix);
	add_container("late1", "/c/late1", 1);
	struct timespec ts[2] = {{0, UTIME_NOW}, {time(NULL) + 1000, 0}};
	utimensat(AT_FDCWD, root, ts, 0);
	char got[80];
	assert_int_equal(sl_runc_index_lookup(r.ix, "/c/late1", got, sizeof(got)), 1);
	assert_int_equal(sl_runc_snap_lookup(held, "/c/late1", got, sizeof(got)), 0);
	sl_runc_snap_put(held);
	print_message("lookups %lu found %lu rebuilds %llu\n", atomic_load(&r.lookups),
		      atomic_load(&r.found), (unsigned long long)sl_runc_index_rebuilds(r.ix));
	assert_int_equal(atomic_load(&r.wrong), 0);
	assert_true(atomic_load(&r.found) > 0);
	assert_true(sl_runc_index_rebuilds(r.ix) > 1);
	/* (errors may count: this test writes state.json in place, so a rebuild
	 * can read one half-written; runc itself renames it into place) */
	sl_runc_index_free(r.ix);
}

/* Rebuilds are at most one per min-interval, whatever the lookups. */
static void rebuilds_rate_limited(void **state)
{
	(void)state;
	struct sl_runc_index *ix = sl_runc_index_new(root);
	sl_runc_index_set_min_interval(ix, 60ull * 1000000000ull);
	char id[80];
	assert_int_equal(sl_runc_index_lookup(ix, "/c/x", id, sizeof(id)), 0);
	assert_int_equal(sl_runc_index_rebuilds(ix), 1); /* the first get builds */
	add_container("x", "/c/x", 1);
	bump_root_mtime();
	for (int i = 0; i < 100; i++)
		assert_int_equal(sl_runc_index_lookup(ix, "/c/x", id, sizeof(id)), 0);
	assert_int_equal(sl_runc_index_rebuilds(ix), 1);
	sl_runc_index_set_min_interval(ix, 0);
	assert_int_equal(sl_runc_index_lookup(ix, "/c/x", id, sizeof(id)), 1);
	assert_int_equal(sl_runc_index_rebuilds(ix), 2);
	sl_runc_index_free(ix);
}

/* runc create -> start: the snapshot was built while the container's
 * directory had no state.json (runc init's own exec); runc then writes it
 * and the entrypoint execs within the min-interval. That lookup must find
 * the container (no rate limit for a pending state that appeared), and
 * once found, misses for other directories cost no more rebuilds. */
static void pending_state_appears_within_interval(void **state)
{
	(void)state;
	char id[80], p[256];
	struct sl_runc_index *ix = sl_runc_index_new(root);
	sl_runc_index_set_min_interval(ix, 60ull * 1000000000ull);
	add_container("c9", "/c/c9", 0);
	assert_int_equal(sl_runc_index_lookup(ix, "/c/c9", id, sizeof(id)), 0);
	uint64_t n0 = sl_runc_index_rebuilds(ix);
	snprintf(p, sizeof(p), "%s/c9/state.json", root);
	write_file(p, "{\"id\":\"c9\",\"cgroup_paths\":{\"\":\"/c/c9\"}}");
	assert_int_equal(sl_runc_index_lookup(ix, "/c/c9", id, sizeof(id)), 1);
	assert_string_equal(id, "c9");
	assert_int_equal(sl_runc_index_rebuilds(ix), n0 + 1);
	for (int i = 0; i < 50; i++)
		assert_int_equal(sl_runc_index_lookup(ix, "/user.slice/x", id, sizeof(id)), 0);
	assert_int_equal(sl_runc_index_rebuilds(ix), n0 + 1);
	sl_runc_index_free(ix);
}

/* runc create: the names lookup misses before state.json exists; runc then
 * writes <root>/<id>/state.json, and the root's mtime does not show it
 * (here: put back, as within one coarse timestamp tick). The next get must
 * see the bundle. */
static void bundle_miss_then_state_written(void **state)
{
	(void)state;
	char p[256], bundle[256];
	struct stat rsb;
	struct sl_runc_index *ix = sl_runc_index_new(root);
	struct sl_runc_snap *s = sl_runc_index_get(ix);
	assert_int_equal(sl_runc_snap_bundle(s, "c1", bundle, sizeof(bundle)), 0);
	sl_runc_snap_put(s);
	assert_int_equal(stat(root, &rsb), 0);
	snprintf(p, sizeof(p), "%s/c1", root);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/c1/state.json", root);
	write_file(p, "{\"id\":\"c1\",\"cgroup_paths\":{\"\":\"/c/c1\"},"
		      "\"config\":{\"labels\":[\"bundle=/b/c1\"]}}");
	struct timespec ts[2] = {rsb.st_atim, rsb.st_mtim};
	assert_int_equal(utimensat(AT_FDCWD, root, ts, 0), 0);
	struct timespec w = {0, 20 * 1000000}; /* past the min-interval */
	nanosleep(&w, NULL);
	s = sl_runc_index_get(ix);
	assert_int_equal(sl_runc_snap_bundle(s, "c1", bundle, sizeof(bundle)), 1);
	assert_string_equal(bundle, "/b/c1");
	sl_runc_snap_put(s);
	/* found: no more rebuilds for it; a miss for an id runc does not
	 * have costs no rebuild */
	uint64_t n = sl_runc_index_rebuilds(ix);
	for (int i = 0; i < 3; i++) {
		nanosleep(&w, NULL);
		s = sl_runc_index_get(ix);
		assert_int_equal(sl_runc_snap_bundle(s, "c1", bundle, sizeof(bundle)), 1);
		assert_int_equal(sl_runc_snap_bundle(s, "not-runc", bundle, sizeof(bundle)), 0);
		sl_runc_snap_put(s);
	}
	assert_int_equal(sl_runc_index_rebuilds(ix), n);
	sl_runc_index_free(ix);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(finds_by_any_controller_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(sees_new_and_removed_containers, setup, teardown),
		cmocka_unit_test_setup_teardown(state_written_after_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(garbage_and_missing_root, setup, teardown),
		cmocka_unit_test(state_from_buffer),
		cmocka_unit_test_setup_teardown(concurrent_get_put_vs_rebuild, setup, teardown),
		cmocka_unit_test_setup_teardown(rebuilds_rate_limited, setup, teardown),
		cmocka_unit_test_setup_teardown(pending_state_appears_within_interval, setup, teardown),
		cmocka_unit_test_setup_teardown(bundle_miss_then_state_written, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
