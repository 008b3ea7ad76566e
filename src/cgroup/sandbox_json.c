/* Sandbox identity as JSON (sandbox.h sl_sbx_json). */
#include "cgroup/sandbox.h"
#include "cgroup/sandbox_rq.h"

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

static json_t *secs(int known, uint64_t ns)
{
	return known ? json_real((double)ns / 1e9) : json_null();
}

static json_t *count(int known, uint64_t v)
{
	return known ? json_integer((json_int_t)v) : json_null();
}

/* {runqueue_wait_seconds, timeslices, on_cpu_seconds, interval:{seconds,
 * runqueue_wait_seconds, timeslices, wait_per_timeslice_seconds} | null}
 * of one vCPU or a sandbox's sum; unknown figures null. */
static void rq_fields(json_t *o, const struct sl_sbx_rq *r)
{
	json_object_set_new(o, "runqueue_wait_seconds", secs(r->known, r->run_delay_ns));
	json_object_set_new(o, "timeslices", count(r->known, r->timeslices));
	json_object_set_new(o, "on_cpu_seconds", secs(r->known, r->oncpu_ns));
	if (!r->known || !r->iv_known) {
		json_object_set_new(o, "interval", json_null());
		return;
	}
	json_t *iv = json_object();
	if (!iv)
		return;
	json_object_set_new(iv, "seconds", secs(1, r->iv_ns));
	json_object_set_new(iv, "runqueue_wait_seconds", secs(1, r->iv_run_delay_ns));
	json_object_set_new(iv, "timeslices", count(1, r->iv_timeslices));
	json_object_set_new(iv, "wait_per_timeslice_seconds",
			    r->iv_timeslices ? json_real((double)r->iv_run_delay_ns / 1e9 / (double)r->iv_timeslices)
					     : json_null());
	json_object_set_new(o, "interval", iv);
}

json_t *sl_sbx_json(const struct sl_sbx *s)
{
	json_t *o = json_object(), *vc = json_array();
	if (!o || !vc) {
		json_decref(o);
		json_decref(vc);
		return NULL;
	}
	for (size_t i = 0; i < s->nvcpus; i++) {
		json_t *v = json_pack("{s:i,s:i,s:s}", "tid", (int)s->vcpu[i].tid, "index", (int)s->vcpu[i].index,
				      "comm", s->vcpu[i].comm);
		if (v)
			rq_fields(v, &s->vcpu[i].rq);
		json_array_append_new(vc, v);
	}
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
	struct sl_sbx_rq sum;
	json_t *rq = json_object();
	sl_sbx_rq_sum(s, &sum);
	if (rq)
		rq_fields(rq, &sum);
	json_object_set_new(o, "vcpu_runqueue", rq ? rq : json_null());
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
