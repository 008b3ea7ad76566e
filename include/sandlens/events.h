/* sandlens raw event ABI: the records BPF programs write into ring buffers
 * and the keys/values of maps user space reads. Shared by bpf/<module>.bpf.c and
 * src/. Every record starts with struct sl_hdr; `type` selects the body.
 *
 * Conventions
 *   - times: ns of CLOCK_MONOTONIC (bpf_ktime_get_ns); user space converts
 *     to wall-clock with one offset taken at start (see src/common/clock.h).
 *   - cgroup ids: kernfs node id of the cgroup directory == st_ino of the
 *     directory in the cgroup mount (64-bit kernels). See
 *     docs/ARCHITECTURE.md "Identity" for which hierarchy an id belongs to.
 *   - pid/ppid are thread-group ids (what userland calls PID).
 */
#ifndef SANDLENS_EVENTS_H
#define SANDLENS_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define SL_COMM_LEN 16
/* exec: bytes of the NUL-separated argument block copied from the new
 * process' mm->arg_start..arg_end. Longer blocks are cut and the event sets
 * args_truncated = 1. */
#define SL_ARGV_BYTES 1024
/* exec: bytes of bprm->filename kept (path as passed to execve). */
#define SL_FILENAME_BYTES 256
/* cgroup mkdir/rmdir: bytes of the cgroup path (relative to its mount). */
#define SL_CGPATH_BYTES 512

enum sl_event_type {
	SL_EV_EXEC = 1,
	SL_EV_EXIT = 2,
	SL_EV_SIGNAL = 3,
	SL_EV_OOM = 4,
	SL_EV_CGROUP_MKDIR = 5,
	SL_EV_CGROUP_RMDIR = 6,
};

/* Which hierarchy a cgroup id was read from. */
enum sl_cg_hier {
	SL_CG_V2 = 0, /* default (unified) hierarchy */
	SL_CG_V1 = 1, /* the v1 hierarchy of the configured controller */
};

/* Identity of a task as the kernel saw it when the event fired.
 * cgroup_id is the v2 (default hierarchy) cgroup id; cgroup_v1_id is the
 * id of the task's cgroup in the v1 hierarchy chosen by the agent
 * (attribution.v1_controller; 0 when there is none). User space picks one
 * by the rule in docs/ARCHITECTURE.md ("Identity"). */
struct sl_task_id {
	__u32 pid;  /* tgid */
	__u32 tid;
	__u32 ppid; /* real_parent->tgid */
	__u32 pad0;
	__u64 cgroup_id;
	__u64 cgroup_v1_id;
	char comm[SL_COMM_LEN];
};

struct sl_hdr {
	__u32 type;    /* enum sl_event_type */
	__u32 cpu;
	__u64 ts_ns;   /* CLOCK_MONOTONIC ns */
};

struct sl_exec_event {
	struct sl_hdr hdr;
	struct sl_task_id task;
	__u32 args_truncated; /* 1 when argv was cut at SL_ARGV_BYTES */
	__u32 pad;
	/* exec events from the same (ppid, comm) key that were not delivered
	 * since the previous delivered one: rate limited (token bucket) or lost
	 * to a full ring buffer. */
	__u64 truncated_count;
	__u32 argv_len;       /* bytes valid in argv (incl. NULs) */
	__u32 filename_len;
	char filename[SL_FILENAME_BYTES];
	char argv[SL_ARGV_BYTES];
};

struct sl_exit_event {
	struct sl_hdr hdr;
	struct sl_task_id task;
	__s32 exit_code;   /* (task->exit_code >> 8) & 0xff; valid when signal==0 */
	__u32 signal;      /* terminating signal (task->exit_code & 0x7f), 0 if none */
	__u32 core_dumped; /* task->exit_code & 0x80 */
	__u32 pad;
	__u64 lifetime_ns; /* exit time - group_leader->start_time */
	/* exit events of the same (cgroup, comm) key not delivered since the
	 * previous delivered one (exit token bucket, full ring buffer), and how
	 * many of those were abnormal (non-zero code or a signal). */
	__u64 truncated_count;
	__u64 truncated_abnormal;
};

struct sl_signal_event {
	struct sl_hdr hdr;
	struct sl_task_id sender; /* current at signal_generate */
	struct sl_task_id target;
	__u32 signal;
	__s32 si_code;  /* siginfo si_code: <=0 user (kill/tgkill), >0 kernel */
	/* fatal signals to the target's (cgroup, comm) key not delivered since
	 * the previous delivered one (token bucket, full ring buffer) */
	__u64 truncated_count;
};

enum sl_oom_constraint {
	SL_OOM_GLOBAL = 0,
	SL_OOM_MEMCG = 1,
};

/* How the constraint was known: from oom_control->memcg at
 * kprobe/oom_kill_process (exact), or inferred at oom:mark_victim from the
 * victim's memcg chain (a memcg within 2 MiB of its limit => memcg). */
