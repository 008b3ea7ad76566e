/* Workload statistics (STATS-2..5): the collector, its published snapshots,
 * the API answers and the Prometheus families built on the cgroup readers
 * of src/cgroup/cgstat.h.
 *
 * Flow (docs/STATS.md, "Collector"):
 *   collector thread, every interval:
 *     walk the cgroup hierarchies (v2 mount; on v1/hybrid hosts also the v1
 *     memory hierarchy) -> attribute every directory with the pure path
 *     rules (sl_cgpath_parse_opts) and the collector's own runc index ->
 *     one entry per container (its topmost cgroup directory) ->
 *     read it (sl_cgstat_read_v2, or sl_cgstat_read_v1 on v1/hybrid hosts)
 *     -> group into workloads (container, pod, sandbox) and sum ->
 *     epochs (carried from the previous snapshot by cgroup identity) ->
 *     render the Prometheus text -> publish the immutable snapshot with
 *     rcu_assign_pointer (liburcu, bulletproof flavour), wait for readers
 *     of the old one (synchronize_rcu) and free it.
 *   readers (API threads): rcu_read_lock, rcu_dereference, answer,
 *     rcu_read_unlock. They never take the collector's mutex.
 *
 * Source: every figure comes from the host cgroup (JSON `source: "cgroup"`).
 */
#ifndef SANDLENS_STATS_STATS_H
#define SANDLENS_STATS_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#include "cgroup/attr.h"
#include "cgroup/k8s_names.h"
#include "cgroup/cgstat.h"
#include "cgroup/cgwalk_cache.h"
#include "common/gzpart.h"

#define SL_STATS_PATH_LEN 512
#define SL_STATS_EPOCH_LEN 17 /* 16 hex digits + NUL */

/* ------------------------------------------------------------- sums */

/* Known bits of struct sl_stats_sum. */
enum {
	SL_SUM_CPU_USAGE = 1u << 0,
	SL_SUM_CPU_USER = 1u << 1,
	SL_SUM_CPU_SYSTEM = 1u << 2,
	SL_SUM_CPU_PERIODS = 1u << 3,
	SL_SUM_CPU_THROTTLED = 1u << 4,
	SL_SUM_CPU_THROTTLED_TIME = 1u << 5,
	SL_SUM_MEM_USAGE = 1u << 6,
	SL_SUM_MEM_WS = 1u << 7,
	SL_SUM_MEM_PEAK = 1u << 8,
	SL_SUM_MEM_CACHE = 1u << 9,
	SL_SUM_MEM_RSS = 1u << 10,
	SL_SUM_MEM_SWAP = 1u << 11,
	SL_SUM_OOM = 1u << 12,
	SL_SUM_OOM_KILL = 1u << 13,
	SL_SUM_IO_BYTES = 1u << 14,
	SL_SUM_IO_OPS = 1u << 15,
	SL_SUM_PIDS = 1u << 16,
	SL_SUM_ALL = (1u << 17) - 1,
};

/* Sum of the figures of the containers of a workload that could be read.
 * Units as in struct sl_cgstat (µs, bytes, counts). A figure is known
 * (bit set) only when every container that was read knows it: a figure
 * that only some containers report would be a silent undercount, so it is
 * reported as unknown instead. peak is the sum of per-container peaks: an
 * upper bound on the peak of the sum (containers need not peak at once);
 * exact for one container. nread: containers summed. */
struct sl_stats_sum {
	uint32_t known; /* SL_SUM_* */
	uint32_t nread;
	uint64_t cpu_usage_usec, cpu_user_usec, cpu_system_usec;
	uint64_t cpu_nr_periods, cpu_nr_throttled, cpu_throttled_usec;
	uint64_t mem_usage_bytes, mem_working_set_bytes, mem_peak_bytes;
	uint64_t mem_cache_bytes, mem_rss_bytes, mem_swap_bytes;
	uint64_t oom_events, oom_kill_events;
	uint64_t io_rbytes, io_wbytes, io_rios, io_wios;
	uint64_t pids_current;
};

/* Start an empty sum (nothing read, every figure still "known so far"). */
void sl_stats_sum_init(struct sl_stats_sum *s);

/* Add one container's figures (a container that was read). A figure the
 * container does not know makes the sum's figure unknown. */
