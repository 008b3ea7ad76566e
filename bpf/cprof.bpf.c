// SPDX-License-Identifier: GPL-2.0
/* Continuous profiling (PROF-5, docs/PROFILING.md "Continuous profiling").
 *
 *   perf_event   cprof_sample: one software cpu-clock (or hardware cycles)
 *                event per online CPU in frequency mode at
 *                profiling.continuous.hz; the interrupted task's kernel
 *                and user stacks
 *   tp_btf/sched_process_exec  cprof_exec: the exec'd file of each process
 *                (path, parent) in `cprof_execs` by tgid (a direct-mapped
 *                array of the last SL_CPROF_EXEC_SLOTS execs): user space
 *                looks up the processes it sampled but could not snapshot
 *                (gone before the 1 s poll) and indexes that file's
 *                build-id through the parent's root, so a process that ran
 *                for a few ms between two polls is still symbolized
 *
 * Aggregation in the kernel only, into one of two buffers: buffer i is
 * cprof_stacks<i> (kernel stacks) + cprof_ustacks<i> (user stacks,
 * build-id frames) + cprof_counts<i> (count per cgroup pair, tgid, user
 * stack id, kernel stack id). `active` (.bss, written by user
 * space through the skeleton's mmap'd bss) selects the buffer a sample goes
 * to. At the end of a window user space flips `active`, waits for an RCU
 * grace period (a perf_event program runs inside rcu_read_lock(),
 * kernel/events/core.c bpf_overflow_handler(); membarrier(2)
 * MEMBARRIER_CMD_GLOBAL returns after synchronize_rcu()), then reads and
 * clears the other buffer: a sample is counted in exactly one window.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "sandlens/cprof.h"
#include "sandlens/task_abi.h"

char LICENSE[] SEC("license") = "GPL";

#define EFAULT 14

/* Buffer samples go to: 0 or 1 (user space flips it once per window). */
volatile __u32 active = 0;

#define STACK_MAP(n)                                                 \
	struct {                                                     \
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);              \
		__uint(max_entries, 4096); /* stack_entries */       \
		__uint(key_size, sizeof(__u32));                     \
		__uint(value_size, 127 * sizeof(__u64));             \
	} n SEC(".maps")
#define COUNT_MAP(n)                                                 \
	struct {                                                     \
		__uint(type, BPF_MAP_TYPE_HASH);                     \
		__uint(max_entries, 8192); /* count_entries */       \
		__type(key, struct sl_cprof_key);                    \
		__type(value, struct sl_cprof_val);                  \
	} n SEC(".maps")

/* User stacks as (build-id, file offset) frames (BPF_F_STACK_BUILD_ID,
 * kernel/bpf/stackmap.c: a frame whose build-id cannot be read keeps its
 * ip, status BPF_STACK_BUILD_ID_IP): a process gone before user space read
 * its mappings is still symbolized by build-id. 4 KiB an entry; user space
 * sizes them at a quarter of the kernel stack maps. */
#define USTACK_MAP(n)                                                \
	struct {                                                     \
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);              \
		__uint(map_flags, BPF_F_STACK_BUILD_ID);             \
		__uint(max_entries, 1024);                           \
		__uint(key_size, sizeof(__u32));                     \
		__uint(value_size, 127 * sizeof(struct bpf_stack_build_id)); \
	} n SEC(".maps")

STACK_MAP(cprof_stacks0);
STACK_MAP(cprof_stacks1);
USTACK_MAP(cprof_ustacks0);
USTACK_MAP(cprof_ustacks1);
COUNT_MAP(cprof_counts0);
COUNT_MAP(cprof_counts1);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct sl_cprof_pid);
} cprof_pids SEC(".maps");

