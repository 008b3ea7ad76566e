/* Internals of src/cprof (not a public API): the sampler's BPF side
 * (cprof_bpf.c) for the window thread (cprof.c). */
#ifndef SANDLENS_CPROF_INTERNAL_H
#define SANDLENS_CPROF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "cprof/cprof.h"
#include "sandlens/task_abi.h"

struct sl_cprof_bpf;
struct sl_raw_bid;

/* One aggregated stack of a buffer (ips leaf first, valid during the
 * callback only). */
struct sl_cprof_stack {
	uint64_t cgroup_id, cgroup_v1_id;
	uint32_t tgid;
	char comm[16];
	/* user frames: user_bid[i] (build-id, file offset) when its len is
	 * set, else the ip user_ips[i] */
	const struct sl_raw_bid *user_bid;
	const uint64_t *user_ips, *kernel_ips;
	uint32_t n_user, n_kernel;
	int user_lost, kernel_lost; /* bpf_get_stackid failed (not -EFAULT) */
	uint64_t count;
};

struct sl_cprof_newpid {
	uint32_t tgid;
	uint64_t cgroup_id, cgroup_v1_id;
};

/* Open, size (per buffer: stack_entries kernel stacks, a quarter of that,
 * at least 64, user stacks of build-id frames), load and attach to one
 * perf event per online CPU at hz (hardware cycles, else software
 * cpu-clock). NULL + err. */
struct sl_cprof_bpf *sl_cprof_bpf_open(uint32_t hz, uint32_t stack_entries, uint32_t count_entries,
				       int v1_subsys_id, char *err, size_t errlen);
void sl_cprof_bpf_destroy(struct sl_cprof_bpf *b);
/* "cycles" | "cpu-clock". */
const char *sl_cprof_bpf_event(const struct sl_cprof_bpf *b);
int sl_cprof_bpf_prog_fd(const struct sl_cprof_bpf *b);
/* Sum over CPUs of counter idx (enum sl_cprof_stat). */
uint64_t sl_cprof_bpf_stat(const struct sl_cprof_bpf *b, int idx);
/* Switch the programs to the other buffer and wait for an RCU grace
 * period; returns the buffer they wrote until now (now inactive). */
unsigned sl_cprof_bpf_flip(struct sl_cprof_bpf *b);
/* Call fn for every stack of the inactive buffer buf, then clear it.
 * Returns fn's first non-zero return, else 0 (the buffer is cleared either
 * way). */
int sl_cprof_bpf_drain(struct sl_cprof_bpf *b, unsigned buf,
		       int (*fn)(void *ctx, const struct sl_cprof_stack *s), void *ctx);
/* Processes sampled since the last call (and their cgroups), at most max,
 * removed from the map. Returns the count. */
size_t sl_cprof_bpf_new_pids(struct sl_cprof_bpf *b, struct sl_cprof_newpid *out, size_t max);
/* The file process tgid exec'd last (path as given to execve, in its
 * root; its parent), from the exec hook's table of about the last
 * SL_CPROF_EXEC_SLOTS execs (include/sandlens/cprof.h): 0, or -ENOENT (not
 * seen, its slot taken by a later exec, or the hook is not attached). */
int sl_cprof_bpf_exec_of(struct sl_cprof_bpf *b, uint32_t tgid, struct sl_prof_exec_val *out);
/* Why the exec hook is not attached, or NULL when it is. */
const char *sl_cprof_bpf_exec_error(const struct sl_cprof_bpf *b);

#endif
