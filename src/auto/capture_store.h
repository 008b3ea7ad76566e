/* Capture records in SQLite (docs/AUTO.md "Store"): a file of their own
 * (auto.store_path, default captures.db next to store.path), created 0600
 * with O_EXCL|O_NOFOLLOW and opened with SQLITE_OPEN_NOFOLLOW, like the
 * task store. Table captures(id, created_ns, container_id, detector,
 * status, json). Thread-safe (one mutex around the connection). */
#ifndef SANDLENS_AUTO_CAPTURE_STORE_H
#define SANDLENS_AUTO_CAPTURE_STORE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct sl_capture_store;

/* Open or create. NULL with the reason in err. */
struct sl_capture_store *sl_capture_store_open(const char *path, char *err, size_t errlen);
void sl_capture_store_close(struct sl_capture_store *s);

/* Insert or replace the record (its "id", "created_ns"-free copy is
 * stored as given). 0 or -EIO. */
int sl_capture_store_put(struct sl_capture_store *s, const char *id, int64_t created_ns, const char *container,
			 const char *detector, const char *status, const json_t *rec);
/* The record (new reference) or NULL. */
json_t *sl_capture_store_get(struct sl_capture_store *s, const char *id);
/* Newest first, at most limit; container NULL = all, else ids starting
 * with it. New reference (array). */
json_t *sl_capture_store_list(struct sl_capture_store *s, const char *container, const char *detector,
			      size_t limit);
/* Keep the newest max records. Returns how many were deleted. */
int sl_capture_store_trim(struct sl_capture_store *s, size_t max);

#endif
