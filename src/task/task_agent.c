/* sandlensd wiring of the task executor (task_agent.h). */
#include "task/task_agent.h"
#include "agent/agent.h"
#include "common/log.h"

#include <stdio.h>
#include <string.h>

#define MOD "tasks"

void sl_tasks_db_path(const struct sl_config *cfg, char *out, size_t len)
{
	if (cfg->tasks.store_path[0]) {
		snprintf(out, len, "%s", cfg->tasks.store_path);
		return;
	}
	const char *sp = cfg->store.path, *sl = strrchr(sp, '/');
	if (sl)
		snprintf(out, len, "%.*s/tasks.db", (int)(sl - sp), sp);
	else
		snprintf(out, len, "tasks.db");
}

struct sl_tasks *sl_tasks_start_agent(struct sl_agent *a)
{
	const __typeof__(a->cfg.tasks) *c = &a->cfg.tasks;
	struct sl_tasks_config tc = {
		.max_concurrent = c->max_concurrent,
		.lim = {.max_duration_ns = c->max_duration_s * 1000000000ull,
			.default_duration_ns = c->default_duration_s * 1000000000ull,
			.default_hz = (uint32_t)c->default_hz,
			.max_hz = (uint32_t)c->max_hz,
			.default_min_off_cpu_ns = c->off_cpu_min_ns},
		.grace_ns = c->deadline_grace_s * 1000000000ull,
		.retention_ns = c->result_retention_s * 1000000000ull,
		.max_records = c->max_results,
		.stack_entries = (uint32_t)c->stack_entries,
		.count_entries = (uint32_t)c->count_entries,
		.mounts = a->mounts,
		.v1_subsys_id = a->v1_subsys_id,
		.debuginfod_urls = c->debuginfod_urls,
		.debuginfod_cache = c->debuginfod_cache,
		.debuginfod_timeout_s = (unsigned)c->debuginfod_timeout_s,
	};
	char err[512];

	sl_tasks_db_path(&a->cfg, tc.db_path, sizeof(tc.db_path));
	if (a->cfg.attribution.enabled)
		tc.runc = a->runc; /* the one shared index */
	struct sl_tasks *ts = sl_tasks_new(&tc, err, sizeof(err));
	if (!ts)
		sl_err(MOD, "task executor not started: %s", err);
	else
		sl_info(MOD, "task executor ready: at most %zu concurrent tasks, store %s", tc.max_concurrent,
			tc.db_path);
	return ts;
}
