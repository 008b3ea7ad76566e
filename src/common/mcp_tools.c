/* The tool table (docs/MCP.md "Tools"): names, schemas, annotations; the
 * argument check against the input schema; the bounded CallToolResult. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mcp_tools.h"

#define S_CONTAINER "\"container\":{\"type\":\"string\",\"minLength\":1,\"description\":\"container id, or a prefix of at least 4 characters (list_containers)\"}"
#define S_SINCE(d) "\"since\":{\"type\":\"string\",\"minLength\":1,\"description\":\"start of the window: a duration ago (90s, 15m, 2h, 7d), RFC 3339, or ns since the epoch; default " d "\"}"
#define S_LIMIT(d, m) "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":" #m ",\"description\":\"at most this many (default " #d ")\"}"
#define S_TOP "\"top\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":50,\"description\":\"frames listed (default 20)\"}"
#define S_ID(n) "\"" n "\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64,\"description\":\"capture (task) id, from capture_profile or list_captures\"}"
#define OUT(req, props) "{\"type\":\"object\",\"required\":[" req "],\"properties\":{\"truncated\":{\"type\":\"boolean\"}" props "}}"

struct tool {
	const char *name, *title, *description;
	const char *input;  /* JSON Schema text */
	const char *output; /* JSON Schema text */
	int read_only;
	void (*run)(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o);
};

static const struct tool tools[] = {
	{"list_containers", "List containers",
	 "Containers the agent has seen on this node (id, pod, names, runtime, event counts).",
	 "{\"type\":\"object\",\"properties\":{" S_LIMIT(200, 2000) "},\"additionalProperties\":false}",
	 OUT("\"containers\",\"count\"", ",\"containers\":{\"type\":\"array\"},\"count\":{\"type\":\"integer\"}"), 1,
	 tool_list_containers},
	{"container_health", "Container health",
	 "One container now: workload statistics (CPU, memory, I/O, pressure/PSI), runqueue wait and CPU throttling "
	 "from the sched module, and its recent events of severity warning or worse.",
	 "{\"type\":\"object\",\"properties\":{" S_CONTAINER "," S_SINCE("15m") "},\"required\":[\"container\"],\"additionalProperties\":false}",
	 OUT("\"container\",\"faults\"", ",\"container\":{\"type\":\"string\"},\"faults\":{\"type\":\"array\"}"), 1,
	 tool_container_health},
	{"recent_faults", "Recent faults",
	 "Events of severity warning or worse (OOM kills, crashes, hung tasks, drops, hardware errors: every event "
	 "kind the agent's modules declare), newest first, optionally of one container.",
	 "{\"type\":\"object\",\"properties\":{\"container\":{\"type\":\"string\",\"minLength\":1,\"description\":\"only this container (id or prefix)\"},"
	 S_SINCE("1h") "," S_LIMIT(50, 500) ",\"min_severity\":{\"type\":\"string\",\"enum\":[\"notice\",\"warning\",\"error\",\"critical\"],\"description\":\"default warning\"}},\"additionalProperties\":false}",
	 OUT("\"faults\",\"count\"", ",\"faults\":{\"type\":\"array\"},\"count\":{\"type\":\"integer\"}"), 1,
	 tool_recent_faults},
	{"hw_faults", "Hardware faults",
	 "Hardware and GPU error events of any severity: every event whose subject is a device or a CPU (machine "
	 "checks, EDAC, PCIe AER, GPU Xid, ... from whichever module reports them); says so when there are none.",
	 "{\"type\":\"object\",\"properties\":{" S_SINCE("24h") "," S_LIMIT(100, 1000) "},\"additionalProperties\":false}",
	 OUT("\"present\",\"faults\"", ",\"present\":{\"type\":\"boolean\"},\"faults\":{\"type\":\"array\"}"), 1,
	 tool_hw_faults},
	{"explain_latency", "Explain a container's latency",
	 "The evidence for a container's latency, measured, not guessed: runqueue wait (percentiles, share of "
	 "runnable time, internal vs external, the neighbours that caused it), CFS throttling, memory reclaim and "
	 "compaction stalls, and I/O and stall modules' figures when they are present (absent ones are named), plus "
	 "the container's latency-related events in the window.",
	 "{\"type\":\"object\",\"properties\":{" S_CONTAINER "," S_SINCE("15m") "},\"required\":[\"container\"],\"additionalProperties\":false}",
	 OUT("\"container\",\"components\",\"absent\"", ",\"container\":{\"type\":\"string\"},\"components\":{\"type\":\"array\"},\"absent\":{\"type\":\"array\"}"), 1,
	 tool_explain_latency},
	{"capture_profile", "Capture a CPU profile",
	 "Start an on-CPU or off-CPU profile (a kernel task: BPF programs attached for the duration) of a container, "
	 "pod or process. Admin only. Returns the capture id at once; read it with get_profile.",
	 "{\"type\":\"object\",\"properties\":{" S_CONTAINER ",\"pod\":{\"type\":\"string\",\"minLength\":1},\"pid\":{\"type\":\"integer\",\"minimum\":1},"
	 "\"kind\":{\"type\":\"string\",\"enum\":[\"on_cpu\",\"off_cpu\"],\"description\":\"default on_cpu\"},"
	 "\"duration_s\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":300,\"description\":\"default 10 (the agent's tasks.max_duration bounds it)\"},"
	 "\"hz\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10000,\"description\":\"on-CPU sampling frequency\"}},\"additionalProperties\":false}",
	 OUT("\"id\",\"status\"", ",\"id\":{\"type\":\"string\"},\"status\":{\"type\":\"string\"}"), 0,
	 tool_capture_profile},
	{"get_profile", "Read a profile",
	 "A capture's state and, once done, its top frames by self time (function, module, self, total, share).",
	 "{\"type\":\"object\",\"properties\":{" S_ID("id") "," S_TOP ",\"wait_s\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":60,\"description\":\"wait up to this long for the capture to end (default 0; over HTTP /mcp no wait: poll)\"}},\"required\":[\"id\"],\"additionalProperties\":false}",
	 OUT("\"id\",\"status\"", ",\"id\":{\"type\":\"string\"},\"status\":{\"type\":\"string\"},\"top\":{\"type\":\"array\"}"), 1,
	 tool_get_profile},
	{"diff_profiles", "Compare two profiles",
	 "Self time per function of two finished captures (a = before, b = after), as shares of each profile, "
	 "sorted by the largest change.",
	 "{\"type\":\"object\",\"properties\":{" S_ID("a") "," S_ID("b") "," S_TOP "},\"required\":[\"a\",\"b\"],\"additionalProperties\":false}",
	 OUT("\"a\",\"b\",\"changes\"", ",\"a\":{\"type\":\"object\"},\"b\":{\"type\":\"object\"},\"changes\":{\"type\":\"array\"}"), 1,
	 tool_diff_profiles},
	{"list_captures", "List captures",
	 "Profile and trace captures (tasks) the agent holds, newest first: id, type, status, target, times.",
	 "{\"type\":\"object\",\"properties\":{" S_LIMIT(20, 500) "},\"additionalProperties\":false}",
	 OUT("\"captures\",\"count\"", ",\"captures\":{\"type\":\"array\"},\"count\":{\"type\":\"integer\"}"), 1,
	 tool_list_captures},
};
#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

