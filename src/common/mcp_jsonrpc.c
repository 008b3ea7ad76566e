/* JSON-RPC 2.0 message shape (https://www.jsonrpc.org/specification, as MCP
 * narrows it: ids are strings or integers, never null; params an object; no
 * batches since 2025-06-18). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mcp.h"

void sl_mcp_msg_free(struct sl_mcp_msg *m)
{
	if (m->root)
		json_decref(m->root);
	memset(m, 0, sizeof(*m));
}

static int id_ok(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

int sl_mcp_parse(const char *buf, size_t len, struct sl_mcp_msg *m, json_t **err_id, char *err,
		 size_t errlen)
{
	json_error_t je;
	memset(m, 0, sizeof(*m));
	*err_id = NULL;
	m->root = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
	if (!m->root) {
		snprintf(err, errlen, "parse error: %s (at byte %d)", je.text, je.position);
		return SL_MCP_PARSE_ERROR;
	}
	if (json_is_array(m->root)) {
		snprintf(err, errlen, "invalid request: JSON-RPC batches are not supported (MCP removed them in 2025-06-18)");
		return SL_MCP_INVALID_REQUEST;
	}
	if (!json_is_object(m->root)) {
		snprintf(err, errlen, "invalid request: a message must be a JSON object");
		return SL_MCP_INVALID_REQUEST;
	}
	json_t *id = json_object_get(m->root, "id");
	if (id && id_ok(id))
		*err_id = id;
	const char *ver = json_string_value(json_object_get(m->root, "jsonrpc"));
	if (!ver || strcmp(ver, "2.0")) {
		snprintf(err, errlen, "invalid request: \"jsonrpc\" must be \"2.0\"");
		return SL_MCP_INVALID_REQUEST;
	}
	if (id && !id_ok(id)) {
		snprintf(err, errlen, "invalid request: \"id\" must be a string or an integer");
		return SL_MCP_INVALID_REQUEST;
	}
	json_t *method = json_object_get(m->root, "method");
	if (!method) {
		/* a response to a request of ours: we send none, so it is only
		 * checked for shape and dropped */
		if (id && (json_object_get(m->root, "result") || json_object_get(m->root, "error"))) {
			m->kind = SL_MCP_RESPONSE;
			m->id = id;
			return 0;
		}
		snprintf(err, errlen, "invalid request: no \"method\"");
		return SL_MCP_INVALID_REQUEST;
	}
	if (!json_is_string(method) || !json_string_length(method)) {
		snprintf(err, errlen, "invalid request: \"method\" must be a non-empty string");
		return SL_MCP_INVALID_REQUEST;
	}
	m->method = json_string_value(method);
	m->id = id;
	m->kind = id ? SL_MCP_REQUEST : SL_MCP_NOTIFICATION;
	json_t *params = json_object_get(m->root, "params");
	if (params && !json_is_object(params)) {
		snprintf(err, errlen, "invalid params: \"params\" must be an object");
		return SL_MCP_INVALID_PARAMS;
	}
	m->params = params;
	return 0;
}

static char *dump(json_t *o)
{
	if (!o)
		return NULL;
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

char *sl_mcp_result_text(json_t *id, json_t *result)
{
	if (!result)
		return NULL;
	json_t *o = json_object();
	if (!o) {
		json_decref(result);
		return NULL;
	}
	json_object_set_new(o, "jsonrpc", json_string("2.0"));
	json_object_set(o, "id", id ? id : json_null());
	json_object_set_new(o, "result", result);
	return dump(o);
}

char *sl_mcp_error_text(json_t *id, int code, const char *message, json_t *data)
{
	json_t *e = json_object(), *o = json_object();
	if (!e || !o) {
		json_decref(e);
		json_decref(o);
		json_decref(data);
		return NULL;
	}
	json_object_set_new(e, "code", json_integer(code));
	json_t *msg = json_string(message ? message : "error");
	if (!msg) /* a message quoting input that is not UTF-8 */
		msg = json_string("error (message not valid UTF-8)");
	json_object_set_new(e, "message", msg);
	if (data)
		json_object_set_new(e, "data", data);
	json_object_set_new(o, "jsonrpc", json_string("2.0"));
	json_object_set(o, "id", id ? id : json_null());
	json_object_set_new(o, "error", e);
	return dump(o);
}
