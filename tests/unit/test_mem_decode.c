/* mem module pure parts: mem_stall record decoding (src/modules/mem_decode.c)
 * and the histogram math (src/modules/mem_hist.c) against the kernel half's
 * slot rule (bpf/mem.bpf.c dur_slot, include/sandlens/mem.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "modules/mem_decode.h"
#include "modules/mem_hist.h"

static struct sl_mem_stall_event sample(void)
{
	struct sl_mem_stall_event e;
	memset(&e, 0, sizeof(e));
	e.hdr.type = SL_EV_MEM_STALL;
	e.hdr.cpu = 1;
	e.task.pid = 300;
	e.task.tid = 301;
	memcpy(e.task.comm, "hog", 3);
	e.duration_ns = 75000000;
	e.nr_scanned = 4096;
	e.nr_reclaimed = 1024;
	e.memcg_id = 4242;
	e.memcg_v1 = 1;
	e.memcg_src = SL_MEM_MEMCG_AT_MAX;
	e.kind = SL_MEM_STALL_MEMCG_RECLAIM;
	e.truncated_count = 7;
	e.gfp_flags = 0x140cca;
	e.order = 0;
	e.status = -1;
	return e;
}

static void test_stall_memcg(void **state)
{
	(void)state;
	struct sl_mem_stall_event e = sample();
	json_t *o = sl_mem_stall_fields(&e, sizeof(e)), *mc;

	assert_non_null(o);
	assert_int_equal(json_integer_value(json_object_get(o, "tid")), 301);
	assert_string_equal(json_string_value(json_object_get(o, "kind")), "memcg_reclaim");
	assert_int_equal(json_integer_value(json_object_get(o, "duration_ns")), 75000000);
	assert_int_equal(json_integer_value(json_object_get(o, "nr_scanned")), 4096);
	assert_int_equal(json_integer_value(json_object_get(o, "nr_reclaimed")), 1024);
	assert_int_equal(json_integer_value(json_object_get(o, "truncated_count")), 7);
	assert_int_equal(json_integer_value(json_object_get(o, "gfp_flags")), 0x140cca);
	assert_int_equal(json_integer_value(json_object_get(o, "order")), 0);
	mc = json_object_get(o, "memcg");
	assert_non_null(mc);
	assert_int_equal(json_integer_value(json_object_get(mc, "cgroup_id")), 4242);
	assert_string_equal(json_string_value(json_object_get(mc, "hierarchy")), "v1");
	assert_string_equal(json_string_value(json_object_get(mc, "source")), "at_max");
	assert_null(json_object_get(o, "compaction_status")); /* only for compaction */
	json_decref(o);
}

static void test_stall_compaction(void **state)
{
	(void)state;
	struct sl_mem_stall_event e = sample();
	e.kind = SL_MEM_STALL_COMPACTION;
	e.memcg_v1 = 0;
	e.memcg_src = 0;
	e.status = 8;
	e.order = 9;
	json_t *o = sl_mem_stall_fields(&e, sizeof(e));
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "kind")), "compaction");
	assert_string_equal(json_string_value(json_object_get(o, "compaction_status")), "success");
	assert_int_equal(json_integer_value(json_object_get(o, "compaction_status_code")), 8);
	assert_int_equal(json_integer_value(json_object_get(o, "order")), 9);
	json_t *mc = json_object_get(o, "memcg");
	assert_string_equal(json_string_value(json_object_get(mc, "hierarchy")), "v2");
	assert_string_equal(json_string_value(json_object_get(mc, "source")), "task");
	json_decref(o);
}

static void test_stall_bad(void **state)
{
	(void)state;
	struct sl_mem_stall_event e = sample();
	assert_null(sl_mem_stall_fields(&e, sizeof(e) - 1)); /* short */
	assert_null(sl_mem_stall_fields(NULL, sizeof(e)));
	e.hdr.type = 16; /* another module's record type */
	assert_null(sl_mem_stall_fields(&e, sizeof(e)));
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(sl_mem_stall_kind_name(SL_MEM_STALL_DIRECT_RECLAIM), "direct_reclaim");
	assert_string_equal(sl_mem_stall_kind_name(9), "unknown");
	assert_string_equal(sl_mem_memcg_src_name(SL_MEM_MEMCG_OVER_HIGH), "over_high");
	assert_string_equal(sl_mem_memcg_src_name(SL_MEM_MEMCG_GUESS), "guess");
	assert_string_equal(sl_mem_memcg_src_name(77), "unknown");
	assert_string_equal(sl_mem_compact_status_name(0), "not_suitable_zone");
	assert_string_equal(sl_mem_compact_status_name(-1), "unknown");
	assert_string_equal(sl_mem_compact_status_name(9), "unknown");
	assert_string_equal(sl_mem_hist_kind_name(SL_MEM_H_THROTTLE), "throttle");
	assert_string_equal(sl_mem_hist_kind_name(SL_MEM_H_KINDS), "unknown");
}

/* The kernel's rule, written independently: smallest k with d <= 2^k us. */
static unsigned ref_slot(uint64_t ns)
{
	for (unsigned k = 0; k < SL_MEM_FINITE_SLOTS; k++)
		if (ns <= (1000ULL << k))
			return k;
	return SL_MEM_SLOTS - 1;
}

