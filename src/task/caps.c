/* Capabilities of this kernel for each task type (GET /api/v1/capabilities,
 * docs/TASKS.md "Capabilities"): probed once at start. */
#include "task/task_internal.h"
#include "profile/sampler_util.h"
#include "task/task_kprof.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MOD "tasks"

static int read_int(const char *path, long *v)
{
	char buf[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	*v = strtol(buf, NULL, 10);
	return 0;
}

/* Can we open a sampling cpu-clock event on CPU 0 for every task? */
static int perf_ok(char *why, size_t len)
{
	int fd = sl_perf_open_freq(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 99, 0);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	int e = errno;
	long paranoid = 0;
	read_int("/proc/sys/kernel/perf_event_paranoid", &paranoid);
	snprintf(why, len, "perf_event_open(cpu-clock, all tasks, cpu 0): %s (kernel.perf_event_paranoid=%ld; needs CAP_PERFMON or CAP_SYS_ADMIN)",
		 strerror(e), paranoid);
	return 0;
}

static int has_pmu(void)
{
	struct perf_event_attr a = {.size = sizeof(a), .type = PERF_TYPE_HARDWARE,
				    .config = PERF_COUNT_HW_CPU_CYCLES, .sample_freq = 99, .freq = 1};
	int fd = (int)syscall(__NR_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

void sl_tasks_probe(struct sl_tasks *ts)
{
	char err[200];

	for (int i = 0; i < SL_TASK_NTYPES; i++)
		ts->supported[i] = 1;
	snprintf(ts->event_on_cpu, sizeof(ts->event_on_cpu), "%s", has_pmu() ? "cycles" : "cpu-clock");

	if (!perf_ok(ts->why[SL_TASK_PROFILE_ON_CPU], sizeof(ts->why[0])))
		ts->supported[SL_TASK_PROFILE_ON_CPU] = 0;
	if (faccessat(AT_FDCWD, "/sys/kernel/btf/vmlinux", R_OK, AT_EACCESS) != 0) {
		ts->supported[SL_TASK_PROFILE_OFF_CPU] = 0;
		snprintf(ts->why[SL_TASK_PROFILE_OFF_CPU], sizeof(ts->why[0]),
			 "no kernel BTF (/sys/kernel/btf/vmlinux): tp_btf/sched_switch cannot be attached");
	}
	if (faccessat(AT_FDCWD, "/sys/kernel/tracing/events/raw_syscalls/sys_exit", F_OK, AT_EACCESS) != 0 &&
	    faccessat(AT_FDCWD, "/sys/kernel/debug/tracing/events/raw_syscalls/sys_exit", F_OK, AT_EACCESS) != 0) {
		ts->supported[SL_TASK_SYSCALL_ERRORS] = 0;
		snprintf(ts->why[SL_TASK_SYSCALL_ERRORS], sizeof(ts->why[0]),
			 "tracepoint raw_syscalls:sys_exit not found in tracefs (CONFIG_FTRACE_SYSCALLS, tracefs mounted?)");
	}
	for (int i = 0; i < SL_TASK_NTYPES; i++) /* memory and lock profiles: their hooks */
		if (sl_kprof_is_type(i) && sl_kprof_check(i, ts->why[i], sizeof(ts->why[0])))
			ts->supported[i] = 0;
	if (ts->cfg.no_probe_load)
		return;
	/* the real proof: load (not attach) each object once */
	for (int i = 0; i < SL_TASK_NTYPES; i++) {
		if (!ts->supported[i])
			continue;
		if (sl_task_bpf_probe(i, ts->cfg.v1_subsys_id, err, sizeof(err))) {
			ts->supported[i] = 0;
			snprintf(ts->why[i], sizeof(ts->why[0]), "%s", err);
		}
	}
	for (int i = 0; i < SL_TASK_NTYPES; i++)
		if (!ts->supported[i])
			sl_warn(MOD, "%s unavailable: %s", sl_task_type_name(i), ts->why[i]);
}

json_t *sl_tasks_capabilities(struct sl_tasks *ts)
{
	json_t *arr = json_array();
	static const char *const details[SL_TASK_NTYPES] = {
		"perf_event sampling on every CPU, kernel+user stacks aggregated in BPF",
		"sched_switch/sched_wakeup: time off CPU by stack, blocked vs runqueue",
		"raw_syscalls:sys_exit: failed calls counted by (syscall, errno) in BPF",
	};
	static const char *const formats_prof[] = {"pprof", "folded", "svg", "json", "html"};
	for (int i = 0; i < SL_TASK_NTYPES; i++) {
		json_t *o = json_pack("{s:s, s:b, s:s}", "type", sl_task_type_name(i), "supported",
				      ts->supported[i], "details", details[i] ? details[i] : sl_kprof_details(i));
		if (!ts->supported[i])
			json_object_set_new(o, "reason", json_string(ts->why[i]));
		json_t *f = json_array();
		if (i == SL_TASK_SYSCALL_ERRORS)
			json_array_append_new(f, json_string("json"));
		else
			for (size_t k = 0; k < sizeof(formats_prof) / sizeof(formats_prof[0]); k++)
				json_array_append_new(f, json_string(formats_prof[k]));
		json_object_set_new(o, "result_formats", f);
		if (i == SL_TASK_PROFILE_ON_CPU)
			json_object_set_new(o, "event", json_string(ts->event_on_cpu));
		json_array_append_new(arr, o);
	}
	const struct sl_tasks_config *c = &ts->cfg;
	return json_pack("{s:o, s:{s:I, s:f, s:f, s:f, s:i, s:i, s:I}, s:[ssss]}", "task_types", arr, "limits",
			 "max_concurrent_tasks", (json_int_t)c->max_concurrent, "max_duration_s",
			 (double)c->lim.max_duration_ns / 1e9, "default_duration_s",
			 (double)c->lim.default_duration_ns / 1e9, "deadline_grace_s", (double)c->grace_ns / 1e9,
			 "default_hz", (int)c->lim.default_hz, "max_hz", (int)c->lim.max_hz, "active_tasks",
			 (json_int_t)sl_tasks_active(ts), "targets", "container", "pod", "pid", "tid");
}
