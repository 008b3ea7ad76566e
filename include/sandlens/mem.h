/* mem module ABI (bpf/mem.bpf.c, src/modules/mem*.c, docs/MEM.md): reclaim
 * and compaction latency per cgroup, memcg reclaim per memcg, kswapd
 * wake-ups and reclaim throttling per node, mem_stall events.
 * Record types 32..47 (include/sandlens/common.h: 16 per module). */
#ifndef SANDLENS_MEM_H
#define SANDLENS_MEM_H

#include "sandlens/common.h"

enum sl_mem_event_type {
	SL_EV_MEM_STALL = 32,
};

/* Histogram slots of one run's duration (log2, microseconds, upper bounds
 * inclusive like Prometheus `le`): slot 0 = d <= 1 us; slot k in 1..24 =
 * 2^(k-1) us < d <= 2^k us (slot 24 ends at 2^24 us = 16.777216 s); slot 25
 * = d > 2^24 us. Computed as v = (d_ns - 1) / 1000, slot = v ? log2(v) + 1 :
 * 0, capped at 25. (sched uses the same rule with 22 slots; reclaim under
 * thrashing lasts seconds, hence the longer range.) */
#define SL_MEM_SLOTS 26
#define SL_MEM_FINITE_SLOTS 25

/* What a histogram entry measures (struct sl_mem_key.kind). */
enum sl_mem_hist_kind {
	/* vmscan:mm_vmscan_direct_reclaim_begin -> _end in one task (the
	 * allocating task: try_to_free_pages, mm/vmscan.c); key = that task's
	 * cgroup pair */
	SL_MEM_H_DIRECT = 0,
	/* vmscan:mm_vmscan_memcg_reclaim_begin -> _end (try_to_free_mem_cgroup_pages);
	 * key = the memcg being reclaimed, as inferred (enum sl_mem_memcg_src) */
	SL_MEM_H_MEMCG = 1,
	/* compaction:mm_compaction_begin -> _end (one compact_zone run) in a
	 * task that entered direct compaction (mm_compaction_try_to_compact_pages);
	 * key = that task's cgroup pair */
	SL_MEM_H_COMPACT = 2,
	/* vmscan:mm_vmscan_throttled: one reclaim throttle (reclaim_throttle),
	 * duration = its usec_delayed; key = the throttled task's cgroup pair */
	SL_MEM_H_THROTTLE = 3,
	SL_MEM_H_KINDS = 4,
};

/* Key of map `mem_hist`: a cgroup pair as every event carries it (v2 cgroup
 * id, id in the v1 hierarchy of attribution.v1_controller, 0 when none; the
 * hybrid rule of docs/ATTRIBUTION.md resolves it) and the kind. For
 * SL_MEM_H_MEMCG the pair names the memcg: {id, 0} when the memory
 * controller is on the v2 hierarchy, {0, id} when it is on the v1 hierarchy
 * of attribution.v1_controller, and the reclaiming task's own pair when it
 * is on another v1 hierarchy (docs/MEM.md "memcg"). */
struct sl_mem_key {
	__u64 cgroup_id;
	__u64 cgroup_v1_id;
	__u32 kind; /* enum sl_mem_hist_kind */
	__u32 pad;
};

/* Value of map `mem_hist` (BPF_MAP_TYPE_PERCPU_HASH): cumulative since the
 * entry was created, per CPU (user space sums the CPUs). A run is counted
 * in the slot of its duration. nr_scanned: pages scanned during the runs
 * (sum of vmscan:mm_vmscan_lru_shrink_inactive nr_scanned in the same task
 * between begin and end: the kernel's pgscan_direct for direct reclaim);
 * nr_reclaimed: the _end tracepoints' nr_reclaimed (0 for compaction and
 * throttling). */
struct sl_mem_hist {
	__u64 slots[SL_MEM_SLOTS];
	__u64 sum_ns;
	__u64 max_ns;       /* largest run since the entry was created */
	__u64 nr_scanned;   /* pages */
	__u64 nr_reclaimed; /* pages */
};

/* How the memcg of a memcg reclaim run was found (docs/MEM.md "memcg"):
 * the tracepoint carries no memcg on this kernel. Start = the task's
 * active_memcg (remote charging) if set, else its memory cgroup; then the
 * deepest of start and its ancestors whose memory (or, v1, memsw) page
 * counter is within SL_MEM_LIMIT_MARGIN_PAGES of its max, or above its
 * memory.high. */
enum sl_mem_memcg_src {
	SL_MEM_MEMCG_AT_MAX = 1,  /* a counter within the margin of max */
	SL_MEM_MEMCG_OVER_HIGH = 2, /* usage above memory.high */
	SL_MEM_MEMCG_GUESS = 3,   /* none near a limit: the start memcg itself */
};

