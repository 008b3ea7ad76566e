/* list_containers, container_health, explain_latency: the store's
 * containers, the workload statistics, and the module views (sched, mem,
 * and io / stall / net when the agent has them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/tools_internal.h"

/* Views read as latency evidence besides sched and mem; a module this
 * agent lacks answers 404 and is reported absent. */
static const char *const extra_views[] = {"io", "stall", "net"};

void tool_list_containers(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o)
{
	json_t *j, *c;
	long st;
	char err[400];
	size_t i, limit = (size_t)arg_int(args, "limit", 200);
	if (api_get(be, "/api/v1/containers", &j, &st, err, sizeof(err), o)) {
		tool_fail(o, "list_containers: %s", err);
		return;
	}
	json_t *all = json_object_get(j, "containers"), *out = json_array();
	size_t n = json_array_size(all);
	tool_printf(o, "%zu container(s) with events in the store%s\n", n, n > limit ? " (list cut)" : "");
	json_array_foreach(all, i, c)
	{
		if (i >= limit)
			break;
		json_array_append(out, c);
		tool_printf(o, "- %.12s runtime=%s events=%lld last_seen=%s\n",
			    json_string_value(json_object_get(c, "container_id")) ?: "?",
			    json_string_value(json_object_get(c, "runtime")) ?: "-",
			    (long long)json_integer_value(json_object_get(c, "events")),
			    json_string_value(json_object_get(c, "last_seen")) ?: "-");
	}
	o->structured = json_pack("{s:o, s:I, s:b}", "containers", out, "count", (json_int_t)n, "truncated", n > limit);
	json_decref(j);
}

/* GET /api/v1/<module>: the entries of container id, or NULL with the
 * state noted in absent ("<module>: absent" / "not running: ...").
 * *body gets the whole view (new reference) when it answered. */
static json_t *view_of(const struct sl_mcp_backend *be, const char *module, const char *id, json_t *absent,
		       json_t **body, struct tool_out *o)
{
	char path[64], err[400];
	json_t *j;
	long st;
	*body = NULL;
	snprintf(path, sizeof(path), "/api/v1/%s", module);
	if (api_get(be, path, &j, &st, err, sizeof(err), o)) {
		json_array_append_new(absent, json_pack("{s:s, s:s}", "module", module, "reason",
							 st == 404   ? "absent: this agent has no such module"
							 : st == 503 ? "not running (disabled or failed to start)"
								     : err));
		return NULL;
	}
	*body = j;
	return view_entries_of(j, id);
}

/* Workload statistics of id: the object or NULL (reason noted). */
static json_t *stats_of(const struct sl_mcp_backend *be, const char *id, char *why, size_t whylen,
			struct tool_out *o)
{
	char path[300] = "/api/v1/workloads/", err[400];
	json_t *j;
	long st;
	size_t n = strlen(path);
	for (const char *p = id; *p && n + 4 < sizeof(path) - 8; p++) /* ids are [A-Za-z0-9._-] */
		path[n++] = strchr("/?#%&", *p) ? '_' : *p;
	snprintf(path + n, sizeof(path) - n, "/stats");
	if (api_get(be, path, &j, &st, err, sizeof(err), o)) {
		snprintf(why, whylen, "%s", err);
		return NULL;
	}
	return j;
}

