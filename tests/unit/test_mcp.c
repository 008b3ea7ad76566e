/* The MCP server's transport-independent core (src/common/mcp*.c): the JSON-RPC
 * message checks, the dispatcher of both revisions (2025-11-25 handshake,
 * 2026-07-28 per-request _meta and HTTP header rules), and tools run
 * against a fake REST API backend (canned answers by path, requests
 * recorded): generic kinds from the schema, severity filter and order,
 * module views found through /healthz, 403 as -32010, bounded results. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/mcp.h"

/* ---- the fake API ---- */

struct canned {
	const char *prefix; /* a request path beginning with it gets this */
	long status;
	const char *body;
};
static const struct canned *g_canned;
static char g_log[8192]; /* the requests, one "METHOD PATH\n" each */

static int fake_request(void *ctx, const char *method, const char *path, const char *body, long *status,
			char **resp, char *err, size_t errlen)
{
	(void)ctx;
	(void)body;
	(void)err;
	(void)errlen;
	size_t n = strlen(g_log);
	snprintf(g_log + n, sizeof(g_log) - n, "%s %s\n", method, path);
	for (const struct canned *c = g_canned; c && c->prefix; c++) {
		if (!strncmp(path, c->prefix, strlen(c->prefix))) {
			*status = c->status;
			*resp = strdup(c->body);
			return 0;
		}
	}
	*status = 404;
	*resp = strdup("{\"error\":{\"code\":\"NOT_FOUND\",\"message\":\"no route\"}}");
	return 0;
}
static const struct sl_mcp_backend be = {fake_request, NULL, 0};

/* Handles msg, returns the parsed answer (NULL when none) and the status. */
static json_t *handle(enum sl_mcp_transport tr, const struct sl_mcp_http_headers *h, struct sl_mcp_session *s,
		      const char *msg, unsigned *status)
{
	struct sl_mcp_reply r;
	g_log[0] = 0;
	sl_mcp_handle(&be, tr, h, s, msg, strlen(msg), &r);
	if (status)
		*status = r.http_status;
	json_t *j = r.body ? json_loads(r.body, 0, NULL) : NULL;
	if (r.body)
		assert_non_null(j);
	free(r.body);
	return j;
}

static int err_code(json_t *j)
{
	return (int)json_integer_value(json_object_get(json_object_get(j, "error"), "code"));
}

/* ---- message shape ---- */

static void test_parse(void **state)
{
	(void)state;
	static const struct {
		const char *msg;
		int code;
	} cases[] = {
		{"{", SL_MCP_PARSE_ERROR},
		{"", SL_MCP_PARSE_ERROR},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"x\"}", SL_MCP_PARSE_ERROR}, /* duplicate key */
		{"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", SL_MCP_INVALID_REQUEST},
		{"42", SL_MCP_INVALID_REQUEST},
		{"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", SL_MCP_INVALID_REQUEST},
		{"{\"id\":1,\"method\":\"ping\"}", SL_MCP_INVALID_REQUEST},
		{"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", SL_MCP_INVALID_REQUEST},
		{"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", SL_MCP_INVALID_REQUEST},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", SL_MCP_INVALID_REQUEST},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}", SL_MCP_INVALID_REQUEST},
		{"{\"jsonrpc\":\"2.0\",\"id\":1}", SL_MCP_INVALID_REQUEST},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[]}", SL_MCP_INVALID_PARAMS},
		{"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\"}", 0},
		{"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", 0},
		{"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sl_mcp_msg m;
		json_t *id;
		char err[256];
		int rc = sl_mcp_parse(cases[i].msg, strlen(cases[i].msg), &m, &id, err, sizeof(err));
		if (rc != cases[i].code)
			fail_msg("%s: got %d (%s), want %d", cases[i].msg, rc, err, cases[i].code);
		sl_mcp_msg_free(&m);
	}
	struct sl_mcp_msg m;
	json_t *id;
	char err[256];
	const char *n = "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}";
	assert_int_equal(sl_mcp_parse(n, strlen(n), &m, &id, err, sizeof(err)), 0);
	assert_int_equal(m.kind, SL_MCP_NOTIFICATION);
	sl_mcp_msg_free(&m);
	/* the id of an invalid request is echoed when it can be read */
	json_t *j = handle(SL_MCP_STDIO, NULL, NULL, "{\"jsonrpc\":\"1.0\",\"id\":77,\"method\":\"ping\"}", NULL);
	assert_int_equal(json_integer_value(json_object_get(j, "id")), 77);
	json_decref(j);
}

