/* The OTLP logs cursor kept across agent restarts: the store epoch and the
 * last event id a receiver accepted, in a small text file next to the store
 * (docs/EXPORT.md). Format, three lines:
 *   sandlens-otlp-cursor 1
 *   store_epoch <16 hex digits>
 *   after_id <decimal>
 * Written atomically (a new O_EXCL|O_NOFOLLOW 0600 file in the same
 * directory, then rename(2)); read non-blocking, regular files only, never
 * through a symlink, at most 4 KiB. */
#ifndef SANDLENS_EXPORT_CURSOR_FILE_H
#define SANDLENS_EXPORT_CURSOR_FILE_H

#include <stddef.h>
#include <stdint.h>

/* Read path. Returns 1 with *epoch and *after_id set, 0 when there is no
 * file (ENOENT), -EINVAL when it is not a cursor file (why in err),
 * -errno when it cannot be read (a symlink: -ELOOP; not regular: -EINVAL). */
int sl_export_cursor_load(const char *path, uint64_t *epoch, int64_t *after_id, char *err, size_t errlen);

/* Write path (replacing it). after_id >= 0. 0, or -errno. */
int sl_export_cursor_save(const char *path, uint64_t epoch, int64_t after_id);

#endif
