// SPDX-License-Identifier: GPL-2.0
/* mem module, kernel half (SYS-1): reclaim and compaction latency per
 * cgroup, memcg reclaim per memcg, kswapd wake-ups and reclaim throttling
 * per node, mem_stall events. Definitions: docs/MEM.md; ABI:
 * include/sandlens/mem.h.
 *
 * Hooks (tp_btf only; each program is loaded only when its tracepoint is
 * in the kernel's BTF, src/modules/mem.c, so a missing one degrades its
 * figure and nothing else):
 *   vmscan:mm_vmscan_direct_reclaim_begin/end   direct reclaim, task's cgroup pair
 *   vmscan:mm_vmscan_memcg_reclaim_begin/end    memcg reclaim, the inferred memcg
 *   vmscan:mm_vmscan_lru_shrink_inactive        pages scanned inside a run
 *   compaction:mm_compaction_try_to_compact_pages  arms direct compaction
 *   compaction:mm_compaction_begin/end          one zone's run (armed tasks)
 *   vmscan:mm_vmscan_kswapd_wake, mm_vmscan_wakeup_kswapd   per node
 *   vmscan:mm_vmscan_throttled                  throttle delays
 *   cgroup:cgroup_rmdir                         queue removed cgroups (mem_gone)
 *
 * Run state lives in task storage (no pid hash). Histograms are a per-CPU
 * hash (no atomics). Reclaim is slow (µs to s) next to these programs, so
 * pointers are read with BPF_CORE_READ (works on every attach type) except
 * on the frequent lru_shrink_inactive path, which only looks up storage.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "task_id.bpf.h"
#include "log2hist.bpf.h"
#include "sandlens/mem.h"
#include "sandlens/token_bucket.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load (src/modules/mem.c). */
const volatile __u64 stall_threshold_ns = 50000000; /* mem.stall_threshold */
const volatile __u64 stall_rate = 5;                /* mem.stall_rate, per cgroup pair; 0 = no limit */
const volatile __u64 stall_burst = 10;              /* mem.stall_burst */
const volatile int v1_hierarchy_id = -1;            /* hierarchy of attribution.v1_controller */
/* Degradation step 2 (set_rate_shift op): rate and burst >> rate_shift. */
volatile __u32 rate_shift = 0;

#define PF_KTHREAD_FLAG 0x00200000
/* An armed direct compaction counts zone runs for this long at most. */
#define COMPACT_ARM_NS (10ULL * 1000000000ULL)

struct mem_task {
	__u64 direct_ts, memcg_ts, compact_ts, compact_armed;
	__u64 direct_scanned, memcg_scanned;
	__u64 direct_gfp, memcg_gfp, compact_gfp;
	struct sl_mem_key memcg_key;
	__u64 memcg_id;
	__s32 direct_order, memcg_order, compact_order;
	__u32 memcg_src, memcg_v1;
	__u32 memcg_hid; /* hierarchy id of memcg_id's cgroup */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mem_task);
} mem_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024); /* mem.max_cgroups */
	__type(key, struct sl_mem_key);
	__type(value, struct sl_mem_hist);
} mem_hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SL_MEM_MAX_NODES);
	__type(key, __u32);
	__type(value, struct sl_mem_node);
} mem_nodes SEC(".maps");

/* mem_stall token bucket per cgroup pair of the stalled task (kind 0). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024); /* mem.max_cgroups */
	__type(key, struct sl_mem_key);
	__type(value, struct sl_exec_bucket);
} mem_buckets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct sl_mem_gone);
	__type(value, __u8);
} mem_gone SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 10); /* mem.ringbuf_size */
} mem_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SL_MST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} mem_stats SEC(".maps");

static __always_inline __u64 shifted(__u64 v)
{
	return sl_bucket_scale(v, rate_shift);
}


static __always_inline void task_pair(struct task_struct *t, struct sl_mem_key *k, __u32 kind)
{
	k->cgroup_id = sl_task_cgroup_id(t);
	k->cgroup_v1_id = sl_task_cgroup_v1_id(t);
	k->kind = kind;
	k->pad = 0;
}

