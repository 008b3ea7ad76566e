/* Plain runc containers: identity from runc's own state.
 *
 * A container started with plain `runc run/create` may be put in any
 * cgroupsPath the user chose (e.g. /mytest/web1), so no path rule can
 * recognise it. runc records it in <root>/<container id>/state.json
 * (default root /run/runc, `runc --root`), whose "cgroup_paths" object maps
 * each controller ("" for the unified hierarchy) to the absolute cgroup
 * directory. This index maps those directories back to the container id.
 *
 * Freshness without polling: the index is rebuilt when the mtime of the root
 * directory changes (runc creates/removes one subdirectory per container),
 * checked with one stat() per lookup. Owned by one thread (the poll loop).
 */
#ifndef SANDLENS_CGROUP_RUNC_STATE_H
#define SANDLENS_CGROUP_RUNC_STATE_H

#include <stddef.h>
#include <stdint.h>

struct sl_runc_index;

/* How long a deleted container (no longer listed by runc) still answers
 * lookups: what it did in its last moments — scheduler samples read at the
 * next tick, events still in flight — stays attributed to it. Container ids
 * name directories runc has removed; a new container reusing the same
 * cgroup directory replaces the entry at once. */
#define SL_RUNC_GONE_GRACE_NS (5ull * 1000000000ull)

/* root: runc state root (copied). Returns NULL on allocation failure; a
 * missing root is fine (no containers). */
struct sl_runc_index *sl_runc_index_new(const char *root);
void sl_runc_index_free(struct sl_runc_index *ix);

/* Container id whose state lists the absolute cgroup directory `dir`
 * (e.g. "/sys/fs/cgroup/unified/mytest/web1"), written to id (NUL-
 * terminated). Returns 1 found, 0 not found. Unreadable or malformed
 * state files are skipped (counted in sl_runc_index_errors). */
int sl_runc_index_lookup(struct sl_runc_index *ix, const char *dir, char *id, size_t idlen);

/* Index one state.json given as text (len bytes, need not be NUL-
 * terminated), as a rebuild does for each file: the directories of its
 * "cgroup_paths" map to its "id". Used by the fuzzer and tests; entries
 * stay until the next rebuild. Returns 0, or -EINVAL when the text is not
 * JSON or lacks "id"/"cgroup_paths" (counted in sl_runc_index_errors). */
int sl_runc_index_add_state(struct sl_runc_index *ix, const char *buf, size_t len);

/* State files that could not be read or parsed, over the index's life. */
uint64_t sl_runc_index_errors(const struct sl_runc_index *ix);
/* For tests: the grace of deleted containers (ns; default
 * SL_RUNC_GONE_GRACE_NS). */
void sl_runc_index_set_grace(struct sl_runc_index *ix, uint64_t grace_ns);

/* Directories currently indexed (deleted ones in their grace included). */
size_t sl_runc_index_size(const struct sl_runc_index *ix);

#endif
