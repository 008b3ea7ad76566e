/* Self-protection at run time: measures the agent's own load each tick,
 * feeds the pure state machine (pressure.h) and applies its level to the
 * agent (docs/ARCHITECTURE.md "Pressure"):
 *   level >= 1  stats collector and sched snapshot every pressure.metrics_slowdown ticks
 *   level >= 2  proc and sched token buckets >> pressure.rate_shift
 *   level >= 3  POST /api/v1/tasks answers 429 "agent under pressure: ..."
 *   level >= 4  low-severity events dropped in the pipeline, counted as
 *               sandlens_events_dropped_total{reason="pressure",type}
 * Optionally moves the agent into its own cgroup with hard limits
 * (pressure.cgroup, pressure_cgroup.c). */
#ifndef SANDLENS_AGENT_PRESSURE_RT_H
#define SANDLENS_AGENT_PRESSURE_RT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

struct sl_agent;
struct sl_config;
struct sl_pressure_rt;

/* Start watching (first CPU sample now). Returns NULL when
 * pressure.enabled is false or on allocation failure (logged); every
 * function below accepts NULL and then does nothing / reports "disabled". */
struct sl_pressure_rt *sl_pressure_rt_new(struct sl_agent *a);
/* Undo every step (level 0), leave the own cgroup if one was entered, free. */
void sl_pressure_rt_free(struct sl_pressure_rt *r);

/* Poll-loop thread, once per agent tick: measure, update, apply a changed
 * level. now_ns is CLOCK_MONOTONIC. */
void sl_pressure_rt_tick(struct sl_pressure_rt *r, uint64_t now_ns);
/* Step 1 for the poll loop's metric ticks: run them on every n-th tick
 * (1 when the step is off or r is NULL). */
unsigned sl_pressure_rt_tick_divisor(struct sl_pressure_rt *r);

/* Any thread: 1 when new tasks are refused (level >= 3), with "agent under
 * pressure: ..." (level, step, the measurement that caused it) in why. */
int sl_pressure_rt_refuse_tasks(struct sl_pressure_rt *r, char *why, size_t len);

/* /healthz "pressure" object (new reference): {enabled, level, zone,
 * reason, steps:[{step, name, active}], cpu_share, cpu_budget, rss_bytes,
 * memory_budget_bytes, store_queue_fill, ringbuf_fill, window_seconds,
 * stats_interval_seconds, rate_shift, steps_total, transitions:[{time,
 * from, to, reason}] (oldest first), cgroup}. Any thread. */
json_t *sl_pressure_rt_health_json(struct sl_pressure_rt *r, int64_t mono_to_real_ns);
/* The sandlens_pressure_* families, through p. Any thread. */
struct sl_prom;
void sl_pressure_rt_write_metrics(struct sl_pressure_rt *r, struct sl_prom *p);

/* --- own cgroup (pressure_cgroup.c) --- */

struct sl_pressure_cgroup {
	char dir[512];     /* the cgroup directory entered ("" = none), v2 or the v1 cpu one */
	char mem_dir[512]; /* v1 memory cgroup entered ("" = none or v2) */
	char rel[128];     /* pressure.cgroup.name (relative to each hierarchy's root) */
	char cpu_from[512], mem_from[512]; /* where the agent was, to go back at exit */
	char state[16];    /* "off" | "v2" | "v1" | "failed" */
	char error[256];
};

/* Move this process into <hierarchy>/<pressure.cgroup.name> with
 * cpu.max / memory.max (v2, when the unified hierarchy has the cpu and
 * memory controllers) or cpu.cfs_quota_us / memory.limit_in_bytes (v1
 * cpu and memory hierarchies, hybrid hosts). mountinfo is the path of
 * /proc/self/mountinfo (tests pass another). Returns 0, or -1 with
 * cg->error set and cg->state "failed" (the agent goes on without). */
int sl_pressure_cgroup_enter(const struct sl_config *cfg, const char *mountinfo, struct sl_pressure_cgroup *cg);
/* Move back to where the agent was and remove the cgroup directories. */
void sl_pressure_cgroup_leave(struct sl_pressure_cgroup *cg);

#endif
