/* Task records and results in SQLite (task_store.h). */
#include "task/task_store.h"
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

#include "common/log.h"

#define MOD "tasks"
#define SCHEMA_VERSION 1

struct sl_task_store {
	pthread_mutex_t mu;
	sqlite3 *db;
};

struct sl_task_store *sl_task_store_open(const char *path, char *err, size_t errlen)
{
	struct sl_task_store *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&s->mu, NULL);
	s->db = sl_sqlite_open_private(path,
				       "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
				       "CREATE TABLE IF NOT EXISTS tasks(id TEXT PRIMARY KEY, created_ns INTEGER NOT NULL,"
				       " ended_ns INTEGER NOT NULL DEFAULT 0, status TEXT NOT NULL, json TEXT NOT NULL);"
				       "CREATE INDEX IF NOT EXISTS tasks_created ON tasks(created_ns);"
				       "CREATE TABLE IF NOT EXISTS results(task_id TEXT NOT NULL, format TEXT NOT NULL,"
				       " body BLOB NOT NULL, PRIMARY KEY(task_id, format));"
				       "PRAGMA user_version=1;",
				       err, errlen);
	if (!s->db)
		goto fail;
	/* tasks an earlier agent left active: they cannot be running now */
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(s->db, "SELECT id, json FROM tasks WHERE status IN ('pending','running')", -1,
			       &st, NULL) == SQLITE_OK) {
		json_t *fix = json_array();
		while (sqlite3_step(st) == SQLITE_ROW) {
			json_t *r = json_loads((const char *)sqlite3_column_text(st, 1), 0, NULL);
			if (!r)
				continue;
			json_object_set_new(r, "status", json_string("failed"));
			json_object_set_new(r, "reason", json_string("agent restarted while the task ran"));
			json_array_append_new(fix, r);
		}
		sqlite3_finalize(st);
		size_t i;
		json_t *r;
		json_array_foreach(fix, i, r) {
			const char *id = json_string_value(json_object_get(r, "id"));
			json_int_t c = json_integer_value(json_object_get(r, "created_ns"));
			if (id)
				sl_task_store_put(s, id, c, c, "failed", r);
		}
		json_decref(fix);
	}
	return s;
fail:
	if (s->db)
		sqlite3_close(s->db);
	pthread_mutex_destroy(&s->mu);
	free(s);
	return NULL;
}

