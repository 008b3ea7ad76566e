/* Flight recordings in the event store's SQLite file (docs/FLIGHT.md
 * "Store"): table
 *   flight_recordings(id INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL,
 *                     container_id TEXT NOT NULL, reason TEXT NOT NULL,
 *                     events INTEGER NOT NULL, bytes INTEGER NOT NULL,
 *                     json TEXT NOT NULL)
 * indexed on time_ns and (container_id, id). The ids are the recorder's
 * (known before the row is written: the triggering event carries it).
 *
 * Writes: its own connection and writer thread (the poll loop never touches
 * the disk): sl_flight_db_submit queues a completed recording (at most
 * SL_FLIGHT_DB_QUEUE; more are dropped and counted), the thread inserts it
 * and applies retention (age, count, bytes: the oldest go first), and again
 * every 10 s. The store's own writer and this one take SQLite's write lock
 * in turn (busy timeout 5 s); the rows count against store.max_bytes like
 * any page of the file.
 *
 * Reads: a recording still queued is answered from memory (a copy), else by
 * a read-only connection per call (any thread). */
#ifndef SANDLENS_STORE_FLIGHT_STORE_H
#define SANDLENS_STORE_FLIGHT_STORE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct sl_flight_rec;
struct sl_flight_db;

/* Completed recordings waiting for the writer, at most. */
#define SL_FLIGHT_DB_QUEUE 32u

struct sl_flight_db_config {
	const char *path;        /* the event store's file (store.path); it must exist */
	uint64_t max_age_s;      /* retention by age, 0 = off */
	uint64_t max_recordings; /* retention by count, 0 = off */
	uint64_t max_bytes;      /* retention by the recordings' JSON bytes, 0 = off */
};

struct sl_flight_db_stats {
	uint64_t written;       /* recordings committed */
	uint64_t dropped_queue; /* recordings dropped: the queue was full */
	uint64_t write_errors;  /* recordings lost to SQLite errors */
	uint64_t retention_deleted; /* rows deleted by retention */
	uint64_t queue_depth;
};

/* Open a read-write connection on cfg->path (never creating it, never
 * through a symlink), create the table, start the writer thread. NULL with
 * err on failure. */
struct sl_flight_db *sl_flight_db_open(const struct sl_flight_db_config *cfg, char *err, size_t errlen);
/* Write what is queued, stop the thread, close. NULL is a no-op. */
void sl_flight_db_close(struct sl_flight_db *db);
/* The largest recording id stored when it was opened (0 when none; -1 on error). */
int64_t sl_flight_db_max_id(struct sl_flight_db *db);
/* The recorder's sink (flight.h sl_flight_sink): queue r (ownership taken). */
void sl_flight_db_submit(void *db, struct sl_flight_rec *r);
/* Wait until everything queued before the call is written (tests). */
void sl_flight_db_flush(struct sl_flight_db *db);
/* Run a retention pass now (tests); rows deleted or -1. */
int64_t sl_flight_db_retain(struct sl_flight_db *db);

/* The recording id: its JSON (new reference), or NULL with *status 404 (no
 * such recording) or 500 and a reason in err. Any thread. */
json_t *sl_flight_db_get(struct sl_flight_db *db, int64_t id, unsigned *status, char *err, size_t errlen);
/* Recordings, newest first, at most limit (1..1000), of container (exact id;
 * NULL = any): [{id, time, container_id, reason, events, bytes}] (new
 * reference), queued ones included; NULL with err on error. Any thread. */
json_t *sl_flight_db_list(struct sl_flight_db *db, const char *container, unsigned limit, char *err,
			  size_t errlen);

void sl_flight_db_get_stats(struct sl_flight_db *db, struct sl_flight_db_stats *out);

#endif
