/* Captures (auto.h, docs/AUTO.md "Capture"): start, finish, list. */
#include "auto/auto_internal.h"
#include "auto/prof_diff.h"
#include "auto/snapshot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/flight.h"
#include "common/log.h"
#include "common/prom.h"
#include "common/timefmt.h"
#include "profile/profile.h"
#include "task/task.h"

#define MOD "auto"
#define TOP_DIFF 10
#define TOP_FUNCS 5

void sl_auto_db_path(const struct sl_config *cfg, char *out, size_t len)
{
	if (cfg->autotr.store_path[0]) {
		snprintf(out, len, "%s", cfg->autotr.store_path);
		return;
	}
	const char *sp = cfg->store.path, *sl = strrchr(sp, '/');
	if (sl)
		snprintf(out, len, "%.*s/captures.db", (int)(sl - sp), sp);
	else
		snprintf(out, len, "captures.db");
}

int sl_auto_captures_init(struct sl_auto *au, char *err, size_t errlen)
{
	char path[600];
	sl_auto_db_path(&au->a->cfg, path, sizeof(path));
	au->store = sl_capture_store_open(path, err, errlen);
	return au->store ? 0 : -1;
}

void sl_auto_captures_fini(struct sl_auto *au)
{
	while (au->pending) {
		struct sl_auto_pending *p = au->pending;
		au->pending = p->next;
		free(p);
	}
	sl_capture_store_close(au->store);
	au->store = NULL;
}

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* Start one profile task; the record's profile object. */
static json_t *start_profile(struct sl_auto *au, const char *container, int type)
{
	json_t *o = json_object();
	if (!au->tasks) {
		json_object_set_new(o, "status", json_string("none"));
		json_object_set_new(o, "reason", json_string("tasks are off (tasks.enabled)"));
		return o;
	}
	struct sl_task_spec spec = {
		.type = type,
		.target_kind = SL_TGT_CONTAINER,
		.duration_ns = au->a->cfg.autotr.profile_duration_s * 1000000000ull,
		.hz = (uint32_t)au->a->cfg.tasks.default_hz,
		.min_off_cpu_ns = au->a->cfg.tasks.off_cpu_min_ns,
	};
	snprintf(spec.target, sizeof(spec.target), "%s", container);
	char id[SL_TASK_ID_LEN] = "", err[256] = "";
	int rc = sl_tasks_create(au->tasks, &spec, id, err, sizeof(err));
	if (rc == -EBUSY) {
		atomic_fetch_add(&au->refused, 1);
		json_object_set_new(o, "status", json_string("refused"));
		json_object_set_new(o, "reason",
				    json_sprintf("task executor at its limit (tasks.max_concurrent_tasks %llu) or under pressure: %s",
						 (unsigned long long)au->a->cfg.tasks.max_concurrent, err));
		return o;
	}
	if (rc) {
		atomic_fetch_add(&au->capture_errors, 1);
		json_object_set_new(o, "status", json_string("failed"));
		json_object_set_new(o, "reason", json_string(err[0] ? err : strerror(-rc)));
		return o;
	}
	json_object_set_new(o, "status", json_string("running"));
	json_object_set_new(o, "task_id", json_string(id));
	json_object_set_new(o, "duration_s", json_integer((json_int_t)au->a->cfg.autotr.profile_duration_s));
	return o;
}

static int blocked_trigger(int det)
{
	return det == SL_AD_DSTATE || det == SL_AD_MEMPSI || det == SL_AD_IOLAT;
}

