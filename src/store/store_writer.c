/* Embedded store, writer thread: drains the submit queue in batches, one
 * transaction per batch, and runs retention in bounded chunks between
 * batches. Only this thread touches s->db after sl_store_open(). */
#include "store/store_internal.h"

#include "common/log.h"
#include "common/timefmt.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MOD "store"

static void bind_field(sqlite3_stmt *st, int idx, const char *f, size_t cap)
{
	sqlite3_bind_text(st, idx, f, (int)strnlen(f, cap), SQLITE_STATIC);
}

/* Inserts recs[0..n) in one transaction and frees them. Returns the number
 * of rows that were not committed. */
static uint64_t write_batch(struct sl_store *s, struct sl_store_event **recs, size_t n)
{
	sqlite3 *db = s->db;
	uint64_t ok = 0, failed = 0;
	int in_txn = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;

	if (!in_txn) {
		sl_warn(MOD, "BEGIN failed: %s", sqlite3_errmsg(db));
		failed = n;
	}
	for (size_t i = 0; in_txn && i < n; i++) {
		struct sl_store_event *e = recs[i];
		sqlite3_bind_int64(s->ins, 1, e->time_ns);
		bind_field(s->ins, 2, e->type, sizeof(e->type));
		sqlite3_bind_int64(s->ins, 3, e->pid);
		bind_field(s->ins, 4, e->container_id, sizeof(e->container_id));
		bind_field(s->ins, 5, e->pod_uid, sizeof(e->pod_uid));
		bind_field(s->ins, 6, e->runtime, sizeof(e->runtime));
		sqlite3_bind_text(s->ins, 7, e->json, -1, SQLITE_STATIC);
		int rc = sqlite3_step(s->ins);
		sqlite3_reset(s->ins);
		if (rc == SQLITE_DONE) {
			ok++;
			continue;
		}
		failed++;
		if (sqlite3_get_autocommit(db)) {
			/* The error rolled the transaction back (SQLITE_FULL, IOERR, ...). */
			sl_warn(MOD, "insert aborted the batch: %s", sqlite3_errmsg(db));
			failed += ok + (n - i - 1);
			ok = 0;
			in_txn = 0;
		}
	}
	sqlite3_clear_bindings(s->ins);
	if (in_txn && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		sl_warn(MOD, "COMMIT failed: %s", sqlite3_errmsg(db));
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		failed += ok;
		ok = 0;
	}
	for (size_t i = 0; i < n; i++) {
		free(recs[i]->json);
		free(recs[i]);
	}
	s->rows += ok;
	atomic_fetch_add_explicit(&s->st_written, ok, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->st_write_errors, failed, memory_order_relaxed);
	return failed;
}

/* Runs one DELETE chunk; returns rows deleted or -1. */
static int64_t delete_chunk(struct sl_store *s, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		sl_warn(MOD, "retention delete failed: %s", sqlite3_errmsg(s->db));
		return -1;
	}
	int64_t n = sqlite3_changes(s->db);
	s->rows = (uint64_t)n > s->rows ? 0 : s->rows - (uint64_t)n;
	atomic_fetch_add_explicit(&s->st_retention_deleted, (uint64_t)n, memory_order_relaxed);
	return n;
}

struct retention_pass {
	int active, phase, failed;
	uint64_t target; /* ret_req value the pass answers */
};

/* One bounded step of a retention pass: phase 0 deletes rows older than
 * max_age_s, phase 1 trims to max_rows (oldest time_ns first). Returns 1
 * while more work remains. */
static int retention_step(struct sl_store *s, struct retention_pass *rp)
{
	const int64_t chunk = SL_STORE_RETENTION_CHUNK;
	if (rp->phase == 0) {
		rp->phase = 1;
		if (s->cfg.max_age_s && s->cfg.max_age_s < (uint64_t)INT64_MAX / 1000000000u) {
			int64_t cutoff = sl_time_now_ns() - (int64_t)s->cfg.max_age_s * 1000000000LL;
			sqlite3_bind_int64(s->del_age, 1, cutoff);
			sqlite3_bind_int64(s->del_age, 2, chunk);
			int64_t n = delete_chunk(s, s->del_age);
			if (n < 0)
				rp->failed = 1;
			else if (n == chunk)
				rp->phase = 0; /* maybe more old rows */
			return 1;
		}
	}
	if (s->cfg.max_rows && s->rows > s->cfg.max_rows) {
		uint64_t extra = s->rows - s->cfg.max_rows;
		sqlite3_bind_int64(s->del_rows, 1, extra < (uint64_t)chunk ? (int64_t)extra : chunk);
		int64_t n = delete_chunk(s, s->del_rows);
		if (n < 0) {
			rp->failed = 1;
			return 0;
		}
		return n > 0 && s->rows > s->cfg.max_rows;
	}
	return 0;
}

void *sl_store_writer_main(void *arg)
{
	struct sl_store *s = arg;
	struct retention_pass rp = {0};
	uint64_t next_ret = sl_store_mono_ms(); /* a first pass at open */

	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (s->paused && !s->stop) {
			s->parked = 1;
			pthread_cond_broadcast(&s->done);
			pthread_cond_wait(&s->wake, &s->mu);
		}
		s->parked = 0;
		if (!rp.active && (s->ret_req > s->ret_done || sl_store_mono_ms() >= next_ret)) {
			rp = (struct retention_pass){.active = 1, .target = s->ret_req};
		}
		if (s->count == 0 && (!rp.active || s->stop)) {
			if (s->stop)
				break;
			uint64_t at = next_ret;
			struct timespec ts = {.tv_sec = (time_t)(at / 1000),
					      .tv_nsec = (long)(at % 1000) * 1000000L};
			pthread_cond_timedwait(&s->wake, &s->mu, &ts);
			continue;
		}
		size_t n = 0;
		while (s->count && n < s->cfg.batch_max) {
			s->batch[n++] = s->ring[s->head];
			s->ring[s->head] = NULL;
			s->head = (s->head + 1) % s->cfg.queue_size;
			s->count--;
		}
		atomic_store_explicit(&s->st_depth, s->count, memory_order_relaxed);
		pthread_mutex_unlock(&s->mu);

		uint64_t failed = n ? write_batch(s, s->batch, n) : 0;
		int pass_done = 0;
		if (rp.active && !retention_step(s, &rp)) {
			rp.active = 0;
			pass_done = 1;
			next_ret = sl_store_mono_ms() + s->cfg.retention_interval_ms;
		}

		pthread_mutex_lock(&s->mu);
		s->done_seq += n;
		if (failed)
			s->error_seq = s->done_seq;
		if (pass_done) {
			s->ret_done = rp.target;
			s->ret_failed = rp.failed;
		}
		pthread_cond_broadcast(&s->done);
	}
	/* Stopping: release anyone waiting for an unfinished retention pass. */
	s->ret_done = s->ret_req;
	pthread_cond_broadcast(&s->done);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

