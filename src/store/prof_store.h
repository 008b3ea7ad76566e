/* Profile windows of continuous profiling (PROF-5, docs/PROFILING.md
 * "Continuous profiling"): one row per container (pod-level cgroup, host)
 * per window, the window's profile as gzip'd pprof. A SQLite file of its
 * own (profiling.continuous.store_path, default profiles.db next to
 * store.path): blobs written every window never slow event writes, and
 * the byte cap of one never evicts the other.
 *
 * Schema (PRAGMA user_version 1, WAL, auto_vacuum INCREMENTAL):
 *   windows(id INTEGER PRIMARY KEY, start_ns INTEGER, end_ns INTEGER,
 *           kind TEXT, container_id TEXT, pod_uid TEXT, runtime TEXT,
 *           samples INTEGER, body BLOB)
 * indexed on start_ns, (container_id, start_ns), (pod_uid, start_ns).
 * Times are wall-clock ns since the Unix epoch; a window is [start, end).
 * One connection under a mutex: every call is safe from any thread (the
 * window thread writes once per window, API threads read); readers copy
 * rows out and decode them after the lock is released.
 */
#ifndef SANDLENS_STORE_PROF_STORE_H
#define SANDLENS_STORE_PROF_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct sl_pstore;

/* One window row. Strings are "" when unknown (host: container_id "" and
 * runtime "host"). */
struct sl_pstore_window {
	int64_t id;
	int64_t start_ns, end_ns;
	char kind[16];          /* "on_cpu" | "off_cpu" */
	char container_id[80];
	char pod_uid[40];
	char runtime[24];
	uint64_t samples;       /* samples (on-CPU) in the window */
	void *body;             /* gzip'd pprof (sl_profile_write_pprof) */
	size_t len;
};

/* Open or create path (parent directory 0700, file 0600 created with
 * O_EXCL|O_NOFOLLOW; a symlink at path is refused, never followed). NULL +
 * err on failure. */
struct sl_pstore *sl_pstore_open(const char *path, char *err, size_t errlen);
void sl_pstore_close(struct sl_pstore *s);

/* Insert w[0..n) in one transaction (bodies copied by SQLite). 0 or -EIO. */
int sl_pstore_put(struct sl_pstore *s, const struct sl_pstore_window *w, size_t n);

/* Retention: delete windows that ended before now_ns - max_age_ns (0 = no
 * age limit), then, while the pages in use (page_count - freelist_count,
 * times page_size) are over max_bytes (0 = no limit), the oldest windows
 * (by start_ns, 64 at a time) until they are at most 90 % of it; freed
 * pages are given back to the file system (PRAGMA incremental_vacuum).
 * *deleted_age / *deleted_bytes (may be NULL) get the windows removed by
 * each limit. 0 or -EIO. */
int sl_pstore_retain(struct sl_pstore *s, int64_t now_ns, uint64_t max_age_ns, uint64_t max_bytes,
		     uint64_t *deleted_age, uint64_t *deleted_bytes);

/* Bytes the store holds: pages in use * page size (what max_bytes caps),
 * and the file's size on disk (main file + WAL). 0 or -EIO. */
int sl_pstore_size(struct sl_pstore *s, uint64_t *used_bytes, uint64_t *file_bytes, uint64_t *windows);

/* What a query selects. */
enum sl_pstore_scope {
	SL_PSTORE_CONTAINER = 0, /* id: a container id (exact, as resolved) */
	SL_PSTORE_POD,           /* id: a pod uid (exact) */
	SL_PSTORE_HOST,          /* every window of the node (containers and host processes) */
};

struct sl_pstore_sel {
	int scope;          /* enum sl_pstore_scope */
	const char *id;
	const char *kind;   /* "on_cpu" (NULL = any) */
	int64_t since_ns;   /* windows that end after since (0 = unbounded) */
	int64_t until_ns;   /* and start before until (0 = unbounded): every window overlapping [since, until) */
};

/* The one container id starting with prefix (>= 4 bytes; shorter or
 * longer than 255 bytes: exact) among stored windows, into out. 0,
 * -ENOENT (none), -EINVAL (two or more: ambiguous), -EIO. */
int sl_pstore_resolve_container(struct sl_pstore *s, const char *prefix, char *out, size_t outlen);

/* The windows sel selects, oldest first, at most max (0 = no limit), into
 * *out (malloc'd array of *n; bodies malloc'd when with_body, else NULL).
 * Free with sl_pstore_windows_free. 0, -EIO, -ENOMEM. */
int sl_pstore_query(struct sl_pstore *s, const struct sl_pstore_sel *sel, int with_body, size_t max,
		    struct sl_pstore_window **out, size_t *n);
void sl_pstore_windows_free(struct sl_pstore_window *w, size_t n);

#endif
