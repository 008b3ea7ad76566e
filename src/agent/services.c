/* The services the agent gives modules (src/agent/module.h, "Services for
 * modules"): emit, attribution, the agent's discovered state. */
#include "agent/agent.h"
#include "cgroup/attr.h"

#include <errno.h>
#include <stdatomic.h>

void sl_module_emit(struct sl_module *m, unsigned kind, uint64_t ts_mono_ns, const struct sl_subject *s,
		    json_t *fields, uint64_t weight)
{
	if (!m->agent || kind >= m->ops->nkinds || !s) {
		if (m->agent)
			atomic_fetch_add(&m->agent->decode_errors, 1);
		json_decref(fields);
		return;
	}
	sl_pipeline_emit(m->agent, m->kind_base + kind, ts_mono_ns, s, fields, weight);
}

void sl_module_decode_error(struct sl_module *m)
{
	if (m->agent)
		atomic_fetch_add(&m->agent->decode_errors, 1);
}

uint64_t sl_module_resolve_task(struct sl_module *m, const struct sl_task_id *t, struct sl_attr *attr, int *hier)
{
	return sl_pipeline_resolve(m->agent, t, attr, hier);
}

uint64_t sl_module_resolve_cgroup(struct sl_module *m, uint64_t cgroup_id, uint64_t cgroup_v1_id,
				  struct sl_attr *attr, int *hier)
{
	struct sl_task_id t = {.cgroup_id = cgroup_id, .cgroup_v1_id = cgroup_v1_id};
	return sl_pipeline_resolve(m->agent, &t, attr, hier);
}

int sl_module_cgroup_path(struct sl_module *m, uint64_t cgroup_id, uint64_t cgroup_v1_id, char *path,
			  size_t len, int *hier)
{
	struct sl_agent *a = m->agent;
	struct sl_attr at;
	int h = -1;

	if (!a || !a->attr || !len)
		return -ENOENT;
	path[0] = 0;
	sl_attr_cache_resolve(a->attr, cgroup_id, a->mounts.v1[0] ? cgroup_v1_id : 0, sl_mono_ns(), &at, path, len,
			      &h);
	if (hier)
		*hier = h;
	return path[0] ? 0 : -ENOENT;
}

json_t *sl_module_task_json(struct sl_module *m, const struct sl_task_id *t)
{
	return sl_pipeline_task_json(m->agent, t);
}

void sl_module_cgroup_event(struct sl_module *m, uint64_t cgroup_id, unsigned hierarchy_id, int mkdir,
			    const char *path)
{
	sl_pipeline_cgroup_event(m->agent, cgroup_id, hierarchy_id, mkdir, path);
}

int sl_module_v1_subsys_id(const struct sl_module *m)
{
	return m->agent ? m->agent->v1_subsys_id : -1;
}

const struct sl_cg_mounts *sl_module_mounts(const struct sl_module *m)
{
	static const struct sl_cg_mounts none = {.v1_hierarchy_id = -1};
	return m->agent ? &m->agent->mounts : &none;
}

int sl_module_attribution(const struct sl_module *m)
{
	return m->agent && m->agent->attr != NULL;
}

const char *sl_module_tracefs(const struct sl_module *m)
{
	return m->agent ? m->agent->cfg.tracefs : "/sys/kernel/tracing";
}

int64_t sl_module_mono_to_real_ns(const struct sl_module *m)
{
	return m->agent ? m->agent->mono_to_real_ns : 0;
}

int sl_module_pressure_level(const struct sl_module *m)
{
	return m->agent ? atomic_load(&m->agent->pressure_level) : 0;
}
