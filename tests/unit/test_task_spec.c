/* Task request parsing (src/task/spec.c), syscall/errno names
 * (src/task/syscall_names.c) and task URL splitting (src/api/api_tasks.c). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "task/task.h"
#include "task/syscall_names.h"
#include "api/api_tasks.h"

static const struct sl_task_limits lim = {
	.max_duration_ns = 60000000000ull,
	.default_duration_ns = 10000000000ull,
	.default_hz = 99,
	.max_hz = 1000,
	.default_min_off_cpu_ns = 1000,
};

static int parse(const char *js, struct sl_task_spec *s, char *err)
{
	json_t *b = json_loads(js, 0, NULL);
	assert_non_null(b);
	int rc = sl_task_spec_parse(b, &lim, s, err, 256);
	json_decref(b);
	return rc;
}

static void test_defaults(void **st)
{
	(void)st;
	struct sl_task_spec s;
	char err[256];
	assert_int_equal(parse("{\"type\":\"profile_on_cpu\",\"target\":{\"container\":\"abcd1234\"}}", &s, err), 0);
	assert_int_equal(s.type, SL_TASK_PROFILE_ON_CPU);
	assert_int_equal(s.target_kind, SL_TGT_CONTAINER);
	assert_string_equal(s.target, "abcd1234");
	assert_int_equal(s.duration_ns, 10000000000ull);
	assert_int_equal(s.hz, 99);
	assert_int_equal(s.min_off_cpu_ns, 0);
	assert_int_equal(s.follow, 0);

	assert_int_equal(parse("{\"type\":\"profile_off_cpu\",\"target\":{\"pod\":\"0a1b2c3d-aaaa-bbbb-cccc-0123456789ab\"},"
			       "\"duration_s\":2.5,\"follow\":true}", &s, err), 0);
	assert_int_equal(s.type, SL_TASK_PROFILE_OFF_CPU);
	assert_int_equal(s.target_kind, SL_TGT_POD);
	assert_int_equal(s.duration_ns, 2500000000ull);
	assert_int_equal(s.hz, 0);
	assert_int_equal(s.min_off_cpu_ns, 1000);
	assert_int_equal(s.follow, 1);

	assert_int_equal(parse("{\"type\":\"profile_off_cpu\",\"target\":{\"tid\":42},\"min_off_cpu_us\":0}", &s, err), 0);
	assert_int_equal(s.target_kind, SL_TGT_TID);
	assert_int_equal(s.pid, 42);
	assert_int_equal(s.min_off_cpu_ns, 0);

	assert_int_equal(parse("{\"type\":\"trace_syscall_errors\",\"target\":{\"pid\":7},\"duration_s\":60}", &s, err), 0);
	assert_int_equal(s.target_kind, SL_TGT_PID);
	assert_int_equal(s.pid, 7);
	assert_int_equal(s.duration_ns, 60000000000ull);
}

static void test_errors(void **st)
{
	(void)st;
	static const struct {
		const char *body, *field;
	} bad[] = {
		{"[]", "body"},
		{"{\"target\":{\"pid\":1}}", "type"},
		{"{\"type\":\"profile\",\"target\":{\"pid\":1}}", "type"},
		{"{\"type\":\"profile_on_cpu\"}", "target"},
		{"{\"type\":\"profile_on_cpu\",\"target\":{}}", "target"},
		{"{\"type\":\"profile_on_cpu\",\"target\":{\"pid\":1,\"tid\":2}}", "target"},
		{"{\"type\":\"profile_on_cpu\",\"target\":{\"pid\":0}}", "target.pid"},
		{"{\"type\":\"profile_on_cpu\",\"target\":{\"pid\":\"1\"}}", "target.pid"},
		{"{\"type\":\"profile_on_cpu\",\"target\":{\"container\":\"abc\"}}", "target.container"},
		{"{\"type\":\"profile_on_cpu\",\"target\":{\"container\":\"abcd/../x\"}}", "target.container"},
		{"{\"type\":\"profile_on_cpu\",\"target\":{\"node\":\"x\"}}", "target"},
		{"{\"type\":\"profile_on_cpu\",\"target\":{\"pid\":1},\"duration_s\":0}", "duration_s"},
		{"{\"type\":\"profile_on_cpu\",\"target\":{\"pid\":1},\"duration_s\":60.5}", "duration_s"},
		{"{\"type\":\"profile_on_cpu\",\"target\":{\"pid\":1},\"duration_s\":\"5\"}", "duration_s"},
		{"{\"type\":\"profile_on_cpu\",\"target\":{\"pid\":1},\"hz\":1001}", "hz"},
		{"{\"type\":\"profile_on_cpu\",\"target\":{\"pid\":1},\"hz\":-1}", "hz"},
		{"{\"type\":\"trace_syscall_errors\",\"target\":{\"pid\":1},\"hz\":99}", "hz"},
		{"{\"type\":\"profile_on_cpu\",\"target\":{\"pid\":1},\"min_off_cpu_us\":5}", "min_off_cpu_us"},
		{"{\"type\":\"profile_on_cpu\",\"target\":{\"pid\":1},\"follow\":1}", "follow"},
		{"{\"type\":\"profile_on_cpu\",\"target\":{\"pid\":1},\"x\":1}", "x"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sl_task_spec s;
		char err[256] = "";
		json_t *b = json_loads(bad[i].body, 0, NULL);
		assert_non_null(b);
		int rc = sl_task_spec_parse(b, &lim, &s, err, sizeof(err));
		json_decref(b);
		if (rc != -EINVAL || strncmp(err, bad[i].field, strlen(bad[i].field)) || err[strlen(bad[i].field)] != ':')
			fail_msg("%s: rc %d, err '%s' (want field %s)", bad[i].body, rc, err, bad[i].field);
	}
}

static void test_names(void **st)
{
	(void)st;
	assert_string_equal(sl_task_type_name(SL_TASK_SYSCALL_ERRORS), "trace_syscall_errors");
	assert_null(sl_task_type_name(SL_TASK_NTYPES));
	assert_int_equal(sl_task_type_parse("profile_off_cpu"), SL_TASK_PROFILE_OFF_CPU);
	assert_int_equal(sl_task_type_parse("x"), -1);
	assert_int_equal(sl_task_type_parse(NULL), -1);
	assert_string_equal(sl_task_status_name(SL_TS_CANCELLED), "cancelled");
	/* syscall tables: well-known numbers of both ABIs */
	assert_string_equal(sl_syscall_name(0, "x86_64"), "read");
	assert_string_equal(sl_syscall_name(257, "x86_64"), "openat");
	assert_string_equal(sl_syscall_name(3, "x86_64"), "close");
	assert_string_equal(sl_syscall_name(56, "aarch64"), "openat");
	assert_string_equal(sl_syscall_name(57, "arm64"), "close");
	assert_string_equal(sl_syscall_name(63, "arm64"), "read");
	assert_null(sl_syscall_name(100000, "x86_64"));
	assert_null(sl_syscall_name(-1, "arm64"));
	assert_string_equal(sl_errno_name(ENOENT), "ENOENT");
	assert_string_equal(sl_errno_name(EBADF), "EBADF");
}

