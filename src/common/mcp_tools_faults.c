/* recent_faults, hw_faults: events by severity, over every event kind the
 * schema lists (GET /api/v1/schema/events), so kinds added by later modules
 * are covered without a change here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mcp_tools.h"

/* A kind whose declared severity is below the minimum may still compute a
 * worse one per event (exit: warning when killed by a signal): its newest
 * SCAN_LIMIT events are read and filtered. */
#define SCAN_LIMIT "500"

static int by_id_desc(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "id"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "id"));
	return x < y ? 1 : x > y ? -1 : 0;
}

json_t *faults_query(const struct sl_mcp_backend *be, const char *container, const char *since, int min_rank,
		     int (*keep)(json_t *ev), size_t limit, size_t *nkinds, size_t *nmatched, char *err,
		     size_t errlen, struct tool_out *o)
{
	json_t *kinds = kinds_get(be, err, errlen, o), *k, *all = json_array();
	size_t i, n = 0;
	*nkinds = 0;
	if (nmatched)
		*nmatched = 0;
	if (!kinds || !all) {
		json_decref(kinds);
		json_decref(all);
		return NULL;
	}
	json_array_foreach(kinds, i, k)
	{
		const char *name = json_string_value(json_object_get(k, "name"));
		const char *mod = json_string_value(json_object_get(k, "module"));
		int declared = severity_rank(json_string_value(json_object_get(k, "severity")));
		if (!name)
			continue;
		char path[512] = "/api/v1/events", lim[24];
		snprintf(lim, sizeof(lim), "%zu", limit);
		if (query_add(path, sizeof(path), "type", name) || query_add(path, sizeof(path), "since", since) ||
		    (container && query_add(path, sizeof(path), "container", container)) ||
		    query_add(path, sizeof(path), "limit", declared >= min_rank ? lim : SCAN_LIMIT)) {
			snprintf(err, errlen, "arguments too long");
			json_decref(kinds);
			json_decref(all);
			return NULL;
		}
		json_t *j, *ev;
		long st;
		if (api_get(be, path, &j, &st, err, errlen, o)) {
			json_decref(kinds);
			json_decref(all);
			return NULL;
		}
		(*nkinds)++;
		size_t x;
		json_array_foreach(json_object_get(j, "events"), x, ev)
		{
			if (severity_rank(json_string_value(json_object_get(ev, "severity"))) >= min_rank &&
			    (!keep || keep(ev))) {
				json_object_set_new(ev, "module", json_string(mod ? mod : ""));
				json_array_append(all, ev);
				n++;
			}
		}
		json_decref(j);
	}
	json_decref(kinds);
	/* newest first across kinds (ids increase in insertion order) */
	json_t **v = n ? calloc(n, sizeof(*v)) : NULL;
	json_t *out = json_array();
	if (n && v) {
		for (i = 0; i < n; i++)
			v[i] = json_array_get(all, i);
		qsort(v, n, sizeof(*v), by_id_desc);
		for (i = 0; i < n && i < limit; i++)
			json_array_append(out, v[i]);
	}
	free(v);
	json_decref(all);
	if (nmatched)
		*nmatched = n;
	return out;
}

/* One line of the text summary for an event. */
static void event_line(struct tool_out *o, json_t *ev)
{
	const char *cid = json_string_value(json_object_get(ev, "container_id"));
	const char *comm = json_string_value(json_object_get(ev, "comm"));
	tool_printf(o, "- %s %s [%s] container=%.12s comm=%s pid=%lld\n", json_string_value(json_object_get(ev, "time")),
		    json_string_value(json_object_get(ev, "type")), json_string_value(json_object_get(ev, "severity")),
		    cid && *cid ? cid : "host", comm ? comm : "-", (long long)json_integer_value(json_object_get(ev, "pid")));
}

void tool_recent_faults(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o)
{
	const char *container = arg_str(args, "container", NULL), *since = arg_str(args, "since", "1h");
	int min = severity_rank(arg_str(args, "min_severity", "warning"));
	size_t limit = (size_t)arg_int(args, "limit", 50), nk;
	char err[400];
	json_t *f = faults_query(be, container, since, min, NULL, limit, &nk, NULL, err, sizeof(err), o);
	if (!f) {
		tool_fail(o, "recent_faults: %s", err);
		return;
	}
	size_t i, n = json_array_size(f);
	json_t *ev;
	tool_printf(o, "%zu event(s) of severity %s or worse since %s%s%s (%zu event kinds looked at)\n", n,
		    arg_str(args, "min_severity", "warning"), since, container ? " in container " : "",
		    container ? container : "", nk);
	json_array_foreach(f, i, ev) event_line(o, ev);
	o->structured = json_pack("{s:o, s:I, s:s, s:s, s:I}", "faults", f, "count", (json_int_t)n, "since", since,
				  "min_severity", arg_str(args, "min_severity", "warning"), "kinds_queried", (json_int_t)nk);
}

/* A hardware fault: an event about a device or a CPU (the common field
 * subject_kind, docs/API.md), whichever module reported it, so the
 * hardware and GPU modules' kinds are found without naming them. */
static int hw_subject(json_t *ev)
{
	const char *s = json_string_value(json_object_get(ev, "subject_kind"));
	return s && (!strcmp(s, "device") || !strcmp(s, "cpu"));
}

void tool_hw_faults(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o)
{
	const char *since = arg_str(args, "since", "24h");
	size_t limit = (size_t)arg_int(args, "limit", 100), nk;
	char err[400];
	json_t *f = faults_query(be, NULL, since, 0, hw_subject, limit, &nk, NULL, err, sizeof(err), o);
	if (!f) {
		tool_fail(o, "hw_faults: %s", err);
		return;
	}
	size_t i, n = json_array_size(f);
	json_t *ev;
	if (!n)
		tool_printf(o, "no hardware events (events about a device or a CPU) since %s in any of the %zu event kinds: "
			       "either none happened or this agent has no module reporting them\n", since, nk);
	else
		tool_printf(o, "%zu hardware event(s) (about a device or a CPU) since %s\n", n, since);
	json_array_foreach(f, i, ev)
	{
		const char *dev = json_string_value(json_object_get(ev, "device"));
		char where[96];
		if (dev)
			snprintf(where, sizeof(where), "device %.80s", dev);
		else
			snprintf(where, sizeof(where), "cpu %lld", (long long)json_integer_value(json_object_get(ev, "cpu")));
		tool_printf(o, "- %s %s [%s] %s\n", json_string_value(json_object_get(ev, "time")),
			    json_string_value(json_object_get(ev, "type")), json_string_value(json_object_get(ev, "severity")),
			    where);
	}
	o->structured = json_pack("{s:b, s:o, s:I, s:s, s:I}", "present", n > 0, "faults", f, "count", (json_int_t)n,
				  "since", since, "kinds_queried", (json_int_t)nk);
}
