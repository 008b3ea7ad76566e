/* The exec token bucket (include/sandlens/token_bucket.h), the same code
 * the BPF program runs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <pthread.h>
#include <cmocka.h>

#include "sandlens/proc.h"
#include "sandlens/token_bucket.h"

#define SEC 1000000000ULL

static void burst_then_suppress(void **state)
{
	(void)state;
	struct sl_exec_bucket b;
	__u64 carried = 99;
	sl_bucket_init(&b, 1000, 5);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(sl_bucket_take(&b, 1000, 10, 5, &carried), 1);
		assert_int_equal(carried, 0);
	}
	for (int i = 0; i < 7; i++)
		assert_int_equal(sl_bucket_take(&b, 1000, 10, 5, &carried), 0);
	assert_int_equal(b.pending, 7);
	/* 0.1 s at 10/s = one token: the next event carries the 7 */
	assert_int_equal(sl_bucket_take(&b, 1000 + SEC / 10, 10, 5, &carried), 1);
	assert_int_equal(carried, 7);
	assert_int_equal(b.pending, 0);
}

static void refill_is_capped_at_burst(void **state)
{
	(void)state;
	struct sl_exec_bucket b;
	__u64 carried = 0, t = 0;
	int delivered = 0;
	sl_bucket_init(&b, t, 3);
	for (int i = 0; i < 3; i++)
		sl_bucket_take(&b, t, 100, 3, &carried);
	t += 3600 * SEC; /* an hour idle: still only 3 tokens */
	for (int i = 0; i < 10; i++)
		delivered += sl_bucket_take(&b, t, 100, 3, &carried);
	assert_int_equal(delivered, 3);
	assert_int_equal(b.pending, 7);
}

static void steady_rate(void **state)
{
	(void)state;
	struct sl_exec_bucket b;
	__u64 carried = 0, sum_carried = 0;
	int delivered = 0;
	sl_bucket_init(&b, 0, 1);
	/* 1000 events/s for 10 s against 50/s: ~50/s delivered, all accounted */
	for (int i = 1; i <= 10000; i++) {
		if (sl_bucket_take(&b, (__u64)i * (SEC / 1000), 50, 1, &carried)) {
			delivered++;
			sum_carried += carried;
		}
	}
	assert_true(delivered >= 499 && delivered <= 502);
	assert_int_equal(delivered + sum_carried + b.pending, 10000);
}

static void undeliver_keeps_count(void **state)
{
	(void)state;
	struct sl_exec_bucket b;
	__u64 carried = 0;
	sl_bucket_init(&b, 0, 1);
	sl_bucket_take(&b, 0, 1, 1, &carried);
	sl_bucket_take(&b, 0, 1, 1, &carried); /* suppressed */
	sl_bucket_take(&b, 0, 1, 1, &carried); /* suppressed */
	assert_int_equal(sl_bucket_take(&b, 2 * SEC, 1, 1, &carried), 1);
	assert_int_equal(carried, 2);
	sl_bucket_undeliver(&b, carried); /* ring buffer was full */
	assert_int_equal(b.pending, 3);
	assert_int_equal(sl_bucket_take(&b, 4 * SEC, 1, 1, &carried), 1);
	assert_int_equal(carried, 3);
}

static void rate_zero_never_refills(void **state)
{
	(void)state;
	struct sl_exec_bucket b;
	__u64 carried = 0;
	sl_bucket_init(&b, 0, 2);
	assert_int_equal(sl_bucket_take(&b, 0, 0, 2, &carried), 1);
	assert_int_equal(sl_bucket_take(&b, 0, 0, 2, &carried), 1);
	assert_int_equal(sl_bucket_take(&b, 100 * SEC, 0, 2, &carried), 0);
}

/* Runtime rate scaling (bpf/proc.bpf.c rate_shift): v >> shift, at least 1
 * when v != 0, 0 stays 0 ("no limit"), shift clamped to 8. */
static void scale_arithmetic(void **state)
{
	(void)state;
	assert_int_equal(sl_bucket_scale(50, 0), 50);
	assert_int_equal(sl_bucket_scale(50, 1), 25);
	assert_int_equal(sl_bucket_scale(50, 2), 12);
	assert_int_equal(sl_bucket_scale(100, 3), 12);
	assert_int_equal(sl_bucket_scale(50, 6), 1); /* 50 >> 6 == 0: at least 1 */
	assert_int_equal(sl_bucket_scale(1, 8), 1);
	assert_int_equal(sl_bucket_scale(0, 0), 0);
	assert_int_equal(sl_bucket_scale(0, 5), 0);
	assert_int_equal(sl_bucket_scale(1000000, 8), 3906);
	assert_int_equal(sl_bucket_scale(1000000, 9), 3906); /* clamped to SL_RATE_SHIFT_MAX */
	assert_int_equal(sl_bucket_scale(1000000, 40), 3906);
	assert_int_equal(SL_RATE_SHIFT_MAX, 8);
}

