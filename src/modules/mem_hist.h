/* mem module histogram math (pure functions, unit-tested in
 * tests/unit/test_mem_decode.c). Slot layout: include/sandlens/mem.h
 * (SL_MEM_SLOTS): slot 0 = d <= 1 us, slot k in 1..24 = (2^(k-1) us, 2^k us],
 * slot 25 = d > 2^24 us (16.777216 s). Upper bounds are inclusive, so slot
 * k's bound is Prometheus' `le`. */
#ifndef SANDLENS_MODULES_MEM_HIST_H
#define SANDLENS_MODULES_MEM_HIST_H

#include <stddef.h>
#include <stdint.h>
#include "sandlens/mem.h"

/* Slot of a run of ns nanoseconds: the arithmetic of bpf/mem.bpf.c
 * dur_slot(). Returns 0..SL_MEM_SLOTS-1. */
unsigned sl_mem_slot(uint64_t ns);

/* Inclusive upper bound of slot k in seconds (1e-6 * 2^k) for k <
 * SL_MEM_FINITE_SLOTS: the `le` values handed to sl_prom_histogram. */
double sl_mem_slot_le_seconds(unsigned k);

/* Exclusive lower / inclusive upper bound of slot k in ns (upper of the
 * last slot: UINT64_MAX). */
uint64_t sl_mem_slot_lower_ns(unsigned k);
uint64_t sl_mem_slot_upper_ns(unsigned k);

/* Runs in a histogram. */
uint64_t sl_mem_count(const uint64_t slots[SL_MEM_SLOTS]);

/* Quantile q (0 < q <= 1) in ns by linear interpolation inside the slot
 * holding rank ceil(q * count) (Prometheus' histogram_quantile rule); the
 * open last slot interpolates up to max_ns; the result is clamped to max_ns
 * when max_ns > 0. 0 when the rank falls in slot 0 (<= 1 us: not
 * interpolated, docs/MEM.md), for an empty histogram or q outside (0, 1]. */
double sl_mem_quantile(const uint64_t slots[SL_MEM_SLOTS], double q, uint64_t max_ns);

/* Sum ncpus per-CPU values of map mem_hist into *sum (max_ns = the largest
 * over CPUs). */
void sl_mem_fold_cpus(const struct sl_mem_hist *percpu, int ncpus, struct sl_mem_hist *sum);

/* dst = cur - last for a cumulative value read after last. When any slot
 * (or a total) went down, the kernel entry was recreated: dst = cur (runs
 * since the recreation). Returns 1 on such a reset, else 0. dst->max_ns =
 * cur->max_ns. */
int sl_mem_delta(const struct sl_mem_hist *cur, const struct sl_mem_hist *last, struct sl_mem_hist *dst);

#endif
