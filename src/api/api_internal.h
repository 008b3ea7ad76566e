/* Internals shared by the API's source files (api.c: listeners, routing,
 * replies; api_metrics.c: /metrics). Not for use outside src/api. */
#ifndef SANDLENS_API_API_INTERNAL_H
#define SANDLENS_API_API_INTERNAL_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <pthread.h>

#include "api/api.h"
#include "api/api_auth.h"

struct sl_api;
struct conn_state;

/* Heavy reads of one listener at once (api_heavy.c). */
struct sl_api_heavy {
	pthread_mutex_t mu;
	unsigned max;                   /* renders at once: api.threads - 1, at least 1 */
	unsigned running;               /* slots held */
	unsigned waiting;               /* requests suspended in the queue */
	struct conn_state *head, *tail; /* FIFO of waiting requests (conn_state.heavy_next) */
	int stopping;                   /* sl_api_heavy_release_all ran: no slot is given any more */
	int inited;
};

/* One listener's context (the MHD_OPTION_NOTIFY_CONNECTION closure). */
struct sl_api_listener {
	struct sl_api *api;
	int is_unix;
	struct conn_state *conns; /* open connections (api->conn_mu) */
	unsigned nconns;
	struct sl_api_heavy heavy; /* heavy reads at once (api_heavy.c) */
};

struct sl_api {
	struct sl_agent *a;
	struct MHD_Daemon *tcp;
	struct MHD_Daemon *unx;
	struct sl_api_listener lis[2]; /* [0] TCP, [1] unix socket */
	char token[SL_API_TOKEN_MAX + 1]; /* api.token_file's token, "" = none */
	size_t toklen;
	unsigned header_timeout_s;   /* cfg.api.header_timeout (0 there: 10) */
	unsigned max_client;         /* cfg.api.max_client_connections (0 there: 16) */
	/* connection guard (api_conn.c) */
	pthread_mutex_t conn_mu;
	pthread_cond_t conn_cv;
	pthread_t sweeper;
	int sweeper_started, sweeper_stop;

	int tcp_port;
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t sock_dev;
	ino_t sock_ino;
	size_t max_body;
	atomic_uint metrics_inflight; /* /metrics responses not yet released */
	int watch_started;            /* sl_api_watch_start succeeded (api_watch.c) */
};

struct reply {
	unsigned status;
	char *body; /* malloc'd */
	size_t len;
	const char *ctype;
	const char *arg; /* prefix routes: the URL after the prefix */
	int accept_gzip; /* request: its Accept-Encoding takes gzip */
	/* instead of body: a response made of up to 3 pieces that are not
	 * copied; iov_free(iov_cls) runs when microhttpd is done with them */
	struct MHD_IoVec iov[3];
	unsigned niov;
	MHD_ContentReaderFreeCallback iov_free;
	void *iov_cls;
	const char *encoding; /* Content-Encoding of the pieces, or NULL */
	int redact; /* the caller is not an admin: withhold secrets (sl_api_withhold_secrets) */
	struct sl_api *api;
	const void *static_body; /* instead of body: bytes that outlive the response (the UI's files) */
	const char *location;    /* a Location header (redirects), or NULL */
	int ui;                  /* a web UI answer: SL_UI_CSP and the framing headers (api_ui.h) */
	int cap_syslog;          /* the caller has CAP_SYSLOG (sl_api_conn_cap_syslog): kernel addresses */
};

/* A request body being read (*con_cls of the POST routes: the task
 * create route and /mcp); freed by sl_api_tasks_completed. */
struct sl_api_upload {
	char *buf;
	size_t len;
	int too_big;
};

/* Process-wide API counters (sl_api_write_metrics, api_metrics.c). */
struct sl_api_counters {
	atomic_ulong cut_header_timeout; /* connections closed: headers not complete in time */
	atomic_ulong cut_client_limit;   /* connections closed: over api.max_client_connections */
	atomic_ulong denied;             /* 403 answers */
	atomic_ulong argv_withheld;      /* events sent without argv */
	atomic_ulong watch_refused;      /* event streams answered 429 (api_watch.c) */
	atomic_ulong watch_slow;         /* event streams closed: slow reader */
	atomic_ulong watch_events;       /* events sent on event streams */
	atomic_ulong heavy_waited;       /* heavy reads that waited for a slot (api_heavy.c) */
};
extern struct sl_api_counters sl_api_counters;