static void test_slots(void **state)
{
	(void)state;
	assert_int_equal(sl_mem_slot(0), 0);
	assert_int_equal(sl_mem_slot(1000), 0);
	assert_int_equal(sl_mem_slot(1001), 1);
	assert_int_equal(sl_mem_slot(2000), 1);
	assert_int_equal(sl_mem_slot(2001), 2);
	assert_int_equal(sl_mem_slot(50000000), 16); /* 50 ms: (32.768, 65.536] ms */
	assert_int_equal(sl_mem_slot(1000ULL << 24), 24);
	assert_int_equal(sl_mem_slot((1000ULL << 24) + 1), 25);
	assert_int_equal(sl_mem_slot(UINT64_MAX), 25);
	for (uint64_t ns = 1; ns < (1ULL << 36); ns = ns * 3 + 7)
		assert_int_equal(sl_mem_slot(ns), ref_slot(ns));
	for (unsigned k = 0; k < SL_MEM_FINITE_SLOTS; k++) {
		assert_int_equal(sl_mem_slot(sl_mem_slot_upper_ns(k)), k);      /* inclusive upper */
		assert_int_equal(sl_mem_slot(sl_mem_slot_upper_ns(k) + 1), k + 1);
		assert_true(fabs(sl_mem_slot_le_seconds(k) - (double)sl_mem_slot_upper_ns(k) / 1e9) < 1e-15);
	}
	assert_true(isinf(sl_mem_slot_le_seconds(SL_MEM_FINITE_SLOTS)));
}

static void test_quantile(void **state)
{
	(void)state;
	uint64_t s[SL_MEM_SLOTS] = {0};
	assert_true(sl_mem_quantile(s, 0.99, 0) == 0);
	/* 100 runs in slot 10 ((512, 1024] us): p50 = 512 + 512 * 50/100 us */
	s[10] = 100;
	assert_true(fabs(sl_mem_quantile(s, 0.5, 0) - 768000.0) < 1e-6);
	assert_true(fabs(sl_mem_quantile(s, 1.0, 0) - 1024000.0) < 1e-6);
	assert_true(fabs(sl_mem_quantile(s, 1.0, 900000) - 900000.0) < 1e-6); /* clamped to max */
	/* rank ceil(0.99 * 101) = 100 -> still slot 10; the 101st is in slot 20 */
	s[20] = 1;
	assert_true(sl_mem_quantile(s, 0.99, 0) <= 1024000.0);
	assert_true(sl_mem_quantile(s, 1.0, 0) > 524288000.0);
	/* open last slot interpolates to the max */
	memset(s, 0, sizeof(s));
	s[SL_MEM_SLOTS - 1] = 2;
	assert_true(fabs(sl_mem_quantile(s, 1.0, 30000000000ULL) - 30000000000.0) < 1);
	assert_true(sl_mem_quantile(s, 0, 1) == 0);
	assert_true(sl_mem_quantile(s, 1.5, 1) == 0);
	/* slot 0 (<= 1 us, lower bound 0) is not interpolated: throttle
	 * delays are whole jiffies or 0, and a quantile inside slot 0 is 0,
	 * not a made-up fraction of a microsecond (was 5.8e-07 s) */
	memset(s, 0, sizeof(s));
	s[0] = 100;
	assert_true(sl_mem_quantile(s, 0.5, 0) == 0);
	assert_true(sl_mem_quantile(s, 0.99, 0) == 0);
	assert_true(sl_mem_quantile(s, 0.99, 1000) == 0);
	s[0] = 58;
	s[12] = 42; /* 4 ms jiffies: (2048, 4096] us */
	assert_true(sl_mem_quantile(s, 0.5, 4000000) == 0);
	assert_true(sl_mem_quantile(s, 0.58, 4000000) == 0);
	assert_true(sl_mem_quantile(s, 0.59, 4000000) > 2048000.0);
	assert_true(fabs(sl_mem_quantile(s, 0.99, 4000000) - 4000000.0) < 1e-6); /* clamped to max */
}

static void test_fold_delta(void **state)
{
	(void)state;
	struct sl_mem_hist pc[3], sum, last, d;
	memset(pc, 0, sizeof(pc));
	pc[0].slots[3] = 2; pc[0].sum_ns = 10000; pc[0].max_ns = 6000; pc[0].nr_scanned = 32;
	pc[2].slots[3] = 1; pc[2].slots[7] = 4; pc[2].sum_ns = 500000; pc[2].max_ns = 120000; pc[2].nr_reclaimed = 9;
	sl_mem_fold_cpus(pc, 3, &sum);
	assert_int_equal(sum.slots[3], 3);
	assert_int_equal(sum.slots[7], 4);
	assert_int_equal(sum.sum_ns, 510000);
	assert_int_equal(sum.max_ns, 120000);
	assert_int_equal(sum.nr_scanned, 32);
	assert_int_equal(sum.nr_reclaimed, 9);

	last = sum;
	sum.slots[7] += 5;
	sum.sum_ns += 700000;
	sum.nr_scanned += 100;
	assert_int_equal(sl_mem_delta(&sum, &last, &d), 0);
	assert_int_equal(d.slots[7], 5);
	assert_int_equal(d.slots[3], 0);
	assert_int_equal(d.sum_ns, 700000);
	assert_int_equal(d.nr_scanned, 100);
	/* a recreated entry (counts went down): the delta is the new entry */
	memset(&sum, 0, sizeof(sum));
	sum.slots[1] = 1;
	sum.sum_ns = 1500;
	assert_int_equal(sl_mem_delta(&sum, &last, &d), 1);
	assert_int_equal(d.slots[1], 1);
	assert_int_equal(d.slots[7], 0);
	assert_int_equal(d.sum_ns, 1500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stall_memcg),
		cmocka_unit_test(test_stall_compaction),
		cmocka_unit_test(test_stall_bad),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_slots),
		cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_fold_delta),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
