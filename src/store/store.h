/* Embedded event store (OUT-1): SQLite in WAL mode.
 *
 * Writes: sl_store_submit() is called by the poll loop; it never touches the
 * disk and never waits on the writer: the record goes into a bounded queue
 * (a mutex held only for the pointer push), or, when the queue is full, is
 * dropped and counted. A writer thread drains the queue in batches inside
 * one transaction, and applies retention (age, row count, bytes).
 *
 * Durability (docs/ARCHITECTURE.md "Store"): the writer checks after every
 * commit, and every SL_STORE_CHECK_INTERVAL_MS when idle, that the file at
 * the path is still the one it writes (not deleted or replaced), not
 * immutable and not on a read-only filesystem. A batch that fails (full
 * disk, I/O error, read-only) or lands in a file that was deleted or
 * replaced meanwhile is kept in memory and retried with back-off; a deleted
 * or replaced file is reopened (recreated with schema and WAL). While the
 * store is unavailable new records wait in the queue; only when the queue is
 * full are they dropped (and counted). The state is in sl_store_health_json().
 *
 * Reads: the query functions open their own read-only connection per call,
 * so they are safe from any thread (API handler threads) and do not block
 * the writer (WAL readers do not block the writer).
 */
#ifndef SANDLENS_STORE_H
#define SANDLENS_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* Defaults the config loader applies (documented in the config reference).
 * sl_store_open() itself maps 0 to the default only for queue_size,
 * batch_max and retention_interval_ms; for max_age_s and max_rows 0 = off. */
#define SL_STORE_DEFAULT_QUEUE_SIZE 65536u
#define SL_STORE_DEFAULT_BATCH_MAX 2048u
#define SL_STORE_DEFAULT_MAX_AGE_S 604800u /* 7 days */
#define SL_STORE_DEFAULT_MAX_ROWS 1000000u
#define SL_STORE_DEFAULT_RETENTION_INTERVAL_MS 10000u
#define SL_STORE_DEFAULT_MAX_BYTES (1ull << 30) /* 1 GiB */
/* Smallest max_bytes accepted (0 = off): 1 MiB. */
#define SL_STORE_MIN_MAX_BYTES (1ull << 20)
/* WAL bound without max_bytes (with it: max_bytes / 4, at least 256 KiB). */
#define SL_STORE_WAL_LIMIT (64ull << 20)
/* How often the idle writer checks the file (deleted, replaced, immutable). */
#define SL_STORE_CHECK_INTERVAL_MS 1000u
/* Retry back-off of a failed batch: starts here, doubles, capped. */
#define SL_STORE_RETRY_MIN_MS 100u
#define SL_STORE_RETRY_MAX_MS 5000u
/* Rows a single retention DELETE removes before the writer goes back to
 * inserting, so a large purge never stalls the queue for long. */
#define SL_STORE_RETENTION_CHUNK 4096u
/* PRAGMA user_version of the schema this code writes. */
#define SL_STORE_SCHEMA_VERSION 1

/* Query limits (rows). */
#define SL_STORE_QUERY_DEFAULT_LIMIT 100u
#define SL_STORE_QUERY_MAX_LIMIT 10000u

struct sl_store_config {
	const char *path;          /* database file; ":memory:" is not allowed (readers need a file) */
	size_t queue_size;         /* records, default 65536 */
	size_t batch_max;          /* rows per transaction, default 2048 */
	uint64_t max_age_s;        /* retention by age, default 7 days (604800 s); 0 = off */
	uint64_t max_rows;         /* retention by count, default 1,000,000; 0 = off */
	uint64_t retention_interval_ms; /* how often retention runs, default 10000 */
	uint64_t max_bytes;        /* retention by size (bytes), 0 = off; the config default is 1 GiB */
};

/* One event as the store keeps it. The indexed columns duplicate fields of
 * `json`, the complete JSON object the API returns. */
struct sl_store_event {
	int64_t time_ns;       /* wall clock, ns since the Unix epoch */
	char type[16];         /* "exec" | "exit" | "signal" | "oom" | ... */
	uint32_t pid;
	char container_id[80]; /* "" for host */
	char pod_uid[40];
	char runtime[24];
	char *json;            /* malloc'd; ownership passes to the store on submit */
	/* Underlying kernel events this record stands for when it is dropped
	 * (exec: 1 + truncated_count); 0 means 1. Used for drop accounting. */
	uint64_t weight;
};