/* try_charge_memcg() (mm/memcontrol.c) enters reclaim when usage +
 * nr_pages > max, nr_pages <= 512 for a PMD-sized THP on x86-64; so the
 * memcg being reclaimed is within 512 pages (2 MiB of 4 KiB pages) of max. */
#define SL_MEM_LIMIT_MARGIN_PAGES 512
/* Ancestors examined above the start memcg (bounded loop). */
#define SL_MEM_MEMCG_DEPTH 16

/* What a mem_stall record measured. */
enum sl_mem_stall_kind {
	SL_MEM_STALL_DIRECT_RECLAIM = 0,
	SL_MEM_STALL_MEMCG_RECLAIM = 1,
	SL_MEM_STALL_COMPACTION = 2,
};

/* Ring buffer record (map `mem_events`): one reclaim or compaction run
 * took >= mem.stall_threshold. */
struct sl_mem_stall_event {
	struct sl_hdr hdr;      /* type SL_EV_MEM_STALL; ts_ns = end of the run */
	struct sl_task_id task; /* the task that stalled */
	__u64 duration_ns;
	__u64 nr_scanned;       /* pages scanned in the run */
	__u64 nr_reclaimed;     /* pages reclaimed (0 for compaction) */
	__u64 memcg_id;         /* kernfs id of the memcg (memcg reclaim: the
	                         * inferred one; otherwise the task's) */
	__u64 truncated_count;  /* stalls of this cgroup pair not delivered since the last one */
	__u64 gfp_flags;        /* of the begin tracepoint (0 for compaction runs) */
	__s32 order;            /* allocation order (-1 unknown) */
	__u32 kind;             /* enum sl_mem_stall_kind */
	__u32 memcg_v1;         /* 1: memcg_id is on a v1 hierarchy */
	__u32 memcg_src;        /* enum sl_mem_memcg_src (memcg reclaim), 0 otherwise */
	__s32 status;           /* compaction: mm_compaction_end status; -1 otherwise */
	__u32 memcg_hierarchy_id; /* hierarchy id of the memcg's cgroup (0 = v2): user
	                           * space resolves it only on v2 or on the hierarchy
	                           * of attribution.v1_controller */
};

/* Per-node counters, map `mem_nodes` (PERCPU_ARRAY indexed by node id,
 * SL_MEM_MAX_NODES entries; larger node ids are counted in node
 * SL_MEM_MAX_NODES - 1). */
#define SL_MEM_MAX_NODES 64
struct sl_mem_node {
	__u64 kswapd_wake;    /* vmscan:mm_vmscan_kswapd_wake (kswapd woke and runs) */
	__u64 wakeup_kswapd;  /* vmscan:mm_vmscan_wakeup_kswapd (an allocation asked) */
	__u64 throttled;      /* vmscan:mm_vmscan_throttled */
	__u64 throttled_us;   /* sum of usec_delayed */
};

/* Per-CPU counters in map `mem_stats` (PERCPU_ARRAY). RUNS_* count every
 * run that ended with its begin seen (what the histograms should hold);
 * HIST_FULL_* the runs not counted in a histogram because mem_hist was
 * full (mem.max_cgroups): Σ histogram counts + HIST_FULL == RUNS per kind. */
enum sl_mem_stat {
	SL_MST_RUNS_DIRECT = 0,
	SL_MST_RUNS_MEMCG,
	SL_MST_RUNS_COMPACT,
	SL_MST_RUNS_THROTTLE,
	SL_MST_HIST_FULL_DIRECT,
	SL_MST_HIST_FULL_MEMCG,
	SL_MST_HIST_FULL_COMPACT,
	SL_MST_HIST_FULL_THROTTLE,
	SL_MST_END_NO_BEGIN,    /* an _end without its _begin (attached mid-run) */
	SL_MST_MEMCG_GUESS,     /* memcg runs attributed with SL_MEM_MEMCG_GUESS */
	SL_MST_STALL_SEEN,      /* runs >= mem.stall_threshold */
	SL_MST_STALL_RATE_LIMITED,
	SL_MST_STALL_RB_FAIL,
	SL_MST_BUCKET_FULL,     /* stall not sent: mem_buckets full */
	SL_MST_GONE_FULL,       /* entries deleted unread at cgroup_rmdir: mem_gone was full */
	SL_MST_MAX,
};

/* Key of map `mem_gone` (cgroups removed since user space last read
 * mem_hist), as sched's: v1 = 1 when id is a v1 cgroup id. */
struct sl_mem_gone {
	__u64 id;
	__u64 v1;
};

#endif
