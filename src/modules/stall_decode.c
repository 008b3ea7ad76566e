/* stall module: event fields; see stall_decode.h. */
#include "modules/stall_decode.h"
#include "common/json.h"
#include "profile/profile_internal.h"

#include <errno.h>
#include <stdio.h>

#define PF_KTHREAD_FLAG 0x00200000u

json_t *sl_stall_stack_json(const struct sl_ksyms *ks, const uint64_t *ips, int bytes, const char **err)
{
	json_t *a = json_array();
	int n = bytes > 0 ? bytes / 8 : 0;

	*err = NULL;
	if (!a)
		return NULL;
	if (bytes < 0) {
		*err = bytes == -EFAULT ? "no kernel stack (the task is gone or not in the kernel)" : "stack capture failed";
		return a;
	}
	if (n == 0) {
		*err = "empty kernel stack (user mode)";
		return a;
	}
	if (n > SL_STALL_STACK_DEPTH)
		n = SL_STALL_STACK_DEPTH;
	for (int i = 0; i < n; i++) {
		char s[192];
		struct sl_ksym kb;
		const struct sl_ksym *k = ks ? sl_ksyms_lookup(ks, ips[i], &kb) : NULL;
		if (k && k->module)
			snprintf(s, sizeof(s), "%s+0x%llx [%s]", k->name, (unsigned long long)(ips[i] - k->addr), k->module);
		else if (k)
			snprintf(s, sizeof(s), "%s+0x%llx", k->name, (unsigned long long)(ips[i] - k->addr));
		else
			snprintf(s, sizeof(s), "0x%llx", (unsigned long long)ips[i]);
		json_array_append_new(a, json_string(s));
	}
	return a;
}

json_t *sl_stall_hung_fields(const char *source, uint32_t tid, uint64_t blocked_ns, uint64_t threshold_ns,
			     uint32_t state, uint32_t flags, int have_flags, uint64_t switches, json_t *stack,
			     const char *stack_err)
{
	json_t *o = json_object();

	if (!o) {
		json_decref(stack);
		return NULL;
	}
	json_object_set_new(o, "tid", json_integer(tid));
	json_object_set_new(o, "source", json_string(source));
	json_object_set_new(o, "blocked_ns", json_integer((json_int_t)blocked_ns));
	json_object_set_new(o, "threshold_ns", json_integer((json_int_t)threshold_ns));
	json_object_set_new(o, "state", json_integer(state));
	json_object_set_new(o, "killable", json_boolean(state & SL_TASK_WAKEKILL));
	json_object_set_new(o, "kthread", json_boolean(have_flags && (flags & PF_KTHREAD_FLAG)));
	json_object_set_new(o, "switches", json_integer((json_int_t)switches));
	json_object_set_new(o, "kernel_stack", stack ? stack : json_array());
	if (stack_err)
		json_object_set_new(o, "stack_error", json_string(stack_err));
	return o;
}

json_t *sl_stall_cpu_fields(const struct sl_stall_cpu_event *e, size_t size, uint64_t threshold_ns, json_t *task,
			    json_t *stack, const char *stack_err)
{
	json_t *o;

	if (size < sizeof(*e) || !(o = json_object())) {
		json_decref(task);
		json_decref(stack);
		return NULL;
	}
	json_object_set_new(o, "late_ns", json_integer((json_int_t)e->late_ns));
	json_object_set_new(o, "gap_ns", json_integer((json_int_t)e->gap_ns));
	json_object_set_new(o, "steal_ns", json_integer((json_int_t)e->steal_ns));
	json_object_set_new(o, "threshold_ns", json_integer((json_int_t)threshold_ns));
	json_object_set_new(o, "period_ns", json_integer((json_int_t)e->period_ns));
	json_object_set_new(o, "task", task ? task : json_object());
	json_object_set_new(o, "kernel_stack", stack ? stack : json_array());
	if (stack_err)
		json_object_set_new(o, "stack_error", json_string(stack_err));
	return o;
}

json_t *sl_stall_klog_fields(const struct sl_stall_klog *k, const char *msg)
{
	json_t *o;

	if (k->kind != SL_KLOG_SOFT_LOCKUP && k->kind != SL_KLOG_HARD_LOCKUP && k->kind != SL_KLOG_RCU_STALL)
		return NULL;
	if (!(o = json_object()))
		return NULL;
	if (k->kind == SL_KLOG_SOFT_LOCKUP) {
		json_object_set_new(o, "stuck_s", json_integer(k->stuck_s));
		if (k->pid >= 0) {
			json_object_set_new(o, "lockup_pid", json_integer(k->pid));
			json_object_set_new(o, "lockup_comm", sl_json_strz(k->comm));
		}
	} else if (k->kind == SL_KLOG_RCU_STALL) {
		json_object_set_new(o, "flavor", json_string(k->flavor));
		json_object_set_new(o, "how", json_string(k->how));
		json_object_set_new(o, "cpus", json_array());
	}
	json_object_set_new(o, "message", json_string(msg ? msg : ""));
	return o;
}
