/* The event pipeline (poll-loop thread): the identity rule, attribution of
 * every subject kind, the common fields, counting, pressure step 4 and the
 * store. */
#include "agent/agent.h"
#include "agent/container_events.h"
#include "agent/pressure.h"
#include "cgroup/runc_state.h"
#include "common/json.h"
#include "common/timefmt.h"
#include "store/store.h"

#include <errno.h>
#include <string.h>

uint64_t sl_pipeline_resolve(struct sl_agent *a, const struct sl_task_id *t, struct sl_attr *attr, int *hierp)
{
	uint64_t v1 = a->mounts.v1[0] ? t->cgroup_v1_id : 0;
	int hier = -1;

	memset(attr, 0, sizeof(*attr));
	attr->is_container = SL_UNKNOWN;
	if (hierp)
		*hierp = SL_CG_V2;
	if (a->attr) {
		char path[SL_CGPATH_BYTES];
		/* Hybrid rule (docs/ATTRIBUTION.md): a container on either
		 * hierarchy wins, v2 first; else the v2 answer. */
		path[0] = 0;
		sl_attr_cache_resolve(a->attr, t->cgroup_id, v1, sl_mono_ns(), attr, path, sizeof(path), &hier);
		sl_runc_attr_fallback(a->runc, &a->mounts, path, hier, attr);
		/* "host": not a container and not in a pod (a pod-level cgroup
		 * keeps its pod uid and the path's runtime, "") */
		if (attr->is_container == SL_NO && !attr->runtime[0] && !attr->pod_uid[0])
			snprintf(attr->runtime, sizeof(attr->runtime), "host");
		/* Kubernetes names, cached in the entry of the cgroup used */
		sl_attr_cache_names(a->attr, hier, hier == SL_CG_V1 ? v1 : t->cgroup_id, sl_mono_ns(), attr);
		if (hierp)
			*hierp = hier == SL_CG_V1 ? SL_CG_V1 : SL_CG_V2;
		return hier == SL_CG_V1 ? v1 : t->cgroup_id;
	}
	/* Attribution off: report the v2 cgroup, or the v1 one when the task
	 * sits at the v2 root in a non-root v1 cgroup. */
	if ((t->cgroup_id == 0 || t->cgroup_id == a->mounts.v2_root_id) && v1 && v1 != a->mounts.v1_root_id) {
		if (hierp)
			*hierp = SL_CG_V1;
		return v1;
	}
	return t->cgroup_id;
}

static void put_identity(json_t *o, uint64_t cgid, const struct sl_attr *at)
{
	json_object_set_new(o, "cgroup_id", json_integer((json_int_t)cgid));
	json_object_set_new(o, "container_id", json_string(at->container_id));
	json_object_set_new(o, "pod_uid", json_string(at->pod_uid));
	json_object_set_new(o, "runtime", json_string(at->runtime));
	json_object_set_new(o, "namespace", json_string(at->names.ns));
	json_object_set_new(o, "pod", json_string(at->names.pod));
	json_object_set_new(o, "container", json_string(at->names.container));
}

static json_t *comm_json(const char *c16)
{
	char comm[SL_COMM_LEN + 1];
	memcpy(comm, c16, SL_COMM_LEN);
	comm[SL_COMM_LEN] = 0;
	return sl_json_str_lossy(comm, strlen(comm));
}

json_t *sl_pipeline_task_json(struct sl_agent *a, const struct sl_task_id *t)
{
	struct sl_attr at;
	uint64_t cg = sl_pipeline_resolve(a, t, &at, NULL);
	json_t *o = json_object();

	json_object_set_new(o, "pid", json_integer(t->pid));
	json_object_set_new(o, "comm", comm_json(t->comm));
	put_identity(o, cg, &at);
	return o;
}

/* The host as an attribution (a subject with no cgroup of its own). */
static void host_attr(struct sl_attr *at)
{
	memset(at, 0, sizeof(*at));
	at->is_container = SL_NO;
	snprintf(at->runtime, sizeof(at->runtime), "host");
}

/* Attribute subject s into *at; the subject's host fields go into fields
 * (a module field of the same name wins). Returns the cgroup id used. */
