/* Unit tests for src/stats/sum.c: workload sums (STATS-2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "stats/stats.h"

static struct sl_cgstat full(uint64_t base)
{
	struct sl_cgstat st;
	memset(&st, 0, sizeof(st));
	st.cpu.known = SL_CPU_USAGE | SL_CPU_USER | SL_CPU_SYSTEM | SL_CPU_NR_PERIODS |
		       SL_CPU_NR_THROTTLED | SL_CPU_THROTTLED;
	st.cpu.usage_usec = base + 1;
	st.cpu.user_usec = base + 2;
	st.cpu.system_usec = base + 3;
	st.cpu.nr_periods = base + 4;
	st.cpu.nr_throttled = base + 5;
	st.cpu.throttled_usec = base + 6;
	st.mem.known = SL_MEM_USAGE | SL_MEM_WORKING_SET | SL_MEM_PEAK | SL_MEM_CACHE | SL_MEM_RSS |
		       SL_MEM_SWAP | SL_MEM_OOM | SL_MEM_OOM_KILL;
	st.mem.usage_bytes = base + 10;
	st.mem.working_set_bytes = base + 11;
	st.mem.peak_bytes = base + 12;
	st.mem.cache_bytes = base + 13;
	st.mem.rss_bytes = base + 14;
	st.mem.swap_bytes = base + 15;
	st.mem.oom_events = base + 16;
	st.mem.oom_kill_events = base + 17;
	st.io.known = SL_IO_BYTES | SL_IO_OPS;
	st.io.rbytes = base + 20;
	st.io.wbytes = base + 21;
	st.io.rios = base + 22;
	st.io.wios = base + 23;
	st.pids.known = SL_PIDS_CURRENT;
	st.pids.current = base + 30;
	return st;
}

static void test_two_containers(void **state)
{
	(void)state;
	struct sl_stats_sum s;
	struct sl_cgstat a = full(100), b = full(1000);
	sl_stats_sum_init(&s);
	sl_stats_sum_add(&s, &a);
	sl_stats_sum_add(&s, &b);
	sl_stats_sum_finish(&s);
	assert_int_equal(s.nread, 2);
	assert_int_equal(s.known, SL_SUM_ALL);
	assert_int_equal(s.cpu_usage_usec, 1100 + 2);
	assert_int_equal(s.cpu_user_usec, 1100 + 4);
	assert_int_equal(s.cpu_system_usec, 1100 + 6);
	assert_int_equal(s.cpu_nr_periods, 1100 + 8);
	assert_int_equal(s.cpu_nr_throttled, 1100 + 10);
	assert_int_equal(s.cpu_throttled_usec, 1100 + 12);
	assert_int_equal(s.mem_usage_bytes, 1100 + 20);
	assert_int_equal(s.mem_working_set_bytes, 1100 + 22);
	/* summed peak: the upper bound, the sum of the peaks */
	assert_int_equal(s.mem_peak_bytes, 1100 + 24);
	assert_int_equal(s.mem_cache_bytes, 1100 + 26);
	assert_int_equal(s.mem_rss_bytes, 1100 + 28);
	assert_int_equal(s.mem_swap_bytes, 1100 + 30);
	assert_int_equal(s.oom_events, 1100 + 32);
	assert_int_equal(s.oom_kill_events, 1100 + 34);
	assert_int_equal(s.io_rbytes, 1100 + 40);
	assert_int_equal(s.io_wbytes, 1100 + 42);
	assert_int_equal(s.io_rios, 1100 + 44);
	assert_int_equal(s.io_wios, 1100 + 46);
	assert_int_equal(s.pids_current, 1100 + 60);
}

/* A figure one read container lacks is unknown in the sum (0), the others
 * stay known. */
static void test_partial_unknown(void **state)
{
	(void)state;
	struct sl_stats_sum s;
	struct sl_cgstat a = full(1), b = full(2);
	b.mem.known &= ~(uint32_t)SL_MEM_PEAK;
	b.mem.peak_bytes = 0;
	b.io.known = 0;
	sl_stats_sum_init(&s);
	sl_stats_sum_add(&s, &a);
	sl_stats_sum_add(&s, &b);
	sl_stats_sum_finish(&s);
	assert_false(s.known & SL_SUM_MEM_PEAK);
	assert_int_equal(s.mem_peak_bytes, 0);
	assert_false(s.known & (SL_SUM_IO_BYTES | SL_SUM_IO_OPS));
	assert_int_equal(s.io_rbytes + s.io_wbytes + s.io_rios + s.io_wios, 0);
	assert_true(s.known & SL_SUM_MEM_USAGE);
	assert_int_equal(s.mem_usage_bytes, 11 + 12);
}

/* Nothing read: the sample failed, every figure unknown. */
static void test_nothing_read(void **state)
{
	(void)state;
	struct sl_stats_sum s;
	sl_stats_sum_init(&s);
	sl_stats_sum_finish(&s);
	assert_int_equal(s.nread, 0);
	assert_int_equal(s.known, 0);
}

static void test_saturates(void **state)
{
	(void)state;
	struct sl_stats_sum s;
	struct sl_cgstat a = full(0), b = full(0);
	a.cpu.usage_usec = UINT64_MAX - 5;
	b.cpu.usage_usec = 10;
	sl_stats_sum_init(&s);
	sl_stats_sum_add(&s, &a);
	sl_stats_sum_add(&s, &b);
	sl_stats_sum_finish(&s);
	assert_true(s.cpu_usage_usec == UINT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_containers),
		cmocka_unit_test(test_partial_unknown),
		cmocka_unit_test(test_nothing_read),
		cmocka_unit_test(test_saturates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