static void test_error_text_bad_utf8(void **state)
{
	(void)state;
	char *t = sl_mcp_error_text(NULL, -32600, "bad \xff byte", NULL);
	assert_non_null(t);
	json_t *j = json_loads(t, 0, NULL);
	assert_non_null(j);
	assert_true(strstr(json_string_value(json_object_get(json_object_get(j, "error"), "message")), "UTF-8") != NULL);
	json_decref(j);
	free(t);
}

/* ---- 2025-11-25 ---- */

static void test_legacy(void **state)
{
	(void)state;
	struct sl_mcp_session s = {0};
	unsigned st;
	static const struct {
		const char *asked, *got;
	} v[] = {{"2025-11-25", "2025-11-25"}, {"2025-06-18", "2025-06-18"}, {"2026-07-28", "2025-11-25"}, {"1999-01-01", "2025-11-25"}};
	for (size_t i = 0; i < 4; i++) {
		char msg[300];
		snprintf(msg, sizeof(msg),
			 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
			 v[i].asked);
		json_t *j = handle(SL_MCP_STDIO, NULL, &s, msg, &st);
		json_t *r = json_object_get(j, "result");
		assert_string_equal(json_string_value(json_object_get(r, "protocolVersion")), v[i].got);
		assert_string_equal(json_string_value(json_object_get(json_object_get(r, "serverInfo"), "name")), "sandlens");
		assert_non_null(json_object_get(json_object_get(r, "capabilities"), "tools"));
		assert_null(json_object_get(r, "resultType")); /* 2026-07-28 only */
		json_decref(j);
		assert_true(s.initialized);
		assert_string_equal(s.version, v[i].got);
	}
	assert_null(handle(SL_MCP_STDIO, NULL, &s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &st));
	assert_int_equal(st, 202);
	json_t *j = handle(SL_MCP_STDIO, NULL, &s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}", NULL);
	assert_true(json_is_object(json_object_get(j, "result")));
	json_decref(j);
	j = handle(SL_MCP_HTTP, &(struct sl_mcp_http_headers){0}, NULL, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"server/discover\"}", &st);
	assert_int_equal(err_code(j), SL_MCP_METHOD_NOT_FOUND);
	assert_int_equal(st, 200); /* legacy: in band */
	json_decref(j);
	/* an unsupported legacy header */
	struct sl_mcp_http_headers h = {.protocol_version = "1900-01-01"};
	j = handle(SL_MCP_HTTP, &h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", &st);
	assert_int_equal(st, 400);
	json_decref(j);
	h.protocol_version = "2025-06-18";
	j = handle(SL_MCP_HTTP, &h, NULL, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", &st);
	assert_int_equal(st, 200);
	json_decref(j);
}

static void test_tools_list(void **state)
{
	(void)state;
	json_t *t = sl_mcp_tools_list(), *e;
	size_t i;
	assert_int_equal(json_array_size(t), 9); /* every schema of the table parses */
	json_array_foreach(t, i, e)
	{
		const char *name = json_string_value(json_object_get(e, "name"));
		json_t *in = json_object_get(e, "inputSchema"), *out = json_object_get(e, "outputSchema");
		assert_string_equal(json_string_value(json_object_get(in, "type")), "object");
		assert_string_equal(json_string_value(json_object_get(out, "type")), "object");
		assert_non_null(json_object_get(json_object_get(out, "properties"), "truncated"));
		int ro = json_is_true(json_object_get(json_object_get(e, "annotations"), "readOnlyHint"));
		assert_int_equal(ro, strcmp(name, "capture_profile") != 0);
	}
	json_decref(t);
}

/* ---- 2026-07-28 ---- */

#define META "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}"

static void test_modern(void **state)
{
	(void)state;
	unsigned st;
	const char *disc = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{" META "}}";
	json_t *j = handle(SL_MCP_STDIO, NULL, NULL, disc, &st), *r = json_object_get(j, "result");
	assert_string_equal(json_string_value(json_object_get(r, "resultType")), "complete");
	assert_string_equal(json_string_value(json_array_get(json_object_get(r, "supportedVersions"), 0)), "2026-07-28");
	assert_true(json_integer_value(json_object_get(r, "ttlMs")) > 0);
	assert_string_equal(json_string_value(json_object_get(r, "cacheScope")), "public");
	assert_non_null(json_object_get(json_object_get(r, "_meta"), "io.modelcontextprotocol/serverInfo"));
	json_decref(j);
	/* no initialize, no ping in 2026-07-28 */
	j = handle(SL_MCP_HTTP, &(struct sl_mcp_http_headers){"2026-07-28", "ping", NULL}, NULL,
		   "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{" META "}}", &st);
	assert_int_equal(err_code(j), SL_MCP_METHOD_NOT_FOUND);
	assert_int_equal(st, 404);
	json_decref(j);
	/* unsupported claimed revision */
	j = handle(SL_MCP_STDIO, NULL, NULL,
		   "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2030-01-01\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
		   &st);
	assert_int_equal(err_code(j), SL_MCP_UNSUPPORTED_VERSION);
	assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(j, "error"), "data"), "requested")),
			    "2030-01-01");
	json_decref(j);
	/* the HTTP header rules */
	static const struct {
		struct sl_mcp_http_headers h;
		int code;
	} hc[] = {
		{{NULL, "tools/call", "hw_faults"}, SL_MCP_HEADER_MISMATCH},
		{{"2025-11-25", "tools/call", "hw_faults"}, SL_MCP_HEADER_MISMATCH},
		{{"2026-07-28", NULL, "hw_faults"}, SL_MCP_HEADER_MISMATCH},
		{{"2026-07-28", "tools/list", "hw_faults"}, SL_MCP_HEADER_MISMATCH},
		{{"2026-07-28", "tools/call", NULL}, SL_MCP_HEADER_MISMATCH},
		{{"2026-07-28", "tools/call", "list_captures"}, SL_MCP_HEADER_MISMATCH},
		{{"2026-07-28", "tools/call", "=?base64?!!?="}, SL_MCP_HEADER_MISMATCH},
		{{"2026-07-28", "tools/call", "=?base64?aHdfZmF1bHRz?="}, 0}, /* base64 of hw_faults */
		{{"2026-07-28", "tools/call", "hw_faults"}, 0},
	};
	static const struct canned schema[] = {{"/api/v1/schema/events", 200, "{\"kinds\":[]}"}, {NULL, 0, NULL}};
	g_canned = schema;
	const char *call = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"hw_faults\"," META "}}";
	for (size_t i = 0; i < sizeof(hc) / sizeof(hc[0]); i++) {
		j = handle(SL_MCP_HTTP, &hc[i].h, NULL, call, &st);
		if (err_code(j) != hc[i].code)
			fail_msg("case %zu: code %d, want %d", i, err_code(j), hc[i].code);
		assert_int_equal(st, hc[i].code ? 400 : 200);
		if (!hc[i].code)
			assert_string_equal(json_string_value(json_object_get(json_object_get(j, "result"), "resultType")), "complete");
		json_decref(j);
	}
	/* notifications need no Mcp-Method */
	j = handle(SL_MCP_HTTP, &(struct sl_mcp_http_headers){"2026-07-28", NULL, NULL}, NULL,
		   "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{" META "}}", &st);
	assert_null(j);
	assert_int_equal(st, 202);
}

