/* Task routes (api_tasks.h). */
#include "api/api_tasks.h"
#include "api/api.h"
#include "api/api_internal.h"
#include "agent/read.h"
#include "common/log.h"
#include "profile/profile.h"
#include "task/task.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MOD "api"
#define PREFIX "/api/v1/tasks"

int sl_api_tasks_match(const char *url)
{
	size_t pl = strlen(PREFIX);
	return !strcmp(url, "/api/v1/capabilities") ||
	       (!strncmp(url, PREFIX, pl) && (url[pl] == 0 || url[pl] == '/'));
}

void sl_api_tasks_routes(void (*cb)(const char *method, const char *path, void *ctx), void *ctx)
{
	cb("GET", "/api/v1/capabilities", ctx);
	cb("GET", PREFIX, ctx);
	cb("POST", PREFIX, ctx);
	cb("GET", PREFIX "/{id}", ctx);
	cb("DELETE", PREFIX "/{id}", ctx);
	cb("GET", PREFIX "/{id}/result", ctx);
}

int sl_api_tasks_split(const char *url, char *id, size_t idlen, int *result)
{
	size_t pl = strlen(PREFIX);
	if (strncmp(url, PREFIX "/", pl + 1))
		return -1;
	const char *p = url + pl + 1, *slash = strchr(p, '/');
	size_t n = slash ? (size_t)(slash - p) : strlen(p);
	*result = 0;
	if (slash) {
		if (strcmp(slash, "/result"))
			return -1;
		*result = 1;
	}
	if (n == 0 || n >= idlen)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'z') ||
		      (p[i] >= 'A' && p[i] <= 'Z') || p[i] == '-'))
			return -1;
	memcpy(id, p, n);
	id[n] = 0;
	return 0;
}

/* ---- replies ---- */

static enum MHD_Result send_body(struct MHD_Connection *c, unsigned status, char *body, size_t len,
				 const char *ctype, const char *allow, const char *location)
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
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	if (location)
		MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, location);
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *code,
				  const char *msg, const char *allow)
{
	size_t len = 0;
	char *b = sl_api_error_body(code, msg, &len);
	return send_body(c, status, b, len, "application/json", allow, NULL);
}

static enum MHD_Result send_json(struct MHD_Connection *c, unsigned status, json_t *o,
				 const char *location)
{
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return send_body(c, status, s, s ? strlen(s) : 0, "application/json", NULL, location);
}

static enum MHD_Result method_not_allowed(struct MHD_Connection *c, const char *method,
					  const char *allow)
{
	char msg[128];
	snprintf(msg, sizeof(msg), "%.32s not allowed here (use %s)", method, allow);
	return send_error(c, 405, "METHOD_NOT_ALLOWED", msg, allow);
}

/* ---- follow streams ---- */

struct stream {
	struct stream *next;
	struct MHD_Connection *conn;
	struct sl_tasks *ts;
	char id[SL_TASK_ID_LEN];
	uint64_t seq;
	int suspended; /* (streams_mu) */
	int closed;    /* the API is stopping */
	int final_queued;
	int ended;     /* the final record was produced: not a client loss */
	char *line;    /* record being written */
	size_t len, off;
};

static pthread_mutex_t streams_mu = PTHREAD_MUTEX_INITIALIZER;
static struct stream *streams;

static void kick(void *ctx)
{
	(void)ctx;
	pthread_mutex_lock(&streams_mu);
	for (struct stream *s = streams; s; s = s->next)
		if (s->suspended) {
			s->suspended = 0;
			MHD_resume_connection(s->conn);
		}
	pthread_mutex_unlock(&streams_mu);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct stream *s = cls;
	ssize_t n = 0;

	pthread_mutex_lock(&streams_mu);
	if (!s->line && !s->final_queued && !s->closed) {
		json_t *rec = NULL;
		int final = 0;
		int rc = sl_tasks_progress(s->ts, s->id, &s->seq, &rec, &final);
		if (rc == 1) {
			char *js = json_dumps(rec, JSON_COMPACT);
			json_decref(rec);
			if (js) {
				size_t l = strlen(js);
				s->line = realloc(js, l + 2);
				if (!s->line) {
					free(js);
				} else {
					s->line[l] = '\n';
					s->line[l + 1] = 0;
					s->len = l + 1;
					s->off = 0;
				}
			}
			s->final_queued = final;
		} else if (rc < 0 || final) {
			s->final_queued = 1;
		}
	}
	if (s->line) {
		n = (ssize_t)(s->len - s->off < max ? s->len - s->off : max);
		memcpy(buf, s->line + s->off, (size_t)n);
		s->off += (size_t)n;
		if (s->off == s->len) {
			free(s->line);
			s->line = NULL;
		}
	} else if (s->final_queued) {
		s->ended = 1;
		n = MHD_CONTENT_READER_END_OF_STREAM;
	} else if (s->closed) {
		n = MHD_CONTENT_READER_END_OF_STREAM; /* API stopping: task cancelled on free */
	} else {
		s->suspended = 1;
		MHD_suspend_connection(s->conn);
		n = 0;
	}
	pthread_mutex_unlock(&streams_mu);
	return n;
}

