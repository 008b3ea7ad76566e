/* On-demand tasks (TASK-1..4): a whitelist of bounded BPF jobs run against
 * one target (container, pod, process or thread), each with its own BPF
 * object, links and maps, created when the task starts and destroyed when
 * it ends. Reference: docs/TASKS.md.
 *
 * Types (enum sl_task_type):
 *   profile_on_cpu        perf_event sampler, bpf/profile.bpf.c (PROF-1)
 *   profile_off_cpu       sched_switch/sched_wakeup, bpf/profile.bpf.c
 *                         (PROF-2, SCHED-4: blocked vs runqueue)
 *   trace_syscall_errors  raw_syscalls:sys_exit, bpf/syscall_errors.bpf.c
 *
 * Life of a task (threads):
 *   API thread  sl_tasks_create(): validates, checks the concurrency limit
 *               (at most max_concurrent tasks pending or running; one more
 *               is refused at once, -EBUSY -> 429 RESOURCE_EXHAUSTED), makes
 *               the record (status pending) and starts the task's runner.
 *   runner      resolves the target to cgroup ids / pids, opens, loads and
 *               attaches the BPF object (a failure fails this task only:
 *               status failed, reason), status running; every second
 *               refreshes the target (new cgroups, new pids -> symbolizer
 *               snapshots), publishes progress; at the end of duration
 *               reads the maps, tears the BPF object down, symbolizes,
 *               renders the results into the task store, status done.
 *               A cancel (DELETE, client loss of a follow task, shutdown)
 *               wakes it at once: teardown, status cancelled.
 *   reaper      one thread: every 250 ms enforces the deadline (TTL):
 *               a task still holding BPF objects after created + duration +
 *               deadline_grace has them destroyed by the reaper itself
 *               (status failed, reason "deadline exceeded"); joins
 *               finished runners; applies result retention.
 *
 * Teardown (sl_task_bpf_destroy via the task's bpf mutex) is idempotent and
 * is the only place a task's links and maps are destroyed; after it, the
 * agent holds no fd of the task's BPF object (checked by the chaos test).
 */
#ifndef SANDLENS_TASK_TASK_H
#define SANDLENS_TASK_TASK_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "cgroup/attr.h"

enum sl_task_type {
	SL_TASK_PROFILE_ON_CPU = 0,
	SL_TASK_PROFILE_OFF_CPU = 1,
	SL_TASK_SYSCALL_ERRORS = 2,
	/* memory and lock profiles (PROF-2): bpf/memprof.bpf.c, bpf/lockprof.bpf.c,
	 * src/task/task_kprof.c; docs/TASKS.md "Memory profiles", "Lock profiles" */
	SL_TASK_PROFILE_MEM_VIRTUAL = 3, /* mmap/brk/munmap syscall tracepoints */
	SL_TASK_PROFILE_PAGE_FAULTS = 4, /* exceptions:page_fault_user, sampled */
	SL_TASK_PROFILE_RESIDENT = 5,    /* kmem:rss_stat */
	SL_TASK_PROFILE_LOCK_KERNEL = 6, /* lock:contention_begin/end */
	SL_TASK_PROFILE_FUTEX = 7,       /* syscalls:sys_enter/exit_futex waits */
	SL_TASK_NTYPES
};

enum sl_task_status {
	SL_TS_PENDING = 0,
	SL_TS_RUNNING,
	SL_TS_DONE,
	SL_TS_FAILED,
	SL_TS_CANCELLED,
};

enum sl_target_kind {
	SL_TGT_CONTAINER = 0, /* container id, or a prefix of >= 4 characters */
	SL_TGT_POD = 1,       /* pod UID */
	SL_TGT_PID = 2,       /* a process (thread group) */
	SL_TGT_TID = 3,       /* one thread */
};

#define SL_TASK_ID_LEN 24

/* What the client asked for, validated (sl_task_spec_parse). */
struct sl_task_spec {
	int type;                 /* enum sl_task_type */
	int target_kind;          /* enum sl_target_kind */
	char target[SL_CONTAINER_ID_LEN]; /* container id/prefix or pod uid */
	uint32_t pid;             /* pid or tid targets */
	uint64_t duration_ns;     /* 0 = the configured default */
	uint32_t hz;              /* on-CPU sampling frequency; 0 = default */
	uint64_t min_off_cpu_ns;  /* off-CPU: shorter intervals are not counted; UINT64_MAX = default */
	uint32_t fault_period;    /* page faults: sample every N-th fault per CPU; 0 = default */
	int follow;               /* stream progress to the creating client, cancel on its loss */
};

