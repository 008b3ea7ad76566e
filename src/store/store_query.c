/* Embedded store, read side: events and containers queries, each on its own
 * read-only connection. Only fixed SQL fragments are concatenated; every
 * value from the caller is a bound parameter. See store.h. */
#include "store/store_internal.h"

#include "common/timefmt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sqlite3 *open_ro(struct sl_store *s, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	if (!s) {
		snprintf(err, errlen, "store: not open");
		return NULL;
	}
	if (sqlite3_open_v2(s->path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "sqlite: open %s read-only: %s", s->path,
			 db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, 2000);
	return db;
}

static int fail(sqlite3 *db, sqlite3_stmt *st, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "sqlite: %s: %s", what, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	sqlite3_close(db);
	return -1;
}

/* Binds text to a named parameter if the statement has it. */
static void bind_named_text(sqlite3_stmt *st, const char *name, const char *v, int len)
{
	int i = sqlite3_bind_parameter_index(st, name);
	if (i)
		sqlite3_bind_text(st, i, v, len, SQLITE_TRANSIENT);
}

static void bind_named_int(sqlite3_stmt *st, const char *name, int64_t v)
{
	int i = sqlite3_bind_parameter_index(st, name);
	if (i)
		sqlite3_bind_int64(st, i, v);
}

static json_t *text_or_empty(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	return json_string(t ? (const char *)t : "");
}

/* Event object: stored JSON + "id"; the indexed columns when it does not parse. */
static json_t *row_to_event(sqlite3_stmt *st)
{
	const char *js = (const char *)sqlite3_column_text(st, 7);
	json_t *o = js ? json_loads(js, 0, NULL) : NULL;
	if (o && !json_is_object(o)) {
		json_decref(o);
		o = NULL;
	}
	if (!o) {
		o = json_object();
		json_object_set_new(o, "time_ns", json_integer(sqlite3_column_int64(st, 1)));
		json_object_set_new(o, "type", text_or_empty(st, 2));
		json_object_set_new(o, "pid", json_integer(sqlite3_column_int64(st, 3)));
		json_object_set_new(o, "container_id", text_or_empty(st, 4));
		json_object_set_new(o, "pod_uid", text_or_empty(st, 5));
		json_object_set_new(o, "runtime", text_or_empty(st, 6));
	}
	json_object_set_new(o, "id", json_integer(sqlite3_column_int64(st, 0)));
	return o;
}

/* Resolves a container id prefix of >= 4 bytes inside the caller's read
 * transaction. The matching ids are those in [p, p') where p' is p with its
 * last byte that is not 0xff incremented (and cut there): exactly the
 * strings that start with p under BINARY collation, and an index range.
 * Returns 0 with *exact set (malloc'd) when one id matches, 0 with *exact
 * NULL when several do (upper[] then holds p', *has_upper whether it
 * exists), 1 when none does, -1 on error. */
