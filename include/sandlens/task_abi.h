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
	/* the thread, when the task targets a process or a thread (filter_kind
	 * SL_TF_TGID / SL_TF_TID: its threads are told apart by their comm, e.g.
	 * a VMM's vCPU threads); 0 for container/pod/host targets (per process) */
	__u32 tid;
	__u32 pad;
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

/* ---- Memory and lock profiles (bpf/memprof.bpf.c, bpf/lockprof.bpf.c;
 * docs/TASKS.md "Memory profiles", "Lock profiles"). Key: struct
 * sl_prof_key, whose `state` is the kind's sub-event below. Value: */
struct sl_kprof_val {
	__u64 count;    /* events counted (see the kind: allocations, samples, flushes, waits) */
	__u64 value;    /* bytes (memory kinds) or ns (lock kinds) */
	__u64 extra0;   /* mem_virtual: live mappings; page_faults: faults (samples x period);
			 * resident: bytes released */
	__u64 extra1;   /* mem_virtual: live bytes */
	__u64 cgroup_id;
	__u64 cgroup_v1_id;
	__u32 tid;
	__u32 pad;
	char comm[SL_TASK_COMM_LEN];
};

/* state of a mem_virtual key */
enum sl_memv_state {
	SL_MEMV_MMAP_ANON = 0, /* mmap(MAP_ANONYMOUS) */
	SL_MEMV_MMAP_FILE = 1, /* mmap of a file */
	SL_MEMV_BRK = 2,       /* brk growth */
};

/* state of a page_faults key: the access that faulted (x86 error_code,
 * arch/x86/include/asm/trap_pf.h X86_PF_WRITE / X86_PF_INSTR) */
enum sl_pf_state {
	SL_PF_READ = 0,
	SL_PF_WRITE = 1,
	SL_PF_EXEC = 2,
};

/* state of a resident key = the rss_stat member (enum in
 * include/linux/mm_types_task.h: MM_FILEPAGES 0, MM_ANONPAGES 1,
 * MM_SWAPENTS 2 (not resident: not counted), MM_SHMEMPAGES 3). */

/* state of a lock_kernel key = the contention_begin flags
 * (include/trace/events/lock.h LCB_F_*). */
#define SL_LCB_F_SPIN (1U << 0)
#define SL_LCB_F_READ (1U << 1)
#define SL_LCB_F_WRITE (1U << 2)
#define SL_LCB_F_RT (1U << 3)
#define SL_LCB_F_PERCPU (1U << 4)
#define SL_LCB_F_MUTEX (1U << 5)

/* state of a futex key = op & FUTEX_CMD_MASK (include/uapi/linux/futex.h):
 * FUTEX_WAIT 0, FUTEX_LOCK_PI 6, FUTEX_WAIT_BITSET 9,
 * FUTEX_WAIT_REQUEUE_PI 11, FUTEX_LOCK_PI2 13 are the ops that wait. */

/* Per-CPU counters of `kprof_stats`; the first five have the indexes of
 * enum sl_prof_stat (the progress report reads EVENTS and MATCHED). */
enum sl_kprof_stat {
	SL_KST_EVENTS = 0,     /* hook calls seen on the host */
	SL_KST_MATCHED,        /* events of a filtered-in task (before sampling) */
	SL_KST_USTACK_LOST,
	SL_KST_KSTACK_LOST,
	SL_KST_COUNTS_FULL,    /* kprof_counts full: event lost */
	SL_KST_PENDING_FULL,   /* in-flight table full (syscall/wait begin lost) */
	SL_KST_FREE_UNMATCHED, /* munmap of no mapping seen by this task (not netted) */
	SL_KST_FREE_BYTES_UNMATCHED,
	SL_KST_LIVE_FULL,      /* live-mapping table full: the mapping is never netted */
	SL_KST_BRK_SHRINK_BYTES, /* brk shrinkage (not attributed) */
	SL_KST_NOT_CURRENT,    /* rss_stat of an mm not current's (reclaim, exit, remote) */
	SL_KST_FIRST_SEEN,     /* rss_stat: first event of an (mm, member): baseline only */
	SL_KST_NESTED,         /* contention_begin while one is in flight (IRQ): ignored */
	SL_KST_MAX,
};

#endif
