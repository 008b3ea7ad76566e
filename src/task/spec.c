/* Task request parsing and names (task.h). Pure: no I/O. */
#include "task/task.h"
#include "profile/profile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const type_names[SL_TASK_NTYPES] = {
	"profile_on_cpu", "profile_off_cpu", "trace_syscall_errors", "profile_mem_virtual",
	"profile_page_faults", "profile_resident", "profile_lock_kernel", "profile_futex"};
static const int prof_kinds[SL_TASK_NTYPES] = {
	SL_PROF_ON_CPU, SL_PROF_OFF_CPU, -1, SL_PROF_MEM_VIRTUAL, SL_PROF_PAGE_FAULTS,
	SL_PROF_RESIDENT, SL_PROF_LOCK_KERNEL, SL_PROF_FUTEX};

int sl_task_prof_kind(int type)
{
	return type >= 0 && type < SL_TASK_NTYPES ? prof_kinds[type] : -1;
}
static const char *const status_names[] = {"pending", "running", "done", "failed", "cancelled"};

const char *sl_task_type_name(int type)
{
	return type >= 0 && type < SL_TASK_NTYPES ? type_names[type] : NULL;
}

int sl_task_type_parse(const char *name)
{
	for (int i = 0; name && i < SL_TASK_NTYPES; i++)
		if (!strcmp(name, type_names[i]))
			return i;
	return -1;
}

const char *sl_task_status_name(int status)
{
	return status >= 0 && status <= SL_TS_CANCELLED ? status_names[status] : "unknown";
}

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

static int get_uint(const json_t *v, const char *name, uint64_t min, uint64_t max, uint64_t *out,
		    char *err, size_t errlen)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return ERR("%s: must be a non-negative integer", name);
	uint64_t u = (uint64_t)json_integer_value(v);
	if (u < min || u > max)
		return ERR("%s: %llu out of range [%llu, %llu]", name, (unsigned long long)u,
			   (unsigned long long)min, (unsigned long long)max);
	*out = u;
	return 0;
}

static int parse_target(const json_t *t, struct sl_task_spec *out, char *err, size_t errlen)
{
	const char *key;
	json_t *v;
	uint64_t u;

	if (!json_is_object(t))
		return ERR("target: must be an object like {\"container\": ID}, {\"pod\": UID} or {\"pid\": N}");
	if (json_object_size(t) != 1)
		return ERR("target: exactly one of container, pod, pid, tid");
	json_object_foreach((json_t *)t, key, v) {
		if (!strcmp(key, "container") || !strcmp(key, "pod")) {
			const char *s = json_string_value(v);
			if (!s || !s[0])
				return ERR("target.%s: must be a non-empty string", key);
			if (strlen(s) >= sizeof(out->target))
				return ERR("target.%s: longer than %zu bytes", key, sizeof(out->target) - 1);
			if (!strcmp(key, "container") && strlen(s) < 4)
				return ERR("target.container: give at least 4 characters of the id");
			for (const char *p = s; *p; p++)
				if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
				      (*p >= 'A' && *p <= 'Z') || strchr("-_.+:", *p)))
					return ERR("target.%s: '%s' has characters outside [A-Za-z0-9-_.+:]", key, s);
			snprintf(out->target, sizeof(out->target), "%s", s);
			out->target_kind = !strcmp(key, "container") ? SL_TGT_CONTAINER : SL_TGT_POD;
		} else if (!strcmp(key, "pid") || !strcmp(key, "tid")) {
			char name[16];
			snprintf(name, sizeof(name), "target.%s", key);
			if (get_uint(v, name, 1, 0x3fffffff, &u, err, errlen))
				return -EINVAL;
			out->pid = (uint32_t)u;
			out->target_kind = !strcmp(key, "pid") ? SL_TGT_PID : SL_TGT_TID;
		} else {
			return ERR("target: unknown key '%s' (container, pod, pid or tid)", key);
		}
	}
	return 0;
}