static void stream_free(void *cls)
{
	struct stream *s = cls;
	pthread_mutex_lock(&streams_mu);
	for (struct stream **pp = &streams; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	pthread_mutex_unlock(&streams_mu);
	if (!s->ended) {
		sl_info(MOD, "task %s: follow client gone: cancelling", s->id);
		sl_tasks_cancel(s->ts, s->id, "follow client disconnected");
	}
	free(s->line);
	free(s);
}

static enum MHD_Result start_stream(struct sl_tasks *ts, struct MHD_Connection *c, const char *id)
{
	struct stream *s = calloc(1, sizeof(*s));
	if (!s) {
		sl_tasks_cancel(ts, id, "out of memory for the follow stream");
		return send_error(c, 500, "INTERNAL", "out of memory", NULL);
	}
	s->conn = c;
	s->ts = ts;
	s->seq = UINT64_MAX; /* the first read sends the record */
	snprintf(s->id, sizeof(s->id), "%s", id);
	struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_read, s,
								   stream_free);
	if (!r) {
		free(s);
		sl_tasks_cancel(ts, id, "cannot create the follow stream");
		return send_error(c, 500, "INTERNAL", "cannot create the stream", NULL);
	}
	pthread_mutex_lock(&streams_mu);
	s->next = streams;
	streams = s;
	pthread_mutex_unlock(&streams_mu);
	char loc[64];
	snprintf(loc, sizeof(loc), PREFIX "/%s", id);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/x-ndjson");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, loc);
	enum MHD_Result ret = MHD_queue_response(c, 201, r);
	MHD_destroy_response(r); /* a failed queue frees s through stream_free (task cancelled) */
	return ret;
}

void sl_api_tasks_attach(struct sl_agent *a)
{
	if (a && sl_read_tasks(a))
		sl_tasks_set_notify(sl_read_tasks(a), kick, NULL);
}

size_t sl_api_tasks_streams_open(void)
{
	size_t n = 0;
	pthread_mutex_lock(&streams_mu);
	for (struct stream *s = streams; s; s = s->next)
		n++;
	pthread_mutex_unlock(&streams_mu);
	return n;
}

void sl_api_tasks_release_all(struct sl_agent *a)
{
	if (a && sl_read_tasks(a))
		sl_tasks_set_notify(sl_read_tasks(a), NULL, NULL);
	pthread_mutex_lock(&streams_mu);
	for (struct stream *s = streams; s; s = s->next) {
		s->closed = 1;
		if (s->suspended) {
			s->suspended = 0;
			MHD_resume_connection(s->conn);
		}
	}
	pthread_mutex_unlock(&streams_mu);
}

/* ---- handlers ---- */

void sl_api_tasks_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			    enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)c;
	(void)toe;
	struct sl_api_upload *u = *con_cls;
	if (u) {
		free(u->buf);
		free(u);
		*con_cls = NULL;
	}
}

static struct sl_task_limits task_limits(struct sl_agent *a)
{
	const struct sl_config *cfg = sl_read_config(a);
	return (struct sl_task_limits){
		.max_duration_ns = cfg->tasks.max_duration_s * 1000000000ull,
		.default_duration_ns = cfg->tasks.default_duration_s * 1000000000ull,
		.default_hz = (uint32_t)cfg->tasks.default_hz,
		.max_hz = (uint32_t)cfg->tasks.max_hz,
		.default_min_off_cpu_ns = cfg->tasks.off_cpu_min_ns,
	};
}

static enum MHD_Result create(struct sl_agent *a, struct MHD_Connection *c, struct sl_api_upload *u)
{
	char err[300], id[SL_TASK_ID_LEN];
	json_error_t je;
	struct sl_task_spec spec;
	struct sl_task_limits lim = task_limits(a);

