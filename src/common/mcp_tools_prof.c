/* capture_profile, get_profile, diff_profiles, list_captures: the task
 * routes of the REST API (docs/TASKS.md), which are for admins only (their
 * records and results hold targets, stacks and addresses): a reader's call
 * is refused with the API's 403 as a JSON-RPC error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/mcp_tools.h"

static int id_ok(const char *id)
{
	for (const char *p = id; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-", *p))
			return 0;
	return *id != 0;
}

void tool_capture_profile(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o)
{
	const char *c = arg_str(args, "container", NULL), *pod = arg_str(args, "pod", NULL);
	long long pid = arg_int(args, "pid", 0);
	const char *kind = arg_str(args, "kind", "on_cpu");
	char err[400];
	if ((c != NULL) + (pod != NULL) + (pid != 0) != 1) {
		tool_fail(o, "capture_profile: give exactly one of container, pod, pid");
		return;
	}
	json_t *target = c ? json_pack("{s:s}", "container", c)
		       : pod ? json_pack("{s:s}", "pod", pod)
			     : json_pack("{s:I}", "pid", (json_int_t)pid);
	json_t *spec = json_pack("{s:s, s:o, s:I}", "type", strcmp(kind, "off_cpu") ? "profile_on_cpu" : "profile_off_cpu",
				 "target", target, "duration_s", (json_int_t)arg_int(args, "duration_s", 10));
	if (spec && json_object_get(args, "hz"))
		json_object_set_new(spec, "hz", json_integer(arg_int(args, "hz", 99)));
	char *body = spec ? json_dumps(spec, JSON_COMPACT) : NULL;
	json_decref(spec);
	json_t *rec;
	long st;
	int rc = body ? api_post(be, "/api/v1/tasks", body, &rec, &st, err, sizeof(err), o) : -1;
	if (!body)
		snprintf(err, sizeof(err), "out of memory");
	free(body);
	if (rc) {
		tool_fail(o, "capture_profile: %s", err);
		return;
	}
	const char *id = json_string_value(json_object_get(rec, "id"));
	tool_printf(o, "capture %s started: %s of %s for %.0f s (status %s); read it with get_profile {\"id\":\"%s\",\"wait_s\":%lld}\n",
		    id ? id : "?", json_string_value(json_object_get(rec, "type")), c ? c : pod ? pod : "pid",
		    json_number_value(json_object_get(rec, "duration_s")),
		    json_string_value(json_object_get(rec, "status")), id ? id : "?",
		    (long long)json_number_value(json_object_get(rec, "duration_s")) + 5);
	o->structured = json_pack("{s:s, s:s, s:O}", "id", id ? id : "", "status",
				  json_string_value(json_object_get(rec, "status")) ?: "", "record", rec);
	json_decref(rec);
}

static int ended(const char *status)
{
	return status && (!strcmp(status, "done") || !strcmp(status, "failed") || !strcmp(status, "cancelled"));
}

/* GET the task record, waiting up to wait_s for it to end. */
static json_t *record_of(const struct sl_mcp_backend *be, const char *id, long long wait_s, char *err,
			 size_t errlen, struct tool_out *o)
{
	char path[128];
	snprintf(path, sizeof(path), "/api/v1/tasks/%s", id);
	for (long long waited_ms = 0;; waited_ms += 250) {
		json_t *rec;
		long st;
		if (api_get(be, path, &rec, &st, err, errlen, o))
			return NULL;
		if (ended(json_string_value(json_object_get(rec, "status"))) || waited_ms >= wait_s * 1000)
			return rec;
		json_decref(rec);
		struct timespec ts = {0, 250 * 1000000L};
		nanosleep(&ts, NULL);
	}
}

/* The JSON result of a finished profile (docs/PROFILING.md "JSON"). */
static json_t *result_of(const struct sl_mcp_backend *be, const char *id, char *err, size_t errlen,
			 struct tool_out *o)
{
	char path[160];
	json_t *j;
	long st;
	snprintf(path, sizeof(path), "/api/v1/tasks/%s/result?format=json", id);
	return api_get(be, path, &j, &st, err, errlen, o) ? NULL : j;
}

