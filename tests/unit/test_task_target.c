/* Target resolution over fixture cgroup trees (src/task/target.c) and the
 * task store (src/task/task_store.c). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "task/target.h"
#include "task/task_store.h"

#define CID1 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define CID2 "0123ffff89abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define POD "0a1b2c3d-aaaa-bbbb-cccc-0123456789ab"

static char root[64];
static struct sl_cg_mounts mnt;

static uint64_t mk(const char *hier, const char *rel)
{
	char p[512], cmd[600];
	snprintf(p, sizeof(p), "%s/%s%s", root, hier, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
	assert_int_equal(system(cmd), 0);
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	return st.st_ino;
}

static void write_procs(const char *hier, const char *rel, const char *text)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s%s/cgroup.procs", root, hier, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static uint64_t c1_v2, c1_v2_child, c1_v1, c2_v2, pod_v2;

static int setup(void **st)
{
	(void)st;
	strcpy(root, "/tmp/sl-target-XXXXXX");
	assert_non_null(mkdtemp(root));
	memset(&mnt, 0, sizeof(mnt));
	snprintf(mnt.v2, sizeof(mnt.v2), "%s/unified", root);
	snprintf(mnt.v1, sizeof(mnt.v1), "%s/memory", root);
	mk("unified", "/system.slice/foo.service");
	pod_v2 = mk("unified", "/kubepods/burstable/pod" POD);
	c1_v2 = mk("unified", "/kubepods/burstable/pod" POD "/" CID1);
	c1_v2_child = mk("unified", "/kubepods/burstable/pod" POD "/" CID1 "/sub");
	c2_v2 = mk("unified", "/kubepods/besteffort/podffffffff-aaaa-bbbb-cccc-0123456789ab/" CID2);
	c1_v1 = mk("memory", "/kubepods/burstable/pod" POD "/" CID1);
	write_procs("unified", "/kubepods/burstable/pod" POD "/" CID1, "100\n101\n");
	write_procs("unified", "/kubepods/burstable/pod" POD "/" CID1 "/sub", "102\n");
	write_procs("memory", "/kubepods/burstable/pod" POD "/" CID1, "100\n101\n102\n");
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static int has(const struct sl_target_set *s, uint64_t id, int hier)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->cg[i].id == id && s->cg[i].hier == hier)
			return 1;
	return 0;
}

static void test_container(void **st)
{
	(void)st;
	struct sl_target_opts o = {.mounts = &mnt};
	struct sl_target_set *s = calloc(1, sizeof(*s));
	char err[256];
	assert_int_equal(sl_target_resolve(&o, 0, CID1, s, err, sizeof(err)), 0);
	assert_string_equal(s->container_id, CID1);
	assert_int_equal(s->n, 3);
	assert_true(has(s, c1_v2, 0));
	assert_true(has(s, c1_v2_child, 0)); /* descendants belong to it */
	assert_true(has(s, c1_v1, 1));
	assert_false(has(s, c2_v2, 0));
	assert_false(has(s, pod_v2, 0));
	assert_string_equal(sl_target_container_of(s, c1_v2_child, 0), CID1);
	assert_string_equal(sl_target_container_of(s, 0, c1_v1), CID1);
	assert_string_equal(sl_target_container_of(s, c2_v2, 0), "");
	uint32_t pids[8];
	size_t n = sl_target_pids(&o, s, pids, 8);
	assert_int_equal(n, 3); /* 100 101 102, deduplicated across hierarchies */

	/* a prefix; a new child cgroup appears: refresh adds it */
	memset(s, 0, sizeof(*s));
	assert_int_equal(sl_target_resolve(&o, 0, "01234567", s, err, sizeof(err)), 0);
	assert_string_equal(s->container_id, CID1);
	uint64_t late = mk("unified", "/kubepods/burstable/pod" POD "/" CID1 "/late");
	assert_int_equal(sl_target_refresh(&o, s), 1);
	assert_true(has(s, late, 0));
	assert_int_equal(sl_target_refresh(&o, s), 0);

	/* ambiguous prefix, unknown id, bad id */
	memset(s, 0, sizeof(*s));
	assert_int_equal(sl_target_resolve(&o, 0, "0123", s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "matches"));
	assert_int_equal(sl_target_resolve(&o, 0, "deadbeef", s, err, sizeof(err)), -ENOENT);
	assert_int_equal(sl_target_resolve(&o, 0, "../etc", s, err, sizeof(err)), -EINVAL);
	free(s);
}

