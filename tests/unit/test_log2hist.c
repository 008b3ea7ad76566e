/* The shared log2 histogram (src/common/log2hist.c) and the published
 * snapshot holder (src/common/snapref.c): slot bounds for several slot
 * counts, agreement with the sched and mem layouts it generalises, quantile,
 * delta with reset, and the reference counting of snapshots. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/log2hist.h"

/* the BPF half, compiled here with the kernel's type names */
#include <linux/types.h>
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#include "../../bpf/log2hist.bpf.h"
#include "common/snapref.h"
#include "modules/mem_hist.h"
#include "modules/sched_hist.h"

static void test_bounds(void **state)
{
	static const unsigned ns[] = {2, 3, 8, 22, 26, 34};
	(void)state;
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		unsigned n = ns[i], fin = n - 1;
		assert_int_equal(sl_l2h_slot(0, n), 0);
		assert_int_equal(sl_l2h_slot(1000, n), 0);
		assert_int_equal(sl_l2h_slot(UINT64_MAX, n), n - 1);
		for (unsigned k = 0; k < fin; k++) {
			uint64_t up = sl_l2h_upper_ns(k, n);
			assert_int_equal(up, 1000ull << k);
			assert_int_equal(sl_l2h_slot(up, n), k);
			assert_int_equal(sl_l2h_slot(up + 1, n), k + 1);
			if (k)
				assert_int_equal(sl_l2h_lower_ns(k, n), sl_l2h_upper_ns(k - 1, n));
		}
		assert_true(sl_l2h_upper_ns(fin, n) == UINT64_MAX);
		double le[64];
		sl_l2h_le_seconds(le, n);
		for (unsigned k = 0; k < fin; k++)
			assert_true(le[k] == ldexp(1e-6, (int)k));
	}
	assert_int_equal(sl_l2h_slot(5000, 1), 0);
	assert_int_equal(sl_l2h_slot(5000, 0), 0);
}

/* The BPF arithmetic gives the same slot as the C one, for every slot
 * count it allows, at and around every bound. */
static void test_bpf_half(void **state)
{
	(void)state;
	for (unsigned n = 2; n <= 34; n++) {
		for (unsigned k = 0; k < n + 2 && k < 44; k++) {
			uint64_t b = 1000ull << k;
			for (int d = -2; d <= 2; d++) {
				uint64_t v = b + (uint64_t)(int64_t)d;
				assert_int_equal(sl_l2h_slot_bpf(v, n), sl_l2h_slot(v, n));
			}
		}
		assert_int_equal(sl_l2h_slot_bpf(0, n), 0);
		assert_int_equal(sl_l2h_slot_bpf(UINT64_MAX, n), n - 1);
		uint64_t v = 1;
		for (int i = 0; i < 20000; i++, v = v * 1.003 + 7)
			assert_int_equal(sl_l2h_slot_bpf(v, n), sl_l2h_slot(v, n));
	}
}

/* The same slots as the two layouts already in use. */
static void test_same_as_sched_mem(void **state)
{
	uint64_t v = 1;
	(void)state;
	for (int i = 0; i < 200000; i++) {
		assert_int_equal(sl_l2h_slot(v, SL_SCHED_SLOTS), sl_sched_slot(v));
		assert_int_equal(sl_l2h_slot(v, SL_MEM_SLOTS), sl_mem_slot(v));
		v = v * 1.0001 + 1 + (uint64_t)(i % 7);
		if (v > (1ull << 40))
			v = (uint64_t)i;
	}
	uint64_t s[SL_SCHED_SLOTS] = {0};
	s[0] = 3, s[4] = 10, s[9] = 7, s[21] = 2;
	for (double q = 0.05; q <= 1.0; q += 0.05)
		assert_true(fabs(sl_l2h_quantile(s, SL_SCHED_SLOTS, q, 5000000000ull) -
				 sl_sched_quantile(s, q, 5000000000ull)) < 1e-6);
}

static void test_quantile_delta(void **state)
{
	uint64_t a[8] = {0, 0, 4, 0, 0, 0, 0, 0}, b[8] = {0, 0, 1, 0, 0, 0, 0, 0}, d[8];
	(void)state;
	assert_true(sl_l2h_quantile(a, 8, 0.5, 0) == 2000 + 2000 * 2 / 4.0);
	assert_true(sl_l2h_quantile(a, 8, 0, 0) == 0);
	assert_true(sl_l2h_quantile(b, 8, 1.5, 0) == 0);
	assert_int_equal(sl_l2h_delta(a, b, d, 8), 0);
	assert_int_equal(d[2], 3);
	assert_int_equal(sl_l2h_delta(b, a, d, 8), 1);
	assert_int_equal(d[2], 1);
	sl_l2h_add(d, a, 8);
	assert_int_equal(d[2], 5);
	assert_int_equal(sl_l2h_count(d, 8), 5);
	uint64_t z[8] = {0};
	assert_true(sl_l2h_quantile(z, 8, 0.5, 0) == 0);
}

static int freed;
struct tsnap {
	struct sl_snap h;
	int v;
};
static void tfree(struct sl_snap *s)
{
	freed++;
	free(s);
}

static void test_snapref(void **state)
{
	struct sl_snapref r;
	struct tsnap *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	(void)state;
	sl_snapref_init(&r);
	assert_null(sl_snapref_get(&r));
	sl_snap_init(&a->h, tfree);
	a->v = 1;
	sl_snapref_publish(&r, &a->h);
	struct tsnap *got = (struct tsnap *)sl_snapref_get(&r);
	assert_ptr_equal(got, a);
	sl_snap_init(&b->h, tfree);
	b->v = 2;
	sl_snapref_publish(&r, &b->h);
	assert_int_equal(freed, 0); /* a reader still holds a */
	assert_int_equal(got->v, 1);
	sl_snap_put(&got->h);
	assert_int_equal(freed, 1);
	sl_snap_put(NULL);
	sl_snapref_destroy(&r);
	assert_int_equal(freed, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_bpf_half),
		cmocka_unit_test(test_same_as_sched_mem),
		cmocka_unit_test(test_quantile_delta),
		cmocka_unit_test(test_snapref),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
