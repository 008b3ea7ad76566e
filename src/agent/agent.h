/* The agent: lifecycle, the modules of the registry, the one poll loop, and
 * the event pipeline (pipeline.c: identity, attribution, emit). Modules
 * never include this header (they use src/agent/module.h); the API reads
 * the agent through src/agent/read.h. */
#ifndef SANDLENS_AGENT_H
#define SANDLENS_AGENT_H

#include <stdint.h>
#include <stdio.h>
#include <stdatomic.h>
#include <jansson.h>

#include "agent/config.h"
#include "agent/kinds.h"
#include "agent/module.h"
#include "cgroup/attr.h"

struct sl_store;
struct sl_runc_index;
struct sl_stats;
struct sl_stats_prom;
struct sl_tasks;
struct sl_cprof;
struct sl_pressure_rt;
struct ring_buffer;
struct sl_prom;

/* Per-kind counters of the pipeline (index = global kind index). */
struct sl_kind_counters {
	_Atomic uint64_t events;           /* delivered by the kernel and stored */
	_Atomic uint64_t dropped_store;    /* store queue full, in kernel events (weights) */
	_Atomic uint64_t dropped_pressure; /* pressure step 4, low severity, in kernel events */
};

struct sl_agent {
	struct sl_config cfg;
	struct sl_store *store;
	struct sl_attr_cache *attr; /* NULL when attribution is off */
	struct sl_runc_index *runc; /* plain runc containers: the one index (thread-safe), shared by the
				     * pipeline, the stats collector and task targets */
	struct sl_stats *stats;     /* workload statistics collector (src/stats); NULL when stats are off */
	struct sl_tasks *tasks;     /* on-demand task executor (src/task); NULL when tasks are off */
	struct sl_cprof *cprof;     /* continuous profiling (src/cprof); NULL when off or not started */
	char cprof_error[256];      /* why cprof is NULL although enabled ("" otherwise) */
	struct sl_pressure_rt *pressure; /* self-protection (pressure_rt.h); NULL when off */
	struct sl_exporter *export; /* OTLP export (src/export, export_glue.c); NULL when off */
	struct sl_series_hist *series_hist; /* the series' recent readings (series_hist.h); NULL: none kept */
	/* the per-container flight recorder (flight.h, docs/FLIGHT.md) and its
	 * store (store/flight_store.h); NULL when flight.enabled is false or
	 * they could not start. Other parts of the agent freeze a container's
	 * ring with sl_flight_freeze(a->flight, ...) (any thread). */
	struct sl_flight *flight;
	struct sl_flight_db *flight_db;
	struct sl_auto *autotr;     /* AutoTracing (src/auto, docs/AUTO.md); NULL when auto.enabled is false */
	struct sl_cg_mounts mounts;
	int v1_subsys_id;           /* cgroup_subsys_id of cfg.attribution.v1_controller, -1 if not on v1 */

	struct ring_buffer *rb;     /* one libbpf ring_buffer for every module's maps */
	int nrb;
	int rb_map_fds[SL_MAX_MODULES * SL_MAX_RINGBUFS];
	char rb_names[SL_MAX_MODULES * SL_MAX_RINGBUFS][32];

	/* every module of the registry, in its order (disabled ones too) */
	int nmodules;
	struct sl_module modules[SL_MAX_MODULES];

	/* every kind of every module (sl_kinds_build), global index order */
	struct sl_kinds kinds;
	struct sl_kind_counters kc[SL_MAX_KINDS];
	struct sl_cevents *cevents; /* per-container counts (container_events.h); NULL: not counted */

	int64_t mono_to_real_ns;    /* wall = mono + this (taken at start) */
	uint64_t start_mono_ns;

	/* self-metrics, written by the poll loop, read by API threads */
	_Atomic uint64_t decode_errors;        /* short or unknown ring buffer records */
	_Atomic int pressure_level; /* 0..4, set by pressure_rt.c; steps 3 and 4 read it */
	/* attribution cache figures, published by the poll loop each tick */
	_Atomic uint64_t attr_entries, attr_hits, attr_misses, attr_evictions, attr_rmdir_drops;
	_Atomic int running;
};

/* --- modules (module.c, main.c) --- */

/* Fill a->modules from the registry (ops, cfg, enabled from a->cfg) and
 * a->kinds (sl_kinds_build: names unique, DETAILS templates checked).
 * Returns 0, or -1 with the reason in err (the agent must not start). */
int sl_agent_modules_setup(struct sl_agent *a, char *err, size_t errlen);

/* Register every ring buffer m's init set (sl_module_ringbuf) with the one
 * poll loop. 0 or -errno (the module is then failed). */
int sl_agent_add_module_ringbufs(struct sl_agent *a, struct sl_module *m);

/* --- OTLP export (export_glue.c) --- */

/* Start the exporter when export.otlp.endpoint is set (a->export), logs
 * after store row after_id (< 0: the newest now), resource attribute
 * service.version = version. 0, or -1 (logged; the agent goes on without). */
