/* Task targets -> what the BPF filter matches (docs/TASKS.md "Targets").
 *
 * A container or pod target is resolved by walking the cgroup hierarchies
 * (the v2 mount, and on v1/hybrid hosts the v1 hierarchy of
 * attribution.v1_controller) and attributing every directory with the path
 * rules (sl_cgpath_parse) or, for plain runc containers, runc's state
 * (sl_runc_index). A matching directory and all its descendants belong to
 * the target; their directory inode numbers are the cgroup ids the kernel
 * reports (kernfs ids, docs/ARCHITECTURE.md "Identity"). The walk is the
 * one cgroup walker (src/cgroup/cgwalk.h, depth bound SL_CGWALK_MAX_DEPTH);
 * it does not touch the poll loop's attribution cache.
 *
 * A pid/tid target is checked in /proc and attributed from
 * /proc/<pid>/cgroup.
 */
#ifndef SANDLENS_TASK_TARGET_H
#define SANDLENS_TASK_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include "cgroup/attr.h"

struct sl_runc_index;

/* Most cgroup directories one target may cover; more are left out (and
 * counted in sl_target_set.truncated). */
#define SL_TARGET_MAX_CG 1024
/* Topmost matching directories remembered for refreshes. */
#define SL_TARGET_MAX_ROOTS 64

struct sl_target_cg {
	uint64_t id;  /* directory inode = cgroup id */
	int hier;     /* enum sl_cg_hier: 0 v2, 1 v1 */
	char container_id[SL_CONTAINER_ID_LEN]; /* "" when the directory is a pod-level one */
};

struct sl_target_set {
	int kind;            /* 0 container, 1 pod */
	size_t n;
	struct sl_target_cg cg[SL_TARGET_MAX_CG];
	size_t nroots;
	char roots[SL_TARGET_MAX_ROOTS][512]; /* absolute paths of the topmost matches */
	int roots_hier[SL_TARGET_MAX_ROOTS];
	uint64_t truncated;  /* directories beyond SL_TARGET_MAX_CG */
	uint64_t walk_cut;   /* directories the walk's bounds left out (src/cgroup/cgwalk.h:
			      * deeper than SL_CGWALK_MAX_DEPTH, too many, path too long) */
	char container_id[SL_CONTAINER_ID_LEN]; /* the (first) matching container; "" for pods */
	char pod_uid[SL_POD_UID_LEN];
	size_t ncontainers;  /* distinct container ids matched */
};

struct sl_target_opts {
	const struct sl_cg_mounts *mounts;
	struct sl_runc_index *runc; /* the agent's shared runc index; NULL = no plain runc lookups */
};

/* Resolve a container (kind 0: id, or a prefix of >= 4 characters; a
 * prefix matching two different containers is an error) or pod (kind 1:
 * uid, exact, case-insensitive) target. Returns 0 (out filled, n >= 1),
 * -ENOENT (nothing matches; err says so), -EINVAL (ambiguous prefix, bad
 * id), -EIO (no cgroup mount). */
int sl_target_resolve(const struct sl_target_opts *o, int kind, const char *id,
		      struct sl_target_set *out, char *err, size_t errlen);

/* Walk the subtrees of s->roots again and add directories not yet in s
 * (cgroups created since). Returns the number added. */
size_t sl_target_refresh(const struct sl_target_opts *o, struct sl_target_set *s);

/* Pids (thread-group ids) currently in the target's directories, from
 * their cgroup.procs files, deduplicated, at most max. Returns the count. */
size_t sl_target_pids(const struct sl_target_opts *o, const struct sl_target_set *s,
		      uint32_t *pids, size_t max);

/* Container id of the cgroup id (either hierarchy) in s; "" when unknown. */
const char *sl_target_container_of(const struct sl_target_set *s, uint64_t cg2, uint64_t cg1);

/* Attribution of a process: container id of /proc/<pid>/cgroup under
 * proc_root (NULL = "/proc"), via the path rules, else runc state. Returns
 * 0 (id possibly ""), -ESRCH no such process. */
int sl_target_pid_container(const struct sl_target_opts *o, const char *proc_root, uint32_t pid,
			    char *id, size_t idlen);

#endif