struct sl_store_stats {
	uint64_t submitted;      /* records accepted into the queue */
	uint64_t written;        /* rows committed */
	uint64_t dropped_queue_full;          /* records */
	uint64_t dropped_queue_full_weight;   /* sum of weights of those */
	uint64_t write_errors;   /* rows lost to SQLite errors */
	uint64_t retention_deleted;
	uint64_t queue_depth;
	uint64_t queue_capacity;
	uint64_t retention_deleted_bytes; /* rows deleted by the byte cap (part of retention_deleted) */
	uint64_t held;            /* rows of a failed batch kept in memory for a retry */
	uint64_t batch_failures;  /* write attempts (batches) that failed and were retried */
	uint64_t conditions;      /* times the store became unavailable (deleted, full, ...) */
	uint64_t reopens;         /* times the database was reopened or recreated */
	uint64_t dropped_unavailable; /* part of dropped_queue_full: dropped while unavailable */
	uint64_t used_bytes;      /* pages in use * page size + WAL file, at the last check */
	uint64_t wal_bytes;       /* WAL file size at the last check */
	uint64_t file_bytes;      /* database file size (page_count * page_size) */
	int state;                /* enum sl_store_state */
};

enum sl_store_state {
	SL_STORE_OK = 0,
	SL_STORE_DEGRADED, /* unavailable; rows held in memory, nothing lost yet */
	SL_STORE_FAILED,   /* unavailable and the queue is full: records are being dropped */
};

/* "ok" | "degraded" | "failed". */
const char *sl_store_state_name(int state);

struct sl_store;

/* Opens (creates) the database, sets WAL, creates the schema, starts the
 * writer thread. On error returns NULL and writes a message into err.
 *
 * The parent directory is created (mode 0700) when missing, a new database
 * file is created with mode 0600 (the -wal/-shm files inherit it). Schema:
 *   events(id INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL, type TEXT NOT NULL,
 *          pid INTEGER, container_id TEXT, pod_uid TEXT, runtime TEXT,
 *          json TEXT NOT NULL)
 * indexed on time_ns, (type, time_ns), (container_id, time_ns, type) (type
 * makes the containers query index-only); its version
 * is PRAGMA user_version = SL_STORE_SCHEMA_VERSION. A database with a newer
 * user_version is refused. PRAGMA journal_mode=WAL, synchronous=NORMAL (a
 * power loss may lose the last commits, never corrupt: sqlite.org/wal.html);
 * a new database gets auto_vacuum=INCREMENTAL (the byte cap can give pages
 * back). wal_autocheckpoint and journal_size_limit keep the WAL within its
 * bound (max_bytes / 4, 256 KiB .. 64 MiB; 64 MiB without max_bytes). */
struct sl_store *sl_store_open(const struct sl_store_config *cfg, char *err, size_t errlen);

/* Hands ev to the writer. Returns 0, or -EAGAIN when the queue is full (the
 * record is freed and counted as dropped). ev->json is consumed either way
 * (and set to NULL in *ev). -EINVAL when s, ev or ev->json is NULL (counted
 * in write_errors), -ENOMEM when the record cannot be allocated (counted in
 * write_errors). The struct itself is copied; the caller keeps it. */
int sl_store_submit(struct sl_store *s, struct sl_store_event *ev);

/* Blocks until every record submitted before the call is committed
 * (tests, shutdown). Returns 0, or -EIO when some row failed to be written
 * since the previous sl_store_flush() returned (see write_errors), or
 * -EAGAIN without waiting further when the store is unavailable and the
 * writer holds a batch for a retry (the rows are kept, not lost; call again
 * later). Must not be called
 * while the writer is paused with sl_store_test_pause() (it would wait
 * forever). */
int sl_store_flush(struct sl_store *s);

/* Flushes the queue, stops the writer, checkpoints the WAL into the main
 * file (TRUNCATE), closes. Clears a test pause first. NULL is a no-op. A
 * batch the store cannot take (unavailable) gets one more try, and is then
 * counted in write_errors and logged. */
void sl_store_close(struct sl_store *s);

/* Copies the counters (lock-free, from any thread). Each field is read
 * atomically; the set is not a single snapshot. */
void sl_store_get_stats(struct sl_store *s, struct sl_store_stats *out);

/* Asks the writer for a complete retention pass now (age, then rows) and
 * waits until it is done. Returns 0, or -EIO when a DELETE failed.
 * Retention otherwise runs every retention_interval_ms (and once at open).
 * Not while paused (see sl_store_flush). */