static uint64_t attribute(struct sl_agent *a, const struct sl_subject *s, json_t *fields, struct sl_attr *at,
			  int *hier)
{
	*hier = SL_CG_V2;
	switch (s->kind) {
	case SL_SUBJ_TASK:
		json_object_set_new(fields, "pid", json_integer(s->task->pid));
		json_object_set_new(fields, "ppid", json_integer(s->task->ppid));
		if (!json_object_get(fields, "comm"))
			json_object_set_new(fields, "comm", comm_json(s->task->comm));
		return sl_pipeline_resolve(a, s->task, at, hier);
	case SL_SUBJ_CGROUP: {
		struct sl_task_id t = {0};
		if (s->cgroup_hier == SL_CG_V1)
			t.cgroup_v1_id = s->cgroup_id;
		else
			t.cgroup_id = s->cgroup_id;
		return sl_pipeline_resolve(a, &t, at, hier);
	}
	case SL_SUBJ_NETNS:
		if (!json_object_get(fields, "netns_inode"))
			json_object_set_new(fields, "netns_inode", json_integer((json_int_t)s->netns_inode));
		/* a netns belongs to a container through a task in it */
		if (s->task)
			return sl_pipeline_resolve(a, s->task, at, hier);
		host_attr(at);
		return 0;
	case SL_SUBJ_DEVICE:
		if (!json_object_get(fields, "device"))
			json_object_set_new(fields, "device", json_string(s->device ? s->device : ""));
		host_attr(at);
		return 0;
	default: /* SL_SUBJ_CPU */
		if (!json_object_get(fields, "cpu"))
			json_object_set_new(fields, "cpu", json_integer(s->cpu));
		host_attr(at);
		return 0;
	}
}

void sl_pipeline_emit(struct sl_agent *a, unsigned kind, uint64_t ts_mono_ns, const struct sl_subject *s,
		      json_t *fields, uint64_t weight)
{
	struct sl_store_event ev;
	struct sl_attr at;
	char tbuf[SL_TIME_RFC3339_MAX];
	int hier, sev;

	if (kind >= a->kinds.n || !fields || (s->kind == SL_SUBJ_TASK && !s->task) || s->kind < SL_SUBJ_TASK ||
	    s->kind > SL_SUBJ_CPU) {
		atomic_fetch_add(&a->decode_errors, 1);
		json_decref(fields);
		return;
	}
	const char *type = a->kinds.e[kind].k->name;
	sev = sl_kinds_severity(&a->kinds, kind, fields);
	/* pressure step 4: low-severity events go before any further work */
	if (atomic_load_explicit(&a->pressure_level, memory_order_relaxed) >= 4 && sl_pressure_low_severity(sev)) {
		atomic_fetch_add(&a->kc[kind].dropped_pressure, weight ? weight : 1);
		json_decref(fields);
		return;
	}
	uint64_t cg = attribute(a, s, fields, &at, &hier);

	memset(&ev, 0, sizeof(ev));
	ev.time_ns = (int64_t)ts_mono_ns + a->mono_to_real_ns;
	sl_time_format(ev.time_ns, tbuf, sizeof(tbuf));
	json_object_set_new(fields, "time", json_string(tbuf));
	json_object_set_new(fields, "type", json_string(type));
	json_object_set_new(fields, "severity", json_string(sl_severity_name(sev)));
	json_object_set_new(fields, "subject_kind", json_string(sl_subject_kind_name(s->kind)));
	put_identity(fields, cg, &at);
	json_object_set_new(fields, "cgroup_hierarchy", json_string(hier == SL_CG_V1 ? "v1" : "v2"));
	json_object_set_new(fields, "qos", json_string(at.qos));
	sl_agent_flight_check(a, kind, ts_mono_ns, &at, fields); /* a death: flight_recording_id */

	snprintf(ev.type, sizeof(ev.type), "%s", type);
	ev.pid = s->kind == SL_SUBJ_TASK ? s->task->pid : 0;
	snprintf(ev.container_id, sizeof(ev.container_id), "%s", at.container_id);
	snprintf(ev.pod_uid, sizeof(ev.pod_uid), "%s", at.pod_uid);
	snprintf(ev.runtime, sizeof(ev.runtime), "%s", at.runtime);
	ev.weight = weight;
	ev.json = json_dumps(fields, JSON_COMPACT);
	json_decref(fields);
	atomic_fetch_add(&a->kc[kind].events, 1);
	if (!ev.json) {
		atomic_fetch_add(&a->decode_errors, 1);
		return;
	}
	sl_agent_flight_append(a, kind, ts_mono_ns, &at, weight, ev.json); /* before the store takes it */
	if (sl_store_submit(a->store, &ev) == -EAGAIN)
		atomic_fetch_add(&a->kc[kind].dropped_store, weight ? weight : 1);
	else
		sl_cevents_count(a->cevents, &at, kind, weight, ts_mono_ns);
}

void sl_pipeline_cgroup_event(struct sl_agent *a, uint64_t cgroup_id, unsigned hierarchy_id, int mkdir,
			      const char *path)
{
	int hier;

	if (!a->attr)
		return;
	if (hierarchy_id == 0)
		hier = SL_CG_V2;
	else if ((int)hierarchy_id == a->mounts.v1_hierarchy_id)
		hier = SL_CG_V1;
	else
		return;
	if (mkdir)
		sl_attr_cache_on_mkdir(a->attr, hier, cgroup_id, path, sl_mono_ns());
	else
		sl_attr_cache_on_rmdir(a->attr, hier, cgroup_id, sl_mono_ns());
}
