/* Histogram math of the sched module (src/modules/sched_hist.c): slot
 * boundaries (Prometheus `le` semantics), cumulative buckets, quantiles
 * from log2 buckets, deltas, per-CPU folding. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "modules/sched_hist.h"

/* Each slot's inclusive upper bound falls in that slot, one ns more falls in
 * the next: the `le` of slot k is exactly 2^k us. */
static void test_slot_bounds(void **state)
{
	(void)state;
	assert_int_equal(sl_sched_slot(0), 0);
	assert_int_equal(sl_sched_slot(1), 0);
	assert_int_equal(sl_sched_slot(1000), 0);
	assert_int_equal(sl_sched_slot(1001), 1);
	assert_int_equal(sl_sched_slot(2000), 1);
	assert_int_equal(sl_sched_slot(2001), 2);
	for (unsigned k = 0; k < SL_SCHED_FINITE_SLOTS; k++) {
		uint64_t up = sl_sched_slot_upper_ns(k);
		assert_int_equal(sl_sched_slot(up), k);
		assert_int_equal(sl_sched_slot(up + 1), k + 1);
		if (k > 0) {
			assert_int_equal(sl_sched_slot_lower_ns(k), sl_sched_slot_upper_ns(k - 1));
			assert_int_equal(sl_sched_slot(sl_sched_slot_lower_ns(k) + 1), k);
		}
	}
	assert_int_equal(sl_sched_slot(1048576000ull), 20);
	assert_int_equal(sl_sched_slot(1048576001ull), 21);
	assert_int_equal(sl_sched_slot(UINT64_MAX), 21);
	assert_true(sl_sched_slot_upper_ns(21) == UINT64_MAX);
}

static void test_le_labels(void **state)
{
	(void)state;
	char b[32];
	sl_sched_le_label(0, b, sizeof(b));
	assert_string_equal(b, "1e-06");
	sl_sched_le_label(1, b, sizeof(b));
	assert_string_equal(b, "2e-06");
	sl_sched_le_label(10, b, sizeof(b));
	assert_string_equal(b, "0.001024");
	sl_sched_le_label(20, b, sizeof(b));
	assert_string_equal(b, "1.048576");
	sl_sched_le_label(21, b, sizeof(b));
	assert_string_equal(b, "+Inf");
	/* every finite label parses back to the slot's upper bound */
	for (unsigned k = 0; k < SL_SCHED_FINITE_SLOTS; k++) {
		sl_sched_le_label(k, b, sizeof(b));
		double v = strtod(b, NULL) * 1e9;
		assert_true(fabs(v - (double)sl_sched_slot_upper_ns(k)) < 1e-3);
	}
}

static void test_cumulative(void **state)
{
	(void)state;
	uint64_t s[SL_SCHED_SLOTS] = {0}, c[SL_SCHED_SLOTS];
	s[0] = 3;
	s[5] = 7;
	s[21] = 2;
	sl_sched_cumulative(s, c);
	assert_int_equal(c[0], 3);
	assert_int_equal(c[4], 3);
	assert_int_equal(c[5], 10);
	assert_int_equal(c[20], 10);
	assert_int_equal(c[21], 12);
	assert_int_equal(sl_sched_count(s), 12);
	for (unsigned k = 1; k < SL_SCHED_SLOTS; k++)
		assert_true(c[k] >= c[k - 1]);
}

/* Build a histogram from known waits and compare quantiles against the
 * exact order statistic: the estimate must lie in the same slot. */
static void test_quantile_in_slot(void **state)
{
	(void)state;
	uint64_t s[SL_SCHED_SLOTS] = {0}, w[1000], mx = 0;
	uint32_t x = 12345;
	for (int i = 0; i < 1000; i++) {
		x = x * 1103515245u + 12345u;
		w[i] = 500 + (x >> 8) % 5000000; /* 0.5 us .. 5 ms */
		s[sl_sched_slot(w[i])]++;
		if (w[i] > mx)
			mx = w[i];
	}
	/* sort */
	for (int i = 1; i < 1000; i++)
		for (int j = i; j > 0 && w[j - 1] > w[j]; j--) {
			uint64_t t = w[j];
			w[j] = w[j - 1];
			w[j - 1] = t;
		}
	const double qs[] = {0.5, 0.9, 0.99, 1.0};
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		int rank = (int)ceil(qs[i] * 1000);
		uint64_t exact = w[rank - 1];
		double est = sl_sched_quantile(s, qs[i], mx);
		unsigned k = sl_sched_slot(exact);
		assert_true(est > (double)sl_sched_slot_lower_ns(k));
		assert_true(est <= (double)sl_sched_slot_upper_ns(k));
		assert_true(est <= (double)mx);
	}
	assert_true(fabs(sl_sched_quantile(s, 1.0, mx) - (double)mx) < 1e-6);
}

