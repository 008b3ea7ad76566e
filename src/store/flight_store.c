/* Flight recordings in the event store's file: writer thread, retention,
 * reads (flight_store.h). */
#include "store/flight_store.h"

#include "agent/flight.h"
#include "common/log.h"
#include "common/timefmt.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MOD "flight"
#define RETENTION_EVERY_MS 10000u
#define BYTES_DELETE_MAX 1000 /* rows one byte-cap pass deletes at most */

struct sl_flight_db {
	char *path;
	struct sl_flight_db_config cfg;
	sqlite3 *db; /* the writer's connection (writer thread after open) */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t wake, done;
	struct sl_flight_rec *qhead, *qtail; /* queued, oldest first */
	unsigned qn;
	uint64_t submitted, finished; /* under mu */
	int stop, ret_req;
	int64_t max_id; /* at open */
	_Atomic uint64_t st_written, st_dropped, st_errors, st_deleted, st_depth;
};

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS flight_recordings(id INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL,"
	" container_id TEXT NOT NULL, reason TEXT NOT NULL, events INTEGER NOT NULL, bytes INTEGER NOT NULL,"
	" json TEXT NOT NULL);"
	"CREATE INDEX IF NOT EXISTS flight_recordings_time ON flight_recordings(time_ns);"
	"CREATE INDEX IF NOT EXISTS flight_recordings_container ON flight_recordings(container_id, id);";

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int64_t exec_changes(sqlite3 *db, const char *sql, int64_t a)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_bind_parameter_count(st) >= 1)
		sqlite3_bind_int64(st, 1, a);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? sqlite3_changes(db) : -1;
}

static int64_t one_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Age, then count, then bytes (writer thread). Rows deleted or -1. */
static int64_t retain(struct sl_flight_db *db)
{
	int64_t total = 0, d;
	if (db->cfg.max_age_s) {
		int64_t cut = sl_time_now_ns() - (int64_t)db->cfg.max_age_s * 1000000000ll;
		if ((d = exec_changes(db->db, "DELETE FROM flight_recordings WHERE time_ns < ?1", cut)) < 0)
			return -1;
		total += d;
	}
	if (db->cfg.max_recordings) {
		d = exec_changes(db->db,
				 "DELETE FROM flight_recordings WHERE id IN (SELECT id FROM flight_recordings"
				 " ORDER BY id DESC LIMIT -1 OFFSET ?1)",
				 (int64_t)db->cfg.max_recordings);
		if (d < 0)
			return -1;
		total += d;
	}
	if (db->cfg.max_bytes) {
		for (int i = 0; i < BYTES_DELETE_MAX; i++) {
			int64_t b = one_int(db->db, "SELECT coalesce(sum(bytes), 0) FROM flight_recordings");
			if (b < 0)
				return -1;
			if ((uint64_t)b <= db->cfg.max_bytes)
				break;
			d = exec_changes(db->db,
					 "DELETE FROM flight_recordings WHERE id = (SELECT min(id) FROM flight_recordings)",
					 0);
			if (d <= 0)
				break;
			total += d;
		}
	}
	atomic_fetch_add(&db->st_deleted, (uint64_t)total);
	return total;
}