void sl_stats_sum_add(struct sl_stats_sum *s, const struct sl_cgstat *st);

/* Close the sum: with nread == 0 every figure is unknown (the sample
 * failed: no container could be read). */
void sl_stats_sum_finish(struct sl_stats_sum *s);

/* --------------------------------------------------------- snapshot */

enum sl_wl_kind { SL_WL_POD = 0, SL_WL_SANDBOX = 1, SL_WL_CONTAINER = 2, SL_WL_NKINDS };
/* "pod" | "sandbox" | "container" */
const char *sl_wl_kind_name(int kind);

/* One container: its topmost cgroup directory (a directory whose nearest
 * container ancestor has a different id, or none). */
struct sl_stats_ctr {
	char id[SL_CONTAINER_ID_LEN];
	char runtime[SL_RUNTIME_LEN];
	char pod_uid[SL_POD_UID_LEN];
	char qos[SL_QOS_LEN];
	/* id of the nearest enclosing container cgroup with a different id
	 * (the sandbox this container runs in), "" when none */
	char sandbox_id[SL_CONTAINER_ID_LEN];
	char path[SL_STATS_PATH_LEN]; /* relative to the hierarchy roots, "/..." */
	/* 1: a sandbox's overhead cgroup (kata_overhead/<id>, path rules kind
	 * "overhead"; id = the sandbox id): a member of that sandbox's
	 * workload, never a container workload or container series */
	int overhead;
	uint64_t ino_v2, ino_v1;      /* directory inode (= cgroup id) per hierarchy, 0 = absent */
	uint64_t ident;               /* hash of (ino_v2, ino_v1): the epoch identity */
	char epoch_id[SL_STATS_EPOCH_LEN];
	int64_t epoch_start_ns; /* wall ns: directory st_ctime when first seen (its creation) */
	int read_rc;            /* 0 read, else -errno from the reader or -ENODATA (no file readable) */
	/* Kubernetes names (k8s_names.h): carried from the previous pass for
	 * the same container and cgroup; while not found, looked up again no
	 * sooner than names_next_ns (wall ns; backoff 1 s doubling to 60 s) */
	struct sl_k8s_names names;
	int names_found;
	int64_t names_next_ns, names_backoff_ns;
	struct sl_cgstat st;    /* valid when read_rc == 0 */
};

/* Workload states (what the API answers). */
enum sl_wl_state {
	SL_WLS_READY = 0,    /* at least one container read: 200 */
	SL_WLS_NO_CGROUP,    /* exists, no container cgroup yet: 409 FAILED_PRECONDITION */
	SL_WLS_UNREADABLE,   /* containers exist but none could be read: 503 FAILED_PRECONDITION */
};

struct sl_stats_wl {
	int kind; /* enum sl_wl_kind */
	char id[SL_CONTAINER_ID_LEN];
	int state; /* enum sl_wl_state */
	uint32_t first, n; /* members: snap->members[first .. first+n) index snap->ctr */
	struct sl_stats_sum sum;
	uint64_t member_hash;
	char epoch_id[SL_STATS_EPOCH_LEN];
	int64_t epoch_start_ns;
};

/* A workload seen in an earlier snapshot and gone now (cgroups removed):
 * "tearing down" for the grace period, then not found. */
struct sl_stats_gone {
	int kind;
	char id[SL_CONTAINER_ID_LEN];
	int64_t gone_ns; /* wall ns of the pass that no longer found it */
};

/* An id that runc's state root lists but whose cgroup was not found. */
struct sl_stats_pending {
	char id[SL_CONTAINER_ID_LEN];
};

