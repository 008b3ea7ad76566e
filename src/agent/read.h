/* The read interface of the agent (layers: module -> contract <- agent ->
 * read.h <- api): everything the API reads, on API threads. The API
 * includes this header, never agent/agent.h or a module's header. Every
 * function is safe on any thread once the agent started the API (it reads
 * atomics, immutable tables, reference-counted snapshots and BPF maps). */
#ifndef SANDLENS_AGENT_READ_H
#define SANDLENS_AGENT_READ_H

#include <jansson.h>
#include <stddef.h>

#include "agent/config.h"
#include "agent/module.h"

struct sl_agent;
struct sl_prom;
struct sl_store;
struct sl_stats;
struct sl_stats_prom;
struct sl_tasks;
struct sl_cprof;
struct sl_auto;

/* The loaded configuration (never NULL). */
const struct sl_config *sl_read_config(struct sl_agent *a);
/* The event store, the statistics collector, the task executor (each NULL
 * when not running). */
struct sl_store *sl_read_store(struct sl_agent *a);
struct sl_stats *sl_read_stats(struct sl_agent *a);
struct sl_tasks *sl_read_tasks(struct sl_agent *a);
/* Continuous profiling (src/cprof/cprof.h): NULL when
 * profiling.continuous.enabled is false or it could not start. */
struct sl_cprof *sl_read_cprof(struct sl_agent *a);
/* AutoTracing (src/auto/auto.h); NULL when auto.enabled is false. */
struct sl_auto *sl_read_auto(struct sl_agent *a);

/* The agent's cgroup mounts (one discovery at start; never NULL). */
struct sl_cg_mounts;
const struct sl_cg_mounts *sl_read_cg_mounts(struct sl_agent *a);

/* GET /healthz body (new reference). */
json_t *sl_read_health(struct sl_agent *a);
/* The agent's and the modules' /metrics families through p. */
void sl_read_metrics(struct sl_agent *a, struct sl_prom *p);
/* Log (rate-limited) the families p refused: a module wrote one it did not
 * declare. */
void sl_read_metrics_refused(struct sl_prom *p);
/* Pressure step 3 (docs/ARCHITECTURE.md "Pressure"): 1 with the reason in
 * err when new tasks are refused now, else 0. */
int sl_read_refuse_tasks(struct sl_agent *a, char *err, size_t errlen);
/* The statistics snapshot's families (sl_stats_prom_put it), or NULL. */
struct sl_stats_prom *sl_read_stats_prom(struct sl_agent *a);

/* GET /api/v1/schema/events body (new reference). */
json_t *sl_read_schema(struct sl_agent *a);
/* Names of every event kind, for the type filter: up to max into names
 * (static strings); returns how many there are. */
size_t sl_read_kind_names(struct sl_agent *a, const char **names, size_t max);
/* Withhold the admin-only fields (SL_FF_ADMIN) of every event of the JSON
 * array events; returns the number of events that lost one. */
size_t sl_read_withhold(struct sl_agent *a, json_t *events);

/* The module view mounted at /api/v1/<module><path>: rest is the URL after
 * "/api/v1/". 0 and *m, *v, or -ENOENT. */
int sl_read_view_find(struct sl_agent *a, const char *rest, struct sl_module **m, const struct sl_api_view **v);
/* Run view v of m with checked parameters: 503 (*status, reason in err)
 * when the module is not running, else what the view answers. Returns the
 * body (new reference) or NULL with *status and err. */
json_t *sl_read_view_get(struct sl_agent *a, struct sl_module *m, const struct sl_api_view *v,
			 const struct sl_view_param *p, size_t n, unsigned *status, char *err, size_t errlen);

/* Points written at most by one GET /api/v1/series. */
#define SL_READ_SERIES_MAX 4096
/* GET /api/v1/series?module=M&name=N body: {"module","name","unit","doc",
 * "points":[{container_id, pod_uid, cgroup_id, time, value}]} (new
 * reference), or NULL with *status 404 (unknown module or series), 503 (the
 * module is not running), 500 (read_series failed) and the reason in err. */
json_t *sl_read_series(struct sl_agent *a, const char *module, const char *name, unsigned *status, char *err,
		       size_t errlen);
/* GET /api/v1/series/history?module=M&name=N[&container=C] body:
 * {"module","name","unit","doc","points_max","containers":[{"container_id",
 * "pod_uid","points":[{"time","value"}]}]}, the readings the agent kept of
 * that series (agent/series_hist.h), oldest first; container as
 * sl_series_hist_json. NULL with *status and err as sl_read_series. */
json_t *sl_read_series_history(struct sl_agent *a, const char *module, const char *name, const char *container,
			       unsigned *status, char *err, size_t errlen);
/* GET /api/v1/series (module NULL: every running module) or ?module=M:
 * {"series":[{"module","name","unit","doc"}]}, the declared series of the
 * running modules in registry order (new reference), or NULL with *status
 * 404 (unknown module), 503 (M not running), 500 and the reason in err. */
json_t *sl_read_series_list(struct sl_agent *a, const char *module, unsigned *status, char *err, size_t errlen);

/* GET /api/v1/flight/{id}: flight recording id (docs/FLIGHT.md), its
 * events' admin-only fields withheld when redact (as GET /api/v1/events);
 * NULL with *status 404 (none), 503 (the recorder is off), 500 and err. */
json_t *sl_read_flight(struct sl_agent *a, int64_t id, int redact, unsigned *status, char *err, size_t errlen);
/* GET /api/v1/flight[?container=C&limit=N]: {"recordings":[{id, time,
 * container_id, reason, events, bytes}]}, newest first; NULL with *status
 * and err as sl_read_flight. */
json_t *sl_read_flight_list(struct sl_agent *a, const char *container, unsigned limit, unsigned *status, char *err,
			    size_t errlen);

#endif