static __always_inline struct mem_task *mem_task_get(struct task_struct *t, int create)
{
	return bpf_task_storage_get(&mem_task, t, 0, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

static __always_inline void hist_add(const struct sl_mem_key *k, __u64 dur, __u64 scanned, __u64 reclaimed)
{
	struct sl_mem_hist *h = bpf_map_lookup_elem(&mem_hist, k);
	__u32 slot;

	if (!h) {
		struct sl_mem_hist zero = {};
		bpf_map_update_elem(&mem_hist, k, &zero, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&mem_hist, k);
		if (!h) {
			sl_stat_inc(&mem_stats, SL_MST_HIST_FULL_DIRECT + (k->kind & 3));
			return;
		}
	}
	slot = sl_l2h_slot_bpf(dur, SL_MEM_SLOTS);
	if (slot < SL_MEM_SLOTS)
		h->slots[slot]++;
	h->sum_ns += dur;
	if (dur > h->max_ns)
		h->max_ns = dur;
	h->nr_scanned += scanned;
	h->nr_reclaimed += reclaimed;
}

/* The task's own memcg: its css_set's memory css (mem_cgroup embeds the
 * css as its first member, checked at load by the offset relocation). */
static __always_inline struct mem_cgroup *task_memcg(struct task_struct *t)
{
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cset;
	int idx;

	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
		return NULL;
	idx = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	if (idx < 0 || idx >= 32 || bpf_core_field_offset(struct mem_cgroup, css) != 0)
		return NULL;
	cset = BPF_CORE_READ(t, cgroups);
	if (!cset || bpf_core_read(&css, sizeof(css), &cset->subsys[idx]))
		return NULL;
	return (struct mem_cgroup *)css;
}

/* kernfs id and hierarchy id of a memcg's cgroup. */
static __always_inline __u64 memcg_cgid(struct mem_cgroup *m, int *hid)
{
	*hid = BPF_CORE_READ(m, css.cgroup, root, hierarchy_id);
	return BPF_CORE_READ(m, css.cgroup, kn, id);
}

/* Infer the memcg a memcg reclaim run reclaims (docs/MEM.md "memcg"). */
static __always_inline void memcg_infer(struct task_struct *t, struct mem_task *s)
{
	struct mem_cgroup *start = NULL, *m, *pick = NULL;
	__u32 src = SL_MEM_MEMCG_GUESS;
	int hid = 0;

	if (bpf_core_field_exists(t->active_memcg))
		start = BPF_CORE_READ(t, active_memcg);
	if (!start)
		start = task_memcg(t);
	m = start;
	for (int i = 0; i < SL_MEM_MEMCG_DEPTH && m; i++) {
		long usage = BPF_CORE_READ(m, memory.usage.counter);
		unsigned long max = BPF_CORE_READ(m, memory.max), high = BPF_CORE_READ(m, memory.high);
		struct cgroup_subsys_state *parent;

		if ((unsigned long)usage + SL_MEM_LIMIT_MARGIN_PAGES >= max) {
			pick = m;
			src = SL_MEM_MEMCG_AT_MAX;
			break;
		}
		if ((unsigned long)usage > high) {
			pick = m;
			src = SL_MEM_MEMCG_OVER_HIGH;
			break;
		}
		if (bpf_core_field_exists(m->memsw) && BPF_CORE_READ(m, css.cgroup, root, hierarchy_id) != 0) {
			/* v1: memsw (memory + swap) is charged first */
			long su = BPF_CORE_READ(m, memsw.usage.counter);
			unsigned long smax = BPF_CORE_READ(m, memsw.max);
			if ((unsigned long)su + SL_MEM_LIMIT_MARGIN_PAGES >= smax) {
				pick = m;
				src = SL_MEM_MEMCG_AT_MAX;
				break;
			}
		}
		parent = BPF_CORE_READ(m, css.parent);
		m = (struct mem_cgroup *)parent;
	}
	if (!pick)
		pick = start;
	s->memcg_src = src;
	s->memcg_id = 0;
	s->memcg_v1 = 0;
	s->memcg_hid = 0;
	if (pick) {
		s->memcg_id = memcg_cgid(pick, &hid);
		s->memcg_v1 = hid != 0;
		s->memcg_hid = hid > 0 ? (__u32)hid : 0;
	}
	s->memcg_key.kind = SL_MEM_H_MEMCG;
	s->memcg_key.pad = 0;
	if (pick && hid == 0) {
		s->memcg_key.cgroup_id = s->memcg_id;
		s->memcg_key.cgroup_v1_id = 0;
	} else if (pick && hid == v1_hierarchy_id) {
		s->memcg_key.cgroup_id = 0;
		s->memcg_key.cgroup_v1_id = s->memcg_id;
	} else {
		/* memory on a v1 hierarchy the attribution does not index (or no
		 * memcg): the reclaiming task's pair */
		s->memcg_key.cgroup_id = sl_task_cgroup_id(t);
		s->memcg_key.cgroup_v1_id = sl_task_cgroup_v1_id(t);
	}
	if (src == SL_MEM_MEMCG_GUESS)
		sl_stat_inc(&mem_stats, SL_MST_MEMCG_GUESS);
}

static __always_inline void emit_stall(struct task_struct *t, __u32 kind, __u64 now, __u64 dur,
				       __u64 scanned, __u64 reclaimed, __u64 memcg_id, __u32 memcg_hid,
				       __u32 src, __u64 gfp, __s32 order, __s32 status)
{
	struct sl_mem_key bk;
	struct sl_exec_bucket *b = NULL;
	struct sl_mem_stall_event *e;
	__u64 carried = 0;

	sl_stat_inc(&mem_stats, SL_MST_STALL_SEEN);
	if (stall_rate) {
		task_pair(t, &bk, 0);
		b = bpf_map_lookup_elem(&mem_buckets, &bk);
		if (!b) {
			struct sl_exec_bucket nb;
			sl_bucket_init(&nb, now, shifted(stall_burst));
			bpf_map_update_elem(&mem_buckets, &bk, &nb, BPF_NOEXIST);
			b = bpf_map_lookup_elem(&mem_buckets, &bk);
			if (!b) {
				sl_stat_inc(&mem_stats, SL_MST_BUCKET_FULL);
				return;
			}
		}
		if (!sl_bucket_take(b, now, shifted(stall_rate), shifted(stall_burst), &carried)) {
			sl_stat_inc(&mem_stats, SL_MST_STALL_RATE_LIMITED);
			return;
		}
	}
	e = bpf_ringbuf_reserve(&mem_events, sizeof(*e), 0);
	if (!e) {
		sl_stat_inc(&mem_stats, SL_MST_STALL_RB_FAIL);
		if (b)
			sl_bucket_undeliver_rb(b, carried, sl_bucket_take_sub(&b->pending_rb));
		return;
	}
	if (b)
		sl_bucket_take_sub(&b->pending_rb); /* delivered: carried as truncated_count */
	e->hdr.type = SL_EV_MEM_STALL;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts_ns = now;
	sl_fill_task_id(&e->task, t);
	e->duration_ns = dur;
	e->nr_scanned = scanned;
	e->nr_reclaimed = reclaimed;
	e->memcg_id = memcg_id;
	e->truncated_count = carried;
	e->gfp_flags = gfp;
	e->order = order;
	e->kind = kind;
	e->memcg_v1 = memcg_hid != 0;
	e->memcg_src = src;
	e->status = status;
	e->memcg_hierarchy_id = memcg_hid;
	bpf_ringbuf_submit(e, 0);
}

/* The task's own memcg id (for stalls that are not memcg reclaim); *hidp
 * = its hierarchy id (0 = v2). */
static __always_inline __u64 own_memcg(struct task_struct *t, __u32 *hidp)
{
	struct mem_cgroup *m = task_memcg(t);
	int hid = 0;
	__u64 id;

	*hidp = 0;
	if (!m)
		return 0;
	id = memcg_cgid(m, &hid);
	*hidp = hid > 0 ? (__u32)hid : 0;
	return id;
}

/* ---------- direct reclaim ---------- */

SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(mem_direct_begin, int order, gfp_t gfp)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct mem_task *s = mem_task_get(t, 1);

	if (!s)
		return 0;
	s->direct_ts = bpf_ktime_get_ns();
	s->direct_scanned = 0;
	s->direct_gfp = gfp;
	s->direct_order = order;
	s->compact_armed = 0;
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(mem_direct_end, unsigned long nr_reclaimed)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct mem_task *s = mem_task_get(t, 0);
	struct sl_mem_key k;
	__u64 now = bpf_ktime_get_ns(), dur;

	if (!s || !s->direct_ts) {
		sl_stat_inc(&mem_stats, SL_MST_END_NO_BEGIN);
		return 0;
	}
	dur = now - s->direct_ts;
	s->direct_ts = 0;
	sl_stat_inc(&mem_stats, SL_MST_RUNS_DIRECT);
	task_pair(t, &k, SL_MEM_H_DIRECT);
	hist_add(&k, dur, s->direct_scanned, nr_reclaimed);
	if (dur >= stall_threshold_ns) {
		__u32 hid;
		__u64 id = own_memcg(t, &hid);
		emit_stall(t, SL_MEM_STALL_DIRECT_RECLAIM, now, dur, s->direct_scanned, nr_reclaimed, id, hid,
			   0, s->direct_gfp, s->direct_order, -1);
	}
	return 0;
}

/* ---------- memcg reclaim ---------- */

SEC("tp_btf/mm_vmscan_memcg_reclaim_begin")
int BPF_PROG(mem_memcg_begin, int order, gfp_t gfp)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct mem_task *s = mem_task_get(t, 1);

	if (!s)
		return 0;
	memcg_infer(t, s);
	s->memcg_ts = bpf_ktime_get_ns();
	s->memcg_scanned = 0;
	s->memcg_gfp = gfp;
	s->memcg_order = order;
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_end")
int BPF_PROG(mem_memcg_end, unsigned long nr_reclaimed)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct mem_task *s = mem_task_get(t, 0);
	__u64 now = bpf_ktime_get_ns(), dur;

	if (!s || !s->memcg_ts) {
		sl_stat_inc(&mem_stats, SL_MST_END_NO_BEGIN);
		return 0;
	}
	dur = now - s->memcg_ts;
	s->memcg_ts = 0;
	sl_stat_inc(&mem_stats, SL_MST_RUNS_MEMCG);
	hist_add(&s->memcg_key, dur, s->memcg_scanned, nr_reclaimed);
	if (dur >= stall_threshold_ns)
		emit_stall(t, SL_MEM_STALL_MEMCG_RECLAIM, now, dur, s->memcg_scanned, nr_reclaimed, s->memcg_id,
			   s->memcg_hid, s->memcg_src, s->memcg_gfp, s->memcg_order, -1);
	return 0;
}

