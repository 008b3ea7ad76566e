/* GET /api/v1/events/watch (api_watch.h). */
#include "api/api_watch.h"
#include "api/api_internal.h"
#include "api/api_sse.h"
#include "agent/read.h"
#include "common/log.h"
#include "common/thread_cpu.h"
#include "common/timefmt.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MOD "api"

int sl_api_watch_parse(const struct sl_api_param *p, size_t n, int64_t now_ns, const char *const *types,
		       size_t ntypes, struct sl_api_watch_req *w, char *err, size_t errlen)
{
	struct sl_api_param rest[SL_API_MAX_PARAMS];
	size_t nr = 0;
	int hb_seen = 0;
	memset(w, 0, sizeof(*w));
	w->heartbeat_s = SL_API_WATCH_HEARTBEAT_S;
	for (size_t i = 0; i < n && i < SL_API_MAX_PARAMS; i++) {
		const char *k = p[i].key, *v = p[i].value;
		if (!strcmp(k, "limit") || !strcmp(k, "order")) {
			snprintf(err, errlen, "%s: not a parameter of the stream (it sends every matching event, in id order)", k);
			return -EINVAL;
		}
		if (!strcmp(k, "store_epoch")) {
			uint64_t e = 0;
			size_t len = v ? strlen(v) : 0;
			for (size_t j = 0; j < len && len <= 16; j++) {
				char ch = v[j];
				int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
								    : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
				if (d < 0) {
					len = 0;
					break;
				}
				e = e << 4 | (uint64_t)d;
			}
			if (w->store_epoch || !len || len > 16 || !e) {
				snprintf(err, errlen, "store_epoch: '%.40s' is not a store epoch (1 to 16 hex digits, "
					 "not 0, once; /healthz store.epoch)", v ? v : "");
				return -EINVAL;
			}
			w->store_epoch = e;
			continue;
		}
		if (strcmp(k, "heartbeat")) {
			if (!strcmp(k, "after_id"))
				w->after_given = 1;
			rest[nr++] = p[i];
			continue;
		}
		if (hb_seen++) {
			snprintf(err, errlen, "heartbeat: given more than once");
			return -EINVAL;
		}
		unsigned long x = 0;
		const char *c = v ? v : "";
		for (; *c >= '0' && *c <= '9' && x <= SL_API_WATCH_HEARTBEAT_MAX_S; c++)
			x = x * 10 + (unsigned long)(*c - '0');
		if (!v || !*v || *c || x < 1 || x > SL_API_WATCH_HEARTBEAT_MAX_S) {
			snprintf(err, errlen, "heartbeat: '%.40s' is not an integer in 1..%u (seconds)", v ? v : "",
				 SL_API_WATCH_HEARTBEAT_MAX_S);
			return -EINVAL;
		}
		w->heartbeat_s = (unsigned)x;
	}
	int rc = sl_api_parse_event_params(rest, nr, now_ns, types, ntypes, &w->f, err, errlen);
	w->f.ascending = 1;
	w->f.limit = SL_API_WATCH_PAGE;
	return rc;
}

int64_t sl_api_watch_start_cursor(const struct sl_api_watch_req *w, int has_last_id, int64_t last_id,
				  int64_t newest)
{
	if (has_last_id)
		return last_id;
	if (w->after_given)
		return w->f.after_id;
	if (w->f.since_ns)
		return 0;
	return newest;
}

int64_t sl_api_watch_epoch_cursor(const struct sl_api_watch_req *w, uint64_t epoch, int64_t cursor,
				  int *recreated)
{
	*recreated = w->store_epoch && w->store_epoch != epoch;
	return *recreated ? 0 : cursor;
}

/* ---- streams ---- */

