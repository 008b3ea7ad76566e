/* HTTP server: listeners, routing, replies. Routes and bodies: docs/API.md. */
#include "common/thread_cpu.h"
#include "api/api.h"
#include "api/api_flight.h"
#include "api/api_internal.h"
#include "common/dir_trust.h"
#include "profile/profile.h"
#include "api/api_tasks.h"
#include "api/api_profiles.h"
#include "api/api_captures.h"
#include "api/api_ui.h"
#include "api/api_watch.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agent/read.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "stats/stats.h"

#define MOD "api"
#define LISTEN_BACKLOG 64
#define CONN_LIMIT 64u
#define CONN_TIMEOUT_S 30u



void sl_api_reply_error(struct reply *r, unsigned status, const char *code, const char *msg)
{
	free(r->body);
	r->status = status;
	r->ctype = "application/json";
	r->body = sl_api_error_body(code, msg, &r->len);
}

static void reply_json_list(struct sl_api *api, struct reply *r, const char *key, json_t *items,
			    int64_t *cursor)
{
	r->body = sl_api_list_body(key, items, api->max_body, cursor, NULL, &r->len);
	if (!r->body) {
		sl_api_reply_error(r, 500, "INTERNAL", "out of memory");
		return;
	}
	r->status = 200;
	r->ctype = "application/json";
}

/* ---- handlers ---- */

typedef void (*handler_fn)(struct sl_api *api, const struct sl_api_param *p, size_t n,
			   struct reply *r);