/* Pages scanned inside a run of the current task (shrink_inactive_list;
 * the kernel counts the same nr_scanned as pgscan_direct/pgscan_kswapd). */
SEC("tp_btf/mm_vmscan_lru_shrink_inactive")
int BPF_PROG(mem_shrink_inactive, int nid, unsigned long nr_scanned)
{
	struct mem_task *s = mem_task_get(bpf_get_current_task_btf(), 0);

	if (!s)
		return 0;
	if (s->memcg_ts)
		s->memcg_scanned += nr_scanned;
	else if (s->direct_ts)
		s->direct_scanned += nr_scanned;
	return 0;
}

/* ---------- direct compaction ---------- */

SEC("tp_btf/mm_compaction_try_to_compact_pages")
int BPF_PROG(mem_compact_try, int order, gfp_t gfp, int prio)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct mem_task *s;

	if (BPF_CORE_READ(t, flags) & PF_KTHREAD_FLAG)
		return 0;
	s = mem_task_get(t, 1);
	if (!s)
		return 0;
	s->compact_armed = bpf_ktime_get_ns();
	s->compact_gfp = gfp;
	s->compact_order = order;
	return 0;
}

SEC("tp_btf/mm_compaction_begin")
int BPF_PROG(mem_compact_begin, struct compact_control *cc)
{
	struct mem_task *s = mem_task_get(bpf_get_current_task_btf(), 0);
	__u64 now;

	if (!s || !s->compact_armed)
		return 0;
	now = bpf_ktime_get_ns();
	if (now - s->compact_armed > COMPACT_ARM_NS) {
		s->compact_armed = 0;
		return 0;
	}
	s->compact_ts = now;
	return 0;
}

