/* Capture records in SQLite (capture_store.h). */
#include "auto/capture_store.h"
#include "store/sqlite_private.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sl_capture_store {
	pthread_mutex_t mu;
	sqlite3 *db;
};

struct sl_capture_store *sl_capture_store_open(const char *path, char *err, size_t errlen)
{
	struct sl_capture_store *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&s->mu, NULL);
	/* captures hold command lines and stacks: the file is ours alone */
	s->db = sl_sqlite_open_private(
		path,
		"PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
		"CREATE TABLE IF NOT EXISTS captures(id TEXT PRIMARY KEY, created_ns INTEGER NOT NULL,"
		" container_id TEXT NOT NULL, detector TEXT NOT NULL, status TEXT NOT NULL, json TEXT NOT NULL);"
		"CREATE INDEX IF NOT EXISTS captures_created ON captures(created_ns);"
		"UPDATE captures SET status='failed', json=json_set(json,'$.status','failed','$.reason',"
		"'agent restarted while the capture ran') WHERE status='profiling';",
		err, errlen);
	if (!s->db) {
		pthread_mutex_destroy(&s->mu);
		free(s);
		return NULL;
	}
	return s;
}

void sl_capture_store_close(struct sl_capture_store *s)
{
	if (!s)
		return;
	sqlite3_close(s->db);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

int sl_capture_store_put(struct sl_capture_store *s, const char *id, int64_t created_ns, const char *container,
			 const char *detector, const char *status, const json_t *rec)
{
	char *txt = json_dumps(rec, JSON_COMPACT);
	sqlite3_stmt *st = NULL;
	int rc = -EIO;
	if (!txt)
		return -ENOMEM;
	pthread_mutex_lock(&s->mu);
	if (sqlite3_prepare_v2(s->db,
			       "INSERT OR REPLACE INTO captures(id, created_ns, container_id, detector, status, json)"
			       " VALUES(?,?,?,?,?,?)",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, created_ns);
		sqlite3_bind_text(st, 3, container, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, detector, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, status, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 6, txt, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_DONE)
			rc = 0;
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	free(txt);
	return rc;
}

json_t *sl_capture_store_get(struct sl_capture_store *s, const char *id)
{
	sqlite3_stmt *st = NULL;
	json_t *r = NULL;
	pthread_mutex_lock(&s->mu);
	if (sqlite3_prepare_v2(s->db, "SELECT json FROM captures WHERE id=?", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			r = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return r;
}

json_t *sl_capture_store_list(struct sl_capture_store *s, const char *container, const char *detector,
			      size_t limit)
{
	sqlite3_stmt *st = NULL;
	json_t *arr = json_array();
	pthread_mutex_lock(&s->mu);
	if (arr && sqlite3_prepare_v2(s->db,
				      "SELECT json FROM captures WHERE substr(container_id, 1, length(?1)) = ?1"
				      " AND (?2 IS NULL OR detector = ?2) ORDER BY created_ns DESC, id DESC LIMIT ?3",
				      -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, container ? container : "", -1, SQLITE_STATIC);
		if (detector)
			sqlite3_bind_text(st, 2, detector, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 2);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)limit);
		while (sqlite3_step(st) == SQLITE_ROW) {
			json_t *r = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
			if (r)
				json_array_append_new(arr, r);
		}
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return arr;
}

int sl_capture_store_trim(struct sl_capture_store *s, size_t max)
{
	sqlite3_stmt *st = NULL;
	int n = 0;
	pthread_mutex_lock(&s->mu);
	if (sqlite3_prepare_v2(s->db,
			       "DELETE FROM captures WHERE id NOT IN (SELECT id FROM captures ORDER BY created_ns DESC"
			       " LIMIT ?)",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)max);
		if (sqlite3_step(st) == SQLITE_DONE)
			n = sqlite3_changes(s->db);
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return n;
}
