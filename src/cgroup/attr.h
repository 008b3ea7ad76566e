/* Attribution: cgroup path -> {runtime, container id, pod uid, QoS} (ATTR-1)
 * and the bounded cgroup-id cache in front of it (ATTR-2).
 *
 * The path rules are pure functions over strings (unit-tested against
 * ../shared/cases/cgroup_path and tests/unit/cases/cgroup_path). The cache
 * maps (hierarchy, cgroup id) to an attribution; it is owned by the poll-loop
 * thread and takes no locks.
 */
#ifndef SANDLENS_CGROUP_ATTR_H
#define SANDLENS_CGROUP_ATTR_H

#include <stddef.h>
#include <stdint.h>

enum sl_tristate { SL_NO = 0, SL_YES = 1, SL_UNKNOWN = -1 };

#define SL_RUNTIME_LEN 24
#define SL_CONTAINER_ID_LEN 80
#define SL_POD_UID_LEN 40
#define SL_QOS_LEN 16

#define SL_KIND_LEN 16

/* Kubernetes names (ATTR-5), bounded by what Kubernetes allows: a
 * namespace and a container name are DNS-1123 labels (<= 63 bytes), a pod
 * name a DNS-1123 subdomain (<= 253). An image reference is kept when it
 * is at most 511 bytes: the reference grammar (distribution/reference)
 * caps the name part at 255 (NameTotalLengthMax), a tag adds up to 129
 * (":" + 128) and a digest 72 ("@sha256:" + 64 hex), so every legal
 * name:tag@digest fits; a longer one is left out (the other names kept),
 * never cut. */
#define SL_K8S_NS_LEN 64
#define SL_K8S_POD_LEN 254
#define SL_K8S_CONTAINER_LEN 64
#define SL_K8S_IMAGE_LEN 512

/* A container's Kubernetes names as its runtime recorded them on the node
 * (src/cgroup/k8s_names.h, docs/ATTRIBUTION.md "Kubernetes names"). Each
 * is "" when not found: best effort, never guessed. */
struct sl_k8s_names {
	char ns[SL_K8S_NS_LEN];               /* pod namespace */
	char pod[SL_K8S_POD_LEN];             /* pod name */
	char container[SL_K8S_CONTAINER_LEN]; /* container name in the pod spec ("" for a sandbox) */
	char image[SL_K8S_IMAGE_LEN];         /* image reference as the runtime recorded it */
};

/* Result of attributing one cgroup. Empty strings mean "the path does not
 * say". runtime is one of: "docker", "containerd", "cri-o", "podman",
 * "runc", "kata", "ecs", "host" (a hierarchy root), "" (the path does not
 * name a runtime: bare-id containers under kubepods, systemd units, other
 * non-container cgroups; shared case cg19 requires "" for a systemd user
 * scope, so "systemd" is reported in `kind`, not in runtime). gVisor cannot
 * be told from a path (shared case cg18). Full rules: docs/ATTRIBUTION.md. */
struct sl_attr {
	int is_container; /* enum sl_tristate */
	char runtime[SL_RUNTIME_LEN];
	char container_id[SL_CONTAINER_ID_LEN];
	char pod_uid[SL_POD_UID_LEN]; /* k8s pod UID: dashed 8-4-4-4-12 lower case, or a static pod's 32 hex as is */
	char qos[SL_QOS_LEN];         /* "guaranteed" | "burstable" | "besteffort" | "" */
	/* What the cgroup is: "container", "overhead" (a sandbox's overhead
	 * cgroup, kata_overhead/<id>: is_container YES and container_id the
	 * sandbox id, so its events are the sandbox's, but it is not a
	 * container of its own), "conmon" (runtime monitor, not the
	 * workload), "pod" (pod-level cgroup), "systemd" (a plain
	 * slice/scope/service), "host" (root or another non-container cgroup),
	 * "deleted" (every line of a /proc/pid/cgroup file says deleted),
	 * "" (unknown). */
	char kind[SL_KIND_LEN];
	/* Kubernetes names of the container (not from the path: from the
	 * runtime's state, filled by the agent's pipeline and the statistics
	 * collector; all "" from the path rules) */
	struct sl_k8s_names names;
};

#define SL_RUNC_PARENTS_MAX 4
#define SL_RUNC_PARENT_LEN 128

