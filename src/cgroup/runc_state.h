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

/* root: runc state root (copied). Returns NULL on allocation failure; a
 * missing root is fine (no containers). */
struct sl_runc_index *sl_runc_index_new(const char *root);
void sl_runc_index_free(struct sl_runc_index *ix);

/* Container id whose state lists the absolute cgroup directory `dir`
 * (e.g. "/sys/fs/cgroup/unified/mytest/web1"), written to id (NUL-
 * terminated). Returns 1 found, 0 not found. Unreadable or malformed
 * state files are skipped (counted in sl_runc_index_errors). */
int sl_runc_index_lookup(struct sl_runc_index *ix, const char *dir, char *id, size_t idlen);

/* State files that could not be read or parsed, over the index's life. */
uint64_t sl_runc_index_errors(const struct sl_runc_index *ix);
/* Directories currently indexed. */
size_t sl_runc_index_size(const struct sl_runc_index *ix);

#endif
