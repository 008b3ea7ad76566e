/* Embedded store, health: is the file at the path still the one the writer
 * writes (deleted, replaced, immutable, read-only)? The condition, its log
 * lines (once per condition, then counted), the sizes, and the health JSON
 * and metrics the API serves. */
#include "store/store_internal.h"

#include "common/log.h"
#include "common/prom.h"
#include "common/timefmt.h"

#include <inttypes.h>
#include <errno.h>
#include <stddef.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

#define MOD "store"

static const char *const cond_names[SL_STORE_COND_MAX] = {
	[SL_STORE_COND_NONE] = "none",
	[SL_STORE_COND_DELETED] = "deleted",
	[SL_STORE_COND_REPLACED] = "replaced",
	[SL_STORE_COND_READONLY] = "read_only",
	[SL_STORE_COND_IMMUTABLE] = "immutable",
	[SL_STORE_COND_FULL] = "full",
	[SL_STORE_COND_WAL] = "wal_over_limit",
	[SL_STORE_COND_IOERR] = "io_error",
};

const char *sl_store_cond_name(enum sl_store_cond c)
{
	return c >= 0 && c < SL_STORE_COND_MAX ? cond_names[c] : "unknown";
}

const char *sl_store_state_name(int state)
{
	switch (state) {
	case SL_STORE_OK: return "ok";
	case SL_STORE_DEGRADED: return "degraded";
	default: return "failed";
	}
}

enum sl_store_cond sl_store_check_file(struct sl_store *s, char *why, size_t whylen)
{
	struct stat st, fst;
	if (s->fd < 0) {
		snprintf(why, whylen, "%s is not open", s->path);
		return SL_STORE_COND_IOERR;
	}
	if (stat(s->path, &st) != 0) {
		if (errno == ENOENT) {
			snprintf(why, whylen, "%s was deleted while open", s->path);
			return SL_STORE_COND_DELETED;
		}
		snprintf(why, whylen, "stat %s: %s", s->path, strerror(errno));
		return SL_STORE_COND_IOERR;
	}
	if (st.st_dev != s->dev || st.st_ino != s->ino) {
		snprintf(why, whylen, "%s was replaced by another file (inode %llu, was %llu)",
			 s->path, (unsigned long long)st.st_ino, (unsigned long long)s->ino);
		return SL_STORE_COND_REPLACED;
	}
	if (fstat(s->fd, &fst) == 0 && fst.st_nlink == 0) {
		snprintf(why, whylen, "%s was deleted while open", s->path);
		return SL_STORE_COND_DELETED;
	}
	int fl = 0;
	if (ioctl(s->fd, FS_IOC_GETFLAGS, &fl) == 0 && (fl & (FS_IMMUTABLE_FL | FS_APPEND_FL))) {
		snprintf(why, whylen, "%s is %s (chattr)", s->path,
			 fl & FS_IMMUTABLE_FL ? "immutable" : "append-only");
		return SL_STORE_COND_IMMUTABLE;
	}
	struct statvfs vfs;
	if (fstatvfs(s->fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY)) {
		snprintf(why, whylen, "the filesystem of %s is read-only", s->path);
		return SL_STORE_COND_READONLY;
	}
	return SL_STORE_COND_NONE;
}

enum sl_store_cond sl_store_cond_of_sqlite(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_FULL: return SL_STORE_COND_FULL;
	case SQLITE_READONLY: return SL_STORE_COND_READONLY;
	default: return SL_STORE_COND_IOERR;
	}
}

/* Suppresses the limiter's lines for its interval from now (the condition
 * was just reported in full). */
static void arm(struct sl_log_limit *lim)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	atomic_store(&lim->next_ns,
		     (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + lim->interval_ns);
}

