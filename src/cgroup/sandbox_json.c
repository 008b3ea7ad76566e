/* Sandbox identity as JSON (sandbox.h sl_sbx_json). */
#include "cgroup/sandbox.h"

#include <jansson.h>
#include <stdio.h>

static json_t *str_or_null(const char *s)
{
	return s && s[0] ? json_string(s) : json_null();
}

static json_t *pids(const int32_t *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

json_t *sl_sbx_json(const struct sl_sbx *s)
{
	json_t *o = json_object(), *vc = json_array();
	if (!o || !vc) {
		json_decref(o);
		json_decref(vc);
		return NULL;
	}
	for (size_t i = 0; i < s->nvcpus; i++)
		json_array_append_new(vc, json_pack("{s:i,s:i,s:s}", "tid", (int)s->vcpu[i].tid, "index",
						    (int)s->vcpu[i].index, "comm", s->vcpu[i].comm));
	char stats[160];
	snprintf(stats, sizeof(stats), "/api/v1/workloads/%s/stats", s->id);
	json_object_set_new(o, "id", json_string(s->id));
	json_object_set_new(o, "runtime", str_or_null(sl_sbx_runtime_name(s->runtime)));
	json_object_set_new(o, "vmm", str_or_null(sl_sbx_vmm_name(s->vmm_kind)));
	json_object_set_new(o, "pod_uid", str_or_null(s->pod_uid));
	json_object_set_new(o, "cgroup", str_or_null(s->cgroup));
	json_object_set_new(o, "overhead_cgroup", str_or_null(s->overhead_cgroup));
	json_object_set_new(o, "vmm_pid", s->vmm_pid ? json_integer(s->vmm_pid) : json_null());
	json_object_set_new(o, "vmm_start_time",
			    s->vmm_pid ? json_integer((json_int_t)s->vmm_start_time) : json_null());
	json_object_set_new(o, "vmm_comm", str_or_null(s->vmm_comm));
	json_object_set_new(o, "vcpus", vc);
	json_object_set_new(o, "shim_pids", pids(s->shim_pid, s->nshims));
	json_object_set_new(o, "gofer_pids", pids(s->gofer_pid, s->ngofers));
	json_object_set_new(o, "vm_dir", str_or_null(s->vm_dir));
	json_object_set_new(o, "stats", json_string(stats));
	return o;
}

json_t *sl_sbx_list_json(const struct sl_sbx_list *l)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < l->n; i++) {
		json_t *o = sl_sbx_json(&l->sbx[i]);
		if (!o) {
			json_decref(a);
			return NULL;
		}
		json_array_append_new(a, o);
	}
	return a ? json_pack("{s:o}", "sandboxes", a) : NULL;
}
