/* The exporter thread (exporter.h): a logs request and a metrics request
 * at most in flight, each retried with backoff until it succeeds, fails for
 * good or runs out of export.otlp.max_retry_time. */
#include "export/exporter.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/prom.h"
#include "common/timefmt.h"
#include "export/cursor_file.h"
#include "export/otlp_encode.h"
#include "export/otlp_http.h"
#include "export/otlp_retry.h"
#include "export/prom_parse.h"
#include "store/store.h"

#define MOD "export"
/* How often the store is asked for new events when the last batch was not
 * full (a full one is followed at once). */
#define LOGS_POLL_NS 1000000000ull

enum reason { R_QUEUE_FULL, R_RETRY_EXHAUSTED, R_REJECTED, R_PARTIAL, R_RETENTION, R_ENCODE, R_SUPERSEDED,
	      R_SHUTDOWN, NREASON };
static const char *const reason_name[NREASON] = {"queue_full", "retry_exhausted", "rejected", "partial_success",
						 "store_retention", "encode_error", "superseded", "shutdown"};
enum sig { S_LOGS, S_METRICS, NSIG };
static const char *const sig_name[NSIG] = {"logs", "metrics"};
static const char *const sig_path[NSIG] = {"/v1/logs", "/v1/metrics"};

struct counters {
	_Atomic uint64_t sent, failed, retries, requests, dropped[NREASON];
	_Atomic uint64_t depth;
	_Atomic int retrying;
};

struct pending {
	uint8_t *body;
	size_t len, items;
	int64_t last_id; /* logs: the cursor once this request is done */
	uint64_t epoch;  /* logs: the store epoch its events came from */
	uint64_t first_ns, next_ns;
	unsigned attempt;
};