/* Caller knowledge the path alone cannot give. runc_parents: cgroup paths
 * (absolute, no trailing '/', e.g. "/sandlens-test") whose direct children
 * are plain runc containers named by the child directory. Zeroed = none. */
struct sl_cgpath_opts {
	size_t n_runc_parents;
	char runc_parents[SL_RUNC_PARENTS_MAX][SL_RUNC_PARENT_LEN];
};

/* Attribute one bare cgroup path (as found under a cgroup mount, starting
 * with '/'). Always fills *out; returns 0, or -EINVAL for a NULL/empty path. */
int sl_cgpath_parse(const char *path, struct sl_attr *out);

/* Same as sl_cgpath_parse with caller options (opts may be NULL). */
int sl_cgpath_parse_opts(const char *path, const struct sl_cgpath_opts *opts,
			 struct sl_attr *out);

/* Attribute a whole /proc/<pid>/cgroup file (text, NUL-terminated): chooses
 * the line that carries identity (v1 controllers are preferred over a
 * 0:: line that points elsewhere on hybrid hosts). Returns 0 or -EINVAL. */
int sl_cgproc_parse(const char *text, struct sl_attr *out);

/* v1 controllers whose hierarchies the agent reads (statistics, sched, the
 * agent's own cgroup), each found by the same mountinfo pass. */
enum sl_cg_ctrl { SL_CG_MEMORY, SL_CG_CPU, SL_CG_CPUACCT, SL_CG_BLKIO, SL_CG_PIDS, SL_CG_NCTRL };
extern const char *const sl_cg_ctrl_names[SL_CG_NCTRL]; /* "memory", "cpu", ... */

/* Hierarchies the resolver walks, found from /proc/self/mountinfo (or given
 * for fixture trees in tests). Empty string = not mounted. The one mount
 * discovery of the agent: everything that needs a cgroup mount gets it from
 * the agent's copy (issue 9 item 3). */
struct sl_cg_mounts {
	char v2[256];        /* cgroup2 mount, e.g. /sys/fs/cgroup or /sys/fs/cgroup/unified */
	char v1[256];        /* v1 mount holding the chosen controller, e.g. /sys/fs/cgroup/memory */
	char v1_controller[32];
	int v1_hierarchy_id; /* from /proc/cgroups, -1 when unknown */
	uint64_t v2_root_id; /* st_ino of the v2 mount root */
	uint64_t v1_root_id;
	/* v1 mount of each enum sl_cg_ctrl controller ("" none; a controller
	 * co-mounted with another, e.g. cpu,cpuacct, has the same path) */
	char v1_ctrl[SL_CG_NCTRL][256];
};

/* Find the mounts from a mountinfo file (normally /proc/self/mountinfo)
 * for controller `v1_controller` (e.g. "memory"). Returns 0 (fields that
 * were not found are left empty) or -errno if the file cannot be read. */
int sl_cg_mounts_discover(const char *mountinfo_path, const char *v1_controller,
			  struct sl_cg_mounts *out);

/* Same, with the /proc/cgroups file named (for fixtures); cgroups_path NULL
 * or unreadable leaves v1_hierarchy_id at -1. */
int sl_cg_mounts_discover_ex(const char *mountinfo_path, const char *cgroups_path,
			     const char *v1_controller, struct sl_cg_mounts *out);

/* The parsing part of sl_cg_mounts_discover on mountinfo text in memory
 * (len bytes, need not be NUL-terminated): fills v2, v1 and v1_controller
 * only (no stat, no /proc/cgroups: ids 0, hierarchy id -1). Malformed lines
 * are skipped. Returns 0, -EINVAL (NULL text/out) or -ENOMEM. */
int sl_cg_mounts_parse(const char *text, size_t len, const char *v1_controller,
		       struct sl_cg_mounts *out);

struct sl_attr_cache_config {
	size_t capacity;          /* entries, default 4096 */
	uint64_t positive_ttl_ns; /* default 5 min */
	uint64_t negative_ttl_ns; /* default 30 s */
	/* min interval between two full walks of a hierarchy on misses; default 1 s */
	uint64_t rewalk_interval_ns;
	/* options for sl_cgpath_parse_opts (runc parents); zeroed = none */
	struct sl_cgpath_opts path_opts;
	/* Kubernetes names (sl_attr_cache_names): 0 = off; runc = the agent's
	 * runc index for bundle paths (may be NULL); roots = where the
	 * runtimes keep their state (NULL = sl_k8s_roots_default) */
	int names;
	struct sl_runc_index *runc;
	const struct sl_k8s_roots *roots;
};