static void test_quantile_interpolation(void **state)
{
	(void)state;
	uint64_t s[SL_SCHED_SLOTS] = {0};
	/* 10 waits in (8 us, 16 us]: p50 = rank 5 = 8 + 8 * 5/10 = 12 us */
	s[4] = 10;
	assert_true(fabs(sl_sched_quantile(s, 0.5, 0) - 12000.0) < 1e-6);
	assert_true(fabs(sl_sched_quantile(s, 1.0, 0) - 16000.0) < 1e-6);
	/* clamped to the known max */
	assert_true(fabs(sl_sched_quantile(s, 1.0, 13000) - 13000.0) < 1e-6);
	/* two slots: 90 in slot 1, 10 in slot 11; p90 is the top of slot 1,
	 * p99 = 1.024 ms + 1.024 ms * 9/10 */
	memset(s, 0, sizeof(s));
	s[1] = 90;
	s[11] = 10;
	assert_true(fabs(sl_sched_quantile(s, 0.9, 0) - 2000.0) < 1e-6);
	assert_true(fabs(sl_sched_quantile(s, 0.99, 0) - (1024000.0 + 1024000.0 * 0.9)) < 1e-3);
	/* open last slot: up to max */
	memset(s, 0, sizeof(s));
	s[21] = 2;
	assert_true(fabs(sl_sched_quantile(s, 1.0, 3000000000ull) - 3e9) < 1);
	assert_true(fabs(sl_sched_quantile(s, 0.5, 3000000000ull) - (1048576000.0 + (3e9 - 1048576000.0) / 2)) < 1);
	assert_true(fabs(sl_sched_quantile(s, 1.0, 0) - 1048576000.0) < 1);
	/* empty and bad q */
	memset(s, 0, sizeof(s));
	assert_true(sl_sched_quantile(s, 0.5, 0) == 0);
	s[3] = 1;
	assert_true(sl_sched_quantile(s, 0, 0) == 0);
	assert_true(sl_sched_quantile(s, 1.5, 0) == 0);
}

static void test_delta(void **state)
{
	(void)state;
	uint64_t a[SL_SCHED_SLOTS] = {0}, b[SL_SCHED_SLOTS] = {0}, d[SL_SCHED_SLOTS];
	a[2] = 10;
	b[2] = 4;
	a[7] = 5;
	assert_int_equal(sl_sched_delta(a, b, d), 0);
	assert_int_equal(d[2], 6);
	assert_int_equal(d[7], 5);
	b[7] = 9; /* went down: recreated entry */
	assert_int_equal(sl_sched_delta(a, b, d), 1);
	assert_int_equal(d[2], 10);
	assert_int_equal(d[7], 5);
}

static void test_fold(void **state)
{
	(void)state;
	struct sl_sched_hist pc[3], sum;
	uint64_t mx;
	memset(pc, 0, sizeof(pc));
	pc[0].slots[1] = 2;
	pc[1].slots[1] = 3;
	pc[2].slots[21] = 1;
	pc[0].sum_ns = 100;
	pc[2].sum_ns = 5;
	pc[1].class_ns[SL_SCHED_EXTERNAL] = 7;
	pc[0].max_epoch[1] = 5; pc[0].max_ns[1] = 900;  /* epoch 5 */
	pc[1].max_epoch[1] = 3; pc[1].max_ns[1] = 5000; /* stale epoch */
	pc[2].max_epoch[1] = 5; pc[2].max_ns[1] = 1200;
	sl_sched_fold_cpus(pc, 3, 5, &sum, &mx);
	assert_int_equal(sum.slots[1], 5);
	assert_int_equal(sum.slots[21], 1);
	assert_int_equal(sum.sum_ns, 105);
	assert_int_equal(sum.class_ns[SL_SCHED_EXTERNAL], 7);
	assert_int_equal(mx, 1200);
	sl_sched_fold_cpus(pc, 3, 6, &sum, &mx);
	assert_int_equal(mx, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slot_bounds),
		cmocka_unit_test(test_le_labels),
		cmocka_unit_test(test_cumulative),
		cmocka_unit_test(test_quantile_in_slot),
		cmocka_unit_test(test_quantile_interpolation),
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_fold),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
