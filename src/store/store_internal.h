/* Private to src/store: the store object shared by store_write.c (queue,
 * writer thread, retention) and store_query.c (read-only queries). */
#ifndef SANDLENS_STORE_INTERNAL_H
#define SANDLENS_STORE_INTERNAL_H

#include "store/store.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <time.h>

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

	/* Writer-thread-only state. */
	pthread_t thread;
	sqlite3 *db;
	sqlite3_stmt *ins, *del_age, *del_rows;
	struct sl_store_event **batch;
	uint64_t rows; /* rows in the table (count(*) at open, then tracked) */

	_Atomic uint64_t st_submitted, st_written, st_dropped, st_dropped_weight,
		st_write_errors, st_retention_deleted, st_depth;
};

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
