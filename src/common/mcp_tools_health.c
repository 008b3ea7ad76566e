/* list_containers, container_health, explain_latency: the store's
 * containers, the workload statistics, and every running module's view
 * (found through /healthz: modules added later are read too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mcp_tools.h"

static double num(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

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

/* Every running module's view (GET /api/v1/<module>, module names from
 * /healthz: no module is named here, so modules added later are read too):
 * [{module, interval_seconds, entries:[the container's entries]}] for the
 * views with entries of id; modules not running, and running modules whose
 * view failed, go to absent as {module, reason}. NULL when /healthz fails
 * (reason in err). */
static json_t *module_views(const struct sl_mcp_backend *be, const char *id, json_t *absent, char *err,
			    size_t errlen, struct tool_out *o)
{
	char *resp = NULL;
	long st = 0;
	if (be->request(be->ctx, "GET", "/healthz", NULL, &st, &resp, err, errlen)) {
		free(resp);
		return NULL;
	}
	json_t *h = resp ? json_loads(resp, 0, NULL) : NULL, *m, *out = json_array();
	free(resp);
	if (!json_is_array(json_object_get(h, "modules"))) { /* 200 and 503 carry the same body */
		snprintf(err, errlen, "GET /healthz: HTTP %ld, no \"modules\"", st);
		json_decref(h);
		json_decref(out);
		return NULL;
	}
	size_t i;
	json_array_foreach(json_object_get(h, "modules"), i, m)
	{
		const char *name = json_string_value(json_object_get(m, "name"));
		const char *state = json_string_value(json_object_get(m, "state"));
		char path[96], why[400];
		json_t *j;
		if (!name || strlen(name) > 64)
			continue;
		if (!state || (strcmp(state, "running") && strcmp(state, "degraded"))) {
			json_array_append_new(absent, json_pack("{s:s, s:s}", "module", name, "reason", state ? state : "unknown"));
			continue;
		}
		snprintf(path, sizeof(path), "/api/v1/%s", name);
		/* o NULL: an admin_only view refusing a reader (403) makes that
		 * module absent, not the whole tool refused */
		(void)o;
		if (api_get(be, path, &j, &st, why, sizeof(why), NULL)) {
			if (st != 404) /* 404: the module declares no view */
				json_array_append_new(absent, json_pack("{s:s, s:s}", "module", name, "reason", why));
			continue;
		}
		json_t *e = view_entries_of(j, id);
		if (json_array_size(e))
			json_array_append_new(out, json_pack("{s:s, s:O?, s:o}", "module", name, "interval_seconds",
							     json_object_get(j, "interval_seconds"), "entries", e));
		else
			json_decref(e);
		json_decref(j);
	}
	json_decref(h);
	return out;
}

/* The first entry of the views (module_views) that has key k. */
static json_t *entry_with(json_t *views, const char *k, const char **module)
{
	size_t i, x;
	json_t *v, *e;
	json_array_foreach(views, i, v) json_array_foreach(json_object_get(v, "entries"), x, e) if (json_object_get(e, k))
	{
		*module = json_string_value(json_object_get(v, "module"));
		return e;
	}
	return NULL;
}

/* The full id of the one container of the store whose id begins with id
 * (>= 4 characters; the statistics route wants a full id), else id. */
