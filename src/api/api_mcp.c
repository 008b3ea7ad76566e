/* POST /mcp: the MCP server's Streamable HTTP transport (docs/MCP.md).
 *
 * One JSON-RPC message per POST, answered with one application/json body
 * (no SSE: no tool streams progress), 202 and no body for a notification.
 * Stateless for both revisions: no Mcp-Session-Id is issued (2025-11-25
 * lets a server go without one; 2026-07-28 has none). GET and DELETE are
 * 405: there is no server-to-client stream and no session to end.
 *
 * Before the body is read: an Origin header that is present must be a
 * loopback origin (http(s)://localhost|127.x.y.z|[::1][:port]), else 403
 * (DNS rebinding: a web page's requests carry its own origin); a
 * Content-Length over SL_MCP_MAX_MESSAGE is a 413 at once, a body that
 * grows past it too. The tools make their API requests in process as this
 * request's caller (sl_api_local), so a reader gets what a reader gets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/api_internal.h"
#include "common/log.h"
#include "common/mcp.h"

#define MOD "api"

struct local_ctx {
	struct sl_api *api;
	const struct sl_api_caller *caller;
};

static int local_request(void *ctx, const char *method, const char *path, const char *body, long *status,
			 char **resp, char *err, size_t errlen)
{
	struct local_ctx *l = ctx;
	unsigned st = 0;
	if (sl_api_local(l->api, l->caller, method, path, body, &st, resp)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	*status = (long)st;
	return 0;
}

/* 1 when the Origin header value o is a loopback origin. */
static int origin_ok(const char *o)
{
	const char *h;
	if (!strncmp(o, "http://", 7))
		h = o + 7;
	else if (!strncmp(o, "https://", 8))
		h = o + 8;
	else
		return 0;
	size_t hl;
	if (*h == '[') {
		const char *e = strchr(h, ']');
		if (!e || (size_t)(e - h) != 4 || strncmp(h, "[::1]", 5))
			return 0;
		hl = 5;
	} else {
		hl = strcspn(h, ":/");
		if (!(hl == 9 && !strncasecmp(h, "localhost", 9))) {
			/* 127.0.0.0/8 in dotted decimal */
			unsigned a, b, c, d;
			char tail;
			char buf[32];
			if (hl >= sizeof(buf))
				return 0;
			memcpy(buf, h, hl);
			buf[hl] = 0;
			if (sscanf(buf, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) != 4 || a != 127 || b > 255 || c > 255 ||
			    d > 255)
				return 0;
		}
	}
	const char *p = h + hl;
	if (*p == ':') {
		p++;
		size_t dl = strspn(p, "0123456789");
		if (!dl || dl > 5)
			return 0;
		p += dl;
	}
	return *p == 0 || !strcmp(p, "/");
}

static enum MHD_Result mcp_send(struct MHD_Connection *c, unsigned status, char *body, const char *allow)
{
	size_t len = body ? strlen(body) : 0;
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	if (body)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (allow)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
	enum MHD_Result ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result send_rpc_error(struct MHD_Connection *c, unsigned status, int code, const char *msg,
				      const char *allow)
{
	return mcp_send(c, status, sl_mcp_error_text(NULL, code, msg, NULL), allow);
}

static const char *hdr(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

enum MHD_Result sl_api_mcp_request(struct sl_api *api, struct MHD_Connection *c, const struct sl_api_caller *caller,
				   const char *method, const char *upload, size_t *upload_size, void **con_cls)
{
	struct sl_api_upload *u = *con_cls;
	char msg[200];
	if (!u) { /* headers only: every check that needs no body */
		static struct sl_log_limit lim = SL_LOG_LIMIT_INIT(10);
		const char *origin = hdr(c, "Origin"), *cl = hdr(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (origin && !origin_ok(origin)) {
			sl_log_limited(&lim, SL_LOG_INFO, MOD, "/mcp: Origin '%.80s' refused (403)", origin);
			snprintf(msg, sizeof(msg), "Forbidden: Origin '%.80s' is not a loopback origin", origin);
			return send_rpc_error(c, 403, SL_MCP_INVALID_REQUEST, msg, NULL);
		}
		if (strcmp(method, "POST")) {
			snprintf(msg, sizeof(msg), "%.16s not allowed on /mcp: POST one JSON-RPC message (no SSE stream, no session)",
				 method);
			return send_rpc_error(c, 405, SL_MCP_INVALID_REQUEST, msg, "POST");
		}
		if (cl && strtoull(cl, NULL, 10) > SL_MCP_MAX_MESSAGE) {
			snprintf(msg, sizeof(msg), "invalid request: body of %.20s bytes (at most %zu)", cl, SL_MCP_MAX_MESSAGE);
			return send_rpc_error(c, 413, SL_MCP_INVALID_REQUEST, msg, NULL);
		}
		u = calloc(1, sizeof(*u));
		if (!u)
			return MHD_NO;
		*con_cls = u;
		return MHD_YES;
	}
	if (*upload_size) {
		if (!u->too_big && u->len + *upload_size <= SL_MCP_MAX_MESSAGE) {
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
	if (u->too_big) {
		snprintf(msg, sizeof(msg), "invalid request: body larger than %zu bytes", SL_MCP_MAX_MESSAGE);
		return send_rpc_error(c, 413, SL_MCP_INVALID_REQUEST, msg, NULL);
	}
	struct local_ctx lc = {api, caller};
	struct sl_mcp_backend be = {local_request, &lc, 0}; /* no wait on an API thread */
	struct sl_mcp_http_headers h = {hdr(c, "MCP-Protocol-Version"), hdr(c, "Mcp-Method"), hdr(c, "Mcp-Name")};
	struct sl_mcp_reply r;
	sl_mcp_handle(&be, SL_MCP_HTTP, &h, NULL, u->buf ? u->buf : "", u->len, &r);
	if (!r.body && r.http_status != 202)
		return send_rpc_error(c, 500, SL_MCP_INTERNAL_ERROR, "out of memory", NULL);
	return mcp_send(c, r.http_status, r.body, NULL);
}
