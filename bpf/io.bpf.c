// SPDX-License-Identifier: GPL-2.0
/* io module, kernel half: block request latency per (blkcg, disk, op) in
 * two stages, bytes and requests, slow_io events; page-cache insertions,
 * readahead and dirty throttling per task cgroup pair. Definitions:
 * docs/IO.md; ABI: include/sandlens/io.h.
 *
 * Hooks (tp_btf; each loaded only when its tracepoint is in the kernel's
 * BTF, src/modules/io.c):
 *   block:block_rq_insert       queue stage starts (scheduler insert, requeue)
 *   block:block_rq_issue        device stage starts (blk_mq_start_request)
 *   block:block_rq_complete     final completion: both stages end
 *   block:block_rq_merge        a request merged into another: entry dropped
 *   filemap:mm_filemap_add_to_page_cache, readahead:page_cache_sync_ra,
 *   readahead:page_cache_async_ra, readahead:page_cache_ra_unbounded,
 *   writeback:balance_dirty_pages   per task cgroup pair
 *
 * Per-request state: a hash keyed by the request pointer (the request has
 * no local storage), {insert ts, issue ts, submitter}. The request's
 * cgroup is read at completion from rq->bio->bi_blkg->blkcg (still set:
 * blk_update_request() fires the tracepoint before ending the bios).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "log2hist.bpf.h"
#include "sandlens/io.h"
#include "sandlens/token_bucket.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load (src/modules/io.c). */
const volatile __u64 slow_threshold_ns = 100000000; /* io.slow_io_threshold */
const volatile __u64 slow_rate = 5;                 /* io.slow_io_rate per (blkcg, disk); 0 = no limit */
const volatile __u64 slow_burst = 10;               /* io.slow_io_burst */
/* jiffies of the balance_dirty_pages pause: CONFIG_HZ from the kernel's
 * config (libbpf reads /proc/config.gz); 0 when unreadable, then the
 * pause is not converted (docs/IO.md) */
extern unsigned int CONFIG_HZ __kconfig __weak;
/* Degradation step 2 (set_rate_shift op). */
volatile __u32 rate_shift = 0;

/* Kept small (the floor's is one timestamp): the submitter is only its
 * pid_tgid; comm and cgroups are read for a slow request only, from the
 * task found again by its tid (bpf_task_from_pid). */
struct io_rq {
	__u64 insert_ns; /* 0: not inserted (direct issue) */
	__u64 issue_ns;  /* 0: not issued yet */
	__u64 pid_tgid;
};


struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384); /* io.max_inflight */
	__type(key, __u64);
	__type(value, struct io_rq);
} io_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096); /* io.max_series */
	__type(key, struct sl_io_key);
	__type(value, struct sl_io_hist);
} io_hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096); /* io.max_series */
	__type(key, struct sl_io_cg_key);
	__type(value, struct sl_io_cg);
} io_cg SEC(".maps");

/* slow_io token bucket per (blkcg, disk): sl_io_key with op 0. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096); /* io.max_series */
	__type(key, struct sl_io_key);
	__type(value, struct sl_exec_bucket);
} io_buckets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 10); /* io.ringbuf_size */
} io_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SL_IOST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} io_stats SEC(".maps");

/* Initial value of a new io_hist entry (too big for the stack). */
static struct sl_io_hist zero_hist;

static __always_inline __u32 op_class(__u32 cmd_flags)
{
	__u32 op = cmd_flags & 0xff; /* REQ_OP_MASK */

	if (op == 3 || op == 5) /* REQ_OP_DISCARD, REQ_OP_SECURE_ERASE */
		return SL_IO_OP_DISCARD;
	if (op == 2) /* REQ_OP_FLUSH */
		return SL_IO_OP_FLUSH;
	if (op >= 34) /* REQ_OP_DRV_IN, REQ_OP_DRV_OUT */
		return SL_IO_OP_OTHER;
	return op & 1 ? SL_IO_OP_WRITE : SL_IO_OP_READ;
}

