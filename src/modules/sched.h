/* sched module (SCHED-1..3): per-container runqueue latency, contention and
 * sched_delay events. The module itself is sl_sched_module (sched.c,
 * listed in src/modules/registry.c); its declarations are in sched_decl.c;
 * definitions of every figure: docs/SCHED.md. */
#ifndef SANDLENS_MODULES_SCHED_H
#define SANDLENS_MODULES_SCHED_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include "agent/module.h"
#include "sandlens/sched.h"

extern const struct sl_module_ops sl_sched_module;

/* The section "sched:" of the config file (docs/CONFIG.md, docs/SCHED.md). */
struct sl_sched_cfg {
	char watch[1024];             /* "all", "none", or comma-separated id prefixes */
	uint64_t delay_threshold_ns;  /* sched_delay threshold */
	uint64_t delay_rate;          /* sched_delay events/s per cgroup, 0 = no limit */
	uint64_t delay_burst;         /* bucket size */
	uint64_t max_cgroups;         /* kernel histogram entries */
	uint64_t max_neighbour_pairs; /* (victim, neighbour) entries */
	uint64_t max_containers;      /* exported series */
	uint64_t ringbuf_size;        /* bytes, power of two */
	char wait_source[16];         /* "auto", "sched_info" or "wakeup": how a wait is timed
	                               * (bpf/sched.bpf.c; docs/SCHED.md "How a wait is timed") */
};

#define SL_SCHED_NCFG 9

/* Whether the sched module times waits from the kernel's sched_info
 * (1) or with wakeup hooks (0), for sched.wait_source: "sched_info" 1,
 * "wakeup" 0, "auto" 1 when schedstat_path (/proc/self/schedstat, present
 * exactly when the kernel has CONFIG_SCHED_INFO) is readable. In auto mode
 * a load failure of the sched_info program still falls back to wakeup. */
int sl_sched_use_sched_info(const char *wait_source, const char *schedstat_path);
#define SL_SCHED_NFAMILIES 13
#define SL_SCHED_NHOOKS 4
extern const struct sl_cfg_key sl_sched_cfg_keys[SL_SCHED_NCFG];
/* ringbuf_size a power of two; watch "all", "none" or a list with at least
 * one prefix ([A-Za-z0-9-_.:], all/none only as the whole value). 0 or -1
 * with "sched.<key>: <reason>". */
int sl_sched_cfg_check(const void *cfg, char *err, size_t errlen);
extern const struct sl_event_kind sl_sched_kinds[1]; /* sched_delay */
extern const struct sl_prom_family sl_sched_families[SL_SCHED_NFAMILIES];
extern const struct sl_hook_decl sl_sched_hooks[SL_SCHED_NHOOKS];

/* Pressure step 2: the sched_delay token bucket's rate and burst become
 * >> shift (min 1), same contract as ops->set_rate_shift (0..8; 0 = as
 * configured; sched.delay_rate 0 stays unlimited). Returns 0, -EINVAL for a
 * shift above 8 or a module that is not running. */
int sl_sched_set_rate_shift(struct sl_module *m, unsigned shift);
unsigned sl_sched_get_rate_shift(struct sl_module *m);

/* The view GET /api/v1/sched (no parameters): the last published
 * per-container snapshot:
 * {time, interval_seconds, containers: [{container_id, pod_uid, runtime,
 * host, cgroup_ids, interval: {waits, waits_per_second, wait_seconds,
 * p50_seconds, p90_seconds, p99_seconds, max_seconds, internal_seconds,
 * external_seconds, idle_seconds, cpu_seconds, runnable_wait_share,
 * waiting_tasks}, total: {waits, wait_seconds, internal_seconds,
 * external_seconds, idle_seconds}, throttling: {nr_periods, nr_throttled,
 * throttled_seconds, interval_nr_throttled, interval_throttled_seconds} |
 * null, neighbours: [{container_id, pod_uid, runtime, host, wait_seconds,
 * waits, interval_wait_seconds, interval_waits}]}]} (new reference).
 * Safe on any thread (reads an immutable, reference-counted snapshot). The
 * agent calls it only while the module runs. */
json_t *sl_sched_view(struct sl_module *m, const struct sl_view_param *p, size_t n, unsigned *status,
		      char *err, size_t errlen);

/* The module's series (GET /api/v1/series, docs/SCHED.md "Series"), from
 * the last snapshot, one point per series (container or host ""):
 * idx 0 sched_runqueue_latency_p99_seconds, the interval's p99 runqueue
 * wait (log2 histogram quantile, seconds); idx 1 sched_runqueue_waiting_tasks,
 * the interval's total wait / its length (tasks waiting on average). Returns
 * points written (<= max), -ENODEV (not running), -EINVAL (idx). */
#define SL_SCHED_NSERIES 2
int sl_sched_read_series(struct sl_module *m, unsigned idx, struct sl_series_point *out, size_t max);

/* sched_delay ring buffer record -> the type-specific JSON fields (tid,
 * wait_ns, cpu, contention, enqueue, truncated_count, neighbour{pid, tid,
 * comm, cgroup_id, container_id, pod_uid, runtime}); the neighbour's
 * container is resolved through m's agent (poll-loop thread only; m may be
 * NULL in tests, then the neighbour has pid/tid/comm/cgroup ids only). NULL
 * when size is short. */
json_t *sl_sched_delay_fields(struct sl_module *m, const struct sl_sched_delay_event *e, size_t size);

/* Names of enum sl_sched_contention / enum sl_sched_enqueue values
 * ("idle"|"internal"|"external", "wakeup"|"wakeup_new"|"preempted"). */
const char *sl_sched_contention_name(unsigned c);
const char *sl_sched_enqueue_name(unsigned e);

/* Does a container match sched.watch? watch: "all", "none", or a
 * comma-separated list of prefixes compared with the container id and the
 * pod uid (spaces around items ignored). Non-containers never match. */
int sl_sched_watch_match(const char *watch, const char *container_id, const char *pod_uid);

#endif