enum sl_oom_constraint_source {
	SL_OOM_SRC_INFERRED = 0,
	SL_OOM_SRC_KPROBE = 1,
};

struct sl_oom_event {
	struct sl_hdr hdr;
	struct sl_task_id actor;  /* current when oom:mark_victim fired */
	struct sl_task_id victim; /* the task marked as OOM victim */
	__u32 constraint;         /* enum sl_oom_constraint */
	__u32 constraint_source;  /* enum sl_oom_constraint_source */
	/* memcg OOM: limit (page_counter max) and usage of the memcg that hit
	 * its limit, in bytes (4 KiB pages); 0 for global. */
	__u64 memcg_limit_bytes;
	__u64 memcg_usage_bytes;
};

struct sl_cgroup_event {
	struct sl_hdr hdr;
	__u64 cgroup_id;
	__u32 hierarchy_id; /* cgroup_root->hierarchy_id; the v2 root is 0 */
	__u32 level;
	char path[SL_CGPATH_BYTES];
};

/* Per-CPU counters in map `proc_stats` (BPF_MAP_TYPE_PERCPU_ARRAY). */
enum sl_proc_stat {
	SL_ST_EXEC_SEEN = 0,        /* sched_process_exec hits */
	SL_ST_EXEC_RATE_LIMITED,    /* suppressed by the token bucket */
	SL_ST_EXEC_RB_FAIL,         /* ring buffer reserve failed (exec) */
	SL_ST_EXIT_RB_FAIL,
	SL_ST_SIGNAL_RB_FAIL,
	SL_ST_OOM_RB_FAIL,
	SL_ST_CGROUP_RB_FAIL,
	SL_ST_EXEC_KEY_TABLE_FULL,  /* no room for a new (ppid, comm) bucket */
	/* clean exits (code 0, no signal) of processes whose exec event was not
	 * delivered: not sent, counted here (a storm's exits cost as much as
	 * its execs; abnormal exits are always sent) */
	SL_ST_EXIT_SUPPRESSED,
	/* events lost outright to a full ring buffer when no token bucket
	 * could carry them (rate 0 = no limit) */
	SL_ST_EXEC_RB_LOST,
	SL_ST_EXIT_RB_LOST,
	SL_ST_SIGNAL_RB_LOST,
	SL_ST_EXIT_RATE_LIMITED,    /* exits suppressed by the (cgroup, comm) bucket */
	SL_ST_EXIT_ABN_RATE_LIMITED,/* of which abnormal (non-zero code, signal) */
	SL_ST_EXIT_KEY_TABLE_FULL,  /* exits dropped: no room for a new bucket */
	SL_ST_SIGNAL_RATE_LIMITED,  /* fatal signals suppressed by the bucket */
	SL_ST_SIGNAL_KEY_TABLE_FULL,
	SL_ST_SIGNAL_SEEN,          /* fatal signals that passed the filters */
	SL_ST_EXIT_SEEN,            /* process exits (last thread, no kthread) */
	SL_ST_MAX,
};

/* Token bucket state per (ppid, comm) in map `exec_buckets`. */
struct sl_exec_key {
	__u32 ppid;
	__u32 pad;
	char comm[SL_COMM_LEN];
};

/* Token bucket state per key (exec_buckets, exit_buckets, sched_watch). */
struct sl_exec_bucket {
	__u64 tokens_nano; /* tokens * 1e9 */
	__u64 last_ns;     /* last refill, CLOCK_MONOTONIC */
	__u64 pending;     /* suppressed since the last delivered event */
	__u64 pending_rb;  /* of pending: lost to a full ring buffer */
	__u64 pending_abn; /* of pending (exit keys): abnormal exits */
};

/* Kinds of events sharing map `exit_buckets`. */
enum sl_exit_kind {
	SL_EXK_EXIT = 1,
	SL_EXK_SIGNAL = 2,
};

/* Token bucket key of exit and fatal-signal events in map `exit_buckets`:
 * the (target) task's cgroup pair and comm: a fork bomb has one key however
 * its parents fan out. */
struct sl_exit_key {
	__u64 cgroup_id;
	__u64 cgroup_v1_id;
	char comm[SL_COMM_LEN];
	__u32 kind; /* enum sl_exit_kind */
	__u32 pad;
};


/* ------------------------------------------------------------------
 * sched module (bpf/sched.bpf.c, src/modules/sched.c, docs/SCHED.md):
 * runqueue latency per cgroup, internal/external contention, sched_delay.
 * ------------------------------------------------------------------ */

enum sl_sched_event_type {
	SL_EV_SCHED_DELAY = 16,
};

/* Histogram slots of runqueue wait (log2, microseconds, upper bounds
 * inclusive like Prometheus `le`): slot 0 = wait <= 1 us; slot k in 1..20 =
 * 2^(k-1) us < wait <= 2^k us (slot 20 ends at 1.048576 s); slot 21 =
 * wait > 2^20 us. Computed as v = (wait_ns - 1) / 1000, slot = v ? log2(v) + 1
 * : 0, capped at 21. */