/* ---- tools over the fake API ---- */

static json_t *call_tool(const char *name, const char *args, int *code)
{
	char msg[1024];
	snprintf(msg, sizeof(msg), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
		 name, args);
	json_t *j = handle(SL_MCP_STDIO, NULL, NULL, msg, NULL);
	*code = err_code(j);
	json_t *r = json_incref(json_object_get(j, "result"));
	json_decref(j);
	return r;
}

static const struct canned faults_api[] = {
	{"/api/v1/schema/events", 200,
	 "{\"kinds\":[{\"name\":\"boom\",\"module\":\"m1\",\"severity\":\"error\"},{\"name\":\"quit\",\"module\":\"m2\",\"severity\":\"info\"}]}"},
	{"/api/v1/events?type=boom", 200,
	 "{\"events\":[{\"id\":5,\"type\":\"boom\",\"severity\":\"error\",\"time\":\"t5\",\"subject_kind\":\"device\",\"device\":\"gpu:0\"}]}"},
	{"/api/v1/events?type=quit", 200,
	 "{\"events\":[{\"id\":9,\"type\":\"quit\",\"severity\":\"warning\",\"time\":\"t9\",\"subject_kind\":\"task\"},"
	 "{\"id\":7,\"type\":\"quit\",\"severity\":\"info\",\"time\":\"t7\",\"subject_kind\":\"task\"}]}"},
	{NULL, 0, NULL},
};

