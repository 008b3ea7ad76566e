/* Profile windows in SQLite (prof_store.h). */
#include "store/prof_store.h"
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

/* Windows the byte cap deletes per statement. */
#define BYTES_CHUNK 64

struct sl_pstore {
	pthread_mutex_t mu;
	sqlite3 *db;
	char path[512];
};

struct sl_pstore *sl_pstore_open(const char *path, char *err, size_t errlen)
{
	struct sl_pstore *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&s->mu, NULL);
	snprintf(s->path, sizeof(s->path), "%s", path);
	/* auto_vacuum takes effect only before the first table is made */
	s->db = sl_sqlite_open_private(
		path,
		"PRAGMA auto_vacuum=INCREMENTAL; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
		"CREATE TABLE IF NOT EXISTS windows(id INTEGER PRIMARY KEY, start_ns INTEGER NOT NULL,"
		" end_ns INTEGER NOT NULL, kind TEXT NOT NULL, container_id TEXT NOT NULL,"
		" pod_uid TEXT NOT NULL, runtime TEXT NOT NULL, samples INTEGER NOT NULL, body BLOB NOT NULL);"
		"CREATE INDEX IF NOT EXISTS windows_start ON windows(start_ns);"
		"CREATE INDEX IF NOT EXISTS windows_container ON windows(container_id, start_ns);"
		"CREATE INDEX IF NOT EXISTS windows_pod ON windows(pod_uid, start_ns);"
		"PRAGMA user_version=1;",
		err, errlen);
	if (!s->db) {
		pthread_mutex_destroy(&s->mu);
		free(s);
		return NULL;
	}
	return s;
}

