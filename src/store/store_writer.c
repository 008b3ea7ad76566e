/* Embedded store, writer thread: drains the submit queue in batches, one
 * transaction per batch, and runs retention in bounded chunks between
 * batches. Only this thread touches s->db after sl_store_open().
 *
 * A batch is freed only once it is known to be in the file at the path:
 * committed, and the path still names the file that was written (checked
 * after the commit). Otherwise (full disk, I/O error, read-only, immutable,
 * the WAL over its bound, the file deleted or replaced) the batch stays in
 * s->batch[0..held) and is retried with back-off, after reopening the
 * database when it was deleted or replaced. While a batch is held no new
 * one is taken: the queue is the in-memory bound. */
#include "store/store_internal.h"

#include "common/log.h"
#include "common/timefmt.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MOD "store"

static void bind_field(sqlite3_stmt *st, int idx, const char *f, size_t cap)
{
	sqlite3_bind_text(st, idx, f, (int)strnlen(f, cap), SQLITE_STATIC);
}

/* Inserts s->batch[0..n) in one transaction; frees nothing. Returns
 * SQLITE_OK when the transaction committed (*lost = rows that failed on
 * their own, e.g. a constraint, and were left out), or the SQLite error
 * that rolled it back (message in why). */
static int write_batch(struct sl_store *s, size_t n, uint64_t *ok_out, uint64_t *lost,
		       char *why, size_t whylen)
{
	sqlite3 *db = s->db;
	uint64_t ok = 0, failed = 0;
	int rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);

	*ok_out = *lost = 0;
	if (rc != SQLITE_OK) {
		snprintf(why, whylen, "BEGIN: %s", sqlite3_errmsg(db));
		return sqlite3_extended_errcode(db) ? sqlite3_extended_errcode(db) : rc;
	}
	for (size_t i = 0; i < n; i++) {
		struct sl_store_event *e = s->batch[i];
		sqlite3_bind_int64(s->ins, 1, e->time_ns);
		bind_field(s->ins, 2, e->type, sizeof(e->type));
		sqlite3_bind_int64(s->ins, 3, e->pid);
		bind_field(s->ins, 4, e->container_id, sizeof(e->container_id));
		bind_field(s->ins, 5, e->pod_uid, sizeof(e->pod_uid));
		bind_field(s->ins, 6, e->runtime, sizeof(e->runtime));
		sqlite3_bind_text(s->ins, 7, e->json, -1, SQLITE_STATIC);
		rc = sqlite3_step(s->ins);
		sqlite3_reset(s->ins);
		if (rc == SQLITE_DONE) {
			ok++;
			continue;
		}
		if (sqlite3_get_autocommit(db)) {
			/* The error rolled the transaction back (SQLITE_FULL, IOERR, ...). */
			snprintf(why, whylen, "insert: %s", sqlite3_errmsg(db));
			rc = sqlite3_extended_errcode(db);
			sqlite3_clear_bindings(s->ins);
			return rc != SQLITE_OK ? rc : SQLITE_ERROR;
		}
		failed++;
	}
	sqlite3_clear_bindings(s->ins);
	rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		snprintf(why, whylen, "COMMIT: %s", sqlite3_errmsg(db));
		rc = sqlite3_extended_errcode(db);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return rc != SQLITE_OK ? rc : SQLITE_ERROR;
	}
	*ok_out = ok;
	*lost = failed;
	return SQLITE_OK;
}

static void free_batch(struct sl_store *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s->batch[i]->json);
		free(s->batch[i]);
		s->batch[i] = NULL;
	}
}

/* Closes the database and opens the file now at the path (recreated, with
 * schema and WAL, when missing). Returns 0 or -1 (why set). */
static int reopen(struct sl_store *s, enum sl_store_cond c, int had_db, char *why, size_t whylen)
{
	char err[256], p[4200];
	sl_store_db_close(s, 1);
	struct stat st;
	int missing = stat(s->path, &st) != 0 && errno == ENOENT;
	if (missing || (had_db && c == SL_STORE_COND_REPLACED)) {
		/* A -wal/-shm left at the path belongs to the file that is gone
		 * (the close could not remove it); a new file must not replay
		 * its frames. */
		snprintf(p, sizeof(p), "%s-wal", s->path);
		unlink(p);
		snprintf(p, sizeof(p), "%s-shm", s->path);
		unlink(p);
	}
	if (sl_store_db_open(s, err, sizeof(err)) != 0) {
		size_t l = strlen(why);
		snprintf(why + l, whylen - l, "; reopen failed: %s", err);
		return -1;
	}
	atomic_fetch_add_explicit(&s->st_reopens, 1, memory_order_relaxed);
	sl_info(MOD, "reopened %s after it was %s (%llu rows in it)", s->path,
		sl_store_cond_name(c), (unsigned long long)s->rows);
	return 0;
}

