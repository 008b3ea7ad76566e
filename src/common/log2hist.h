/* Log2 duration histograms with a 1 us base: the layout every sandlens
 * latency histogram shares (sched's runqueue waits, mem's reclaim runs, io's
 * queue/device stages, net's softirq latency, stall's IRQ durations), so a
 * module only picks its slot count. Pure functions, unit-tested in
 * tests/unit/test_log2hist.c; the BPF half is bpf/log2hist.bpf.h
 * (sl_l2h_slot_bpf), which must compute the same slot.
 *
 * Layout for nslots slots (nslots >= 2, finite = nslots - 1):
 *   slot 0        : d <= 1 us
 *   slot k, 1..finite-1 : 2^(k-1) us < d <= 2^k us
 *   slot finite   : d > 2^(finite-1) us (+Inf)
 * Upper bounds are inclusive, so slot k's bound is Prometheus' `le`
 * (2^k * 1e-6 seconds), the same rule as libbpf-tools' biolatency/runqlat
 * log2 slots shifted to be upper-inclusive. */
#ifndef SANDLENS_COMMON_LOG2HIST_H
#define SANDLENS_COMMON_LOG2HIST_H

#include <stddef.h>
#include <stdint.h>

/* Slot of a duration of ns nanoseconds in a histogram of nslots slots.
 * Returns 0..nslots-1 (nslots < 2 returns 0). */
unsigned sl_l2h_slot(uint64_t ns, unsigned nslots);

/* Inclusive upper bound of slot k in ns: 1000 << k for k < nslots - 1,
 * UINT64_MAX for the last (open) slot or k out of range. */
uint64_t sl_l2h_upper_ns(unsigned k, unsigned nslots);

/* Exclusive lower bound of slot k in ns: 0 for slot 0, else 1000 << (k-1)
 * (k clamped to nslots - 1). */
uint64_t sl_l2h_lower_ns(unsigned k, unsigned nslots);

/* Prometheus `le` bounds in seconds of the finite slots: le[k] = 2^k * 1e-6
 * for k < nslots - 1 (exact in a double). Fills nslots - 1 entries; the
 * writer (sl_prom_histogram) adds +Inf. */
void sl_l2h_le_seconds(double *le, unsigned nslots);

/* Total count. */
uint64_t sl_l2h_count(const uint64_t *slots, unsigned nslots);

/* Quantile q (0 < q <= 1) in ns, by linear interpolation inside the slot
 * that holds rank ceil(q * count) (Prometheus' histogram_quantile rule):
 * lower + (upper - lower) * (rank - below) / in_slot; the open last slot
 * is interpolated up to max_ns; the result is clamped to max_ns when
 * max_ns > 0. Returns 0 for an empty histogram or q outside (0, 1]. */
double sl_l2h_quantile(const uint64_t *slots, unsigned nslots, double q, uint64_t max_ns);

/* dst = cur - last, slot by slot. When any slot of cur is below last (the
 * kernel entry was recreated: a counter reset), dst = cur and returns 1;
 * else returns 0. dst may alias cur. */
int sl_l2h_delta(const uint64_t *cur, const uint64_t *last, uint64_t *dst, unsigned nslots);

/* acc[k] += add[k] for every slot. */
void sl_l2h_add(uint64_t *acc, const uint64_t *add, unsigned nslots);

#endif
