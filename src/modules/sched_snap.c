/* sched module, read side: snapshot publication (reference counted), the
 * Prometheus families and the GET /api/v1/sched body. Runs on API threads:
 * reads only the published snapshot, atomics and BPF maps. */
#include "modules/sched.h"
#include "modules/sched_hist.h"
#include "modules/sched_internal.h"
#include "cgroup/attr_labels.h"
#include "common/timefmt.h"
#include "sched.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sched_snap *sched_snap_get(struct sched_priv *sp)
{
	struct sched_snap *s;

	pthread_mutex_lock(&sp->snap_lock);
	s = sp->snap;
	if (s)
		atomic_fetch_add(&s->refs, 1);
	pthread_mutex_unlock(&sp->snap_lock);
	return s;
}

void sched_snap_put(struct sched_snap *s)
{
	if (s && atomic_fetch_sub(&s->refs, 1) == 1)
		free(s);
}

void sched_snap_publish(struct sched_priv *sp, struct sched_snap *s)
{
	struct sched_snap *old;

	pthread_mutex_lock(&sp->snap_lock);
	old = sp->snap;
	sp->snap = s;
	pthread_mutex_unlock(&sp->snap_lock);
	sched_snap_put(old);
}

/* ---------- /metrics ---------- */

static uint64_t stat_sum(struct sched_priv *sp, uint32_t idx)
{
	return sl_percpu_sum(bpf_map__fd(sp->skel->maps.sched_stats), idx, sp->ncpus);
}

/* Identity labels of a series, the one scheme of /metrics
 * (cgroup/attr_labels.h), then one extra label (xname NULL: none),
 * terminated. Values point into s and *a. */