struct sl_exporter {
	struct sl_cfg_otlp cfg;
	struct sl_export_params p;
	char host[256], version[64];
	struct sl_otlp_http *http;
	pthread_t thr;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	int64_t cursor;
	uint64_t epoch;          /* of the store the cursor belongs to */
	char cursor_path[4200];  /* "" = not persisted; set at start, then read-only */
	int keep_cursor;         /* run thread: finished requests save the cursor */
	int resumed;             /* the start cursor came from the cursor file */
	struct pending pend[NSIG];
	struct counters c[NSIG];
	unsigned seed;
	/* for /healthz, under mu */
	char last_error[320];
	int64_t last_success_ns, last_error_ns;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void drop(struct sl_exporter *e, enum sig s, enum reason r, uint64_t n)
{
	if (n)
		atomic_fetch_add(&e->c[s].dropped[r], n);
}

static void note_error(struct sl_exporter *e, enum sig s, const char *what)
{
	pthread_mutex_lock(&e->mu);
	snprintf(e->last_error, sizeof(e->last_error), "%s: %s", sig_name[s], what);
	e->last_error_ns = sl_time_now_ns();
	pthread_mutex_unlock(&e->mu);
}

/* A logs request finished (accepted, or given up and counted): the cursor
 * after its events is kept, when it is of the store now. */
static void save_cursor(struct sl_exporter *e, const struct pending *pd)
{
	if (!e->keep_cursor || pd->epoch != e->epoch)
		return;
	int rc = sl_export_cursor_save(e->cursor_path, pd->epoch, pd->last_id);
	if (rc) {
		char m[300];
		snprintf(m, sizeof(m), "cannot keep the cursor in %.200s: %.60s", e->cursor_path, strerror(-rc));
		note_error(e, S_LOGS, m);
	}
}

static void pending_done(struct sl_exporter *e, enum sig s)
{
	struct pending *pd = &e->pend[s];
	if (s == S_LOGS && pd->body)
		save_cursor(e, pd);
	free(pd->body);
	memset(pd, 0, sizeof(*pd));
	atomic_store(&e->c[s].retrying, 0);
	if (s == S_METRICS)
		atomic_store(&e->c[s].depth, 0);
}

/* ---- building requests ---- */

/* The logs queue: the pending request's events (read, in memory) plus the
 * stored events after the cursor. More than queue_size: the oldest stored
 * ones are skipped (queue_full). Returns the max id, or -1. */
static int64_t logs_backlog(struct sl_exporter *e, uint64_t *depth_out)
{
	char err[256];
	int64_t max_id = 0;
	uint64_t held = e->pend[S_LOGS].body ? e->pend[S_LOGS].items : 0;
	if (sl_store_max_id(e->p.store, &max_id, err, sizeof(err))) {
		note_error(e, S_LOGS, err);
		return -1;
	}
	uint64_t ep = sl_store_epoch(e->p.store);
	if (ep != e->epoch || max_id < e->cursor) {
		/* the store was recreated: ids start again, and every event of
		 * the new one is unsent (a request of the old one in flight is
		 * finished but its cursor not kept) */
		e->epoch = ep;
		e->cursor = 0;
	}
	uint64_t depth = (uint64_t)(max_id - e->cursor) + held;
	if (depth > e->cfg.queue_size) {
		uint64_t skip = depth - e->cfg.queue_size;
		if (skip > (uint64_t)(max_id - e->cursor))
			skip = (uint64_t)(max_id - e->cursor);
		drop(e, S_LOGS, R_QUEUE_FULL, skip);
		e->cursor += (int64_t)skip;
		depth -= skip;
	}
	atomic_store(&e->c[S_LOGS].depth, depth);
	*depth_out = depth - held;
	return max_id;
}

static void build_logs(struct sl_exporter *e, uint64_t now, uint64_t *next_poll)
{
	char err[256];
	uint64_t depth = 0;
	struct sl_otlp_node node = {e->host, e->version};
	int64_t max_id = logs_backlog(e, &depth);
	if (max_id < 0 || !depth) {
		*next_poll = now + LOGS_POLL_NS;
		return;
	}
	struct sl_event_filter f = {.after_id = e->cursor, .limit = (uint32_t)e->cfg.batch_size, .ascending = 1};
	json_t *evs = sl_store_query_events(e->p.store, &f, err, sizeof(err));
	if (!evs) {
		note_error(e, S_LOGS, err);
		*next_poll = now + LOGS_POLL_NS;
		return;
	}
	size_t n = json_array_size(evs);
	if (!n) {
		/* every row up to max_id is gone (retention) */
		drop(e, S_LOGS, R_RETENTION, (uint64_t)(max_id - e->cursor));
		e->cursor = max_id;
		json_decref(evs);
		*next_poll = now + LOGS_POLL_NS;
		return;
	}
	int64_t first = json_integer_value(json_object_get(json_array_get(evs, 0), "id"));
	int64_t last = json_integer_value(json_object_get(json_array_get(evs, n - 1), "id"));
	if (first > e->cursor + 1)
		drop(e, S_LOGS, R_RETENTION, (uint64_t)(first - e->cursor - 1));
	struct pending *pd = &e->pend[S_LOGS];
	memset(pd, 0, sizeof(*pd));
	pd->items = n;
	pd->last_id = last;
	pd->epoch = e->epoch;
	e->cursor = last;
	pd->first_ns = pd->next_ns = now;
	if (sl_otlp_encode_logs(&node, evs, (uint64_t)sl_time_now_ns(), &pd->body, &pd->len)) {
		drop(e, S_LOGS, R_ENCODE, n);
		note_error(e, S_LOGS, "encoding failed");
		pending_done(e, S_LOGS);
	}
	json_decref(evs);
	*next_poll = n >= e->cfg.batch_size ? now : now + LOGS_POLL_NS;
}

static void build_metrics(struct sl_exporter *e, uint64_t now)
{
	struct pending *pd = &e->pend[S_METRICS];
	struct sl_otlp_node node = {e->host, e->version};
	if (pd->body) { /* the previous one is still retrying: the new points supersede it */
		drop(e, S_METRICS, R_SUPERSEDED, pd->items);
		pending_done(e, S_METRICS);
	}
	char *text = NULL;
	size_t len = 0, np = 0;
	struct sl_pm pm = {0};
	if (!e->p.render || e->p.render(e->p.render_arg, &text, &len)) {
		note_error(e, S_METRICS, "rendering the metrics failed");
		free(text);
		return;
	}
	int rc = sl_pm_parse(&pm, text, len);
	free(text);
	if (!rc)
		rc = sl_otlp_encode_metrics(&node, &pm, e->p.start_ns, (uint64_t)sl_time_now_ns(), &pd->body,
					    &pd->len, &np);
	sl_pm_free(&pm);
	if (rc) {
		note_error(e, S_METRICS, "encoding failed");
		pd->body = NULL;
		return;
	}
	pd->items = np;
	pd->first_ns = pd->next_ns = now;
	atomic_store(&e->c[S_METRICS].depth, np);
}

/* ---- sending ---- */
static void attempt(struct sl_exporter *e, enum sig s, uint64_t now)
{
	struct pending *pd = &e->pend[s];
	struct sl_otlp_reply r;
	char msg[256];
	atomic_fetch_add(&e->c[s].requests, 1);
	int rc = sl_otlp_http_post(e->http, sig_path[s], pd->body, pd->len, &r);
	if (!rc && r.status >= 200 && r.status < 300) {
		int64_t rej = 0;
		int prc = s == S_LOGS ? sl_otlp_logs_response(r.body, r.body_len, &rej, msg, sizeof(msg))
				      : sl_otlp_metrics_response(r.body, r.body_len, &rej, msg, sizeof(msg));
		if (prc)
			rej = 0; /* a 2xx whose body does not decode: accepted */
		if (rej < 0)
			rej = 0;
		if ((uint64_t)rej > pd->items)
			rej = (int64_t)pd->items;
		drop(e, s, R_PARTIAL, (uint64_t)rej);
		atomic_fetch_add(&e->c[s].sent, pd->items - (uint64_t)rej);
		if (rej || msg[0])
			note_error(e, s, msg[0] ? msg : "partial success");
		pthread_mutex_lock(&e->mu);
		e->last_success_ns = sl_time_now_ns();
		pthread_mutex_unlock(&e->mu);
		free(r.body);
		pending_done(e, s);
		return;
	}
	char what[300];
	if (rc)
		snprintf(what, sizeof(what), "%s", r.err);
	else
		snprintf(what, sizeof(what), "HTTP %ld", r.status);
	free(r.body);
	atomic_fetch_add(&e->c[s].failed, 1);
	note_error(e, s, what);
	if (!sl_otlp_retryable(rc ? 0 : r.status)) {
		drop(e, s, R_REJECTED, pd->items);
		pending_done(e, s);
		return;
	}
	pd->attempt++;
	uint64_t ra = rc ? 0 : sl_otlp_retry_after_ns(r.retry_after, sl_time_now_ns() / 1000000000ll);
	double rnd = (double)rand_r(&e->seed) / ((double)RAND_MAX + 1.0);
	uint64_t d = sl_otlp_backoff_ns(pd->attempt, e->cfg.retry_initial_ns, e->cfg.retry_max_interval_ns, rnd, ra);
	if (now + d - pd->first_ns > e->cfg.max_retry_time_ns) {
		drop(e, s, R_RETRY_EXHAUSTED, pd->items);
		pending_done(e, s);
		return;
	}
	atomic_fetch_add(&e->c[s].retries, 1);
	atomic_store(&e->c[s].retrying, 1);
	pd->next_ns = now + d;
}

static void *run(void *arg)
{
	struct sl_exporter *e = arg;
	uint64_t now = mono_ns();
	uint64_t next_poll = now, next_metrics = now + e->cfg.interval_ns;
	pthread_mutex_lock(&e->mu);
	while (!e->stop) {
		pthread_mutex_unlock(&e->mu);
		now = mono_ns();
		if (e->p.store && now >= next_poll) {
			if (e->pend[S_LOGS].body) { /* count what a full queue skips while retrying */
				uint64_t d;
				logs_backlog(e, &d);
				next_poll = now + LOGS_POLL_NS;
			} else {
				build_logs(e, now, &next_poll);
			}
		}
		if (now >= next_metrics) {
			build_metrics(e, now);
			next_metrics = now + e->cfg.interval_ns;
		}
		for (int s = 0; s < NSIG; s++)
			if (e->pend[s].body && mono_ns() >= e->pend[s].next_ns)
				attempt(e, (enum sig)s, mono_ns());
		now = mono_ns();
		uint64_t wake = next_metrics;
		if (e->p.store && next_poll < wake)
			wake = next_poll;
		for (int s = 0; s < NSIG; s++)
			if (e->pend[s].body && e->pend[s].next_ns < wake)
				wake = e->pend[s].next_ns;
		pthread_mutex_lock(&e->mu);
		if (wake > now && !e->stop) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			uint64_t t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + (wake - now);
			ts.tv_sec = (time_t)(t / 1000000000ull);
			ts.tv_nsec = (long)(t % 1000000000ull);
			pthread_cond_timedwait(&e->cv, &e->mu, &ts);
		}
	}
	pthread_mutex_unlock(&e->mu);
	/* a request unfinished at shutdown is not done: its cursor is not kept,
	 * so the next start sends its events again */
	e->keep_cursor = 0;
	for (int s = 0; s < NSIG; s++)
		if (e->pend[s].body) {
			drop(e, (enum sig)s, R_SHUTDOWN, e->pend[s].items);
			pending_done(e, (enum sig)s);
		}
	return NULL;
}

