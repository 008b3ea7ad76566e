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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(finds_by_any_controller_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(sees_new_and_removed_containers, setup, teardown),
		cmocka_unit_test_setup_teardown(state_written_after_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(garbage_and_missing_root, setup, teardown),
		cmocka_unit_test(state_from_buffer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