void tool_get_profile(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o)
{
	const char *id = arg_str(args, "id", "");
	size_t top = (size_t)arg_int(args, "top", 20), i;
	char err[400];
	if (!id_ok(id)) {
		tool_fail(o, "get_profile: id '%.64s' has characters outside [A-Za-z0-9-]", id);
		return;
	}
	long long wait = arg_int(args, "wait_s", 0);
	json_t *rec = record_of(be, id, wait < be->max_wait_s ? wait : be->max_wait_s, err, sizeof(err), o);
	if (!rec) {
		tool_fail(o, "get_profile: %s", err);
		return;
	}
	const char *status = json_string_value(json_object_get(rec, "status"));
	if (!status || strcmp(status, "done")) {
		tool_printf(o, "capture %s is %s%s%s\n", id, status ? status : "?",
			    json_object_get(rec, "reason") ? ": " : "",
			    json_string_value(json_object_get(rec, "reason")) ?: "");
		o->structured = json_pack("{s:s, s:s, s:O, s:[]}", "id", id, "status", status ? status : "", "record", rec, "top");
		json_decref(rec);
		return;
	}
	json_t *res = result_of(be, id, err, sizeof(err), o);
	if (!res) {
		json_decref(rec);
		tool_fail(o, "get_profile: %s", err);
		return;
	}
	double total = json_number_value(json_object_get(res, "total"));
	const char *unit = json_string_value(json_object_get(res, "unit")) ?: "";
	json_t *frames = json_array(), *f;
	tool_printf(o, "capture %s (%s): total %.0f %s; top frames by self:\n", id,
		    json_string_value(json_object_get(res, "kind")) ?: "?", total, unit);
	json_array_foreach(json_object_get(res, "top"), i, f)
	{
		double self = json_number_value(json_object_get(f, "self"));
		/* "top" is sorted by self: the rest have no self time (callers
		 * only), not frames "by self" */
		if (i >= top || self <= 0)
			break;
		json_t *c = json_deep_copy(f);
		json_object_set_new(c, "self_share", json_real(total > 0 ? self / total : 0));
		json_array_append_new(frames, c);
		tool_printf(o, "%2zu. %5.1f%% %s (%s)\n", i + 1, total > 0 ? 100 * self / total : 0,
			    json_string_value(json_object_get(f, "function")) ?: "?",
			    json_string_value(json_object_get(f, "module")) ?: "-");
	}
	o->structured = json_pack("{s:s, s:s, s:s, s:f, s:o, s:O?}", "id", id, "status", status, "unit", unit, "total",
				  total, "top", frames, "kind", json_object_get(res, "kind"));
	json_decref(res);
	json_decref(rec);
}

/* Self per "function\tmodule" over the whole tree. */
static void tree_self(json_t *node, json_t *acc)
{
	size_t i;
	json_t *c;
	double self = json_number_value(json_object_get(node, "self"));
	if (self > 0) {
		char key[600];
		snprintf(key, sizeof(key), "%s\t%s", json_string_value(json_object_get(node, "name")) ?: "?",
			 json_string_value(json_object_get(node, "module")) ?: "");
		json_object_set_new(acc, key, json_real(json_number_value(json_object_get(acc, key)) + self));
	}
	json_array_foreach(json_object_get(node, "children"), i, c) tree_self(c, acc);
}

static int by_abs_delta(const void *a, const void *b)
{
	double x = json_number_value(json_object_get(*(json_t *const *)a, "delta_share"));
	double y = json_number_value(json_object_get(*(json_t *const *)b, "delta_share"));
	x = x < 0 ? -x : x;
	y = y < 0 ? -y : y;
	return x < y ? 1 : x > y ? -1 : 0;
}

