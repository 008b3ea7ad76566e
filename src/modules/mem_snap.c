/* mem module, read side: snapshot publication (reference counted), the
 * Prometheus families, the GET /api/v1/mem body and the series. Runs on API
 * threads: reads only the published snapshot, atomics and BPF maps. */
#include "cgroup/attr_labels.h"
#include "modules/mem_decode.h"
#include "modules/mem_hist.h"
#include "modules/mem_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const struct sl_prom_family sl_mem_families[MEM_NFAM] = {
	[MF_DIRECT] = {"sandlens_mem_direct_reclaim_seconds", SL_PROM_HISTOGRAM,
		       "Direct reclaim runs (vmscan:mm_vmscan_direct_reclaim_begin to _end) of the container's tasks; docs/MEM.md."},
	[MF_MEMCG] = {"sandlens_mem_memcg_reclaim_seconds", SL_PROM_HISTOGRAM,
		      "Memcg reclaim runs (vmscan:mm_vmscan_memcg_reclaim_begin to _end) reclaiming the container's memcg (inferred: docs/MEM.md)."},
	[MF_COMPACT] = {"sandlens_mem_compaction_seconds", SL_PROM_HISTOGRAM,
			"Direct compaction runs (compaction:mm_compaction_begin to _end, one zone each) of the container's tasks."},
	[MF_THROTTLE] = {"sandlens_mem_throttle_seconds", SL_PROM_HISTOGRAM,
			 "Reclaim throttling delays (vmscan:mm_vmscan_throttled usec_delayed) of the container's tasks."},
	[MF_SCANNED] = {"sandlens_mem_pages_scanned_total", SL_PROM_COUNTER,
			"Pages scanned during the container's reclaim runs (vmscan:mm_vmscan_lru_shrink_inactive nr_scanned), by kind."},
	[MF_RECLAIMED] = {"sandlens_mem_pages_reclaimed_total", SL_PROM_COUNTER,
			  "Pages reclaimed by the container's reclaim runs (the _end tracepoints' nr_reclaimed), by kind."},
	[MF_KSWAPD_WAKE] = {"sandlens_mem_kswapd_wakeups_total", SL_PROM_COUNTER,
			    "kswapd wake-ups per NUMA node (vmscan:mm_vmscan_kswapd_wake)."},
	[MF_KSWAPD_REQ] = {"sandlens_mem_kswapd_wakeup_requests_total", SL_PROM_COUNTER,
			   "Allocations that asked kswapd to wake, per node (vmscan:mm_vmscan_wakeup_kswapd)."},
	[MF_THROTTLED] = {"sandlens_mem_reclaim_throttled_total", SL_PROM_COUNTER,
			  "Reclaim throttle events per node (vmscan:mm_vmscan_throttled)."},
	[MF_THROTTLED_S] = {"sandlens_mem_reclaim_throttled_seconds_total", SL_PROM_COUNTER,
			    "Time spent throttled in reclaim per node (sum of usec_delayed)."},
	[MF_RUNS] = {"sandlens_mem_runs_total", SL_PROM_COUNTER,
		     "Runs the kernel half saw end (with their begin), by kind: Σ histogram counts + sandlens_mem_runs_expired_total + sandlens_mem_runs_not_counted_total."},
	[MF_NOT_COUNTED] = {"sandlens_mem_runs_not_counted_total", SL_PROM_COUNTER,
			    "Runs in no exported histogram, by kind and reason (hist_full, series_full, evicted, gone_full)."},
	[MF_EXPIRED] = {"sandlens_mem_runs_expired_total", SL_PROM_COUNTER,
			"Runs of series removed after all their cgroups were gone and mem.series_idle_ticks without a run (exported while they lived), by kind."},
	[MF_CGROUPS] = {"sandlens_mem_cgroups", SL_PROM_GAUGE, "Entries (cgroup pair x kind) in the kernel mem_hist map, last tick."},
	[MF_SERIES] = {"sandlens_mem_series", SL_PROM_GAUGE, "Series (containers + host) in the mem snapshot."},
	[MF_MEMCG_GUESS] = {"sandlens_mem_memcg_guessed_total", SL_PROM_COUNTER,
			    "Memcg reclaim runs whose memcg had no counter near a limit (attributed to the task's own memcg)."},
	[MF_STALL_SEEN] = {"sandlens_mem_stall_seen_total", SL_PROM_COUNTER, "Runs at or above mem.stall_threshold."},
	[MF_STALL_RL] = {"sandlens_mem_stall_rate_limited_total", SL_PROM_COUNTER,
			 "mem_stall events suppressed by the per-cgroup token bucket (carried as truncated_count)."},
	[MF_STALL_TRUNC] = {"sandlens_mem_stall_truncated_total", SL_PROM_COUNTER,
			    "Sum of truncated_count over delivered mem_stall events."},
	[MF_RB_FAIL] = {"sandlens_mem_ringbuf_reserve_failures_total", SL_PROM_COUNTER,
			"mem_stall ring buffer reservations that failed (carried as truncated_count)."},
};