struct sl_exporter *sl_export_start(const struct sl_cfg_otlp *cfg, const struct sl_export_params *p, char *err,
				    size_t errlen)
{
	struct sl_exporter *e = calloc(1, sizeof(*e));
	pthread_condattr_t ca;
	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e->cfg = *cfg;
	e->p = *p;
	snprintf(e->host, sizeof(e->host), "%s", p->host_name ? p->host_name : "");
	snprintf(e->version, sizeof(e->version), "%s", p->version ? p->version : "");
	e->p.host_name = e->host;
	e->p.version = e->version;
	e->seed = (unsigned)mono_ns();
	const char *hdr[SL_CFG_HEADERS_MAX];
	for (unsigned i = 0; i < cfg->headers.n && i < SL_CFG_HEADERS_MAX; i++)
		hdr[i] = cfg->headers.v[i];
	e->http = sl_otlp_http_new(cfg->endpoint, hdr, cfg->headers.n, cfg->timeout_ns / 1000000, cfg->gzip);
	struct sl_otlp_tls tls = {cfg->ca_file, cfg->client_cert, cfg->client_key};
	if (e->http && sl_otlp_http_set_tls(e->http, &tls)) {
		sl_otlp_http_free(e->http);
		e->http = NULL;
	}
	if (!e->http) {
		snprintf(err, errlen, "export.otlp.endpoint: cannot set up the HTTP client");
		free(e);
		return NULL;
	}
	e->cursor = p->after_id;
	if (p->store && p->after_id < 0 && sl_store_max_id(p->store, &e->cursor, err, errlen)) {
		sl_otlp_http_free(e->http);
		free(e);
		return NULL;
	}
	e->epoch = sl_store_epoch(p->store);
	if (p->store && p->cursor_path && p->cursor_path[0]) {
		uint64_t sep = 0;
		int64_t sid = 0;
		char why[300];
		snprintf(e->cursor_path, sizeof(e->cursor_path), "%s", p->cursor_path);
		e->keep_cursor = 1;
		int rc = sl_export_cursor_load(e->cursor_path, &sep, &sid, why, sizeof(why));
		if (rc == 1 && sep == e->epoch && sid <= e->cursor) {
			e->cursor = sid; /* what was stored after the last accepted request is sent */
			e->resumed = 1;
		} else if (rc == 1 && sep != e->epoch) {
			e->cursor = 0; /* the store was recreated since: all of it is unsent */
			e->resumed = 1;
		} else if (rc < 0) {
			sl_warn(MOD, "OTLP cursor not resumed (from the newest event): %s", why);
		}
	}
	pthread_mutex_init(&e->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&e->thr, NULL, run, e)) {
		snprintf(err, errlen, "cannot start the exporter thread");
		sl_otlp_http_free(e->http);
		free(e);
		return NULL;
	}
	sl_info(MOD, "OTLP/HTTP export to %s (logs after event %lld%s, metrics every %llus)", cfg->endpoint,
		(long long)e->cursor, e->resumed ? ", resumed from the cursor file" : "",
		(unsigned long long)(cfg->interval_ns / 1000000000ull));
	return e;
}

