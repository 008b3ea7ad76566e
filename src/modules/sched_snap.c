/* sched module, read side: snapshot publication (reference counted), the
 * Prometheus families and the GET /api/v1/sched body. Runs on API threads:
 * reads only the published snapshot, atomics and BPF maps. */
#include "modules/sched.h"
#include "modules/sched_hist.h"
#include "modules/sched_internal.h"
#include "agent/agent.h"
#include "common/timefmt.h"
#include "sched.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
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

static void labels(FILE *out, const struct sched_snap_series *s)
{
	fprintf(out, "container_id=\"%s\",pod_uid=\"%s\",runtime=\"%s\"", s->id, s->pod_uid, s->runtime);
}

void sched_write_drops(struct sl_module *m, FILE *out);
void sched_write_metrics(struct sl_module *m, FILE *out);

void sched_write_drops(struct sl_module *m, FILE *out)
{
	struct sched_priv *sp = m->priv;

	fprintf(out, "sandlens_events_dropped_total{reason=\"ratelimit_expired\",type=\"sched_delay\"} %llu\n",
		(unsigned long long)atomic_load(&sp->ratelimit_expired));
}

void sched_write_metrics(struct sl_module *m, FILE *out)
{
	struct sched_priv *sp = m->priv;
	struct sched_snap *snap = sched_snap_get(sp);
	static const char *const cls[3] = {"idle", "internal", "external"};

	fprintf(out, "# HELP sandlens_runqueue_latency_seconds Time tasks spent runnable on a runqueue before running (wakeup or preemption to switch-in), per container; one runtime=\"host\" series for everything else.\n"
		     "# TYPE sandlens_runqueue_latency_seconds histogram\n");
	for (int i = 0; snap && i < snap->n; i++) {
		const struct sched_snap_series *s = &snap->s[i];
		uint64_t cum[SL_SCHED_SLOTS];
		char le[32];
		sl_sched_cumulative(s->slots, cum);
		for (unsigned k = 0; k < SL_SCHED_SLOTS; k++) {
			sl_sched_le_label(k, le, sizeof(le));
			fprintf(out, "sandlens_runqueue_latency_seconds_bucket{");
			labels(out, s);
			fprintf(out, ",le=\"%s\"} %llu\n", le, (unsigned long long)cum[k]);
		}
		fprintf(out, "sandlens_runqueue_latency_seconds_sum{");
		labels(out, s);
		fprintf(out, "} %.9f\n", (double)s->sum_ns / 1e9);
		fprintf(out, "sandlens_runqueue_latency_seconds_count{");
		labels(out, s);
		fprintf(out, "} %llu\n", (unsigned long long)cum[SL_SCHED_SLOTS - 1]);
	}
	fprintf(out, "# HELP sandlens_runqueue_wait_seconds_total Runqueue wait by who held the CPU when it ended: internal (same cgroup), external (another cgroup), idle (no contention); docs/SCHED.md.\n"
		     "# TYPE sandlens_runqueue_wait_seconds_total counter\n");
	for (int i = 0; snap && i < snap->n; i++)
		for (int c = 0; c < 3; c++) {
			fprintf(out, "sandlens_runqueue_wait_seconds_total{");
			labels(out, &snap->s[i]);
			fprintf(out, ",contention=\"%s\"} %.9f\n", cls[c], (double)snap->s[i].class_ns[c] / 1e9);
		}
	fprintf(out, "# HELP sandlens_cpu_cfs_periods_total CFS bandwidth periods elapsed (cpu.stat nr_periods).\n"
		     "# TYPE sandlens_cpu_cfs_periods_total counter\n");
	for (int i = 0; snap && i < snap->n; i++)
		if (snap->s[i].has_throttle) {
			fprintf(out, "sandlens_cpu_cfs_periods_total{");
			labels(out, &snap->s[i]);
			fprintf(out, "} %llu\n", (unsigned long long)snap->s[i].nr_periods);
		}
	fprintf(out, "# HELP sandlens_cpu_cfs_throttled_periods_total CFS periods in which the container was throttled (cpu.stat nr_throttled).\n"
		     "# TYPE sandlens_cpu_cfs_throttled_periods_total counter\n");
	for (int i = 0; snap && i < snap->n; i++)
		if (snap->s[i].has_throttle) {
			fprintf(out, "sandlens_cpu_cfs_throttled_periods_total{");
			labels(out, &snap->s[i]);
			fprintf(out, "} %llu\n", (unsigned long long)snap->s[i].nr_throttled);
		}
	fprintf(out, "# HELP sandlens_cpu_cfs_throttled_seconds_total Time the container was throttled (v2 cpu.stat throttled_usec, v1 cpu.stat throttled_time).\n"
		     "# TYPE sandlens_cpu_cfs_throttled_seconds_total counter\n");
	for (int i = 0; snap && i < snap->n; i++)
		if (snap->s[i].has_throttle) {
			fprintf(out, "sandlens_cpu_cfs_throttled_seconds_total{");
			labels(out, &snap->s[i]);
			fprintf(out, "} %.6f\n", (double)snap->s[i].throttled_ns / 1e9);
		}
	sched_snap_put(snap);

	fprintf(out,
		"# HELP sandlens_sched_cgroups Cgroup keys in the kernel runqueue histogram map (last tick).\n"
		"# TYPE sandlens_sched_cgroups gauge\n"
		"sandlens_sched_cgroups %llu\n"
		"# HELP sandlens_sched_neighbour_pairs (victim, neighbour) cgroup pairs in the kernel map (last tick).\n"
		"# TYPE sandlens_sched_neighbour_pairs gauge\n"
		"sandlens_sched_neighbour_pairs %llu\n"
		"# HELP sandlens_sched_waits_not_counted_total Waits missing from a histogram or neighbour table because its kernel map was full.\n"
		"# TYPE sandlens_sched_waits_not_counted_total counter\n"
		"sandlens_sched_waits_not_counted_total{map=\"sched_hist\"} %llu\n"
		"sandlens_sched_waits_not_counted_total{map=\"sched_pairs\"} %llu\n"
		"# HELP sandlens_sched_series_dropped_total Cgroup keys of containers not exported because sched.max_containers was reached.\n"
		"# TYPE sandlens_sched_series_dropped_total counter\n"
		"sandlens_sched_series_dropped_total %llu\n"
		"# HELP sandlens_sched_watch_entries Entries in the kernel map of watched cgroup keys (sched_watch), last tick.\n"
		"# TYPE sandlens_sched_watch_entries gauge\n"
		"sandlens_sched_watch_entries %llu\n"
		"# HELP sandlens_sched_watch_full_total Watched cgroup keys that found the watch map full (no sched_delay events for them).\n"
		"# TYPE sandlens_sched_watch_full_total counter\n"
		"sandlens_sched_watch_full_total %llu\n"
		"# HELP sandlens_sched_delay_seen_total Waits of watched cgroups at or above sched.delay_threshold.\n"
		"# TYPE sandlens_sched_delay_seen_total counter\n"
		"sandlens_sched_delay_seen_total %llu\n"
		"# HELP sandlens_sched_delay_rate_limited_total sched_delay events suppressed by the per-cgroup token bucket; carried as truncated_count.\n"
		"# TYPE sandlens_sched_delay_rate_limited_total counter\n"
		"sandlens_sched_delay_rate_limited_total %llu\n"
		"# HELP sandlens_sched_delay_truncated_total Sum of truncated_count over delivered sched_delay events.\n"
		"# TYPE sandlens_sched_delay_truncated_total counter\n"
		"sandlens_sched_delay_truncated_total %llu\n"
		"# HELP sandlens_sched_ringbuf_reserve_failures_total sched_delay ring buffer reservations that failed (carried as truncated_count).\n"
		"# TYPE sandlens_sched_ringbuf_reserve_failures_total counter\n"
		"sandlens_sched_ringbuf_reserve_failures_total %llu\n",
		(unsigned long long)atomic_load(&sp->nkeys), (unsigned long long)atomic_load(&sp->npairs),
		(unsigned long long)stat_sum(sp, SL_SST_HIST_FULL), (unsigned long long)stat_sum(sp, SL_SST_PAIR_FULL),
		(unsigned long long)atomic_load(&sp->series_dropped), (unsigned long long)atomic_load(&sp->watch_entries),
		(unsigned long long)atomic_load(&sp->watch_full),
		(unsigned long long)stat_sum(sp, SL_SST_DELAY_SEEN),
		(unsigned long long)stat_sum(sp, SL_SST_DELAY_RATE_LIMITED),
		(unsigned long long)atomic_load(&sp->truncated_total),
		(unsigned long long)stat_sum(sp, SL_SST_DELAY_RB_FAIL));
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

json_t *sl_sched_json(struct sl_agent *a, const char **why)
{
	struct sl_module *m = NULL;
	struct sched_snap *snap;
	json_t *root, *arr;
	char tbuf[SL_TIME_RFC3339_MAX];

	for (int i = 0; i < a->nmodules; i++)
		if (a->modules[i].ops && !strcmp(a->modules[i].ops->name, "sched")) /* by name: keeps API tests free of the agent */
			m = &a->modules[i];
	if (!m || !m->enabled || m->state || !m->priv) {
		*why = !m || !m->enabled ? "the sched module is disabled" : "the sched module failed to start";
		return NULL;
	}
	snap = sched_snap_get(m->priv);
	root = json_object();
	arr = json_array();
	if (snap) {
		sl_time_format((int64_t)snap->time_mono_ns + a->mono_to_real_ns, tbuf, sizeof(tbuf));
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