static void test_recent_faults(void **state)
{
	(void)state;
	int code;
	g_canned = faults_api;
	json_t *r = call_tool("recent_faults", "{\"container\":\"abcd1234\",\"since\":\"2h\"}", &code), *s;
	assert_int_equal(code, 0);
	assert_false(json_is_true(json_object_get(r, "isError")));
	s = json_object_get(r, "structuredContent");
	/* the info event is left out; newest (largest id) first; kinds from the schema */
	assert_int_equal(json_integer_value(json_object_get(s, "count")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(s, "faults"), 0), "id")), 9);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(s, "faults"), 1), "module")), "m1");
	assert_non_null(strstr(g_log, "GET /api/v1/events?type=boom&since=2h&container=abcd1234&limit=50\n"));
	/* a kind declared below the minimum is scanned deeper (its events may be worse) */
	assert_non_null(strstr(g_log, "GET /api/v1/events?type=quit&since=2h&container=abcd1234&limit=500\n"));
	json_decref(r);

	r = call_tool("hw_faults", "{}", &code);
	s = json_object_get(r, "structuredContent");
	assert_int_equal(json_integer_value(json_object_get(s, "count")), 1); /* only the device event */
	assert_true(json_is_true(json_object_get(s, "present")));
	json_decref(r);

	/* an argument out of the schema: a tool error, the API never asked */
	r = call_tool("recent_faults", "{\"limit\":0}", &code);
	assert_int_equal(code, 0);
	assert_true(json_is_true(json_object_get(r, "isError")));
	assert_null(json_object_get(r, "structuredContent"));
	assert_string_equal(g_log, "");
	json_decref(r);
	r = call_tool("recent_faults", "{\"min_severity\":\"loud\"}", &code);
	assert_true(json_is_true(json_object_get(r, "isError")));
	json_decref(r);
}

static void test_forbidden_and_errors(void **state)
{
	(void)state;
	int code;
	static const struct canned api[] = {
		{"/api/v1/tasks", 403, "{\"error\":{\"code\":\"PERMISSION_DENIED\",\"message\":\"this route is for admins\"}}"},
		{"/api/v1/containers", 500, "{\"error\":{\"code\":\"INTERNAL\",\"message\":\"store query failed\"}}"},
		{NULL, 0, NULL},
	};
	g_canned = api;
	json_t *r = call_tool("capture_profile", "{\"pid\":1}", &code);
	assert_int_equal(code, SL_MCP_FORBIDDEN);
	assert_null(r);
	assert_non_null(strstr(g_log, "POST /api/v1/tasks\n"));
	r = call_tool("list_captures", "{}", &code);
	assert_int_equal(code, SL_MCP_FORBIDDEN);
	r = call_tool("capture_profile", "{\"pid\":1,\"container\":\"abcd\"}", &code); /* two targets */
	assert_int_equal(code, 0);
	assert_true(json_is_true(json_object_get(r, "isError")));
	json_decref(r);
	r = call_tool("list_containers", "{}", &code); /* a 500: a tool error with the API's message */
	assert_int_equal(code, 0);
	assert_true(json_is_true(json_object_get(r, "isError")));
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(json_object_get(r, "content"), 0), "text")),
			       "store query failed"));
	json_decref(r);
	r = call_tool("get_profile", "{\"id\":\"../x\"}", &code);
	assert_true(json_is_true(json_object_get(r, "isError")));
	json_decref(r);
}

static void test_explain_latency_generic(void **state)
{
	(void)state;
	int code;
	static const struct canned api[] = {
		{"/healthz", 503,
		 "{\"status\":\"failed\",\"modules\":[{\"name\":\"alpha\",\"state\":\"running\"},{\"name\":\"beta\",\"state\":\"failed\"},{\"name\":\"gamma\",\"state\":\"running\"}]}"},
		{"/api/v1/alpha", 200,
		 "{\"interval_seconds\":1.0,\"containers\":[{\"container_id\":\"abcd1234ffff\",\"interval\":{\"wait_seconds\":0.25,\"p99_seconds\":0.01,\"runnable_wait_share\":0.5},"
		 "\"throttling\":{\"interval_throttled_seconds\":0.1},\"reclaim\":{\"interval\":{\"seconds\":0.5}}},{\"container_id\":\"other\",\"interval\":{\"wait_seconds\":9}}]}"},
		{"/api/v1/schema/events", 200, "{\"kinds\":[]}"},
		{NULL, 0, NULL},
	};
	g_canned = api;
	json_t *r = call_tool("explain_latency", "{\"container\":\"abcd1234\"}", &code);
	assert_int_equal(code, 0);
	json_t *s = json_object_get(r, "structuredContent"), *c = json_object_get(s, "components");
	assert_int_equal(json_array_size(c), 3);
	/* largest first; the other container's 9 s is not counted */
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 0), "component")), "alpha reclaim");
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 1), "component")), "runqueue wait");
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 2), "source")), "alpha");
	/* the failed module is absent; gamma (no view: 404) is not an error */
	assert_int_equal(json_array_size(json_object_get(s, "absent")), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(s, "absent"), 0), "module")), "beta");
	assert_non_null(strstr(g_log, "GET /api/v1/gamma\n"));
	assert_null(strstr(g_log, "GET /api/v1/beta\n"));
	json_decref(r);
}