/* Immutable once published. */
struct sl_stats_snap {
	uint64_t seq;        /* pass number, from 1 */
	int64_t observed_ns; /* wall ns at the start of the pass */
	uint64_t duration_ns; /* walk + read + group (before rendering) */
	int cg_version;      /* 2: read with the v2 reader; 1: v1/hybrid reader */
	size_t nctr;
	struct sl_stats_ctr *ctr; /* sorted by path */
	size_t nwl;
	struct sl_stats_wl *wl;   /* sorted by (id, kind) */
	uint32_t *members;
	size_t ngone;
	struct sl_stats_gone *gone;
	size_t npending;
	struct sl_stats_pending *pending;
	uint64_t skipped; /* containers left out: max_containers reached */
	uint64_t dirs_walked;
	/* directories the walk's bounds left out (depth > SL_CGWALK_MAX_DEPTH,
	 * too many directories, path too long: src/cgroup/cgwalk.h) */
	uint64_t walk_cut;
	struct sl_stats_prom *prom; /* rendered Prometheus text (sl_stats_render_prom) */
	/* the hierarchy root (cAdvisor's id="/" series: the whole machine),
	 * read like a container with path ""; root.read_rc != 0: not read */
	struct sl_stats_ctr root;
	/* the machine (cAdvisor machine_*): online CPUs (sysconf
	 * _SC_NPROCESSORS_ONLN) and MemTotal of /proc/meminfo in bytes; 0 = unknown */
	uint64_t machine_cpus, machine_mem_bytes;
};

/* The Prometheus text of one snapshot, shared by reference with in-flight
 * /metrics responses (a response may outlive its snapshot). Immutable once
 * published; freed when the last reference is put. */
struct sl_stats_prom {
	atomic_uint refs;
	char *text; /* exposition format 0.0.4 */
	size_t len;
	/* text compressed once per pass as the leading part of a gzip member
	 * (common/gzpart.h); gz.z NULL when compression failed: serve plain */
	struct sl_gz_part gz;
};

/* Drop a reference; the last one frees. NULL-safe. */
void sl_stats_prom_put(struct sl_stats_prom *p);

void sl_stats_snap_free(struct sl_stats_snap *s);

/* The workload named id: pod uid first, then sandbox id, then container id.
 * NULL when none. */
const struct sl_stats_wl *sl_stats_snap_find(const struct sl_stats_snap *s, const char *id);
/* The shortest workload id prefix sl_stats_answer resolves (to the one
 * workload whose id starts with it; two or more: 400 ambiguous_id). */
#define SL_STATS_MIN_PREFIX 4

/* 1 when id is a well-formed workload id: 1..79 bytes of [A-Za-z0-9_.+-],
 * not starting with '.' or '-'. */
int sl_stats_id_valid(const char *id);

/* ------------------------------------------------- building (pure-ish) */

/* Where the hierarchies are. Empty string = not mounted. On hybrid hosts
 * v2 is the unified mount (PSI files only unless it has the memory
 * controller). */
struct sl_stats_mounts {
	char v2[256];
	char memory[256], cpu[256], cpuacct[256], blkio[256], pids[256];
	/* 1: read containers with the v2 reader (the v2 hierarchy has the memory
	 * controller, or there is no v1 memory hierarchy); 0: v1 reader. */
	int use_v2;
};

/* Fill *m from the agent's mount discovery (sl_cg_mounts_discover) and
 * decide use_v2 from <v2>/cgroup.controllers. */
void sl_stats_mounts_from(const struct sl_cg_mounts *cm, struct sl_stats_mounts *m);

struct sl_runc_index;

struct sl_stats_build_opts {
	const struct sl_stats_mounts *mounts;
	const struct sl_cgpath_opts *path_opts; /* may be NULL */
	struct sl_runc_index *runc;             /* may be NULL: no runc lookups (one snapshot per pass) */
	const char *runc_root;                  /* for pending ids; NULL/"" = none */
	size_t max_containers;                  /* 0 = 4096 */
	int64_t gone_grace_ns;                  /* how long a vanished workload is "tearing down" */
	long clk_tck;                           /* <= 0: sysconf */
	int64_t now_ns;                         /* wall clock of the pass; 0 = now */
	/* Kubernetes names: where the runtimes keep their state; NULL = no
	 * names looked up */
	const struct sl_k8s_roots *k8s_roots;
	/* descriptors kept across passes (cgroup/cgfd.h; NULL = open every
	 * file by path each pass); used only by the pass's thread */
	struct sl_cgfd_cache *fd_cache;
	/* walks replayed while inotify sees no mkdir/rmdir in the tree
	 * (cgroup/cgwalk_cache.h), [0] v2, [1] v1 memory; NULL = walk every
	 * pass; used only by the pass's thread */
	struct sl_cgwalk_cache *walk_cache[2];
};

