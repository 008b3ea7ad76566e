/* The agent: lifecycle, module registry, the one poll loop, and the event
 * pipeline (attribute -> count -> store). */
#ifndef SANDLENS_AGENT_H
#define SANDLENS_AGENT_H

#include <stdint.h>
#include <stdio.h>
#include <stdatomic.h>
#include <jansson.h>

#include "agent/config.h"
#include "agent/module.h"
#include "cgroup/attr.h"
#include "sandlens/proc.h" /* sl_cgroup_event (until the contract lands) */

struct sl_store;
struct sl_runc_index;
struct sl_stats;
struct sl_stats_prom;
struct sl_tasks;
struct sl_pressure_rt;
struct ring_buffer;

/* Event kinds counted by the pipeline (index into sl_agent.events_total). */
enum sl_evkind { SL_K_EXEC, SL_K_EXIT, SL_K_SIGNAL, SL_K_OOM, SL_K_SCHED_DELAY, SL_K_MAX };
extern const char *const sl_evkind_names[SL_K_MAX];

#define SL_MAX_MODULES 8

struct sl_agent {
	struct sl_config cfg;
	struct sl_store *store;
	struct sl_attr_cache *attr; /* NULL when attribution is off */
	struct sl_runc_index *runc; /* plain runc containers: the one index (thread-safe), shared by the
				     * pipeline, the stats collector and task targets */
	struct sl_stats *stats;     /* workload statistics collector (src/stats); NULL when stats are off */
	struct sl_tasks *tasks;     /* on-demand task executor (src/task); NULL when tasks are off */
	struct sl_pressure_rt *pressure; /* self-protection (pressure_rt.h); NULL when off */
	struct sl_cg_mounts mounts;
	int v1_subsys_id;           /* cgroup_subsys_id of cfg.attribution.v1_controller, -1 if not on v1 */

	struct ring_buffer *rb;     /* one libbpf ring_buffer for every module's maps */
	int nrb;
	int rb_map_fds[SL_MAX_MODULES * 2];
	char rb_names[SL_MAX_MODULES * 2][32];

	int nmodules;
	struct sl_module modules[SL_MAX_MODULES];

	int64_t mono_to_real_ns;    /* wall = mono + this (taken at start) */
	uint64_t start_mono_ns;

	/* self-metrics, written by the poll loop, read by API threads */
	_Atomic uint64_t events_total[SL_K_MAX];
	_Atomic uint64_t exec_truncated_total; /* sum of truncated_count delivered */
	_Atomic uint64_t decode_errors;        /* short or unknown ring buffer records */
	_Atomic uint64_t dropped_store[SL_K_MAX]; /* store queue full, in kernel events (weights) */
	_Atomic uint64_t dropped_pressure[SL_K_MAX]; /* pressure step 4, low severity, in kernel events */
	_Atomic int pressure_level; /* 0..4, set by pressure_rt.c; steps 3 and 4 read it */
	/* attribution cache figures, published by the poll loop each tick */
	_Atomic uint64_t attr_entries, attr_hits, attr_misses, attr_evictions, attr_rmdir_drops;
	_Atomic int running;
};

/* Register a ring buffer map with the poll loop. cb gets each record. */
typedef int (*sl_rb_cb)(void *ctx, void *data, size_t size);
int sl_agent_add_ringbuf(struct sl_agent *a, const char *name, int map_fd, sl_rb_cb cb, void *ctx);

/* --- pipeline (poll-loop thread only) --- */

/* Resolve a task identity to (cgroup id used, attribution) by the hybrid
 * rule of docs/ATTRIBUTION.md (sl_attr_cache_resolve): a container found on
 * the v2 hierarchy, else on the v1 hierarchy, else the v2 answer. A cgroup
 * the path rules do not call a container is looked up in runc's state
 * (plain runc containers, src/cgroup/runc_state.h); a non-container is
 * reported with runtime "host". With
 * attribution off, *attr is empty (is_container unknown) and the id is the
 * v2 one, or the v1 one when the task sits at the v2 root in a non-root v1
 * cgroup. Returns the cgroup id used. */
uint64_t sl_pipeline_resolve(struct sl_agent *a, const struct sl_task_id *t, struct sl_attr *attr);

/* JSON object {pid, comm, cgroup_id, container_id} for actor/victim-style
 * fields (new reference). */
json_t *sl_pipeline_task_json(struct sl_agent *a, const struct sl_task_id *t);

/* Complete and store one event: adds time (RFC 3339, ns, UTC), type, pid,
 * ppid, comm, cgroup_id, container_id, pod_uid, runtime, qos of `subject` to
 * `fields` (stolen reference) and submits it. weight = kernel events the
 * record stands for (for drop accounting). */
void sl_pipeline_emit(struct sl_agent *a, enum sl_evkind kind, uint64_t ts_mono_ns,
		      const struct sl_task_id *subject, json_t *fields, uint64_t weight);

/* cgroup mkdir/rmdir notifications from a module. */
void sl_pipeline_cgroup_event(struct sl_agent *a, const struct sl_cgroup_event *e);

/* --- read side (API threads) --- */

/* /healthz body: {status, modules:[{name, state, error, hooks:[...]}], ...}. */
json_t *sl_agent_health_json(struct sl_agent *a);
/* /metrics is two parts: the agent's own families (this text, rendered per
 * scrape) and the statistics snapshot's container families
 * (sl_agent_stats_prom, rendered once per pass). No family is in both. */
void sl_agent_write_metrics(struct sl_agent *a, FILE *out);
/* A reference to the current container families text; NULL when statistics
 * are off or no pass has completed. Put it with sl_stats_prom_put(). */
struct sl_stats_prom *sl_agent_stats_prom(struct sl_agent *a);

uint64_t sl_mono_ns(void);

/* Fill of a BPF ring buffer map, 0..1: unread bytes / size, from its
 * read-only position pages. -1 when it cannot be read. Any thread. */
double sl_agent_ringbuf_fill(int map_fd);

#endif
