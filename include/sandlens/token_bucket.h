/* Event flood control (PROC-5): the token buckets of the proc module (exec
 * per (ppid, comm); exit and signal per (cgroup, comm)) and of sched_delay,
 * shared verbatim by the BPF programs and the unit tests
 * (tests/unit/test_token_bucket.c).
 *
 * State is struct sl_exec_bucket (include/sandlens/common.h): tokens in units of 1e-9 token,
 * the last refill time (CLOCK_MONOTONIC ns) and `pending`, the events of the
 * key suppressed since the last delivered one. Refill: rate tokens per second,
 * capped at burst tokens; an idle gap counts at most 10 s (keeps the product
 * elapsed * rate below 2^63 for rate <= 1e6). `pending` is updated with
 * atomic add / exchange so concurrent CPUs never lose a count; the token
 * arithmetic uses compare-and-swap (see sl_bucket_take).
 */
#ifndef SANDLENS_TOKEN_BUCKET_H
#define SANDLENS_TOKEN_BUCKET_H

#define SL_NSEC_PER_SEC 1000000000ULL
#define SL_BUCKET_MAX_GAP_NS (10ULL * SL_NSEC_PER_SEC)
/* Largest runtime rate shift (sl_bucket_scale): rates divided by up to 256. */
#define SL_RATE_SHIFT_MAX 8

/* A configured rate or burst v under the runtime rate shift (degradation
 * step "raise the event drop rate", bpf/proc.bpf.c rate_shift): v >> shift,
 * but at least 1 when v != 0 (a limit never turns into "no events at all";
 * v == 0, "no limit", stays 0). shift is clamped to SL_RATE_SHIFT_MAX. */
static inline __u64 sl_bucket_scale(__u64 v, __u32 shift)
{
	__u64 r;

	if (shift > SL_RATE_SHIFT_MAX)
		shift = SL_RATE_SHIFT_MAX;
	r = v >> shift;
	return r || !v ? r : 1;
}

/* A fresh bucket: full. */
static inline void sl_bucket_init(struct sl_exec_bucket *b, __u64 now, __u64 burst)
{
	b->tokens_nano = burst * SL_NSEC_PER_SEC;
	b->last_ns = now;
	b->pending = 0;
	b->pending_rb = 0;
	b->pending_abn = 0;
}

/* Take one token at time now. Returns 1 = deliver, with *carried = the
 * pending count moved out (to be reported as truncated_count); 0 = suppress
 * (pending incremented).
 *
 * Concurrent CPUs: the refill interval is claimed by advancing last_ns with
 * compare-and-swap (so two CPUs never both add the same elapsed time), and
 * the token count is updated with compare-and-swap (so two CPUs never both
 * spend the same token): deliveries never exceed burst + rate * time. After
 * SL_BUCKET_CAS_TRIES failed swaps (heavy contention) the update is a plain
 * store, which may let one extra event through but never loses a count. */
#define SL_BUCKET_CAS_TRIES 4
static inline int sl_bucket_take(struct sl_exec_bucket *b, __u64 now, __u64 rate, __u64 burst,
				 __u64 *carried)
{
	__u64 cap = burst * SL_NSEC_PER_SEC, add = 0, tok, t, nt = 0;
	int ok = 0, done = 0;

	for (int i = 0; i < SL_BUCKET_CAS_TRIES; i++) {
		__u64 last = b->last_ns, elapsed;
		if (now <= last)
			break;
		elapsed = now - last;
		if (elapsed > SL_BUCKET_MAX_GAP_NS)
			elapsed = SL_BUCKET_MAX_GAP_NS;
		if (__sync_val_compare_and_swap(&b->last_ns, last, now) == last) {
			add = elapsed * rate;
			break;
		}
	}
	for (int i = 0; i < SL_BUCKET_CAS_TRIES && !done; i++) {
		tok = b->tokens_nano;
		t = tok + add;
		if (t > cap)
			t = cap;
		ok = t >= SL_NSEC_PER_SEC;
		nt = ok ? t - SL_NSEC_PER_SEC : t;
		done = __sync_val_compare_and_swap(&b->tokens_nano, tok, nt) == tok;
	}
	if (!done)
		b->tokens_nano = nt;
	if (!ok) {
		__sync_fetch_and_add(&b->pending, 1);
		return 0;
	}
	*carried = __sync_lock_test_and_set(&b->pending, 0);
	return 1;
}

/* Move a sub-count of pending (pending_rb, pending_abn) out on delivery;
 * returns what it held. */
static inline __u64 sl_bucket_take_sub(__u64 *sub)
{
	return __sync_lock_test_and_set(sub, 0);
}

/* A delivery could not be completed (ring buffer full): put this event and
 * what it carried back into pending, for the next delivery to report. */
static inline void sl_bucket_undeliver(struct sl_exec_bucket *b, __u64 carried)
{
	__sync_fetch_and_add(&b->pending, carried + 1);
}

/* As sl_bucket_undeliver, and remember that this event (and carried_rb of
 * the ones it carried) were lost to the ring buffer, not to the rate: an
 * idle bucket's pending is then counted under the right drop reason. */
static inline void sl_bucket_undeliver_rb(struct sl_exec_bucket *b, __u64 carried, __u64 carried_rb)
{
	__sync_fetch_and_add(&b->pending_rb, carried_rb + 1);
	__sync_fetch_and_add(&b->pending, carried + 1);
}

/* Of the pending count of a removed bucket, how many were lost to the ring
 * buffer (at most pending); the rest were rate limited. */
static inline __u64 sl_bucket_pending_rb(const struct sl_exec_bucket *b)
{
	return b->pending_rb < b->pending ? b->pending_rb : b->pending;
}

#endif