static void h_healthz(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r)
{
	char err[256];
	if (sl_api_no_params(p, n, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	json_t *h = sl_read_health(api->a);
	if (!h) {
		sl_api_reply_error(r, 500, "INTERNAL", "health unavailable");
		return;
	}
	/* 200 while every module runs (some hooks may be degraded); 503 when
	 * the agent reports anything else (a module failed). */
	const char *st = json_string_value(json_object_get(h, "status"));
	r->status = st && (!strcmp(st, "ok") || !strcmp(st, "degraded")) ? 200 : 503;
	r->body = json_dumps(h, JSON_COMPACT);
	json_decref(h);
	if (!r->body) {
		sl_api_reply_error(r, 500, "INTERNAL", "out of memory");
		return;
	}
	r->len = strlen(r->body);
	r->ctype = "application/json";
	if (r->len > api->max_body)
		sl_api_reply_error(r, 500, "INTERNAL", "health body exceeds the response size bound");
}

static void h_events(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r)
{
	char err[256];
	struct sl_event_filter f;
	const char *types[SL_MAX_KINDS];
	size_t nt = sl_read_kind_names(api->a, types, SL_MAX_KINDS);
	if (sl_api_parse_event_params(p, n, sl_time_now_ns(), types, nt < SL_MAX_KINDS ? nt : SL_MAX_KINDS, &f, err,
				      sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	if (!sl_read_store(api->a)) {
		sl_api_reply_error(r, 500, "INTERNAL", "event store is not open");
		return;
	}
	err[0] = '\0';
	json_t *ev = sl_store_query_events(sl_read_store(api->a), &f, err, sizeof(err));
	if (!ev) {
		sl_api_reply_error(r, 500, "INTERNAL", err[0] ? err : "store query failed");
		return;
	}
	if (r->redact) /* the kinds' SL_FF_ADMIN fields (exec argv) */
		atomic_fetch_add(&sl_api_counters.argv_withheld, sl_read_withhold(api->a, ev));
	int64_t cursor = f.after_id;
	reply_json_list(api, r, "events", ev, &cursor);
	json_decref(ev);
}

static void h_containers(struct sl_api *api, const struct sl_api_param *p, size_t n,
			 struct reply *r)
{
	char err[256];
	if (sl_api_no_params(p, n, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	if (!sl_read_store(api->a)) {
		sl_api_reply_error(r, 500, "INTERNAL", "event store is not open");
		return;
	}
	err[0] = '\0';
	json_t *c = sl_store_query_containers(sl_read_store(api->a), err, sizeof(err));
	if (!c) {
		sl_api_reply_error(r, 500, "INTERNAL", err[0] ? err : "store query failed");
		return;
	}
	reply_json_list(api, r, "containers", c, NULL);
	json_decref(c);
}

/* Make r a compact JSON answer from j (stolen), bounded by max_body. */
static void reply_json(struct sl_api *api, struct reply *r, json_t *j, unsigned status, const char *what)
{
	r->body = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!r->body) {
		sl_api_reply_error(r, 500, "INTERNAL", "out of memory");
		return;
	}
	r->len = strlen(r->body);
	r->status = status;
	r->ctype = "application/json";
	if (r->len > api->max_body) {
		char msg[160];
		snprintf(msg, sizeof(msg), "%s body exceeds the response size bound", what);
		sl_api_reply_error(r, 500, "INTERNAL", msg);
	}
}

static const char *status_code(unsigned status)
{
	switch (status) {
	case 400: return "INVALID_ARGUMENT";
	case 403: return "PERMISSION_DENIED";
	case 404: return "NOT_FOUND";
	case 503: return "UNAVAILABLE";
	default: return "INTERNAL";
	}
}

/* GET /api/v1/schema/events: every kind's name, module, severity, field
 * schema and DETAILS template (the CLI renders DETAILS from it). */
static void h_schema(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r)
{
	char err[256];
	if (sl_api_no_params(p, n, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	json_t *j = sl_read_schema(api->a);
	if (!j) {
		sl_api_reply_error(r, 500, "INTERNAL", "out of memory");
		return;
	}
	reply_json(api, r, j, 200, "schema");
}

/* GET /api/v1/series?module=M&name=N: a module's per-container series;
 * GET /api/v1/series[?module=M]: the declared series. */
static void h_series(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r)
{
	static const char *const names[] = {"module", "name"};
	const char *vals[2];
	char err[256];
	unsigned status;

	if (sl_api_params_only(p, n, names, 2, vals, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	if (!vals[0] && vals[1]) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", "module: required with name");
		return;
	}
	err[0] = 0;
	/* no name: the list of declared series (of every running module, or of M) */
	json_t *j = vals[1] ? sl_read_series(api->a, vals[0], vals[1], &status, err, sizeof(err))
			    : sl_read_series_list(api->a, vals[0], &status, err, sizeof(err));
	if (!j) {
		sl_api_reply_error(r, status, status_code(status), err[0] ? err : "series unavailable");
		return;
	}
	reply_json(api, r, j, 200, "series");
}

/* GET /api/v1/series/history?module=M&name=N[&container=C]: the readings of
 * a series the agent kept (agent/series_hist.h). */
static void h_series_history(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r)
{
	static const char *const names[] = {"module", "name", "container"};
	const char *vals[3];
	char err[256];
	unsigned status;

	if (sl_api_params_only(p, n, names, 3, vals, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	if (!vals[0] || !vals[1]) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", !vals[0] ? "module: required" : "name: required");
		return;
	}
	if (vals[2] && (strlen(vals[2]) >= SL_CONTAINER_ID_LEN ||
			strspn(vals[2], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") !=
				strlen(vals[2]))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT",
				   "container: expected 1-79 characters of [A-Za-z0-9._-]");
		return;
	}
	err[0] = 0;
	json_t *j = sl_read_series_history(api->a, vals[0], vals[1], vals[2], &status, err, sizeof(err));
	if (!j) {
		sl_api_reply_error(r, status, status_code(status), err[0] ? err : "series unavailable");
		return;
	}
	reply_json(api, r, j, 200, "series history");
}

/* GET /ui/<file>: the embedded web UI (api_ui.h, docs/UI.md); / and /ui
 * redirect to /ui/. Static files take no parameters. */
static void h_ui(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r, const char *url)
{
	char err[256];
	(void)api;
	r->ui = 1;
	if (sl_api_no_params(p, n, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	if (!strcmp(url, "/") || !strcmp(url, "/ui")) {
		static const char body[] = "<!doctype html><title>sandlens</title><a href=\"/ui/\">/ui/</a>\n";
		r->status = 302;
		r->location = "/ui/";
		r->ctype = "text/html; charset=utf-8";
		r->static_body = body;
		r->len = sizeof(body) - 1;
		return;
	}
	const struct sl_ui_asset *as = sl_ui_asset_for(url);
	if (!as) {
		char msg[160];
		snprintf(msg, sizeof(msg), "no route for %.120s", url);
		sl_api_reply_error(r, 404, "NOT_FOUND", msg);
		return;
	}
	r->status = 200;
	r->ctype = as->ctype;
	r->static_body = as->data;
	r->len = as->len;
}

static int is_ui_path(const char *url)
{
	return !strcmp(url, "/") || !strcmp(url, "/ui") || !strncmp(url, "/ui/", 4);
}

/* GET /api/v1/<module><path>: a module's view, with plain parameters
 * checked against its declaration before it runs. */
static void h_view(struct sl_api *api, struct sl_module *m, const struct sl_api_view *v,
		   const struct sl_api_param *p, size_t n, struct reply *r)
{
	const char *names[SL_API_MAX_PARAMS], *vals[SL_API_MAX_PARAMS];
	struct sl_view_param vp[SL_API_MAX_PARAMS];
	char err[256];
	unsigned status = 200;
	size_t nn = v->nparams < SL_API_MAX_PARAMS ? v->nparams : SL_API_MAX_PARAMS;

	for (size_t i = 0; i < nn; i++)
		names[i] = v->params[i].name;
	if (sl_api_params_only(p, n, names, nn, vals, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	for (size_t i = 0; i < n; i++)
		vp[i] = (struct sl_view_param){p[i].key, p[i].value};
	err[0] = 0;
	json_t *j = sl_read_view_get(api->a, m, v, vp, n, &status, err, sizeof(err));
	if (!j) {
		sl_api_reply_error(r, status, status_code(status), err[0] ? err : "view failed");
		return;
	}
	reply_json(api, r, j, status, m->ops->name);
}

/* GET /api/v1/workloads and /api/v1/workloads/{id}/stats: answered from
 * the statistics collector's published snapshot (src/stats, lock-free). */
static void stats_reply(struct reply *r, struct sl_stats_reply *sr)
{
	r->status = sr->status;
	r->body = sr->body;
	r->len = sr->len;
	r->ctype = "application/json";
	if (!r->body)
		sl_api_reply_error(r, 500, "INTERNAL", "out of memory");
}

static void h_workloads(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r)
{
	char err[256];
	struct sl_stats_reply sr;
	if (sl_api_no_params(p, n, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	sl_stats_api_list(sl_read_stats(api->a), &sr);
	stats_reply(r, &sr);
}

static void h_workload_stats(struct sl_api *api, const struct sl_api_param *p, size_t n,
			     struct reply *r)
{
	char err[256], id[256];
	struct sl_stats_reply sr;
	size_t al = strlen(r->arg), sl = strlen("/stats");
	if (al < sl || strcmp(r->arg + al - sl, "/stats") || al - sl >= sizeof(id)) {
		sl_api_reply_error(r, 404, "NOT_FOUND", "no route: use /api/v1/workloads/{id}/stats");
		return;
	}
	/* ?source=cgroup (default) | guest_agent | auto (docs/STATS.md) */
	const char *names[] = {"source"}, *vals[1] = {NULL};
	if (sl_api_params_only(p, n, names, 1, vals, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	int src = vals[0] ? sl_stats_source_parse(vals[0]) : SL_SRC_CGROUP;
	if (src < 0) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", "source: one of cgroup, guest_agent, auto");
		return;
	}
	memcpy(id, r->arg, al - sl);
	id[al - sl] = 0;
	sl_stats_api_workload_source(sl_read_stats(api->a), id, src, &sr);
	stats_reply(r, &sr);
}

static const struct route {
	const char *path;
	handler_fn fn; /* a path ending in '/' matches every URL it begins */
	const char *doc; /* what it serves, as docs/API.md names it (NULL: path) */
} routes[] = {
	{"/healthz", h_healthz, NULL},
	{"/metrics", sl_api_h_metrics, NULL},
	{"/api/v1/events", h_events, NULL},
	{"/api/v1/containers", h_containers, NULL},
	{"/api/v1/schema/events", h_schema, NULL},
	{"/api/v1/series", h_series, NULL},
	{"/api/v1/series/history", h_series_history, NULL},
	{"/api/v1/workloads", h_workloads, NULL},
	{"/api/v1/workloads/", h_workload_stats, "/api/v1/workloads/{id}/stats"},
	{"/api/v1/profiles", sl_api_h_profiles, NULL},
	{"/api/v1/profiles/diff", sl_api_h_profiles_diff, NULL},
	{"/api/v1/profiles/windows", sl_api_h_profiles_windows, NULL},
	{"/api/v1/flight", sl_api_h_flight_list, NULL},
	{"/api/v1/flight/", sl_api_h_flight_get, "/api/v1/flight/{id}"},
	{"/api/v1/events/", sl_api_h_event_flight, "/api/v1/events/{id}/flight"},
	{"/api/v1/sandboxes", sl_api_h_sandboxes, NULL},
	{"/api/v1/sandboxes/", sl_api_h_sandbox, "/api/v1/sandboxes/{id}"},
};

void sl_api_routes(void (*cb)(const char *method, const char *path, void *ctx), void *ctx)
{
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		cb("GET", routes[i].doc ? routes[i].doc : routes[i].path, ctx);
	cb("GET", SL_API_WATCH_PATH, ctx);
	cb("POST", "/mcp", ctx);
	sl_api_tasks_routes(cb, ctx);
	sl_api_captures_routes(cb, ctx);
}

void sl_api_route_local(struct sl_api *api, const char *path, const struct sl_api_param *p, size_t n, int redact,
			struct reply *r)
{
	struct sl_module *vm = NULL;
	const struct sl_api_view *view = NULL;
	static const char v1[] = "/api/v1/";
	char msg[200];
	r->api = api;
	r->redact = redact;
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		size_t pl = strlen(routes[i].path);
		if (routes[i].fn == sl_api_h_metrics) /* text by reference: not in process */
			continue;
		if (routes[i].path[pl - 1] == '/' ? !strncmp(path, routes[i].path, pl) : !strcmp(path, routes[i].path)) {
			r->arg = path + pl;
			routes[i].fn(api, p, n, r);
			return;
		}
	}
	if (!strncmp(path, v1, sizeof(v1) - 1) && !sl_read_view_find(api->a, path + sizeof(v1) - 1, &vm, &view)) {
		h_view(api, vm, view, p, n, r);
		return;
	}
	snprintf(msg, sizeof(msg), "no route for %.120s (in process)", path);
	sl_api_reply_error(r, 404, "NOT_FOUND", msg);
}

/* ---- MHD glue ---- */

/* The socket context (struct conn_state, api_conn.c) also notes a %00 of
 * the request being read that decoded to a NUL byte anywhere in its URL,
 * path or query (microhttpd passes the path on as a C string, which the
 * NUL would cut short: "/api/v1/tasks/ID%00/result" would be task ID).
 * Cleared when the request completes. */

/* microhttpd's own decoding (%HH), noting a NUL byte it produced. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls;
	size_t n = MHD_http_unescape(s);
	if (memchr(s, 0, n)) {
		struct conn_state *cs = sl_api_conn_state(c);
		if (cs)
			cs->nul = 1;
	}
	return n;
}

/* MHD_OPTION_URI_LOG_CALLBACK: microhttpd 0.9 calls it with the whole
 * request target before it stores the query arguments. It stores each
 * argument as a header record in the connection's 32 KiB pool, and when the
 * pool runs out (about 600 empty parameters) it neither answers nor closes:
 * the connection hung until the header sweeper cut it. So a target with more
 * than SL_API_URI_MAX_PARAMS parameters or longer than SL_API_URI_MAX_BYTES
 * is refused here (on_request answers 414 JSON) and its query string is
 * emptied in place, so that microhttpd stores none of it. uri points into
 * microhttpd's own (writable) read buffer, the arguments are parsed from that
 * buffer right after this call ("log callback before we modify URI or args",
 * connection.c); the byte after '?' is the first one they are read from. */
static void *uri_seen(void *cls, const char *uri, struct MHD_Connection *c)
{
	(void)cls;
	struct conn_state *cs = sl_api_conn_state(c);
	if (!cs)
		return NULL;
	cs->line_seen = 1;
	cs->uri_refused = 0;
	cs->uri_params = 0;
	cs->uri_bytes = strlen(uri);
	char *q = strchr(uri, '?');
	if (!q)
		return NULL;
	size_t n = 1;
	for (const char *p = q + 1; *p; p++)
		n += *p == '&';
	cs->uri_params = n;
	if (n > SL_API_URI_MAX_PARAMS || cs->uri_bytes > SL_API_URI_MAX_BYTES) {
		cs->uri_refused = 1;
		q[1] = '\0';
	}
	return NULL;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct conn_state *cs = sl_api_conn_state(c);
	if (cs) {
		cs->nul = 0;
		sl_api_heavy_leave(cs); /* a slot never used (the client left first) */
		sl_api_conn_request_ends(cs);
	}
	sl_api_tasks_completed(cls, c, con_cls, toe);
}

static enum MHD_Result collect_param(void *cls, enum MHD_ValueKind kind, const char *key,
				     size_t key_size, const char *value, size_t value_size)
{
	(void)kind;
	return sl_api_params_add(cls, key, key_size, value, value_size) ? MHD_NO : MHD_YES;
}

int sl_api_collect_params(struct MHD_Connection *c, struct sl_api_params *ps, char *err,
			  size_t errlen)
{
	memset(ps, 0, sizeof(*ps));
	MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, collect_param, ps);
	return sl_api_params_check(ps, err, errlen);
}

static enum MHD_Result send_reply(struct MHD_Connection *c, struct reply *r)
{
	struct MHD_Response *resp;
	if (r->static_body) {
		resp = MHD_create_response_from_buffer(r->len, (void *)r->static_body, MHD_RESPMEM_PERSISTENT);
		if (!resp)
			return MHD_NO;
	} else if (r->iov_free) {
		resp = MHD_create_response_from_iovec(r->iov, r->niov, r->iov_free, r->iov_cls);
		if (!resp) {
			r->iov_free(r->iov_cls);
			return MHD_NO;
		}
	} else {
		if (!r->body) { /* out of memory building even the error */
			r->status = 500;
			r->ctype = "application/json";
			r->body = strdup("{\"error\":{\"code\":\"INTERNAL\",\"message\":\"out of memory\"}}");
			if (!r->body)
				return MHD_NO;
			r->len = strlen(r->body);
		}
		resp = MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
		if (!resp) {
			free(r->body);
			return MHD_NO;
		}
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->ctype);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (r->ui) { /* the web UI (api_ui.h): nothing from another origin, never framed */
		MHD_add_response_header(resp, "Content-Security-Policy", SL_UI_CSP);
		MHD_add_response_header(resp, "X-Frame-Options", "DENY");
		MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	} else if (r->ctype && !strncmp(r->ctype, "text/html", 9)) {
		/* an HTML flame graph (continuous profiles, captures): only its own
		 * inline script and style, opaque origin, never framed */
		MHD_add_response_header(resp, "Content-Security-Policy", sl_flame_html_csp());
		MHD_add_response_header(resp, "X-Frame-Options", "DENY");
		MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	}
	if (r->location)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, r->location);
	if (r->encoding)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, r->encoding);
	if (r->iov_free) /* the encoding depends on Accept-Encoding */
		MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (r->status == 405)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	enum MHD_Result ret = MHD_queue_response(c, r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	struct sl_api *api = cls;
	struct reply r = {0};
	const struct route *rt = NULL;

	sl_thread_cpu_register(SL_TCPU_API);

	/* a NUL byte (%00) in the path: microhttpd's url stops at it, so it
	 * would name another route (a NUL in the query is the route's 400) */
	struct conn_state *cs = sl_api_conn_state(c);
	if (!cs) {
		sl_api_reply_error(&r, 500, "INTERNAL", "out of memory");
		return send_reply(c, &r);
	}
	sl_api_conn_request_begins(cs);
	r.api = api;
	if (cs->uri_refused) { /* uri_seen: its query string was never stored */
		static struct sl_log_limit ulim = SL_LOG_LIMIT_INIT(10);
		char msg[200];
		snprintf(msg, sizeof(msg),
			 "request target too large: %zu bytes, %zu query parameters (at most %u bytes and %u parameters)",
			 cs->uri_bytes, cs->uri_params, SL_API_URI_MAX_BYTES, SL_API_URI_MAX_PARAMS);
		sl_log_limited(&ulim, SL_LOG_INFO, MOD, "%s %.60s...: 414 (%s)", method, url, msg);
		sl_api_reply_error(&r, 414, "URI_TOO_LONG", msg);
		return send_reply(c, &r);
	}

	/* who asks (api_auth.h): peer credentials, then the bearer token */
	if (!*con_cls) { /* once per request (a POST body comes in later calls) */
		cs->caller = cs->peer;
		cs->caller.token_ok = sl_api_bearer_matches(
			MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
			api->token, api->toklen);
	}
	int admin = sl_api_caller_is_admin(&cs->caller);
	enum sl_api_access need = sl_api_route_access(method, url);
	struct sl_module *vm = NULL;
	const struct sl_api_view *view = NULL;
	static const char v1[] = "/api/v1/";
	if (!strncmp(url, v1, sizeof(v1) - 1) && sl_read_view_find(api->a, url + sizeof(v1) - 1, &vm, &view))
		view = NULL;
	if (view && view->admin_only) /* an admin_only module view: as the admin routes */
		need = SL_ACCESS_ADMIN;
	if (need == SL_ACCESS_ADMIN && !admin) {
		static struct sl_log_limit lim = SL_LOG_LIMIT_INIT(10);
		atomic_fetch_add(&sl_api_counters.denied, 1);
		sl_log_limited(&lim, SL_LOG_INFO, MOD, "%s %.120s from %s uid %d: 403 (not an admin)",
			       method, url, cs->lis->is_unix ? "unix socket" : "tcp",
			       (int)(cs->lis->is_unix ? cs->peer.uid : cs->budget_uid));
		sl_api_reply_error(&r, 403, "PERMISSION_DENIED",
				   "this route is for admins: connect to the unix socket as root or as a member of api.admin_group, or send 'Authorization: Bearer <token>' with the token of api.token_file");
		return send_reply(c, &r);
	}
	r.redact = need == SL_ACCESS_REDACTED && !admin;
	if (cs->nul) {
		struct sl_api_params ps;
		char msg[256];
		sl_api_collect_params(c, &ps, msg, sizeof(msg));
		if (!ps.nul && !ps.overflow) {
			snprintf(msg, sizeof(msg), "no route for %.120s%%00...: the path holds a NUL byte (%%00)",
				 url);
			sl_api_reply_error(&r, 404, "NOT_FOUND", msg);
			sl_debug(MOD, "%s %s%%00... -> 404", method, url);
			return send_reply(c, &r);
		}
	}

	/* the MCP server (api_mcp.c): public; its tools' API requests are
	 * checked as this caller's */
	if (!strcmp(url, SL_API_MCP_PATH))
		return sl_api_mcp_request(api, c, &cs->caller, method, upload, upload_size, con_cls);

	/* the live event stream (api_watch.c) */
	if (!strcmp(url, SL_API_WATCH_PATH))
		return sl_api_watch_request(api, c, method, r.redact);

	/* AutoTracing: status and captures (api_captures.c) */
	if (sl_api_captures_match(url))
		return sl_api_captures_request(api->a, c, url, method, admin);

	/* task routes take POST/DELETE, bodies and streams (api_tasks.c) */
	if (sl_api_tasks_match(url))
		return sl_api_tasks_request(api->a, c, url, method, upload, upload_size, con_cls);

	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		size_t pl = strlen(routes[i].path);
		if (routes[i].path[pl - 1] == '/' ? !strncmp(url, routes[i].path, pl)
						  : !strcmp(url, routes[i].path)) {
			rt = &routes[i];
			r.arg = url + pl;
		}
	}

	if (!rt && is_ui_path(url)) {
		struct sl_api_params ps;
		char msg[256];
		r.ui = 1;
		if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
			snprintf(msg, sizeof(msg), "%.32s not allowed on %.120s (use GET)", method, url);
			sl_api_reply_error(&r, 405, "METHOD_NOT_ALLOWED", msg);
		} else if (sl_api_collect_params(c, &ps, msg, sizeof(msg))) {
			sl_api_reply_error(&r, 400, "INVALID_ARGUMENT", msg);
		} else {
			h_ui(api, ps.p, ps.n, &r, url);
		}
	} else if (!rt && view) {
		struct sl_api_params ps;
		char msg[256];
		if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
			snprintf(msg, sizeof(msg), "%.32s not allowed on %.120s (use GET)", method, url);
			sl_api_reply_error(&r, 405, "METHOD_NOT_ALLOWED", msg);
		} else if (sl_api_collect_params(c, &ps, msg, sizeof(msg))) {
			sl_api_reply_error(&r, 400, "INVALID_ARGUMENT", msg);
		} else {
			h_view(api, vm, view, ps.p, ps.n, &r);
		}
	} else if (!rt) {
		char msg[160];
		snprintf(msg, sizeof(msg), "no route for %.120s", url);
		sl_api_reply_error(&r, 404, "NOT_FOUND", msg);
	} else if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		char msg[160];
		snprintf(msg, sizeof(msg), "%.32s not allowed on %s (use GET)", method, rt->path);
		sl_api_reply_error(&r, 405, "METHOD_NOT_ALLOWED", msg);
	} else {
		struct sl_api_params ps;
		char msg[256];
		int heavy = 0;
		if (sl_api_collect_params(c, &ps, msg, sizeof(msg))) {
			sl_api_reply_error(&r, 400, "INVALID_ARGUMENT", msg);
		} else if (sl_api_heavy_route(rt->path) && (heavy = sl_api_heavy_enter(cs, c)) <= 0) {
			/* 0: queued, c suspended; called again holding a slot */
			if (heavy == 0)
				return MHD_YES;
			sl_api_reply_error(&r, 503, "UNAVAILABLE", "the agent is stopping");
		} else {
			r.accept_gzip = sl_api_accepts_gzip(c);
			r.cap_syslog = sl_api_conn_cap_syslog(c);
			rt->fn(api, ps.p, ps.n, &r);
			if (heavy) /* rendered: the slot goes on (sending needs no thread) */
				sl_api_heavy_leave(cs);
		}
	}
	if (r.iov_free)
		for (unsigned i = 0; i < r.niov; i++)
			r.len += r.iov[i].iov_len;
	sl_debug(MOD, "%s %s -> %u (%zu bytes)", method, url, r.status, r.len);
	return send_reply(c, &r);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	size_t n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	/* one line per malformed request would let any client flood the log */
	static struct sl_log_limit lim = SL_LOG_LIMIT_INIT(10);
	sl_log_limited(&lim, SL_LOG_WARN, MOD, "microhttpd: %s", msg);
}

/* MHD owns fd from here on: MHD_stop_daemon() closes it. */
static struct MHD_Daemon *start_daemon(struct sl_api *api, int fd, struct sl_api_listener *lis,
				       char *err, size_t errlen)
{
	/* one thread: MHD's internal polling thread; more: a pool (MHD warns
	 * about a pool of size 1, so the option is passed only above 1) */
	unsigned threads = (unsigned)sl_read_config(api->a)->api.threads;
	struct MHD_OptionItem opts[] = {
		{threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_ARRAY, threads, NULL},
		{MHD_OPTION_END, 0, NULL},
	};
	if (threads <= 1)
		opts[0] = opts[1];
	struct MHD_Daemon *d = MHD_start_daemon(
		MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL,
		on_request, api,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, /* must come first */
		MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd, MHD_OPTION_CONNECTION_LIMIT, CONN_LIMIT,
		MHD_OPTION_CONNECTION_TIMEOUT, CONN_TIMEOUT_S, MHD_OPTION_ARRAY, opts,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
		MHD_OPTION_NOTIFY_CONNECTION, sl_api_conn_notify, lis,
		MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
		MHD_OPTION_URI_LOG_CALLBACK, uri_seen, NULL,
		MHD_OPTION_END);
	if (!d)
		snprintf(err, errlen, "api: starting microhttpd failed");
	return d;
}

/* "host:port" or "[v6]:port". */
static int split_hostport(const char *s, char *host, size_t hl, char *port, size_t pl)
{
	const char *colon;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':')
			return -1;
		if ((size_t)(close - s - 1) >= hl)
			return -1;
		memcpy(host, s + 1, (size_t)(close - s - 1));
		host[close - s - 1] = '\0';
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || (size_t)(colon - s) >= hl || memchr(s, ':', (size_t)(colon - s)))
			return -1;
		memcpy(host, s, (size_t)(colon - s));
		host[colon - s] = '\0';
	}
	const char *p = colon + 1;
	if (!*p || strlen(p) >= pl || strspn(p, "0123456789") != strlen(p) || atol(p) > 65535)
		return -1;
	strcpy(port, p);
	return host[0] ? 0 : -1;
}

static int is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return 0;
}

static int listen_tcp(struct sl_api *api, const char *spec, char *err, size_t errlen)
{
	char host[128], port[8];
	if (split_hostport(spec, host, sizeof(host), port, sizeof(port))) {
		snprintf(err, errlen, "api.listen: '%s' is not host:port", spec);
		return -1;
	}
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *res, *ai;
	int rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "api.listen: %s: %s", spec, gai_strerror(rc));
		return -1;
	}
	int fd = -1, saved = 0;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    ai->ai_protocol);
		if (fd < 0) {
			saved = errno;
			continue;
		}
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, LISTEN_BACKLOG) == 0)
			break;
		saved = errno;
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		freeaddrinfo(res);
		snprintf(err, errlen, "api.listen: %s: %s", spec, strerror(saved));
		return -1;
	}
	if (!is_loopback(ai->ai_addr))
		sl_warn(MOD, "listening on non-loopback address %s: readers need no authentication (admin routes need the bearer token)",
			spec);
	freeaddrinfo(res);

	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		api->tcp_port = ntohs(ss.ss_family == AF_INET6
					      ? ((struct sockaddr_in6 *)&ss)->sin6_port
					      : ((struct sockaddr_in *)&ss)->sin_port);
	api->tcp = start_daemon(api, fd, &api->lis[0], err, errlen);
	if (!api->tcp)
		return -1;
	sl_info(MOD, "listening on %s (port %d)", spec, api->tcp_port);
	return 0;
}