/* One full pass: walk, read, group, epochs relative to prev (may be NULL),
 * tombstones. Does not render Prometheus text. Returns a new snapshot
 * (seq = prev seq + 1) or NULL when out of memory. */
struct sl_stats_snap *sl_stats_build(const struct sl_stats_build_opts *o,
				     const struct sl_stats_snap *prev);

/* Render s->prom (cAdvisor-compatible container_* families plus sandlens_*
 * families, docs/STATS.md "Prometheus") with one reference, held by s; the
 * text is also gzip-compressed at zlib level gz_level (1..9; 0 = do not).
 * Returns 0 or -ENOMEM (a failed compression is not an error: gz stays
 * empty). */
int sl_stats_render_prom(struct sl_stats_snap *s, int gz_level);

/* ------------------------------------------------------------ answers */

/* JSON object of one workload (the 200 body of /api/v1/workloads/{id}/stats):
 * figures, source, observed_at, containers_read/total, epoch, containers. */
json_t *sl_stats_wl_json(const struct sl_stats_snap *s, const struct sl_stats_wl *w);

/* {"observed_at", "workloads":[{id, kind, state, containers_read,
 * containers_total, epoch}...]} */
json_t *sl_stats_list_json(const struct sl_stats_snap *s);

/* An HTTP answer: status and a malloc'd JSON body. */
struct sl_stats_reply {
	unsigned status;
	char *body;
	size_t len;
};

/* The answer for id (a workload id, or a unique prefix of at least
 * SL_STATS_MIN_PREFIX characters) given the snapshot s (NULL = no pass
 * completed yet):
 *   400 INVALID_ARGUMENT      malformed id; reason "ambiguous_id": a prefix
 *                             of two or more workloads
 *   503 FAILED_PRECONDITION   reason "collector_not_ready": no snapshot yet
 *   200                       the workload's figures
 *   409 FAILED_PRECONDITION   reason "no_cgroup": it exists (pod cgroup, runc
 *                             state) but no container cgroup was found yet
 *   503 FAILED_PRECONDITION   reason "unreadable": no container could be read
 *   503 FAILED_PRECONDITION   reason "tearing_down": its cgroups were removed
 *                             within the grace period
 *   404 NOT_FOUND             no such workload on this node
 * Returns 0, or -ENOMEM (r->body NULL). */
int sl_stats_answer(const struct sl_stats_snap *s, const char *id, struct sl_stats_reply *r);

/* The answer for GET /api/v1/workloads given s: 200 with
 * sl_stats_list_json, or 503 FAILED_PRECONDITION "collector_not_ready" when
 * s is NULL. Returns 0 or -ENOMEM. */
int sl_stats_list_answer(const struct sl_stats_snap *s, struct sl_stats_reply *r);

/* {"error":{"code":code,"message":msg[,"reason":reason]}} (malloc'd). */
char *sl_stats_error_body(const char *code, const char *reason, const char *msg, size_t *len);

/* ---------------------------------------------------------- collector */

struct sl_stats_config {
	uint64_t interval_ms;     /* between passes; default 1000 */
	size_t max_containers;    /* default 4096 */
	char runc_root[256];      /* "" = none (pending ids; the index below) */
	/* the agent's shared runc index (not owned); NULL with runc_root set:
	 * the collector makes its own (tests) */
	struct sl_runc_index *runc;
	struct sl_cgpath_opts path_opts;
	char mountinfo[256];      /* "" = /proc/self/mountinfo (only without cg_mounts) */
	const struct sl_cg_mounts *cg_mounts; /* the agent's discovery (copied); NULL: discover */
	const struct sl_stats_mounts *mounts; /* non-NULL: use these (tests) */
	/* look up Kubernetes names (k8s_names.h) in these roots; NULL = none */
	const struct sl_k8s_roots *k8s_roots;
	/* the guest-agent source (stats/guest.h); NULL = disabled
	 * (stats.guest.enabled: false), copied */
	const struct sl_guest_config *guest;
};

struct sl_stats;