struct mem_snap *mem_snap_get(struct mem_priv *mp)
{
	return (struct mem_snap *)sl_snapref_get(&mp->snap);
}

void mem_snap_put(struct mem_snap *s)
{
	sl_snap_put(s ? &s->h : NULL);
}

void mem_snap_publish(struct mem_priv *mp, struct mem_snap *s)
{
	sl_snapref_publish(&mp->snap, s ? &s->h : NULL);
}

/* ---------- /metrics ---------- */

/* Identity labels of a series, the one scheme of /metrics
 * (cgroup/attr_labels.h), then one extra label (xname NULL: none),
 * terminated; l has room for ID_LABELS_MAX. Values point into s and *a. */
#define ID_LABELS_MAX (SL_ATTR_LABELS_MAX + 2)
static void id_labels(struct sl_prom_label *l, struct sl_attr *a, const struct mem_snap_series *s,
		      const char *xname, const char *xval)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->container_id, sizeof(a->container_id), "%s", s->id);
	snprintf(a->pod_uid, sizeof(a->pod_uid), "%s", s->pod_uid);
	snprintf(a->runtime, sizeof(a->runtime), "%s", s->runtime);
	a->names = s->names;
	size_t n = sl_attr_labels(a, l);
	l[n++] = (struct sl_prom_label){xname, xval};
	l[n] = (struct sl_prom_label){NULL, NULL};
}

static void write_hist(struct sl_prom *p, const struct mem_snap *snap, unsigned kind)
{
	const struct sl_prom_family *f = &sl_mem_families[MF_DIRECT + kind];
	double le[SL_MEM_FINITE_SLOTS];
	struct sl_prom_label l[ID_LABELS_MAX];
	struct sl_attr a;

	for (unsigned k = 0; k < SL_MEM_FINITE_SLOTS; k++)
		le[k] = sl_mem_slot_le_seconds(k);
	if (sl_prom_declared(p, f))
		return;
	for (int i = 0; snap && i < snap->n; i++) {
		const struct mem_snap_series *s = &snap->s[i];
		const struct mem_fig *g = &s->tot[kind];
		if (!sl_mem_count(g->slots))
			continue; /* no runs: no series (an idle neighbour shows none) */
		id_labels(l, &a, s, NULL, NULL);
		sl_prom_histogram(p, f->name, l, le, g->slots, SL_MEM_FINITE_SLOTS, (double)g->sum_ns / 1e9);
	}
}

static void write_pages(struct sl_prom *p, const struct mem_snap *snap, int reclaimed)
{
	const struct sl_prom_family *f = &sl_mem_families[reclaimed ? MF_RECLAIMED : MF_SCANNED];
	struct sl_prom_label l[ID_LABELS_MAX];
	struct sl_attr a;
	char name[96];

	if (sl_prom_declared(p, f))
		return;
	snprintf(name, sizeof(name), "%s", f->name);
	for (int i = 0; snap && i < snap->n; i++)
		for (unsigned k = SL_MEM_H_DIRECT; k <= SL_MEM_H_MEMCG; k++) {
			const struct mem_fig *g = &snap->s[i].tot[k];
			if (!sl_mem_count(g->slots))
				continue;
			id_labels(l, &a, &snap->s[i], "kind", sl_mem_hist_kind_name(k));
			sl_prom_u64(p, name, l, reclaimed ? g->nr_reclaimed : g->nr_scanned);
		}
}