SEC("tp_btf/mm_compaction_end")
int BPF_PROG(mem_compact_end, struct compact_control *cc, unsigned long zone_start, unsigned long zone_end,
	     bool sync, int status)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct mem_task *s = mem_task_get(t, 0);
	struct sl_mem_key k;
	__u64 now = bpf_ktime_get_ns(), dur;

	if (!s || !s->compact_ts)
		return 0;
	dur = now - s->compact_ts;
	s->compact_ts = 0;
	sl_stat_inc(&mem_stats, SL_MST_RUNS_COMPACT);
	task_pair(t, &k, SL_MEM_H_COMPACT);
	hist_add(&k, dur, 0, 0);
	if (dur >= stall_threshold_ns) {
		__u32 hid;
		__u64 id = own_memcg(t, &hid);
		emit_stall(t, SL_MEM_STALL_COMPACTION, now, dur, 0, 0, id, hid, 0, s->compact_gfp,
			   s->compact_order, status);
	}
	return 0;
}

/* ---------- kswapd, throttling ---------- */

static __always_inline struct sl_mem_node *node_of(int nid)
{
	__u32 i = nid < 0 ? 0 : (nid >= SL_MEM_MAX_NODES ? SL_MEM_MAX_NODES - 1 : (__u32)nid);
	return bpf_map_lookup_elem(&mem_nodes, &i);
}