void tool_container_health(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o)
{
	const char *id = arg_str(args, "container", ""), *since = arg_str(args, "since", "15m");
	char why[400], err[400];
	json_t *absent = json_array(), *body, *e;
	size_t nk;
	json_t *stats = stats_of(be, id, why, sizeof(why), o);
	json_t *sched = view_of(be, "sched", id, absent, &body, o);
	json_decref(body);
	json_t *faults = faults_query(be, id, since, 3, NULL, 20, &nk, err, sizeof(err), o);
	if (o->forbidden || !faults) {
		json_decref(stats);
		json_decref(sched);
		json_decref(absent);
		json_decref(faults);
		tool_fail(o, "container_health: %s", err);
		return;
	}
	e = json_array_get(sched, 0);
	json_t *iv = json_object_get(e, "interval"), *th = json_object_get(e, "throttling");
	json_t *pressure = json_object_get(json_object_get(stats, "workload") ?: stats, "pressure");
	tool_printf(o, "container %s\n", id);
	if (stats)
		tool_printf(o, "statistics: present (workload statistics: CPU, memory, I/O%s)\n", pressure ? ", pressure" : "");
	else
		tool_printf(o, "statistics: none (%s)\n", why);
	if (iv)
		tool_printf(o, "runqueue (last interval): %lld waits, p99 %.3f ms, max %.3f ms, %.1f%% of runnable time waiting\n",
			    (long long)json_integer_value(json_object_get(iv, "waits")),
			    json_number_value(json_object_get(iv, "p99_seconds")) * 1e3,
			    json_number_value(json_object_get(iv, "max_seconds")) * 1e3,
			    json_number_value(json_object_get(iv, "runnable_wait_share")) * 100);
	else
		tool_printf(o, "runqueue: no sched entry for this container\n");
	if (json_is_object(th))
		tool_printf(o, "throttling: %lld of %lld periods throttled, %.3f s (last interval: %lld, %.3f s)\n",
			    (long long)json_integer_value(json_object_get(th, "nr_throttled")),
			    (long long)json_integer_value(json_object_get(th, "nr_periods")),
			    json_number_value(json_object_get(th, "throttled_seconds")),
			    (long long)json_integer_value(json_object_get(th, "interval_nr_throttled")),
			    json_number_value(json_object_get(th, "interval_throttled_seconds")));
	tool_printf(o, "%zu event(s) of severity warning or worse since %s\n", json_array_size(faults), since);
	size_t i;
	json_t *ev;
	json_array_foreach(faults, i, ev) tool_printf(o, "- %s %s [%s]\n", json_string_value(json_object_get(ev, "time")),
						       json_string_value(json_object_get(ev, "type")),
						       json_string_value(json_object_get(ev, "severity")));
	o->structured = json_pack("{s:s, s:o, s:O?, s:O?, s:O?, s:O?, s:o, s:o}", "container", id, "statistics",
				  stats ? stats : json_null(), "runqueue", iv, "throttling", th, "neighbours",
				  json_object_get(e, "neighbours"), "pressure", pressure, "faults", faults, "absent", absent);
	json_decref(sched);
}