void sl_auto_capture_start(struct sl_auto *au, const struct sl_auto_cin *c, const struct sl_auto_reason *r)
{
	int64_t now = sl_time_now_ns();
	char id[32], tbuf[64];
	snprintf(id, sizeof(id), "c-%012llx%04llx", (unsigned long long)(now / 1000) & 0xffffffffffffull,
		 (unsigned long long)(++au->capture_seq & 0xffff));
	sl_time_format(now, tbuf, sizeof(tbuf));
	const struct sl_det_params *p = &au->params[r->det];
	const char *input = sl_auto_det_inputs[r->det][0] ? sl_auto_det_inputs[r->det] : au->series[r->det].name;
	json_t *reason = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:s, s:o, s:i, s:i, s:f}", "detector",
				   sl_auto_det_names[r->det], "series", input, "method",
				   strcmp(r->source, "psi_trigger") ? sl_det_method_name(p->method) : "psi_trigger",
				   "source", r->source, "value", num(r->v.stat), "reading", num(r->reading),
				   "threshold", num(r->v.threshold), "threshold_source",
				   r->v.baseline_used ? "baseline" : "constant", "baseline_p99", num(r->v.baseline_p99),
				   "window", (int)p->window, "samples", (int)r->v.samples, "baseline_factor",
				   p->baseline_factor);
	if (reason && r->extra)
		json_object_update(reason, r->extra);
	json_t *profiles = json_object();
	json_object_set_new(profiles, "on_cpu", start_profile(au, c->id, SL_TASK_PROFILE_ON_CPU));
	if (au->a->cfg.autotr.off_cpu && blocked_trigger(r->det))
		json_object_set_new(profiles, "off_cpu", start_profile(au, c->id, SL_TASK_PROFILE_OFF_CPU));
	/* the scene now: processes, D-state stacks, open files */
	char procs[1100];
	const char *root = au->mounts.v2[0] && c->ino_v2 ? au->mounts.v2 : au->mounts.v1;
	snprintf(procs, sizeof(procs), "%s%s/cgroup.procs", root, c->path);
	struct sl_snapshot_opts so = {
		.proc_root = au->proc_root,
		.max_procs = au->a->cfg.autotr.max_processes,
		.top_files = 10,
		.stacks = 1,
	};
	json_t *snap = sl_snapshot_take(procs, &so);
	/* freeze the container's flight recorder ring (docs/FLIGHT.md): the
	 * events of the minute before the capture, one query away */
	json_t *flight;
	char freason[64];
	snprintf(freason, sizeof(freason), "capture %s", id);
	int64_t fr = au->a->flight ? sl_flight_freeze(au->a->flight, c->id, freason, 0) : -ENODEV;
	if (fr > 0)
		flight = json_pack("{s:I, s:s}", "id", (json_int_t)fr, "status", "frozen");
	else
		flight = json_pack("{s:s, s:s}", "status", "none", "reason",
				   fr == -ENODEV   ? "the flight recorder is off (flight.enabled)"
				   : fr == -ENOENT ? "no event of the container in the recorder's window"
				   : fr == -EBUSY  ? "rate-limited (flight.freeze_interval, flight.max_freezes_per_minute)"
						   : "freezing failed");
	json_t *rec = json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:o, s:o, s:o, s:o}", "id", id, "time", tbuf,
				"created_ns", (json_int_t)now, "status", "profiling", "container_id", c->id, "pod_uid",
				c->pod, "reason", reason ? reason : json_null(), "profiles", profiles, "snapshot",
				snap ? snap : json_null(), "flight_recording", flight ? flight : json_null());
	if (!rec) {
		atomic_fetch_add(&au->capture_errors, 1);
		return;
	}
	atomic_fetch_add(&au->captures[r->det], 1);
	int any_task = 0;
	const char *k;
	json_t *pv;
	json_object_foreach(profiles, k, pv) {
		if (json_object_get(pv, "task_id"))
			any_task = 1;
	}
	if (!any_task) {
		json_object_set_new(rec, "status", json_string("done"));
		json_object_set_new(rec, "baseline",
				    json_pack("{s:s, s:s}", "status", "none", "reason", "no profile was taken"));
	}
	sl_capture_store_put(au->store, id, now, c->id, sl_auto_det_names[r->det],
			     json_string_value(json_object_get(rec, "status")), rec);
	sl_capture_store_trim(au->store, au->a->cfg.autotr.max_captures);
	sl_info(MOD, "capture %s: %s fired for container %.12s (%s %.4g > %.4g), profile %s", id,
		sl_auto_det_names[r->det], c->id, input, r->v.stat, r->v.threshold,
		any_task ? "running" : "not taken");
	if (any_task) {
		struct sl_auto_pending *pe = calloc(1, sizeof(*pe));
		if (pe) {
			snprintf(pe->id, sizeof(pe->id), "%s", id);
			pe->next = au->pending;
			au->pending = pe;
		}
	}
	json_decref(rec);
}