static int insert(struct sl_flight_db *db, const struct sl_flight_rec *r)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->db,
				    "INSERT OR REPLACE INTO flight_recordings(id, time_ns, container_id, reason, events, bytes,"
				    " json) VALUES(?1,?2,?3,?4,?5,?6,?7)",
				    -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, r->id);
		sqlite3_bind_int64(st, 2, r->time_ns);
		sqlite3_bind_text(st, 3, r->container_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, r->reason, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, (int64_t)r->events);
		sqlite3_bind_int64(st, 6, (int64_t)r->len);
		sqlite3_bind_text(st, 7, r->json, (int)r->len, SQLITE_STATIC);
		rc = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static void *writer(void *arg)
{
	struct sl_flight_db *db = arg;
	uint64_t next_ret = mono_ms() + RETENTION_EVERY_MS;
	pthread_mutex_lock(&db->mu);
	for (;;) {
		while (!db->qhead && !db->stop && !db->ret_req && mono_ms() < next_ret) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&db->wake, &db->mu, &ts);
		}
		/* the head stays queued (readers find it in memory) until it is in the table */
		struct sl_flight_rec *r = db->qhead;
		int ret = db->ret_req || mono_ms() >= next_ret || r;
		int stop = db->stop && !r;
		pthread_mutex_unlock(&db->mu);
		if (r) {
			if (insert(db, r)) {
				static struct sl_log_limit lim = SL_LOG_LIMIT_INIT(60);
				sl_log_limited(&lim, SL_LOG_WARN, MOD, "recording %lld not stored: %s", (long long)r->id,
					       sqlite3_errmsg(db->db));
				atomic_fetch_add(&db->st_errors, 1);
			} else {
				atomic_fetch_add(&db->st_written, 1);
			}
		}
		if (ret && !stop) {
			retain(db);
			next_ret = mono_ms() + RETENTION_EVERY_MS;
		}
		pthread_mutex_lock(&db->mu);
		if (r) { /* only the writer takes from the queue: r is still its head */
			db->qhead = r->next;
			if (!db->qhead)
				db->qtail = NULL;
			db->qn--;
			atomic_store(&db->st_depth, db->qn);
			sl_flight_rec_free(r);
			db->finished++;
		}
		if (ret)
			db->ret_req = 0;
		pthread_cond_broadcast(&db->done);
		if (stop)
			break;
	}
	pthread_mutex_unlock(&db->mu);
	return NULL;
}