static const char *full_id(const struct sl_mcp_backend *be, const char *id, char *buf, size_t size)
{
	json_t *j, *c;
	long st;
	char err[300];
	size_t i, n = strlen(id), hits = 0;
	if (n < 4 || api_get(be, "/api/v1/containers", &j, &st, err, sizeof(err), NULL))
		return id;
	json_array_foreach(json_object_get(j, "containers"), i, c)
	{
		const char *cid = json_string_value(json_object_get(c, "container_id"));
		if (cid && !strncmp(cid, id, n) && strlen(cid) < size) {
			snprintf(buf, size, "%s", cid);
			hits++;
		}
	}
	json_decref(j);
	return hits == 1 ? buf : id;
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
		path[n++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
				    (*p && strchr("._-", *p))
				    ? *p
				    : '_';
	snprintf(path + n, sizeof(path) - n, "/stats");
	if (api_get(be, path, &j, &st, err, sizeof(err), o)) {
		snprintf(why, whylen, "%s", err);
		return NULL;
	}
	return j;
}

void tool_container_health(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o)
{
	const char *id = arg_str(args, "container", ""), *since = arg_str(args, "since", "15m"), *rq_mod = NULL;
	char why[400], err[400];
	json_t *absent = json_array();
	size_t nk, i;
	char full[256];
	json_t *stats = stats_of(be, full_id(be, id, full, sizeof(full)), why, sizeof(why), o);
	json_t *views = module_views(be, id, absent, err, sizeof(err), o);
	json_t *faults = views ? faults_query(be, id, since, 3, NULL, 20, &nk, NULL, err, sizeof(err), o) : NULL;
	if (o->forbidden || !faults) {
		json_decref(stats);
		json_decref(views);
		json_decref(absent);
		json_decref(faults);
		tool_fail(o, "container_health: %s", err);
		return;
	}
	/* the runqueue figures: the view entry with "interval"."wait_seconds" */
	json_t *e = entry_with(views, "interval", &rq_mod);
	json_t *iv = json_object_get(e, "interval"), *th = json_object_get(e, "throttling");
	/* PSI is per member (docs/STATS.md): the member that is this
	 * container, else the first (a pod's id) */
	json_t *mem, *pressure = NULL;
	json_array_foreach(json_object_get(stats, "containers"), i, mem)
	{
		const char *mid = json_string_value(json_object_get(mem, "id"));
		if (!pressure || (mid && !strncmp(mid, id, strlen(id))))
			pressure = json_object_get(mem, "pressure");
	}
	tool_printf(o, "container %s\n", id);
	if (stats)
		tool_printf(o, "statistics: present (CPU, memory, I/O%s)\n", pressure ? ", pressure (PSI)" : "");
	else
		tool_printf(o, "statistics: none (%s)\n", why);
	if (iv && json_object_get(iv, "wait_seconds"))
		tool_printf(o, "runqueue (last interval, %s): %lld waits, p99 %.3f ms, max %.3f ms, %.1f%% of runnable time waiting\n",
			    rq_mod, (long long)json_integer_value(json_object_get(iv, "waits")), num(iv, "p99_seconds") * 1e3,
			    num(iv, "max_seconds") * 1e3, num(iv, "runnable_wait_share") * 100);
	else
		tool_printf(o, "runqueue: no module view has runqueue figures for this container\n");
	if (json_is_object(th))
		tool_printf(o, "throttling: %lld of %lld periods throttled, %.3f s (last interval: %lld, %.3f s)\n",
			    (long long)json_integer_value(json_object_get(th, "nr_throttled")),
			    (long long)json_integer_value(json_object_get(th, "nr_periods")), num(th, "throttled_seconds"),
			    (long long)json_integer_value(json_object_get(th, "interval_nr_throttled")),
			    num(th, "interval_throttled_seconds"));
	tool_printf(o, "%zu event(s) of severity warning or worse since %s\n", json_array_size(faults), since);
	json_t *ev;
	json_array_foreach(faults, i, ev) tool_printf(o, "- %s %s [%s]\n", json_string_value(json_object_get(ev, "time")),
						       json_string_value(json_object_get(ev, "type")),
						       json_string_value(json_object_get(ev, "severity")));
	o->structured = json_pack("{s:s, s:o, s:O?, s:O?, s:O?, s:O?, s:o, s:o, s:o}", "container", id, "statistics",
				  stats ? stats : json_null(), "runqueue", iv, "throttling", th, "neighbours",
				  json_object_get(e, "neighbours"), "pressure", pressure, "faults", faults, "views", views,
				  "absent", absent);
}

/* One component of latency: seconds in the last interval and its source. */
static void component(json_t *comps, const char *what, double seconds, const char *source, json_t *detail)
{
	json_array_append_new(comps, json_pack("{s:s, s:f, s:s, s:o}", "component", what, "seconds", seconds, "source",
					       source ? source : "?", "detail", detail ? detail : json_null()));
}

static int by_seconds_desc(const void *a, const void *b)
{
	double x = num(*(json_t *const *)a, "seconds"), y = num(*(json_t *const *)b, "seconds");
	return x < y ? 1 : x > y ? -1 : 0;
}

/* The components of one view entry e of module m, by the views' shared
 * conventions (docs/MCP.md "explain_latency"): "interval"."wait_seconds"
 * (runqueue wait), "throttling"."interval_throttled_seconds" (CFS
 * throttling), and every key K whose object has "interval"."seconds"
 * (time spent in K in the interval: memory reclaim, compaction, ... and
 * what later modules declare the same way). */
static void components_of(json_t *comps, const char *m, json_t *e)
{
	json_t *iv = json_object_get(e, "interval"), *th = json_object_get(e, "throttling"), *v;
	const char *k;
	if (json_is_number(json_object_get(iv, "wait_seconds")))
		component(comps, "runqueue wait", num(iv, "wait_seconds"), m,
			  json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?}", "p50_seconds", json_object_get(iv, "p50_seconds"),
				    "p99_seconds", json_object_get(iv, "p99_seconds"), "max_seconds",
				    json_object_get(iv, "max_seconds"), "runnable_wait_share",
				    json_object_get(iv, "runnable_wait_share"), "internal_seconds",
				    json_object_get(iv, "internal_seconds"), "external_seconds",
				    json_object_get(iv, "external_seconds"), "neighbours", json_object_get(e, "neighbours")));
	if (json_is_number(json_object_get(th, "interval_throttled_seconds")))
		component(comps, "cpu throttling (CFS quota)", num(th, "interval_throttled_seconds"), m, json_incref(th));
	/* any other time total of the entry's interval ("device_seconds",
	 * "queue_seconds", ...; not percentiles or extremes) */
	json_object_foreach(iv, k, v)
	{
		size_t kl = strlen(k);
		if (!json_is_number(v) || kl <= 8 || strcmp(k + kl - 8, "_seconds") || !strcmp(k, "wait_seconds") ||
		    strstr(k, "p50") || strstr(k, "p90") || strstr(k, "p99") || strstr(k, "max") || strstr(k, "min") ||
		    strstr(k, "mean"))
			continue;
		char what[160];
		const char *dev = json_string_value(json_object_get(e, "device")),
			   *op = json_string_value(json_object_get(e, "op"));
		snprintf(what, sizeof(what), "%s %.*s%s%.32s%s%.16s", m, (int)(kl - 8), k, dev ? " " : "", dev ? dev : "",
			 op ? " " : "", op ? op : "");
		component(comps, what, json_number_value(v), m, json_incref(iv));
	}
	json_object_foreach(e, k, v)
	{
		json_t *vi = json_object_get(v, "interval");
		if (json_is_object(v) && json_is_number(json_object_get(vi, "seconds"))) {
			char what[96];
			snprintf(what, sizeof(what), "%s %.64s", m, k);
			component(comps, what, num(vi, "seconds"), m, json_incref(v));
		}
	}
}

