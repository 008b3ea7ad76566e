/* GET /metrics: the agent's own families plus the statistics snapshot's
 * container families (by reference), identity or one gzip member. The
 * route and its bounds: docs/API.md "GET /metrics". */
#include "api/api_internal.h"
#include "api/api_watch.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/read.h"
#include "common/gzpart.h"
#include "common/prom.h"
#include "stats/stats.h"

/* What a /metrics response holds on to until it is sent. */
struct metrics_body {
	struct sl_api *api;
	struct sl_stats_prom *prom; /* container families: a reference, not a copy */
	char *own;                  /* the agent's own families, rendered now */
	unsigned char *gz_tail;     /* gzip: own compressed + trailer */
};

static void metrics_body_free(void *cls)
{
	struct metrics_body *mb = cls;
	atomic_fetch_sub(&mb->api->metrics_inflight, 1);
	sl_stats_prom_put(mb->prom);
	free(mb->own);
	free(mb->gz_tail);
	free(mb);
}

static void iov_add(struct reply *r, const void *base, size_t len)
{
	if (len)
		r->iov[r->niov++] = (struct MHD_IoVec){.iov_base = base, .iov_len = len};
}

/* The container families (rendered and gzip-compressed once per statistics
 * pass) are sent from the snapshot by reference; only the agent's own
 * families are rendered per scrape. With Accept-Encoding gzip (Prometheus
 * sends it) the body is one gzip member: the pass's compressed part plus
 * the own families compressed now (common/gzpart.h). max_body bounds what a
 * scrape renders (the own families); the snapshot is bounded by
 * stats.max_containers and served whole. */
