/* GET /api/v1/sandboxes and /api/v1/sandboxes/{id}: sandbox identity
 * (src/cgroup/sandbox.h), scanned from the cgroup mounts and /proc at the
 * request (like `ps`: no state kept, no lock shared with the poll loop). */
#include "api/api_internal.h"
#include "agent/read.h"
#include "cgroup/sandbox.h"
#include "cgroup/sandbox_rq.h"
#include "common/prom.h"
#include "stats/stats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void answer(struct sl_api *api, struct reply *r, json_t *j)
{
	r->body = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!r->body) {
		sl_api_reply_error(r, 500, "INTERNAL", "out of memory");
		return;
	}
	r->len = strlen(r->body);
	r->status = 200;
	r->ctype = "application/json";
	if (r->len > api->max_body)
		sl_api_reply_error(r, 500, "INTERNAL", "sandboxes body exceeds the response size bound");
}

/* The vCPU runqueue interval tracker: the previous reading of each vCPU
 * thread, shared by the API's requests (its own mutex; the poll loop never
 * takes it). Lives for the process. */
static struct sl_sbx_rq_track rq_track;
static pthread_once_t rq_once = PTHREAD_ONCE_INIT;

static void rq_init(void)
{
	sl_sbx_rq_track_init(&rq_track, 0);
}

/* Identity, then each VMM's vCPU schedstat and the interval figures. */
static int scan_rq(struct sl_api *api, struct sl_sbx_list *l)
{
	struct sl_sbx_scan_opts o = {.mounts = sl_read_cg_mounts(api->a), .proc_root = NULL};
	int rc = sl_sbx_scan(&o, l);
	if (rc)
		return rc;
	for (size_t i = 0; i < l->n; i++)
		sl_sbx_rq_read(NULL, &l->sbx[i]);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	pthread_once(&rq_once, rq_init);
	sl_sbx_rq_track(&rq_track, l, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
	return 0;
}

static int scan(struct sl_api *api, struct sl_sbx_list *l, struct reply *r)
{
	int rc = scan_rq(api, l);
	if (rc) {
		char msg[128];
		snprintf(msg, sizeof(msg), "sandbox scan failed: %s", strerror(-rc));
		sl_api_reply_error(r, 500, "INTERNAL", msg);
	}
	return rc;
}

void sl_api_h_sandboxes(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r)
{
	char err[256];
	struct sl_sbx_list l;
	if (sl_api_no_params(p, n, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	if (scan(api, &l, r))
		return;
	answer(api, r, sl_sbx_list_json(&l));
	sl_sbx_list_free(&l);
}

void sl_api_h_sandbox(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r)
{
	char err[256];
	struct sl_sbx_list l;
	const char *id = r->arg;
	if (!sl_stats_id_valid(id)) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT",
				   "sandbox id: 1..79 characters of [A-Za-z0-9_.+-], not starting with '.' or '-'");
		return;
	}
	if (sl_api_no_params(p, n, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	if (scan(api, &l, r))
		return;
	const struct sl_sbx *s = sl_sbx_find(&l, id);
	if (!s) {
		snprintf(err, sizeof(err), "no sandbox '%s' on this node", id);
		sl_api_reply_error(r, 404, "NOT_FOUND", err);
	} else {
		answer(api, r, sl_sbx_json(s));
	}
	sl_sbx_list_free(&l);
}

static void render_sandbox_metrics(struct sl_api *api, struct sl_prom *p)
{
	static const char *W = "sandlens_sandbox_vcpu_runqueue_wait_seconds_total",
			  *T = "sandlens_sandbox_vcpu_timeslices_total";
	struct sl_sbx_list l;
	if (scan_rq(api, &l))
		return;
	int w = 0, t = 0;
	for (size_t i = 0; i < l.n; i++) {
		const struct sl_sbx *s = &l.sbx[i];
		for (size_t j = 0; j < s->nvcpus; j++) {
			if (!s->vcpu[j].rq.known)
				continue; /* unknown: no sample, never 0 */
			char ix[16];
			snprintf(ix, sizeof(ix), "%d", (int)s->vcpu[j].index);
			const struct sl_prom_label lb[] = {{"sandbox_id", s->id}, {"vcpu", ix}, {NULL, NULL}};
			if (!w++)
				sl_prom_family(p, W, SL_PROM_COUNTER,
					       "Time the sandbox's vCPU thread spent runnable on a host runqueue, waiting for a CPU (schedstat run_delay: what the guest sees as steal time)");
			sl_prom_decimal(p, W, lb, s->vcpu[j].rq.run_delay_ns, 9);
		}
	}
	for (size_t i = 0; i < l.n; i++) {
		const struct sl_sbx *s = &l.sbx[i];
		for (size_t j = 0; j < s->nvcpus; j++) {
			if (!s->vcpu[j].rq.known)
				continue;
			char ix[16];
			snprintf(ix, sizeof(ix), "%d", (int)s->vcpu[j].index);
			const struct sl_prom_label lb[] = {{"sandbox_id", s->id}, {"vcpu", ix}, {NULL, NULL}};
			if (!t++)
				sl_prom_family(p, T, SL_PROM_COUNTER,
					       "Times the sandbox's vCPU thread was run on a host CPU (schedstat pcount)");
			sl_prom_u64(p, T, lb, s->vcpu[j].rq.timeslices);
		}
	}
	sl_sbx_list_free(&l);
}

/* The rendered families of the last scan: a scrape reuses them for 1 s, so
 * frequent scrapers do not walk /proc each time. */
static pthread_mutex_t metrics_mu = PTHREAD_MUTEX_INITIALIZER;
static char *metrics_text;
static size_t metrics_len;
static uint64_t metrics_at_ns;

void sl_api_write_sandbox_metrics(struct sl_api *api, struct sl_prom *p)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	pthread_mutex_lock(&metrics_mu);
	if (!metrics_text || now - metrics_at_ns >= SL_SBX_RQ_MIN_INTERVAL_NS) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		struct sl_prom *w = f ? sl_prom_new(f) : NULL;
		if (w) {
			render_sandbox_metrics(api, w);
			sl_prom_free(w);
		}
		if (f && fclose(f) == 0 && text && w) {
			free(metrics_text);
			metrics_text = text;
			metrics_len = len;
			metrics_at_ns = now;
		} else {
			free(text);
		}
	}
	if (metrics_text && metrics_len)
		fwrite(metrics_text, 1, metrics_len, sl_prom_stream(p));
	pthread_mutex_unlock(&metrics_mu);
}
