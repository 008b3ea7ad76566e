/* The OTLP/HTTP exporter (OUT-3, docs/EXPORT.md): one thread of its own
 * that sends the stored events as OTLP logs and the /metrics families as
 * OTLP metrics to an OpenTelemetry Collector.
 *
 * One source of truth each: events are read back from the store by row id
 * cursor (read-only connections, as GET /api/v1/events), metrics are the
 * exposition text /metrics serves (rendered by the caller's callback) parsed
 * back (prom_parse.h). The poll loop is never involved: nothing it does
 * waits on the exporter. The queue is the stored events after the cursor,
 * bounded by queue_size: when more wait, the oldest are skipped and
 * counted (reason queue_full). Every drop is counted by signal and reason
 * (sl_export_write_metrics). */
#ifndef SANDLENS_EXPORT_EXPORTER_H
#define SANDLENS_EXPORT_EXPORTER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/config.h"

struct sl_store;
struct sl_prom;
struct sl_exporter;

/* Renders the metrics text (Prometheus exposition) into *text (malloc'd),
 * its length into *len; 0 or -1. Called on the exporter thread. */
typedef int (*sl_export_render_fn)(void *arg, char **text, size_t *len);

struct sl_export_params {
	const char *host_name;
	const char *version;
	uint64_t start_ns;       /* agent start, wall clock (cumulative start time) */
	struct sl_store *store;  /* events source (NULL: no logs) */
	int64_t after_id;        /* export the events after this row id; < 0 = the newest at start */
	const char *cursor_path; /* the persisted logs cursor (cursor_file.h): resumed from when it
				    names the store's epoch, kept after each finished logs request;
				    NULL = not persisted */
	sl_export_render_fn render;
	void *render_arg;
};

/* Start the exporter thread for cfg (its endpoint must not be empty). The
 * logs cursor starts at p->after_id (the agent takes the store's newest row
 * before its modules start: events stored before are not exported). NULL with the reason in err. */
struct sl_exporter *sl_export_start(const struct sl_cfg_otlp *cfg, const struct sl_export_params *p, char *err,
				    size_t errlen);
/* Stop the thread (one last logs pass without retries), free. NULL ok. */
void sl_export_stop(struct sl_exporter *e);

/* /healthz "export" object: {"state": "off"|"ok"|"retrying"|"failing",
 * "endpoint", "last_error", "last_success", "logs"/"metrics": {sent,
 * failed, dropped, queue_depth, ...}}. e NULL = {"state":"off"}. Any
 * thread. */
json_t *sl_export_health_json(struct sl_exporter *e);
/* sandlens_export_sent_total{signal}, _failed_total{signal},
 * _retries_total{signal}, _dropped_total{signal,reason},
 * sandlens_export_queue_depth, _queue_capacity. e NULL writes nothing. Any
 * thread. */
void sl_export_write_metrics(struct sl_exporter *e, struct sl_prom *p);

#endif