	if (u->too_big) {
		snprintf(err, sizeof(err), "body larger than %u bytes", SL_API_TASK_BODY_MAX);
		return send_error(c, 413, "INVALID_ARGUMENT", err, NULL);
	}
	json_t *body = u->len ? json_loadb(u->buf, u->len, JSON_REJECT_DUPLICATES, &je) : NULL;
	if (!body) {
		snprintf(err, sizeof(err), "body: not JSON: %s", u->len ? je.text : "empty body");
		return send_error(c, 400, "INVALID_ARGUMENT", err, NULL);
	}
	int rc = sl_task_spec_parse(body, &lim, &spec, err, sizeof(err));
	json_decref(body);
	if (rc)
		return send_error(c, 400, "INVALID_ARGUMENT", err, NULL);
	if (sl_read_refuse_tasks(a, err, sizeof(err))) /* pressure step 3 */
		return send_error(c, 429, "RESOURCE_EXHAUSTED", err, NULL);
	rc = sl_tasks_create(sl_read_tasks(a), &spec, id, err, sizeof(err));
	switch (rc) {
	case 0: break;
	case -EBUSY: return send_error(c, 429, "RESOURCE_EXHAUSTED", err, NULL);
	case -ENOTSUP: return send_error(c, 501, "UNIMPLEMENTED", err, NULL);
	case -ESHUTDOWN: return send_error(c, 503, "UNAVAILABLE", err, NULL);
	case -EINVAL: return send_error(c, 400, "INVALID_ARGUMENT", err, NULL);
	default: return send_error(c, 500, "INTERNAL", err, NULL);
	}
	if (spec.follow)
		return start_stream(sl_read_tasks(a), c, id);
	char loc[64];
	snprintf(loc, sizeof(loc), PREFIX "/%s", id);
	json_t *rec = sl_tasks_get(sl_read_tasks(a), id);
	return send_json(c, 201, rec, loc);
}

/* A task result: the body as stored, with headers that keep a browser from
 * treating it as anything else (nosniff) and, for the HTML flame graph, the
 * CSP that lets only its own inline script and style run, in an opaque
 * origin (sandbox), never framed (sl_flame_html_csp, profile.h). */
static enum MHD_Result send_result(struct MHD_Connection *c, char *body, size_t len, const char *ctype)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (!strncmp(ctype, "text/html", 9)) {
		MHD_add_response_header(r, "Content-Security-Policy", sl_flame_html_csp());
		MHD_add_response_header(r, "X-Frame-Options", "DENY");
		MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	}
	enum MHD_Result ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result result(struct sl_agent *a, struct MHD_Connection *c, const char *id,
			      const char *fmt)
{
	char *body = NULL;
	size_t len = 0;
	const char *ctype = "application/octet-stream";
	char msg[200];
	/* kernel addresses only to a caller who could read them from
	 * /proc/kallsyms: results go to admins only (api_auth.h); of those,
	 * root over the socket and the token holder count as CAP_SYSLOG, an
	 * api.admin_group member does not; the sysctls decide the rest */
	int kaddrs = sl_kaddrs_visible(NULL, sl_api_conn_cap_syslog(c));
	int rc = sl_tasks_result(sl_read_tasks(a), id, fmt, kaddrs, &body, &len, &ctype);
	switch (rc) {
	case 0: break;
	case -ENOENT: return send_error(c, 404, "NOT_FOUND", "no such task", NULL);
	case -EAGAIN:
		return send_error(c, 409, "FAILED_PRECONDITION", "the task has not finished yet", NULL);
	case -ENODATA:
		return send_error(c, 409, "FAILED_PRECONDITION",
				  "the task failed or was cancelled: it has no result (see its reason)", NULL);
	case -EINVAL:
		snprintf(msg, sizeof(msg), "format: '%.40s' is not offered for this task (pprof, folded, svg, json, html for profiles; json for trace_syscall_errors)",
			 fmt ? fmt : "");
		return send_error(c, 400, "INVALID_ARGUMENT", msg, NULL);
	default: return send_error(c, 500, "INTERNAL", "reading the result failed", NULL);
	}
	if (len > SL_API_TASK_RESULT_MAX) {
		free(body);
		return send_error(c, 500, "INTERNAL", "the result exceeds the response size bound", NULL);
	}
	return send_result(c, body, len, ctype);
}

/* The query parameters a task route takes: exactly names[0..nnames), each
 * at most once (sl_api_params_only); vals as there. 0, or -1 when a 400 was
 * queued (*ret). */
static int route_params(struct MHD_Connection *c, const char *const *names, size_t nnames,
			const char **vals, enum MHD_Result *ret)
{
	struct sl_api_params ps;
	char err[256];
	if (sl_api_collect_params(c, &ps, err, sizeof(err)) ||
	    sl_api_params_only(ps.p, ps.n, names, nnames, vals, err, sizeof(err))) {
		*ret = send_error(c, 400, "INVALID_ARGUMENT", err, NULL);
		return -1;
	}
	return 0;
}

