/* Shared by the MCP tool files (src/common/mcp_tools*.c; not for use outside them). */
#ifndef SANDLENS_COMMON_MCP_TOOLS_H
#define SANDLENS_COMMON_MCP_TOOLS_H

#include <jansson.h>
#include <stddef.h>

#include "common/mcp.h"

/* What a tool produced: structured (an object, owned), the text summary
 * (growing buffer), or a failure. */
struct tool_out {
	json_t *structured;
	char *text;
	size_t len, cap;
	int is_error;      /* the result is a tool error (isError: true) */
	int forbidden;     /* the API answered 403: a JSON-RPC error instead */
	char errmsg[300];  /* forbidden: the API's message */
};

/* Appends printf text to o->text (ignored when out of memory). */
void tool_printf(struct tool_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Marks o a tool error with the message as its text. */
void tool_fail(struct tool_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* GET path through be: 0 and *out (the body parsed, new reference) on HTTP
 * 200; otherwise *status (0: unreachable) and the reason in err (the API's
 * error message when it gave one), *out NULL, -1. A 403 also marks o
 * forbidden (when o is not NULL). */
int api_get(const struct sl_mcp_backend *be, const char *path, json_t **out, long *status, char *err,
	    size_t errlen, struct tool_out *o);
/* POST path with body (JSON text): as api_get; 2xx is success. */
int api_post(const struct sl_mcp_backend *be, const char *path, const char *body, json_t **out, long *status,
	     char *err, size_t errlen, struct tool_out *o);
/* Appends "&k=v" / "?k=v" (v percent-encoded) to buf; -1 when it does not fit. */
int query_add(char *buf, size_t size, const char *k, const char *v);

/* Argument readers (the schema was checked before the tool runs). */
const char *arg_str(json_t *args, const char *k, const char *dflt);
long long arg_int(json_t *args, const char *k, long long dflt);

/* Every object found in the arrays of a view's body (depth <= 2) whose
 * "container_id" is id or begins with it (id of >= 4 characters): a new
 * array of borrowed-then-increfed objects. */
json_t *view_entries_of(json_t *body, const char *id);

/* The event schema (GET /api/v1/schema/events "kinds"), new reference, or
 * NULL with the reason in err. */
json_t *kinds_get(const struct sl_mcp_backend *be, char *err, size_t errlen, struct tool_out *o);
/* Severity rank: debug 0 .. critical 5, -1 unknown. */
int severity_rank(const char *s);

/* The tools. */
void tool_list_containers(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o);
void tool_container_health(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o);
void tool_recent_faults(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o);
void tool_hw_faults(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o);
void tool_explain_latency(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o);
void tool_capture_profile(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o);
void tool_get_profile(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o);
void tool_diff_profiles(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o);
void tool_list_captures(const struct sl_mcp_backend *be, json_t *args, struct tool_out *o);

/* Faults query shared by recent_faults, hw_faults, container_health and
 * explain_latency: events of every kind the schema lists, since `since`
 * (API time form), of container (may be NULL), with an event severity >=
 * min_rank and accepted by keep (NULL: all); at most limit, newest first,
 * each with its kind's "module" added. Returns a new array, or NULL when the
 * API failed (reason in err, o marked). *nkinds gets the number of kinds
 * queried; *nmatched (nmatched may be NULL) the number of matching events
 * read before the cut to limit (a lower bound: each kind is read up to
 * limit), so a caller can say "the newest 20 of at least 57". */
json_t *faults_query(const struct sl_mcp_backend *be, const char *container, const char *since, int min_rank,
		     int (*keep)(json_t *ev), size_t limit, size_t *nkinds, size_t *nmatched, char *err,
		     size_t errlen, struct tool_out *o);

#endif
