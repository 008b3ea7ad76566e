/* Local HTTP API (OUT-4) and the /metrics endpoint (OUT-2), served by
 * libmicrohttpd from its own threads. docs/API.md is the reference for
 * routes, parameters, status codes and bodies.
 *
 * Listeners: TCP on cfg.api.listen ("host:port"; default 127.0.0.1:9753,
 * loopback only unless configured otherwise; "" = none) and/or a unix
 * socket at cfg.api.unix_socket (created mode 0600; a stale socket file is
 * replaced, a live one or a non-socket file is an error). Each listener gets
 * its own MHD daemon with an internal pool of cfg.api.threads threads.
 *
 * Threads: handlers run on MHD threads and read the agent only through
 * src/agent/read.h (the store's query functions, health, metrics, the
 * event schema, the modules' views and series).
 *
 * Module views: GET /api/v1/<module><path> for every view a module
 * declares (struct sl_api_view); parameters are plain: an empty value, a
 * repeated name or an undeclared name is a 400 before the view runs; an
 * admin_only view needs an admin caller (403 otherwise).
 */
#ifndef SANDLENS_API_H
#define SANDLENS_API_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "store/store.h"

struct sl_agent;
struct sl_api;

/* Bodies larger than this are cut (OUT-4): event/container lists lose their
 * tail and carry "truncated": true; text gets a "# ...[truncated]" line. */
#define SL_API_MAX_BODY ((size_t)8 << 20)
/* /metrics responses in flight at once (each may pin a statistics pass's
 * text until its client has read it); more is a 429. */
#define SL_API_MAX_METRICS_INFLIGHT 16
/* Query parameters read per request; more is a 400. */
#define SL_API_MAX_PARAMS 32

/* Starts the listeners configured in a->cfg.api. At least one of listen and
 * unix_socket must be set. Returns NULL and a message in err on failure
 * (address parse, bind, socket path, MHD start). */
struct sl_api *sl_api_start(struct sl_agent *a, char *err, size_t errlen);

/* Waits up to timeout_ms for open task follow streams to send their last
 * record and end (at shutdown, after the tasks were cancelled and have
 * ended). Returns how many are still open. NULL: 0. */
int sl_api_drain_streams(struct sl_api *api, unsigned timeout_ms);

/* Stops both daemons (waits for running handlers), closes the listeners and
 * removes the unix socket file if it is still the one we created. NULL is a
 * no-op. */
void sl_api_stop(struct sl_api *api);

/* TCP port actually bound (useful with port 0), or 0 when there is no TCP
 * listener. */
int sl_api_tcp_port(const struct sl_api *api);

/* The API's own counters as Prometheus text (sandlens_api_*: connections
 * closed by the header deadline or the per-client budget, 403 answers,
 * events sent without argv), process-wide; sl_agent_write_metrics_to calls it. */
/* Every route the agent's own tables serve, as docs/API.md names them:
 * cb(method, path) for the fixed routes (GET; a prefix route as its
 * documented form, "/api/v1/workloads/{id}/stats"), the event stream and
 * the task routes ("POST", "/api/v1/tasks"; "{id}" for a task id). Module
 * views (/api/v1/<module><path>) are not included: they come from the
 * registry (struct sl_api_view). For tests/unit/test_api_routes.c, which
 * checks that docs/API.md lists each. */
void sl_api_routes(void (*cb)(const char *method, const char *path, void *ctx), void *ctx);

struct sl_prom;
void sl_api_write_metrics(struct sl_prom *p);

/* Overrides SL_API_MAX_BODY (bytes; tests). Call before requests arrive. */
void sl_api_set_max_body(struct sl_api *api, size_t bytes);

/* ---- request parsing (api_params.c; pure, no I/O) ---- */

/* One query parameter as received (already percent-decoded). value is NULL
 * for a bare "?key". */
struct sl_api_param {
	const char *key;
	const char *value;
};

/* The query parameters of one request (sl_api_collect_params). p[0..n) are
 * valid for the request's lifetime; after a successful collection no key or
 * value holds a NUL byte, so each is exactly its C string. */
struct sl_api_params {
	size_t n;
	int overflow;        /* more than SL_API_MAX_PARAMS were given */
	int nul;             /* a key (1) or value (2) holds a NUL byte (%00) */
	int bad_utf8;        /* a key (1) or value (2) is not valid UTF-8 */
	char nul_name[200];  /* then: the parameter's name, control and non-ASCII bytes as %XX */
	struct sl_api_param p[SL_API_MAX_PARAMS];
};

