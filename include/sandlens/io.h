/* io module ABI (bpf/io.bpf.c, src/modules/io*.c, docs/IO.md): block
 * request latency per (blkcg, disk, op) in two stages (queue: insert ->
 * issue, device: issue -> complete), bytes and requests, slow_io events;
 * above the block layer, per task cgroup pair: pages added to the page
 * cache, readahead runs and dirty-page throttling.
 * Record types 48..63 (include/sandlens/common.h: 16 per module). */
#ifndef SANDLENS_IO_H
#define SANDLENS_IO_H

#include "sandlens/common.h"

enum sl_io_event_type {
	SL_EV_IO_SLOW = 48,
};

/* Histogram slots: the shared 1 us-base log2 layout (src/common/log2hist.h)
 * with 26 slots: slot 0 <= 1 us, slot k in 1..24 = (2^(k-1), 2^k] us, slot
 * 25 > 2^24 us (16.777216 s). */
#define SL_IO_SLOTS 26

/* Operation class of a request, as /proc/diskstats groups them
 * (op_stat_group(), block/blk.h): REQ_OP_DISCARD and REQ_OP_SECURE_ERASE
 * are discard, REQ_OP_FLUSH flush, any other op with the write bit
 * (op & 1: WRITE, WRITE_ZEROES, zone ops that write) write, the rest read;
 * driver passthrough ops (REQ_OP_DRV_IN/OUT, >= 34) are "other" (not in
 * diskstats). */
enum sl_io_op {
	SL_IO_OP_READ = 0,
	SL_IO_OP_WRITE = 1,
	SL_IO_OP_FLUSH = 2,
	SL_IO_OP_DISCARD = 3,
	SL_IO_OP_OTHER = 4,
	SL_IO_NOPS = 5,
};

/* Key of map `io_hist`: the cgroup the block layer charges the request to
 * (rq->bio->bi_blkg->blkcg: the blkcg writeback attribution uses) as its
 * cgroup's kernfs id and that cgroup's hierarchy id (0 = the v2 default
 * hierarchy; on a hybrid host a v1 blkio hierarchy), the disk and the op
 * class. blkcg_id 0: the request had no bio/blkg (flushes made by the
 * flush machinery, passthrough): the host. */
struct sl_io_key {
	__u64 blkcg_id;
	__u32 blkcg_hid;
	__u32 dev;  /* the disk's dev_t, kernel encoding: major << 20 | first_minor */
	__u32 op;   /* enum sl_io_op */
	__u32 pad;
};

/* Value of map `io_hist` (PERCPU_HASH), cumulative per CPU since the entry
 * was made. A request is counted once, at its final completion
 * (block:block_rq_complete with nr_bytes >= the bytes left), when its
 * issue was seen. queue[]: insert -> issue of requests that went through
 * block:block_rq_insert (an I/O scheduler or a requeue; a request issued
 * directly has no queue stage and is counted in `direct`); device[]:
 * issue -> complete (what biolatency -D measures). */
struct sl_io_hist {
	__u64 queue[SL_IO_SLOTS];
	__u64 device[SL_IO_SLOTS];
	__u64 queue_sum_ns, device_sum_ns;
	__u64 queue_max_ns, device_max_ns;
	__u64 requests; /* == Σ device[] */
	__u64 direct;   /* requests without an insert: Σ queue[] + direct == requests */
	__u64 bytes;    /* Σ bytes completed (block_rq_complete nr_bytes) */
	__u64 errors;   /* requests completed with an error status */
};

/* Per-cgroup-pair figures above the block layer, map `io_cg` (PERCPU_HASH,
 * key = the task's cgroup pair as every event carries it: v2 id, id in the
 * v1 hierarchy of attribution.v1_controller). */
struct sl_io_cg_key {
	__u64 cgroup_id;
	__u64 cgroup_v1_id;
};

struct sl_io_cg {
	__u64 pagecache_added;  /* pages inserted (filemap:mm_filemap_add_to_page_cache, folio pages) */
	__u64 ra_sync;          /* readahead:page_cache_sync_ra (a miss started readahead) */
	__u64 ra_async;         /* readahead:page_cache_async_ra (a PG_readahead page was hit) */
	__u64 ra_pages;         /* readahead:page_cache_ra_unbounded nr_to_read, pages asked */
	__u64 dirty_throttled;  /* writeback:balance_dirty_pages with pause > 0 */
	__u64 dirty_pause_ns;   /* Σ pause (jiffies converted with CONFIG_HZ) */
};

/* Ring buffer record (map `io_events`): a request whose queue + device
 * time reached io.slow_io_threshold. */
struct sl_io_slow_event {
	struct sl_hdr hdr;      /* type SL_EV_IO_SLOW; ts_ns = completion */
	struct sl_task_id task; /* the task current at insert (or at issue when
	                         * not inserted): the submitter for direct and
	                         * synchronous I/O, a flusher for writeback;
	                         * only its tid is kept per request: comm, ppid
	                         * and cgroups are read at the slow completion
	                         * from the task found by that tid (all 0/"" when
	                         * it has exited) */
	struct sl_io_key key;   /* the request's blkcg, disk, op */
	__u64 sector;
	__u64 queue_ns;         /* 0 when not inserted */
	__u64 device_ns;
	__u64 truncated_count;  /* slow requests of this (blkcg, disk) not delivered since the last one */
	__u32 bytes;            /* the request's size at issue */
	__s32 error;            /* blk_status_t of the completion (0 ok) */
	__u32 cmd_flags;        /* rq->cmd_flags (REQ_* bits, kernel-version dependent) */
	__u32 queued;           /* 1: went through block_rq_insert */
};

/* Per-CPU counters in map `io_stats` (PERCPU_ARRAY). */
enum sl_io_stat {
	SL_IOST_INSERT = 0,      /* block_rq_insert seen */
	SL_IOST_ISSUE,           /* block_rq_issue seen */
	SL_IOST_COMPLETE,        /* final completions with their issue seen: Σ requests + HIST_FULL */
	SL_IOST_NO_ISSUE,        /* final completions without a start entry (issued before attach) */
	SL_IOST_PARTIAL,         /* partial completions (block_rq_complete with bytes left) */
	SL_IOST_START_FULL,      /* insert/issue not tracked: io_start full (io.max_inflight) */
	SL_IOST_HIST_FULL,       /* completions not counted: io_hist full (io.max_series) */
	SL_IOST_MERGED,          /* requests merged away (block_rq_merge): their entry dropped */
	SL_IOST_REISSUE,         /* an issue found an already-issued entry (requeue or stale) */
	SL_IOST_SLOW_SEEN,       /* requests >= io.slow_io_threshold */
	SL_IOST_SLOW_RATE_LIMITED,
	SL_IOST_SLOW_RB_FAIL,
	SL_IOST_BUCKET_FULL,     /* slow_io not sent: io_buckets full */
	SL_IOST_CG_FULL,         /* page-cache/writeback counts lost: io_cg full */
	SL_IOST_MAX,
};

#endif
