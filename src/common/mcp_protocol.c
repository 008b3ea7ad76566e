/* MCP methods and the two revisions (docs/MCP.md "Protocol"):
 *
 * 2025-11-25 (legacy): initialize (version negotiation), notifications/
 *   initialized, ping, tools/list, tools/call. On HTTP: stateless (no
 *   Mcp-Session-Id is issued); an MCP-Protocol-Version header, when sent,
 *   must name a legacy revision we serve (else 400).
 * 2026-07-28 (modern): a request whose params._meta carries
 *   io.modelcontextprotocol/protocolVersion. server/discover, tools/list,
 *   tools/call; results carry resultType, the cacheable ones ttlMs and
 *   cacheScope. On HTTP the MCP-Protocol-Version and Mcp-Method headers are
 *   required and must match the body (Mcp-Name too, for tools/call):
 *   -32020 HeaderMismatch, HTTP 400.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mcp.h"

#define SERVER_NAME "sandlens"
#define SERVER_VERSION "0.1.0"
#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_SERVER "io.modelcontextprotocol/serverInfo"
/* tools/list and server/discover do not change while the binary runs and
 * are the same for every caller (a reader is refused at call time) */
#define LIST_TTL_MS 300000

static const char *const legacy_versions[] = {SL_MCP_V_LEGACY, "2025-06-18", "2025-03-26"};
#define NLEGACY (sizeof(legacy_versions) / sizeof(legacy_versions[0]))

static const char instructions[] =
	"sandlens observes containers on this node with eBPF. Start with list_containers, then "
	"container_health or explain_latency for one container; recent_faults and hw_faults list "
	"warning-or-worse events; capture_profile (admin only) starts a CPU profile, get_profile "
	"reads its top frames, diff_profiles compares two, list_captures lists them.";

static int legacy_supported(const char *v)
{
	for (size_t i = 0; v && i < NLEGACY; i++)
		if (!strcmp(v, legacy_versions[i]))
			return 1;
	return 0;
}

static json_t *server_info(void)
{
	return json_pack("{s:s, s:s, s:s}", "name", SERVER_NAME, "title", "sandlens node agent", "version",
			 SERVER_VERSION);
}

static json_t *capabilities(void)
{
	return json_pack("{s:{s:b}}", "tools", "listChanged", 0);
}

static void set_error(struct sl_mcp_reply *out, json_t *id, unsigned status, int code, const char *msg,
		      json_t *data)
{
	out->body = sl_mcp_error_text(id, code, msg, data);
	out->http_status = status;
}

/* Mcp-Name values may be sent as "=?base64?<b64 of UTF-8>?=" (2026-07-28
 * Streamable HTTP, value encoding). Decodes into buf; 0 or -1 (malformed). */
static int header_value(const char *h, char *buf, size_t size)
{
	static const char pre[] = "=?base64?", suf[] = "?=";
	size_t n = strlen(h), pl = sizeof(pre) - 1, sl = sizeof(suf) - 1;
	if (n < pl + sl || strncmp(h, pre, pl) || strcmp(h + n - sl, suf)) {
		if (n >= size)
			return -1;
		memcpy(buf, h, n + 1);
		return 0;
	}
	size_t o = 0;
	unsigned acc = 0;
	int bits = 0;
	for (size_t i = pl; i < n - sl; i++) {
		char c = h[i];
		int v = c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26
			: c >= '0' && c <= '9' ? c - '0' + 52 : c == '+' ? 62 : c == '/' ? 63 : c == '=' ? -2 : -1;
		if (v == -1)
			return -1;
		if (v == -2)
			continue;
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o + 1 >= size)
				return -1;
			buf[o++] = (char)((acc >> bits) & 0xff);
		}
	}
	buf[o] = 0;
	return memchr(buf, 0, o) ? -1 : 0;
}

/* 2026-07-28 request checks on HTTP: 0, or an error answer was set. */
static int check_modern_headers(const struct sl_mcp_http_headers *h, const struct sl_mcp_msg *m,
				const char *version, struct sl_mcp_reply *out)
{
	char msg[300], name[512];
	if (!h->protocol_version) {
		set_error(out, m->id, 400, SL_MCP_HEADER_MISMATCH, "missing MCP-Protocol-Version header", NULL);
		return -1;
	}
	if (strcmp(h->protocol_version, version)) {
		snprintf(msg, sizeof(msg), "MCP-Protocol-Version header '%.40s' does not match _meta %s '%.40s'",
			 h->protocol_version, META_VERSION, version);
		set_error(out, m->id, 400, SL_MCP_HEADER_MISMATCH, msg, NULL);
		return -1;
	}
	if (m->kind != SL_MCP_REQUEST) /* notifications are exempt from the presence rule */
		return 0;
	if (!h->method || strcmp(h->method, m->method)) {
		snprintf(msg, sizeof(msg), h->method ? "Mcp-Method header '%.60s' does not match the method '%.60s'"
						     : "missing Mcp-Method header%.0s (method '%.60s')",
			 h->method ? h->method : "", m->method);
		set_error(out, m->id, 400, SL_MCP_HEADER_MISMATCH, msg, NULL);
		return -1;
	}
	if (!strcmp(m->method, "tools/call")) {
		const char *tn = json_string_value(json_object_get(m->params, "name"));
		if (!tn) /* the body's own fault: -32602 at dispatch */
			return 0;
		if (!h->name) {
			set_error(out, m->id, 400, SL_MCP_HEADER_MISMATCH, "missing Mcp-Name header (tools/call)", NULL);
			return -1;
		}
		if (header_value(h->name, name, sizeof(name)) || strcmp(name, tn)) {
			snprintf(msg, sizeof(msg), "Mcp-Name header does not match params.name '%.60s'", tn);
			set_error(out, m->id, 400, SL_MCP_HEADER_MISMATCH, msg, NULL);
			return -1;
		}
	}
	return 0;
}