struct sl_runc_index;
struct sl_k8s_roots;

struct sl_attr_cache_stats {
	uint64_t hits, misses, negative_hits, evictions, expired, rmdir_drops, walks;
	/* Kubernetes names: lookups that read the runtimes' files, and how
	 * many of them found names */
	uint64_t names_lookups, names_found;
	uint64_t walk_cut; /* directories the walks' bounds left out (cgwalk.h) */
	size_t entries;
};

struct sl_attr_cache;

/* hier: 0 = v2, 1 = v1 (enum sl_cg_hier in include/sandlens/common.h) */
struct sl_attr_cache *sl_attr_cache_new(const struct sl_attr_cache_config *cfg,
					const struct sl_cg_mounts *mounts);
void sl_attr_cache_free(struct sl_attr_cache *c);

/* Resolve (hier, id). now_ns is CLOCK_MONOTONIC. Fills *out (host when the
 * id is a hierarchy root; unknown with is_container = SL_UNKNOWN when the id
 * cannot be found) and, when path/pathlen given, the cgroup path ("" unknown).
 * Returns 1 if the id was found, 0 if not (negative entry). */
int sl_attr_cache_lookup(struct sl_attr_cache *c, int hier, uint64_t id, uint64_t now_ns,
			 struct sl_attr *out, char *path, size_t pathlen);

/* Hybrid rule (v1+v2 hosts, docs/ATTRIBUTION.md): resolve a task from both
 * ids it carries. v2_id = bpf_get_current_cgroup_id() (0 = not known),
 * v1_id = the task's cgroup in the v1 hierarchy of mounts->v1_controller
 * (0 = not known / pure v2). The first answer with is_container == SL_YES
 * wins, v2 before v1; otherwise the v2 answer if the v2 id was found, else
 * the v1 answer if found, else unknown. *hier_used (may be NULL) gets the
 * hierarchy whose answer was returned (-1 none). Returns 1 if the returned
 * answer was found, 0 otherwise. */
int sl_attr_cache_resolve(struct sl_attr_cache *c, uint64_t v2_id, uint64_t v1_id, uint64_t now_ns,
			  struct sl_attr *out, char *path, size_t pathlen, int *hier_used);

/* cgroup:cgroup_mkdir seen: remember id -> path (path relative to the mount). */
void sl_attr_cache_on_mkdir(struct sl_attr_cache *c, int hier, uint64_t id, const char *path,
			    uint64_t now_ns);
/* Grace of a removed cgroup's entry: what a container produced in its last
 * moments (scheduler samples read at the next tick, late events) still
 * resolves for this long after its rmdir. Cgroup ids are not reused. */
#define SL_ATTR_RMDIR_GRACE_NS (5ull * 1000000000ull)

/* cgroup:cgroup_rmdir seen (ATTR-2 churn defence): a negative entry is
 * dropped at once; a positive one answers for SL_ATTR_RMDIR_GRACE_NS more
 * (never longer than its TTL), sits at the LRU tail (evicted before any
 * live entry) and is then dropped without revalidation. Counted once per
 * entry, in rmdir_drops (not again as expired or evicted). */
void sl_attr_cache_on_rmdir(struct sl_attr_cache *c, int hier, uint64_t id, uint64_t now_ns);

/* Kubernetes names (ATTR-5) of the container at->container_id whose cgroup
 * is (hier, id), into at->names: from the entry of (hier, id) when it has
 * them for that container, else looked up in the runtimes' state
 * (k8s_names.h, on this thread: a few open() calls) and kept in the entry,
 * so they go with it (TTL, eviction, rmdir). A lookup that finds nothing
 * is retried no sooner than 1 s later, then 2, 4 ... up to 60 s (a
 * runtime writes its state around the cgroup's creation). at->names is
 * left all "" when names are off, at is not a container, or nothing was
 * found. Poll-loop thread, like every cache call. */
void sl_attr_cache_names(struct sl_attr_cache *c, int hier, uint64_t id, uint64_t now_ns, struct sl_attr *at);

void sl_attr_cache_get_stats(const struct sl_attr_cache *c, struct sl_attr_cache_stats *out);

#endif