/* "uid N (name)" of a file's owner into buf. */
static const char *owner_of(const struct stat *st, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char pwbuf[1024];
	if (getpwuid_r(st->st_uid, &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res)
		snprintf(buf, len, "uid %u (%s)", (unsigned)st->st_uid, res->pw_name);
	else
		snprintf(buf, len, "uid %u", (unsigned)st->st_uid);
	return buf;
}

/* Removes a leftover socket file nobody listens on. Errors name the
 * file's owner: in a shared (sticky) directory another user's file there
 * is what keeps the agent from starting. */
static int clear_stale(const char *path, char *err, size_t errlen)
{
	char who[96];
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : (snprintf(err, errlen, "api.unix_socket: %s: %s", path,
						       strerror(errno)),
					      -1);
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "api.unix_socket: %s exists and is not a socket (owned by %s)", path,
			 owner_of(&st, who, sizeof(who)));
		return -1;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "api.unix_socket: socket: %s", strerror(errno));
		return -1;
	}
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	strcpy(sa.sun_path, path);
	int live = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	if (live) {
		snprintf(err, errlen, "api.unix_socket: %s is in use by a running process (socket owned by %s)", path,
			 owner_of(&st, who, sizeof(who)));
		return -1;
	}
	if (unlink(path) != 0 && errno != ENOENT) {
		snprintf(err, errlen, "api.unix_socket: removing stale %s (owned by %s): %s", path,
			 owner_of(&st, who, sizeof(who)), strerror(errno));
		return -1;
	}
	sl_info(MOD, "removed stale socket %s", path);
	return 0;
}

