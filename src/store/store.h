/* Embedded event store (OUT-1): SQLite in WAL mode.
 *
 * Writes: sl_store_submit() is called by the poll loop; it never touches the
 * disk and never waits on the writer: the record goes into a bounded queue
 * (a mutex held only for the pointer push), or, when the queue is full, is
 * dropped and counted. A writer thread drains the queue in batches inside
 * one transaction, and applies retention (age, row count).
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

struct sl_store_config {
	const char *path;          /* database file; ":memory:" is not allowed (readers need a file) */
	size_t queue_size;         /* records, default 65536 */
	size_t batch_max;          /* rows per transaction, default 2048 */
	uint64_t max_age_s;        /* retention by age, default 7 days (604800 s); 0 = off */
	uint64_t max_rows;         /* retention by count, default 1,000,000; 0 = off */
	uint64_t retention_interval_ms; /* how often retention runs, default 10000 */
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
};

struct sl_store;

/* Opens (creates) the database, sets WAL, creates the schema, starts the
 * writer thread. On error returns NULL and writes a message into err. */
struct sl_store *sl_store_open(const struct sl_store_config *cfg, char *err, size_t errlen);

/* Hands ev to the writer. Returns 0, or -EAGAIN when the queue is full (the
 * record is freed and counted as dropped). ev->json is consumed either way. */
int sl_store_submit(struct sl_store *s, struct sl_store_event *ev);

/* Blocks until every record submitted before the call is committed
 * (tests, shutdown). Returns 0 or -EIO. */
int sl_store_flush(struct sl_store *s);

/* Flushes the queue, stops the writer, closes. NULL is a no-op. */
void sl_store_close(struct sl_store *s);

void sl_store_get_stats(struct sl_store *s, struct sl_store_stats *out);

struct sl_event_filter {
	const char *type;         /* NULL = any */
	const char *container_id; /* NULL = any; prefix match (>= 4 chars) like docker */
	const char *pod_uid;      /* NULL = any */
	int64_t since_ns;         /* wall clock; 0 = unbounded */
	int64_t until_ns;         /* 0 = unbounded */
	int64_t after_id;         /* only rows with id > after_id (follow cursors); 0 = any */
	uint32_t limit;           /* rows; 0 = default 100, capped at 10000 */
	int ascending;            /* 1: oldest first (follow); 0: newest first */
};

/* Returns a JSON array of event objects, each the stored JSON plus "id"
 * (the row id, usable as after_id). NULL on error (message in err). */
json_t *sl_store_query_events(struct sl_store *s, const struct sl_event_filter *f, char *err,
			      size_t errlen);

/* Returns a JSON array of {container_id, pod_uid, runtime, events, by_type{...},
 * first_seen, last_seen} for every container that has events in the store
 * (host rows excluded). NULL on error. */
json_t *sl_store_query_containers(struct sl_store *s, char *err, size_t errlen);

#endif
