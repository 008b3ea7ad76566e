/* Map ABI of continuous profiling (PROF-5, docs/PROFILING.md "Continuous
 * profiling"): bpf/cprof.bpf.c and src/cprof/. Always-on low-rate on-CPU
 * sampling of every task, aggregated in the kernel per (cgroup pair, tgid,
 * user stack id, kernel stack id) into one of two buffers; user space reads
 * and clears the inactive buffer once per window. Nothing is streamed per
 * sample.
 */
#ifndef SANDLENS_CPROF_H
#define SANDLENS_CPROF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define SL_CPROF_COMM_LEN 16

/* Slots of cprof_execs (BPF_MAP_TYPE_ARRAY of struct sl_prof_exec_val):
 * process tgid's last exec is in slot tgid & (SL_CPROF_EXEC_SLOTS - 1),
 * valid when the slot's tgid is tgid. A power of two. */
#define SL_CPROF_EXEC_SLOTS 4096

/* Key of cprof_counts0/1 (BPF_MAP_TYPE_HASH). Stack ids index the stack
 * map of the same buffer (cprof_stacks0/1); a negative id is the -errno of
 * bpf_get_stackid() (-EFAULT: no such part, e.g. no user stack of a kernel
 * thread; -EEXIST: a hash collision in a full stack map; -ENOMEM: full). */
struct sl_cprof_key {
	__u64 cgroup_id;    /* v2 (default hierarchy) cgroup of the task */
	__u64 cgroup_v1_id; /* the task's cgroup in the attribution.v1_controller hierarchy, 0 none */
	__u32 tgid;
	__s32 user_stack_id;
	__s32 kernel_stack_id;
	__u32 pad;
};

/* Value: samples of the key and the comm of the task that created it. */
struct sl_cprof_val {
	__u64 count;
	char comm[SL_CPROF_COMM_LEN];
};

/* Value of cprof_pids (BPF_MAP_TYPE_HASH, tgid -> first sample's cgroups):
 * processes sampled since user space last drained the map; user space
 * snapshots their mappings for the symbolizer while they are alive and
 * resolves their cgroups while the cgroups exist. */
struct sl_cprof_pid {
	__u64 cgroup_id;
	__u64 cgroup_v1_id;
};

/* Per-CPU counters of cprof_stats (BPF_MAP_TYPE_PERCPU_ARRAY). */
enum sl_cprof_stat {
	SL_CPST_EVENTS = 0,     /* perf samples taken (idle included) */
	SL_CPST_SAMPLES,        /* samples of a task (not idle), counted in a buffer */
	SL_CPST_USTACK_LOST,    /* user stack id < 0 other than -EFAULT */
	SL_CPST_KSTACK_LOST,    /* kernel stack id < 0 other than -EFAULT */
	SL_CPST_COUNTS_FULL,    /* counts map full: sample lost */
	SL_CPST_PIDS_FULL,      /* cprof_pids full: a new process not announced */
	SL_CPST_MAX,
};

#endif