/* Baseline diff of the finished on-CPU (or off-CPU) profile. */
static json_t *baseline_diff(struct sl_auto *au, const char *container, int kind, const char *folded, size_t len,
			     int64_t capture_ns)
{
	sl_auto_baseline_fn fn;
	void *ctx;
	pthread_mutex_lock(&au->mu);
	fn = au->baseline_fn;
	ctx = au->baseline_ctx;
	pthread_mutex_unlock(&au->mu);
	if (!fn)
		return json_pack("{s:s, s:s}", "status", "none", "reason",
				 "no baseline provider: continuous profiling is off or absent");
	/* the healthy range: the lookback before the capture, ending one
	 * profile length before it (the spike began before the detector fired) */
	int64_t to = capture_ns - (int64_t)au->a->cfg.autotr.profile_duration_s * 1000000000ll;
	int64_t from = to - (int64_t)au->a->cfg.autotr.baseline_lookback_s * 1000000000ll;
	char why[256] = "", fb[64], tb[64];
	struct sl_profile *base = fn(ctx, container, kind, from, to, why, sizeof(why));
	sl_time_format(from, fb, sizeof(fb));
	sl_time_format(to, tb, sizeof(tb));
	if (!base)
		return json_pack("{s:s, s:s, s:{s:s, s:s}}", "status", "none", "reason",
				 why[0] ? why : "no baseline profile in the range", "range", "from", fb, "to", tb);
	struct sl_profile *cap = sl_prof_from_folded(folded, len, kind);
	struct sl_prof_diff_frame *fr = NULL;
	int n = cap ? sl_prof_diff(cap, base, TOP_DIFF, &fr) : -ENOMEM;
	json_t *o = json_pack("{s:s, s:{s:s, s:s}, s:I}", "status", n >= 0 ? "ok" : "failed", "range", "from", fb,
			      "to", tb, "baseline_total_count", (json_int_t)sl_profile_total_count(base));
	if (o && n >= 0)
		json_object_set_new(o, "top_regressions", sl_prof_diff_json(fr, (size_t)n));
	else if (o)
		json_object_set_new(o, "reason", json_string(strerror(-n)));
	free(fr);
	sl_profile_free(cap);
	sl_profile_free(base);
	return o;
}