static int resolve_prefix(sqlite3 *db, const char *p, size_t len, char *upper, int *has_upper,
			  char **exact)
{
	memcpy(upper, p, len);
	size_t n = len;
	while (n && (unsigned char)upper[n - 1] == 0xff)
		n--;
	*has_upper = n > 0;
	if (n)
		upper[n - 1] = (char)((unsigned char)upper[n - 1] + 1);
	upper[n] = '\0';
	*exact = NULL;

	char *ends[2] = {NULL, NULL};
	for (int k = 0; k < 2; k++) {
		char sql[160];
		snprintf(sql, sizeof(sql),
			 "SELECT container_id FROM events WHERE container_id >= :cid%s"
			 " ORDER BY container_id %s LIMIT 1",
			 *has_upper ? " AND container_id < :cid_upper" : "", k ? "DESC" : "ASC");
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
			goto err;
		bind_named_text(st, ":cid", p, (int)len);
		bind_named_text(st, ":cid_upper", upper, -1);
		int rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			ends[k] = strdup((const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			goto err;
		if (rc == SQLITE_DONE)
			return 1;
		if (!ends[k])
			goto err;
	}
	if (strcmp(ends[0], ends[1]) == 0) {
		*exact = ends[0];
		ends[0] = NULL;
	}
	free(ends[0]);
	free(ends[1]);
	return 0;
err:
	free(ends[0]);
	free(ends[1]);
	return -1;
}

json_t *sl_store_query_events(struct sl_store *s, const struct sl_event_filter *f, char *err,
			      size_t errlen)
{
	static const struct sl_event_filter none = {0};
	if (!f)
		f = &none;
	sqlite3 *db = open_ro(s, err, errlen);
	if (!db)
		return NULL;
	/* One read transaction: the prefix resolution and the query see the
	 * same snapshot. */
	if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
		fail(db, NULL, "begin", err, errlen);
		return NULL;
	}

	const char *cid = f->container_id;
	size_t cid_len = cid ? strlen(cid) : 0;
	char upper[256], *exact = NULL;
	int has_upper = 0, range = 0;
	if (cid && cid_len >= 4 && cid_len < sizeof(upper)) {
		int rc = resolve_prefix(db, cid, cid_len, upper, &has_upper, &exact);
		if (rc < 0) {
			fail(db, NULL, "container prefix", err, errlen);
			return NULL;
		}
		if (rc == 1) { /* no container matches */
			sqlite3_close(db);
			return json_array();
		}
		if (exact) {
			cid = exact;
			cid_len = strlen(exact);
		} else {
			range = 1;
		}
	}

	/* With a follow cursor the rows past after_id are few: "+col" keeps
	 * the planner on the rowid range instead of a secondary index. Without
	 * one, newest-first follows the (x, time_ns) indexes without a sort. */
	const char *pl = f->after_id ? "+" : "";
	char sql[768];
	size_t n = (size_t)snprintf(sql, sizeof(sql),
				    "SELECT id,time_ns,type,pid,container_id,pod_uid,runtime,json"
				    " FROM events WHERE 1");
#define ADD(...) n += (size_t)snprintf(sql + n, sizeof(sql) - n, __VA_ARGS__)
	if (f->type)
		ADD(" AND %stype = :type", pl);
	if (cid && range) {
		ADD(" AND %scontainer_id >= :cid", pl);
		if (has_upper)
			ADD(" AND %scontainer_id < :cid_upper", pl);
	} else if (cid) {
		ADD(" AND %scontainer_id = :cid", pl);
	}
	if (f->pod_uid)
		ADD(" AND pod_uid = :pod");
	if (f->since_ns)
		ADD(" AND %stime_ns >= :since", pl);
	if (f->until_ns)
		ADD(" AND %stime_ns < :until", pl);
	if (f->after_id)
		ADD(" AND id > :after");
	ADD("%s", f->ascending ? " ORDER BY id ASC LIMIT :limit"
			       : " ORDER BY time_ns DESC, id DESC LIMIT :limit");
#undef ADD

	sqlite3_stmt *st = NULL;
	json_t *arr = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		goto bad;
	if (f->type)
		bind_named_text(st, ":type", f->type, -1);
	if (cid)
		bind_named_text(st, ":cid", cid, (int)cid_len);
	if (range && has_upper)
		bind_named_text(st, ":cid_upper", upper, -1);
	if (f->pod_uid)
		bind_named_text(st, ":pod", f->pod_uid, -1);
	bind_named_int(st, ":since", f->since_ns);
	bind_named_int(st, ":until", f->until_ns);
	bind_named_int(st, ":after", f->after_id);
	uint32_t limit = f->limit ? f->limit : SL_STORE_QUERY_DEFAULT_LIMIT;
	if (limit > SL_STORE_QUERY_MAX_LIMIT)
		limit = SL_STORE_QUERY_MAX_LIMIT;
	bind_named_int(st, ":limit", limit);

	arr = json_array();
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(arr, row_to_event(st));
	if (rc != SQLITE_DONE)
		goto bad;
	sqlite3_finalize(st);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(db);
	free(exact);
	return arr;
bad:
	json_decref(arr);
	free(exact);
	fail(db, st, "events query", err, errlen);
	return NULL;
}

static json_t *time_json(int64_t ns)
{
	char buf[SL_TIME_RFC3339_MAX];
	return sl_time_format(ns, buf, sizeof(buf)) > 0 ? json_string(buf) : json_null();
}

json_t *sl_store_query_containers(struct sl_store *s, char *err, size_t errlen)
{
	/* Both aggregates read only the covering index (container_id, time_ns,
	 * type); pod_uid/runtime come from each container's newest row. */
	static const char *const q_totals =
		"SELECT container_id, count(*), min(time_ns), max(time_ns) FROM events"
		" WHERE container_id > '' GROUP BY container_id ORDER BY container_id";
	static const char *const q_types =
		"SELECT container_id, type, count(*) FROM events"
		" WHERE container_id > '' GROUP BY container_id, type";
	static const char *const q_latest =
		"SELECT pod_uid, runtime FROM events WHERE container_id = ?1"
		" ORDER BY time_ns DESC LIMIT 1";
	sqlite3 *db = open_ro(s, err, errlen);
	if (!db)
		return NULL;
	sqlite3_stmt *st = NULL, *latest = NULL;
	/* One read transaction: all statements see the same snapshot. */
	if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
		fail(db, NULL, "begin", err, errlen);
		return NULL;
	}
	json_t *arr = json_array(), *by_id = json_object();
	int rc;
	if (sqlite3_prepare_v2(db, q_totals, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, q_latest, -1, &latest, NULL) != SQLITE_OK)
		goto bad;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *cid = (const char *)sqlite3_column_text(st, 0);
		json_t *o = json_object();
		json_object_set_new(o, "container_id", json_string(cid));
		sqlite3_bind_text(latest, 1, cid, -1, SQLITE_STATIC);
		int lrc = sqlite3_step(latest);
		json_object_set_new(o, "pod_uid", lrc == SQLITE_ROW ? text_or_empty(latest, 0)
								   : json_string(""));
		json_object_set_new(o, "runtime", lrc == SQLITE_ROW ? text_or_empty(latest, 1)
								   : json_string(""));
		sqlite3_reset(latest);
		if (lrc != SQLITE_ROW && lrc != SQLITE_DONE) {
			json_decref(o);
			goto bad;
		}
		json_object_set_new(o, "events", json_integer(sqlite3_column_int64(st, 1)));
		json_object_set_new(o, "by_type", json_object());
		json_object_set_new(o, "first_seen", time_json(sqlite3_column_int64(st, 2)));
		json_object_set_new(o, "last_seen", time_json(sqlite3_column_int64(st, 3)));
		json_array_append_new(arr, o);
		json_object_set(by_id, cid, o);
	}
	if (rc != SQLITE_DONE)
		goto bad;
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(db, q_types, -1, &st, NULL) != SQLITE_OK)
		goto bad;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o = json_object_get(by_id, (const char *)sqlite3_column_text(st, 0));
		const char *type = (const char *)sqlite3_column_text(st, 1);
		if (o && type)
			json_object_set_new(json_object_get(o, "by_type"), type,
					    json_integer(sqlite3_column_int64(st, 2)));
	}
	if (rc != SQLITE_DONE)
		goto bad;
	sqlite3_finalize(st);
	sqlite3_finalize(latest);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(db);
	json_decref(by_id);
	return arr;
bad:
	json_decref(arr);
	json_decref(by_id);
	sqlite3_finalize(latest);
	fail(db, st, "containers query", err, errlen);
	return NULL;
}

int sl_store_max_id(struct sl_store *s, int64_t *id, char *err, size_t errlen)
{
	sqlite3 *db = open_ro(s, err, errlen);
	sqlite3_stmt *st = NULL;
	if (!db)
		return -1;
	if (sqlite3_prepare_v2(db, "SELECT coalesce(max(id), 0) FROM events", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW)
		return fail(db, st, "max id", err, errlen);
	*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return 0;
}