static void test_pod(void **st)
{
	(void)st;
	struct sl_target_opts o = {.mounts = &mnt};
	struct sl_target_set *s = calloc(1, sizeof(*s));
	char err[256];
	assert_int_equal(sl_target_resolve(&o, 1, "0A1B2C3D-AAAA-BBBB-CCCC-0123456789AB", s, err, sizeof(err)), 0);
	assert_string_equal(s->pod_uid, POD);
	assert_true(has(s, pod_v2, 0));
	assert_true(has(s, c1_v2, 0));
	assert_true(has(s, c1_v1, 1));
	assert_false(has(s, c2_v2, 0));
	assert_string_equal(sl_target_container_of(s, c1_v2, 0), CID1);
	assert_string_equal(sl_target_container_of(s, pod_v2, 0), "");
	free(s);
}

static void test_store(void **st)
{
	(void)st;
	char path[128], err[256];
	snprintf(path, sizeof(path), "%s/db/tasks.db", root);
	struct sl_task_store *s = sl_task_store_open(path, err, sizeof(err));
	assert_non_null(s);
	json_t *r1 = json_pack("{s:s, s:s}", "id", "t-1", "status", "running");
	json_t *r2 = json_pack("{s:s, s:s}", "id", "t-2", "status", "done");
	json_t *r3 = json_pack("{s:s, s:s}", "id", "t-3", "status", "done");
	assert_int_equal(sl_task_store_put(s, "t-1", 100, 0, "running", r1), 0);
	assert_int_equal(sl_task_store_put(s, "t-2", 200, 1000, "done", r2), 0);
	assert_int_equal(sl_task_store_put(s, "t-3", 300, 5000, "done", r3), 0);
	assert_int_equal(sl_task_store_put_result(s, "t-2", "folded", "a;b 3\n", 6), 0);
	char *b;
	size_t l;
	assert_int_equal(sl_task_store_get_result(s, "t-2", "folded", &b, &l), 0);
	assert_int_equal(l, 6);
	assert_memory_equal(b, "a;b 3\n", 6);
	free(b);
	assert_int_equal(sl_task_store_get_result(s, "t-2", "svg", &b, &l), -ENOENT);
	json_t *list = sl_task_store_list(s, 10);
	assert_int_equal(json_array_size(list), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "id")), "t-3");
	json_decref(list);
	/* retention: ended before 2000 -> t-2 goes (with its result); t-1 runs */
	assert_int_equal(sl_task_store_retain(s, 3000, 1000, 0), 1);
	assert_null(sl_task_store_get(s, "t-2"));
	assert_int_equal(sl_task_store_get_result(s, "t-2", "folded", &b, &l), -ENOENT);
	/* by count: keep 0 ended beyond the newest ... keep at most 1 ended */
	assert_int_equal(sl_task_store_put(s, "t-4", 400, 6000, "done", r3), 0);
	assert_int_equal(sl_task_store_retain(s, 7000, 0, 1), 1);
	assert_null(sl_task_store_get(s, "t-3"));
	json_t *g = sl_task_store_get(s, "t-4");
	assert_non_null(g);
	json_decref(g);
	sl_task_store_close(s);
	/* reopen: the task left running becomes failed */
	s = sl_task_store_open(path, err, sizeof(err));
	assert_non_null(s);
	g = sl_task_store_get(s, "t-1");
	assert_string_equal(json_string_value(json_object_get(g, "status")), "failed");
	assert_non_null(strstr(json_string_value(json_object_get(g, "reason")), "restarted"));
	json_decref(g);
	assert_int_equal(sl_task_store_delete(s, "t-1"), 0);
	assert_null(sl_task_store_get(s, "t-1"));
	sl_task_store_close(s);
	json_decref(r1);
	json_decref(r2);
	json_decref(r3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_container),
		cmocka_unit_test(test_pod),
		cmocka_unit_test(test_store),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
