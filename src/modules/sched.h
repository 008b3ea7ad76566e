/* sched module (SCHED-1..3): per-container runqueue latency, contention and
 * sched_delay events. The module itself is sl_sched_module
 * (src/agent/module.h); definitions of every figure: docs/SCHED.md. */
#ifndef SANDLENS_MODULES_SCHED_H
#define SANDLENS_MODULES_SCHED_H

#include <jansson.h>
#include <stddef.h>
#include "sandlens/sched.h"

struct sl_agent;
struct sl_module;

/* Pressure step 2: the sched_delay token bucket's rate and burst become
 * >> shift (min 1), same contract as sl_proc_set_rate_shift (0..8; 0 = as
 * configured; sched.delay_rate 0 stays unlimited). Returns 0, -EINVAL for a
 * shift above 8 or a module that is not running. */
int sl_sched_set_rate_shift(struct sl_module *m, unsigned shift);
unsigned sl_sched_get_rate_shift(struct sl_module *m);

/* The last published per-container snapshot as the GET /api/v1/sched body:
 * {time, interval_seconds, containers: [{container_id, pod_uid, runtime,
 * host, cgroup_ids, interval: {waits, waits_per_second, wait_seconds,
 * p50_seconds, p90_seconds, p99_seconds, max_seconds, internal_seconds,
 * external_seconds, idle_seconds, cpu_seconds, runnable_wait_share,
 * waiting_tasks}, total: {waits, wait_seconds, internal_seconds,
 * external_seconds, idle_seconds}, throttling: {nr_periods, nr_throttled,
 * throttled_seconds, interval_nr_throttled, interval_throttled_seconds} |
 * null, neighbours: [{container_id, pod_uid, runtime, host, wait_seconds,
 * waits, interval_wait_seconds, interval_waits}]}]} (new reference).
 * Safe on any thread (reads an immutable, reference-counted snapshot).
 * Returns NULL when the sched module is not running, with *why set to a
 * static reason. */
json_t *sl_sched_json(struct sl_agent *a, const char **why);

/* sched_delay ring buffer record -> the type-specific JSON fields (wait_ns,
 * cpu, contention, enqueue, truncated_count, neighbour{pid, tid, comm,
 * cgroup_id, container_id, pod_uid, runtime}); the neighbour's container is
 * resolved through `a` (poll-loop thread only; a may be NULL in tests, then
 * the neighbour has pid/tid/comm/cgroup ids only). NULL when size is short. */
json_t *sl_sched_delay_fields(struct sl_agent *a, const struct sl_sched_delay_event *e, size_t size);

/* Names of enum sl_sched_contention / enum sl_sched_enqueue values
 * ("idle"|"internal"|"external", "wakeup"|"wakeup_new"|"preempted"). */
const char *sl_sched_contention_name(unsigned c);
const char *sl_sched_enqueue_name(unsigned e);

/* Does a container match sched.watch? watch: "all", "none", or a
 * comma-separated list of prefixes compared with the container id and the
 * pod uid (spaces around items ignored). Non-containers never match. */
int sl_sched_watch_match(const char *watch, const char *container_id, const char *pod_uid);

#endif
