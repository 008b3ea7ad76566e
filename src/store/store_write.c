/* Embedded store, write side: open/close, schema, the bounded submit
 * queue, flush and stats. The writer thread is in store_writer.c. */
#include "store/sqlite_private.h"
#include "store/store_internal.h"

#include "common/log.h"
#include "common/timefmt.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MOD "store"

static const char *const schema_sql =
	"CREATE TABLE IF NOT EXISTS events("
	" id INTEGER PRIMARY KEY AUTOINCREMENT, time_ns INTEGER NOT NULL, type TEXT NOT NULL,"
	" pid INTEGER, container_id TEXT, pod_uid TEXT, runtime TEXT, json TEXT NOT NULL);"
	"CREATE INDEX IF NOT EXISTS events_time ON events(time_ns);"
	"CREATE INDEX IF NOT EXISTS events_type_time ON events(type, time_ns);"
	/* type is carried so the containers query is index-only. */
	"CREATE INDEX IF NOT EXISTS events_container_time ON events(container_id, time_ns, type);"
	/* the epoch: a random 62-bit number made with the database, so a
	 * client holding an event id can tell that the store it came from was
	 * replaced (ids start again) -- sl_store_epoch */
	"CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
	"INSERT OR IGNORE INTO meta VALUES('epoch', (random() & 4611686018427387903) + 1);";


/* mkdir -p of the directory part of path, mode 0700 for what it creates. */
static int make_parent_dirs(const char *path)
{
	char buf[PATH_MAX];
	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	char *slash = strrchr(buf, '/');
	if (!slash || slash == buf)
		return 0;
	*slash = '\0';
	for (char *p = buf + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if (mkdir(buf, 0700) != 0 && errno != EEXIST)
				return -errno;
			*p = c;
			if (c == '\0')
				break;
		}
	}
	return 0;
}