void sl_task_store_close(struct sl_task_store *s)
{
	if (!s)
		return;
	sqlite3_close(s->db);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

int sl_task_store_put(struct sl_task_store *s, const char *id, int64_t created_ns, int64_t ended_ns,
		      const char *status, const json_t *record)
{
	char *js = json_dumps(record, JSON_COMPACT);
	sqlite3_stmt *st = NULL;
	int rc = -EIO;
	if (!js)
		return -ENOMEM;
	pthread_mutex_lock(&s->mu);
	if (sqlite3_prepare_v2(s->db,
			       "INSERT OR REPLACE INTO tasks(id, created_ns, ended_ns, status, json) VALUES(?,?,?,?,?)",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, created_ns);
		sqlite3_bind_int64(st, 3, ended_ns);
		sqlite3_bind_text(st, 4, status, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, js, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_DONE)
			rc = 0;
	}
	if (rc)
		sl_warn(MOD, "store record %s: %s", id, sqlite3_errmsg(s->db));
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	free(js);
	return rc;
}

int sl_task_store_put_result(struct sl_task_store *s, const char *id, const char *fmt, const void *body,
			     size_t len)
{
	sqlite3_stmt *st = NULL;
	int rc = -EIO;
	pthread_mutex_lock(&s->mu);
	if (sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO results(task_id, format, body) VALUES(?,?,?)", -1,
			       &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, fmt, -1, SQLITE_STATIC);
		sqlite3_bind_blob64(st, 3, len ? body : "", len, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_DONE)
			rc = 0;
	}
	if (rc)
		sl_warn(MOD, "store result %s/%s: %s", id, fmt, sqlite3_errmsg(s->db));
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

json_t *sl_task_store_get(struct sl_task_store *s, const char *id)
{
	sqlite3_stmt *st = NULL;
	json_t *r = NULL;
	pthread_mutex_lock(&s->mu);
	if (sqlite3_prepare_v2(s->db, "SELECT json FROM tasks WHERE id = ?", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			r = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return r;
}

json_t *sl_task_store_list(struct sl_task_store *s, size_t limit)
{
	sqlite3_stmt *st = NULL;
	json_t *a = json_array();
	pthread_mutex_lock(&s->mu);
	if (sqlite3_prepare_v2(s->db, "SELECT json FROM tasks ORDER BY created_ns DESC, id DESC LIMIT ?", -1, &st,
			       NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)limit);
		while (sqlite3_step(st) == SQLITE_ROW) {
			json_t *r = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
			if (r)
				json_array_append_new(a, r);
		}
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return a;
}

int sl_task_store_get_result(struct sl_task_store *s, const char *id, const char *fmt, char **body,
			     size_t *len)
{
	sqlite3_stmt *st = NULL;
	int rc = -EIO;
	*body = NULL;
	*len = 0;
	pthread_mutex_lock(&s->mu);
	if (sqlite3_prepare_v2(s->db, "SELECT body FROM results WHERE task_id = ? AND format = ?", -1, &st,
			       NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, fmt, -1, SQLITE_STATIC);
		int r = sqlite3_step(st);
		if (r == SQLITE_ROW) {
			size_t n = (size_t)sqlite3_column_bytes(st, 0);
			const void *p = sqlite3_column_blob(st, 0);
			*body = malloc(n + 1);
			if (*body) {
				if (n)
					memcpy(*body, p, n);
				(*body)[n] = 0;
				*len = n;
				rc = 0;
			} else {
				rc = -ENOMEM;
			}
		} else if (r == SQLITE_DONE) {
			rc = -ENOENT;
		}
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static int delete_locked(struct sl_task_store *s, const char *id)
{
	sqlite3_stmt *st = NULL;
	int rc = 0;
	static const char *const sql[] = {"DELETE FROM results WHERE task_id = ?", "DELETE FROM tasks WHERE id = ?"};
	for (int i = 0; i < 2; i++) {
		if (sqlite3_prepare_v2(s->db, sql[i], -1, &st, NULL) != SQLITE_OK) {
			rc = -EIO;
			continue;
		}
		sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = -EIO;
		else if (i == 1 && rc == 0 && sqlite3_changes(s->db) == 0)
			rc = -ENOENT; /* no such record (another delete was first) */
		sqlite3_finalize(st);
	}
	return rc;
}

int sl_task_store_delete(struct sl_task_store *s, const char *id)
{
	pthread_mutex_lock(&s->mu);
	int rc = delete_locked(s, id);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

int sl_task_store_retain(struct sl_task_store *s, int64_t now_ns, uint64_t max_age_ns, size_t max_records)
{
	sqlite3_stmt *st = NULL;
	int removed = 0;
	json_t *ids = json_array();
	pthread_mutex_lock(&s->mu);
	/* ended records: too old, or beyond the newest max_records */
	if (sqlite3_prepare_v2(s->db,
			       "SELECT id FROM tasks WHERE ended_ns > 0 AND (ended_ns < ?1 OR id NOT IN"
			       " (SELECT id FROM tasks WHERE ended_ns > 0 ORDER BY ended_ns DESC LIMIT ?2))",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, max_age_ns ? now_ns - (int64_t)max_age_ns : INT64_MIN);
		sqlite3_bind_int64(st, 2, max_records ? (sqlite3_int64)max_records : -1);
		while (sqlite3_step(st) == SQLITE_ROW)
			json_array_append_new(ids, json_string((const char *)sqlite3_column_text(st, 0)));
	} else {
		removed = -EIO;
	}
	sqlite3_finalize(st);
	size_t i;
	json_t *v;
	json_array_foreach(ids, i, v) {
		if (delete_locked(s, json_string_value(v)) == 0 && removed >= 0)
			removed++;
	}
	pthread_mutex_unlock(&s->mu);
	json_decref(ids);
	return removed;
}
