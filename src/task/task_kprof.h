/* The BPF side of the memory and lock profile tasks (PROF-2):
 * profile_mem_virtual, profile_page_faults, profile_resident
 * (bpf/memprof.bpf.c) and profile_lock_kernel, profile_futex
 * (bpf/lockprof.bpf.c). Used by task_bpf.c, which owns the handle inside
 * its struct sl_task_bpf; docs/TASKS.md "Memory profiles", "Lock profiles". */
#ifndef SANDLENS_TASK_KPROF_H
#define SANDLENS_TASK_KPROF_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct sl_kprof;
struct sl_raw_profile;
struct sl_profile;
struct sl_task_bpf_opts;

/* 1 when type (enum sl_task_type) is one of the five types here. */
int sl_kprof_is_type(int type);

/* Whether this kernel has the hooks of type: the tracepoints in tracefs
 * (syscalls:* for the syscall ones; tracefs at /sys/kernel/tracing or
 * /sys/kernel/debug/tracing) and the btf_trace_* types in the kernel BTF
 * (tp_btf ones). 0, or -ENOENT with the reason (which tracepoint, what it
 * needs) in why. */
int sl_kprof_check(int type, char *why, size_t len);

/* One line of what type does, for GET /api/v1/capabilities. */
const char *sl_kprof_details(int type);

/* Open, size, configure (filter kind, v1 subsystem, page size, fault
 * period), load only type's programs and, when attach, attach them.
 * Checks the hooks first (sl_kprof_check). NULL with the reason in err;
 * everything made so far destroyed. */
struct sl_kprof *sl_kprof_open(const struct sl_task_bpf_opts *o, int attach, char *err, size_t errlen);

/* The map fds task_bpf.c feeds and reads: filter maps and the per-CPU
 * stats (enum sl_kprof_stat, SL_KST_MAX entries). */
void sl_kprof_fds(const struct sl_kprof *k, int *pids, int *cg2, int *cg1, int *stats);

/* Hooks as the task record's "event": "mmap,munmap,brk", "page_fault_user",
 * "rss_stat", "contention_begin,contention_end", "futex". */
const char *sl_kprof_event(const struct sl_kprof *k);

/* The aggregates as a raw profile of the type's kind (prof_kinds.h):
 * page faults scaled here (sl_prof_pf_faults/_bytes: samples x period x
 * page size). container_of as for sl_task_bpf_read_profile. *dropped gets
 * the loss counters. NULL on ENOMEM. */
struct sl_raw_profile *sl_kprof_read(struct sl_kprof *k, uint64_t start_wall_ns, uint64_t duration_ns,
				     const char *(*container_of)(void *ctx, uint32_t tgid, uint64_t cg2,
								 uint64_t cg1),
				     void *ctx, json_t **dropped);

/* Add the kind's totals to a task result summary: "unit", "total_value",
 * "top_user_leaves_by_value" [{function, value}] (10 max), and for
 * mem_virtual "inuse_bytes"/"inuse_objects", page faults "fault_period",
 * "page_faults", resident "release_bytes". */
void sl_kprof_summarize(const struct sl_profile *p, json_t *summary);

/* Detach every link (counting stops), keep the maps. */
void sl_kprof_detach(struct sl_kprof *k);
/* Detach and free everything. NULL is fine. */
void sl_kprof_destroy(struct sl_kprof *k);

#endif