static enum MHD_Result tasks_disabled(struct MHD_Connection *c)
{
	return send_error(c, 503, "UNAVAILABLE", "tasks are disabled (tasks.enabled) or failed to start",
			  NULL);
}

/* Order of checks on every task route: route (404), method (405), query
 * parameters (400), tasks enabled (503), then the work. */
enum MHD_Result sl_api_tasks_request(struct sl_agent *a, struct MHD_Connection *c, const char *url,
				     const char *method, const char *upload, size_t *upload_size,
				     void **con_cls)
{
	int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	int post = !strcmp(method, "POST"), del = !strcmp(method, "DELETE");
	char id[SL_TASK_ID_LEN];
	int is_result = 0;
	enum MHD_Result ret;

	if (post && !strcmp(url, PREFIX)) {
		struct sl_api_upload *u = *con_cls;
		if (!u) { /* first call: headers only */
			u = calloc(1, sizeof(*u));
			if (!u)
				return MHD_NO;
			*con_cls = u;
			return MHD_YES;
		}
		if (*upload_size) {
			if (!u->too_big && u->len + *upload_size <= SL_API_TASK_BODY_MAX) {
				char *nb = realloc(u->buf, u->len + *upload_size);
				if (!nb)
					return MHD_NO;
				u->buf = nb;
				memcpy(u->buf + u->len, upload, *upload_size);
				u->len += *upload_size;
			} else {
				u->too_big = 1;
			}
			*upload_size = 0;
			return MHD_YES;
		}
		/* everything is in the body: no query parameter */
		if (route_params(c, NULL, 0, NULL, &ret))
			return ret;
		if (!sl_read_tasks(a))
			return tasks_disabled(c);
		return create(a, c, u);
	}

	if (!strcmp(url, "/api/v1/capabilities") || !strcmp(url, PREFIX)) {
		int caps = !strcmp(url, "/api/v1/capabilities");
		if (!get)
			return method_not_allowed(c, method, caps ? "GET, HEAD" : "GET, HEAD, POST");
		if (route_params(c, NULL, 0, NULL, &ret))
			return ret;
		if (!sl_read_tasks(a))
			return tasks_disabled(c);
		return send_json(c, 200, caps ? sl_tasks_capabilities(sl_read_tasks(a)) : sl_tasks_list(sl_read_tasks(a)),
				 NULL);
	}
	if (sl_api_tasks_split(url, id, sizeof(id), &is_result)) {
		char msg[160];
		snprintf(msg, sizeof(msg), "no route for %.120s", url);
		return send_error(c, 404, "NOT_FOUND", msg, NULL);
	}
	if (is_result) {
		static const char *const names[] = {"format"};
		const char *fmt;
		if (!get)
			return method_not_allowed(c, method, "GET, HEAD");
		if (route_params(c, names, 1, &fmt, &ret))
			return ret;
		if (!sl_read_tasks(a))
			return tasks_disabled(c);
		return result(a, c, id, fmt);
	}
	if (!get && !del)
		return method_not_allowed(c, method, "GET, HEAD, DELETE");
	/* before anything is deleted: a typo must not delete */
	if (route_params(c, NULL, 0, NULL, &ret))
		return ret;
	if (!sl_read_tasks(a))
		return tasks_disabled(c);
	if (get) {
		json_t *rec = sl_tasks_get(sl_read_tasks(a), id);
		if (!rec)
			return send_error(c, 404, "NOT_FOUND", "no such task", NULL);
		return send_json(c, 200, rec, NULL);
	}
	if (sl_tasks_delete(sl_read_tasks(a), id))
		return send_error(c, 404, "NOT_FOUND", "no such task", NULL);
	return send_json(c, 200, json_pack("{s:s, s:b}", "id", id, "deleted", 1), NULL);
}

/* ---- in process (sl_api_local, for the MCP tools) ---- */

static void local_json(struct reply *r, unsigned status, json_t *j)
{
	if (!j) {
		sl_api_reply_error(r, 500, "INTERNAL", "out of memory");
		return;
	}
	r->body = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	r->status = status;
	r->ctype = "application/json";
	r->len = r->body ? strlen(r->body) : 0;
	if (!r->body)
		sl_api_reply_error(r, 500, "INTERNAL", "out of memory");
}