#define SL_SCHED_SLOTS 22
#define SL_SCHED_FINITE_SLOTS 21

/* Identity of a cgroup in the sched maps: the task's v2 cgroup id and its
 * cgroup id in the v1 hierarchy of attribution.v1_controller (0 on pure v2
 * hosts): the same pair every event carries (struct sl_task_id), so user
 * space resolves it with the hybrid rule of docs/ATTRIBUTION.md. */
struct sl_sched_key {
	__u64 cgroup_id;
	__u64 cgroup_v1_id;
};

/* A cgroup removed since user space last read the sched maps (key of the
 * sched_gone map): its entries are deleted by user space once it has read
 * them, so a container shorter than a tick keeps its waits. v1 = 1 when id
 * is a cgroup id of the v1 hierarchy of attribution.v1_controller. */
struct sl_sched_gone {
	__u64 id;
	__u64 v1;
};

/* How the CPU was held when a wait ended (docs/SCHED.md): by the idle task
 * (no contention), by a task of the same cgroup key (internal), by a task of
 * another cgroup key (external). */
enum sl_sched_contention {
	SL_SCHED_IDLE = 0,
	SL_SCHED_INTERNAL = 1,
	SL_SCHED_EXTERNAL = 2,
};

/* How the waiting task became runnable. */
enum sl_sched_enqueue {
	SL_SCHED_ENQ_WAKEUP = 1,     /* sched_wakeup */
	SL_SCHED_ENQ_WAKEUP_NEW = 2, /* sched_wakeup_new (fork) */
	SL_SCHED_ENQ_PREEMPT = 3,    /* switched out while TASK_RUNNING */
};

/* External waits of one victim caused by one neighbour cgroup key, kept
 * inside the victim's per-CPU histogram value (no extra map lookup on the
 * hot path). A slot is claimed by the first neighbours seen on that CPU and
 * never reassigned; count == 0 means free. */
#define SL_SCHED_NB_SLOTS 4
struct sl_sched_nb {
	struct sl_sched_key key;
	__u64 wait_ns;
	__u64 count;
};

/* Value of map `sched_hist` (BPF_MAP_TYPE_PERCPU_HASH keyed by struct
 * sl_sched_key): cumulative since the entry was created, per CPU (user space
 * sums the CPUs). max_ns[e & 1] is the largest wait of tick epoch e (global
 * `sched_epoch`, advanced by user space every tick); max_epoch[] tags which
 * epoch a max_ns slot belongs to. nb[]: neighbours of external waits; a
 * neighbour that finds no slot on this CPU goes to map `sched_pairs`. */
struct sl_sched_hist {
	__u64 slots[SL_SCHED_SLOTS]; /* waits per slot */
	__u64 sum_ns;                /* sum of waits */
	__u64 class_ns[3];           /* sum of waits by enum sl_sched_contention */
	__u64 max_ns[2];
	__u64 max_epoch[2];
	struct sl_sched_nb nb[SL_SCHED_NB_SLOTS];
};

/* Key/value of map `sched_pairs` (PERCPU_HASH): external waits of a victim
 * cgroup key ended by a task of a neighbour cgroup key, for neighbours that
 * found no free struct sl_sched_hist.nb slot on the CPU. */
struct sl_sched_pair_key {
	struct sl_sched_key victim;
	struct sl_sched_key neighbour;
};

struct sl_sched_pair {
	__u64 wait_ns;
	__u64 count;
};

/* Ring buffer record: a task of a watched cgroup waited >= the threshold. */
struct sl_sched_delay_event {
	struct sl_hdr hdr;              /* type SL_EV_SCHED_DELAY; cpu = where it then ran */
	struct sl_task_id task;         /* the waiting task */
	struct sl_task_id neighbour;    /* what ran on that CPU before it (prev at switch-in) */
	__u64 wait_ns;                  /* enqueue -> switch-in */
	__u64 truncated_count;          /* delays of this cgroup key not delivered since the last one */
	__u32 contention;               /* enum sl_sched_contention */
	__u32 enqueue;                  /* enum sl_sched_enqueue */
};

/* Per-CPU counters in map `sched_stats` (PERCPU_ARRAY). */
enum sl_sched_stat {
	SL_SST_HIST_FULL = 0,     /* wait not counted: sched_hist full (max_cgroups) */
	SL_SST_PAIR_FULL,         /* external wait not attributed to a neighbour: sched_pairs full */
	SL_SST_DELAY_SEEN,        /* waits >= threshold of watched cgroup keys */
	SL_SST_DELAY_RATE_LIMITED,/* suppressed by the per-key token bucket */
	SL_SST_DELAY_RB_FAIL,     /* ring buffer reserve failed */
	SL_SST_MAX,
};

#endif