struct sl_flight_db *sl_flight_db_open(const struct sl_flight_db_config *cfg, char *err, size_t errlen)
{
	struct sl_flight_db *db = calloc(1, sizeof(*db));
	if (!db || !cfg || !cfg->path || !(db->path = strdup(cfg->path))) {
		snprintf(err, errlen, "flight store: out of memory or no path");
		free(db);
		return NULL;
	}
	db->cfg = *cfg;
	db->cfg.path = db->path;
	/* the event store made the file (its checks: owner, mode, no symlink) */
	if (sqlite3_open_v2(db->path, &db->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
			    NULL) != SQLITE_OK) {
		snprintf(err, errlen, "flight store: open %s: %s", db->path, db->db ? sqlite3_errmsg(db->db) : "no memory");
		goto fail;
	}
	sqlite3_busy_timeout(db->db, 5000);
	char *msg = NULL;
	if (sqlite3_exec(db->db, schema, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(err, errlen, "flight store: schema: %s", msg ? msg : sqlite3_errmsg(db->db));
		sqlite3_free(msg);
		goto fail;
	}
	db->max_id = one_int(db->db, "SELECT coalesce(max(id), 0) FROM flight_recordings");
	pthread_mutex_init(&db->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&db->wake, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&db->done, NULL);
	int rc = pthread_create(&db->thread, NULL, writer, db);
	if (rc) {
		snprintf(err, errlen, "flight store: thread: %s", strerror(rc));
		pthread_cond_destroy(&db->wake);
		pthread_cond_destroy(&db->done);
		pthread_mutex_destroy(&db->mu);
		goto fail;
	}
	pthread_setname_np(db->thread, "sl-flight");
	return db;
fail:
	sqlite3_close(db->db);
	free(db->path);
	free(db);
	return NULL;
}

void sl_flight_db_close(struct sl_flight_db *db)
{
	if (!db)
		return;
	pthread_mutex_lock(&db->mu);
	db->stop = 1;
	pthread_cond_signal(&db->wake);
	pthread_mutex_unlock(&db->mu);
	pthread_join(db->thread, NULL);
	for (struct sl_flight_rec *r = db->qhead, *n; r; r = n) { /* none: the writer drains first */
		n = r->next;
		sl_flight_rec_free(r);
	}
	sqlite3_close(db->db);
	pthread_cond_destroy(&db->wake);
	pthread_cond_destroy(&db->done);
	pthread_mutex_destroy(&db->mu);
	free(db->path);
	free(db);
}

int64_t sl_flight_db_max_id(struct sl_flight_db *db)
{
	return db ? db->max_id : -1;
}

void sl_flight_db_submit(void *ctx, struct sl_flight_rec *r)
{
	struct sl_flight_db *db = ctx;
	if (!r)
		return;
	if (!db) {
		sl_flight_rec_free(r);
		return;
	}
	r->next = NULL;
	pthread_mutex_lock(&db->mu);
	if (db->qn >= SL_FLIGHT_DB_QUEUE || db->stop) {
		pthread_mutex_unlock(&db->mu);
		atomic_fetch_add(&db->st_dropped, 1);
		sl_flight_rec_free(r);
		return;
	}
	if (db->qtail)
		db->qtail->next = r;
	else
		db->qhead = r;
	db->qtail = r;
	db->qn++;
	db->submitted++;
	atomic_store(&db->st_depth, db->qn);
	pthread_cond_signal(&db->wake);
	pthread_mutex_unlock(&db->mu);
}

void sl_flight_db_flush(struct sl_flight_db *db)
{
	if (!db)
		return;
	pthread_mutex_lock(&db->mu);
	uint64_t target = db->submitted;
	pthread_cond_signal(&db->wake);
	while (db->finished < target)
		pthread_cond_wait(&db->done, &db->mu);
	pthread_mutex_unlock(&db->mu);
}

int64_t sl_flight_db_retain(struct sl_flight_db *db)
{
	if (!db)
		return -1;
	uint64_t before = atomic_load(&db->st_deleted);
	pthread_mutex_lock(&db->mu);
	db->ret_req = 1;
	pthread_cond_signal(&db->wake);
	while (db->ret_req)
		pthread_cond_wait(&db->done, &db->mu);
	pthread_mutex_unlock(&db->mu);
	return (int64_t)(atomic_load(&db->st_deleted) - before);
}

static sqlite3 *open_ro(struct sl_flight_db *db, char *err, size_t errlen)
{
	sqlite3 *h = NULL;
	if (sqlite3_open_v2(db->path, &h, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "sqlite: open %s read-only: %s", db->path, h ? sqlite3_errmsg(h) : "out of memory");
		sqlite3_close(h);
		return NULL;
	}
	sqlite3_busy_timeout(h, 2000);
	return h;
}

json_t *sl_flight_db_get(struct sl_flight_db *db, int64_t id, unsigned *status, char *err, size_t errlen)
{
	char *text = NULL;
	*status = 500;
	if (!db) {
		snprintf(err, errlen, "the flight recorder is off (flight.enabled)");
		*status = 503;
		return NULL;
	}
	pthread_mutex_lock(&db->mu); /* still queued: a copy from memory */
	for (struct sl_flight_rec *r = db->qhead; r; r = r->next)
		if (r->id == id) {
			text = strdup(r->json);
			break;
		}
	pthread_mutex_unlock(&db->mu);
	if (!text) {
		sqlite3 *h = open_ro(db, err, errlen);
		sqlite3_stmt *st = NULL;
		if (!h)
			return NULL;
		if (sqlite3_prepare_v2(h, "SELECT json FROM flight_recordings WHERE id = ?1", -1, &st, NULL) != SQLITE_OK) {
			snprintf(err, errlen, "sqlite: %s", sqlite3_errmsg(h));
			sqlite3_close(h);
			return NULL;
		}
		sqlite3_bind_int64(st, 1, id);
		int rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			const unsigned char *t = sqlite3_column_text(st, 0);
			text = t ? strdup((const char *)t) : NULL;
		} else if (rc == SQLITE_DONE) {
			*status = 404;
			snprintf(err, errlen, "no flight recording %lld (never made, or removed by retention)", (long long)id);
		} else {
			snprintf(err, errlen, "sqlite: %s", sqlite3_errmsg(h));
		}
		sqlite3_finalize(st);
		sqlite3_close(h);
		if (!text)
			return NULL;
	}
	json_t *j = json_loads(text, 0, NULL);
	free(text);
	if (!j || !json_is_object(j)) {
		json_decref(j);
		snprintf(err, errlen, "flight recording %lld does not parse", (long long)id);
		return NULL;
	}
	*status = 200;
	return j;
}