/* The submitter: the current task's pid and tid. */
static __always_inline void note_task(struct io_rq *r)
{
	r->pid_tgid = bpf_get_current_pid_tgid();
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(io_rq_insert, struct request *rq)
{
	__u64 key = (__u64)rq;
	struct io_rq r = {};

	r.insert_ns = bpf_ktime_get_ns();
	note_task(&r);
	if (bpf_map_update_elem(&io_start, &key, &r, BPF_ANY))
		sl_stat_inc(&io_stats, SL_IOST_START_FULL);
	sl_stat_inc(&io_stats, SL_IOST_INSERT);
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(io_rq_issue, struct request *rq)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();
	struct io_rq *p = bpf_map_lookup_elem(&io_start, &key);

	sl_stat_inc(&io_stats, SL_IOST_ISSUE);
	if (p && !p->issue_ns) {
		p->issue_ns = now;
		return 0;
	}
	if (p) {
		/* issued before: a requeue, or a stale entry whose request was
		 * freed unseen and the pointer reused; no queue stage */
		sl_stat_inc(&io_stats, SL_IOST_REISSUE);
		p->insert_ns = 0;
		p->issue_ns = now;
		note_task(p);
		return 0;
	}
	struct io_rq r = {};
	r.issue_ns = now;
	note_task(&r);
	if (bpf_map_update_elem(&io_start, &key, &r, BPF_ANY))
		sl_stat_inc(&io_stats, SL_IOST_START_FULL);
	return 0;
}

SEC("tp_btf/block_rq_merge")
int BPF_PROG(io_rq_merge, struct request *rq)
{
	__u64 key = (__u64)rq;

	if (bpf_map_delete_elem(&io_start, &key) == 0)
		sl_stat_inc(&io_stats, SL_IOST_MERGED);
	return 0;
}

static __always_inline __u64 shifted(__u64 v)
{
	return sl_bucket_scale(v, rate_shift);
}

static __always_inline void emit_slow(struct request *rq, const struct io_rq *r, const struct sl_io_key *k, __u64 now,
				 __u64 qns, __u64 dns, int error)
{
	struct sl_io_key bk = *k;
	struct sl_exec_bucket *b = NULL;
	struct sl_io_slow_event *e;
	__u64 carried = 0;

	sl_stat_inc(&io_stats, SL_IOST_SLOW_SEEN);
	bk.op = 0;
	if (slow_rate) {
		b = bpf_map_lookup_elem(&io_buckets, &bk);
		if (!b) {
			struct sl_exec_bucket nb;
			sl_bucket_init(&nb, now, shifted(slow_burst));
			bpf_map_update_elem(&io_buckets, &bk, &nb, BPF_NOEXIST);
			b = bpf_map_lookup_elem(&io_buckets, &bk);
			if (!b) {
				sl_stat_inc(&io_stats, SL_IOST_BUCKET_FULL);
				return;
			}
		}
		if (!sl_bucket_take(b, now, shifted(slow_rate), shifted(slow_burst), &carried)) {
			sl_stat_inc(&io_stats, SL_IOST_SLOW_RATE_LIMITED);
			return;
		}
	}
	e = bpf_ringbuf_reserve(&io_events, sizeof(*e), 0);
	if (!e) {
		sl_stat_inc(&io_stats, SL_IOST_SLOW_RB_FAIL);
		if (b)
			sl_bucket_undeliver_rb(b, carried, sl_bucket_take_sub(&b->pending_rb));
		return;
	}
	if (b)
		sl_bucket_take_sub(&b->pending_rb);
	e->hdr.type = SL_EV_IO_SLOW;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts_ns = now;
	e->task.pid = r->pid_tgid >> 32;
	e->task.tid = (__u32)r->pid_tgid;
	e->task.ppid = 0;
	e->task.pad0 = 0;
	e->task.cgroup_id = 0;
	e->task.cgroup_v1_id = 0;
	__builtin_memset(e->task.comm, 0, sizeof(e->task.comm));
	/* the submitter now (it may have exited: then comm "" and no cgroups) */
	if (bpf_ksym_exists(bpf_task_from_pid) && bpf_ksym_exists(bpf_task_release)) {
		struct task_struct *t = bpf_task_from_pid((s32)(__u32)r->pid_tgid);
		if (t) {
			e->task.ppid = t->real_parent ? t->real_parent->tgid : 0;
			sl_task_cgroup_key(t, &e->task.cgroup_id, &e->task.cgroup_v1_id);
			bpf_probe_read_kernel_str(e->task.comm, sizeof(e->task.comm), t->comm);
			bpf_task_release(t);
		}
	}
	e->key = *k;
	e->sector = BPF_CORE_READ(rq, __sector);
	e->queue_ns = qns;
	e->device_ns = dns;
	e->truncated_count = carried;
	e->bytes = BPF_CORE_READ(rq, __data_len);
	e->error = error;
	e->cmd_flags = BPF_CORE_READ(rq, cmd_flags);
	e->queued = r->insert_ns != 0;
	bpf_ringbuf_submit(e, 0);
	return;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(io_rq_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	__u64 key = (__u64)rq, now, qns = 0, dns;
	struct io_rq *p, r;
	struct sl_io_key k;
	struct sl_io_hist *h;
	struct gendisk *disk;
	struct cgroup *cg;

	if (nr_bytes < rq->__data_len) { /* more to come: not the end of the request */
		sl_stat_inc(&io_stats, SL_IOST_PARTIAL);
		return 0;
	}
	p = bpf_map_lookup_elem(&io_start, &key);
	if (!p || !p->issue_ns) {
		sl_stat_inc(&io_stats, SL_IOST_NO_ISSUE);
		if (p)
			bpf_map_delete_elem(&io_start, &key);
		return 0;
	}
	now = bpf_ktime_get_ns();
	r = *p;
	bpf_map_delete_elem(&io_start, &key);
	dns = now - r.issue_ns;
	if (r.insert_ns && r.issue_ns >= r.insert_ns)
		qns = r.issue_ns - r.insert_ns;

	k.blkcg_id = 0;
	k.blkcg_hid = 0;
	cg = rq->bio ? rq->bio->bi_blkg ? rq->bio->bi_blkg->blkcg ? rq->bio->bi_blkg->blkcg->css.cgroup : NULL
					: NULL : NULL;
	if (cg) {
		k.blkcg_id = cg->kn->id;
		k.blkcg_hid = cg->root->hierarchy_id;
	}
	disk = rq->q->disk;
	k.dev = disk ? ((__u32)disk->major << 20) | (__u32)disk->first_minor : 0;
	k.op = op_class(rq->cmd_flags);
	k.pad = 0;
	sl_stat_inc(&io_stats, SL_IOST_COMPLETE);

	h = bpf_map_lookup_elem(&io_hist, &k);
	if (!h) {
		bpf_map_update_elem(&io_hist, &k, &zero_hist, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&io_hist, &k);
	}
	if (h) {
		__u32 s = sl_l2h_slot_bpf(dns, SL_IO_SLOTS);
		if (s < SL_IO_SLOTS)
			h->device[s]++;
		h->device_sum_ns += dns;
		if (dns > h->device_max_ns)
			h->device_max_ns = dns;
		if (r.insert_ns) {
			s = sl_l2h_slot_bpf(qns, SL_IO_SLOTS);
			if (s < SL_IO_SLOTS)
				h->queue[s]++;
			h->queue_sum_ns += qns;
			if (qns > h->queue_max_ns)
				h->queue_max_ns = qns;
		} else {
			h->direct++;
		}
		h->requests++;
		h->bytes += nr_bytes;
		h->errors += error != 0;
	} else {
		sl_stat_inc(&io_stats, SL_IOST_HIST_FULL);
	}
	if (qns + dns >= slow_threshold_ns)
		emit_slow(rq, &r, &k, now, qns, dns, error);
	return 0;
}

/* ---------- above the block layer: per task cgroup pair ---------- */

static __always_inline struct sl_io_cg *cg_get(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct sl_io_cg_key k;
	struct sl_io_cg *v;

	sl_task_cgroup_key(t, &k.cgroup_id, &k.cgroup_v1_id);
	v = bpf_map_lookup_elem(&io_cg, &k);
	if (v)
		return v;
	struct sl_io_cg zero = {};
	bpf_map_update_elem(&io_cg, &k, &zero, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&io_cg, &k);
	if (!v)
		sl_stat_inc(&io_stats, SL_IOST_CG_FULL);
	return v;
}

struct folio___new {
	unsigned long _flags_1;
} __attribute__((preserve_access_index));
/* folio->flags before memdesc_flags_t (6.17) */
struct folio___oldflags {
	unsigned long flags;
} __attribute__((preserve_access_index));

/* Pages of a folio: 1, or 2^order for a large folio (PG_head set; order
 * in the low byte of _flags_1 since 6.1, folio_order()). Direct loads:
 * the folio is the tracepoint's (trusted) argument. */
static __always_inline __u64 folio_pages(struct folio *f)
{
	unsigned long flags;
	int head = bpf_core_enum_value_exists(enum pageflags, PG_head) ? bpf_core_enum_value(enum pageflags, PG_head)
									: 6;

	if (bpf_core_type_exists(memdesc_flags_t))
		flags = f->flags.f;
	else
		flags = ((struct folio___oldflags *)f)->flags;
	if (!(flags & (1UL << (head & 63))))
		return 1;
	if (!bpf_core_field_exists(((struct folio___new *)f)->_flags_1))
		return 1;
	return 1ULL << (((struct folio___new *)f)->_flags_1 & 0x3f);
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(io_pagecache_add, struct folio *folio)
{
	struct sl_io_cg *v = cg_get();

	if (v)
		v->pagecache_added += folio_pages(folio);
	return 0;
}

SEC("tp_btf/page_cache_sync_ra")
int BPF_PROG(io_ra_sync)
{
	struct sl_io_cg *v = cg_get();

	if (v)
		v->ra_sync++;
	return 0;
}

SEC("tp_btf/page_cache_async_ra")
int BPF_PROG(io_ra_async)
{
	struct sl_io_cg *v = cg_get();

	if (v)
		v->ra_async++;
	return 0;
}

SEC("tp_btf/page_cache_ra_unbounded")
int BPF_PROG(io_ra_unbounded, struct inode *inode, unsigned long index, unsigned long nr_to_read)
{
	struct sl_io_cg *v = cg_get();

	if (v)
		v->ra_pages += nr_to_read;
	return 0;
}

SEC("tp_btf/balance_dirty_pages")
int BPF_PROG(io_dirty_throttle, struct bdi_writeback *wb, struct dirty_throttle_control *dtc,
	     unsigned long dirty_ratelimit, unsigned long task_ratelimit, unsigned long dirtied,
	     unsigned long period, long pause)
{
	struct sl_io_cg *v;

	if (pause <= 0)
		return 0;
	v = cg_get();
	if (v) {
		v->dirty_throttled++;
		if (CONFIG_HZ)
			v->dirty_pause_ns += (__u64)pause * (1000000000ULL / CONFIG_HZ);
	}
	return 0;
}