/* The file each process exec'd last: slot tgid % SL_CPROF_EXEC_SLOTS of a
 * plain array, a direct-mapped table of the last execs. Pids are handed
 * out in sequence, so it holds about the last SL_CPROF_EXEC_SLOTS execs
 * (user space checks the slot's tgid). An array slot is written in place:
 * no hash, no lock, no LRU eviction (an LRU hash cost ~1.8 us an exec in
 * bench/exec-storm.sh, more than the proc module's exec event). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SL_CPROF_EXEC_SLOTS);
	__type(key, __u32);
	__type(value, struct sl_prof_exec_val);
} cprof_execs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SL_CPST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} cprof_stats SEC(".maps");

static __always_inline void count(void *counts, struct sl_cprof_key *k)
{
	struct sl_cprof_val *v = bpf_map_lookup_elem(counts, k);

	if (!v) {
		struct sl_cprof_val z = {};

		bpf_get_current_comm(z.comm, sizeof(z.comm));
		bpf_map_update_elem(counts, k, &z, BPF_NOEXIST);
		v = bpf_map_lookup_elem(counts, k);
		if (!v) {
			sl_stat_inc(&cprof_stats, SL_CPST_COUNTS_FULL);
			return;
		}
	}
	__sync_fetch_and_add(&v->count, 1);
}

SEC("perf_event")
int cprof_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 pt = bpf_get_current_pid_tgid();
	struct sl_cprof_key k = {};
	struct sl_cprof_pid np;
	__u32 tgid = pt >> 32;

	sl_stat_inc(&cprof_stats, SL_CPST_EVENTS);
	if (!(__u32)pt) /* the idle task */
		return 0;
	sl_task_cgroup_key(t, &k.cgroup_id, &k.cgroup_v1_id);
	k.tgid = tgid;
	if (active & 1) {
		k.user_stack_id = bpf_get_stackid(ctx, &cprof_ustacks1, BPF_F_USER_STACK);
		k.kernel_stack_id = bpf_get_stackid(ctx, &cprof_stacks1, 0);
		count(&cprof_counts1, &k);
	} else {
		k.user_stack_id = bpf_get_stackid(ctx, &cprof_ustacks0, BPF_F_USER_STACK);
		k.kernel_stack_id = bpf_get_stackid(ctx, &cprof_stacks0, 0);
		count(&cprof_counts0, &k);
	}
	sl_stat_inc(&cprof_stats, SL_CPST_SAMPLES);
	if (k.user_stack_id < 0 && k.user_stack_id != -EFAULT)
		sl_stat_inc(&cprof_stats, SL_CPST_USTACK_LOST);
	if (k.kernel_stack_id < 0 && k.kernel_stack_id != -EFAULT)
		sl_stat_inc(&cprof_stats, SL_CPST_KSTACK_LOST);
	/* announce a process user space has not drained yet */
	if (!bpf_map_lookup_elem(&cprof_pids, &tgid)) {
		np.cgroup_id = k.cgroup_id;
		np.cgroup_v1_id = k.cgroup_v1_id;
		if (bpf_map_update_elem(&cprof_pids, &tgid, &np, BPF_NOEXIST) == -7 /* E2BIG */)
			sl_stat_inc(&cprof_stats, SL_CPST_PIDS_FULL);
	}
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(cprof_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct sl_prof_exec_val *v;
	__u32 tgid = p->tgid, idx = tgid & (SL_CPROF_EXEC_SLOTS - 1);

	(void)old_pid;
	v = bpf_map_lookup_elem(&cprof_execs, &idx);
	if (!v)
		return 0;
	/* tgid last: a reader that finds its tgid finds the path written
	 * (the slot's previous owner exec'd SL_CPROF_EXEC_SLOTS pids ago) */
	v->tgid = 0;
	asm volatile("" ::: "memory");
	v->ppid = p->real_parent->tgid;
	/* bprm->interp: the file that runs (the interpreter of a #! script);
	 * the bytes after the string's NUL are stale, user space reads up to
	 * the NUL */
	if (bpf_probe_read_kernel_str(v->path, sizeof(v->path), bprm->interp) < 0)
		v->path[0] = 0;
	asm volatile("" ::: "memory");
	v->tgid = tgid;
	return 0;
}
