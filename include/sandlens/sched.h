/* sched module ABI (bpf/sched.bpf.c, src/modules/sched*.c, docs/SCHED.md):
 * runqueue latency per cgroup, internal/external contention, sched_delay. */
#ifndef SANDLENS_SCHED_H
#define SANDLENS_SCHED_H

#include "sandlens/common.h"

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
	/* sched_info mode: this CPU's record of what ran before the task is
	 * not the task's (a switch the tracepoint did not show); the wait is
	 * counted, in no class */
	SL_SCHED_CLS_UNKNOWN = 3,
};

/* How the waiting task became runnable. */
enum sl_sched_enqueue {
	SL_SCHED_ENQ_WAKEUP = 1,     /* sched_wakeup */
	SL_SCHED_ENQ_WAKEUP_NEW = 2, /* sched_wakeup_new (fork) */
	SL_SCHED_ENQ_PREEMPT = 3,    /* switched out while TASK_RUNNING */
};

/* A slot index of no histogram (the kernel half's cached index before its
 * first lookup, or when every slot is taken). */
#define SL_SCHED_NO_SLOT 0xffffffffu

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

/* Value of map `sched_hist` (BPF_MAP_TYPE_PERCPU_ARRAY, max_cgroups slots;
 * map `sched_slot`, a hash from struct sl_sched_key to the __u32 slot index,
 * names each key's slot; free indices wait in the BPF_MAP_TYPE_QUEUE
 * `sched_free`, filled by user space): cumulative since the slot was
 * claimed, per CPU (user space sums the CPUs). A slot is given back (zeroed,
 * then pushed to sched_free) one tick after its key left sched_slot, so no
 * program still writing the old key's figures overlaps its next owner.
 * max_ns[e & 1] is the largest wait of tick epoch e (global
 * `sched_epoch`, advanced by user space every tick); max_epoch[] tags which
 * epoch a max_ns slot belongs to. nb[]: neighbours of external waits; a
 * neighbour that finds no slot on this CPU goes to map `sched_pairs`. */
struct sl_sched_hist {
	/* what every wait updates, in the first 64 bytes (one cache line when
	 * the value is line-aligned): */
	__u64 sum_ns;                /* sum of waits */
	__u64 class_ns[3];           /* sum of waits by enum sl_sched_contention
	                              * (SL_SCHED_CLS_UNKNOWN: in none) */
	__u64 max_ns[2];
	__u64 max_epoch[2];
	/* then the neighbour slots (32 bytes each, two per cache line: the
	 * first neighbours of an external wait are one more line), then the
	 * log2 slots */
	struct sl_sched_nb nb[SL_SCHED_NB_SLOTS];
	__u64 slots[SL_SCHED_SLOTS]; /* waits per slot */
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
	SL_SST_HIST_FULL = 0,     /* wait not counted: no free sched_hist slot (max_cgroups) */
	SL_SST_PAIR_FULL,         /* external wait not attributed to a neighbour: sched_pairs full */
	SL_SST_DELAY_SEEN,        /* waits >= threshold of watched cgroup keys */
	SL_SST_DELAY_RATE_LIMITED,/* suppressed by the per-key token bucket */
	SL_SST_DELAY_RB_FAIL,     /* ring buffer reserve failed */
	SL_SST_TASK_STORAGE,      /* sched_info mode: switch-outs of a task whose
	                           * state is in task storage (no sched_tasks
	                           * slot: its pair owned by others, or slots off) */
	SL_SST_MAX,
};

#endif