static json_t *meta(int64_t id, int64_t time_ns, const char *ct, const char *reason, int64_t events, int64_t bytes)
{
	char t[SL_TIME_RFC3339_MAX];
	sl_time_format(time_ns, t, sizeof(t));
	return json_pack("{s:I,s:s,s:s,s:s,s:I,s:I}", "id", (json_int_t)id, "time", t, "container_id", ct ? ct : "",
			 "reason", reason ? reason : "", "events", (json_int_t)events, "bytes", (json_int_t)bytes);
}

json_t *sl_flight_db_list(struct sl_flight_db *db, const char *container, unsigned limit, char *err, size_t errlen)
{
	if (!db) {
		snprintf(err, errlen, "the flight recorder is off (flight.enabled)");
		return NULL;
	}
	if (limit < 1 || limit > 1000)
		limit = 100;
	json_t *out = json_array();
	int64_t newest_stored = INT64_MAX;
	sqlite3 *h = open_ro(db, err, errlen);
	if (!h) {
		json_decref(out);
		return NULL;
	}
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(h,
			       "SELECT id, time_ns, container_id, reason, events, bytes FROM flight_recordings"
			       " WHERE ?1 IS NULL OR container_id = ?1 ORDER BY id DESC LIMIT ?2",
			       -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "sqlite: %s", sqlite3_errmsg(h));
		sqlite3_close(h);
		json_decref(out);
		return NULL;
	}
	if (container)
		sqlite3_bind_text(st, 1, container, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, limit);
	json_t *stored = json_array();
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		if (newest_stored == INT64_MAX)
			newest_stored = id;
		json_array_append_new(stored, meta(id, sqlite3_column_int64(st, 1),
						   (const char *)sqlite3_column_text(st, 2),
						   (const char *)sqlite3_column_text(st, 3), sqlite3_column_int64(st, 4),
						   sqlite3_column_int64(st, 5)));
	}
	sqlite3_finalize(st);
	sqlite3_close(h);
	/* queued ones first (newer than anything stored), newest first */
	pthread_mutex_lock(&db->mu);
	json_t *queued = json_array();
	for (struct sl_flight_rec *r = db->qhead; r; r = r->next)
		if ((!container || !strcmp(container, r->container_id)) &&
		    (newest_stored == INT64_MAX || r->id > newest_stored))
			json_array_insert_new(queued, 0,
					      meta(r->id, r->time_ns, r->container_id, r->reason, (int64_t)r->events,
						   (int64_t)r->len));
	pthread_mutex_unlock(&db->mu);
	json_array_extend(out, queued);
	json_array_extend(out, stored);
	json_decref(queued);
	json_decref(stored);
	while (json_array_size(out) > limit)
		json_array_remove(out, json_array_size(out) - 1);
	return out;
}

void sl_flight_db_get_stats(struct sl_flight_db *db, struct sl_flight_db_stats *o)
{
	memset(o, 0, sizeof(*o));
	if (!db)
		return;
	o->written = atomic_load(&db->st_written);
	o->dropped_queue = atomic_load(&db->st_dropped);
	o->write_errors = atomic_load(&db->st_errors);
	o->retention_deleted = atomic_load(&db->st_deleted);
	o->queue_depth = atomic_load(&db->st_depth);
}