int sl_task_spec_parse(const json_t *body, const struct sl_task_limits *lim,
		       struct sl_task_spec *out, char *err, size_t errlen)
{
	const char *key;
	json_t *v;
	int have_target = 0, have_hz = 0, have_min = 0;

	memset(out, 0, sizeof(*out));
	out->type = -1;
	out->min_off_cpu_ns = UINT64_MAX;
	if (!json_is_object(body))
		return ERR("body: must be a JSON object");
	json_object_foreach((json_t *)body, key, v) {
		if (!strcmp(key, "type")) {
			out->type = sl_task_type_parse(json_string_value(v));
			if (out->type < 0)
				return ERR("type: must be one of profile_on_cpu, profile_off_cpu, trace_syscall_errors, "
					   "profile_mem_virtual, profile_page_faults, profile_resident, "
					   "profile_lock_kernel, profile_futex");
		} else if (!strcmp(key, "target")) {
			if (parse_target(v, out, err, errlen))
				return -EINVAL;
			have_target = 1;
		} else if (!strcmp(key, "duration_s")) {
			double d = json_number_value(v);
			if (!json_is_number(v) || !isfinite(d) || d <= 0)
				return ERR("duration_s: must be a positive number of seconds");
			if (d * 1e9 > (double)lim->max_duration_ns)
				return ERR("duration_s: %g exceeds the maximum %llu s (tasks.max_duration)", d,
					   (unsigned long long)(lim->max_duration_ns / 1000000000ull));
			out->duration_ns = (uint64_t)(d * 1e9);
			if (out->duration_ns < 1000000)
				return ERR("duration_s: at least 0.001");
		} else if (!strcmp(key, "hz")) {
			uint64_t u;
			if (get_uint(v, "hz", 1, lim->max_hz, &u, err, errlen))
				return -EINVAL;
			out->hz = (uint32_t)u;
			have_hz = 1;
		} else if (!strcmp(key, "min_off_cpu_us")) {
			uint64_t u;
			if (get_uint(v, "min_off_cpu_us", 0, 60000000ull, &u, err, errlen))
				return -EINVAL;
			out->min_off_cpu_ns = u * 1000;
			have_min = 1;
		} else if (!strcmp(key, "fault_period")) {
			uint64_t u;
			if (get_uint(v, "fault_period", 1, SL_TASK_FAULT_PERIOD_MAX, &u, err, errlen))
				return -EINVAL;
			out->fault_period = (uint32_t)u;
		} else if (!strcmp(key, "follow")) {
			if (!json_is_boolean(v))
				return ERR("follow: must be true or false");
			out->follow = json_is_true(v);
		} else {
			return ERR("%s: unknown field (type, target, duration_s, hz, min_off_cpu_us, fault_period, follow)", key);
		}
	}
	if (out->type < 0)
		return ERR("type: missing");
	if (!have_target)
		return ERR("target: missing");
	if (have_hz && out->type != SL_TASK_PROFILE_ON_CPU)
		return ERR("hz: only for profile_on_cpu");
	if (have_min && out->type != SL_TASK_PROFILE_OFF_CPU)
		return ERR("min_off_cpu_us: only for profile_off_cpu");
	if (out->fault_period && out->type != SL_TASK_PROFILE_PAGE_FAULTS)
		return ERR("fault_period: only for profile_page_faults");
	if (!out->fault_period && out->type == SL_TASK_PROFILE_PAGE_FAULTS)
		out->fault_period = SL_TASK_FAULT_PERIOD_DEFAULT;
	if (!out->duration_ns)
		out->duration_ns = lim->default_duration_ns;
	if (!out->hz && out->type == SL_TASK_PROFILE_ON_CPU)
		out->hz = lim->default_hz;
	if (out->min_off_cpu_ns == UINT64_MAX)
		out->min_off_cpu_ns = out->type == SL_TASK_PROFILE_OFF_CPU ? lim->default_min_off_cpu_ns : 0;
	return 0;
}
