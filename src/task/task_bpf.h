/* The BPF side of one task: open, configure, load and attach the task's own
 * object (bpf/profile.bpf.c or bpf/syscall_errors.bpf.c), keep its filter
 * maps current, read its aggregates once, destroy it. Every function takes
 * the handle of one task; none is shared between tasks. */
#ifndef SANDLENS_TASK_TASK_BPF_H
#define SANDLENS_TASK_TASK_BPF_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "task/target.h"

struct sl_task_bpf;
struct sl_raw_profile;
struct sl_symbolizer;
struct sl_prof_exec_val;

struct sl_task_bpf_opts {
	int type;               /* enum sl_task_type */
	int filter_kind;        /* enum sl_task_filter (include/sandlens/task_abi.h) */
	uint32_t hz;            /* on-CPU */
	uint64_t min_off_cpu_ns;/* off-CPU */
	uint32_t fault_period;  /* page faults: every N-th fault per CPU is sampled */
	uint32_t stack_entries; /* prof_stacks size; 0 = object default */
	uint32_t count_entries; /* prof_counts / sce_counts size; 0 = object default */
	int v1_subsys_id;       /* -1 none */
};

/* Open, size, load and attach. On-CPU: one perf event per online CPU,
 * hardware cycles (PERF_TYPE_HARDWARE/PERF_COUNT_HW_CPU_CYCLES) when the
 * PMU allows it, else software cpu-clock (PERF_COUNT_SW_CPU_CLOCK), both in
 * frequency mode at hz. Returns the handle, or NULL with the reason in err
 * (what failed and strerror), everything created so far destroyed. */
struct sl_task_bpf *sl_task_bpf_open(const struct sl_task_bpf_opts *o, char *err, size_t errlen);

/* "cycles" or "cpu-clock" (on-CPU), "sched_switch" (off-CPU), "sys_exit". */
const char *sl_task_bpf_event(const struct sl_task_bpf *b);

/* Put pid (tgid or tid filters) into the filter. 0 or -errno. */
int sl_task_bpf_add_pid(struct sl_task_bpf *b, uint32_t pid);
/* Put a cgroup id of hierarchy hier (0 v2, 1 v1) into the filter. */
int sl_task_bpf_add_cgroup(struct sl_task_bpf *b, uint64_t id, int hier);

/* Sum of the per-CPU counter idx (enum sl_prof_stat / sl_sce_stat). */
uint64_t sl_task_bpf_stat(struct sl_task_bpf *b, int idx);

/* Stack/count aggregates as a raw profile (profile types). container_of
 * maps a (v2, v1) cgroup pair to a container id (may be NULL); ctx is its
 * argument. *dropped gets the kernel-side loss counters ({counts_full,
 * user_stack_lost, kernel_stack_lost, short_intervals}). NULL on ENOMEM. */
struct sl_raw_profile *sl_task_bpf_read_profile(struct sl_task_bpf *b, uint64_t start_wall_ns,
						uint64_t duration_ns,
						const char *(*container_of)(void *ctx, uint32_t tgid,
									    uint64_t cg2, uint64_t cg1),
						void *ctx, json_t **dropped);

/* Files the target exec'd since the last call (map prof_execs, filled by
 * tp_btf/sched_process_exec: path as given to execve, the process and its
 * parent), at most max into out; each file is returned once per task. The
 * caller indexes them (sl_symbolizer_index_file) so that build-id frames
 * of processes that exited before anyone looked still symbolize. Returns
 * the count (0 for other task types). */
int sl_task_bpf_read_execs(struct sl_task_bpf *b, struct sl_prof_exec_val *out, int max);

/* trace_syscall_errors result: {"total_errors", "errors":[{syscall, nr,
 * errno, errno_name, count, example:{pid, comm}}...] sorted by count,
 * "dropped":{...}}. New reference. */
json_t *sl_task_bpf_read_syscall_errors(struct sl_task_bpf *b);

/* Detach every link (and close the perf events) but keep the maps, so
 * that the counts stop at the end of the task and can then be read. */
void sl_task_bpf_detach(struct sl_task_bpf *b);

/* Detach every link, close every perf event, free every map and program
 * of the object. NULL is fine. */
void sl_task_bpf_destroy(struct sl_task_bpf *b);

/* Load probe for the capabilities: open and load (no attach) the object of
 * type, then destroy it. 0 or -errno with the reason in err. */
int sl_task_bpf_probe(int type, int v1_subsys_id, char *err, size_t errlen);


#endif