/* explain_latency says when its event list is the newest 20 of more;
 * get_profile's "top frames by self" lists no frame without self time. */
static void test_counts_and_self(void **state)
{
	(void)state;
	int code;
	char evs[8192];
	size_t n = (size_t)snprintf(evs, sizeof(evs), "{\"events\":[");
	for (int i = 0; i < 25; i++)
		n += (size_t)snprintf(evs + n, sizeof(evs) - n, "%s{\"id\":%d,\"type\":\"boom\",\"severity\":\"error\",\"time\":\"t\"}",
				      i ? "," : "", 100 - i);
	snprintf(evs + n, sizeof(evs) - n, "]}");
	struct canned api[] = {
		{"/healthz", 200, "{\"status\":\"ok\",\"modules\":[]}"},
		{"/api/v1/schema/events", 200, "{\"kinds\":[{\"name\":\"boom\",\"module\":\"m1\",\"severity\":\"error\"}]}"},
		{"/api/v1/events?type=boom", 200, evs},
		{"/api/v1/tasks/t1/result", 200,
		 "{\"kind\":\"on_cpu\",\"unit\":\"samples\",\"total\":10,\"top\":[{\"function\":\"leaf\",\"module\":\"m\",\"self\":10,\"total\":10},"
		 "{\"function\":\"main\",\"module\":\"m\",\"self\":0,\"total\":10}]}"},
		{"/api/v1/tasks/t1", 200, "{\"id\":\"t1\",\"status\":\"done\"}"},
		{NULL, 0, NULL},
	};
	g_canned = api;
	json_t *r = call_tool("explain_latency", "{\"container\":\"abcd1234\"}", &code);
	assert_int_equal(code, 0);
	const char *text = json_string_value(json_object_get(json_array_get(json_object_get(r, "content"), 0), "text"));
	assert_non_null(strstr(text, "the newest 20 of at least 25 event(s)"));
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "structuredContent"), "events")), 20);
	json_decref(r);

	r = call_tool("get_profile", "{\"id\":\"t1\"}", &code);
	assert_int_equal(code, 0);
	json_t *top = json_object_get(json_object_get(r, "structuredContent"), "top");
	assert_int_equal(json_array_size(top), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(top, 0), "function")), "leaf");
	text = json_string_value(json_object_get(json_array_get(json_object_get(r, "content"), 0), "text"));
	assert_null(strstr(text, "main"));
	json_decref(r);
}

static void test_bounded(void **state)
{
	(void)state;
	int code;
	/* 20000 containers: the text and the structured content are cut */
	size_t cap = 20000 * 128 + 64, n = 0;
	char *body = malloc(cap);
	n += (size_t)snprintf(body + n, cap - n, "{\"containers\":[");
	for (int i = 0; i < 20000; i++)
		n += (size_t)snprintf(body + n, cap - n, "%s{\"container_id\":\"%064d\",\"events\":%d}", i ? "," : "", i, i);
	snprintf(body + n, cap - n, "]}");
	struct canned api[] = {{"/api/v1/containers", 200, body}, {NULL, 0, NULL}};
	g_canned = api;
	json_t *r = call_tool("list_containers", "{\"limit\":2000}", &code);
	assert_int_equal(code, 0);
	const char *text = json_string_value(json_object_get(json_array_get(json_object_get(r, "content"), 0), "text"));
	assert_true(strlen(text) <= SL_MCP_MAX_TEXT);
	assert_non_null(strstr(text, "...[truncated]"));
	json_t *s = json_object_get(r, "structuredContent");
	char *dump = json_dumps(s, JSON_COMPACT);
	assert_true(strlen(dump) <= SL_MCP_MAX_STRUCTURED);
	assert_true(json_is_true(json_object_get(s, "truncated")));
	assert_true(json_array_size(json_object_get(s, "containers")) > 100);
	free(dump);
	json_decref(r);
	free(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),          cmocka_unit_test(test_error_text_bad_utf8),
		cmocka_unit_test(test_legacy),         cmocka_unit_test(test_tools_list),
		cmocka_unit_test(test_modern),         cmocka_unit_test(test_recent_faults),
		cmocka_unit_test(test_forbidden_and_errors), cmocka_unit_test(test_explain_latency_generic), cmocka_unit_test(test_counts_and_self),
		cmocka_unit_test(test_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
