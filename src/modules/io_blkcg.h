/* io module: the cgroup a block request is charged to (its blkcg: the
 * cgroup of rq->bio->bi_blkg->blkcg, as the kernel half reads it: kernfs
 * id + hierarchy id) as the cgroup pair attribution knows (v2 id, id in
 * the v1 hierarchy of attribution.v1_controller), so the hybrid rule of
 * docs/ATTRIBUTION.md resolves it (docs/IO.md "Attribution").
 *
 *   pure v2 (hierarchy 0)                 -> {id, 0}
 *   v1, the attribution controller's      -> {0, id}
 *   v1, another hierarchy (blkio on a     -> the directory of that id under
 *   hybrid host whose attribution uses       the blkio mount, found by a
 *   memory)                                  walk, then the same relative
 *                                            path on the v2 mount and on the
 *                                            attribution v1 mount: {st_ino
 *                                            there or 0, ...} (runc, systemd
 *                                            and the kubelet make one path
 *                                            in every hierarchy)
 *
 * The walks are bounded (src/cgroup/cgwalk.h) and cached: one lookup per
 * blkcg while it lives, a miss retried no sooner than retry_ns later.
 * Poll-loop thread only. */
#ifndef SANDLENS_MODULES_IO_BLKCG_H
#define SANDLENS_MODULES_IO_BLKCG_H

#include <stdint.h>

#include "cgroup/attr.h"

struct io_blkcg_cache;

/* A cache of at most cap entries (full: cleared) over mounts (copied).
 * NULL on ENOMEM. */
struct io_blkcg_cache *io_blkcg_new(const struct sl_cg_mounts *mounts, unsigned cap, uint64_t retry_ns);
void io_blkcg_free(struct io_blkcg_cache *c);

/* The cgroup pair of blkcg (hid, id) at now_ns (CLOCK_MONOTONIC) into
 * *v2 and *v1 (0 = none on that hierarchy); rel (may be NULL, len bytes)
 * gets its path relative to its hierarchy's mount when a walk found it.
 * Returns 1 when mapped, 0 when not (id 0, an unknown hierarchy, or not
 * found: both 0). */
int io_blkcg_pair(struct io_blkcg_cache *c, uint32_t hid, uint64_t id, uint64_t now_ns, uint64_t *v2,
		  uint64_t *v1, char *rel, size_t len);

/* Walks done since creation (a test checks the cache spares them). */
uint64_t io_blkcg_walks(const struct io_blkcg_cache *c);

#endif