static void write_nodes(struct sl_prom *p, const struct mem_snap *snap, unsigned fam)
{
	const struct sl_prom_family *f = &sl_mem_families[fam];
	char node[24];

	if (sl_prom_declared(p, f) || !snap)
		return;
	for (uint64_t i = 0; i < snap->nodes_n; i++) {
		const struct sl_mem_node *n = &snap->nodes[i];
		struct sl_prom_label l[2] = {{"node", node}, {NULL, NULL}};
		snprintf(node, sizeof(node), "%llu", (unsigned long long)i);
		switch (fam) {
		case MF_KSWAPD_WAKE: sl_prom_u64(p, f->name, l, n->kswapd_wake); break;
		case MF_KSWAPD_REQ: sl_prom_u64(p, f->name, l, n->wakeup_kswapd); break;
		case MF_THROTTLED: sl_prom_u64(p, f->name, l, n->throttled); break;
		default: sl_prom_f64(p, f->name, l, (double)n->throttled_us / 1e6); break;
		}
	}
}

static void one(struct sl_prom *p, unsigned fam, uint64_t v)
{
	if (sl_prom_declared(p, &sl_mem_families[fam]) == 0)
		sl_prom_u64(p, sl_mem_families[fam].name, NULL, v);
}

void mem_write_metrics(struct sl_module *m, struct sl_prom *p)
{
	struct mem_priv *mp = m->priv;
	struct mem_snap *snap;
	static const char *const reasons[2] = {"series_full", "evicted"};

	if (!mp)
		return;
	snap = mem_snap_get(mp);
	for (unsigned k = 0; k < SL_MEM_H_KINDS; k++)
		write_hist(p, snap, k);
	write_pages(p, snap, 0);
	write_pages(p, snap, 1);
	write_nodes(p, snap, MF_KSWAPD_WAKE);
	write_nodes(p, snap, MF_KSWAPD_REQ);
	write_nodes(p, snap, MF_THROTTLED);
	write_nodes(p, snap, MF_THROTTLED_S);
	if (snap && sl_prom_declared(p, &sl_mem_families[MF_RUNS]) == 0)
		for (unsigned k = 0; k < SL_MEM_H_KINDS; k++) {
			struct sl_prom_label l[2] = {{"kind", sl_mem_hist_kind_name(k)}, {NULL, NULL}};
			sl_prom_u64(p, sl_mem_families[MF_RUNS].name, l, snap->stats[SL_MST_RUNS_DIRECT + k]);
		}
	if (snap && sl_prom_declared(p, &sl_mem_families[MF_NOT_COUNTED]) == 0)
		for (unsigned k = 0; k < SL_MEM_H_KINDS; k++) {
			struct sl_prom_label l[3] = {{"kind", sl_mem_hist_kind_name(k)}, {"reason", "hist_full"}, {NULL, NULL}};
			sl_prom_u64(p, sl_mem_families[MF_NOT_COUNTED].name, l, snap->stats[SL_MST_HIST_FULL_DIRECT + k]);
			for (int r = 0; r < 2; r++) {
				l[1].value = reasons[r];
				sl_prom_u64(p, sl_mem_families[MF_NOT_COUNTED].name, l, atomic_load(&mp->not_counted[k][r]));
			}
		}
	if (sl_prom_declared(p, &sl_mem_families[MF_EXPIRED]) == 0)
		for (unsigned k = 0; k < SL_MEM_H_KINDS; k++) {
			struct sl_prom_label l[2] = {{"kind", sl_mem_hist_kind_name(k)}, {NULL, NULL}};
			sl_prom_u64(p, sl_mem_families[MF_EXPIRED].name, l, atomic_load(&mp->expired[k]));
		}
	one(p, MF_CGROUPS, atomic_load(&mp->nkeys));
	one(p, MF_SERIES, atomic_load(&mp->nseries_pub));
	one(p, MF_MEMCG_GUESS, snap ? snap->stats[SL_MST_MEMCG_GUESS] : 0);
	one(p, MF_STALL_SEEN, snap ? snap->stats[SL_MST_STALL_SEEN] : 0);
	one(p, MF_STALL_RL, snap ? snap->stats[SL_MST_STALL_RATE_LIMITED] : 0);
	one(p, MF_STALL_TRUNC, atomic_load(&mp->truncated_total));
	one(p, MF_RB_FAIL, snap ? snap->stats[SL_MST_STALL_RB_FAIL] : 0);
	mem_snap_put(snap);
}