/* A shifted bucket delivers about rate >> shift per second, and a bucket
 * made full at the configured burst is capped at the scaled burst at its
 * next refill; every event stays accounted. */
static void scaled_bucket_delivers_less(void **state)
{
	(void)state;
	struct sl_exec_bucket b;
	__u64 carried = 0, sum = 0;
	int delivered = 0;
	__u64 rate = sl_bucket_scale(50, 2), burst = sl_bucket_scale(100, 2); /* 12/s, 25 */

	sl_bucket_init(&b, 0, 100); /* created before the shift was raised */
	for (int i = 1; i <= 10000; i++) { /* 1000/s for 10 s */
		if (sl_bucket_take(&b, (__u64)i * (SEC / 1000), rate, burst, &carried)) {
			delivered++;
			sum += carried;
		}
	}
	/* at most the scaled burst at the first refill, then 12/s */
	assert_true(delivered >= 120 && delivered <= 25 + 121);
	assert_int_equal(delivered + sum + b.pending, 10000);
}

/* Ring-buffer losses are kept apart in pending_rb so an expired bucket's
 * drops are counted under the right reason. */
static void ringbuf_losses_by_reason(void **state)
{
	(void)state;
	struct sl_exec_bucket b;
	__u64 carried = 0, crb;
	sl_bucket_init(&b, 0, 1);
	assert_int_equal(sl_bucket_take(&b, 0, 1, 1, &carried), 1);
	crb = sl_bucket_take_sub(&b.pending_rb);
	sl_bucket_undeliver_rb(&b, carried, crb); /* ring buffer full */
	sl_bucket_take(&b, 0, 1, 1, &carried);   /* rate limited */
	sl_bucket_take(&b, 0, 1, 1, &carried);   /* rate limited */
	assert_int_equal(b.pending, 3);
	assert_int_equal(sl_bucket_pending_rb(&b), 1);
	/* a delivery carries all three and clears the split */
	assert_int_equal(sl_bucket_take(&b, 2 * SEC, 1, 1, &carried), 1);
	assert_int_equal(carried, 3);
	crb = sl_bucket_take_sub(&b.pending_rb);
	assert_int_equal(crb, 1);
	/* ... which fails again: 4 pending, 2 of them (this one and the carried
	 * ring-buffer loss) to the ring buffer */
	sl_bucket_undeliver_rb(&b, carried, crb);
	assert_int_equal(b.pending, 4);
	assert_int_equal(sl_bucket_pending_rb(&b), 2);
	b.pending_rb = 99; /* never more than pending */
	assert_int_equal(sl_bucket_pending_rb(&b), 4);
}

struct hammer {
	struct sl_exec_bucket *b;
	__u64 delivered, carried;
};

static void *hammer_thread(void *arg)
{
	struct hammer *h = arg;
	__u64 c = 0;
	for (__u64 i = 0; i < 200000; i++) {
		if (sl_bucket_take(h->b, i * 1000, 1000, 10, &c)) {
			h->delivered++;
			h->carried += c;
		}
	}
	return NULL;
}

/* Two threads on one bucket: the token arithmetic may race, the count may not. */
static void concurrent_accounting_is_exact(void **state)
{
	(void)state;
	struct sl_exec_bucket b;
	struct hammer h[2] = {{&b, 0, 0}, {&b, 0, 0}};
	pthread_t t[2];
	sl_bucket_init(&b, 0, 10);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, hammer_thread, &h[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(h[0].delivered + h[1].delivered + h[0].carried + h[1].carried + b.pending, 400000);
	/* one shared bucket over 0.2 s at 1000/s, burst 10: at most 210 (+ the
	 * rare plain store after SL_BUCKET_CAS_TRIES failed swaps) */
	print_message("delivered %llu of 400000 (bound 210)\n", (unsigned long long)(h[0].delivered + h[1].delivered));
	assert_true(h[0].delivered + h[1].delivered <= 215);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(burst_then_suppress),
		cmocka_unit_test(refill_is_capped_at_burst),
		cmocka_unit_test(steady_rate),
		cmocka_unit_test(undeliver_keeps_count),
		cmocka_unit_test(rate_zero_never_refills),
		cmocka_unit_test(concurrent_accounting_is_exact),
		cmocka_unit_test(scale_arithmetic),
		cmocka_unit_test(scaled_bucket_delivers_less),
		cmocka_unit_test(ringbuf_losses_by_reason),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
