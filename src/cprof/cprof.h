/* Continuous profiling (PROF-5, docs/PROFILING.md "Continuous profiling").
 *
 * Always-on low-rate on-CPU sampling of every task (bpf/cprof.bpf.c, one
 * perf event per online CPU at profiling.continuous.hz), aggregated in the
 * kernel per (cgroup pair, tgid, user stack, kernel stack) into one of two
 * buffers. A thread of its own ends a window every
 * profiling.continuous.window: it flips the buffer, waits for an RCU grace
 * period, reads and clears the old buffer, symbolizes it (its own
 * symbolizer), splits it per container (pod-level cgroup, host) and stores
 * one gzip'd pprof per container per window (store/prof_store.h), then
 * applies retention by age and bytes. Every second it snapshots the
 * mappings of processes sampled for the first time in the window (so
 * processes that exit before the window ends still symbolize) and
 * resolves their cgroups (so containers that end before the window ends
 * are still attributed).
 *
 * Threads: sl_cprof_new / sl_cprof_free on the agent's main thread; the
 * query functions on any thread (API threads): they read the window store
 * only.
 */
#ifndef SANDLENS_CPROF_CPROF_H
#define SANDLENS_CPROF_CPROF_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "cgroup/attr.h"

struct sl_cprof;
struct sl_profile;
struct sl_runc_index;
struct sl_prom;

struct sl_cprof_config {
	uint32_t hz;             /* samples per second per CPU (profiling.continuous.hz, default 19) */
	uint64_t window_ns;      /* window length (profiling.continuous.window, default 10 s) */
	uint64_t max_age_ns;     /* retention by age, 0 = none */
	uint64_t max_bytes;      /* retention by bytes, 0 = none */
	uint32_t stack_entries;  /* stack map size per buffer */
	uint32_t count_entries;  /* counts map size per buffer */
	char db_path[600];       /* window store file */
	struct sl_cg_mounts mounts; /* the agent's cgroup mounts */
	int v1_subsys_id;        /* cgroup_subsys_id of attribution.v1_controller, -1 none */
	struct sl_runc_index *runc; /* the agent's runc index (thread-safe), NULL none */
	int attribution;         /* 0: windows are not split by container (all "host") */
	size_t attr_cache_size;  /* entries of this thread's attribution cache */
	int64_t mono_to_real_ns; /* wall = CLOCK_MONOTONIC + this */
};

/* Open the store, load and attach the sampler, start the window thread.
 * NULL with the reason in err (what failed and strerror); everything made
 * so far is undone (nothing stays attached). */
struct sl_cprof *sl_cprof_new(const struct sl_cprof_config *c, char *err, size_t errlen);

/* Stop the thread (the window in progress is ended and stored: nothing
 * sampled is lost), detach, free. NULL is fine. */
void sl_cprof_free(struct sl_cprof *cp);

/* End the current window now (tests, and a caller that wants the last
 * seconds stored). Returns once it is stored. 0 or -errno. */
int sl_cprof_flush(struct sl_cprof *cp);

/* What a query selects (= enum sl_pstore_scope). */
enum sl_cprof_scope { SL_CPROF_CONTAINER = 0, SL_CPROF_POD = 1, SL_CPROF_HOST = 2 };

/* The merged on-CPU profile of a container (id: exact, or a prefix of >= 4
 * characters matching one stored container), a pod (uid, exact) or the
 * whole host (id ignored), from every stored window overlapping
 * [since_ns, until_ns) (wall-clock ns; 0 = unbounded). start_ns and
 * duration_ns of the result cover the windows merged; *nwindows (may be
 * NULL) gets their number. Returns 0 and *out (sl_profile_free it), or
 * -ENOENT (no window; err says so), -EINVAL (ambiguous prefix), -EIO,
 * -ENOMEM. A stored window that does not decode is skipped and counted. */
/* The -ENOENT text of a query that found no window: names the selection
 * ("container 'ID'", "pod 'UID'", "the host") and the range as asked
 * ("at any time (no since/until given)", "since T", "before T",
 * "overlapping [T1, T2)", T in RFC 3339 UTC), and where to look (a pod is
 * selected by its exact uid).
 * err gets at most errlen bytes, NUL-terminated. */
void sl_cprof_none_msg(int scope, const char *id, int64_t since_ns, int64_t until_ns, char *err, size_t errlen);

int sl_cprof_query(struct sl_cprof *cp, int scope, const char *id, int64_t since_ns, int64_t until_ns,
		   struct sl_profile **out, size_t *nwindows, char *err, size_t errlen);

/* Baseline for other parts of the agent (issue 15, AutoTracing): the merged
 * symbolized on-CPU profile of container container_id (exact id or a
 * prefix of >= 4 characters) over the wall-clock range [from_ns, to_ns)
 * (ns since the Unix epoch), from the stored windows that overlap it
 * (window granularity: profiling.continuous.window). Returns 0 and *out
 * (sl_profile_free it), -ENOENT when no window overlaps (or continuous
 * profiling is off: cp NULL), -EINVAL (ambiguous prefix), -EIO, -ENOMEM.
 * Any thread. Inside the agent the handle is sl_read_cprof(a)
 * (agent/read.h), NULL when profiling.continuous.enabled is false or it
 * could not start. */
int sl_cprof_range(struct sl_cprof *cp, const char *container_id, uint64_t from_ns, uint64_t to_ns,
		   struct sl_profile **out);

/* The windows a query would merge, as JSON (new reference):
 * {"windows":[{"id","start","end","start_ns","end_ns","kind","container_id",
 * "pod_uid","runtime","samples","bytes"}...], "count"} oldest first, at
 * most limit (0 = 10000). NULL with *status (404 no such container, 400
 * ambiguous prefix, 500) and err. */
json_t *sl_cprof_windows_json(struct sl_cprof *cp, int scope, const char *id, int64_t since_ns, int64_t until_ns,
			      size_t limit, unsigned *status, char *err, size_t errlen);

/* /healthz "continuous_profiling" object (new reference): {"enabled",
 * "state", "reason"?, "hooks":[{name, state, reason?}], "event", "hz",
 * "window_seconds", "windows_stored", "last_window_end", "samples",
 * "lost":{...}, "store":{"path","used_bytes","file_bytes","windows",
 * "deleted_age","deleted_bytes"}}. cp NULL: enabled false / failed with
 * why (err_if_null). */
json_t *sl_cprof_health_json(struct sl_cprof *cp, int enabled, const char *err_if_null);

/* Agent CPU spent in the window thread (ns, CLOCK_THREAD_CPUTIME_ID at the
 * end of each window) and windows ended, for the benchmark and /healthz. */
void sl_cprof_cost(struct sl_cprof *cp, uint64_t *thread_cpu_ns, uint64_t *windows);

#endif