/* Finish one profile of a record: 1 when it has ended (or never ran). */
static int finish_profile(struct sl_auto *au, json_t *rec, const char *which, json_t *pobj, int *diffed)
{
	const char *tid = json_string_value(json_object_get(pobj, "task_id"));
	const char *st = json_string_value(json_object_get(pobj, "status"));
	if (!tid || (st && strcmp(st, "running")))
		return 1;
	json_t *t = sl_tasks_get(au->tasks, tid);
	char tsb[16];
	snprintf(tsb, sizeof(tsb), "%s", t && json_string_value(json_object_get(t, "status"))
					      ? json_string_value(json_object_get(t, "status")) : "failed");
	const char *ts = tsb;
	if (!strcmp(ts, "pending") || !strcmp(ts, "running")) {
		json_decref(t);
		return 0;
	}
	json_object_set_new(pobj, "status", json_string(ts));
	json_t *res = t ? json_object_get(t, "result") : NULL;
	if (t && json_object_get(t, "reason"))
		json_object_set(pobj, "reason", json_object_get(t, "reason"));
	if (res) {
		json_object_set(pobj, "total_count", json_object_get(res, "total_count"));
		json_object_set(pobj, "total_ns", json_object_get(res, "total_ns"));
		json_t *leaves = json_object_get(res, "top_user_leaves");
		if (json_is_array(leaves)) {
			json_t *top = json_array();
			for (size_t i = 0; i < json_array_size(leaves) && i < TOP_FUNCS; i++)
				json_array_append(top, json_array_get(leaves, i));
			json_object_set_new(pobj, "top_functions", top);
		}
		json_object_set_new(pobj, "formats", json_pack("[s,s,s,s,s]", "pprof", "folded", "svg", "json", "html"));
	}
	json_decref(t);
	/* the diff: of the on-CPU profile, else the off-CPU one */
	if (!*diffed && !strcmp(ts, "done")) {
		char *body = NULL;
		size_t len = 0;
		const char *ctype;
		if (!sl_tasks_result(au->tasks, tid, "folded", 0, &body, &len, &ctype)) {
			int kind = strcmp(which, "off_cpu") ? SL_PROF_ON_CPU : SL_PROF_OFF_CPU;
			json_object_set_new(rec, "baseline",
					    baseline_diff(au, json_string_value(json_object_get(rec, "container_id")),
							  kind, body, len,
							  json_integer_value(json_object_get(rec, "created_ns"))));
			*diffed = 1;
		}
		free(body);
	}
	return 1;
}

void sl_auto_captures_poll(struct sl_auto *au)
{
	struct sl_auto_pending **pp = &au->pending;
	while (*pp) {
		struct sl_auto_pending *pe = *pp;
		json_t *rec = sl_capture_store_get(au->store, pe->id);
		int done = 1, diffed = 0;
		json_t *profiles = rec ? json_object_get(rec, "profiles") : NULL;
		static const char *const order[2] = {"on_cpu", "off_cpu"};
		for (int i = 0; profiles && i < 2; i++) {
			json_t *po = json_object_get(profiles, order[i]);
			if (po && !finish_profile(au, rec, order[i], po, &diffed))
				done = 0;
		}
		if (rec && done) {
			if (!json_object_get(rec, "baseline"))
				json_object_set_new(rec, "baseline", json_pack("{s:s, s:s}", "status", "none", "reason",
									       "no profile finished"));
			json_object_set_new(rec, "status", json_string("done"));
		}
		if (rec)
			sl_capture_store_put(au->store, pe->id, json_integer_value(json_object_get(rec, "created_ns")),
					     json_string_value(json_object_get(rec, "container_id")),
					     json_string_value(json_object_get(json_object_get(rec, "reason"), "detector")),
					     done ? "done" : "profiling", rec);
		json_decref(rec);
		if (done || !rec) {
			*pp = pe->next;
			free(pe);
		} else {
			pp = &pe->next;
		}
	}
}

/* ------------------------------------------------------------ read side */

void sl_auto_redact(json_t *rec)
{
	json_t *snap = json_object_get(rec, "snapshot"), *v;
	size_t i;
	json_array_foreach(json_object_get(snap, "processes"), i, v) {
		if (json_object_get(v, "cmdline")) {
			json_object_del(v, "cmdline");
			json_object_set_new(v, "cmdline_withheld", json_true());
		}
	}
	json_array_foreach(json_object_get(snap, "dstate_tasks"), i, v) {
		if (json_object_get(v, "stack")) {
			json_object_del(v, "stack");
			json_object_set_new(v, "stack_withheld", json_true());
		}
	}
	/* paths the workload has open are its data, as argv is */
	json_array_foreach(json_object_get(snap, "open_files"), i, v) {
		if (json_object_get(v, "path")) {
			json_object_del(v, "path");
			json_object_set_new(v, "path_withheld", json_true());
		}
	}
	/* the profiles' functions are parts of stacks (the profile routes are
	 * admin-only) */
	const char *k;
	json_object_foreach(json_object_get(rec, "profiles"), k, v) {
		if (json_object_get(v, "top_functions")) {
			json_object_del(v, "top_functions");
			json_object_set_new(v, "top_functions_withheld", json_true());
		}
	}
	json_t *base = json_object_get(rec, "baseline");
	if (json_object_get(base, "top_regressions")) {
		json_object_del(base, "top_regressions");
		json_object_set_new(base, "top_regressions_withheld", json_true());
	}
}

