/* The MCP server (issue 16 item 1, OUT-5; docs/MCP.md): JSON-RPC 2.0 over
 * either transport, the protocol revisions 2025-11-25 (initialize
 * handshake) and 2026-07-28 (stateless: version and client capabilities in
 * each request's _meta), and the tools. Transport-independent: the stdio
 * transport (src/cli/mcp.c) and the HTTP route /mcp (src/api/api_mcp.c)
 * hand each message to sl_mcp_handle and send what it answers. In
 * src/common because both binaries link it (the CLI links no daemon code):
 * mcp_jsonrpc.c, mcp_protocol.c, mcp_tools*.c; jansson only, no I/O of its
 * own (the backend does the requests).
 *
 * The tools read the agent only through the local REST API, as requests
 * made through a backend (struct sl_mcp_backend): over HTTP from the CLI, in
 * process (with the caller's own access rights) in the agent. So the same
 * access rules hold as for the REST API: what it withholds from a reader
 * (argv, stacks: the task routes) the tools withhold too.
 */
#ifndef SANDLENS_COMMON_MCP_H
#define SANDLENS_COMMON_MCP_H

#include <jansson.h>
#include <stddef.h>

/* Protocol revisions served. */
#define SL_MCP_V_LEGACY "2025-11-25"  /* initialize handshake (answered for any other legacy request) */
#define SL_MCP_V_MODERN "2026-07-28"  /* stateless, per-request _meta */

/* Largest JSON-RPC message accepted (bytes, both transports); more is a
 * -32600 (HTTP 413). */
#define SL_MCP_MAX_MESSAGE ((size_t)1 << 20)
/* A tool result's text summary is cut past this many bytes, with a
 * "...[truncated]" line; its structuredContent loses array tails past
 * SL_MCP_MAX_STRUCTURED bytes of compact JSON and gets "truncated": true. */
#define SL_MCP_MAX_TEXT ((size_t)16 << 10)
#define SL_MCP_MAX_STRUCTURED ((size_t)256 << 10)

/* JSON-RPC and MCP error codes answered. */
enum {
	SL_MCP_PARSE_ERROR = -32700,
	SL_MCP_INVALID_REQUEST = -32600,
	SL_MCP_METHOD_NOT_FOUND = -32601,
	SL_MCP_INVALID_PARAMS = -32602,
	SL_MCP_INTERNAL_ERROR = -32603,
	/* 2026-07-28 (TypeScript SDK 2.x ProtocolErrorCode): */
	SL_MCP_HEADER_MISMATCH = -32020,
	SL_MCP_UNSUPPORTED_VERSION = -32022,
	/* ours (implementation-defined server error range): the REST API
	 * answered 403, the caller is not an admin */
	SL_MCP_FORBIDDEN = -32010,
};

/* How the tools reach the REST API. request: method "GET" or "POST", path
 * with its query ("/api/v1/events?type=oom_kill"), body NUL-terminated JSON
 * or NULL. Returns 0 when the API answered, with *status its HTTP status and
 * *resp its body (malloc'd, NUL-terminated, may be NULL); -1 when it could
 * not be reached, with the reason in err. */
struct sl_mcp_backend {
	int (*request)(void *ctx, const char *method, const char *path, const char *body, long *status,
		       char **resp, char *err, size_t errlen);
	void *ctx;
	/* get_profile's wait_s is cut to this (seconds): the stdio server may
	 * wait, the agent's /mcp route may not hold an API thread (0) */
	int max_wait_s;
};

enum sl_mcp_transport { SL_MCP_STDIO, SL_MCP_HTTP };

/* The HTTP request headers the Streamable HTTP transport checks (NULL when
 * absent). */
struct sl_mcp_http_headers {
	const char *protocol_version; /* MCP-Protocol-Version */
	const char *method;           /* Mcp-Method (2026-07-28) */
	const char *name;             /* Mcp-Name (2026-07-28, tools/call) */
};

/* stdio keeps the legacy handshake's outcome (HTTP is stateless: NULL). */
struct sl_mcp_session {
	int initialized;  /* initialize was answered */
	char version[16]; /* the revision it negotiated */
};

struct sl_mcp_reply {
	char *body;           /* malloc'd JSON text; NULL: nothing to send (a notification, a response) */
	unsigned http_status; /* what the HTTP transport answers: 200, 202 (nothing to send), 400, 404 */
};

/* Handles one message msg[0..len) (not NUL-terminated) from a client:
 * parses it (-32700 when not JSON, -32600 when not a JSON-RPC 2.0 request
 * or notification, a batch array included), classifies its revision (a
 * _meta io.modelcontextprotocol/protocolVersion: 2026-07-28, else the
 * legacy handshake era), checks the HTTP headers h (NULL on stdio) and runs
 * the method. Never fails: out is always set (out->body NULL only for
 * what needs no answer, or when out of memory). */
void sl_mcp_handle(const struct sl_mcp_backend *be, enum sl_mcp_transport tr,
		   const struct sl_mcp_http_headers *h, struct sl_mcp_session *s, const char *msg, size_t len,
		   struct sl_mcp_reply *out);

/* ---- mcp_jsonrpc.c: message shape and answers (pure) ---- */

/* What a parsed message is. */
enum sl_mcp_kind { SL_MCP_REQUEST, SL_MCP_NOTIFICATION, SL_MCP_RESPONSE };

struct sl_mcp_msg {
	json_t *root;        /* the parsed object (owned) */
	json_t *id;          /* borrowed: string or integer; NULL for a notification */
	const char *method;  /* borrowed; NULL for a response */
	json_t *params;      /* borrowed object, or NULL when absent */
	enum sl_mcp_kind kind;
};

/* Parses buf[0..len) into *m. Returns 0, or a JSON-RPC error code
 * (SL_MCP_PARSE_ERROR, SL_MCP_INVALID_REQUEST, SL_MCP_INVALID_PARAMS for
 * params that are not an object) with the reason in err; then *err_id is
 * the message's id when one could be read (borrowed from m->root, which the
 * caller frees with sl_mcp_msg_free in every case), else NULL. */
int sl_mcp_parse(const char *buf, size_t len, struct sl_mcp_msg *m, json_t **err_id, char *err,
		 size_t errlen);
void sl_mcp_msg_free(struct sl_mcp_msg *m);

/* {"jsonrpc":"2.0","id":id,"result":result} (result stolen; id borrowed,
 * NULL: null) as malloc'd text. NULL when out of memory. */
char *sl_mcp_result_text(json_t *id, json_t *result);
/* {"jsonrpc":"2.0","id":id|null,"error":{"code","message"[,"data"]}} (data
 * stolen, may be NULL). NULL when out of memory. */
char *sl_mcp_error_text(json_t *id, int code, const char *message, json_t *data);

/* ---- mcp_tools.c ---- */

/* The tools/list "tools" array (new reference). */
json_t *sl_mcp_tools_list(void);

/* Runs tools/call of tool name with arguments args (an object or NULL).
 * Returns 0 with *result the CallToolResult (new reference: content,
 * structuredContent, isError); or a JSON-RPC error code with the message in
 * err: SL_MCP_INVALID_PARAMS (unknown tool), SL_MCP_FORBIDDEN (the API
 * answered 403), SL_MCP_INTERNAL_ERROR (out of memory). A tool that fails
 * for its arguments or for the agent (400, 404, 5xx, unreachable) is a
 * result with isError true and the reason as text, not an error. */
int sl_mcp_tools_call(const struct sl_mcp_backend *be, const char *name, json_t *args, json_t **result,
		      char *err, size_t errlen);

#endif
