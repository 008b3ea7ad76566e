/* Embedded store, retention: age, row count and byte cap, each in bounded
 * DELETE chunks run by the writer thread between batches. */
#include "store/store_internal.h"

#include "common/log.h"
#include "common/timefmt.h"

#include <stdint.h>
#include <stdio.h>

#define MOD "store"

/* The byte cap starts a pass above HIGH and trims to TARGET (percent of
 * max_bytes): the hysteresis makes each pass delete a useful chunk, and
 * pages freed by it are reused by later inserts, so the file stops growing. */
#define BYTES_HIGH_PCT 90u
#define BYTES_TARGET_PCT 80u
/* Pages one incremental_vacuum step gives back (file over the cap). */
#define VACUUM_PAGES 2048

/* Runs one DELETE chunk; returns rows deleted or -1. */
static int64_t delete_chunk(struct sl_store *s, sqlite3_stmt *st)
{
	static struct sl_log_limit lim = SL_LOG_LIMIT_INIT(60);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		sl_log_limited(&lim, SL_LOG_WARN, MOD, "retention delete failed: %s",
			       sqlite3_errmsg(s->db));
		return -1;
	}
	int64_t n = sqlite3_changes(s->db);
	s->rows = (uint64_t)n > s->rows ? 0 : s->rows - (uint64_t)n;
	atomic_fetch_add_explicit(&s->st_retention_deleted, (uint64_t)n, memory_order_relaxed);
	return n;
}

int64_t sl_store_trim_bytes(struct sl_store *s, uint64_t incoming)
{
	const uint64_t max = s->cfg.max_bytes;
	if (!max || !s->db)
		return 0;
	uint64_t used = sl_store_measure(s);
	uint64_t wal = atomic_load(&s->st_wal_bytes);
	/* On disk: the file keeps its free pages (the rows' high-water mark)
	 * and the WAL may grow to its bound before a checkpoint, whatever it is
	 * now. The cap is on file + WAL as the disk may hold them. */
	uint64_t walb = s->wal_limit > wal ? s->wal_limit : wal;
	uint64_t file = atomic_load(&s->st_file_bytes);
	uint64_t high = max / 100 * BYTES_HIGH_PCT;
	if ((used > file ? used : file) + walb + incoming <= high)
		return 0;
	uint64_t db_used = atomic_load(&s->st_db_bytes);
	uint64_t target = max / 100 * BYTES_TARGET_PCT;
	/* The WAL is bounded separately (wal_limit) and may grow to it before a
	 * checkpoint; the file keeps its high-water mark (freed pages are
	 * reused, not given back). So what the rows may take is the target less
	 * the WAL's bound and the batch about to come: file + WAL then stay
	 * under the cap on disk (counting the WAL as it is now let a file at
	 * its high-water mark plus a later full WAL pass the cap). */
	uint64_t room = walb + incoming;
	uint64_t db_target = target > room ? target - room : 0;
	int64_t total = 0;
	for (int i = 0; i < 8 && db_used > db_target && s->rows > 0; i++) {
		uint64_t per_row = db_used / s->rows;
		if (!per_row)
			per_row = 1;
		uint64_t n = (db_used - db_target + per_row - 1) / per_row;
		if (n > SL_STORE_RETENTION_CHUNK)
			n = SL_STORE_RETENTION_CHUNK;
		if (n > s->rows)
			n = s->rows;
		sqlite3_bind_int64(s->del_rows, 1, (int64_t)n);
		int64_t d = delete_chunk(s, s->del_rows);
		if (d < 0)
			return -1;
		atomic_fetch_add_explicit(&s->st_retention_bytes, (uint64_t)d, memory_order_relaxed);
		total += d;
		if (d == 0)
			break;
		sl_store_measure(s);
		db_used = atomic_load(&s->st_db_bytes);
	}
	return total;
}

/* The byte phase of a pass: rows over the cap, then a file larger than the
 * cap (a cap lowered on an existing store). Returns 1 while more remains. */
static int bytes_step(struct sl_store *s, struct sl_store_retention *rp)
{
	const uint64_t max = s->cfg.max_bytes;
	if (sl_store_trim_bytes(s, 0) < 0) {
		rp->failed = 1;
		return 0;
	}
	sl_store_measure(s);
	uint64_t wal = atomic_load(&s->st_wal_bytes);
	uint64_t file = atomic_load(&s->st_file_bytes);
	/* The rows fit; the file itself may still be larger: give free pages
	 * back when the store allows it. */
	if (file + wal > max) {
		if (s->incremental_vacuum) {
			char sql[64];
			snprintf(sql, sizeof(sql), "PRAGMA incremental_vacuum(%d)", VACUUM_PAGES);
			if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
				rp->failed = 1;
				return 0;
			}
			sl_store_measure(s);
			return atomic_load(&s->st_file_bytes) < file &&
			       atomic_load(&s->st_file_bytes) + wal > max;
		}
		if (!s->cap_warned) {
			s->cap_warned = 1;
			sl_warn(MOD, "%s: the file (%llu bytes) is larger than store.max_bytes (%llu); its rows fit, but a database made before auto_vacuum=INCREMENTAL cannot give pages back while open (run VACUUM offline); it does not grow further",
				s->path, (unsigned long long)file, (unsigned long long)max);
		}
	}
	return 0;
}

int sl_store_retention_step(struct sl_store *s, struct sl_store_retention *rp)
{
	const int64_t chunk = SL_STORE_RETENTION_CHUNK;
	if (rp->phase == 0) {
		rp->phase = 1;
		const uint64_t max_age_s = __atomic_load_n(&s->cfg.max_age_s, __ATOMIC_RELAXED);
		if (max_age_s && max_age_s < (uint64_t)INT64_MAX / 1000000000u) {
			int64_t cutoff = sl_time_now_ns() - (int64_t)max_age_s * 1000000000LL;
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
	if (rp->phase == 1) {
		const uint64_t max_rows = __atomic_load_n(&s->cfg.max_rows, __ATOMIC_RELAXED);
		if (max_rows && s->rows > max_rows) {
			uint64_t extra = s->rows - max_rows;
			sqlite3_bind_int64(s->del_rows, 1,
					   extra < (uint64_t)chunk ? (int64_t)extra : chunk);
			int64_t n = delete_chunk(s, s->del_rows);
			if (n < 0) {
				rp->failed = 1;
				rp->phase = 2;
				return 1;
			}
			if (n > 0 && s->rows > max_rows)
				return 1;
		}
		rp->phase = 2;
	}
	if (s->cfg.max_bytes)
		return bytes_step(s, rp);
	return 0;
}

void sl_store_set_retention(struct sl_store *s, uint64_t max_age_s, uint64_t max_rows)
{
	if (!s)
		return;
	__atomic_store_n(&s->cfg.max_age_s, max_age_s, __ATOMIC_RELAXED);
	__atomic_store_n(&s->cfg.max_rows, max_rows, __ATOMIC_RELAXED);
}