struct watch {
	struct watch *next;
	struct MHD_Connection *conn;
	struct sl_store *store;
	struct sl_agent *a;
	struct sl_api *api;       /* whose stream (sl_api_watch_release_all) */
	struct sl_event_filter f; /* its strings point into the fields below */
	char type[64], cid[80], pod[40];
	int64_t cursor;           /* last row id queued */
	uint64_t epoch;           /* of the store when the stream began */
	int redact;
	unsigned heartbeat_s;
	char *buf;                /* queued bytes [off, len) */
	size_t len, off;
	int64_t last_take_ns;     /* the client last took bytes, or the queue filled */
	int64_t last_queue_ns;    /* something (event, heartbeat) was last queued */
	int suspended, closed, slow;
	int fd;                   /* its socket (-1 unknown): a client gone while suspended */
	int busy;                 /* the watch thread reads the store for it */
	int freed;                /* MHD freed the response while busy */
	int admin;                /* opened by an admin (no per-client bound) */
	uid_t uid;                /* client: peer uid, (uid_t)-1 unknown ... */
	unsigned char addr[16];   /* ... then its address */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct watch *watches;
static unsigned nwatches;
/* every reserved stream (linked or about to be), for the per-client bound */
static struct watch *slots[SL_API_WATCH_MAX_CLIENTS];
static pthread_t thr;
static int thr_users, thr_stop; /* APIs running (tests start more than one) */
static char source[300];

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void wake(struct watch *w)
{
	if (w->suspended) {
		w->suspended = 0;
		MHD_resume_connection(w->conn);
	}
}

/* Append to w's queue (mu held). -1 when out of memory. */
static int queue(struct watch *w, const char *s, size_t n)
{
	if (w->off == w->len) {
		w->off = w->len = 0;
	}
	char *nb = realloc(w->buf, w->len + n + 1);
	if (!nb)
		return -1;
	w->buf = nb;
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	return 0;
}

static ssize_t watch_read(void *cls, uint64_t pos, char *out, size_t max)
{
	(void)pos;
	struct watch *w = cls;
	ssize_t n;
	pthread_mutex_lock(&mu);
	if (w->slow) {
		n = MHD_CONTENT_READER_END_WITH_ERROR; /* close: the client did not keep up */
	} else if (w->off < w->len) {
		size_t k = w->len - w->off < max ? w->len - w->off : max;
		memcpy(out, w->buf + w->off, k);
		w->off += k;
		w->last_take_ns = mono_ns();
		if (w->off == w->len) {
			free(w->buf);
			w->buf = NULL;
			w->off = w->len = 0;
		}
		n = (ssize_t)k;
	} else if (w->closed) {
		n = MHD_CONTENT_READER_END_OF_STREAM;
	} else {
		w->suspended = 1;
		MHD_suspend_connection(w->conn);
		n = 0;
	}
	pthread_mutex_unlock(&mu);
	return n;
}

static void slot_release(struct watch *w)
{
	for (unsigned i = 0; i < SL_API_WATCH_MAX_CLIENTS; i++)
		if (slots[i] == w)
			slots[i] = NULL;
}

static int same_client(const struct watch *a, const struct watch *b)
{
	if (a->uid != (uid_t)-1 || b->uid != (uid_t)-1)
		return a->uid == b->uid;
	return !memcmp(a->addr, b->addr, sizeof(a->addr));
}

/* Reserve a slot for w (mu held): 0, or the 429 message in err. */
static int slot_reserve(struct watch *w, char *err, size_t errlen)
{
	unsigned users = 0, mine = 0;
	int free_at = -1;
	for (unsigned i = 0; i < SL_API_WATCH_MAX_CLIENTS; i++) {
		const struct watch *x = slots[i];
		if (!x) {
			if (free_at < 0)
				free_at = (int)i;
			continue;
		}
		if (!x->admin) {
			users++;
			mine += same_client(w, x);
		}
	}
	if (free_at < 0 || nwatches >= SL_API_WATCH_MAX_CLIENTS) {
		snprintf(err, errlen, "%u event streams are open (the limit): try again later",
			 SL_API_WATCH_MAX_CLIENTS);
		return -1;
	}
	if (!w->admin && mine >= SL_API_WATCH_PER_CLIENT) {
		snprintf(err, errlen, "this client has %u event streams open (the limit per client): close one",
			 SL_API_WATCH_PER_CLIENT);
		return -1;
	}
	if (!w->admin && users >= SL_API_WATCH_MAX_CLIENTS - SL_API_WATCH_ADMIN_RESERVED) {
		snprintf(err, errlen, "%u event streams are open, the rest are kept for admins: try again later",
			 users);
		return -1;
	}
	slots[free_at] = w;
	return 0;
}

static void watch_free_locked(struct watch *w)
{
	free(w->buf);
	free(w);
}

static void watch_free(void *cls)
{
	struct watch *w = cls;
	pthread_mutex_lock(&mu);
	for (struct watch **pp = &watches; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			nwatches--;
			slot_release(w);
			break;
		}
	if (w->busy)
		w->freed = 1; /* the watch thread frees it */
	else
		watch_free_locked(w);
	pthread_mutex_unlock(&mu);
}

/* Read the store after w's cursor and queue the frames (watch thread; mu
 * not held; w->busy keeps w alive). */
static void fill(struct watch *w, struct sl_event_filter f, int redact)
{
	char err[256] = "";
	json_t *evs = sl_store_query_events(w->store, &f, err, sizeof(err));
	if (!evs) {
		static struct sl_log_limit lim = SL_LOG_LIMIT_INIT(10);
		sl_log_limited(&lim, SL_LOG_WARN, MOD, "event stream: store query failed: %s", err);
		return;
	}
	if (redact && json_array_size(evs))
		atomic_fetch_add(&sl_api_counters.argv_withheld, sl_read_withhold(w->a, evs));
	size_t i;
	json_t *ev;
	pthread_mutex_lock(&mu);
	json_array_foreach(evs, i, ev)
	{
		if (w->len - w->off >= SL_API_WATCH_BACKLOG)
			break; /* the rest on a later tick, after the client took these */
		size_t fl = 0;
		char *fr = sl_sse_frame(ev, source, &fl);
		int64_t id = json_integer_value(json_object_get(ev, "id"));
		if (!fr || queue(w, fr, fl)) {
			free(fr);
			break;
		}
		free(fr);
		w->cursor = id;
		w->last_queue_ns = mono_ns();
		atomic_fetch_add(&sl_api_counters.watch_events, 1);
	}
	pthread_mutex_unlock(&mu);
	json_decref(evs);
}

static void tick(void)
{
	int64_t now = mono_ns();
	pthread_mutex_lock(&mu);
	for (struct watch *w = watches; w; w = w->next) {
		if (w->closed || w->busy)
			continue;
		/* microhttpd does not watch a suspended connection: a client that
		 * went away would hold its slot until the next write */
		struct pollfd pf = {.fd = w->fd, .events = POLLRDHUP};
		if (w->suspended && w->fd >= 0 && poll(&pf, 1, 0) == 1 &&
		    (pf.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
			w->closed = 1;
			wake(w);
			continue;
		}
		if (w->off < w->len) {
			/* queued bytes the client has not taken */
			if (now - w->last_take_ns > (int64_t)SL_API_WATCH_SLOW_MS * 1000000) {
				static struct sl_log_limit lim = SL_LOG_LIMIT_INIT(10);
				w->slow = w->closed = 1;
				atomic_fetch_add(&sl_api_counters.watch_slow, 1);
				sl_log_limited(&lim, SL_LOG_INFO, MOD,
					       "event stream: slow reader disconnected (%zu bytes not taken in %u ms)",
					       w->len - w->off, SL_API_WATCH_SLOW_MS);
				/* microhttpd waits for the socket to drain before it asks
				 * the reader again: shut it down so that it closes now */
				if (w->fd >= 0)
					shutdown(w->fd, SHUT_RDWR);
				wake(w);
			}
			continue;
		}
		if (sl_store_epoch(w->store) != w->epoch) {
			/* the store was recreated under the stream: its ids start
			 * again, the cursor means nothing. End the stream; the
			 * client reconnects with its store_epoch and starts at the
			 * new store's first event. */
			static const char note[] = ": the event store was recreated: stream ended, reconnect with store_epoch\n\n";
			queue(w, note, sizeof(note) - 1);
			w->closed = 1;
			wake(w);
			continue;
		}
		w->busy = 1;
		struct sl_event_filter f = w->f;
		f.after_id = w->cursor;
		int redact = w->redact;
		pthread_mutex_unlock(&mu);
		fill(w, f, redact);
		pthread_mutex_lock(&mu);
		w->busy = 0;
		if (w->freed) {
			/* unlinked by watch_free while we read: the list moved on */
			watch_free_locked(w);
			w = watches;
			if (!w)
				break;
			continue;
		}
		if (w->off == w->len &&
		    now - w->last_queue_ns >= (int64_t)w->heartbeat_s * 1000000000) {
			static const char hb[] = ": heartbeat\n\n";
			if (queue(w, hb, sizeof(hb) - 1) == 0)
				w->last_queue_ns = now;
		}
		if (w->off < w->len) {
			if (w->suspended)
				w->last_take_ns = now; /* the slow clock starts now */
			wake(w);
		}
	}
	pthread_mutex_unlock(&mu);
}

static void *watch_thread(void *arg)
{
	(void)arg;
	sl_thread_cpu_register(SL_TCPU_API); /* its CPU is the API's, not the pipeline's */
	pthread_mutex_lock(&mu);
	while (!thr_stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)SL_API_WATCH_TICK_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&cv, &mu, &ts);
		if (thr_stop)
			break;
		pthread_mutex_unlock(&mu);
		tick();
		pthread_mutex_lock(&mu);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

int sl_api_watch_start(struct sl_api *api)
{
	(void)api;
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	pthread_mutex_lock(&mu);
	sl_sse_source(host, source, sizeof(source));
	int rc = 0;
	if (thr_users == 0) {
		thr_stop = 0;
		rc = pthread_create(&thr, NULL, watch_thread, NULL);
	}
	if (rc == 0)
		thr_users++;
	pthread_mutex_unlock(&mu);
	return -rc;
}

void sl_api_watch_release_all(struct sl_api *api)
{
	pthread_mutex_lock(&mu);
	for (struct watch *w = watches; w; w = w->next)
		if (w->api == api) {
			w->closed = 1;
			wake(w);
		}
	pthread_mutex_unlock(&mu);
}

void sl_api_watch_stop(struct sl_api *api)
{
	(void)api;
	pthread_mutex_lock(&mu);
	if (thr_users == 0 || --thr_users > 0) {
		pthread_mutex_unlock(&mu);
		return;
	}
	thr_stop = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(thr, NULL);
}

unsigned sl_api_watch_streams(void)
{
	pthread_mutex_lock(&mu);
	unsigned n = nwatches;
	pthread_mutex_unlock(&mu);
	return n;
}

/* ---- the route ---- */

static enum MHD_Result send_err(struct MHD_Connection *c, unsigned status, const char *code, const char *msg)
{
	size_t len = 0;
	char *b = sl_api_error_body(code, msg, &len);
	if (!b)
		return MHD_NO;
	struct MHD_Response *r = MHD_create_response_from_buffer(len, b, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(b);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (status == 405)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* The newest row id now (0 for an empty store), -1 on error. */
static int64_t newest_id(struct sl_store *s)
{
	struct sl_event_filter f = {.limit = 1};
	char err[128];
	json_t *evs = sl_store_query_events(s, &f, err, sizeof(err));
	if (!evs)
		return -1;
	int64_t id = json_integer_value(json_object_get(json_array_get(evs, 0), "id"));
	json_decref(evs);
	return id;
}

static void copy_filter(struct watch *w, const struct sl_event_filter *f)
{
	w->f = *f;
	if (f->type) {
		snprintf(w->type, sizeof(w->type), "%s", f->type);
		w->f.type = w->type;
	}
	if (f->container_id) {
		snprintf(w->cid, sizeof(w->cid), "%s", f->container_id);
		w->f.container_id = w->cid;
	}
	if (f->pod_uid) {
		snprintf(w->pod, sizeof(w->pod), "%s", f->pod_uid);
		w->f.pod_uid = w->pod;
	}
}

enum MHD_Result sl_api_watch_request(struct sl_api *api, struct MHD_Connection *c, const char *method,
				     int redact)
{
	char err[256];
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		snprintf(err, sizeof(err), "%.32s not allowed on " SL_API_WATCH_PATH " (use GET)", method);
		return send_err(c, 405, "METHOD_NOT_ALLOWED", err);
	}
	struct sl_api_params ps;
	struct sl_api_watch_req req;
	const char *types[SL_MAX_KINDS];
	size_t nt = sl_read_kind_names(api->a, types, SL_MAX_KINDS);
	if (sl_api_collect_params(c, &ps, err, sizeof(err)) ||
	    sl_api_watch_parse(ps.p, ps.n, sl_time_now_ns(), types, nt < SL_MAX_KINDS ? nt : SL_MAX_KINDS, &req,
			       err, sizeof(err)))
		return send_err(c, 400, "INVALID_ARGUMENT", err);
	const char *lei = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
	int64_t last_id = 0;
	if (lei && sl_sse_parse_last_id(lei, &last_id))
		return send_err(c, 400, "INVALID_ARGUMENT", "Last-Event-ID: not an event id (an integer >= 0)");
	struct sl_store *store = sl_read_store(api->a);
	if (!store)
		return send_err(c, 500, "INTERNAL", "event store is not open");
	int64_t newest = lei || req.after_given || req.f.since_ns ? 0 : newest_id(store);
	if (newest < 0)
		return send_err(c, 500, "INTERNAL", "store query failed");

	struct watch *w = calloc(1, sizeof(*w));
	if (!w)
		return send_err(c, 500, "INTERNAL", "out of memory");
	/* who: admins are bounded by the total only, any other client by
	 * its own share (api_watch.h) */
	struct conn_state *who = sl_api_conn_state(c);
	w->admin = who ? sl_api_caller_is_admin(&who->caller) : !redact;
	w->uid = who ? who->budget_uid : (uid_t)-1;
	if (who)
		memcpy(w->addr, who->addr, sizeof(w->addr));
	pthread_mutex_lock(&mu);
	if (slot_reserve(w, err, sizeof(err))) {
		pthread_mutex_unlock(&mu);
		free(w);
		atomic_fetch_add(&sl_api_counters.watch_refused, 1);
		return send_err(c, 429, "RESOURCE_EXHAUSTED", err);
	}
	nwatches++; /* reserved; linked below */
	pthread_mutex_unlock(&mu);

	w->conn = c;
	w->api = api;
	w->store = store;
	w->a = api->a;
	w->redact = redact;
	w->heartbeat_s = req.heartbeat_s;
	copy_filter(w, &req.f);
	int recreated = 0;
	w->epoch = sl_store_epoch(store);
	w->cursor = sl_api_watch_epoch_cursor(&req, w->epoch,
					      sl_api_watch_start_cursor(&req, lei != NULL, last_id, newest),
					      &recreated);
	w->last_take_ns = w->last_queue_ns = mono_ns();
	/* the reconnection delay for EventSource clients, and a first comment
	 * so that a client sees the stream is up before the first event; it
	 * names the store's epoch (docs/API.md: a client that reconnects passes
	 * it back as store_epoch) and says when the client's cursor was from a
	 * store that is gone, or is past the newest event */
	char head[320];
	int64_t top = recreated || w->cursor <= 0 ? 0 : newest_id(store);
	int hl = snprintf(head, sizeof(head), "retry: 2000\n: sandlens event stream after id %lld store_epoch %016llx\n%s",
			  (long long)w->cursor, (unsigned long long)w->epoch,
			  recreated ? ": the store was recreated (store_epoch differs): from its first event\n" : "");
	if (top >= 0 && w->cursor > top)
		hl += snprintf(head + hl, sizeof(head) - (size_t)hl,
			       ": after id %lld is past the newest stored event (%lld): waiting for newer ones\n",
			       (long long)w->cursor, (long long)top);
	hl += snprintf(head + hl, sizeof(head) - (size_t)hl, "\n");
	queue(w, head, (size_t)hl);

	struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, watch_read, w, watch_free);
	if (!r) {
		pthread_mutex_lock(&mu);
		nwatches--;
		slot_release(w);
		pthread_mutex_unlock(&mu);
		watch_free_locked(w);
		return send_err(c, 500, "INTERNAL", "cannot create the stream");
	}
	/* a small kernel send buffer: a reader that stops reading is seen soon */
	struct conn_state *cs = sl_api_conn_state(c);
	w->fd = cs ? cs->fd : -1;
	if (cs && cs->fd >= 0) {
		int sb = SL_API_WATCH_SNDBUF;
		setsockopt(cs->fd, SOL_SOCKET, SO_SNDBUF, &sb, sizeof(sb));
	}
	pthread_mutex_lock(&mu);
	w->next = watches;
	watches = w;
	pthread_mutex_unlock(&mu);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream; charset=utf-8");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	enum MHD_Result ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return ret;
}