static int listen_unix(struct sl_api *api, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (path[0] != '/' || strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "api.unix_socket: '%s' must be an absolute path shorter than %zu",
			 path, sizeof(sa.sun_path));
		return -1;
	}
	strcpy(sa.sun_path, path);

	/* create the directory itself (one level) if it is missing */
	char dir[sizeof(sa.sun_path)];
	strcpy(dir, path);
	char *slash = strrchr(dir, '/');
	if (slash != dir) {
		*slash = '\0';
		/* 0755 whatever the umask: api.admin_group's members enter it */
		int mk = sl_mkdir_mode(dir, 0755);
		if (mk < 0) {
			snprintf(err, errlen, "api.unix_socket: mkdir %s: %s", dir, strerror(-mk));
			return -1;
		}
	}
	/* again, now that the directory exists: checked at start (main.c),
	 * it may have been made since by someone else (a missing directory
	 * in /tmp). Ours, or root's, under directories no one else can
	 * rename (dir_trust.h), it stays so until we are done with it. */
	const char *why = sl_dir_refusal(path, SL_DIR_STICKY_OK, NULL);
	if (why) {
		snprintf(err, errlen, "api.unix_socket: %s: refusing its directory: it %s", path, why);
		return -1;
	}
	if (clear_stale(path, err, errlen))
		return -1;

	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "api.unix_socket: socket: %s", strerror(errno));
		return -1;
	}
	/* Linux creates the file with the socket inode's mode & ~umask, so the
	 * socket is never reachable by others, not even between bind and chmod. */
	struct stat st;
	if (fchmod(fd, 0600) != 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		snprintf(err, errlen, "api.unix_socket: bind %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	gid_t g = sl_read_config(api->a)->api.admin_gid;
	mode_t mode = g == (gid_t)-1 ? 0600 : 0660; /* the admin group may connect */
	if ((g != (gid_t)-1 && chown(path, (uid_t)-1, g) != 0) || chmod(path, mode) != 0 ||
	    lstat(path, &st) != 0 || listen(fd, LISTEN_BACKLOG) != 0) {
		snprintf(err, errlen, "api.unix_socket: %s: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	strcpy(api->sock_path, path);
	api->sock_dev = st.st_dev;
	api->sock_ino = st.st_ino;
	api->unx = start_daemon(api, fd, &api->lis[1], err, errlen);
	if (!api->unx)
		return -1;
	sl_info(MOD, "listening on unix:%s (mode %04o)", path, (unsigned)mode);
	return 0;
}

struct sl_api *sl_api_start(struct sl_agent *a, char *err, size_t errlen)
{
	const char *tcp = sl_read_config(a)->api.listen, *unx = sl_read_config(a)->api.unix_socket;
	if (!tcp[0] && !unx[0]) {
		snprintf(err, errlen, "api: neither api.listen nor api.unix_socket is set");
		return NULL;
	}
	struct sl_api *api = calloc(1, sizeof(*api));
	if (!api) {
		snprintf(err, errlen, "api: out of memory");
		return NULL;
	}
	api->a = a;
	api->max_body = SL_API_MAX_BODY;
	api->lis[0].api = api->lis[1].api = api;
	api->lis[1].is_unix = 1;
	unsigned threads = (unsigned)sl_read_config(a)->api.threads;
	sl_api_heavy_init(&api->lis[0], threads > 1 ? threads - 1 : 1);
	sl_api_heavy_init(&api->lis[1], threads > 1 ? threads - 1 : 1);
	pthread_mutex_init(&api->conn_mu, NULL);
	api->header_timeout_s = sl_read_config(a)->api.header_timeout_s ? (unsigned)sl_read_config(a)->api.header_timeout_s : 10;
	api->max_client = sl_read_config(a)->api.max_client_connections ? (unsigned)sl_read_config(a)->api.max_client_connections : 16;
	if (sl_read_config(a)->api.token_file[0]) {
		int tl = sl_api_token_load(sl_read_config(a)->api.token_file, 1, api->token, sizeof(api->token), err,
					   errlen);
		if (tl < 0) {
			sl_api_stop(api);
			return NULL;
		}
		api->toklen = (size_t)tl;
		sl_info(MOD, "admin bearer token from %s", sl_read_config(a)->api.token_file);
	}
	if (sl_api_conn_guard_start(api)) {
		snprintf(err, errlen, "api: cannot start the connection sweeper thread");
		sl_api_stop(api);
		return NULL;
	}
	sl_api_tasks_attach(a);
	if (sl_api_watch_start(api) == 0) {
		api->watch_started = 1;
	} else {
		snprintf(err, errlen, "api: cannot start the event stream thread");
		sl_api_stop(api);
		return NULL;
	}
	if ((tcp[0] && listen_tcp(api, tcp, err, errlen)) ||
	    (unx[0] && listen_unix(api, unx, err, errlen))) {
		sl_api_stop(api);
		return NULL;
	}
	return api;
}

int sl_api_drain_streams(struct sl_api *api, unsigned timeout_ms)
{
	if (!api)
		return 0;
	struct timespec step = {0, 10 * 1000000L};
	for (unsigned w = 0; sl_api_tasks_streams_open() && w < timeout_ms; w += 10)
		nanosleep(&step, NULL);
	return (int)sl_api_tasks_streams_open();
}

void sl_api_stop(struct sl_api *api)
{
	if (!api)
		return;
	sl_api_tasks_release_all(api->a); /* no suspended follow stream may outlive MHD */
	sl_api_watch_release_all(api);
	sl_api_heavy_release_all(&api->lis[0]); /* nor a suspended heavy read */
	sl_api_heavy_release_all(&api->lis[1]);
	if (api->tcp)
		MHD_stop_daemon(api->tcp);
	if (api->unx)
		MHD_stop_daemon(api->unx);
	sl_api_heavy_destroy(&api->lis[0]);
	sl_api_heavy_destroy(&api->lis[1]);
	sl_api_conn_guard_stop(api); /* every connection is closed now */
	if (api->watch_started)
		sl_api_watch_stop(api);
	if (api->sock_path[0]) {
		struct stat st;
		if (lstat(api->sock_path, &st) == 0 && st.st_dev == api->sock_dev &&
		    st.st_ino == api->sock_ino)
			unlink(api->sock_path);
	}
	pthread_mutex_destroy(&api->conn_mu);
	explicit_bzero(api->token, sizeof(api->token));
	free(api);
}

int sl_api_tcp_port(const struct sl_api *api) { return api && api->tcp ? api->tcp_port : 0; }

void sl_api_set_max_body(struct sl_api *api, size_t bytes) { api->max_body = bytes; }
