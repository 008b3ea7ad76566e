/* The one cgroup-tree walker (issue 9 item 3): attribution's id -> path
 * search (attr_cache.c), the statistics collector's pass (stats/build.c)
 * and task targets (task/target.c) all walk cgroup hierarchies with it, so
 * they agree on how deep a container may be nested.
 *
 * Depth-first, iterative (an explicit stack, no recursion), every directory
 * opened with openat(parent, name, O_RDONLY|O_DIRECTORY|O_NOFOLLOW) and read
 * with fdopendir: a symbolic link is never followed (a cgroup tree is
 * kernel-made and has none, a fixture tree or a hostile bind mount might).
 * A directory that is the same (st_dev, st_ino) as one of its ancestors (a
 * bind mount of a cgroup onto its own descendant) is not entered.
 * A directory with st_nlink 2 on a filesystem whose directory link count
 * is 2 + its subdirectories (kernfs: kernfs_refresh_inode sets it from
 * kn->dir.subdirs; tmpfs; ext2/3/4) and on the root's device has no
 * subdirectory and is not listed (the leaf rule of find(1)): most of a
 * cgroup tree's directories are leaves with 30-40 files each, and listing
 * them was most of a statistics pass's getdents64 time. A subdirectory
 * made after the fstat is seen by the next walk, as one made after the
 * listing would be.
 *
 * Bounds, each one counted in struct sl_cgwalk_stats when it is hit:
 *   depth     SL_CGWALK_MAX_DEPTH levels below the walk root. Real
 *             hierarchies are shallow: systemd puts a container at
 *             /system.slice/docker-<id>.scope (2), Kubernetes at
 *             /kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid>.slice/
 *             cri-containerd-<id>.scope (4), nested runtimes (docker-in-
 *             docker, podman's /container child, cgroups made by the
 *             workload itself) add a few more: all < 16. The bound is there
 *             against a hostile or runaway tree (the kernel allows
 *             cgroup.max.depth levels, unlimited by default), and 128 is
 *             8x the deepest real one, so nothing real is cut.
 *             At most depth + 1 directory descriptors are open at once.
 *   dirs      SL_CGWALK_MAX_DIRS directories per walk (opts.max_dirs).
 *   path      SL_CGWALK_PATH_MAX bytes of root + relative path (PATH_MAX:
 *             what open(2) accepts).
 * A bound never fails the walk: what lies beyond it is left out, counted,
 * and the caller reports it.
 */
#ifndef SANDLENS_CGROUP_CGWALK_H
#define SANDLENS_CGROUP_CGWALK_H

#include <stddef.h>
#include <stdint.h>

#define SL_CGWALK_MAX_DEPTH 128
#define SL_CGWALK_MAX_DIRS 200000
#define SL_CGWALK_PATH_MAX 4096

/* What the callback returns for a directory. */
enum sl_cgwalk_ret {
	SL_CGWALK_DESCEND = 0, /* visit its subdirectories too */
	SL_CGWALK_SKIP = 1,    /* not its subdirectories */
	SL_CGWALK_STOP = 2,    /* end the walk now */
};

/* One directory, valid only during the callback. */
struct sl_cgwalk_ent {
	const char *abs;    /* root + rel, NUL-terminated */
	const char *rel;    /* relative to the walk root: "" for the root, else "/a/b" */
	const char *name;   /* last component; "" for the root */
	int depth;          /* 0 = the root, 1 = its children, ... */
	uint64_t ino;       /* st_ino: the cgroup id on a cgroup mount (kernfs node id) */
	int fd;             /* the directory itself, open O_RDONLY|O_DIRECTORY (openat base) */
	const void *parent; /* the parent's ctx slot; NULL for the root (or a parent not visited) */
	void *ctx;          /* opts.ctx_size zeroed bytes the callback may fill; its
			     * subdirectories get them as `parent` (NULL if ctx_size 0) */
};

typedef int (*sl_cgwalk_fn)(const struct sl_cgwalk_ent *e, void *arg);

struct sl_cgwalk_opts {
	int visit_root;    /* 1: call fn for the root too (depth 0) */
	int same_dev;      /* 1: do not enter directories on another st_dev than the root */
	size_t ctx_size;   /* bytes of per-directory state for fn (0 = none) */
	uint64_t max_dirs; /* 0 = SL_CGWALK_MAX_DIRS */
	int max_depth;     /* 0 or more than SL_CGWALK_MAX_DEPTH = SL_CGWALK_MAX_DEPTH */
};

/* What one walk saw and what its bounds left out. */
struct sl_cgwalk_stats {
	uint64_t dirs;       /* directories passed to fn */
	uint64_t depth_cut;  /* subdirectories not visited: deeper than max_depth */
	uint64_t dirs_cut;   /* 1 when the walk ended at max_dirs with directories left */
	uint64_t path_cut;   /* subdirectories not visited: path over SL_CGWALK_PATH_MAX */
	uint64_t symlinks;   /* entries that are symbolic links (not followed) */
	uint64_t loops;      /* directories equal to an ancestor (not entered) */
	uint64_t other_dev;  /* directories on another filesystem (same_dev; not entered) */
	uint64_t unreadable; /* directories that could not be opened or read */
	uint64_t leaves;     /* directories not listed: st_nlink 2 says they have no
			      * subdirectory (cgroupfs, tmpfs, ext2/3/4 count them) */
	int stopped;         /* fn returned SL_CGWALK_STOP */
};

/* Total of the bound counters (depth_cut + dirs_cut + path_cut): non-zero
 * means the walk did not see the whole tree. */
uint64_t sl_cgwalk_cut(const struct sl_cgwalk_stats *st);

/* Walk the tree under root (a directory; followed if it is a symlink, as
 * a configured mount point may be). fn gets every directory below it (and
 * the root with opts.visit_root), parents before children; o may be NULL
 * (defaults), st may be NULL. Returns 0 (also when a bound was hit or fn
 * stopped), -errno when root cannot be opened, -ENAMETOOLONG when root
 * itself is too long, -ENOMEM, -EINVAL (NULL root or fn). */
int sl_cgwalk(const char *root, const struct sl_cgwalk_opts *o, sl_cgwalk_fn fn, void *arg,
	      struct sl_cgwalk_stats *st);

#endif