json_t *sl_auto_captures_json(struct sl_auto *au, const char *container, const char *detector, size_t limit,
			      int admin)
{
	json_t *arr = au && au->store ? sl_capture_store_list(au->store, container, detector, limit) : json_array();
	json_t *v;
	size_t i;
	json_array_foreach(arr, i, v) {
		if (!admin)
			sl_auto_redact(v);
	}
	return json_pack("{s:o}", "captures", arr);
}

json_t *sl_auto_capture_json(struct sl_auto *au, const char *id, int admin)
{
	json_t *r = au && au->store ? sl_capture_store_get(au->store, id) : NULL;
	if (r && !admin)
		sl_auto_redact(r);
	return r;
}

int sl_auto_capture_task(struct sl_auto *au, const char *id, const char *which, char *task_id, size_t len)
{
	json_t *r = au && au->store ? sl_capture_store_get(au->store, id) : NULL;
	if (!r)
		return -ENOENT;
	const char *t = json_string_value(json_object_get(json_object_get(json_object_get(r, "profiles"), which), "task_id"));
	int rc = t ? 0 : -ENODATA;
	if (t)
		snprintf(task_id, len, "%s", t);
	json_decref(r);
	return rc;
}

json_t *sl_auto_status_json(struct sl_auto *au)
{
	if (!au)
		return json_pack("{s:b, s:s}", "enabled", 0, "reason", "auto.enabled is false (or statistics are off)");
	json_t *dets = json_array();
	pthread_mutex_lock(&au->mu);
	size_t nctr = HASH_COUNT(au->ctrs);
	for (int d = 0; d < SL_AUTO_NDET; d++) {
		const struct sl_det_params *p = &au->params[d];
		const char *input = sl_auto_det_inputs[d][0] ? sl_auto_det_inputs[d] : au->series[d].name;
		json_t *o = json_pack("{s:s, s:b, s:s, s:s, s:f, s:i, s:f, s:I, s:I, s:I}", "name", sl_auto_det_names[d],
				      "enabled", au->det_on[d], "series", input, "method",
				      sl_det_method_name(p->method) ? sl_det_method_name(p->method) : "?", "threshold",
				      p->threshold, "window", (int)p->window, "baseline_factor", p->baseline_factor,
				      "fired", (json_int_t)atomic_load(&au->fired[d]), "captures",
				      (json_int_t)atomic_load(&au->captures[d]), "suppressed",
				      (json_int_t)atomic_load(&au->suppressed[d]));
		if (!sl_auto_det_inputs[d][0]) {
			json_object_set_new(o, "source", json_string(au->series[d].m ? "series" : "absent"));
			if (!au->series[d].m)
				json_object_set_new(o, "reason", json_string(au->series[d].why));
		} else if (d == SL_AD_MEMPSI || d == SL_AD_CPUPSI) {
			int k = d == SL_AD_MEMPSI ? 0 : 1;
			size_t armed = 0, sampled = 0;
			json_t *why = json_object();
			struct sl_auto_ctr *e, *tmp;
			HASH_ITER(hh, au->ctrs, e, tmp) {
				if (e->psi_fd[k] >= 0) {
					armed++;
				} else {
					sampled++;
					if (json_object_size(why) < 16)
						json_object_set_new(why, e->id,
								    json_string(e->psi_reason[k][0] ? e->psi_reason[k]
												   : "PSI triggers off: sampling"));
				}
			}
			char t[64] = "";
			if (au->psi_on[k])
				sl_psi_trigger_format(&au->psi_trig[k], t, sizeof(t));
			json_object_set_new(o, "source", json_string(!au->psi_on[k] ? "sampling"
								      : sampled ? (armed ? "psi_trigger+sampling" : "sampling")
										: "psi_trigger"));
			json_object_set_new(o, "trigger", json_string(t));
			if (au->psi_widened[k])
				json_object_set_new(o, "trigger_note",
						    json_string("window widened to a multiple of 2 s: the agent lacks CAP_SYS_RESOURCE (kernel/sched/psi.c)"));
			json_object_set_new(o, "containers_psi_trigger", json_integer((json_int_t)armed));
			json_object_set_new(o, "containers_sampling", json_integer((json_int_t)sampled));
			json_object_set_new(o, "sampling_reasons", why);
		} else {
			json_object_set_new(o, "source", json_string("statistics"));
		}
		json_array_append_new(dets, o);
	}
	pthread_mutex_unlock(&au->mu);
	struct sl_cooldown_stats cs = {0};
	uint64_t ev = atomic_load(&au->evals), ens = atomic_load(&au->eval_ns);
	return json_pack("{s:b, s:I, s:I, s:o, s:{s:I, s:I, s:I, s:I, s:f, s:f}}", "enabled", 1, "containers",
			 (json_int_t)nctr, "cooldown_s", (json_int_t)au->a->cfg.autotr.cooldown_s, "detectors", dets,
			 "counters", "passes", (json_int_t)atomic_load(&au->passes), "refused",
			 (json_int_t)atomic_load(&au->refused), "psi_events", (json_int_t)atomic_load(&au->psi_events),
			 "capture_errors", (json_int_t)atomic_load(&au->capture_errors), "eval_ns_per_reading",
			 ev ? (double)ens / (double)ev : 0.0, "last_pass_seconds",
			 (double)atomic_load(&au->last_pass_ns) / 1e9);
	(void)cs;
}