void mem_write_drops(struct sl_module *m, struct sl_prom *p)
{
	struct mem_priv *mp = m->priv;
	struct sl_prom_label l[3] = {{"reason", "ratelimit_expired"}, {"type", "mem_stall"}, {NULL, NULL}};

	if (!mp)
		return;
	sl_prom_u64(p, "sandlens_events_dropped_total", l, atomic_load(&mp->ratelimit_expired));
	l[0].value = "ringbuf_full";
	sl_prom_u64(p, "sandlens_events_dropped_total", l, atomic_load(&mp->ringbuf_expired));
	/* stalls not sent because mem_buckets was full (mem.max_cgroups) */
	struct mem_snap *s = mem_snap_get(mp);
	l[0].value = "ratelimit_table_full";
	sl_prom_u64(p, "sandlens_events_dropped_total", l, s ? s->stats[SL_MST_BUCKET_FULL] : 0);
	mem_snap_put(s);
}

/* ---------- API view: GET /api/v1/mem ---------- */

static json_t *fig_json(const struct mem_snap_series *s, unsigned k, int pages)
{
	const struct mem_fig *t = &s->tot[k], *iv = &s->iv[k];
	json_t *o = json_object(), *i = json_object();

	json_object_set_new(o, "runs", json_integer((json_int_t)sl_mem_count(t->slots)));
	json_object_set_new(o, "seconds", json_real((double)t->sum_ns / 1e9));
	json_object_set_new(o, "p50_seconds", json_real(s->p50_ns[k] / 1e9));
	json_object_set_new(o, "p99_seconds", json_real(s->p99_ns[k] / 1e9));
	json_object_set_new(o, "max_seconds", json_real((double)t->max_ns / 1e9));
	if (pages) {
		json_object_set_new(o, "pages_scanned", json_integer((json_int_t)t->nr_scanned));
		json_object_set_new(o, "pages_reclaimed", json_integer((json_int_t)t->nr_reclaimed));
	}
	json_object_set_new(i, "runs", json_integer((json_int_t)sl_mem_count(iv->slots)));
	json_object_set_new(i, "seconds", json_real((double)iv->sum_ns / 1e9));
	json_object_set_new(i, "p99_seconds", json_real(s->iv_p99_ns[k] / 1e9));
	json_object_set_new(o, "interval", i);
	return o;
}