void sl_api_h_metrics(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r)
{
	char err[256];
	if (sl_api_no_params(p, n, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	/* each response may hold a pass's text until its client has read it:
	 * bound how many, and so the memory slow clients can pin */
	if (atomic_fetch_add(&api->metrics_inflight, 1) >= SL_API_MAX_METRICS_INFLIGHT) {
		atomic_fetch_sub(&api->metrics_inflight, 1);
		sl_api_reply_error(r, 429, "RESOURCE_EXHAUSTED", "too many /metrics responses in flight");
		return;
	}
	struct metrics_body *mb = calloc(1, sizeof(*mb));
	size_t len = 0;
	FILE *f = mb ? open_memstream(&mb->own, &len) : NULL;
	if (!f) {
		free(mb);
		atomic_fetch_sub(&api->metrics_inflight, 1);
		sl_api_reply_error(r, 500, "INTERNAL", "out of memory");
		return;
	}
	mb->api = api;
	struct sl_prom *wp = sl_prom_new(f);
	if (wp) {
		sl_read_metrics(api->a, wp);
		sl_api_write_metrics(wp); /* the API's own families */
		sl_api_write_sandbox_metrics(api, wp);
		sl_read_metrics_refused(wp);
		sl_prom_free(wp);
	}
	if (fclose(f) != 0 || !mb->own) {
		metrics_body_free(mb);
		sl_api_reply_error(r, 500, "INTERNAL", "writing metrics failed");
		return;
	}
	if (len > api->max_body)
		len = sl_api_truncate_text(mb->own, len, api->max_body);
	mb->prom = sl_read_stats_prom(api->a);
	const struct sl_stats_prom *pr = mb->prom;

	r->status = 200;
	r->ctype = "text/plain; version=0.0.4; charset=utf-8";
	r->iov_free = metrics_body_free;
	r->iov_cls = mb;
	size_t tail_len;
	if (r->accept_gzip && (!pr || pr->gz.z) &&
	    !sl_gz_tail(mb->own, len, 1, pr ? pr->gz.crc : 0, pr ? pr->gz.len : 0, &mb->gz_tail,
			&tail_len)) {
		iov_add(r, SL_GZ_HEADER, SL_GZ_HEADER_LEN);
		if (pr)
			iov_add(r, pr->gz.z, pr->gz.zlen);
		iov_add(r, mb->gz_tail, tail_len);
		r->encoding = "gzip";
		return;
	}
	if (pr)
		iov_add(r, pr->text, pr->len);
	iov_add(r, mb->own, len);
}

/* Every Accept-Encoding header line, joined with ", " (RFC 9110 5.3: one
 * list); a value that would not fit is dropped, so gzip is not assumed. */
struct accept_enc {
	char v[512];
	size_t len;
};

static enum MHD_Result collect_accept_encoding(void *cls, enum MHD_ValueKind kind, const char *key,
					       const char *value)
{
	(void)kind;
	struct accept_enc *ae = cls;
	if (!key || !value || strcasecmp(key, MHD_HTTP_HEADER_ACCEPT_ENCODING))
		return MHD_YES;
	size_t vl = strlen(value), need = vl + (ae->len ? 2 : 0);
	if (ae->len + need >= sizeof(ae->v))
		return MHD_YES;
	if (ae->len) {
		memcpy(ae->v + ae->len, ", ", 2);
		ae->len += 2;
	}
	memcpy(ae->v + ae->len, value, vl + 1);
	ae->len += vl;
	return MHD_YES;
}

int sl_api_accepts_gzip(struct MHD_Connection *c)
{
	struct accept_enc ae = {0};
	MHD_get_connection_values(c, MHD_HEADER_KIND, collect_accept_encoding, &ae);
	return sl_gz_accepted(ae.v);
}

struct sl_api_counters sl_api_counters;

void sl_api_write_metrics(struct sl_prom *p)
{
	const char *n = "sandlens_api_connections_closed_total";
	const struct sl_prom_label ht[] = {{"reason", "header_timeout"}, {NULL, NULL}};
	const struct sl_prom_label cl[] = {{"reason", "client_limit"}, {NULL, NULL}};

	sl_prom_family(p, n, SL_PROM_COUNTER,
		       "API connections the agent closed: header_timeout (request headers not complete within api.header_timeout), client_limit (over api.max_client_connections)");
	sl_prom_u64(p, n, ht, atomic_load(&sl_api_counters.cut_header_timeout));
	sl_prom_u64(p, n, cl, atomic_load(&sl_api_counters.cut_client_limit));
	sl_prom_one_u64(p, "sandlens_api_denied_total", SL_PROM_COUNTER,
			"API requests answered 403 (admin route, caller not an admin)",
			atomic_load(&sl_api_counters.denied));
	sl_prom_one_u64(p, "sandlens_api_argv_withheld_total", SL_PROM_COUNTER,
			"Events sent to non-admin callers without their argv.",
			atomic_load(&sl_api_counters.argv_withheld));
	sl_prom_one_u64(p, "sandlens_api_event_streams", SL_PROM_GAUGE,
			"Event streams (GET /api/v1/events/watch) open now.", sl_api_watch_streams());
	n = "sandlens_api_event_streams_closed_total";
	const struct sl_prom_label lim[] = {{"reason", "client_limit"}, {NULL, NULL}};
	const struct sl_prom_label slow[] = {{"reason", "slow_reader"}, {NULL, NULL}};
	sl_prom_family(p, n, SL_PROM_COUNTER,
		       "Event streams refused or closed by the agent: client_limit (429: SL_API_WATCH_MAX_CLIENTS open, the client's own SL_API_WATCH_PER_CLIENT, or only the admins' reserved slots left), slow_reader (queued events not taken in time)");
	sl_prom_u64(p, n, lim, atomic_load(&sl_api_counters.watch_refused));
	sl_prom_u64(p, n, slow, atomic_load(&sl_api_counters.watch_slow));
	sl_prom_one_u64(p, "sandlens_api_event_stream_events_total", SL_PROM_COUNTER,
			"Events sent on event streams.", atomic_load(&sl_api_counters.watch_events));
	sl_prom_one_u64(p, "sandlens_api_heavy_reads_waited_total", SL_PROM_COUNTER,
			"Heavy reads (events, containers, flight recordings, profiles) that waited, suspended, for one of their listener's api.threads - 1 render slots.",
			atomic_load(&sl_api_counters.heavy_waited));
}
