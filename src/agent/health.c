/* GET /healthz body (docs/API.md "GET /healthz"): every module of the
 * registry with its declared hooks, the store, pressure. API threads: reads
 * what init wrote before the API started. */
#include "common/version.h"
#include "agent/agent.h"
#include "agent/pressure_rt.h"
#include "export/exporter.h"
#include "store/store.h"
#include "cprof/cprof.h"

#include <string.h>

static json_t *hook_json(const char *name, const char *state, const char *reason)
{
	json_t *ho = json_object();
	json_object_set_new(ho, "name", json_string(name));
	json_object_set_new(ho, "state", json_string(state));
	if (reason && reason[0])
		json_object_set_new(ho, "reason", json_string(reason));
	return ho;
}

/* The module's hooks: every declared one (a declared hook init did not
 * record is "failed: not recorded by init"; a disabled module's are
 * "disabled"), then any recorded one it did not declare. Sets *degraded
 * when one is degraded or failed. */
static json_t *hooks_json(const struct sl_module *m, int *degraded)
{
	json_t *hooks = json_array();
	const struct sl_module_ops *ops = m->ops;

	for (unsigned d = 0; d < ops->nhooks; d++) {
		const struct sl_hook_status *h = NULL;
		for (int i = 0; i < m->nhooks; i++)
			if (!strcmp(m->hooks[i].name, ops->hooks[d].name))
				h = &m->hooks[i];
		if (!m->enabled) {
			json_array_append_new(hooks, hook_json(ops->hooks[d].name, "disabled", "module disabled by configuration"));
		} else if (h) {
			json_array_append_new(hooks, hook_json(h->name, sl_hook_state_name(h->state), h->reason));
			*degraded |= h->state == SL_HOOK_DEGRADED || h->state == SL_HOOK_FAILED;
		} else {
			json_array_append_new(hooks, hook_json(ops->hooks[d].name, "failed", "not recorded by init"));
			*degraded = 1;
		}
	}
	for (int i = 0; i < m->nhooks; i++) {
		int declared = 0;
		for (unsigned d = 0; d < ops->nhooks; d++)
			declared |= !strcmp(m->hooks[i].name, ops->hooks[d].name);
		if (!declared) {
			json_array_append_new(hooks, hook_json(m->hooks[i].name, sl_hook_state_name(m->hooks[i].state),
							       m->hooks[i].reason));
			*degraded |= m->hooks[i].state == SL_HOOK_DEGRADED || m->hooks[i].state == SL_HOOK_FAILED;
		}
	}
	return hooks;
}

json_t *sl_agent_health_json(struct sl_agent *a)
{
	json_t *root = json_object(), *mods = json_array();
	int ok = 1;

	for (int i = 0; i < a->nmodules; i++) {
		struct sl_module *m = &a->modules[i];
		json_t *mo = json_object();
		int degraded = 0;
		json_t *hooks = hooks_json(m, &degraded);
		const char *state = !m->enabled ? "disabled" : m->state ? "failed" : degraded ? "degraded" : "running";

		if (m->enabled && m->state)
			ok = 0;
		json_object_set_new(mo, "name", json_string(m->ops->name));
		json_object_set_new(mo, "state", json_string(state));
		if (m->error[0])
			json_object_set_new(mo, "error", json_string(m->error));
		json_object_set_new(mo, "hooks", hooks);
		json_array_append_new(mods, mo);
	}
	/* The store's own state (ok/degraded/failed, why): a store that cannot
	 * be written makes the agent degraded, not failed (it holds the rows). */
	json_t *store = sl_store_health_json(a->store);
	const char *sst = json_string_value(json_object_get(store, "state"));
	int store_ok = sst && !strcmp(sst, "ok");
	json_object_set_new(root, "status", json_string(!ok ? "failed" : store_ok ? "ok" : "degraded"));
	json_object_set_new(root, "store", store);
	json_object_set_new(root, "continuous_profiling",
			    sl_cprof_health_json(a->cprof, a->cfg.cprof.enabled, a->cprof_error));
	json_object_set_new(root, "version", json_string(SANDLENS_VERSION));
	json_object_set_new(root, "uptime_seconds", json_real((double)(sl_mono_ns() - a->start_mono_ns) / 1e9));
	json_object_set_new(root, "attribution", json_boolean(a->attr != NULL));
	json_object_set_new(root, "cgroup_v2_mount", json_string(a->mounts.v2));
	json_object_set_new(root, "cgroup_v1_mount", json_string(a->mounts.v1));
	json_object_set_new(root, "modules", mods);
	json_object_set_new(root, "pressure", sl_pressure_rt_health_json(a->pressure, a->mono_to_real_ns));
	json_object_set_new(root, "export", sl_export_health_json(a->export));
	return root;
}