/* Adds one query argument as microhttpd reports it (key_size / value_size
 * bytes, which may hold NUL bytes that a C string would cut short; value
 * NULL for a bare "?key"). Returns 0 to go on, or -EINVAL when collecting
 * must stop: ps->overflow or ps->nul is then set. ps must start zeroed. */
int sl_api_params_add(struct sl_api_params *ps, const char *key, size_t key_size,
		      const char *value, size_t value_size);

/* 0 when the collected parameters can be used (no overflow, no NUL byte,
 * valid UTF-8), else -EINVAL and the reason in err ("<param>: value
 * contains a NUL byte (%00)", "parameter '<a%00b>': name contains a NUL
 * byte (%00)", "<param>: value is not valid UTF-8", "parameter '<a%FFb>':
 * name is not valid UTF-8", "more than 32 query parameters"): a 400
 * INVALID_ARGUMENT. */
int sl_api_params_check(const struct sl_api_params *ps, char *err, size_t errlen);

struct MHD_Connection;

/* Collects the query parameters of c into *ps (MHD_GET_ARGUMENT_KIND, with
 * their sizes, through sl_api_params_add) and checks them
 * (sl_api_params_check). Returns 0, or -EINVAL with the reason in err.
 * Every route, task routes included, reads its parameters through this. */
int sl_api_collect_params(struct MHD_Connection *c, struct sl_api_params *ps, char *err,
			  size_t errlen);

/* Builds the store filter for GET /api/v1/events from the query parameters
 * type (one of types[0..ntypes), the kinds of every module), container,
 * pod, since, until, limit, after_id, order (see docs/API.md). since/until take RFC 3339, a duration meaning now_ns minus
 * it, or integer ns since the epoch. String fields of *f point into the
 * params' values (valid as long as they are). Returns 0, or -EINVAL with
 * "<param>: <reason>" in err for an unknown, repeated, empty or malformed
 * parameter. */
int sl_api_parse_event_params(const struct sl_api_param *p, size_t n, int64_t now_ns,
			      const char *const *types, size_t ntypes, struct sl_event_filter *f, char *err,
			      size_t errlen);

/* For routes that take no parameters: 0 when n == 0, else -EINVAL and
 * "unknown parameter '<key>'" in err. */
int sl_api_no_params(const struct sl_api_param *p, size_t n, char *err, size_t errlen);

/* For routes whose parameters are plain strings (the task routes): every
 * key must be one of names[0..nnames), given at most once, with a
 * non-empty value. vals[i] gets the value of names[i], NULL when absent
 * (vals may be NULL when nnames is 0). Returns 0, or -EINVAL with
 * "unknown parameter '<key>'", "<key>: given more than once" or "<key>:
 * empty value" in err. */
int sl_api_params_only(const struct sl_api_param *p, size_t n, const char *const *names,
		       size_t nnames, const char **vals, char *err, size_t errlen);

/* ---- bodies (api_events.c; pure) ---- */

/* {"error":{"code":code,"message":msg}} as a malloc'd NUL-terminated string
 * (*len = strlen). code: INVALID_ARGUMENT | NOT_FOUND | METHOD_NOT_ALLOWED |
 * PERMISSION_DENIED | INTERNAL. A msg that is not valid UTF-8 (a message
 * quoting a raw path) has each byte >= 0x80 written as \xNN. NULL only
 * when out of memory. */
char *sl_api_error_body(const char *code, const char *msg, size_t *len);

/* {"<key>":[items...]} from a JSON array, compact, at most max bytes: items
 * that do not fit are left off and "truncated":true is added. When cursor is
 * non-NULL the body also has "next_after_id": the largest integer "id" among
 * the items included, or *cursor when none has one (so a follower keeps its
 * place); *cursor is updated to that value. *count gets the number of items
 * included (may be NULL). Returns a malloc'd string, NULL when out of
 * memory. */
char *sl_api_list_body(const char *key, json_t *items, size_t max, int64_t *cursor, size_t *count,
		       size_t *len);

/* Cuts text of length len to at most max bytes at a line boundary and
 * appends "# ...[truncated]\n" (a Prometheus comment). buf must have room
 * for max bytes; max must be >= 64. Returns the new length (len unchanged
 * when it already fits). */
size_t sl_api_truncate_text(char *buf, size_t len, size_t max);

#endif
