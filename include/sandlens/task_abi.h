/* Map ABI of the on-demand task programs (docs/TASKS.md):
 * bpf/profile.bpf.c (on-CPU and off-CPU samplers, PROF-1/PROF-2/SCHED-4)
 * and bpf/syscall_errors.bpf.c (trace_syscall_errors). Shared by the BPF
 * objects and src/task/. Nothing here is streamed: every figure is
 * aggregated in a map that user space reads once, when the task ends.
 */
#ifndef SANDLENS_TASK_ABI_H
#define SANDLENS_TASK_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define SL_TASK_COMM_LEN 16

/* Who a task program counts (rodata `filter_kind`). */
enum sl_task_filter {
	SL_TF_ALL = 0,    /* every task but the idle tasks (not offered by the API) */
	SL_TF_TGID = 1,   /* tgid in map filter_pids (a process = a thread group) */
	SL_TF_TID = 2,    /* tid in map filter_pids (one thread) */
	SL_TF_CGROUP = 3, /* v2 cgroup id in filter_cg2, or v1 id in filter_cg1 */
};

/* Off-CPU state of a counts key (same values as enum sl_off_cpu_state in
 * src/profile/profile.h). */
enum sl_task_offcpu_state {
	SL_TOS_ON_CPU = 0,
	SL_TOS_BLOCKED = 1,  /* switched out not TASK_RUNNING, until its wakeup */
	SL_TOS_RUNQUEUE = 2, /* runnable and not running: preempted, or woken and not yet switched in */
};

/* Key of map `prof_counts` (BPF_MAP_TYPE_HASH). The kernel stack id
 * indexes map `prof_stacks` (BPF_MAP_TYPE_STACK_TRACE, ips), the user stack
 * id map `prof_ustacks` (BPF_F_STACK_BUILD_ID: struct bpf_stack_build_id
 * frames); a negative id is the -errno
 * bpf_get_stackid() returned (-EFAULT: no such part, e.g. the user stack
 * of a kernel thread or the kernel stack of a sample taken in user mode). */
struct sl_prof_key {
	__u32 tgid;
	__u32 state; /* enum sl_task_offcpu_state */
	__s32 user_stack_id;
	__s32 kernel_stack_id;
};

/* Value of `prof_counts`: totals of one key. The identity fields are those
 * of the first task that created the entry. */
struct sl_prof_val {
	__u64 count;    /* on-CPU: samples; off-CPU: off-CPU intervals */
	__u64 value_ns; /* on-CPU: 0 (user space multiplies count by the period); off-CPU: ns */
	__u64 cgroup_id;
	__u64 cgroup_v1_id;
	__u32 tid;
	__u32 pad;
	char comm[SL_TASK_COMM_LEN];
};

/* Key of `prof_execs` (LRU hash, bpf/profile.bpf.c prof_exec): the exec'd
 * file's inode (kernel dev_t encoding: major << 20 | minor). */
struct sl_prof_exec_key {
	__u64 dev;
	__u64 ino;
};

#define SL_PROF_EXEC_PATH 256
/* Value of `prof_execs`: the first exec of that file by a target task. */
struct sl_prof_exec_val {
	__u32 tgid;  /* the process that exec'd it */
	__u32 ppid;  /* its parent (still alive more often than the child) */
	char path[SL_PROF_EXEC_PATH]; /* bprm->interp, as given to execve (in the task's root) */
};

/* Per-CPU counters of `prof_stats` (BPF_MAP_TYPE_PERCPU_ARRAY). */
enum sl_prof_stat {
	SL_PST_EVENTS = 0,     /* perf samples / sched_switch calls seen */
	SL_PST_MATCHED,        /* events of a filtered-in task */
	SL_PST_USTACK_LOST,    /* user stack id < 0 other than -EFAULT */
	SL_PST_KSTACK_LOST,    /* kernel stack id < 0 other than -EFAULT */
	SL_PST_COUNTS_FULL,    /* prof_counts full: sample / interval lost */
	SL_PST_SHORT,          /* off-CPU intervals below min_ns, not counted */
	SL_PST_STORAGE_FAIL,   /* task storage could not be created */
	SL_PST_MAX,
};

/* trace_syscall_errors: key of `sce_counts` (BPF_MAP_TYPE_HASH). */
struct sl_sce_key {
	__u32 nr;    /* syscall number of the running ABI (raw_syscalls:sys_exit id) */
	__u32 err;   /* errno (positive) */
};

struct sl_sce_val {
	__u64 count;
	__u32 tgid;  /* first process seen with this (nr, errno) */
	__u32 pad;
	char comm[SL_TASK_COMM_LEN];
};

enum sl_sce_stat { /* per-CPU counters of `sce_stats` */
	SL_SCE_EXITS = 0,     /* sys_exit calls seen */
	SL_SCE_ERRORS,        /* failed calls of a filtered-in task */
	SL_SCE_FULL,          /* sce_counts full: error lost */
	SL_SCE_MAX,
};

#endif