static json_t *modern_result(json_t *r, int cacheable)
{
	if (!r)
		return NULL;
	json_object_set_new(r, "resultType", json_string("complete"));
	if (cacheable) {
		json_object_set_new(r, "ttlMs", json_integer(LIST_TTL_MS));
		json_object_set_new(r, "cacheScope", json_string("public"));
	}
	json_object_set_new(r, "_meta", json_pack("{s:o}", META_SERVER, server_info()));
	return r;
}

static json_t *initialize(const struct sl_mcp_msg *m, struct sl_mcp_session *s)
{
	const char *req = json_string_value(json_object_get(m->params, "protocolVersion"));
	/* the requested revision when we speak it, else our latest legacy one
	 * (2025-11-25 "Version Negotiation"; 2026-07-28 has no initialize) */
	const char *v = legacy_supported(req) ? req : SL_MCP_V_LEGACY;
	if (s) {
		s->initialized = 1;
		snprintf(s->version, sizeof(s->version), "%s", v);
	}
	return json_pack("{s:s, s:o, s:o, s:s}", "protocolVersion", v, "capabilities", capabilities(),
			 "serverInfo", server_info(), "instructions", instructions);
}

static json_t *discover(void)
{
	return json_pack("{s:[s], s:o, s:o, s:s}", "supportedVersions", SL_MCP_V_MODERN, "capabilities",
			 capabilities(), "serverInfo", server_info(), "instructions", instructions);
}

/* tools/call: 0 and *res, or an error answer was set. */
static int call_tool(const struct sl_mcp_backend *be, const struct sl_mcp_msg *m, json_t **res,
		     struct sl_mcp_reply *out)
{
	char err[300];
	json_t *name = json_object_get(m->params, "name"), *args = json_object_get(m->params, "arguments");
	if (!json_is_string(name)) {
		set_error(out, m->id, 200, SL_MCP_INVALID_PARAMS, "tools/call: params.name must be a string", NULL);
		return -1;
	}
	if (args && !json_is_object(args)) {
		set_error(out, m->id, 200, SL_MCP_INVALID_PARAMS, "tools/call: params.arguments must be an object",
			  NULL);
		return -1;
	}
	err[0] = 0;
	int rc = sl_mcp_tools_call(be, json_string_value(name), args, res, err, sizeof(err));
	if (rc) {
		set_error(out, m->id, 200, rc, err[0] ? err : "tool failed", NULL);
		return -1;
	}
	return 0;
}

/* The method of request m in its revision: 0 and *res, or an answer was set. */
static int run_method(const struct sl_mcp_backend *be, int modern, const struct sl_mcp_msg *m,
		      struct sl_mcp_session *s, json_t **res, struct sl_mcp_reply *out)
{
	const char *me = m->method;
	*res = NULL;
	if (!strcmp(me, "tools/list")) {
		json_t *r = json_pack("{s:o}", "tools", sl_mcp_tools_list());
		*res = modern ? modern_result(r, 1) : r;
	} else if (!strcmp(me, "tools/call")) {
		if (call_tool(be, m, res, out))
			return -1;
		if (modern)
			*res = modern_result(*res, 0);
	} else if (modern && !strcmp(me, "server/discover")) {
		*res = modern_result(discover(), 1);
	} else if (!modern && !strcmp(me, "initialize")) {
		*res = initialize(m, s);
	} else if (!modern && !strcmp(me, "ping")) {
		*res = json_object();
	} else {
		char msg[200];
		snprintf(msg, sizeof(msg), "method not found: '%.80s' (revision %s)", me,
			 modern ? SL_MCP_V_MODERN : SL_MCP_V_LEGACY);
		/* 2026-07-28 HTTP: 404 so a client tells a modern endpoint from a
		 * legacy one; legacy: in-band 200 */
		set_error(out, m->id, modern ? 404 : 200, SL_MCP_METHOD_NOT_FOUND, msg, NULL);
		return -1;
	}
	if (!*res) {
		set_error(out, m->id, 200, SL_MCP_INTERNAL_ERROR, "out of memory", NULL);
		return -1;
	}
	return 0;
}

