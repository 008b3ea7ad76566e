/* The read interface (read.h): the agent's state as the API sees it. */
#include "agent/read.h"
#include "agent/agent.h"
#include "agent/pressure_rt.h"
#include "agent/series_hist.h"
#include "common/log.h"
#include "common/prom.h"
#include "common/timefmt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const struct sl_config *sl_read_config(struct sl_agent *a) { return &a->cfg; }
struct sl_store *sl_read_store(struct sl_agent *a) { return a->store; }
struct sl_stats *sl_read_stats(struct sl_agent *a) { return a->stats; }
struct sl_tasks *sl_read_tasks(struct sl_agent *a) { return a->tasks; }
struct sl_cprof *sl_read_cprof(struct sl_agent *a) { return a->cprof; }
struct sl_auto *sl_read_auto(struct sl_agent *a) { return a->autotr; }
const struct sl_cg_mounts *sl_read_cg_mounts(struct sl_agent *a) { return &a->mounts; }
json_t *sl_read_health(struct sl_agent *a) { return sl_agent_health_json(a); }
void sl_read_metrics(struct sl_agent *a, struct sl_prom *p) { sl_agent_write_metrics_to(a, p); }
struct sl_stats_prom *sl_read_stats_prom(struct sl_agent *a) { return sl_agent_stats_prom(a); }
json_t *sl_read_schema(struct sl_agent *a) { return sl_kinds_schema_json(&a->kinds); }
size_t sl_read_withhold(struct sl_agent *a, json_t *events) { return sl_kinds_withhold(&a->kinds, events); }

size_t sl_read_kind_names(struct sl_agent *a, const char **names, size_t max)
{
	for (unsigned i = 0; i < a->kinds.n && i < max; i++)
		names[i] = a->kinds.e[i].k->name;
	return a->kinds.n;
}

static struct sl_module *module_named(struct sl_agent *a, const char *name, size_t len)
{
	for (int i = 0; i < a->nmodules; i++)
		if (strlen(a->modules[i].ops->name) == len && !strncmp(a->modules[i].ops->name, name, len))
			return &a->modules[i];
	return NULL;
}

int sl_read_view_find(struct sl_agent *a, const char *rest, struct sl_module **mp, const struct sl_api_view **vp)
{
	size_t ml = strcspn(rest, "/");
	struct sl_module *m = module_named(a, rest, ml);

	if (!m)
		return -ENOENT;
	for (unsigned i = 0; i < m->ops->nviews; i++)
		if (!strcmp(m->ops->views[i].path, rest + ml)) {
			*mp = m;
			*vp = &m->ops->views[i];
			return 0;
		}
	return -ENOENT;
}

static int not_running(const struct sl_module *m, unsigned *status, char *err, size_t errlen)
{
	if (m->enabled && !m->state)
		return 0;
	*status = 503;
	snprintf(err, errlen, "the %s module %s", m->ops->name, !m->enabled ? "is disabled" : "failed to start");
	return 1;
}

json_t *sl_read_view_get(struct sl_agent *a, struct sl_module *m, const struct sl_api_view *v,
			 const struct sl_view_param *p, size_t n, unsigned *status, char *err, size_t errlen)
{
	(void)a;
	if (not_running(m, status, err, errlen))
		return NULL;
	*status = 200;
	err[0] = 0;
	json_t *j = v->get(m, p, n, status, err, errlen);
	if (!j && *status < 400)
		*status = 500;
	if (!j && !err[0])
		snprintf(err, errlen, "the %s view failed", m->ops->name);
	return j;
}

json_t *sl_read_series_list(struct sl_agent *a, const char *module, unsigned *status, char *err, size_t errlen)
{
	struct sl_module *only = NULL;
	if (module) {
		only = module_named(a, module, strlen(module));
		if (!only) {
			*status = 404;
			snprintf(err, errlen, "module: no module '%s'", module);
			return NULL;
		}
		if (not_running(only, status, err, errlen))
			return NULL;
	}
	json_t *arr = json_array();
	for (int i = 0; i < a->nmodules && arr; i++) {
		struct sl_module *m = &a->modules[i];
		unsigned st;
		char e[160];
		if ((only && m != only) || not_running(m, &st, e, sizeof(e)))
			continue;
		for (unsigned k = 0; k < m->ops->nseries; k++)
			json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s}", "module", m->ops->name, "name",
							     m->ops->series[k].name, "unit", m->ops->series[k].unit,
							     "doc", m->ops->series[k].doc ? m->ops->series[k].doc : ""));
	}
	json_t *j = arr ? json_pack("{s:o}", "series", arr) : NULL;
	if (!j) {
		*status = 500;
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	*status = 200;
	return j;
}