/* Per connection (the MHD socket context, made by sl_api_conn_open). */
struct conn_state {
	struct conn_state *prev, *next; /* in lis->conns */
	struct sl_api_listener *lis;
	int fd;
	int nul; /* a %00 of the request being read decoded to NUL (api.c) */
	struct sl_api_caller peer; /* unix socket: peer credentials; TCP: unix_peer 0 */
	uid_t budget_uid;   /* peer uid for the per-client budget, (uid_t)-1 unknown */
	unsigned char addr[16]; /* TCP peer address when the uid is unknown */
	int exempt;         /* uid 0: no per-client budget */
	int in_request;     /* headers complete, request being served (no deadline) */
	int cut;            /* we shut the socket down */
	int64_t wait_since_ns; /* CLOCK_MONOTONIC: connect or the last request's end */
	struct sl_api_caller caller; /* the current request's caller (peer + token) */
	/* the current request's target (uri_seen, api.c): its request line arrived;
	 * refused for its size (414); its length and parameter count */
	int line_seen, uri_refused;
	size_t uri_bytes, uri_params;
	/* heavy reads (api_heavy.c; lis->heavy.mu): 0, SL_API_HEAVY_WAITING
	 * (suspended in the queue) or SL_API_HEAVY_GRANTED (holds a slot) */
	int heavy;
	struct conn_state *heavy_next;
	struct MHD_Connection *heavy_conn;
};

/* ---- api_heavy.c: heavy reads cannot take every handler thread ----
 *
 * A heavy read (a store query rendered into a large body: the events list
 * with limit=10000 takes ~0.1 s of CPU and 1.5 MB) holds its microhttpd
 * thread while it renders; with every thread of a listener's pool
 * rendering, a cheap request (/healthz) waits behind them (break-it: 15
 * parallel readers kept /healthz over TCP waiting up to 5.9 s). So at most
 * lis->heavy.max of them render at once per listener (api.threads - 1, at
 * least 1): one thread stays free for the rest. A heavy request beyond that
 * is suspended (MHD_suspend_connection: no thread held) in a FIFO and
 * resumed, holding the slot, when one is given back; nothing is refused. */
#define SL_API_HEAVY_WAITING 1
#define SL_API_HEAVY_GRANTED 2
/* Sets up lis's bound (max renders at once, 0 taken as 1). */
void sl_api_heavy_init(struct sl_api_listener *lis, unsigned max);
void sl_api_heavy_destroy(struct sl_api_listener *lis);
/* 1 when route path (a routes[] entry of api.c) is a heavy read: the store
 * queries /api/v1/events, /api/v1/containers, /api/v1/flight...,
 * /api/v1/events/{id}/flight and the continuous profiles. */
int sl_api_heavy_route(const char *path);
/* From on_request, before a heavy route's handler: 1 when the request holds
 * a slot (given now, or handed over while it waited); 0 when it was queued
 * and c suspended (return MHD_YES: microhttpd calls on_request again once
 * it is resumed); -1 when the listener is stopping (answer 503). */
int sl_api_heavy_enter(struct conn_state *cs, struct MHD_Connection *c);
/* The request's slot back (the handler rendered, or the request ended:
 * NOTIFY_COMPLETED, the connection closed): handed to the first waiter,
 * which is resumed; a waiting request leaves the queue. No-op otherwise. */
void sl_api_heavy_leave(struct conn_state *cs);
/* Before MHD_stop_daemon: no slot is given any more, every waiter is
 * resumed (its on_request answers 503). */
void sl_api_heavy_release_all(struct sl_api_listener *lis);

/* A request target over either bound is a 414 before microhttpd stores its
 * query arguments (uri_seen in api.c; docs/API.md). */
#define SL_API_URI_MAX_PARAMS 256u
#define SL_API_URI_MAX_BYTES 8192u

/* MHD_OPTION_NOTIFY_CONNECTION callback (cls: the listener): STARTED makes
 * the socket context (peer credentials, per-client budget: a connection
 * over it is shut down at once), CLOSED frees it. */
void sl_api_conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			enum MHD_ConnectionNotificationCode toe);
/* The request's headers are complete (on_request): no deadline until it ends. */
void sl_api_conn_request_begins(struct conn_state *cs);
/* The request ended (NOTIFY_COMPLETED): the next one's header deadline starts. */
void sl_api_conn_request_ends(struct conn_state *cs);
/* Starts / stops the sweeper thread that shuts down connections whose
 * request headers are not complete api.header_timeout after the connection
 * began or its previous request ended. 0 or -errno. */