void sl_export_stop(struct sl_exporter *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->mu);
	e->stop = 1;
	pthread_cond_signal(&e->cv);
	pthread_mutex_unlock(&e->mu);
	pthread_join(e->thr, NULL);
	sl_otlp_http_free(e->http);
	pthread_cond_destroy(&e->cv);
	pthread_mutex_destroy(&e->mu);
	free(e);
}

/* ---- reading ---- */
json_t *sl_export_health_json(struct sl_exporter *e)
{
	json_t *o = json_object();
	char t[40];
	if (!e) {
		json_object_set_new(o, "state", json_string("off"));
		return o;
	}
	pthread_mutex_lock(&e->mu);
	char last_error[sizeof(e->last_error)];
	memcpy(last_error, e->last_error, sizeof(last_error));
	int64_t ok_ns = e->last_success_ns, err_ns = e->last_error_ns;
	pthread_mutex_unlock(&e->mu);
	int retrying = atomic_load(&e->c[S_LOGS].retrying) || atomic_load(&e->c[S_METRICS].retrying);
	const char *state = retrying ? "retrying" : err_ns > ok_ns ? "failing" : "ok";
	json_object_set_new(o, "state", json_string(state));
	json_object_set_new(o, "endpoint", json_string(e->cfg.endpoint));
	if (last_error[0])
		json_object_set_new(o, "last_error", json_string(last_error));
	if (err_ns && sl_time_format(err_ns, t, sizeof(t)) > 0)
		json_object_set_new(o, "last_error_at", json_string(t));
	if (ok_ns && sl_time_format(ok_ns, t, sizeof(t)) > 0)
		json_object_set_new(o, "last_success", json_string(t));
	for (int s = 0; s < NSIG; s++) {
		const struct counters *c = &e->c[s];
		json_t *so = json_object(), *dr = json_object();
		uint64_t total = 0;
		for (int r = 0; r < NREASON; r++) {
			uint64_t v = atomic_load(&c->dropped[r]);
			total += v;
			if (v)
				json_object_set_new(dr, reason_name[r], json_integer((json_int_t)v));
		}
		json_object_set_new(so, "sent", json_integer((json_int_t)atomic_load(&c->sent)));
		json_object_set_new(so, "requests", json_integer((json_int_t)atomic_load(&c->requests)));
		json_object_set_new(so, "failed", json_integer((json_int_t)atomic_load(&c->failed)));
		json_object_set_new(so, "retries", json_integer((json_int_t)atomic_load(&c->retries)));
		json_object_set_new(so, "dropped", json_integer((json_int_t)total));
		json_object_set_new(so, "dropped_by_reason", dr);
		json_object_set_new(so, "queue_depth", json_integer((json_int_t)atomic_load(&c->depth)));
		json_object_set_new(o, sig_name[s], so);
	}
	json_object_set_new(json_object_get(o, "logs"), "queue_capacity", json_integer((json_int_t)e->cfg.queue_size));
	json_object_set_new(json_object_get(o, "logs"), "cursor_file",
			    e->cursor_path[0] ? json_string(e->cursor_path) : json_null());
	json_object_set_new(json_object_get(o, "logs"), "resumed", json_boolean(e->resumed));
	return o;
}

