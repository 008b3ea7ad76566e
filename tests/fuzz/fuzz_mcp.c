/* libFuzzer: MCP messages (src/common/mcp_jsonrpc.c, mcp_protocol.c, the
 * tools' argument checks). The input is split at its first '\n': the first
 * part is the MCP-Protocol-Version / Mcp-Method / Mcp-Name header values
 * ('|'-separated, HTTP transport), the rest the message body. Tools run
 * against a backend that answers every request from the second byte on:
 * a body taken from the input, so their JSON readers see hostile answers. */
#include "fuzz_util.h"

#include "common/mcp.h"

static const char *g_api;

static int fake(void *ctx, const char *method, const char *path, const char *body, long *status, char **resp,
		char *err, size_t errlen)
{
	(void)ctx;
	(void)method;
	(void)path;
	(void)body;
	(void)err;
	(void)errlen;
	*status = g_api[0] == '4' ? 403 : 200;
	*resp = strdup(g_api);
	return *resp ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	char *nl = memchr(s, '\n', size);
	char *body = nl ? nl + 1 : s;
	size_t blen = nl ? size - (size_t)(body - s) : size;
	struct sl_mcp_http_headers h = {0};
	if (nl) {
		*nl = '\0';
		h.protocol_version = s;
		char *b1 = strchr(s, '|');
		if (b1) {
			*b1 = '\0';
			h.method = b1 + 1;
			char *b2 = strchr(h.method, '|');
			if (b2) {
				*b2 = '\0';
				h.name = b2 + 1;
			}
		}
	}
	/* the API's answers: the body itself (often JSON-ish) */
	char *api = malloc(blen + 1);
	if (!api) {
		free(s);
		return 0;
	}
	memcpy(api, body, blen);
	api[blen] = '\0';
	g_api = api;
	struct sl_mcp_backend be = {fake, NULL, 0};
	struct sl_mcp_session ss = {0};
	struct sl_mcp_reply r;
	sl_mcp_handle(&be, nl ? SL_MCP_HTTP : SL_MCP_STDIO, nl ? &h : NULL, &ss, body, blen, &r);
	free(r.body);
	free(api);
	free(s);
	return 0;
}
