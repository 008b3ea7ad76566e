/* Private to src/store: the store object shared by store_write.c (queue,
 * writer thread, retention) and store_query.c (read-only queries). */
#ifndef SANDLENS_STORE_INTERNAL_H
#define SANDLENS_STORE_INTERNAL_H

#include "store/store.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <sys/types.h>
#include <time.h>

/* What is wrong with the store file (writer thread; see store_health.c). */
enum sl_store_cond {
	SL_STORE_COND_NONE = 0,
	SL_STORE_COND_DELETED,   /* the path no longer exists (the writer had an unlinked file) */
	SL_STORE_COND_REPLACED,  /* the path names another file (other inode) */
	SL_STORE_COND_READONLY,  /* read-only filesystem, or SQLITE_READONLY */
	SL_STORE_COND_IMMUTABLE, /* chattr +i / +a on the database file */
	SL_STORE_COND_FULL,      /* SQLITE_FULL / ENOSPC */
	SL_STORE_COND_WAL,       /* the WAL is over its bound and cannot be checkpointed */
	SL_STORE_COND_IOERR,     /* any other failed write or reopen */
	SL_STORE_COND_MAX
};

struct sl_store {
	char *path;
	struct sl_store_config cfg; /* defaults applied; cfg.path points at path */

	/* Queue: ring of malloc'd records, guarded by mu. */
	pthread_mutex_t mu;
	pthread_cond_t wake;  /* writer waits here (CLOCK_MONOTONIC) */
	pthread_cond_t done;  /* flush / retention / pause waiters */
	struct sl_store_event **ring;
	size_t head, count;
	uint64_t submit_seq;   /* records accepted so far */
	uint64_t done_seq;     /* records the writer has finished (written or failed) */
	uint64_t error_seq;    /* done_seq value after the last failed row (0 = none) */
	uint64_t flush_mark;   /* error_seq already reported by sl_store_flush() */
	uint64_t ret_req;      /* retention passes requested */
	uint64_t ret_done;     /* retention passes finished */
	int ret_failed;        /* the last finished pass had a DELETE error */
	int stop, paused, parked;

	int blocked;           /* the writer holds a failed batch and waits to retry (flush returns) */

	/* Writer-thread-only state. */
	pthread_t thread;
	sqlite3 *db;
	sqlite3_stmt *ins, *del_age, *del_rows;
	struct sl_store_event **batch;
	size_t held;   /* rows in batch[0..held) not committed yet: kept for a retry */
	uint64_t rows; /* rows in the table (count(*) at open, then tracked) */
	int fd;        /* O_RDONLY on the database file: its identity and inode flags */
	dev_t dev;
	ino_t ino;
	int64_t page_size;
	int incremental_vacuum; /* PRAGMA auto_vacuum is INCREMENTAL (new stores) */
	uint64_t wal_limit;     /* bytes; the WAL is checkpointed (or writes held) above it */
	enum sl_store_cond cond;
	int fails;              /* consecutive failed write attempts */
	uint64_t backoff_ms, retry_at_ms, next_check_ms, cond_since_ms;
	int cap_warned;         /* the file is over max_bytes and cannot shrink: said once */

	/* The database's epoch (meta table): set at each open, read by any thread. */
	_Atomic uint64_t epoch;

	/* Health as the API sees it: written by the writer, read by any thread. */
	pthread_mutex_t hmu;
	char reason[256];
	int64_t cond_since_ns; /* wall clock of the start of the condition, 0 = none */

	_Atomic uint64_t st_submitted, st_written, st_dropped, st_dropped_weight,
		st_write_errors, st_retention_deleted, st_depth;
	_Atomic uint64_t st_state; /* enum sl_store_state */
	_Atomic uint64_t st_held, st_db_bytes, st_wal_bytes, st_file_bytes, st_reopens,
		st_batch_failures, st_conditions, st_dropped_unavailable, st_retention_bytes;
};

/* Opens the database at s->path (creating file, schema, WAL, statements)
 * into s->db / s->fd / s->dev,ino. The file is created 0600 with
 * O_EXCL|O_NOFOLLOW when missing; the file, its -wal and -shm must each be
 * absent or a regular file (not a symlink) owned by this euid and not
 * group/other-writable (file and -wal not group/other-readable either),
 * else it is refused ("store: refusing <path>: it <reason>").
 * Returns 0 or -1 with err set; on error nothing stays open. */
int sl_store_db_open(struct sl_store *s, char *err, size_t errlen);
/* Finalizes the statements and closes s->db and s->fd (checkpoint first when
 * checkpoint != 0). */
void sl_store_db_close(struct sl_store *s, int checkpoint);

/* store_health.c (writer thread unless noted) */
/* Checks the file at s->path against the open one: deleted, replaced,
 * immutable, read-only filesystem. Returns the condition (NONE when fine). */
enum sl_store_cond sl_store_check_file(struct sl_store *s, char *why, size_t whylen);
/* Maps a failed SQLite result to a condition (FULL, READONLY, IOERR). */
enum sl_store_cond sl_store_cond_of_sqlite(int rc);
/* Sets (cond != NONE) or clears the store's condition; logs once per new
 * condition and on recovery. */
void sl_store_set_cond(struct sl_store *s, enum sl_store_cond cond, const char *why);
/* Updates st_db_bytes / st_wal_bytes / st_file_bytes; returns the used bytes
 * (pages in use * page_size + WAL file size). */
uint64_t sl_store_measure(struct sl_store *s);
/* Stats the WAL file, publishes and returns its size (0 when absent). */
uint64_t sl_store_wal_bytes(struct sl_store *s);
const char *sl_store_cond_name(enum sl_store_cond c);

/* store_retention.c (writer thread) */
struct sl_store_retention {
	int active, phase, failed;
	uint64_t target; /* ret_req value the pass answers */
};
/* One bounded step of a retention pass (age, rows, bytes). Returns 1 while
 * more work remains. */
int sl_store_retention_step(struct sl_store *s, struct sl_store_retention *rp);
/* The byte cap before (incoming = estimated bytes of the batch about to be
 * written) or after a batch (0): when the store plus incoming is over 90 %
 * of max_bytes, deletes the oldest rows until it is under 80 %. Returns the
 * rows deleted, -1 when a DELETE failed, 0 without max_bytes. */
int64_t sl_store_trim_bytes(struct sl_store *s, uint64_t incoming);

/* Writer thread body (store_writer.c); arg is the store. */
void *sl_store_writer_main(void *arg);

/* CLOCK_MONOTONIC in ms (the writer's cond var runs on that clock). */
static inline uint64_t sl_store_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#endif
