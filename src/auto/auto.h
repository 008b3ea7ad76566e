/* AutoTracing (AUTO-1, AUTO-2; issue 15; docs/AUTO.md): detectors over
 * per-container series and the captures they start.
 *
 * One thread of its own ("auto"): every time the statistics collector
 * publishes a snapshot (stats.interval) it reads each container's figures
 * (sl_stats_visit), the declared series it is configured to watch (through
 * the module contract's read_series, found by series name, never by module)
 * and the D-state tasks of /proc, and feeds the detectors (detect.h). PSI
 * poll triggers (psi_trigger.h) on cgroup v2 pressure files wake it at once
 * (epoll, EPOLLPRI). A detector that fires starts a capture: cooldown check
 * (cooldown.h), an on-CPU profile task (and an off-CPU one for blocked
 * triggers) through the task executor — so tasks.max_concurrent_tasks is
 * never exceeded; a refused task is counted —, a /proc snapshot
 * (snapshot.h) and a record in the capture store (capture_store.h). When the
 * tasks end, the record gets the profile summary and the baseline diff
 * (prof_diff.h) against the profile the baseline provider returns.
 */
#ifndef SANDLENS_AUTO_AUTO_H
#define SANDLENS_AUTO_AUTO_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "auto/auto_config.h"

struct sl_agent;
struct sl_auto;
struct sl_profile;
struct sl_prom;

/* Baseline provider (continuous profiling, wired by the agent): the merged,
 * symbolized profile of container_id of kind (enum sl_prof_kind) over the
 * wall-clock range [from_real_ns, to_real_ns) (ns since the epoch), as a
 * new struct sl_profile the caller frees with sl_profile_free(); NULL when
 * there is none, with the reason in why (e.g. "no continuous window in the
 * range"). Called on the auto thread. */
typedef struct sl_profile *(*sl_auto_baseline_fn)(void *ctx, const char *container_id, int kind,
						 int64_t from_real_ns, int64_t to_real_ns, char *why, size_t whylen);

struct sl_config;
/* The capture store's file: auto.store_path, else captures.db in the
 * directory of store.path. */
void sl_auto_db_path(const struct sl_config *cfg, char *out, size_t len);

/* Start the engine when auto.enabled (NULL otherwise, or on failure:
 * logged). Needs the stats collector; captures need the task executor. */
struct sl_auto *sl_auto_start(struct sl_agent *a);
/* Stop the thread, close PSI triggers and the store. NULL is fine. */
void sl_auto_stop(struct sl_auto *au);

/* Register the baseline provider (fn NULL: none; records then say
 * "baseline": {"status": "none", "reason": ...}). Any thread. */
void sl_auto_set_baseline_provider(struct sl_auto *au, sl_auto_baseline_fn fn, void *ctx);

/* GET /api/v1/auto: {enabled, detectors: [{name, input, method, threshold,
 * window, baseline, source, ...}], psi: {...}, counters}. New reference;
 * au NULL gives {enabled: false}. */
json_t *sl_auto_status_json(struct sl_auto *au);

/* Capture records (docs/AUTO.md "Record"), newest first; admin 0 withholds
 * argv and kernel stacks ("cmdline_withheld", "stack_withheld"). New
 * reference. */
json_t *sl_auto_captures_json(struct sl_auto *au, const char *container, const char *detector, size_t limit,
			      int admin);
/* One record or NULL. */
json_t *sl_auto_capture_json(struct sl_auto *au, const char *id, int admin);
/* The task id of a capture's profile (which: "on_cpu" | "off_cpu") into
 * task_id. 0, -ENOENT (no such capture), -ENODATA (no such profile). */
int sl_auto_capture_task(struct sl_auto *au, const char *id, const char *which, char *task_id, size_t len);

/* sandlens_auto_* families (docs/AUTO.md "Metrics"). */
void sl_auto_write_metrics(struct sl_auto *au, struct sl_prom *p);

/* Withhold the admin parts of a record in place (argv, kernel stacks). */
void sl_auto_redact(json_t *rec);

#endif
