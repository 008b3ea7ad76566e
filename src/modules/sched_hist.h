/* Runqueue-latency histogram math (pure functions, unit-tested in
 * tests/unit/test_sched_hist.c). The slot layout is the kernel's
 * (include/sandlens/sched.h, SL_SCHED_SLOTS): slot 0 = wait <= 1 us,
 * slot k in 1..20 = (2^(k-1) us, 2^k us], slot 21 = > 2^20 us (1.048576 s).
 * Upper bounds are inclusive, so slot k's bound is Prometheus' `le`. */
#ifndef SANDLENS_MODULES_SCHED_HIST_H
#define SANDLENS_MODULES_SCHED_HIST_H

#include <stddef.h>
#include <stdint.h>
#include "sandlens/sched.h"

/* Slot of a wait of ns nanoseconds; the same arithmetic as bpf/sched.bpf.c
 * wait_slot(). Returns 0..SL_SCHED_SLOTS-1. */
unsigned sl_sched_slot(uint64_t ns);

/* Inclusive upper bound of slot k in ns: 1000 << k for k < 21;
 * UINT64_MAX for the last slot (+Inf). */
uint64_t sl_sched_slot_upper_ns(unsigned k);

/* Exclusive lower bound of slot k in ns: 0 for slot 0, else 1000 << (k-1). */
uint64_t sl_sched_slot_lower_ns(unsigned k);

/* Prometheus `le` label of slot k: "1e-06", "2e-06", ..., "1.048576",
 * "+Inf" for the last slot. Writes at most len bytes. */
void sl_sched_le_label(unsigned k, char *buf, size_t len);

/* Cumulative counts: cum[k] = slots[0] + ... + slots[k] (cum[21] = count). */
void sl_sched_cumulative(const uint64_t slots[SL_SCHED_SLOTS], uint64_t cum[SL_SCHED_SLOTS]);

/* Total count of a histogram. */
uint64_t sl_sched_count(const uint64_t slots[SL_SCHED_SLOTS]);

/* Quantile q (0 < q <= 1) of the waits in slots, in ns, by linear
 * interpolation inside the slot that holds the rank ceil(q * count) (the
 * rule of Prometheus' histogram_quantile): lower + (upper - lower) *
 * (rank - below) / in_slot. The open last slot is interpolated up to
 * max_ns. When max_ns > 0 (the exact largest wait is known) the result is
 * clamped to max_ns. Returns 0 for an empty histogram or q outside (0, 1]. */
double sl_sched_quantile(const uint64_t slots[SL_SCHED_SLOTS], double q, uint64_t max_ns);

/* dst[k] = a[k] - b[k] for a cumulative histogram a read after b; a slot that
 * went down (the kernel entry was recreated) yields a[k] (counts since the
 * recreation). Returns 1 when any slot went down, else 0. */
int sl_sched_delta(const uint64_t a[SL_SCHED_SLOTS], const uint64_t b[SL_SCHED_SLOTS],
		   uint64_t dst[SL_SCHED_SLOTS]);

/* Fold ncpus per-CPU values of map sched_hist into one (sums; max_ns of
 * epoch `epoch` = the max over CPUs whose max_epoch tag equals it, 0 if
 * none). */
void sl_sched_fold_cpus(const struct sl_sched_hist *percpu, int ncpus, uint64_t epoch,
			struct sl_sched_hist *sum, uint64_t *epoch_max_ns);

#endif