SEC("tp_btf/mm_vmscan_kswapd_wake")
int BPF_PROG(mem_kswapd_wake, int nid, int zid, int order)
{
	struct sl_mem_node *n = node_of(nid);
	if (n)
		n->kswapd_wake++;
	return 0;
}

SEC("tp_btf/mm_vmscan_wakeup_kswapd")
int BPF_PROG(mem_wakeup_kswapd, int nid, int zid, int order, gfp_t gfp)
{
	struct sl_mem_node *n = node_of(nid);
	if (n)
		n->wakeup_kswapd++;
	return 0;
}

SEC("tp_btf/mm_vmscan_throttled")
int BPF_PROG(mem_throttled, int nid, int usec_timeout, int usec_delayed, int reason)
{
	struct sl_mem_node *n = node_of(nid);
	struct sl_mem_key k;
	__u64 us = usec_delayed > 0 ? (__u64)usec_delayed : 0;

	if (n) {
		n->throttled++;
		n->throttled_us += us;
	}
	sl_stat_inc(&mem_stats, SL_MST_RUNS_THROTTLE);
	task_pair(bpf_get_current_task_btf(), &k, SL_MEM_H_THROTTLE);
	hist_add(&k, us * 1000, 0, 0);
	return 0;
}

/* ---------- removed cgroups ---------- */

struct rmdir_ctx {
	__u64 id;
	int v1;
};

static long rm_key(struct bpf_map *map, const void *key, void *val, void *ctx)
{
	const struct sl_mem_key *k = key;
	struct rmdir_ctx *c = ctx;

	if ((c->v1 ? k->cgroup_v1_id : k->cgroup_id) == c->id && bpf_map_delete_elem(map, key) == 0)
		sl_stat_inc(&mem_stats, SL_MST_GONE_FULL);
	return 0;
}

SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(mem_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	int hid = BPF_CORE_READ(cgrp, root, hierarchy_id);
	struct rmdir_ctx c;
	__u8 one = 1;

	if (hid != 0 && hid != v1_hierarchy_id)
		return 0;
	c.id = BPF_CORE_READ(cgrp, kn, id);
	c.v1 = hid != 0;
	struct sl_mem_gone g = {.id = c.id, .v1 = c.v1};
	if (bpf_map_update_elem(&mem_gone, &g, &one, BPF_ANY) == 0)
		return 0; /* user space deletes the entries after its next read */
	bpf_for_each_map_elem(&mem_hist, rm_key, &c, 0);
	bpf_for_each_map_elem(&mem_buckets, rm_key, &c, 0);
	return 0;
}