/* The revision claim of m: 1 modern (version in *v), 0 legacy, -1 an answer
 * was set (a malformed or unsupported claim). */
static int classify(enum sl_mcp_transport tr, const struct sl_mcp_http_headers *h, const struct sl_mcp_msg *m,
		    const char **v, struct sl_mcp_reply *out)
{
	json_t *meta = json_object_get(m->params, "_meta");
	json_t *pv = json_is_object(meta) ? json_object_get(meta, META_VERSION) : NULL;
	const char *hv = tr == SL_MCP_HTTP && h ? h->protocol_version : NULL;
	char msg[300];

	if (!pv) {
		if (hv && !strcmp(hv, SL_MCP_V_MODERN) && m->kind == SL_MCP_REQUEST) {
			snprintf(msg, sizeof(msg), "invalid params: MCP-Protocol-Version is %s but params._meta lacks %s",
				 SL_MCP_V_MODERN, META_VERSION);
			set_error(out, m->id, 400, SL_MCP_INVALID_PARAMS, msg, NULL);
			return -1;
		}
		if (hv && !legacy_supported(hv) && strcmp(hv, SL_MCP_V_MODERN)) {
			snprintf(msg, sizeof(msg), "Bad Request: Unsupported protocol version '%.40s' (supported: %s, %s, %s, %s)",
				 hv, SL_MCP_V_MODERN, legacy_versions[0], legacy_versions[1], legacy_versions[2]);
			set_error(out, m->id, 400, SL_MCP_INVALID_REQUEST, msg, NULL);
			return -1;
		}
		return 0;
	}
	if (!json_is_string(pv)) {
		set_error(out, m->id, 400, SL_MCP_INVALID_PARAMS, "invalid params: _meta " META_VERSION " must be a string",
			  NULL);
		return -1;
	}
	*v = json_string_value(pv);
	if (strcmp(*v, SL_MCP_V_MODERN)) {
		snprintf(msg, sizeof(msg), "Unsupported protocol version: %.40s", *v);
		set_error(out, m->id, 400, SL_MCP_UNSUPPORTED_VERSION, msg,
			  json_pack("{s:[s,s], s:s}", "supported", SL_MCP_V_MODERN, SL_MCP_V_LEGACY, "requested", *v));
		return -1;
	}
	if (m->kind == SL_MCP_REQUEST && !json_is_object(json_object_get(meta, META_CAPS))) {
		set_error(out, m->id, 400, SL_MCP_INVALID_PARAMS,
			  "invalid params: _meta " META_CAPS " (an object) is required on every 2026-07-28 request", NULL);
		return -1;
	}
	if (tr == SL_MCP_HTTP && h && check_modern_headers(h, m, *v, out))
		return -1;
	return 1;
}

void sl_mcp_handle(const struct sl_mcp_backend *be, enum sl_mcp_transport tr,
		   const struct sl_mcp_http_headers *h, struct sl_mcp_session *s, const char *msg, size_t len,
		   struct sl_mcp_reply *out)
{
	struct sl_mcp_msg m;
	json_t *eid, *res;
	char err[300];
	const char *v = NULL;

	out->body = NULL;
	out->http_status = 202;
	if (len > SL_MCP_MAX_MESSAGE) {
		snprintf(err, sizeof(err), "invalid request: message of %zu bytes (at most %zu)", len, SL_MCP_MAX_MESSAGE);
		set_error(out, NULL, 413, SL_MCP_INVALID_REQUEST, err, NULL);
		return;
	}
	int rc = sl_mcp_parse(msg, len, &m, &eid, err, sizeof(err));
	if (rc) {
		set_error(out, eid, 400, rc, err, NULL);
		if (rc == SL_MCP_INVALID_PARAMS) /* a well-formed message: in band */
			out->http_status = 200;
		sl_mcp_msg_free(&m);
		return;
	}
	if (m.kind == SL_MCP_RESPONSE) { /* to no request of ours: dropped */
		sl_mcp_msg_free(&m);
		return;
	}
	int modern = classify(tr, h, &m, &v, out);
	if (modern < 0 || m.kind == SL_MCP_NOTIFICATION) {
		/* notifications (initialized, cancelled, ...) need no answer: an
		 * error answer to one is only sent on HTTP, as its status */
		if (m.kind == SL_MCP_NOTIFICATION && tr == SL_MCP_STDIO) {
			free(out->body);
			out->body = NULL;
		}
		sl_mcp_msg_free(&m);
		return;
	}
	if (run_method(be, modern, &m, s, &res, out) == 0) {
		out->body = sl_mcp_result_text(m.id, res);
		out->http_status = 200;
	}
	sl_mcp_msg_free(&m);
}
