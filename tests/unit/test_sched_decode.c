/* sched module pieces outside the histogram math: sched_delay record
 * decoding, the sched.watch matcher, the ns duration parser of the
 * sched.delay_threshold key. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/config.h"
#include "common/units.h"
#include "modules/proc.h"
#include "modules/sched.h"

/* the modules' sections (tests may name modules) */
static inline struct sl_proc_cfg *PROC(struct sl_config *c)
{
	return sl_config_module_by_name(c, "proc", NULL);
}
static inline struct sl_sched_cfg *SCHED(struct sl_config *c)
{
	return sl_config_module_by_name(c, "sched", NULL);
}
#include "modules/sched.h"

static void test_delay_fields(void **state)
{
	(void)state;
	struct sl_sched_delay_event e;
	memset(&e, 0, sizeof(e));
	e.hdr.type = SL_EV_SCHED_DELAY;
	e.hdr.cpu = 3;
	e.task.pid = 100;
	e.task.tid = 101;
	memcpy(e.task.comm, "victim", 6);
	e.neighbour.pid = 200;
	e.neighbour.tid = 202;
	e.neighbour.cgroup_id = 77;
	memcpy(e.neighbour.comm, "0123456789abcdef", 16); /* no NUL: full length */
	e.wait_ns = 1234567;
	e.truncated_count = 9;
	e.contention = SL_SCHED_EXTERNAL;
	e.enqueue = SL_SCHED_ENQ_PREEMPT;

	assert_null(sl_sched_delay_fields(NULL, &e, sizeof(e) - 1));
	json_t *o = sl_sched_delay_fields(NULL, &e, sizeof(e));
	assert_non_null(o);
	assert_int_equal(json_integer_value(json_object_get(o, "wait_ns")), 1234567);
	assert_int_equal(json_integer_value(json_object_get(o, "cpu")), 3);
	assert_int_equal(json_integer_value(json_object_get(o, "tid")), 101);
	assert_int_equal(json_integer_value(json_object_get(o, "truncated_count")), 9);
	assert_string_equal(json_string_value(json_object_get(o, "contention")), "external");
	assert_string_equal(json_string_value(json_object_get(o, "enqueue")), "preempted");
	json_t *n = json_object_get(o, "neighbour");
	assert_int_equal(json_integer_value(json_object_get(n, "pid")), 200);
	assert_int_equal(json_integer_value(json_object_get(n, "tid")), 202);
	assert_int_equal(json_integer_value(json_object_get(n, "cgroup_id")), 77);
	assert_string_equal(json_string_value(json_object_get(n, "comm")), "0123456789abcdef");
	json_decref(o);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(sl_sched_contention_name(SL_SCHED_IDLE), "idle");
	assert_string_equal(sl_sched_contention_name(SL_SCHED_INTERNAL), "internal");
	assert_string_equal(sl_sched_contention_name(7), "unknown");
	assert_string_equal(sl_sched_enqueue_name(SL_SCHED_ENQ_WAKEUP), "wakeup");
	assert_string_equal(sl_sched_enqueue_name(SL_SCHED_ENQ_WAKEUP_NEW), "wakeup_new");
	assert_string_equal(sl_sched_enqueue_name(0), "unknown");
}

static void test_watch(void **state)
{
	(void)state;
	const char *id = "4f2a9c0d11223344", *pod = "6d1e2f3a-0000-4000-8000-000000000001";
	assert_true(sl_sched_watch_match("all", id, pod));
	assert_false(sl_sched_watch_match("all", "", ""));  /* not a container */
	assert_false(sl_sched_watch_match("none", id, pod));
	assert_true(sl_sched_watch_match("4f2a", id, pod));
	assert_true(sl_sched_watch_match("abc, 4f2a9c", id, pod));
	assert_true(sl_sched_watch_match("zzz,6d1e2f", id, pod)); /* pod uid prefix */
	assert_false(sl_sched_watch_match("4f2b,6d1f", id, pod));
	assert_false(sl_sched_watch_match("", id, pod));
	assert_false(sl_sched_watch_match(",,", id, pod));
	assert_false(sl_sched_watch_match("6d1e", id, "")); /* no pod uid */
}

static void test_duration_ns(void **state)
{
	(void)state;
	uint64_t v;
	assert_int_equal(sl_parse_duration_ns("1ms", &v), 0);
	assert_true(v == 1000000);
	assert_int_equal(sl_parse_duration_ns("500us", &v), 0);
	assert_true(v == 500000);
	assert_int_equal(sl_parse_duration_ns("2s", &v), 0);
	assert_true(v == 2000000000ull);
	assert_int_equal(sl_parse_duration_ns("1m", &v), 0);
	assert_true(v == 60000000000ull);
	assert_int_equal(sl_parse_duration_ns("150ns", &v), 0);
	assert_true(v == 150);
	assert_int_equal(sl_parse_duration_ns("42", &v), 0);
	assert_true(v == 42);
	assert_int_equal(sl_parse_duration_ns("1h", &v), 0);
	assert_true(v == 3600000000000ull);
	assert_int_equal(sl_parse_duration_ns("1d", &v), 0); /* days too (docs/CONFIG.md) */
	assert_true(v == 86400000000000ull);
	assert_int_equal(sl_parse_duration_ns("1w", &v), -1);
	assert_int_equal(sl_parse_duration_ns("-1ms", &v), -1);
	assert_int_equal(sl_parse_duration_ns("ms", &v), -1);
	assert_int_equal(sl_parse_duration_ns("99999999999999999999", &v), -1);
	assert_int_equal(sl_parse_duration_ns("18446744073709551615s", &v), -1); /* overflow */
}

static void test_config_defaults(void **state)
{
	(void)state;
	struct sl_config c;
	sl_config_defaults(&c);
	{ int en = 0; sl_config_module_by_name(&c, "sched", &en); assert_int_equal(en, 1); }
	assert_string_equal(SCHED(&c)->watch, "all");
	assert_true(SCHED(&c)->delay_threshold_ns == 1000000);
	assert_true(SCHED(&c)->ringbuf_size == 256u << 10);
}

/* sched.wait_source: the configured choice, or in auto mode whether the
 * kernel keeps sched_info (its schedstat file exists; here a fixture
 * file and a missing path stand for a kernel with and without it) */
static void test_wait_source(void **state)
{
	(void)state;
	char have[] = "/tmp/sl-schedstat-XXXXXX";
	int fd = mkstemp(have);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sl_sched_use_sched_info("sched_info", "/nonexistent/schedstat"), 1);
	assert_int_equal(sl_sched_use_sched_info("wakeup", have), 0);
	assert_int_equal(sl_sched_use_sched_info("auto", have), 1);
	assert_int_equal(sl_sched_use_sched_info("auto", "/nonexistent/schedstat"), 0);
	/* the real file: this kernel (Debian's config) has CONFIG_SCHED_INFO */
	if (access("/proc/self/schedstat", R_OK) == 0)
		assert_int_equal(sl_sched_use_sched_info("auto", "/proc/self/schedstat"), 1);
	unlink(have);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delay_fields),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_watch),
		cmocka_unit_test(test_duration_ns),
		cmocka_unit_test(test_config_defaults),
		cmocka_unit_test(test_wait_source),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