void sl_export_write_metrics(struct sl_exporter *e, struct sl_prom *p)
{
	if (!e)
		return;
	static const struct {
		const char *name, *help;
		size_t off;
	} fams[] = {
		{"sandlens_export_sent_total", "OTLP items accepted by the receiver (log records, data points), by signal.",
		 offsetof(struct counters, sent)},
		{"sandlens_export_requests_total", "OTLP/HTTP requests made (every attempt), by signal.",
		 offsetof(struct counters, requests)},
		{"sandlens_export_failed_total", "OTLP/HTTP attempts that failed (no answer, or a non-2xx status), by signal.",
		 offsetof(struct counters, failed)},
		{"sandlens_export_retries_total", "OTLP/HTTP retries scheduled (backoff or Retry-After), by signal.",
		 offsetof(struct counters, retries)},
	};
	for (size_t k = 0; k < sizeof(fams) / sizeof(fams[0]); k++) {
		sl_prom_family(p, fams[k].name, SL_PROM_COUNTER, fams[k].help);
		for (int s = 0; s < NSIG; s++) {
			const struct sl_prom_label l[] = {{"signal", sig_name[s]}, {NULL, NULL}};
			sl_prom_u64(p, fams[k].name, l,
				    atomic_load((const _Atomic uint64_t *)((const char *)&e->c[s] + fams[k].off)));
		}
	}
	const char *n = "sandlens_export_dropped_total";
	sl_prom_family(p, n, SL_PROM_COUNTER,
		       "OTLP items given up, by signal and reason (queue_full, retry_exhausted, rejected, partial_success, store_retention, encode_error, superseded, shutdown).");
	for (int s = 0; s < NSIG; s++)
		for (int r = 0; r < NREASON; r++) {
			const struct sl_prom_label l[] = {{"signal", sig_name[s]}, {"reason", reason_name[r]}, {NULL, NULL}};
			sl_prom_u64(p, n, l, atomic_load(&e->c[s].dropped[r]));
		}
	n = "sandlens_export_queue_depth";
	sl_prom_family(p, n, SL_PROM_GAUGE,
		       "Items waiting for export: stored events after the logs cursor; data points of the last metrics request.");
	for (int s = 0; s < NSIG; s++) {
		const struct sl_prom_label l[] = {{"signal", sig_name[s]}, {NULL, NULL}};
		sl_prom_u64(p, n, l, atomic_load(&e->c[s].depth));
	}
	sl_prom_one_u64(p, "sandlens_export_queue_capacity", SL_PROM_GAUGE,
			"Stored events the logs queue holds at most (export.otlp.queue_size); more are skipped and counted.",
			e->cfg.queue_size);
	sl_prom_one_u64(p, "sandlens_export_retrying", SL_PROM_GAUGE,
			"1 while an OTLP request waits for a retry.",
			(uint64_t)(atomic_load(&e->c[S_LOGS].retrying) || atomic_load(&e->c[S_METRICS].retrying)));
}