/* The WAL over wal_limit: a TRUNCATE checkpoint, else writes wait (a
 * checkpoint that cannot write the database must not let the WAL grow
 * without bound). Returns 0 when the WAL is within the bound. */
static int wal_bound(struct sl_store *s, char *why, size_t whylen)
{
	uint64_t wal = sl_store_wal_bytes(s);
	if (wal <= s->wal_limit)
		return 0;
	int rc = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	wal = sl_store_wal_bytes(s);
	if (wal <= s->wal_limit)
		return 0;
	snprintf(why, whylen, "WAL %llu bytes over its bound %llu and the checkpoint failed: %s",
		 (unsigned long long)wal, (unsigned long long)s->wal_limit,
		 rc == SQLITE_OK ? "readers still use it" : sqlite3_errmsg(s->db));
	return -1;
}

enum attempt_result { ATTEMPT_OK, ATTEMPT_HELD, ATTEMPT_LOST };

static void schedule_retry(struct sl_store *s, int now)
{
	s->fails++;
	if (now) {
		s->retry_at_ms = sl_store_mono_ms();
		return;
	}
	s->backoff_ms = s->backoff_ms ? s->backoff_ms * 2 : SL_STORE_RETRY_MIN_MS;
	if (s->backoff_ms > SL_STORE_RETRY_MAX_MS)
		s->backoff_ms = SL_STORE_RETRY_MAX_MS;
	s->retry_at_ms = sl_store_mono_ms() + s->backoff_ms;
}

/* Checks the file, reopens it when it was deleted or replaced, bounds the
 * WAL, then writes s->batch[0..n) (n may be 0: only the checks). stopping:
 * a batch that cannot be written now is given up (counted) instead of held. */