int sl_api_conn_guard_start(struct sl_api *api);
void sl_api_conn_guard_stop(struct sl_api *api);
/* The socket context of c (NULL when out of memory at connect). */
struct conn_state *sl_api_conn_state(struct MHD_Connection *c);

/* sl_api_caller_cap_syslog of the caller of the request being served on c
 * (0 when unknown): what the task result route passes to
 * sl_kaddrs_visible(NULL, ...) (src/profile/profile.h). */
int sl_api_conn_cap_syslog(struct MHD_Connection *c);

/* Pure: 1 when a connection over a listener that already has `same` live
 * connections of this client may stay (same < max, or exempt). */
int sl_api_client_budget_ok(unsigned same, unsigned max, int exempt);

/* I/O: the uid owning the peer socket of a loopback TCP connection fd
 * (NETLINK_SOCK_DIAG exact lookup of the peer's 4-tuple). 0, or -errno
 * (not loopback, not found). */
int sl_api_tcp_peer_uid(int fd, uid_t *uid);

/* Make r an error answer: status, JSON body {"error":{code, message}}. */
void sl_api_reply_error(struct reply *r, unsigned status, const char *code, const char *msg);

/* GET /metrics (api_metrics.c): the agent's own families rendered now plus
 * the statistics snapshot's text by reference, identity or gzip. */
void sl_api_h_metrics(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r);

/* GET /api/v1/sandboxes and /api/v1/sandboxes/{id} (api_sandboxes.c):
 * sandbox identity scanned at the request (src/cgroup/sandbox.h). 400 for
 * a malformed id, 404 NOT_FOUND when no such sandbox runs here. */
void sl_api_h_sandboxes(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r);
void sl_api_h_sandbox(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r);
/* /metrics: sandlens_sandbox_vcpu_runqueue_wait_seconds_total and
 * sandlens_sandbox_vcpu_timeslices_total {sandbox_id, vcpu} of every vCPU
 * with known schedstat figures (api_sandboxes.c; one scan per second at
 * most: a scrape within 1 s of the last scan is answered from its text). */
struct sl_prom;
void sl_api_write_sandbox_metrics(struct sl_api *api, struct sl_prom *p);

/* 1 when the request's Accept-Encoding lines, read as one list, take gzip
 * (common/gzpart.h sl_gz_accepted). */
int sl_api_accepts_gzip(struct MHD_Connection *c);

/* ---- in process (api_local.c, api_mcp.c) ---- */

/* One API request made in process, as caller: method ("GET" or "POST"),
 * target (path and query, percent-encoded as on the wire), body (NUL-
 * terminated JSON or NULL). The same routing, parameter checks, access
 * rules (403 for a non-admin on an admin route; events without argv for a
 * reader) and bodies as over HTTP, for the JSON routes: /healthz, the
 * /api/v1 routes, module views and the task routes (not /metrics nor the
 * event stream: 404). *status gets the HTTP status, *out the body (malloc'd,
 * NUL-terminated). Returns 0, or -ENOMEM. */
int sl_api_local(struct sl_api *api, const struct sl_api_caller *caller, const char *method, const char *target,
		 const char *body, unsigned *status, char **out);

/* api.c: the GET routes and module views for sl_api_local: path (no
 * query), its checked parameters p[0..n), redact for a non-admin on a
 * REDACTED route; fills r (body, status). */
void sl_api_route_local(struct sl_api *api, const char *path, const struct sl_api_param *p, size_t n, int redact,
			struct reply *r);

/* api_tasks.c: the task routes for sl_api_local (the caller is an admin;
 * cap_syslog as sl_api_conn_cap_syslog): GET /api/v1/capabilities,
 * /api/v1/tasks, /api/v1/tasks/{id}, /api/v1/tasks/{id}/result?format=F;
 * POST /api/v1/tasks (body; follow is refused). Fills r. */
void sl_api_tasks_local(struct sl_agent *a, const char *method, const char *path, const struct sl_api_param *p,
			size_t n, const char *body, int cap_syslog, struct reply *r);

/* The MCP route (api_mcp.c, docs/MCP.md): POST /mcp, Streamable HTTP. */
#define SL_API_MCP_PATH "/mcp"
enum MHD_Result sl_api_mcp_request(struct sl_api *api, struct MHD_Connection *c, const struct sl_api_caller *caller,
				   const char *method, const char *upload, size_t *upload_size, void **con_cls);

#endif