static void series_labels(const struct sched_snap_series *s, struct sl_attr *a, struct sl_prom_label *l,
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

void sched_write_drops(struct sl_module *m, struct sl_prom *p);
void sched_write_metrics(struct sl_module *m, struct sl_prom *p);

void sched_write_drops(struct sl_module *m, struct sl_prom *p)
{
	struct sched_priv *sp = m->priv;
	const struct sl_prom_label l[] = {{"reason", "ratelimit_expired"}, {"type", "sched_delay"}, {NULL, NULL}};

	sl_prom_u64(p, "sandlens_events_dropped_total", l, atomic_load(&sp->ratelimit_expired));
}

enum {
	F_LATENCY, F_WAIT, F_CGROUPS, F_PAIRS, F_NOT_COUNTED,
	F_SERIES_DROPPED, F_WATCH_ENTRIES, F_WATCH_FULL, F_DELAY_SEEN, F_DELAY_RL, F_DELAY_TRUNC, F_RB_FAIL,
	F_TASK_STORAGE,
};
_Static_assert(F_TASK_STORAGE + 1 == SL_SCHED_NFAMILIES, "one index per declared family");

static void fam(struct sl_prom *p, unsigned i)
{
	sl_prom_declared(p, &sl_sched_families[i]);
}

static void one(struct sl_prom *p, unsigned i, uint64_t v)
{
	fam(p, i);
	sl_prom_u64(p, sl_sched_families[i].name, NULL, v);
}

void sched_write_metrics(struct sl_module *m, struct sl_prom *p)
{
	struct sched_priv *sp = m->priv;
	struct sched_snap *snap = sched_snap_get(sp);
	static const char *const cls[3] = {"idle", "internal", "external"};
	double le[SL_SCHED_FINITE_SLOTS];

	for (unsigned k = 0; k < SL_SCHED_FINITE_SLOTS; k++)
		le[k] = (double)sl_sched_slot_upper_ns(k) / 1e9;
	fam(p, F_LATENCY);
	for (int i = 0; snap && i < snap->n; i++) {
		const struct sched_snap_series *s = &snap->s[i];
		struct sl_prom_label l[SL_ATTR_LABELS_MAX + 2];
		struct sl_attr a;
		series_labels(s, &a, l, NULL, NULL);
		sl_prom_histogram(p, sl_sched_families[F_LATENCY].name, l, le, s->slots, SL_SCHED_FINITE_SLOTS,
				  (double)s->sum_ns / 1e9);
	}
	fam(p, F_WAIT);
	for (int i = 0; snap && i < snap->n; i++)
		for (int c = 0; c < 3; c++) {
			struct sl_prom_label l[SL_ATTR_LABELS_MAX + 2];
			struct sl_attr a;
			series_labels(&snap->s[i], &a, l, "contention", cls[c]);
			sl_prom_f64(p, sl_sched_families[F_WAIT].name, l, (double)snap->s[i].class_ns[c] / 1e9);
		}
	/* CFS throttling is exported once, by the statistics collector
	 * (container_cpu_cfs_*, docs/STATS.md); the API and sandlens top keep
	 * it from this snapshot */
	sched_snap_put(snap);

	one(p, F_CGROUPS, atomic_load(&sp->nkeys));
	one(p, F_PAIRS, atomic_load(&sp->npairs));
	fam(p, F_NOT_COUNTED);
	{
		const struct sl_prom_label h[] = {{"map", "sched_hist"}, {NULL, NULL}};
		const struct sl_prom_label q[] = {{"map", "sched_pairs"}, {NULL, NULL}};
		sl_prom_u64(p, sl_sched_families[F_NOT_COUNTED].name, h, stat_sum(sp, SL_SST_HIST_FULL));
		sl_prom_u64(p, sl_sched_families[F_NOT_COUNTED].name, q, stat_sum(sp, SL_SST_PAIR_FULL));
	}
	one(p, F_SERIES_DROPPED, atomic_load(&sp->series_dropped));
	one(p, F_WATCH_ENTRIES, atomic_load(&sp->watch_entries));
	one(p, F_WATCH_FULL, atomic_load(&sp->watch_full));
	one(p, F_DELAY_SEEN, stat_sum(sp, SL_SST_DELAY_SEEN));
	one(p, F_DELAY_RL, stat_sum(sp, SL_SST_DELAY_RATE_LIMITED));
	one(p, F_DELAY_TRUNC, atomic_load(&sp->truncated_total));
	one(p, F_RB_FAIL, stat_sum(sp, SL_SST_DELAY_RB_FAIL));
	one(p, F_TASK_STORAGE, stat_sum(sp, SL_SST_TASK_STORAGE));
}

/* ---------- API ---------- */

static json_t *ident_json(const char *id, const char *pod, const char *rt, int host)
{
	json_t *o = json_object();
	json_object_set_new(o, "container_id", json_string(id));
	json_object_set_new(o, "pod_uid", json_string(pod));
	json_object_set_new(o, "runtime", json_string(rt));
	json_object_set_new(o, "host", json_boolean(host));
	return o;
}

static json_t *series_json(const struct sched_snap_series *s, uint64_t interval_ns)
{
	json_t *o = ident_json(s->id, s->pod_uid, s->runtime, s->is_host);
	json_t *iv = json_object(), *tot = json_object(), *cg = json_array(), *nb = json_array();
	double ivs = (double)interval_ns / 1e9;

	for (int i = 0; i < s->ncg; i++)
		json_array_append_new(cg, json_integer((json_int_t)s->cgids[i]));
	json_object_set_new(o, "cgroup_ids", cg);

	json_object_set_new(iv, "waits", json_integer((json_int_t)s->iv_count));
	json_object_set_new(iv, "waits_per_second", json_real(ivs > 0 ? (double)s->iv_count / ivs : 0));
	json_object_set_new(iv, "wait_seconds", json_real((double)s->iv_sum_ns / 1e9));
	json_object_set_new(iv, "p50_seconds", json_real(s->iv_p50_ns / 1e9));
	json_object_set_new(iv, "p90_seconds", json_real(s->iv_p90_ns / 1e9));
	json_object_set_new(iv, "p99_seconds", json_real(s->iv_p99_ns / 1e9));
	json_object_set_new(iv, "max_seconds", json_real((double)s->iv_max_ns / 1e9));
	json_object_set_new(iv, "internal_seconds", json_real((double)s->iv_class_ns[SL_SCHED_INTERNAL] / 1e9));
	json_object_set_new(iv, "external_seconds", json_real((double)s->iv_class_ns[SL_SCHED_EXTERNAL] / 1e9));
	json_object_set_new(iv, "idle_seconds", json_real((double)s->iv_class_ns[SL_SCHED_IDLE] / 1e9));
	if (s->iv_cpu_ns >= 0) {
		double run = (double)s->iv_cpu_ns, wait = (double)s->iv_sum_ns;
		json_object_set_new(iv, "cpu_seconds", json_real(run / 1e9));
		json_object_set_new(iv, "runnable_wait_share", json_real(run + wait > 0 ? wait / (run + wait) : 0));
	} else {
		json_object_set_new(iv, "cpu_seconds", json_null());
		json_object_set_new(iv, "runnable_wait_share", json_null());
	}
	json_object_set_new(iv, "waiting_tasks", json_real(interval_ns ? (double)s->iv_sum_ns / (double)interval_ns : 0));
	json_object_set_new(o, "interval", iv);

	json_object_set_new(tot, "waits", json_integer((json_int_t)sl_sched_count(s->slots)));
	json_object_set_new(tot, "wait_seconds", json_real((double)s->sum_ns / 1e9));
	json_object_set_new(tot, "internal_seconds", json_real((double)s->class_ns[SL_SCHED_INTERNAL] / 1e9));
	json_object_set_new(tot, "external_seconds", json_real((double)s->class_ns[SL_SCHED_EXTERNAL] / 1e9));
	json_object_set_new(tot, "idle_seconds", json_real((double)s->class_ns[SL_SCHED_IDLE] / 1e9));
	json_object_set_new(o, "total", tot);

	if (s->has_throttle) {
		json_t *th = json_object();
		json_object_set_new(th, "nr_periods", json_integer((json_int_t)s->nr_periods));
		json_object_set_new(th, "nr_throttled", json_integer((json_int_t)s->nr_throttled));
		json_object_set_new(th, "throttled_seconds", json_real((double)s->throttled_ns / 1e9));
		json_object_set_new(th, "interval_nr_throttled", json_integer((json_int_t)s->iv_nr_throttled));
		json_object_set_new(th, "interval_throttled_seconds", json_real((double)s->iv_throttled_ns / 1e9));
		json_object_set_new(o, "throttling", th);
	} else {
		json_object_set_new(o, "throttling", json_null());
	}
	for (int i = 0; i < s->nneigh; i++) {
		const struct sched_neigh *n = &s->neigh[i];
		json_t *no = ident_json(n->id, n->pod_uid, n->runtime, n->is_host);
		json_object_set_new(no, "wait_seconds", json_real((double)n->wait_ns / 1e9));
		json_object_set_new(no, "waits", json_integer((json_int_t)n->count));
		json_object_set_new(no, "interval_wait_seconds", json_real((double)n->iv_wait_ns / 1e9));
		json_object_set_new(no, "interval_waits", json_integer((json_int_t)n->iv_count));
		json_array_append_new(nb, no);
	}
	json_object_set_new(o, "neighbours", nb);
	return o;
}

json_t *sl_sched_view(struct sl_module *m, const struct sl_view_param *p, size_t n, unsigned *status,
		      char *err, size_t errlen)
{
	struct sched_snap *snap;
	json_t *root, *arr;
	char tbuf[SL_TIME_RFC3339_MAX];

	(void)p;
	(void)n; /* declares no parameters: the agent refused any */
	if (!m || !m->priv) {
		*status = 503;
		snprintf(err, errlen, "the sched module is not running");
		return NULL;
	}
	snap = sched_snap_get(m->priv);
	root = json_object();
	arr = json_array();
	if (snap) {
		sl_time_format((int64_t)snap->time_mono_ns + sl_module_mono_to_real_ns(m), tbuf, sizeof(tbuf));
		json_object_set_new(root, "time", json_string(tbuf));
		json_object_set_new(root, "interval_seconds", json_real((double)snap->interval_ns / 1e9));
		for (int i = 0; i < snap->n; i++)
			json_array_append_new(arr, series_json(&snap->s[i], snap->interval_ns));
	} else {
		json_object_set_new(root, "time", json_null());
		json_object_set_new(root, "interval_seconds", json_real(0));
	}
	json_object_set_new(root, "containers", arr);
	sched_snap_put(snap);
	return root;
}

/* ---------- series (GET /api/v1/series, docs/SCHED.md "Series") ---------- */

int sl_sched_read_series(struct sl_module *m, unsigned idx, struct sl_series_point *out, size_t max)
{
	struct sched_snap *snap;
	size_t w = 0;

	if (!m || !m->priv)
		return -ENODEV;
	if (idx >= SL_SCHED_NSERIES)
		return -EINVAL;
	snap = sched_snap_get(m->priv);
	for (int i = 0; snap && i < snap->n && w < max; i++) {
		const struct sched_snap_series *s = &snap->s[i];
		struct sl_series_point *o = &out[w++];
		memset(o, 0, sizeof(*o));
		snprintf(o->container_id, sizeof(o->container_id), "%s", s->id);
		snprintf(o->pod_uid, sizeof(o->pod_uid), "%s", s->pod_uid);
		o->cgroup_id = s->ncg ? s->cgids[0] : 0;
		o->ts_ns = snap->time_mono_ns;
		if (idx == 0)
			o->value = s->iv_p99_ns / 1e9;
		else
			o->value = snap->interval_ns ? (double)s->iv_sum_ns / (double)snap->interval_ns : 0;
	}
	sched_snap_put(snap);
	return (int)w;
}