static enum attempt_result attempt(struct sl_store *s, size_t n, int stopping)
{
	char why[512] = "";
	enum sl_store_cond c;
	int had_db = s->db != NULL;
	if (had_db) {
		c = sl_store_check_file(s, why, sizeof(why));
	} else {
		/* A reopen failed before: the condition stays what it was. */
		c = s->cond != SL_STORE_COND_NONE ? s->cond : SL_STORE_COND_IOERR;
		snprintf(why, sizeof(why), "%s is not open", s->path);
	}
	/* A generic error that repeats: a fresh connection may clear it. */
	int stale = s->cond == SL_STORE_COND_IOERR && s->fails && s->fails % 4 == 0;
	if (c == SL_STORE_COND_DELETED || c == SL_STORE_COND_REPLACED || !had_db ||
	    (stale && c == SL_STORE_COND_NONE)) {
		enum sl_store_cond rc = c != SL_STORE_COND_NONE ? c : s->cond;
		if (c != SL_STORE_COND_NONE)
			sl_store_set_cond(s, c, why); /* reported even when the reopen cures it at once */
		if (reopen(s, rc, had_db, why, sizeof(why)) == 0)
			c = sl_store_check_file(s, why, sizeof(why));
		else if (c == SL_STORE_COND_NONE)
			c = SL_STORE_COND_IOERR;
	}
	if (c == SL_STORE_COND_NONE && wal_bound(s, why, sizeof(why)) != 0)
		c = SL_STORE_COND_WAL;
	uint64_t ok = 0, lost = 0;
	int deleted_meanwhile = 0;
	if (c == SL_STORE_COND_NONE && n && s->cfg.max_bytes) {
		/* Room for the batch first, so that the file stays under the cap:
		 * its JSON plus the indexed columns and b-tree overhead. */
		uint64_t est = 0;
		for (size_t i = 0; i < n; i++)
			est += strlen(s->batch[i]->json) + 160;
		sl_store_trim_bytes(s, est + est / 2);
	}
	if (c == SL_STORE_COND_NONE && n) {
		int rc = write_batch(s, n, &ok, &lost, why, sizeof(why));
		if (rc != SQLITE_OK) {
			c = sl_store_cond_of_sqlite(rc);
		} else {
			/* Committed: but into the file at the path? */
			char w2[512];
			enum sl_store_cond c2 = sl_store_check_file(s, w2, sizeof(w2));
			if (c2 == SL_STORE_COND_DELETED || c2 == SL_STORE_COND_REPLACED) {
				c = c2;
				snprintf(why, sizeof(why), "%.400s (a batch of %zu rows is rewritten)", w2, n);
				deleted_meanwhile = 1;
			}
		}
	}
	if (c != SL_STORE_COND_NONE) {
		sl_store_set_cond(s, c, why);
		if (!n)
			return ATTEMPT_OK;
		if (stopping) {
			static struct sl_log_limit lim = SL_LOG_LIMIT_INIT(10);
			sl_log_limited(&lim, SL_LOG_ERROR, MOD,
				       "stopping with the store unavailable: %zu rows lost (%s)", n, why);
			atomic_fetch_add_explicit(&s->st_write_errors, n, memory_order_relaxed);
			free_batch(s, n);
			s->held = 0;
			atomic_store_explicit(&s->st_held, 0, memory_order_relaxed);
			return ATTEMPT_LOST;
		}
		s->held = n;
		atomic_store_explicit(&s->st_held, n, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->st_batch_failures, 1, memory_order_relaxed);
		schedule_retry(s, deleted_meanwhile);
		return ATTEMPT_HELD;
	}
	if (!n && s->held) {
		/* The file looks fine again: retry the held batch now; its
		 * commit is what clears the condition. */
		s->retry_at_ms = sl_store_mono_ms();
		return ATTEMPT_OK;
	}
	sl_store_set_cond(s, SL_STORE_COND_NONE, NULL);
	s->fails = 0;
	s->backoff_ms = 0;
	if (n) {
		free_batch(s, n);
		s->held = 0;
		atomic_store_explicit(&s->st_held, 0, memory_order_relaxed);
		s->rows += ok;
		atomic_fetch_add_explicit(&s->st_written, ok, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->st_write_errors, lost, memory_order_relaxed);
		return lost ? ATTEMPT_LOST : ATTEMPT_OK;
	}
	return ATTEMPT_OK;
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

void *sl_store_writer_main(void *arg)
{
	struct sl_store *s = arg;
	struct sl_store_retention rp = {0};
	uint64_t next_ret = sl_store_mono_ms(); /* a first pass at open */
	s->next_check_ms = next_ret + SL_STORE_CHECK_INTERVAL_MS;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (s->paused && !s->stop) {
			s->parked = 1;
			pthread_cond_broadcast(&s->done);
			pthread_cond_wait(&s->wake, &s->mu);
		}
		s->parked = 0;
		uint64_t now = sl_store_mono_ms();
		if (!rp.active && (s->ret_req > s->ret_done || now >= next_ret))
			rp = (struct sl_store_retention){.active = 1, .target = s->ret_req};
		int retry_due = !s->held || s->stop || now >= s->retry_at_ms;
		int have_rows = s->held || s->count;
		int ret_work = rp.active && s->cond == SL_STORE_COND_NONE && !s->stop;
		int check_due = now >= s->next_check_ms;
		if (!(have_rows && retry_due) && !ret_work && !check_due) {
			if (s->stop && !have_rows)
				break;
			/* (a pass that is due but waits for the store to be
			 * writable again must not make this wait return at once) */
			uint64_t at = rp.active ? s->next_check_ms : min_u64(next_ret, s->next_check_ms);
			if (s->held)
				at = min_u64(at, s->retry_at_ms);
			struct timespec ts = {.tv_sec = (time_t)(at / 1000),
					      .tv_nsec = (long)(at % 1000) * 1000000L};
			pthread_cond_timedwait(&s->wake, &s->mu, &ts);
			continue;
		}
		size_t n = 0;
		if (retry_due) {
			n = s->held;
			while (!s->held && s->count && n < s->cfg.batch_max) {
				s->batch[n++] = s->ring[s->head];
				s->ring[s->head] = NULL;
				s->head = (s->head + 1) % s->cfg.queue_size;
				s->count--;
			}
		}
		atomic_store_explicit(&s->st_depth, s->count, memory_order_relaxed);
		int stopping = s->stop;
		pthread_mutex_unlock(&s->mu);

		enum attempt_result ar = ATTEMPT_OK;
		if (n || check_due || s->cond != SL_STORE_COND_NONE) {
			ar = attempt(s, n, stopping);
			s->next_check_ms = sl_store_mono_ms() + SL_STORE_CHECK_INTERVAL_MS;
			if (check_due)
				sl_store_measure(s);
		}
		int pass_done = 0;
		if (rp.active && s->cond == SL_STORE_COND_NONE) {
			if (!sl_store_retention_step(s, &rp)) {
				rp.active = 0;
				pass_done = 1;
				next_ret = sl_store_mono_ms() + s->cfg.retention_interval_ms;
			}
		} else if (n && ar != ATTEMPT_HELD) {
			sl_store_trim_bytes(s, 0); /* the byte cap cannot wait for the next pass */
		}

		pthread_mutex_lock(&s->mu);
		if (ar != ATTEMPT_HELD)
			s->done_seq += n;
		if (ar == ATTEMPT_LOST)
			s->error_seq = s->done_seq;
		s->blocked = s->held > 0;
		if (pass_done) {
			s->ret_done = rp.target;
			s->ret_failed = rp.failed;
		}
		pthread_cond_broadcast(&s->done);
	}
	/* Stopping: release anyone waiting for an unfinished retention pass. */
	s->ret_done = s->ret_req;
	s->blocked = 0;
	pthread_cond_broadcast(&s->done);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}
