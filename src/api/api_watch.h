/* GET /api/v1/events/watch: the live event stream (docs/API.md
 * "GET /api/v1/events/watch"). Server-Sent Events whose data are
 * CloudEvents 1.0 (api_sse.h), filters as /api/v1/events, resume after
 * the row id of Last-Event-ID or after_id, heartbeats, a bounded number of
 * streams and a bounded backlog per stream.
 *
 * A stream is a chunked response whose content reader copies out what the
 * watch thread queued for it and suspends the connection when nothing is
 * queued; the watch thread (one per API, every SL_API_WATCH_TICK_MS) reads
 * the store after each stream's cursor on its own read-only connection,
 * queues at most SL_API_WATCH_BACKLOG bytes per stream, adds the
 * heartbeats and resumes the connection. A stream whose queued bytes are
 * not taken within SL_API_WATCH_SLOW_MS is closed (a slow reader: counted);
 * so a stream holds at most its backlog in memory, never more. */
#ifndef SANDLENS_API_WATCH_H
#define SANDLENS_API_WATCH_H

#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api.h"
#include "store/store.h"

struct sl_api;

#define SL_API_WATCH_PATH "/api/v1/events/watch"
/* Streams open at once (all listeners); one more is a 429. */
#define SL_API_WATCH_MAX_CLIENTS 8u
/* Streams one non-admin client (peer uid when known: unix socket peer
 * credentials, a loopback TCP socket's owner; else its address) may hold
 * at once, and slots only admins (root on the socket, api.admin_group,
 * the token) may take: non-admins together hold at most MAX - RESERVED,
 * so no local user can lock the others, or an admin, out of the stream. */
#define SL_API_WATCH_PER_CLIENT 2u
#define SL_API_WATCH_ADMIN_RESERVED 2u
/* Bytes queued for one stream at most (events are queued whole: a stream
 * never holds more than this plus one event). */
#define SL_API_WATCH_BACKLOG (256u << 10)
/* Queued bytes not taken by the client within this are a slow reader. */
#define SL_API_WATCH_SLOW_MS 10000u
/* Store reads per stream (rows). */
#define SL_API_WATCH_PAGE 500u
/* Heartbeat default and range (seconds; parameter heartbeat). */
#define SL_API_WATCH_HEARTBEAT_S 15u
#define SL_API_WATCH_HEARTBEAT_MAX_S 300u
/* How often the watch thread looks at the store. */
#define SL_API_WATCH_TICK_MS 200u
/* Kernel send buffer of a stream's socket (bytes), so a reader that stops
 * reading is seen soon and holds little kernel memory. */
#define SL_API_WATCH_SNDBUF (64 << 10)

/* What a watch request asks for (sl_api_watch_parse). */
struct sl_api_watch_req {
	struct sl_event_filter f; /* type, container, pod, since, until; after_id */
	int after_given;          /* after_id was given */
	unsigned heartbeat_s;
	uint64_t store_epoch;     /* store_epoch=<16 hex> given (0: not): the epoch of the store the
				     client's Last-Event-ID / after_id came from */
};

/* Pure: the parameters of GET /api/v1/events/watch: those of
 * /api/v1/events (sl_api_parse_event_params) except limit and order, plus
 * heartbeat (seconds, 1..300, default 15) and store_epoch (1 to 16 hex
 * digits, not 0: the /healthz store.epoch the client's cursor belongs to).
 * 0, or -EINVAL with the message in err. */
int sl_api_watch_parse(const struct sl_api_param *p, size_t n, int64_t now_ns, const char *const *types,
		       size_t ntypes, struct sl_api_watch_req *w, char *err, size_t errlen);

/* Pure: where a stream starts: after the Last-Event-ID header's id when
 * there is one (last_id_hdr not NULL, ok), else after after_id when given,
 * else 0 (everything) when since is given, else after newest (the newest
 * row id now: only new events). */
int64_t sl_api_watch_start_cursor(const struct sl_api_watch_req *w, int has_last_id, int64_t last_id,
				  int64_t newest);

/* Pure: the cursor to use given the store's epoch now: a cursor from
 * another store (w->store_epoch given and != epoch) means nothing here (ids
 * started again): 0, every event of this store, and *recreated = 1. Else
 * cursor unchanged, *recreated = 0. */
int64_t sl_api_watch_epoch_cursor(const struct sl_api_watch_req *w, uint64_t epoch, int64_t cursor,
				  int *recreated);

/* Start / stop the watch thread (API start and stop; one thread for every
 * API of the process: the last stop joins it). 0 or -errno. */
int sl_api_watch_start(struct sl_api *api);
void sl_api_watch_stop(struct sl_api *api);
/* End every stream of api (its reader returns end of stream: MHD must not
 * be stopped with suspended connections); before its MHD_stop_daemon. */
void sl_api_watch_release_all(struct sl_api *api);

/* The route (GET/HEAD): 400 bad parameter or Last-Event-ID, 405 other
 * methods, 429 RESOURCE_EXHAUSTED past SL_API_WATCH_MAX_CLIENTS (a
 * non-admin: past SL_API_WATCH_PER_CLIENT of its own, or when only the
 * admins' reserved slots are left), 500 store
 * not open; else 200 text/event-stream. redact: the caller is a reader
 * (admin-only fields withheld, as /api/v1/events). */
enum MHD_Result sl_api_watch_request(struct sl_api *api, struct MHD_Connection *c, const char *method,
				     int redact);

/* Streams open now. */
unsigned sl_api_watch_streams(void);

#endif