json_t *sl_mcp_tools_list(void)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < NTOOLS; i++) {
		const struct tool *t = &tools[i];
		json_t *in = json_loads(t->input, 0, NULL), *outs = json_loads(t->output, 0, NULL);
		if (!in || !outs) { /* a typo in the table: a unit test catches it */
			json_decref(in);
			json_decref(outs);
			continue;
		}
		json_array_append_new(
			a, json_pack("{s:s, s:s, s:s, s:o, s:o, s:{s:s, s:b, s:b, s:b, s:b}}", "name", t->name, "title",
				     t->title, "description", t->description, "inputSchema", in, "outputSchema", outs,
				     "annotations", "title", t->title, "readOnlyHint", t->read_only, "destructiveHint", 0,
				     "idempotentHint", t->read_only, "openWorldHint", 0));
	}
	return a;
}

/* The argument check: the subset of JSON Schema our input schemas use
 * (object, properties, required, additionalProperties false; string with
 * minLength/maxLength/enum; integer with minimum/maximum). 0 or -1 and why. */
static int check_args(json_t *schema, json_t *args, char *err, size_t errlen)
{
	json_t *props = json_object_get(schema, "properties"), *req = json_object_get(schema, "required"), *v;
	const char *k;
	size_t i;
	json_array_foreach(req, i, v)
	{
		if (!json_object_get(args, json_string_value(v))) {
			snprintf(err, errlen, "argument '%s' is required", json_string_value(v));
			return -1;
		}
	}
	json_object_foreach(args, k, v)
	{
		json_t *p = json_object_get(props, k);
		if (!p) {
			snprintf(err, errlen, "unknown argument '%.60s'", k);
			return -1;
		}
		const char *type = json_string_value(json_object_get(p, "type"));
		if (!strcmp(type, "string")) {
			if (!json_is_string(v)) {
				snprintf(err, errlen, "argument '%s' must be a string", k);
				return -1;
			}
			size_t n = json_string_length(v);
			json_t *mn = json_object_get(p, "minLength"), *mx = json_object_get(p, "maxLength");
			json_t *en = json_object_get(p, "enum"), *e;
			if ((mn && n < (size_t)json_integer_value(mn)) || (mx && n > (size_t)json_integer_value(mx)) ||
			    memchr(json_string_value(v), 0, n)) {
				snprintf(err, errlen, "argument '%s': length %zu out of range (or a NUL byte)", k, n);
				return -1;
			}
			if (en) {
				int ok = 0;
				json_array_foreach(en, i, e) ok |= json_equal(e, v);
				if (!ok) {
					snprintf(err, errlen, "argument '%s': '%.40s' is not one of the allowed values", k,
						 json_string_value(v));
					return -1;
				}
			}
		} else if (!strcmp(type, "integer")) {
			if (!json_is_integer(v)) {
				snprintf(err, errlen, "argument '%s' must be an integer", k);
				return -1;
			}
			json_int_t n = json_integer_value(v);
			json_t *mn = json_object_get(p, "minimum"), *mx = json_object_get(p, "maximum");
			if ((mn && n < json_integer_value(mn)) || (mx && n > json_integer_value(mx))) {
				snprintf(err, errlen, "argument '%s': %lld out of range [%lld, %lld]", k, (long long)n,
					 mn ? (long long)json_integer_value(mn) : 0LL,
					 mx ? (long long)json_integer_value(mx) : 0LL);
				return -1;
			}
		}
	}
	return 0;
}