void tool_explain_latency(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o)
{
	const char *id = arg_str(args, "container", ""), *since = arg_str(args, "since", "15m");
	json_t *absent = json_array(), *comps = json_array(), *v, *e;
	char err[400];
	size_t nk, nmatched = 0, i, x;

	json_t *views = module_views(be, id, absent, err, sizeof(err), o);
	json_t *events = views ? faults_query(be, id, since, 2, NULL, 20, &nk, &nmatched, err, sizeof(err), o) : NULL;
	if (o->forbidden || !events) {
		json_decref(absent);
		json_decref(comps);
		json_decref(views);
		json_decref(events);
		tool_fail(o, "explain_latency: %s", err);
		return;
	}
	double interval = 0;
	json_array_foreach(views, i, v)
	{
		const char *m = json_string_value(json_object_get(v, "module"));
		if (num(v, "interval_seconds") > interval)
			interval = num(v, "interval_seconds");
		json_array_foreach(json_object_get(v, "entries"), x, e) components_of(comps, m, e);
	}
	/* largest first: where the container's time went, as measured */
	size_t n = json_array_size(comps);
	json_t **sv = calloc(n ? n : 1, sizeof(*sv)), *sorted = json_array();
	for (i = 0; sv && i < n; i++)
		sv[i] = json_array_get(comps, i);
	if (sv)
		qsort(sv, n, sizeof(*sv), by_seconds_desc);
	tool_printf(o, "container %s: time lost in the last %.1f s interval of the module views, largest first%s\n", id,
		    interval, n ? "" : " (no module view has figures for it)");
	for (i = 0; sv && i < n; i++) {
		json_array_append(sorted, sv[i]);
		tool_printf(o, "- %s: %.6f s (module %s)\n", json_string_value(json_object_get(sv[i], "component")),
			    num(sv[i], "seconds"), json_string_value(json_object_get(sv[i], "source")));
		json_t *d = json_object_get(sv[i], "detail");
		if (json_object_get(d, "runnable_wait_share")) {
			json_t *top = json_array_get(json_object_get(d, "neighbours"), 0);
			const char *who = json_string_value(json_object_get(top, "container_id"));
			tool_printf(o, "  p99 %.3f ms, %.1f%% of runnable time waiting; behind other cgroups %.6f s, behind its own tasks %.6f s%s%.12s\n",
				    num(d, "p99_seconds") * 1e3, num(d, "runnable_wait_share") * 100, num(d, "external_seconds"),
				    num(d, "internal_seconds"), top ? "; top neighbour " : "",
				    top ? (who && *who ? who : "host") : "");
		}
	}
	free(sv);
	json_decref(comps);
	tool_printf(o, "evidence read from the views of module(s):");
	json_array_foreach(views, i, v) tool_printf(o, " %s", json_string_value(json_object_get(v, "module")));
	tool_printf(o, "%s; any other evidence (I/O latency, hung tasks, stalls) is absent: its module is not in this agent, not running, or has no figures for the container\n",
		    json_array_size(views) ? "" : " none");
	json_t *a;
	json_array_foreach(absent, i, a) tool_printf(o, "- module %s: no evidence (%s)\n",
						      json_string_value(json_object_get(a, "module")),
						      json_string_value(json_object_get(a, "reason")));
	if (nmatched > json_array_size(events))
		tool_printf(o, "the newest %zu of at least %zu event(s) of severity notice or worse since %s\n",
			    json_array_size(events), nmatched, since);
	else
		tool_printf(o, "%zu event(s) of severity notice or worse since %s\n", json_array_size(events), since);
	json_array_foreach(events, i, e) tool_printf(o, "- %s %s [%s]\n", json_string_value(json_object_get(e, "time")),
						      json_string_value(json_object_get(e, "type")),
						      json_string_value(json_object_get(e, "severity")));
	o->structured = json_pack("{s:s, s:f, s:o, s:o, s:o, s:o, s:s}", "container", id, "interval_seconds", interval,
				  "components", sorted, "views", views, "absent", absent, "events", events, "since", since);
}