/* Create the collector (no thread yet). NULL on allocation failure. */
struct sl_stats *sl_stats_new(const struct sl_stats_config *cfg);
/* Start the collector thread (first pass immediately). 0 or -errno. */
int sl_stats_start(struct sl_stats *c);
/* Stop and join the thread (no-op if not started). */
void sl_stats_stop(struct sl_stats *c);
/* Stop, then free every snapshot. NULL is a no-op. */
void sl_stats_free(struct sl_stats *c);
/* Pressure step 1: passes run every factor x interval_ms from the next
 * pass on (factor 1 = as configured; 0 is taken as 1). Counters read from
 * cgroup files are cumulative, so a slower pass loses no count, only
 * resolution. Any thread; c NULL is a no-op. */
void sl_stats_set_slowdown(struct sl_stats *c, unsigned factor);
/* Change the configured interval between passes (SIGHUP reload of
 * stats.interval; 0 is taken as 1000) from the next pass on. Any thread;
 * c NULL is a no-op. */
void sl_stats_set_interval(struct sl_stats *c, uint64_t interval_ms);
/* The current interval between passes in ms (interval_ms x factor); 0 for NULL. */
uint64_t sl_stats_interval_ms(struct sl_stats *c);
/* One pass now on the calling thread (takes the collector's mutex).
 * Returns 0 or -ENOMEM. */
int sl_stats_collect_now(struct sl_stats *c);

/* Read side, any thread, lock-free (RCU). c may be NULL (stats disabled:
 * 503 FAILED_PRECONDITION reason "disabled"). */
int sl_stats_api_workload(struct sl_stats *c, const char *id, struct sl_stats_reply *r);
int sl_stats_api_list(struct sl_stats *c, struct sl_stats_reply *r);
/* Sources of /api/v1/workloads/{id}/stats?source= */
enum sl_stats_source { SL_SRC_CGROUP = 0, SL_SRC_GUEST = 1, SL_SRC_AUTO = 2 };
/* "cgroup" | "guest_agent" | "auto" -> enum; -1 for anything else. */
int sl_stats_source_parse(const char *s);
/* The stats answer from the chosen source: SL_SRC_CGROUP as
 * sl_stats_api_workload; SL_SRC_GUEST the guest-agent source
 * (sl_guest_answer; 503 "disabled" without one); SL_SRC_AUTO the guest
 * source when id is a Kata sandbox in its state root, else the cgroup
 * source. Any thread; no lock of the collector. */
int sl_stats_api_workload_source(struct sl_stats *c, const char *id, int source,
				 struct sl_stats_reply *r);
struct sl_prom;
/* Write the Prometheus families of the current snapshot (its pre-rendered
 * text, copied to sl_prom_stream(p): p does not learn those families'
 * names) and the collector's own figures (/metrics uses sl_stats_prom_get
 * instead of this copy). c NULL: nothing. */
void sl_stats_write_metrics(struct sl_stats *c, struct sl_prom *p);
/* Only the collector's own figures (sandlens_stats_collections_total,
 * sandlens_stats_render_duration_seconds, sandlens_stats_exposition_bytes). */
void sl_stats_write_self_metrics(struct sl_stats *c, struct sl_prom *p);
/* A reference to the current snapshot's Prometheus text, taken inside an
 * RCU read section (the snapshot cannot be freed under it). The first call
 * for a snapshot renders and gzips the text (sl_stats_render_prom, ~5 ms at
 * 100 containers) under a mutex only renderers take; later calls only take
 * the reference. NULL when c is NULL, no pass has completed, or rendering
 * ran out of memory (counted as a failed collection). Put it with
 * sl_stats_prom_put. */
struct sl_stats_prom *sl_stats_prom_get(struct sl_stats *c);

/* Call fn(snapshot, ctx) on the current snapshot inside an RCU read
 * section (fn must not block or keep pointers into it: copy what it
 * needs). Returns 0, -ENODEV (c NULL), -EAGAIN (no pass completed yet).
 * Any thread (AutoTracing reads its inputs this way, src/auto). */
int sl_stats_visit(struct sl_stats *c, void (*fn)(const struct sl_stats_snap *s, void *ctx), void *ctx);

/* Test hooks: hold / release the collector's mutex (the one a pass runs
 * under) to show that readers never need it. */
void sl_stats_test_lock(struct sl_stats *c);
void sl_stats_test_unlock(struct sl_stats *c);

#endif