static int exec_sql(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	snprintf(err, errlen, "sqlite: %s: %s", sql, msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	return -1;
}

/* Returns the first column of the first row as an integer/text, or -1. */
static int query_one(sqlite3 *db, const char *sql, int64_t *num, char *txt, size_t txtlen)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if (num)
			*num = sqlite3_column_int64(st, 0);
		if (txt) {
			const unsigned char *t = sqlite3_column_text(st, 0);
			snprintf(txt, txtlen, "%s", t ? (const char *)t : "");
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

static int setup_db(struct sl_store *s, char *err, size_t errlen)
{
	sqlite3 *db = s->db;
	char mode[16];
	int64_t ver = 0, rows = 0;

	sqlite3_busy_timeout(db, 5000);
	/* Before any table exists (a new store): freed pages can be given back
	 * (incremental_vacuum) when the file is over store.max_bytes. A no-op
	 * on an existing database. */
	sqlite3_exec(db, "PRAGMA auto_vacuum=INCREMENTAL", NULL, NULL, NULL);
	if (query_one(db, "PRAGMA journal_mode=WAL", NULL, mode, sizeof(mode)) != 0 ||
	    strcmp(mode, "wal") != 0) {
		snprintf(err, errlen, "sqlite: cannot set WAL mode on %s: %s", s->path,
			 sqlite3_errmsg(db));
		return -1;
	}
	if (exec_sql(db, "PRAGMA synchronous=NORMAL", err, errlen) != 0)
		return -1;
	if (query_one(db, "PRAGMA user_version", &ver, NULL, 0) != 0) {
		snprintf(err, errlen, "sqlite: %s: %s", s->path, sqlite3_errmsg(db));
		return -1;
	}
	if (ver > SL_STORE_SCHEMA_VERSION) {
		snprintf(err, errlen, "%s: schema version %lld is newer than this agent's %d",
			 s->path, (long long)ver, SL_STORE_SCHEMA_VERSION);
		return -1;
	}
	char vsql[64];
	snprintf(vsql, sizeof(vsql), "PRAGMA user_version=%d", SL_STORE_SCHEMA_VERSION);
	if (exec_sql(db, "BEGIN IMMEDIATE", err, errlen) != 0)
		return -1;
	if (exec_sql(db, schema_sql, err, errlen) != 0 || exec_sql(db, vsql, err, errlen) != 0 ||
	    exec_sql(db, "COMMIT", err, errlen) != 0) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	if (query_one(db, "SELECT count(*) FROM events", &rows, NULL, 0) != 0) {
		snprintf(err, errlen, "sqlite: count: %s", sqlite3_errmsg(db));
		return -1;
	}
	s->rows = (uint64_t)rows;
	int64_t epoch = 0;
	if (query_one(db, "SELECT value FROM meta WHERE key='epoch'", &epoch, NULL, 0) != 0 || epoch <= 0) {
		snprintf(err, errlen, "sqlite: %s: no store epoch: %s", s->path, sqlite3_errmsg(db));
		return -1;
	}
	atomic_store(&s->epoch, (uint64_t)epoch);
	int64_t av = 0, ps = 4096;
	query_one(db, "PRAGMA auto_vacuum", &av, NULL, 0);
	query_one(db, "PRAGMA page_size", &ps, NULL, 0);
	s->incremental_vacuum = av == 2;
	s->page_size = ps > 0 ? ps : 4096;
	/* The WAL stays within wal_limit: automatic checkpoints at a quarter of
	 * it, and a WAL reset truncates the file to that size. */
	char psql[96];
	int64_t ckpt_pages = (int64_t)(s->wal_limit / 4) / s->page_size;
	if (ckpt_pages > 1000)
		ckpt_pages = 1000; /* SQLite's default */
	if (ckpt_pages < 16)
		ckpt_pages = 16;
	snprintf(psql, sizeof(psql), "PRAGMA wal_autocheckpoint=%lld", (long long)ckpt_pages);
	if (exec_sql(db, psql, err, errlen) != 0)
		return -1;
	snprintf(psql, sizeof(psql), "PRAGMA journal_size_limit=%lld",
		 (long long)(ckpt_pages * s->page_size));
	if (query_one(db, psql, NULL, NULL, 0) != 0) {
		snprintf(err, errlen, "sqlite: journal_size_limit: %s", sqlite3_errmsg(db));
		return -1;
	}

	static const char *const ins =
		"INSERT INTO events(time_ns,type,pid,container_id,pod_uid,runtime,json)"
		" VALUES(?1,?2,?3,?4,?5,?6,?7)";
	static const char *const del_age =
		"DELETE FROM events WHERE id IN"
		" (SELECT id FROM events WHERE time_ns < ?1 LIMIT ?2)";
	static const char *const del_rows =
		"DELETE FROM events WHERE id IN"
		" (SELECT id FROM events ORDER BY time_ns, id LIMIT ?1)";
	if (sqlite3_prepare_v3(db, ins, -1, SQLITE_PREPARE_PERSISTENT, &s->ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v3(db, del_age, -1, SQLITE_PREPARE_PERSISTENT, &s->del_age, NULL) !=
		    SQLITE_OK ||
	    sqlite3_prepare_v3(db, del_rows, -1, SQLITE_PREPARE_PERSISTENT, &s->del_rows, NULL) !=
		    SQLITE_OK) {
		snprintf(err, errlen, "sqlite: prepare: %s", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

void sl_store_db_close(struct sl_store *s, int checkpoint)
{
	sqlite3_finalize(s->ins);
	sqlite3_finalize(s->del_age);
	sqlite3_finalize(s->del_rows);
	s->ins = s->del_age = s->del_rows = NULL;
	if (s->db) {
		if (checkpoint)
			sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
		sqlite3_close(s->db);
		s->db = NULL;
	}
	/* Only after SQLite closed its own descriptors: closing any descriptor
	 * of the file drops the process's POSIX locks on it (fcntl(2)). */
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* Why st (of the file at path; what: "database", "-wal", "-shm") must not
 * be opened, or NULL: a regular file (not a symlink) owned by this euid,
 * not group/other-writable, the database and its WAL not group/other-
 * readable either (they hold argv). */
static const char *file_refusal(const struct stat *st, int private_read)
{
	if (S_ISLNK(st->st_mode))
		return "is a symbolic link";
	if (!S_ISREG(st->st_mode))
		return "is not a regular file";
	if (st->st_uid != geteuid())
		return "is owned by another user";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "is group/other-writable";
	if (private_read && (st->st_mode & (S_IRGRP | S_IROTH)))
		return "is group/other-readable (it holds argv; chmod 600)";
	return NULL;
}

/* The -wal and -shm next to s->path: each absent or acceptable
 * (file_refusal). Returns 0 or -1 with err set. */
static int check_sidecars(const struct sl_store *s, char *err, size_t errlen)
{
	static const char *const sfx[] = {"-wal", "-shm"};
	char p[PATH_MAX + 8];
	for (size_t i = 0; i < 2; i++) {
		struct stat st;
		snprintf(p, sizeof(p), "%s%s", s->path, sfx[i]);
		if (lstat(p, &st) != 0) {
			if (errno == ENOENT)
				continue;
			snprintf(err, errlen, "store: %s: %s", p, strerror(errno));
			return -1;
		}
		const char *why = file_refusal(&st, i == 0);
		if (why) {
			snprintf(err, errlen, "store: refusing %s: it %s", p, why);
			return -1;
		}
	}
	return 0;
}

int sl_store_db_open(struct sl_store *s, char *err, size_t errlen)
{
	struct stat st;
	int rc = make_parent_dirs(s->path);
	if (rc) {
		snprintf(err, errlen, "store: creating the directory of %s: %s", s->path,
			 strerror(-rc));
		return -1;
	}
	const char *dwhy = sl_store_dir_refusal(s->path);
	if (dwhy) {
		snprintf(err, errlen, "store: refusing the directory of %s: it %s", s->path, dwhy);
		return -1;
	}
	if (check_sidecars(s, err, errlen) != 0)
		return -1;
	/* Created here, 0600, never through a planted symlink; an existing
	 * file is opened without following one and checked on the descriptor
	 * (a shared directory such as /tmp lets others plant files). */
	s->fd = open(s->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
	if (s->fd < 0 && errno == EEXIST)
		s->fd = open(s->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (s->fd < 0) {
		snprintf(err, errlen, "store: %s: %s", s->path,
			 errno == ELOOP ? "refusing it: it is a symbolic link" : strerror(errno));
		return -1;
	}
	const char *why = fstat(s->fd, &st) != 0 ? strerror(errno) : file_refusal(&st, 1);
	if (why) {
		snprintf(err, errlen, "store: refusing %s: it %s", s->path, why);
		goto fail;
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	if (sqlite3_open_v2(s->path, &s->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
				    SQLITE_OPEN_NOFOLLOW,
			    NULL) != SQLITE_OK) {
		snprintf(err, errlen, "sqlite: open %s: %s", s->path,
			 s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	if (setup_db(s, err, errlen) != 0)
		goto fail;
	/* WAL mode made (or reused) the -wal and -shm: still ours (one
	 * planted between the check above and SQLite's open is caught here) */
	if (check_sidecars(s, err, errlen) != 0)
		goto fail;
	return 0;
fail:
	sl_store_db_close(s, 0);
	return -1;
}

static void store_free(struct sl_store *s)
{
	sl_store_db_close(s, 1);
	for (size_t i = 0; i < s->held; i++) {
		free(s->batch[i]->json);
		free(s->batch[i]);
	}
	if (s->ring) {
		for (size_t i = 0; i < s->count; i++) {
			struct sl_store_event *e = s->ring[(s->head + i) % s->cfg.queue_size];
			free(e->json);
			free(e);
		}
	}
	free(s->ring);
	free(s->batch);
	free(s->path);
	free(s);
}

struct sl_store *sl_store_open(const struct sl_store_config *cfg, char *err, size_t errlen)
{
	if (!cfg || !cfg->path || !*cfg->path || strcmp(cfg->path, ":memory:") == 0) {
		snprintf(err, errlen, "store: a database file path is required");
		return NULL;
	}
	struct sl_store *s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(cfg->path))) {
		snprintf(err, errlen, "store: out of memory");
		free(s);
		return NULL;
	}
	s->cfg = *cfg;
	s->cfg.path = s->path;
	s->fd = -1;
	s->wal_limit = SL_STORE_WAL_LIMIT;
	if (s->cfg.max_bytes) {
		s->wal_limit = s->cfg.max_bytes / 4;
		if (s->wal_limit > SL_STORE_WAL_LIMIT)
			s->wal_limit = SL_STORE_WAL_LIMIT;
		if (s->wal_limit < (256u << 10))
			s->wal_limit = 256u << 10;
	}
	if (!s->cfg.queue_size)
		s->cfg.queue_size = SL_STORE_DEFAULT_QUEUE_SIZE;
	if (!s->cfg.batch_max)
		s->cfg.batch_max = SL_STORE_DEFAULT_BATCH_MAX;
	if (!s->cfg.retention_interval_ms)
		s->cfg.retention_interval_ms = SL_STORE_DEFAULT_RETENTION_INTERVAL_MS;
	s->ring = calloc(s->cfg.queue_size, sizeof(*s->ring));
	s->batch = calloc(s->cfg.batch_max, sizeof(*s->batch));
	if (!s->ring || !s->batch) {
		snprintf(err, errlen, "store: out of memory for a queue of %zu", s->cfg.queue_size);
		goto fail;
	}
	if (sl_store_db_open(s, err, errlen) != 0)
		goto fail;
	sl_store_measure(s);

	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->hmu, NULL);
	pthread_cond_init(&s->wake, &ca);
	pthread_cond_init(&s->done, NULL);
	pthread_condattr_destroy(&ca);
	atomic_init(&s->st_depth, 0);
	unsigned long long rows = s->rows; /* the writer owns s->rows from here on */
	int rc = pthread_create(&s->thread, NULL, sl_store_writer_main, s);
	if (!rc)
		pthread_setname_np(s->thread, "sl-store");
	if (rc) {
		snprintf(err, errlen, "store: writer thread: %s", strerror(rc));
		pthread_cond_destroy(&s->wake);
		pthread_cond_destroy(&s->done);
		pthread_mutex_destroy(&s->mu);
		pthread_mutex_destroy(&s->hmu);
		goto fail;
	}
	sl_info(MOD, "opened %s (%llu rows, queue %zu, batch %zu)", s->path,
		rows, s->cfg.queue_size, s->cfg.batch_max);
	return s;
fail:
	store_free(s);
	return NULL;
}

static void count_drop(struct sl_store *s, struct sl_store_event *ev)
{
	atomic_fetch_add_explicit(&s->st_dropped, 1, memory_order_relaxed);
	if (atomic_load_explicit(&s->st_state, memory_order_relaxed) != SL_STORE_OK) {
		atomic_fetch_add_explicit(&s->st_dropped_unavailable, 1, memory_order_relaxed);
		/* The bound is hit: the store is failing, not just degraded (a
		 * compare-exchange: the writer may have just recovered). */
		uint64_t want = SL_STORE_DEGRADED;
		atomic_compare_exchange_strong(&s->st_state, &want, SL_STORE_FAILED);
	}
	atomic_fetch_add_explicit(&s->st_dropped_weight, ev->weight ? ev->weight : 1,
				  memory_order_relaxed);
	free(ev->json);
	ev->json = NULL;
}

int sl_store_submit(struct sl_store *s, struct sl_store_event *ev)
{
	if (!s || !ev || !ev->json) {
		if (s)
			atomic_fetch_add_explicit(&s->st_write_errors, 1, memory_order_relaxed);
		if (ev) {
			free(ev->json);
			ev->json = NULL;
		}
		return -EINVAL;
	}
	/* Fast path without malloc when visibly full (the check under the lock
	 * below is the authoritative one). */
	if (atomic_load_explicit(&s->st_depth, memory_order_relaxed) >= s->cfg.queue_size) {
		count_drop(s, ev);
		return -EAGAIN;
	}
	struct sl_store_event *rec = malloc(sizeof(*rec));
	if (!rec) {
		atomic_fetch_add_explicit(&s->st_write_errors, 1, memory_order_relaxed);
		free(ev->json);
		ev->json = NULL;
		return -ENOMEM;
	}
	*rec = *ev;
	pthread_mutex_lock(&s->mu);
	if (s->count == s->cfg.queue_size) {
		pthread_mutex_unlock(&s->mu);
		free(rec);
		count_drop(s, ev);
		return -EAGAIN;
	}
	s->ring[(s->head + s->count) % s->cfg.queue_size] = rec;
	s->count++;
	s->submit_seq++;
	atomic_store_explicit(&s->st_depth, s->count, memory_order_relaxed);
	int first = s->count == 1;
	pthread_mutex_unlock(&s->mu);
	if (first)
		pthread_cond_signal(&s->wake);
	ev->json = NULL;
	atomic_fetch_add_explicit(&s->st_submitted, 1, memory_order_relaxed);
	return 0;
}

int sl_store_flush(struct sl_store *s)
{
	if (!s)
		return -EINVAL;
	pthread_mutex_lock(&s->mu);
	uint64_t target = s->submit_seq;
	pthread_cond_signal(&s->wake);
	while (s->done_seq < target && !s->blocked)
		pthread_cond_wait(&s->done, &s->mu);
	if (s->done_seq < target) {
		/* The store is unavailable: the rows are held, not lost. */
		pthread_mutex_unlock(&s->mu);
		return -EAGAIN;
	}
	int rc = s->error_seq > s->flush_mark ? -EIO : 0;
	if (s->error_seq > s->flush_mark)
		s->flush_mark = s->error_seq;
	pthread_mutex_unlock(&s->mu);
	return rc;
}

int sl_store_run_retention(struct sl_store *s)
{
	if (!s)
		return -EINVAL;
	pthread_mutex_lock(&s->mu);
	uint64_t target = ++s->ret_req;
	pthread_cond_signal(&s->wake);
	while (s->ret_done < target)
		pthread_cond_wait(&s->done, &s->mu);
	int rc = s->ret_failed ? -EIO : 0;
	pthread_mutex_unlock(&s->mu);
	return rc;
}

void sl_store_test_pause(struct sl_store *s, int pause)
{
	pthread_mutex_lock(&s->mu);
	s->paused = pause != 0;
	pthread_cond_signal(&s->wake);
	while (pause && !s->parked && !s->stop)
		pthread_cond_wait(&s->done, &s->mu);
	pthread_mutex_unlock(&s->mu);
}

void sl_store_close(struct sl_store *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = 1;
	s->paused = 0;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->thread, NULL);
	pthread_cond_destroy(&s->wake);
	pthread_cond_destroy(&s->done);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->hmu);
	sl_info(MOD, "closed %s (%llu rows written, %llu dropped, %llu errors)", s->path,
		(unsigned long long)atomic_load(&s->st_written),
		(unsigned long long)atomic_load(&s->st_dropped),
		(unsigned long long)atomic_load(&s->st_write_errors));
	store_free(s);
}

void sl_store_get_stats(struct sl_store *s, struct sl_store_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!s)
		return;
	out->submitted = atomic_load_explicit(&s->st_submitted, memory_order_relaxed);
	out->written = atomic_load_explicit(&s->st_written, memory_order_relaxed);
	out->dropped_queue_full = atomic_load_explicit(&s->st_dropped, memory_order_relaxed);
	out->dropped_queue_full_weight =
		atomic_load_explicit(&s->st_dropped_weight, memory_order_relaxed);
	out->write_errors = atomic_load_explicit(&s->st_write_errors, memory_order_relaxed);
	out->retention_deleted =
		atomic_load_explicit(&s->st_retention_deleted, memory_order_relaxed);
	out->queue_depth = atomic_load_explicit(&s->st_depth, memory_order_relaxed);
	out->queue_capacity = s->cfg.queue_size;
#define LD(f) atomic_load_explicit(&s->f, memory_order_relaxed)
	out->retention_deleted_bytes = LD(st_retention_bytes);
	out->held = LD(st_held);
	out->batch_failures = LD(st_batch_failures);
	out->conditions = LD(st_conditions);
	out->reopens = LD(st_reopens);
	out->dropped_unavailable = LD(st_dropped_unavailable);
	out->used_bytes = LD(st_db_bytes) + LD(st_wal_bytes);
	out->wal_bytes = LD(st_wal_bytes);
	out->file_bytes = LD(st_file_bytes);
	out->state = (int)LD(st_state);
#undef LD
}
