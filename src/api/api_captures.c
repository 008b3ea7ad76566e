/* AutoTracing routes (api_captures.h). */
#include "api/api_captures.h"
#include "api/api.h"
#include "api/api_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/read.h"
#include "auto/auto.h"
#include "profile/profile.h"
#include "task/task.h"

#define PREFIX "/api/v1/captures"

int sl_api_captures_match(const char *url)
{
	size_t l = sizeof(PREFIX) - 1;
	return !strcmp(url, "/api/v1/auto") || (!strncmp(url, PREFIX, l) && (url[l] == 0 || url[l] == '/'));
}

void sl_api_captures_routes(void (*cb)(const char *method, const char *path, void *ctx), void *ctx)
{
	cb("GET", "/api/v1/auto", ctx);
	cb("GET", PREFIX, ctx);
	cb("GET", PREFIX "/{id}", ctx);
	cb("GET", PREFIX "/{id}/profile", ctx);
}

static enum MHD_Result send_body(struct MHD_Connection *c, unsigned status, char *body, size_t len,
				 const char *ctype)
{
	if (!body) {
		body = strdup("{\"error\":{\"code\":\"INTERNAL\",\"message\":\"out of memory\"}}");
		if (!body)
			return MHD_NO;
		len = strlen(body);
		status = 500;
		ctype = "application/json";
	}
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (!strncmp(ctype, "text/html", 9)) { /* a flame graph page: its own inline code only, never framed */
		MHD_add_response_header(r, "Content-Security-Policy", sl_flame_html_csp());
		MHD_add_response_header(r, "X-Frame-Options", "DENY");
		MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	}
	if (status == 405)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *code, const char *msg)
{
	size_t len = 0;
	char *b = sl_api_error_body(code, msg, &len);
	return send_body(c, status, b, len, "application/json");
}

static enum MHD_Result send_json(struct MHD_Connection *c, json_t *o)
{
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return send_body(c, 200, s, s ? strlen(s) : 0, "application/json");
}

/* Valid capture id: "c-" + hex. */
static int id_ok(const char *s, size_t n)
{
	if (n < 3 || n > 31 || s[0] != 'c' || s[1] != '-')
		return 0;
	for (size_t i = 2; i < n; i++)
		if (!strchr("0123456789abcdef", s[i]))
			return 0;
	return 1;
}

enum MHD_Result sl_api_captures_request(struct sl_agent *a, struct MHD_Connection *c, const char *url,
					const char *method, int admin)
{
	struct sl_api_params ps;
	char err[256];
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		snprintf(err, sizeof(err), "%.32s not allowed on %.120s (use GET)", method, url);
		return send_error(c, 405, "METHOD_NOT_ALLOWED", err);
	}
	if (sl_api_collect_params(c, &ps, err, sizeof(err)))
		return send_error(c, 400, "INVALID_ARGUMENT", err);
	struct sl_auto *au = sl_read_auto(a);
	if (!strcmp(url, "/api/v1/auto")) {
		if (sl_api_params_only(ps.p, ps.n, NULL, 0, NULL, err, sizeof(err)))
			return send_error(c, 400, "INVALID_ARGUMENT", err);
		return send_json(c, sl_auto_status_json(au));
	}
	const char *rest = url + sizeof(PREFIX) - 1;
	if (!*rest) {
		static const char *const names[] = {"container", "detector", "limit"};
		const char *v[3];
		if (sl_api_params_only(ps.p, ps.n, names, 3, v, err, sizeof(err)))
			return send_error(c, 400, "INVALID_ARGUMENT", err);
		long limit = 100;
		if (v[2]) {
			char *e;
			limit = strtol(v[2], &e, 10);
			if (*e || limit < 1 || limit > 10000)
				return send_error(c, 400, "INVALID_ARGUMENT", "limit: an integer 1..10000");
		}
		if (v[1]) {
			int known = 0;
			for (int i = 0; i < SL_AUTO_NDET; i++)
				known |= !strcmp(v[1], sl_auto_det_names[i]);
			if (!known)
				return send_error(c, 400, "INVALID_ARGUMENT",
						  "detector: one of cpu, throttle, runqueue, dstate, memgrowth, mempsi, cpupsi, iolat");
		}
		if (!au)
			return send_error(c, 503, "UNAVAILABLE", "AutoTracing is off (auto.enabled) or failed to start");
		return send_json(c, sl_auto_captures_json(au, v[0], v[1], (size_t)limit, admin));
	}
	/* /{id} or /{id}/profile */
	rest++;
	const char *sl = strchr(rest, '/');
	size_t idl = sl ? (size_t)(sl - rest) : strlen(rest);
	int profile = sl && !strcmp(sl, "/profile");
	if (!id_ok(rest, idl) || (sl && !profile)) {
		snprintf(err, sizeof(err), "no route for %.120s", url);
		return send_error(c, 404, "NOT_FOUND", err);
	}
	char id[32];
	snprintf(id, sizeof(id), "%.*s", (int)idl, rest);
	if (!profile) {
		if (sl_api_params_only(ps.p, ps.n, NULL, 0, NULL, err, sizeof(err)))
			return send_error(c, 400, "INVALID_ARGUMENT", err);
		if (!au)
			return send_error(c, 503, "UNAVAILABLE", "AutoTracing is off (auto.enabled) or failed to start");
		json_t *r = sl_auto_capture_json(au, id, admin);
		if (!r) {
			snprintf(err, sizeof(err), "no capture %s", id);
			return send_error(c, 404, "NOT_FOUND", err);
		}
		return send_json(c, r);
	}
	static const char *const pn[] = {"kind", "format"};
	const char *pv[2];
	if (sl_api_params_only(ps.p, ps.n, pn, 2, pv, err, sizeof(err)))
		return send_error(c, 400, "INVALID_ARGUMENT", err);
	const char *kind = pv[0] ? pv[0] : "on_cpu", *fmt = pv[1] ? pv[1] : "json";
	if (strcmp(kind, "on_cpu") && strcmp(kind, "off_cpu"))
		return send_error(c, 400, "INVALID_ARGUMENT", "kind: on_cpu or off_cpu");
	if (strcmp(fmt, "pprof") && strcmp(fmt, "folded") && strcmp(fmt, "svg") && strcmp(fmt, "json") &&
	    strcmp(fmt, "html"))
		return send_error(c, 400, "INVALID_ARGUMENT", "format: pprof, folded, svg, json or html");
	if (!au || !sl_read_tasks(a))
		return send_error(c, 503, "UNAVAILABLE", "AutoTracing or tasks are off");
	char tid[SL_TASK_ID_LEN];
	int rc = sl_auto_capture_task(au, id, kind, tid, sizeof(tid));
	if (rc) {
		snprintf(err, sizeof(err), rc == -ENOENT ? "no capture %s" : "capture %s has no %s profile", id, kind);
		return send_error(c, 404, "NOT_FOUND", err);
	}
	char *body = NULL;
	size_t len = 0;
	const char *ctype = "application/octet-stream";
	rc = sl_tasks_result(sl_read_tasks(a), tid, fmt, sl_kaddrs_visible(NULL, sl_api_conn_cap_syslog(c)), &body,
			     &len, &ctype);
	if (rc == -EAGAIN)
		return send_error(c, 409, "FAILED_PRECONDITION", "the profile is still being taken");
	if (rc) {
		snprintf(err, sizeof(err), "profile of capture %s: %s", id,
			 rc == -ENOENT ? "its task record is gone (tasks.result_retention)" : strerror(-rc));
		return send_error(c, 404, "NOT_FOUND", err);
	}
	return send_body(c, 200, body, len, ctype);
}