json_t *sl_read_series(struct sl_agent *a, const char *module, const char *name, unsigned *status, char *err,
		       size_t errlen)
{
	struct sl_module *m = module_named(a, module, strlen(module));
	const struct sl_series_decl *d = NULL;
	unsigned idx = 0;

	*status = 404;
	if (!m) {
		snprintf(err, errlen, "module: no module '%s'", module);
		return NULL;
	}
	for (unsigned i = 0; i < m->ops->nseries; i++)
		if (!strcmp(m->ops->series[i].name, name)) {
			d = &m->ops->series[i];
			idx = i;
		}
	if (!d) {
		snprintf(err, errlen, "name: module %s has no series '%s'", module, name);
		return NULL;
	}
	if (not_running(m, status, err, errlen))
		return NULL;
	if (!m->ops->read_series) {
		*status = 500;
		snprintf(err, errlen, "module %s declares series but cannot read them", module);
		return NULL;
	}
	struct sl_series_point *pts = calloc(SL_READ_SERIES_MAX, sizeof(*pts));
	if (!pts) {
		*status = 500;
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	int np = m->ops->read_series(m, idx, pts, SL_READ_SERIES_MAX);
	if (np < 0) {
		free(pts);
		*status = 500;
		snprintf(err, errlen, "series %s.%s: %s", module, name, strerror(-np));
		return NULL;
	}
	json_t *arr = json_array();
	for (int i = 0; i < np && i < SL_READ_SERIES_MAX; i++) {
		char t[SL_TIME_RFC3339_MAX];
		pts[i].container_id[sizeof(pts[i].container_id) - 1] = 0;
		pts[i].pod_uid[sizeof(pts[i].pod_uid) - 1] = 0;
		sl_time_format((int64_t)pts[i].ts_ns + a->mono_to_real_ns, t, sizeof(t));
		json_array_append_new(arr, json_pack("{s:s,s:s,s:I,s:s,s:f}", "container_id", pts[i].container_id,
						     "pod_uid", pts[i].pod_uid, "cgroup_id",
						     (json_int_t)pts[i].cgroup_id, "time", t, "value", pts[i].value));
	}
	free(pts);
	*status = 200;
	return json_pack("{s:s,s:s,s:s,s:s,s:o}", "module", module, "name", name, "unit", d->unit ? d->unit : "",
			 "doc", d->doc ? d->doc : "", "points", arr);
}

json_t *sl_read_series_history(struct sl_agent *a, const char *module, const char *name, const char *container,
			       unsigned *status, char *err, size_t errlen)
{
	struct sl_module *m = module_named(a, module, strlen(module));
	const struct sl_series_decl *d = NULL;
	unsigned idx = 0;

	*status = 404;
	if (!m) {
		snprintf(err, errlen, "module: no module '%s'", module);
		return NULL;
	}
	for (unsigned i = 0; i < m->ops->nseries; i++)
		if (!strcmp(m->ops->series[i].name, name)) {
			d = &m->ops->series[i];
			idx = i;
		}
	if (!d) {
		snprintf(err, errlen, "name: module %s has no series '%s'", module, name);
		return NULL;
	}
	if (not_running(m, status, err, errlen))
		return NULL;
	json_t *arr = sl_series_hist_json(a->series_hist, (unsigned)(m - a->modules), idx, container,
					  a->mono_to_real_ns);
	json_t *j = arr ? json_pack("{s:s,s:s,s:s,s:s,s:i,s:o}", "module", module, "name", name, "unit",
				    d->unit ? d->unit : "", "doc", d->doc ? d->doc : "", "points_max",
				    SL_SERIES_HIST_POINTS, "containers", arr)
			: NULL;
	if (!j) {
		*status = 500;
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	*status = 200;
	return j;
}

void sl_read_metrics_refused(struct sl_prom *p)
{
	if (sl_prom_refused(p)) {
		static struct sl_log_limit lim = SL_LOG_LIMIT_INIT(10);
		sl_log_limited(&lim, SL_LOG_WARN, "agent",
			       "/metrics: %u families refused (a module wrote one it did not declare)",
			       sl_prom_refused(p));
	}
}

int sl_read_refuse_tasks(struct sl_agent *a, char *err, size_t errlen)
{
	return sl_pressure_rt_refuse_tasks(a->pressure, err, errlen);
}