json_t *mem_view_get(struct sl_module *m, const struct sl_view_param *p, size_t n, unsigned *status, char *err,
		     size_t errlen)
{
	struct mem_priv *mp = m->priv;
	struct mem_snap *snap;
	json_t *root, *arr, *nodes, *nc;

	(void)p;
	(void)n;
	if (!mp) {
		*status = 503;
		snprintf(err, errlen, "the mem module is not running");
		return NULL;
	}
	snap = mem_snap_get(mp);
	root = json_object();
	arr = json_array();
	nodes = json_array();
	nc = json_object();
	json_object_set_new(root, "time_ns", snap ? json_integer((json_int_t)(snap->time_mono_ns +
						(uint64_t)sl_module_mono_to_real_ns(m))) : json_null());
	json_object_set_new(root, "interval_seconds", json_real(snap ? (double)snap->interval_ns / 1e9 : 0));
	for (int i = 0; snap && i < snap->n; i++) {
		const struct mem_snap_series *s = &snap->s[i];
		json_t *o = json_object(), *cg = json_array();
		json_object_set_new(o, "container_id", json_string(s->id));
		json_object_set_new(o, "pod_uid", json_string(s->pod_uid));
		json_object_set_new(o, "runtime", json_string(s->runtime));
		json_object_set_new(o, "host", json_boolean(s->is_host));
		json_object_set_new(o, "kind", json_string(s->is_host ? "host" : s->is_pod ? "pod" : "container"));
		for (int j = 0; j < s->ncg; j++)
			json_array_append_new(cg, json_integer((json_int_t)s->cgids[j]));
		json_object_set_new(o, "cgroup_ids", cg);
		for (unsigned k = 0; k < SL_MEM_H_KINDS; k++)
			json_object_set_new(o, sl_mem_hist_kind_name(k), fig_json(s, k, k <= SL_MEM_H_MEMCG));
		json_array_append_new(arr, o);
	}
	for (uint64_t i = 0; snap && i < snap->nodes_n; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "node", json_integer((json_int_t)i));
		json_object_set_new(o, "kswapd_wakeups", json_integer((json_int_t)snap->nodes[i].kswapd_wake));
		json_object_set_new(o, "kswapd_wakeup_requests", json_integer((json_int_t)snap->nodes[i].wakeup_kswapd));
		json_object_set_new(o, "throttled", json_integer((json_int_t)snap->nodes[i].throttled));
		json_object_set_new(o, "throttled_seconds", json_real((double)snap->nodes[i].throttled_us / 1e6));
		json_array_append_new(nodes, o);
	}
	for (unsigned k = 0; snap && k < SL_MEM_H_KINDS; k++) {
		json_t *o = json_object();
		json_object_set_new(o, "kernel_runs", json_integer((json_int_t)snap->stats[SL_MST_RUNS_DIRECT + k]));
		json_object_set_new(o, "hist_full", json_integer((json_int_t)snap->stats[SL_MST_HIST_FULL_DIRECT + k]));
		json_object_set_new(o, "series_full", json_integer((json_int_t)atomic_load(&mp->not_counted[k][0])));
		json_object_set_new(o, "evicted", json_integer((json_int_t)atomic_load(&mp->not_counted[k][1])));
		json_object_set_new(o, "expired", json_integer((json_int_t)atomic_load(&mp->expired[k])));
		json_object_set_new(nc, sl_mem_hist_kind_name(k), o);
	}
	if (snap)
		json_object_set_new(nc, "gone_full_entries", json_integer((json_int_t)snap->stats[SL_MST_GONE_FULL]));
	json_object_set_new(root, "containers", arr);
	json_object_set_new(root, "nodes", nodes);
	json_object_set_new(root, "accounting", nc);
	mem_snap_put(snap);
	return root;
}

/* ---------- series ---------- */

int mem_read_series(struct sl_module *m, unsigned idx, struct sl_series_point *out, size_t max)
{
	struct mem_priv *mp = m->priv;
	struct mem_snap *snap;
	size_t w = 0;

	if (!mp)
		return -ENODEV;
	if (idx > 1)
		return -EINVAL;
	snap = mem_snap_get(mp);
	for (int i = 0; snap && i < snap->n && w < max; i++) {
		const struct mem_snap_series *s = &snap->s[i];
		if (!s->live) /* its cgroups are gone: nothing to read now */
			continue;
		struct sl_series_point *o = &out[w++];
		memset(o, 0, sizeof(*o));
		snprintf(o->container_id, sizeof(o->container_id), "%s", s->id);
		snprintf(o->pod_uid, sizeof(o->pod_uid), "%s", s->pod_uid);
		o->cgroup_id = s->ncg ? s->cgids[0] : 0;
		o->ts_ns = snap->time_mono_ns;
		if (idx == 0)
			o->value = s->iv_p99_ns[SL_MEM_H_MEMCG] / 1e9;
		else
			o->value = (double)(s->iv[SL_MEM_H_DIRECT].sum_ns + s->iv[SL_MEM_H_MEMCG].sum_ns +
					    s->iv[SL_MEM_H_COMPACT].sum_ns) / 1e9;
	}
	mem_snap_put(snap);
	return (int)w;
}
