/* Wiring of continuous profiling into sandlensd (src/agent/main.c). */
#ifndef SANDLENS_CPROF_CPROF_AGENT_H
#define SANDLENS_CPROF_CPROF_AGENT_H

#include <stddef.h>

#include "cprof/cprof.h"

struct sl_agent;
struct sl_config;

/* The window store's file: profiling.continuous.store_path, or
 * "profiles.db" in the directory of store.path (docs/CONFIG.md). */
void sl_cprof_db_path(const struct sl_config *cfg, char *out, size_t len);

/* Configuration check at start (exit 2): when continuous profiling is on,
 * its file must not be the event store's nor the task store's. 0, or -1
 * with "profiling.continuous.store_path: ..." in err. */
int sl_cprof_check_paths(const struct sl_config *cfg, char *err, size_t errlen);

/* Build the configuration from a->cfg.cprof (docs/CONFIG.md
 * "profiling.continuous"), a->mounts, a->v1_subsys_id, the runc index and
 * the clock offset, and start it (sl_cprof_new). NULL (logged, reason in
 * a->cprof_error) when it cannot start; the agent goes on without. */
struct sl_cprof *sl_cprof_start_agent(struct sl_agent *a);

/* The AutoTracing baseline provider (sl_auto_baseline_fn, src/auto/auto.h)
 * over continuous profiling: ctx is the struct sl_cprof; the merged on-CPU
 * profile of container_id over [from_real_ns, to_real_ns) (sl_cprof_range).
 * NULL with the reason in why when kind is not on-CPU (only on-CPU windows
 * are kept), no window overlaps the range, or the read failed. */
struct sl_profile *sl_cprof_baseline(void *ctx, const char *container_id, int kind, int64_t from_real_ns,
				     int64_t to_real_ns, char *why, size_t whylen);

#endif