static double num(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

/* One component of latency: seconds in the last interval and its source. */
static void component(json_t *comps, const char *what, double seconds, const char *source, json_t *detail)
{
	json_array_append_new(comps, json_pack("{s:s, s:f, s:s, s:o}", "component", what, "seconds", seconds, "source",
					       source, "detail", detail ? detail : json_null()));
}

static int by_seconds_desc(const void *a, const void *b)
{
	double x = num(*(json_t *const *)a, "seconds"), y = num(*(json_t *const *)b, "seconds");
	return x < y ? 1 : x > y ? -1 : 0;
}

static int latency_kind(const char *module, const char *kind)
{
	(void)kind;
	return !strcmp(module, "sched") || !strcmp(module, "mem") || !strcmp(module, "io") || !strcmp(module, "stall");
}

void tool_explain_latency(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o)
{
	const char *id = arg_str(args, "container", ""), *since = arg_str(args, "since", "15m");
	json_t *absent = json_array(), *comps = json_array(), *views = json_object(), *body;
	char err[400];
	size_t nk;

	json_t *sched = view_of(be, "sched", id, absent, &body, o);
	double interval = num(body, "interval_seconds");
	json_decref(body);
	json_t *e = json_array_get(sched, 0), *iv = json_object_get(e, "interval");
	if (iv) {
		json_t *nb = json_object_get(e, "neighbours");
		component(comps, "runqueue wait", num(iv, "wait_seconds"), "sched",
			  json_pack("{s:O, s:O, s:O, s:O, s:O, s:O, s:O?}", "p50_seconds", json_object_get(iv, "p50_seconds"),
				    "p99_seconds", json_object_get(iv, "p99_seconds"), "max_seconds",
				    json_object_get(iv, "max_seconds"), "runnable_wait_share",
				    json_object_get(iv, "runnable_wait_share"), "internal_seconds",
				    json_object_get(iv, "internal_seconds"), "external_seconds",
				    json_object_get(iv, "external_seconds"), "neighbours", nb));
	}
	json_t *th = json_object_get(e, "throttling");
	if (json_is_object(th))
		component(comps, "cpu throttling (CFS quota)", num(th, "interval_throttled_seconds"), "sched",
			  json_incref(th));
	json_t *mem = view_of(be, "mem", id, absent, &body, o);
	json_decref(body);
	json_t *me = json_array_get(mem, 0);
	static const char *const mem_kinds[] = {"direct_reclaim", "memcg_reclaim", "compaction", "throttle"};
	for (size_t i = 0; me && i < 4; i++) {
		json_t *k = json_object_get(me, mem_kinds[i]);
		if (json_is_object(k)) {
			char what[64];
			snprintf(what, sizeof(what), "memory %s", mem_kinds[i]);
			component(comps, what, num(json_object_get(k, "interval"), "seconds"), "mem", json_incref(k));
		}
	}
	for (size_t i = 0; i < sizeof(extra_views) / sizeof(extra_views[0]); i++) {
		json_t *x = view_of(be, extra_views[i], id, absent, &body, o);
		json_decref(body);
		if (x)
			json_object_set_new(views, extra_views[i], x);
	}
	json_t *events = faults_query(be, id, since, 2, latency_kind, 20, &nk, err, sizeof(err), o);
	json_decref(sched);
	json_decref(mem);
	if (o->forbidden || !events) {
		json_decref(absent);
		json_decref(comps);
		json_decref(views);
		json_decref(events);
		tool_fail(o, "explain_latency: %s", err);
		return;
	}
	/* largest first: where the container's time went, as measured */
	size_t n = json_array_size(comps), i;
	json_t **v = calloc(n ? n : 1, sizeof(*v)), *sorted = json_array();
	for (i = 0; v && i < n; i++)
		v[i] = json_array_get(comps, i);
	if (v)
		qsort(v, n, sizeof(*v), by_seconds_desc);
	tool_printf(o, "container %s: latency evidence for the last %.1f s interval of the module views%s\n", id,
		    interval, n ? "" : " (no sched or mem entry for it)");
	for (i = 0; v && i < n; i++) {
		json_array_append(sorted, v[i]);
		tool_printf(o, "- %s: %.6f s (%s)\n", json_string_value(json_object_get(v[i], "component")),
			    num(v[i], "seconds"), json_string_value(json_object_get(v[i], "source")));
	}
	free(v);
	json_decref(comps);
	if (iv) {
		json_t *top = json_array_get(json_object_get(e, "neighbours"), 0);
		tool_printf(o, "runqueue: p99 %.3f ms, %.1f%% of runnable time waiting; caused by other cgroups %.6f s, by its own tasks %.6f s%s%s\n",
			    num(iv, "p99_seconds") * 1e3, num(iv, "runnable_wait_share") * 100, num(iv, "external_seconds"),
			    num(iv, "internal_seconds"), top ? "; top neighbour " : "",
			    top ? (json_string_value(json_object_get(top, "container_id")) ?: json_string_value(json_object_get(top, "comm")) ?: "?") : "");
	}
	json_t *a;
	json_array_foreach(absent, i, a) tool_printf(o, "- %s: %s\n", json_string_value(json_object_get(a, "module")),
						      json_string_value(json_object_get(a, "reason")));
	tool_printf(o, "%zu latency-related event(s) since %s\n", json_array_size(events), since);
	o->structured = json_pack("{s:s, s:f, s:o, s:o, s:o, s:o, s:s}", "container", id, "interval_seconds", interval,
				  "components", sorted, "views", views, "absent", absent, "events", events, "since", since);
}
