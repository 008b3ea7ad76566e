/* Task records and results (OUT-1 "task records"): a SQLite file of its
 * own (tasks.store_path, default tasks.db next to store.path), separate
 * from the event store so that large result blobs never slow event writes.
 *
 * Schema (PRAGMA user_version 1, WAL):
 *   tasks(id TEXT PRIMARY KEY, created_ns INTEGER, ended_ns INTEGER,
 *         status TEXT, json TEXT)          -- the task record (docs/TASKS.md)
 *   results(task_id TEXT, format TEXT, body BLOB,
 *           PRIMARY KEY(task_id, format))  -- rendered results
 * Times are wall-clock ns since the Unix epoch. One connection, guarded by
 * a mutex: every call is safe from any thread (task runners, the reaper,
 * API threads). Writes are rare (a few per task).
 */
#ifndef SANDLENS_TASK_TASK_STORE_H
#define SANDLENS_TASK_TASK_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct sl_task_store;

/* Open or create (parent directory 0700, file 0600; a symlink at path is
 * refused, never followed). Records left
 * "pending" or "running" by an earlier agent become "failed" with reason
 * "agent restarted". NULL + err on failure. */
struct sl_task_store *sl_task_store_open(const char *path, char *err, size_t errlen);
void sl_task_store_close(struct sl_task_store *s);

/* Insert or replace the record of id. ended_ns 0 = not ended. 0 or -EIO. */
int sl_task_store_put(struct sl_task_store *s, const char *id, int64_t created_ns,
		      int64_t ended_ns, const char *status, const json_t *record);
/* Store one rendered result (body copied). 0 or -EIO. */
int sl_task_store_put_result(struct sl_task_store *s, const char *id, const char *fmt,
			     const void *body, size_t len);
/* The record of id (new reference) or NULL. */
json_t *sl_task_store_get(struct sl_task_store *s, const char *id);
/* Records, newest first, at most limit. New reference (array). */
json_t *sl_task_store_list(struct sl_task_store *s, size_t limit);
/* Result body (malloc'd) of (id, fmt). 0, -ENOENT, -EIO. */
int sl_task_store_get_result(struct sl_task_store *s, const char *id, const char *fmt, char **body,
			     size_t *len);
/* Remove the record and its results. 0, -ENOENT (no record: e.g. a
 * concurrent delete removed it first) or -EIO. */
int sl_task_store_delete(struct sl_task_store *s, const char *id);
/* Retention: remove ended records (and results) that ended before
 * now_ns - max_age_ns (max_age_ns 0 = no age limit), then the oldest ended
 * ones beyond max_records (0 = no count limit). Returns records removed or
 * -EIO. */
int sl_task_store_retain(struct sl_task_store *s, int64_t now_ns, uint64_t max_age_ns,
			 size_t max_records);

#endif