static void local_create(struct sl_agent *a, const char *body, struct reply *r)
{
	char err[300], id[SL_TASK_ID_LEN];
	json_error_t je;
	struct sl_task_spec spec;
	struct sl_task_limits lim = task_limits(a);
	json_t *j = body ? json_loads(body, JSON_REJECT_DUPLICATES, &je) : NULL;
	if (!j) {
		snprintf(err, sizeof(err), "body: not JSON: %s", body ? je.text : "empty body");
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	int rc = sl_task_spec_parse(j, &lim, &spec, err, sizeof(err));
	json_decref(j);
	if (rc) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	if (spec.follow) { /* a stream needs a connection */
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", "follow: not offered in process");
		return;
	}
	if (sl_read_refuse_tasks(a, err, sizeof(err))) {
		sl_api_reply_error(r, 429, "RESOURCE_EXHAUSTED", err);
		return;
	}
	rc = sl_tasks_create(sl_read_tasks(a), &spec, id, err, sizeof(err));
	switch (rc) {
	case 0: local_json(r, 201, sl_tasks_get(sl_read_tasks(a), id)); return;
	case -EBUSY: sl_api_reply_error(r, 429, "RESOURCE_EXHAUSTED", err); return;
	case -ENOTSUP: sl_api_reply_error(r, 501, "UNIMPLEMENTED", err); return;
	case -ESHUTDOWN: sl_api_reply_error(r, 503, "UNAVAILABLE", err); return;
	case -EINVAL: sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err); return;
	default: sl_api_reply_error(r, 500, "INTERNAL", err); return;
	}
}

static void local_result(struct sl_agent *a, const char *id, const char *fmt, int cap_syslog, struct reply *r)
{
	char *body = NULL;
	size_t len = 0;
	const char *ctype = "application/octet-stream";
	int rc = sl_tasks_result(sl_read_tasks(a), id, fmt, sl_kaddrs_visible(NULL, cap_syslog), &body, &len, &ctype);
	switch (rc) {
	case 0: break;
	case -ENOENT: sl_api_reply_error(r, 404, "NOT_FOUND", "no such task"); return;
	case -EAGAIN: sl_api_reply_error(r, 409, "FAILED_PRECONDITION", "the task has not finished yet"); return;
	case -ENODATA:
		sl_api_reply_error(r, 409, "FAILED_PRECONDITION", "the task failed or was cancelled: it has no result (see its reason)");
		return;
	case -EINVAL: sl_api_reply_error(r, 400, "INVALID_ARGUMENT", "format: not offered for this task"); return;
	default: sl_api_reply_error(r, 500, "INTERNAL", "reading the result failed"); return;
	}
	/* the MCP tools read JSON results only: a NUL-terminated copy */
	char *t = len <= SL_API_TASK_RESULT_MAX ? realloc(body, len + 1) : NULL;
	if (!t) {
		free(body);
		sl_api_reply_error(r, 500, "INTERNAL", "the result exceeds the response size bound");
		return;
	}
	t[len] = 0;
	r->body = t;
	r->len = len;
	r->status = 200;
	r->ctype = ctype;
}

void sl_api_tasks_local(struct sl_agent *a, const char *method, const char *path, const struct sl_api_param *p,
			size_t n, const char *body, int cap_syslog, struct reply *r)
{
	static const char *const fmt_names[] = {"format"};
	const char *fmt = NULL;
	char id[SL_TASK_ID_LEN], err[256];
	int is_result = 0, get = !strcmp(method, "GET"), post = !strcmp(method, "POST");
	int split = sl_api_tasks_split(path, id, sizeof(id), &is_result);

	if (!split && is_result ? sl_api_params_only(p, n, fmt_names, 1, &fmt, err, sizeof(err))
				: sl_api_params_only(p, n, NULL, 0, NULL, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	if (!(get || (post && !strcmp(path, PREFIX)))) {
		sl_api_reply_error(r, 405, "METHOD_NOT_ALLOWED", "in process: GET, or POST /api/v1/tasks");
		return;
	}
	if (!sl_read_tasks(a)) {
		sl_api_reply_error(r, 503, "UNAVAILABLE", "tasks are disabled (tasks.enabled) or failed to start");
		return;
	}
	if (post)
		local_create(a, body, r);
	else if (!strcmp(path, "/api/v1/capabilities"))
		local_json(r, 200, sl_tasks_capabilities(sl_read_tasks(a)));
	else if (!strcmp(path, PREFIX))
		local_json(r, 200, sl_tasks_list(sl_read_tasks(a)));
	else if (split)
		sl_api_reply_error(r, 404, "NOT_FOUND", "no such task route");
	else if (is_result)
		local_result(a, id, fmt, cap_syslog, r);
	else {
		json_t *rec = sl_tasks_get(sl_read_tasks(a), id);
		if (!rec)
			sl_api_reply_error(r, 404, "NOT_FOUND", "no such task");
		else
			local_json(r, 200, rec);
	}
}
