/* proc module ABI (bpf/proc.bpf.c, src/modules/proc*.c, docs/ARCHITECTURE.md
 * "proc"): exec, exit, signal, OOM and cgroup mkdir/rmdir records of ring
 * buffer proc_events, and the map layouts of its token buckets. */
#ifndef SANDLENS_PROC_H
#define SANDLENS_PROC_H

#include "sandlens/common.h"
/* exec: bytes of the NUL-separated argument block copied from the new
 * process' mm->arg_start..arg_end. Longer blocks are cut and the event sets
 * args_truncated = 1. */
#define SL_ARGV_BYTES 1024
/* exec: bytes of bprm->filename kept (path as passed to execve). */
#define SL_FILENAME_BYTES 256


enum sl_event_type {
	SL_EV_EXEC = 1,
	SL_EV_EXIT = 2,
	SL_EV_SIGNAL = 3,
	SL_EV_OOM = 4,
	SL_EV_CGROUP_MKDIR = 5,
	SL_EV_CGROUP_RMDIR = 6,
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

#endif
