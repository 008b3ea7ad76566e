/* Plain runc containers: identity from runc's own state.
 *
 * A container started with plain `runc run/create` may be put in any
 * cgroupsPath the user chose (e.g. /mytest/web1), so no path rule can
 * recognise it. runc records it in <root>/<container id>/state.json
 * (default root /run/runc, `runc --root`), whose "cgroup_paths" object maps
 * each controller ("" for the unified hierarchy) to the absolute cgroup
 * directory. This index maps those directories back to the container id.
 *
 * One index per agent, shared by the poll-loop pipeline, the statistics
 * collector thread and the task threads (issue 9 item 3). Thread-safe:
 * the map is an immutable, reference-counted snapshot. A reader takes a
 * reference (sl_runc_index_get: a pointer copy and an atomic increment
 * under a mutex held for nothing else), looks up as often as it likes, and
 * puts it back; it never waits for a rebuild. A rebuild reads every
 * state.json into a new snapshot outside that mutex, on the thread that
 * found the index stale (others go on with the old snapshot: a trylock),
 * publishes it, and the old one is freed by its last reader.
 *
 * Freshness without polling: a snapshot is stale when the mtime of the root
 * directory changed (runc creates/removes one subdirectory per container;
 * one stat() per get), or, on a miss, when a container directory had no
 * state.json yet (runc mid-create), or when a bundle lookup
 * (sl_runc_snap_bundle) missed an id whose <root>/<id>/state.json has
 * appeared or changed (inode, size, mtime) since the snapshot read it:
 * runc writes it inside the container's directory, which the root's mtime
 * does not show, and a change of the root within one coarse timestamp tick
 * is invisible too. The missed ids (the last 8, for 10 s) are checked by
 * the next get, at most once per min-interval; an id runc does not have
 * costs one stat, no rebuild. Rebuilds are at most one per min-interval
 * (SL_RUNC_REBUILD_MIN_NS) whatever the churn.
 */
#ifndef SANDLENS_CGROUP_RUNC_STATE_H
#define SANDLENS_CGROUP_RUNC_STATE_H

#include <stddef.h>
#include <stdint.h>

struct sl_runc_index;
struct sl_runc_snap;

/* How long a deleted container (no longer listed by runc) still answers
 * lookups: what it did in its last moments — scheduler samples read at the
 * next tick, events still in flight — stays attributed to it. Container ids
 * name directories runc has removed; a new container reusing the same
 * cgroup directory replaces the entry at once. */
#define SL_RUNC_GONE_GRACE_NS (5ull * 1000000000ull)

/* Least time between two rebuilds (each reads every state.json): 10 ms
 * bounds the cost under container churn to 100 rebuilds/s, and is shorter
 * than runc's own create -> start path (runc init, namespaces, pivot_root),
 * so a new container's state is indexed before its first exec. */
#define SL_RUNC_REBUILD_MIN_NS (10ull * 1000000ull)

/* root: runc state root (copied). Returns NULL on allocation failure; a
 * missing root is fine (no containers). */
struct sl_runc_index *sl_runc_index_new(const char *root);
/* Free the index. Every snapshot taken from it must have been put first
 * (a snapshot reads the index's grace setting). NULL is a no-op. */
void sl_runc_index_free(struct sl_runc_index *ix);

/* A reference to the current snapshot, rebuilt first when stale (unless
 * another thread is rebuilding, or the last rebuild is younger than the
 * min-interval: then the current one). Any thread. NULL only when ix is
 * NULL or nothing could ever be allocated. Put it with sl_runc_snap_put. */
struct sl_runc_snap *sl_runc_index_get(struct sl_runc_index *ix);
/* Drop a reference; the last one frees the snapshot. NULL is a no-op. */
void sl_runc_snap_put(struct sl_runc_snap *s);
/* Container id whose state lists the absolute cgroup directory dir in the
 * snapshot s, written to id (NUL-terminated, truncated to idlen). Returns 1
 * found, 0 not found (a deleted container past its grace is not found).
 * Pure read: any number of threads at once. */
int sl_runc_snap_lookup(const struct sl_runc_snap *s, const char *dir, char *id, size_t idlen);

/* The bundle directory of container id (runc's "bundle=<dir>" label in its
 * state.json; an absolute path) in the snapshot s, written to bundle
 * (NUL-terminated). Returns 1 found, 0 not found or longer than len
 * (never cut). Only containers runc lists now. Any thread; a miss
 * records id so that the next sl_runc_index_get rebuilds when runc has
 * written its state since (a caller that missed may get again and retry). */
int sl_runc_snap_bundle(const struct sl_runc_snap *s, const char *id, char *bundle, size_t len);

/* 1 when runc is creating container id: <root>/<id>/ exists, its
 * state.json not yet (and s has no bundle for it). A names lookup that
 * missed then retries soon rather than after its backoff. Two stat()s. */
int sl_runc_snap_pending(const struct sl_runc_snap *s, const char *id);

/* get + lookup + put, with one retry through a rebuild when the miss may
 * be a container whose state.json was not written yet. Returns 1 found, 0
 * not found. Unreadable or malformed state files are skipped (counted in
 * sl_runc_index_errors). Any thread. */
int sl_runc_index_lookup(struct sl_runc_index *ix, const char *dir, char *id, size_t idlen);

struct sl_attr;
struct sl_cg_mounts;
/* The attribution fallback for a plain runc container, whose cgroup path
 * names no runtime (docs/ATTRIBUTION.md "Plain runc containers"): when *at
 * is not a container and path (relative to the hierarchy hier, enum
 * sl_cg_hier; -1 unknown) is not the root, look the directory
 * <mount><path> up in ix; found: at becomes container id (runc's id),
 * runtime "runc". Returns 1 when it did, else 0 (ix NULL: 0). The event
 * pipeline and the continuous profiler both call it. Any thread. */
int sl_runc_attr_fallback(struct sl_runc_index *ix, const struct sl_cg_mounts *m, const char *path, int hier,
			  struct sl_attr *at);

/* Index one state.json given as text (len bytes, need not be NUL-
 * terminated), as a rebuild does for each file: the directories of its
 * "cgroup_paths" map to its "id" (published as a new snapshot). Used by the
 * fuzzer and tests; entries stay until the next rebuild. Returns 0, -ENOMEM,
 * or -EINVAL when the text is not JSON or lacks "id"/"cgroup_paths"
 * (counted in sl_runc_index_errors). */
int sl_runc_index_add_state(struct sl_runc_index *ix, const char *buf, size_t len);

/* State files that could not be read or parsed, over the index's life. */
uint64_t sl_runc_index_errors(const struct sl_runc_index *ix);
/* Rebuilds done (published snapshots from state roots), over its life. */
uint64_t sl_runc_index_rebuilds(const struct sl_runc_index *ix);
/* For tests: the grace of deleted containers (ns; default
 * SL_RUNC_GONE_GRACE_NS) and the least time between rebuilds (ns; default
 * SL_RUNC_REBUILD_MIN_NS, 0 = none). Set before sharing the index. */
void sl_runc_index_set_grace(struct sl_runc_index *ix, uint64_t grace_ns);
void sl_runc_index_set_min_interval(struct sl_runc_index *ix, uint64_t ns);

/* Directories the current snapshot answers for (deleted ones in their
 * grace included). */
size_t sl_runc_index_size(struct sl_runc_index *ix);

#endif