int sl_agent_export_start(struct sl_agent *a, int64_t after_id, const char *version);
/* Stop it (before the modules go: its metrics source reads them). */
void sl_agent_export_stop(struct sl_agent *a);

/* --- the flight recorder (flight_glue.c) --- */

/* Open its store (the event store's file) and start the recorder when
 * flight.enabled (a->flight, a->flight_db); after the store opened. 0, or
 * -1 (logged; the agent goes on without). */
int sl_agent_flight_start(struct sl_agent *a);
/* Stop it: the recordings still open are dropped, the queued ones written. */
void sl_agent_flight_stop(struct sl_agent *a);
/* Pipeline, before the event's JSON is made (poll loop): when the kind's
 * freezes() says so, open or join the container's recording and set
 * fields.flight_recording_id. */
void sl_agent_flight_check(struct sl_agent *a, unsigned kind, uint64_t ts_mono_ns, const struct sl_attr *at,
			   json_t *fields);
/* Pipeline, after (poll loop): the event's JSON text into its container's ring. */
void sl_agent_flight_append(struct sl_agent *a, unsigned kind, uint64_t ts_mono_ns, const struct sl_attr *at,
			    uint64_t weight, const char *json);
/* Each tick (poll loop): the host's drop counters as a sample, aging,
 * completion of due recordings. */
void sl_agent_flight_tick(struct sl_agent *a, uint64_t now_ns);
/* Its /metrics families (API thread). */
void sl_agent_flight_write_metrics(struct sl_agent *a, struct sl_prom *p);

/* --- reload (reload.c; poll-loop thread) --- */

/* SIGHUP: load path with the same loader as at start (sl_config_load over
 * the defaults). An invalid file is logged ("reload: ... <key>: <reason>")
 * and the running configuration kept: returns -1. Otherwise every key that
 * differs from the running value is applied when it can change at run
 * time — log_level, store.max_age, store.max_rows, stats.interval,
 * api.admin_group (the socket's group and mode follow), and a module key
 * its ops->reconfigure accepts — and logged "reload: <key> applied"; any
 * other changed key is logged "reload: <key> changed: needs a restart"
 * and keeps its running value (so a later reload names it again). Returns
 * the number of keys applied (0 when the file is unchanged). path NULL
 * (no --config) reloads nothing and returns 0. */
int sl_agent_reload(struct sl_agent *a, const char *path);

/* --- pipeline (pipeline.c; poll-loop thread only) --- */

/* Resolve a task identity to (cgroup id used, attribution) by the hybrid
 * rule of docs/ATTRIBUTION.md (sl_attr_cache_resolve): a container found on
 * the v2 hierarchy, else on the v1 hierarchy, else the v2 answer. A cgroup
 * the path rules do not call a container is looked up in runc's state
 * (plain runc containers, src/cgroup/runc_state.h); a non-container is
 * reported with runtime "host". With attribution off, *attr is empty
 * (is_container unknown) and the id is the v2 one, or the v1 one when the
 * task sits at the v2 root in a non-root v1 cgroup. *hier (may be NULL)
 * gets the hierarchy of the id. Returns the cgroup id used. */
uint64_t sl_pipeline_resolve(struct sl_agent *a, const struct sl_task_id *t, struct sl_attr *attr, int *hier);

/* JSON object {pid, comm, cgroup_id, container_id, pod_uid, runtime} for
 * actor/victim-style fields (new reference). */
json_t *sl_pipeline_task_json(struct sl_agent *a, const struct sl_task_id *t);

/* Complete and store one event of global kind index `kind`: adds the
 * common fields (time, type, severity, subject_kind, the subject's host
 * fields, cgroup_id, cgroup_hierarchy, container_id, pod_uid, runtime, qos)
 * to `fields` (stolen reference) and submits it. weight = kernel events
 * the record stands for (drop accounting). */
void sl_pipeline_emit(struct sl_agent *a, unsigned kind, uint64_t ts_mono_ns, const struct sl_subject *s,
		      json_t *fields, uint64_t weight);

/* cgroup mkdir/rmdir notification (hierarchy_id 0 = v2). */
void sl_pipeline_cgroup_event(struct sl_agent *a, uint64_t cgroup_id, unsigned hierarchy_id, int mkdir,
			      const char *path);

/* --- read side (API threads; health.c, self_metrics.c) --- */

/* /healthz body (docs/API.md "GET /healthz"). */
json_t *sl_agent_health_json(struct sl_agent *a);
/* The agent's own /metrics families and every module's (each restricted to
 * its declared families) through the writer p (self_metrics.c). */
void sl_agent_write_metrics_to(struct sl_agent *a, struct sl_prom *p);
/* A reference to the current container families text; NULL when statistics
 * are off or no pass has completed. Put it with sl_stats_prom_put(). */
struct sl_stats_prom *sl_agent_stats_prom(struct sl_agent *a);

/* Fill of a BPF ring buffer map, 0..1: unread bytes / size, from its
 * read-only position pages (mapped at the first call for map_fd and kept:
 * they hold the map until the process exits). -1 when it cannot be read.
 * Any thread. */
double sl_agent_ringbuf_fill(int map_fd);

#endif