/* "profile_on_cpu" | "profile_off_cpu" | "trace_syscall_errors" |
 * "profile_mem_virtual" | "profile_page_faults" | "profile_resident" |
 * "profile_lock_kernel" | "profile_futex"; NULL for an unknown value. */
const char *sl_task_type_name(int type);
/* The enum sl_prof_kind a profile task type produces; -1 for types that
 * are not profiles (trace_syscall_errors) or unknown. */
int sl_task_prof_kind(int type);

/* Page faults: default and largest sampling period (faults per sample). */
#define SL_TASK_FAULT_PERIOD_DEFAULT 16
#define SL_TASK_FAULT_PERIOD_MAX 1000000
/* Inverse of sl_task_type_name; -1 unknown. */
int sl_task_type_parse(const char *name);
/* "pending" | "running" | "done" | "failed" | "cancelled". */
const char *sl_task_status_name(int status);

/* Limits the spec parser applies (from the tasks: configuration). */
struct sl_task_limits {
	uint64_t max_duration_ns;
	uint64_t default_duration_ns;
	uint32_t default_hz, max_hz;
	uint64_t default_min_off_cpu_ns;
};

/* Parse and validate a POST /api/v1/tasks body (docs/TASKS.md):
 *   {"type": "...", "target": {"container": ID} | {"pod": UID} | {"pid": N}
 *    | {"tid": N}, "duration_s": 1..max (number, fractions allowed;
 *    default tasks.default_duration), "hz": 1..max_hz (on-CPU only),
 *    "min_off_cpu_us": >= 0 (off-CPU only), "fault_period": 1..1000000
 *    (profile_page_faults only; default SL_TASK_FAULT_PERIOD_DEFAULT),
 *    "follow": bool}
 * Unknown keys, a target with zero or more than one key, wrong types and
 * out-of-range values are errors. Defaults are applied (duration, hz,
 * min_off_cpu). Returns 0, or -EINVAL with "<field>: <reason>" in err. */
int sl_task_spec_parse(const json_t *body, const struct sl_task_limits *lim,
		       struct sl_task_spec *out, char *err, size_t errlen);

/* ---- the executor ---- */

struct sl_runc_index;

struct sl_tasks_config {
	size_t max_concurrent;      /* tasks.max_concurrent_tasks, default 4 */
	struct sl_task_limits lim;
	uint64_t grace_ns;          /* tasks.deadline_grace: deadline = duration + this */
	uint64_t retention_ns;      /* tasks.result_retention: finished records and results kept */
	size_t max_records;         /* tasks.max_results: finished records kept (oldest go first) */
	uint32_t stack_entries;     /* tasks.stack_entries: BPF stack map size */
	uint32_t count_entries;     /* tasks.count_entries: BPF counts map size */
	char db_path[512];          /* SQLite file of task records and results */
	struct sl_runc_index *runc; /* plain runc containers: the agent's shared index (not owned); NULL = none */
	struct sl_cg_mounts mounts; /* cgroup mounts (copied) */
	int v1_subsys_id;           /* css_set->subsys index of the v1 controller, -1 none */
	struct sl_symbolizer *sym;  /* shared symbolizer (owned by the caller); NULL = make one */
	const char *debuginfod_urls;  /* made symbolizer: tasks.debuginfod_urls, NULL/"" = off */
	const char *debuginfod_cache; /* tasks.debuginfod_cache */
	unsigned debuginfod_timeout_s;/* tasks.debuginfod_timeout */
	int no_probe_load;          /* tests: skip the load probe of the BPF objects */
	char sysctl_dir[256];       /* tests: kptr_restrict's directory; "" = /proc/sys/kernel */
};

struct sl_tasks;

/* Opens the task store (creates it; records of tasks left pending/running
 * by a previous agent become failed "agent restarted"), probes the
 * capabilities and starts the reaper thread. NULL + err on failure. */
struct sl_tasks *sl_tasks_new(const struct sl_tasks_config *cfg, char *err, size_t errlen);

/* Cancels every task with reason "agent shutting down" and refuses new
 * ones (503), without waiting. Called before the API stops, so that the
 * end of a follow stream does not become the recorded reason. NULL is
 * fine; sl_tasks_free() does it too. */
void sl_tasks_shutdown(struct sl_tasks *ts);

/* Waits up to timeout_ms until no task is pending or running (each ended
 * with its final record, which follow streams then send). Returns how many
 * are still active (0 = idle). NULL: 0. */