void sl_auto_write_metrics(struct sl_auto *au, struct sl_prom *p)
{
	if (!au)
		return;
	static const struct {
		const char *name, *help;
		int which;
	} fams[] = {
		{"sandlens_auto_detector_fired_total", "AutoTracing detector firings, per detector (before cooldown)", 0},
		{"sandlens_auto_captures_total", "AutoTracing captures started, per detector", 1},
		{"sandlens_auto_captures_suppressed_total", "firings within the (container, detector) cooldown, per detector", 2},
	};
	for (size_t f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
		if (sl_prom_family(p, fams[f].name, SL_PROM_COUNTER, fams[f].help))
			continue;
		for (int d = 0; d < SL_AUTO_NDET; d++) {
			struct sl_prom_label l[] = {{"detector", sl_auto_det_names[d]}, {NULL, NULL}};
			_Atomic uint64_t *v = fams[f].which == 0 ? au->fired : fams[f].which == 1 ? au->captures : au->suppressed;
			sl_prom_u64(p, fams[f].name, l, atomic_load(&v[d]));
		}
	}
	sl_prom_one_u64(p, "sandlens_auto_captures_refused_total", SL_PROM_COUNTER,
			"profile tasks of captures the task executor refused (tasks.max_concurrent_tasks or pressure)",
			atomic_load(&au->refused));
	sl_prom_one_u64(p, "sandlens_auto_psi_trigger_events_total", SL_PROM_COUNTER,
			"PSI poll trigger wake-ups (POLLPRI) of container pressure files", atomic_load(&au->psi_events));
	sl_prom_one_u64(p, "sandlens_auto_evaluations_total", SL_PROM_COUNTER,
			"detector readings evaluated", atomic_load(&au->evals));
	sl_prom_one_f64(p, "sandlens_auto_pass_seconds", SL_PROM_GAUGE,
			"duration of the last detector pass (inputs read, every container evaluated)",
			(double)atomic_load(&au->last_pass_ns) / 1e9);
}