/* The largest array under o (depth-first), for cutting. */
static json_t *largest_array(json_t *o, size_t *best)
{
	json_t *found = NULL, *v, *r;
	size_t i;
	const char *k;
	if (json_is_array(o)) {
		if (json_array_size(o) > *best) {
			*best = json_array_size(o);
			found = o;
		}
		json_array_foreach(o, i, v) if ((r = largest_array(v, best))) found = r;
	} else if (json_is_object(o)) {
		json_object_foreach(o, k, v) if ((r = largest_array(v, best))) found = r;
	}
	return found;
}

/* Cuts array tails of s until its compact text fits max; "truncated": true. */
static void bound_structured(json_t *s, size_t max)
{
	for (int round = 0; round < 64; round++) {
		char *t = json_dumps(s, JSON_COMPACT);
		size_t n = t ? strlen(t) : 0;
		free(t);
		if (n <= max)
			return;
		size_t best = 0;
		json_t *a = largest_array(s, &best);
		json_object_set_new(s, "truncated", json_true());
		if (!a || best == 0) {
			json_object_clear(s);
			json_object_set_new(s, "truncated", json_true());
			return;
		}
		size_t keep = best / 2;
		while (json_array_size(a) > keep)
			json_array_remove(a, json_array_size(a) - 1);
	}
}

static const char trunc_marker[] = "\n...[truncated]";

int sl_mcp_tools_call(const struct sl_mcp_backend *be, const char *name, json_t *args, json_t **result,
		      char *err, size_t errlen)
{
	const struct tool *t = NULL;
	for (size_t i = 0; i < NTOOLS; i++)
		if (!strcmp(tools[i].name, name))
			t = &tools[i];
	if (!t) {
		snprintf(err, errlen, "unknown tool '%.80s' (tools/list lists them)", name);
		return SL_MCP_INVALID_PARAMS;
	}
	json_t *empty = NULL;
	if (!args)
		args = empty = json_object();
	struct tool_out o = {0};
	json_t *schema = json_loads(t->input, 0, NULL);
	char why[256];
	if (!schema || !args) {
		json_decref(schema);
		json_decref(empty);
		snprintf(err, errlen, "out of memory");
		return SL_MCP_INTERNAL_ERROR;
	}
	if (check_args(schema, args, why, sizeof(why)))
		tool_fail(&o, "%s: invalid arguments: %s", name, why);
	else
		t->run(be, args, &o);
	json_decref(schema);
	json_decref(empty);
	if (o.forbidden) {
		snprintf(err, errlen, "permission denied: %s", o.errmsg);
		json_decref(o.structured);
		free(o.text);
		return SL_MCP_FORBIDDEN;
	}
	if (!o.text)
		tool_printf(&o, "%s", o.is_error ? "tool failed" : "done");
	if (o.len > SL_MCP_MAX_TEXT) {
		size_t cut = SL_MCP_MAX_TEXT - sizeof(trunc_marker);
		while (cut && (o.text[cut] & 0xc0) == 0x80) /* not inside a UTF-8 sequence */
			cut--;
		memcpy(o.text + cut, trunc_marker, sizeof(trunc_marker));
		o.len = cut + sizeof(trunc_marker) - 1;
	}
	json_t *r = json_object(), *txt = json_stringn(o.text ? o.text : "", o.len);
	if (!txt) /* text quoting invalid UTF-8 from the API */
		txt = json_string("(summary not valid UTF-8; see structuredContent)");
	json_object_set_new(r, "content", json_pack("[{s:s, s:o}]", "type", "text", "text", txt));
	if (o.structured && !o.is_error) {
		bound_structured(o.structured, SL_MCP_MAX_STRUCTURED);
		json_object_set_new(r, "structuredContent", o.structured);
	} else {
		json_decref(o.structured);
	}
	json_object_set_new(r, "isError", json_boolean(o.is_error));
	free(o.text);
	*result = r;
	return 0;
}