void sl_pstore_close(struct sl_pstore *s)
{
	if (!s)
		return;
	sqlite3_close(s->db);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

int sl_pstore_put(struct sl_pstore *s, const struct sl_pstore_window *w, size_t n)
{
	sqlite3_stmt *st = NULL;
	int rc = -EIO;
	pthread_mutex_lock(&s->mu);
	if (sl_sqlite_exec(s->db, "BEGIN", NULL, 0))
		goto out;
	if (sqlite3_prepare_v2(s->db,
			       "INSERT INTO windows(start_ns, end_ns, kind, container_id, pod_uid, runtime, samples, body)"
			       " VALUES(?,?,?,?,?,?,?,?)",
			       -1, &st, NULL) != SQLITE_OK)
		goto rollback;
	for (size_t i = 0; i < n; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, w[i].start_ns);
		sqlite3_bind_int64(st, 2, w[i].end_ns);
		sqlite3_bind_text(st, 3, w[i].kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, w[i].container_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, w[i].pod_uid, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 6, w[i].runtime, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 7, (sqlite3_int64)w[i].samples);
		sqlite3_bind_blob64(st, 8, w[i].body ? w[i].body : "", w[i].len, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto rollback;
	}
	if (!sl_sqlite_exec(s->db, "COMMIT", NULL, 0)) {
		rc = 0;
		goto out;
	}
rollback:
	sl_sqlite_exec(s->db, "ROLLBACK", NULL, 0);
out:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static int64_t pragma_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Pages in use * page size; -1 on error. mu held. */
static int64_t used_bytes(sqlite3 *db)
{
	int64_t pc = pragma_int(db, "PRAGMA page_count"), fl = pragma_int(db, "PRAGMA freelist_count"),
		ps = pragma_int(db, "PRAGMA page_size");
	if (pc < 0 || fl < 0 || ps < 0)
		return -1;
	return (pc - fl) * ps;
}

int sl_pstore_retain(struct sl_pstore *s, int64_t now_ns, uint64_t max_age_ns, uint64_t max_bytes,
		     uint64_t *deleted_age, uint64_t *deleted_bytes)
{
	sqlite3_stmt *st = NULL;
	int rc = 0;
	uint64_t da = 0, db = 0;
	pthread_mutex_lock(&s->mu);
	if (max_age_ns && (uint64_t)now_ns > max_age_ns) {
		if (sqlite3_prepare_v2(s->db, "DELETE FROM windows WHERE end_ns < ?", -1, &st, NULL) != SQLITE_OK) {
			rc = -EIO;
			goto out;
		}
		sqlite3_bind_int64(st, 1, now_ns - (int64_t)max_age_ns);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = -EIO;
		else
			da = (uint64_t)sqlite3_changes(s->db);
		sqlite3_finalize(st);
		st = NULL;
	}
	if (!rc && max_bytes) {
		int64_t used = used_bytes(s->db);
		if (used > (int64_t)max_bytes) {
			if (sqlite3_prepare_v2(s->db,
					       "DELETE FROM windows WHERE id IN (SELECT id FROM windows ORDER BY start_ns, id LIMIT ?)",
					       -1, &st, NULL) != SQLITE_OK) {
				rc = -EIO;
				goto out;
			}
			while (used > (int64_t)(max_bytes / 10 * 9)) {
				sqlite3_reset(st);
				sqlite3_bind_int(st, 1, BYTES_CHUNK);
				if (sqlite3_step(st) != SQLITE_DONE) {
					rc = -EIO;
					break;
				}
				int ch = sqlite3_changes(s->db);
				db += (uint64_t)ch;
				if (!ch)
					break;
				used = used_bytes(s->db);
				if (used < 0) {
					rc = -EIO;
					break;
				}
			}
			sqlite3_finalize(st);
			st = NULL;
		}
	}
	if (da || db)
		sl_sqlite_exec(s->db, "PRAGMA incremental_vacuum", NULL, 0);
out:
	pthread_mutex_unlock(&s->mu);
	if (deleted_age)
		*deleted_age = da;
	if (deleted_bytes)
		*deleted_bytes = db;
	return rc;
}

int sl_pstore_size(struct sl_pstore *s, uint64_t *used, uint64_t *file, uint64_t *windows)
{
	struct stat st;
	char wal[sizeof(s->path) + 8];
	pthread_mutex_lock(&s->mu);
	int64_t u = used_bytes(s->db), n = pragma_int(s->db, "SELECT count(*) FROM windows");
	pthread_mutex_unlock(&s->mu);
	if (u < 0 || n < 0)
		return -EIO;
	uint64_t f = 0;
	if (!stat(s->path, &st))
		f += (uint64_t)st.st_size;
	snprintf(wal, sizeof(wal), "%s-wal", s->path);
	if (!stat(wal, &st))
		f += (uint64_t)st.st_size;
	if (used)
		*used = (uint64_t)u;
	if (file)
		*file = f;
	if (windows)
		*windows = (uint64_t)n;
	return 0;
}

int sl_pstore_resolve_container(struct sl_pstore *s, const char *prefix, char *out, size_t outlen)
{
	sqlite3_stmt *st = NULL;
	size_t pl = strlen(prefix);
	int exact = pl < 4 || pl > 255, rc = -ENOENT;
	pthread_mutex_lock(&s->mu);
	if (sqlite3_prepare_v2(s->db,
			       exact ? "SELECT DISTINCT container_id FROM windows WHERE container_id = ?1 LIMIT 2"
				     : "SELECT DISTINCT container_id FROM windows"
				       " WHERE container_id != '' AND substr(container_id, 1, length(?1)) = ?1 LIMIT 2",
			       -1, &st, NULL) != SQLITE_OK) {
		rc = -EIO;
		goto out;
	}
	sqlite3_bind_text(st, 1, prefix, -1, SQLITE_STATIC);
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (rc == 0) {
			rc = -EINVAL;
			break;
		}
		snprintf(out, outlen, "%s", (const char *)sqlite3_column_text(st, 0));
		rc = 0;
	}
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		rc = -EIO;
out:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

void sl_pstore_windows_free(struct sl_pstore_window *w, size_t n)
{
	if (!w)
		return;
	for (size_t i = 0; i < n; i++)
		free(w[i].body);
	free(w);
}

int sl_pstore_query(struct sl_pstore *s, const struct sl_pstore_sel *sel, int with_body, size_t max,
		    struct sl_pstore_window **out, size_t *n)
{
	char sql[512];
	sqlite3_stmt *st = NULL;
	struct sl_pstore_window *v = NULL;
	size_t cnt = 0, cap = 0;
	int rc = 0, step;
	*out = NULL;
	*n = 0;
	snprintf(sql, sizeof(sql),
		 "SELECT id, start_ns, end_ns, kind, container_id, pod_uid, runtime, samples, %s FROM windows"
		 " WHERE end_ns > ?1 AND start_ns < ?2 AND (?3 IS NULL OR kind = ?3)%s ORDER BY start_ns, id",
		 with_body ? "body" : "length(body)",
		 sel->scope == SL_PSTORE_CONTAINER ? " AND container_id = ?4"
		 : sel->scope == SL_PSTORE_POD	   ? " AND pod_uid = ?4"
						   : "");
	pthread_mutex_lock(&s->mu);
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		rc = -EIO;
		goto out;
	}
	sqlite3_bind_int64(st, 1, sel->since_ns > 0 ? sel->since_ns : INT64_MIN);
	sqlite3_bind_int64(st, 2, sel->until_ns > 0 ? sel->until_ns : INT64_MAX);
	if (sel->kind)
		sqlite3_bind_text(st, 3, sel->kind, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 3);
	if (sel->scope != SL_PSTORE_HOST)
		sqlite3_bind_text(st, 4, sel->id ? sel->id : "", -1, SQLITE_STATIC);
	while ((step = sqlite3_step(st)) == SQLITE_ROW && (!max || cnt < max)) {
		if (cnt == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct sl_pstore_window *nv = realloc(v, nc * sizeof(*nv));
			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			v = nv;
			cap = nc;
		}
		struct sl_pstore_window *w = &v[cnt];
		memset(w, 0, sizeof(*w));
		w->id = sqlite3_column_int64(st, 0);
		w->start_ns = sqlite3_column_int64(st, 1);
		w->end_ns = sqlite3_column_int64(st, 2);
		snprintf(w->kind, sizeof(w->kind), "%s", (const char *)sqlite3_column_text(st, 3));
		snprintf(w->container_id, sizeof(w->container_id), "%s", (const char *)sqlite3_column_text(st, 4));
		snprintf(w->pod_uid, sizeof(w->pod_uid), "%s", (const char *)sqlite3_column_text(st, 5));
		snprintf(w->runtime, sizeof(w->runtime), "%s", (const char *)sqlite3_column_text(st, 6));
		w->samples = (uint64_t)sqlite3_column_int64(st, 7);
		if (with_body) {
			int bl = sqlite3_column_bytes(st, 8);
			const void *b = sqlite3_column_blob(st, 8);
			w->body = malloc(bl > 0 ? (size_t)bl : 1);
			if (!w->body) {
				rc = -ENOMEM;
				break;
			}
			if (bl > 0)
				memcpy(w->body, b, (size_t)bl);
			w->len = (size_t)(bl > 0 ? bl : 0);
		} else {
			w->len = (size_t)sqlite3_column_int64(st, 8);
		}
		cnt++;
	}
	if (!rc && step != SQLITE_ROW && step != SQLITE_DONE)
		rc = -EIO;
out:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	if (rc) {
		sl_pstore_windows_free(v, cnt);
		return rc;
	}
	*out = v;
	*n = cnt;
	return 0;
}