void sl_store_set_cond(struct sl_store *s, enum sl_store_cond cond, const char *why)
{
	/* One line when a condition starts and one when it ends; the same
	 * condition coming back within a minute (a disk that flaps full), and
	 * repeats of it while it lasts (every failed retry), print at most one
	 * line a minute, the rest counted in sandlens_log_suppressed_total. */
	static struct sl_log_limit start[SL_STORE_COND_MAX] = {
		[0 ... SL_STORE_COND_MAX - 1] = SL_LOG_LIMIT_INIT(60),
	};
	static struct sl_log_limit repeat = SL_LOG_LIMIT_INIT(60), end = SL_LOG_LIMIT_INIT(60);
	enum sl_store_cond old = s->cond;

	if (cond == SL_STORE_COND_NONE) {
		if (old == SL_STORE_COND_NONE)
			return;
		uint64_t ms = sl_store_mono_ms() - s->cond_since_ms;
		sl_log_limited(&end, SL_LOG_INFO, MOD, "%s is writable again (was %s for %llu.%03llu s)",
			       s->path, sl_store_cond_name(old), (unsigned long long)(ms / 1000),
			       (unsigned long long)(ms % 1000));
		pthread_mutex_lock(&s->hmu);
		s->reason[0] = '\0';
		s->cond_since_ns = 0;
		pthread_mutex_unlock(&s->hmu);
		s->cond = cond;
		atomic_store_explicit(&s->st_state, SL_STORE_OK, memory_order_relaxed);
		return;
	}
	if (old == SL_STORE_COND_NONE) {
		s->cond_since_ms = sl_store_mono_ms();
		atomic_fetch_add_explicit(&s->st_conditions, 1, memory_order_relaxed);
		if (sl_log_limited(&start[cond], SL_LOG_WARN, MOD,
				   "store unavailable (%s): %s; holding rows in memory (queue %zu) and retrying",
				   sl_store_cond_name(cond), why, s->cfg.queue_size))
			arm(&repeat);
	} else if (old != cond) {
		sl_log_limited(&start[cond], SL_LOG_WARN, MOD, "store still unavailable, now %s: %s",
			       sl_store_cond_name(cond), why);
	} else {
		sl_log_limited(&repeat, SL_LOG_WARN, MOD, "store still unavailable (%s): %s",
			       sl_store_cond_name(cond), why);
	}
	pthread_mutex_lock(&s->hmu);
	snprintf(s->reason, sizeof(s->reason), "%s: %s", sl_store_cond_name(cond), why);
	if (!s->cond_since_ns)
		s->cond_since_ns = sl_time_now_ns();
	pthread_mutex_unlock(&s->hmu);
	s->cond = cond;
	uint64_t st = atomic_load_explicit(&s->st_state, memory_order_relaxed);
	if (st == SL_STORE_OK)
		atomic_store_explicit(&s->st_state, SL_STORE_DEGRADED, memory_order_relaxed);
}

static uint64_t file_size(const char *path, const char *suffix)
{
	char p[4200];
	struct stat st;
	if (snprintf(p, sizeof(p), "%s%s", path, suffix) >= (int)sizeof(p) || stat(p, &st) != 0)
		return 0;
	return (uint64_t)st.st_size;
}

uint64_t sl_store_wal_bytes(struct sl_store *s)
{
	uint64_t wal = file_size(s->path, "-wal");
	atomic_store_explicit(&s->st_wal_bytes, wal, memory_order_relaxed);
	return wal;
}

static int64_t pragma_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

uint64_t sl_store_measure(struct sl_store *s)
{
	uint64_t wal = sl_store_wal_bytes(s);
	if (!s->db)
		return wal + atomic_load_explicit(&s->st_db_bytes, memory_order_relaxed);
	int64_t pages = pragma_int(s->db, "PRAGMA page_count");
	int64_t freel = pragma_int(s->db, "PRAGMA freelist_count");
	if (pages < 0 || freel < 0 || freel > pages)
		return wal + atomic_load_explicit(&s->st_db_bytes, memory_order_relaxed);
	uint64_t used = (uint64_t)(pages - freel) * (uint64_t)s->page_size;
	atomic_store_explicit(&s->st_db_bytes, used, memory_order_relaxed);
	atomic_store_explicit(&s->st_file_bytes, (uint64_t)pages * (uint64_t)s->page_size,
			      memory_order_relaxed);
	return used + wal;
}