static void test_split(void **st)
{
	(void)st;
	char id[SL_TASK_ID_LEN];
	int res = -1;
	assert_int_equal(sl_api_tasks_split("/api/v1/tasks/t-0123abcd", id, sizeof(id), &res), 0);
	assert_string_equal(id, "t-0123abcd");
	assert_int_equal(res, 0);
	assert_int_equal(sl_api_tasks_split("/api/v1/tasks/t-1/result", id, sizeof(id), &res), 0);
	assert_string_equal(id, "t-1");
	assert_int_equal(res, 1);
	assert_int_equal(sl_api_tasks_split("/api/v1/tasks/", id, sizeof(id), &res), -1);
	assert_int_equal(sl_api_tasks_split("/api/v1/tasks/t-1/other", id, sizeof(id), &res), -1);
	assert_int_equal(sl_api_tasks_split("/api/v1/tasks/t-1/result/x", id, sizeof(id), &res), -1);
	assert_int_equal(sl_api_tasks_split("/api/v1/tasks/a.b", id, sizeof(id), &res), -1);
	assert_int_equal(sl_api_tasks_split("/api/v1/tasks/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", id, sizeof(id), &res), -1);
	assert_int_equal(sl_api_tasks_split("/api/v1/tasksx/t", id, sizeof(id), &res), -1);
	assert_true(sl_api_tasks_match("/api/v1/tasks"));
	assert_true(sl_api_tasks_match("/api/v1/tasks/x"));
	assert_true(sl_api_tasks_match("/api/v1/capabilities"));
	assert_false(sl_api_tasks_match("/api/v1/tasksx"));
	assert_false(sl_api_tasks_match("/api/v1/events"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_split),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