int sl_store_run_retention(struct sl_store *s);
/* Change retention by age and by count at run time (SIGHUP reload): the
 * writer thread's next retention pass uses them (0 = off, as in struct
 * sl_store_config). max_bytes is fixed at open (it sizes the WAL bound).
 * Any thread. */
void sl_store_set_retention(struct sl_store *s, uint64_t max_age_s, uint64_t max_rows);

/* The store's health for /healthz: {"state": "ok"|"degraded"|"failed",
 * "reason": text (absent when ok), "since": RFC 3339 start of the condition,
 * "held_rows", "queue_depth", "queue_capacity", "used_bytes", "wal_bytes",
 * "file_bytes", "max_bytes" (0 = no cap), "reopens", "batch_failures",
 * "dropped_unavailable"}. Safe from any thread. NULL only on allocation
 * failure; s NULL gives {"state":"failed","reason":"not open"}. */
json_t *sl_store_health_json(struct sl_store *s);

/* Writes the store's Prometheus families (sandlens_store_state,
 * sandlens_store_bytes, ..., docs/API.md) through p. Safe from any thread. */
struct sl_prom;
void sl_store_write_metrics(struct sl_store *s, struct sl_prom *p);

/* TEST ONLY: pause != 0 parks the writer thread (after it finishes the batch
 * in hand; returns once it is parked), so that the queue fills
 * deterministically; pause == 0 lets it run again. */
void sl_store_test_pause(struct sl_store *s, int pause);

struct sl_event_filter {
	const char *type;         /* NULL = any */
	const char *container_id; /* NULL = any; prefix match (>= 4 chars) like docker */
	const char *pod_uid;      /* NULL = any */
	int64_t since_ns;         /* wall clock ns, inclusive (time_ns >= since); 0 = unbounded */
	int64_t until_ns;         /* wall clock ns, exclusive (time_ns < until); 0 = unbounded */
	int64_t after_id;         /* only rows with id > after_id (follow cursors); 0 = any */
	uint32_t limit;           /* rows; 0 = default 100, capped at 10000 */
	int ascending;            /* 1: by id ascending (follow); 0: newest time_ns first */
};

/* Returns a JSON array of event objects, each the stored JSON plus "id"
 * (the row id, usable as after_id). Order: f->ascending = by id (insertion
 * order, for follow cursors); otherwise newest first by time_ns, ties by id
 * descending. container_id shorter than 4 (or longer than 255) bytes
 * matches exactly; 4..255 bytes match every id that starts with it (an
 * exact id too). f may be
 * NULL (no filter). All values are bound parameters. Opens its own
 * read-only connection (busy timeout 2 s); safe from any thread, also
 * concurrently with the writer. A row whose stored JSON does not parse
 * comes back as its indexed columns (time_ns, type, pid, container_id,
 * pod_uid, runtime) plus "id". NULL on error (message in err). */
json_t *sl_store_query_events(struct sl_store *s, const struct sl_event_filter *f, char *err,
			      size_t errlen);

/* Returns a JSON array of {container_id, pod_uid, runtime, events, by_type{...},
 * first_seen, last_seen} for every container that has events in the store
 * (host rows excluded). events = row count, by_type = {type: rows},
 * pod_uid/runtime = those of the container's newest row (by time_ns),
 * first_seen/last_seen = min/max time_ns as RFC 3339 UTC with nanoseconds
 * ("2024-05-01T12:00:00.000000001Z", common/timefmt.h). Sorted by container_id. Read in one
 * read transaction on its own read-only connection. NULL on error. */
json_t *sl_store_query_containers(struct sl_store *s, char *err, size_t errlen);

/* The largest row id in the store (0 when empty): the end of an id cursor
 * (the OTLP exporter's backlog is max id - its cursor). Its own read-only
 * connection; any thread. 0, or -1 with the reason in err. */
int sl_store_max_id(struct sl_store *s, int64_t *id, char *err, size_t errlen);

/* The store's epoch: a random number in 1..2^62 made with the database
 * file (table meta), the same across agent restarts on that file, another
 * one when the file is recreated (deleted, replaced, a new path). Event ids
 * are only comparable within one epoch. Any thread; 0 before the first
 * open or for s NULL. */
uint64_t sl_store_epoch(struct sl_store *s);

#endif