json_t *sl_store_health_json(struct sl_store *s)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	if (!s) {
		json_object_set_new(o, "state", json_string("failed"));
		json_object_set_new(o, "reason", json_string("not open"));
		return o;
	}
	struct sl_store_stats st;
	char reason[sizeof(s->reason)], since[SL_TIME_RFC3339_MAX];
	int64_t since_ns;
	sl_store_get_stats(s, &st);
	pthread_mutex_lock(&s->hmu);
	memcpy(reason, s->reason, sizeof(reason));
	since_ns = s->cond_since_ns;
	pthread_mutex_unlock(&s->hmu);

	json_object_set_new(o, "state", json_string(sl_store_state_name(st.state)));
	if (st.state != SL_STORE_OK && reason[0])
		json_object_set_new(o, "reason", json_string(reason));
	if (st.state != SL_STORE_OK && since_ns) {
		sl_time_format(since_ns, since, sizeof(since));
		json_object_set_new(o, "since", json_string(since));
	}
	json_object_set_new(o, "held_rows", json_integer((json_int_t)st.held));
	json_object_set_new(o, "queue_depth", json_integer((json_int_t)st.queue_depth));
	json_object_set_new(o, "queue_capacity", json_integer((json_int_t)st.queue_capacity));
	json_object_set_new(o, "used_bytes", json_integer((json_int_t)st.used_bytes));
	json_object_set_new(o, "wal_bytes", json_integer((json_int_t)st.wal_bytes));
	json_object_set_new(o, "file_bytes", json_integer((json_int_t)st.file_bytes));
	json_object_set_new(o, "max_bytes", json_integer((json_int_t)s->cfg.max_bytes));
	json_object_set_new(o, "reopens", json_integer((json_int_t)st.reopens));
	char ep[24];
	snprintf(ep, sizeof(ep), "%016" PRIx64, sl_store_epoch(s));
	json_object_set_new(o, "epoch", json_string(ep));
	json_object_set_new(o, "batch_failures", json_integer((json_int_t)st.batch_failures));
	json_object_set_new(o, "dropped_unavailable",
			    json_integer((json_int_t)st.dropped_unavailable));
	return o;
}

/* The single-sample families, in /metrics order. */
struct store_fam {
	const char *name;
	int type; /* enum sl_prom_type */
	const char *help;
	size_t off; /* of the uint64_t in struct sl_store_stats */
};

void sl_store_write_metrics(struct sl_store *s, struct sl_prom *p)
{
	static const struct store_fam fams[] = {
		{"sandlens_store_unavailable_total", SL_PROM_COUNTER, "Times the event store became unavailable (deleted, replaced, read-only, immutable, full, I/O error).", offsetof(struct sl_store_stats, conditions)},
		{"sandlens_store_batch_failures_total", SL_PROM_COUNTER, "Write transactions that failed and were kept for a retry.", offsetof(struct sl_store_stats, batch_failures)},
		{"sandlens_store_reopens_total", SL_PROM_COUNTER, "Times the event store database was reopened or recreated.", offsetof(struct sl_store_stats, reopens)},
		{"sandlens_store_held_rows", SL_PROM_GAUGE, "Rows of a failed batch kept in memory for a retry.", offsetof(struct sl_store_stats, held)},
		{"sandlens_store_bytes", SL_PROM_GAUGE, "Event store size counted against store.max_bytes (pages in use plus WAL).", offsetof(struct sl_store_stats, used_bytes)},
		{"sandlens_store_wal_bytes", SL_PROM_GAUGE, "Size of the event store's WAL file.", offsetof(struct sl_store_stats, wal_bytes)},
	};
	struct sl_store_stats st;
	sl_store_get_stats(s, &st);

	const char *n = "sandlens_store_state";
	sl_prom_family(p, n, SL_PROM_GAUGE,
		       "Event store state (1 for the current one): ok, degraded (unavailable, rows held in memory), failed (unavailable and dropping).");
	for (int i = SL_STORE_OK; i <= SL_STORE_FAILED; i++) {
		const struct sl_prom_label l[] = {{"state", sl_store_state_name(i)}, {NULL, NULL}};
		sl_prom_u64(p, n, l, s && st.state == i);
	}
	for (size_t k = 0; k < sizeof(fams) / sizeof(fams[0]); k++)
		sl_prom_one_u64(p, fams[k].name, fams[k].type, fams[k].help,
				*(const uint64_t *)((const char *)&st + fams[k].off));
	n = "sandlens_store_retention_deleted_total";
	sl_prom_family(p, n, SL_PROM_COUNTER, "Rows deleted by retention, by limit.");
	const struct sl_prom_label lb[] = {{"limit", "bytes"}, {NULL, NULL}};
	const struct sl_prom_label la[] = {{"limit", "age_or_rows"}, {NULL, NULL}};
	sl_prom_u64(p, n, lb, st.retention_deleted_bytes);
	sl_prom_u64(p, n, la, st.retention_deleted - st.retention_deleted_bytes);
}

uint64_t sl_store_epoch(struct sl_store *s)
{
	return s ? atomic_load(&s->epoch) : 0;
}