void tool_diff_profiles(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o)
{
	const char *ida = arg_str(args, "a", ""), *idb = arg_str(args, "b", "");
	size_t top = (size_t)arg_int(args, "top", 20);
	char err[400];
	if (!id_ok(ida) || !id_ok(idb)) {
		tool_fail(o, "diff_profiles: ids have characters outside [A-Za-z0-9-]");
		return;
	}
	json_t *ra = result_of(be, ida, err, sizeof(err), o), *rb = ra ? result_of(be, idb, err, sizeof(err), o) : NULL;
	if (!ra || !rb) {
		json_decref(ra);
		tool_fail(o, "diff_profiles: %s", err);
		return;
	}
	json_t *sa = json_object(), *sb = json_object(), *v;
	tree_self(json_object_get(ra, "tree"), sa);
	tree_self(json_object_get(rb, "tree"), sb);
	double ta = json_number_value(json_object_get(ra, "total")), tb = json_number_value(json_object_get(rb, "total"));
	json_t *keys = json_object();
	const char *k;
	json_object_update(keys, sa);
	json_object_update(keys, sb);
	size_t n = json_object_size(keys), i = 0;
	json_t **rows = calloc(n ? n : 1, sizeof(*rows));
	json_object_foreach(keys, k, v)
	{
		if (!rows)
			break;
		const char *tab = strchr(k, '\t');
		double a = json_number_value(json_object_get(sa, k)), b = json_number_value(json_object_get(sb, k));
		double as = ta > 0 ? a / ta : 0, bs = tb > 0 ? b / tb : 0;
		rows[i++] = json_pack("{s:s%, s:s, s:f, s:f, s:f, s:f, s:f}", "function", k, (size_t)(tab ? tab - k : (long)strlen(k)),
				      "module", tab ? tab + 1 : "", "a_self", a, "b_self", b, "a_share", as, "b_share", bs,
				      "delta_share", bs - as);
	}
	n = i;
	if (rows)
		qsort(rows, n, sizeof(*rows), by_abs_delta);
	json_t *changes = json_array();
	const char *unit = json_string_value(json_object_get(rb, "unit")) ?: "";
	tool_printf(o, "a=%s (total %.0f %s) vs b=%s (total %.0f %s); largest changes of self share:\n", ida, ta,
		    json_string_value(json_object_get(ra, "unit")) ?: "", idb, tb, unit);
	for (i = 0; i < n; i++) {
		if (i < top) {
			tool_printf(o, "%+6.1f%% %s (%5.1f%% -> %5.1f%%)\n",
				    100 * json_number_value(json_object_get(rows[i], "delta_share")),
				    json_string_value(json_object_get(rows[i], "function")),
				    100 * json_number_value(json_object_get(rows[i], "a_share")),
				    100 * json_number_value(json_object_get(rows[i], "b_share")));
			json_array_append_new(changes, rows[i]);
		} else {
			json_decref(rows[i]);
		}
	}
	free(rows);
	o->structured = json_pack("{s:{s:s, s:f, s:O?}, s:{s:s, s:f, s:O?}, s:o, s:s}", "a", "id", ida, "total", ta, "kind",
				  json_object_get(ra, "kind"), "b", "id", idb, "total", tb, "kind", json_object_get(rb, "kind"),
				  "changes", changes, "unit", unit);
	json_decref(keys);
	json_decref(sa);
	json_decref(sb);
	json_decref(ra);
	json_decref(rb);
}

void tool_list_captures(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o)
{
	size_t limit = (size_t)arg_int(args, "limit", 20), i;
	char err[400];
	json_t *j, *t;
	long st;
	if (api_get(be, "/api/v1/tasks", &j, &st, err, sizeof(err), o)) {
		tool_fail(o, "list_captures: %s", err);
		return;
	}
	json_t *all = json_is_array(j) ? j : json_object_get(j, "tasks"), *out = json_array();
	size_t n = json_array_size(all);
	tool_printf(o, "%zu capture(s)\n", n);
	json_array_foreach(all, i, t)
	{
		if (i >= limit)
			break;
		json_t *c = json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?, s:O?}", "id", json_object_get(t, "id"), "type",
				      json_object_get(t, "type"), "status", json_object_get(t, "status"), "target",
				      json_object_get(t, "target"), "created_at", json_object_get(t, "created_at"),
				      "ended_at", json_object_get(t, "ended_at"));
		json_array_append_new(out, c);
		tool_printf(o, "- %s %s %s created %s\n", json_string_value(json_object_get(t, "id")) ?: "?",
			    json_string_value(json_object_get(t, "type")) ?: "?",
			    json_string_value(json_object_get(t, "status")) ?: "?",
			    json_string_value(json_object_get(t, "created_at")) ?: "?");
	}
	o->structured = json_pack("{s:o, s:I, s:b}", "captures", out, "count", (json_int_t)n, "truncated", n > limit);
	json_decref(j);
}