int sl_tasks_wait_idle(struct sl_tasks *ts, unsigned timeout_ms);

/* Cancels every task (reason "agent shutting down"), waits for their
 * teardown, stops the reaper, closes the store. NULL is fine. */
void sl_tasks_free(struct sl_tasks *ts);

/* GET /api/v1/capabilities body: {"task_types":[{type, supported,
 * reason?, details}], "limits":{...}}. New reference. */
json_t *sl_tasks_capabilities(struct sl_tasks *ts);

/* Create and start a task. id gets its id (SL_TASK_ID_LEN). Returns 0,
 * -EBUSY (max_concurrent tasks are active: RESOURCE_EXHAUSTED),
 * -ENOTSUP (type not supported on this kernel; reason in err),
 * -ESHUTDOWN (shutting down), -ENOMEM/-EAGAIN (thread). */
int sl_tasks_create(struct sl_tasks *ts, const struct sl_task_spec *spec, char *id, char *err,
		    size_t errlen);

/* The record of task id (docs/TASKS.md "Task record"), new reference;
 * NULL when unknown or deleted. */
json_t *sl_tasks_get(struct sl_tasks *ts, const char *id);

/* {"tasks":[records...]} newest first (live and stored). */
json_t *sl_tasks_list(struct sl_tasks *ts);

/* Cancel a pending or running task (reason given); the runner tears down
 * at once. No-op on finished tasks. Returns 0 or -ENOENT. */
int sl_tasks_cancel(struct sl_tasks *ts, const char *id, const char *reason);

/* DELETE: cancel if active, wait (<= 5 s) until its BPF objects are
 * destroyed, then forget the record and its results. 0 or -ENOENT. */
int sl_tasks_delete(struct sl_tasks *ts, const char *id);

/* Result of a finished task in format fmt ("pprof", "folded", "svg", "html",
 * "json"; NULL = json). kaddrs_visible: whether this caller may see kernel
 * addresses (sl_kaddrs_visible(NULL, caller has CAP_SYSLOG), evaluated per
 * request); 0 gives the pprof rendered with kernel addresses zeroed (the
 * other formats carry no addresses). *body malloc'd (*len bytes), *ctype static.
 * Returns 0; -ENOENT unknown task; -EAGAIN still pending/running;
 * -ENODATA failed or cancelled (no result); -EINVAL format not offered
 * by this task type (profiles: all four; syscall errors: json); -EIO
 * store read error. */
int sl_tasks_result(struct sl_tasks *ts, const char *id, const char *fmt, int kaddrs_visible,
		    char **body, size_t *len, const char **ctype);

/* Progress of a task for a follower: when the task's progress sequence
 * differs from *seq, *rec gets the current record (new reference), *seq
 * is updated and 1 is returned; 0 when nothing changed; -ENOENT unknown.
 * *final is set to 1 once the task has ended (the record is final). A task
 * already reaped from memory answers 1 with its stored (final) record:
 * callers stop at the first final record. */
int sl_tasks_progress(struct sl_tasks *ts, const char *id, uint64_t *seq, json_t **rec,
		      int *final);

/* Called (from runner and reaper threads, no task lock held) whenever some
 * task's progress changed, and at least every second while a task runs;
 * the API uses it to resume suspended follow streams. */
void sl_tasks_set_notify(struct sl_tasks *ts, void (*fn)(void *), void *ctx);

/* Active (pending or running) tasks now. */
size_t sl_tasks_active(struct sl_tasks *ts);

/* TEST ONLY (tests/unit/test_task_deadline.c); the agent never calls it.
 * on != 0: every runner that has attached its BPF object and is running
 * stops there (holding the object, waiting on ts->cond, no lock held) until
 * this is called with on = 0 or the executor shuts down, as a runner stuck
 * in the kernel or the symbolizer would. Its task can then only be ended by
 * the reaper's deadline (TASK-3): the reaper destroys the BPF object itself;
 * once released, the runner ends the task failed "deadline exceeded...".
 * Off by default; when off, runners behave exactly as without it. */
void sl_tasks_test_stall_runners(struct sl_tasks *ts, int on);

/* TEST ONLY (tests/unit/test_task_delete_race.c); the agent never calls it.
 * on != 0: sl_tasks_delete(), once its wait for the runner's teardown has
 * ended, waits (no lock held, at most 10 s) until the reaper has removed the
 * task from the registry before it goes on: the scheduling in which the
 * reaper wins the race against a DELETE. Off by default. */
void sl_tasks_test_delete_lets_reaper_win(struct sl_tasks *ts, int on);

#endif
