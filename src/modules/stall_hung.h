/* stall module: blocking episodes of tasks in uninterruptible sleep, as
 * the per-tick scan sees them (pure bookkeeping, no I/O;
 * tests/unit/test_stall_hung.c). An episode is one stretch of scans that
 * find the task in D state with the same context-switch count
 * (nvcsw + nivcsw, the test of kernel/hung_task.c check_hung_task()): the
 * task has not run in between. It starts at the first such scan and ends
 * at a scan that does not find the task in D state or finds it with another
 * count. Resolution: one scan interval (the agent's tick), so the blocked
 * time is a lower bound, short by at most one interval. */
#ifndef SANDLENS_MODULES_STALL_HUNG_H
#define SANDLENS_MODULES_STALL_HUNG_H

#include <stdint.h>
#include <uthash.h>

struct sl_hung_task {
	uint32_t tid;       /* hash key */
	uint64_t switches;  /* context switches when the episode started */
	uint64_t since_ns;  /* CLOCK_MONOTONIC ns of the first scan of the episode */
	uint64_t seen_gen;  /* scan generation that last saw it */
	int reported;       /* the episode's hung_task event was emitted */
	UT_hash_handle hh;
};

struct sl_hung {
	struct sl_hung_task *tasks;
	uint64_t gen;
	unsigned n;
};

/* Start a scan. */
void sl_hung_begin(struct sl_hung *h);

/* One task the scan found in D state at now_ns. Returns 1 when the episode
 * has just reached threshold_ns (report it now: once per episode), 0 when
 * not (yet or again), -ENOMEM. *blocked_ns = now - start of the episode;
 * *over = 1 while the episode is at or above the threshold. */
int sl_hung_observe(struct sl_hung *h, uint32_t tid, uint64_t switches, uint64_t now_ns, uint64_t threshold_ns,
		    uint64_t *blocked_ns, int *over);

/* End a scan: forget every task the scan did not see (their episodes
 * ended). Returns how many were forgotten. */
unsigned sl_hung_end(struct sl_hung *h);

/* Free everything. */
void sl_hung_free(struct sl_hung *h);

#endif
