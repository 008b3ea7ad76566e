/* Wiring of the task executor into sandlensd (src/agent/main.c). */
#ifndef SANDLENS_TASK_TASK_AGENT_H
#define SANDLENS_TASK_TASK_AGENT_H

#include "task/task.h"

struct sl_agent;
struct sl_config;

/* The task store's file: tasks.store_path, or "tasks.db" in the directory
 * of store.path (docs/CONFIG.md). Written to out (len bytes, truncated). */
void sl_tasks_db_path(const struct sl_config *cfg, char *out, size_t len);

/* Build the executor's configuration from a->cfg.tasks (docs/CONFIG.md
 * "tasks"), a->mounts, a->v1_subsys_id and attribution.runc_root, and
 * start it (sl_tasks_new). The store file is tasks.store_path, or
 * "tasks.db" in the directory of store.path. Returns NULL (logged) when
 * it cannot start; the agent goes on without tasks. */
struct sl_tasks *sl_tasks_start_agent(struct sl_agent *a);

#endif
