/* Embedded store (src/store): round trip with every filter, queue-full
 * accounting, retention by age and by rows, flush semantics, concurrent
 * readers while the writer inserts. Expected query results are computed
 * from the submitted records by a plain C filter (an independent oracle),
 * not hard-coded. Each test uses its own mkdtemp directory. */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "common/timefmt.h"
#include "store/store.h"

struct fixture {
	char dir[64];
	char path[128];
};

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	strcpy(fx->dir, "/tmp/sl-store-test.XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	/* A nested, missing parent: the store must create it. */
	snprintf(fx->path, sizeof(fx->path), "%s/sub/dir/events.db", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	nftw(fx->dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

/* A record as submitted, kept for the oracle. */
struct rec {
	int seq;
	int64_t time_ns;
	const char *type, *cid, *pod, *runtime;
	uint32_t pid;
};

static struct sl_store *open_store(const char *path, size_t queue, size_t batch, uint64_t age,
				   uint64_t rows, uint64_t interval_ms)
{
	struct sl_store_config cfg = {
		.path = path,
		.queue_size = queue,
		.batch_max = batch,
		.max_age_s = age,
		.max_rows = rows,
		.retention_interval_ms = interval_ms,
	};
	char err[256] = "";
	struct sl_store *s = sl_store_open(&cfg, err, sizeof(err));
	if (!s)
		fprintf(stderr, "open: %s\n", err);
	return s;
}

static int submit_rec(struct sl_store *s, const struct rec *r, uint64_t weight)
{
	struct sl_store_event ev = {.time_ns = r->time_ns, .pid = r->pid, .weight = weight};
	snprintf(ev.type, sizeof(ev.type), "%s", r->type);
	snprintf(ev.container_id, sizeof(ev.container_id), "%s", r->cid);
	snprintf(ev.pod_uid, sizeof(ev.pod_uid), "%s", r->pod);
	snprintf(ev.runtime, sizeof(ev.runtime), "%s", r->runtime);
	json_t *o = json_pack("{s:I, s:s, s:i, s:s, s:s, s:s, s:i}", "time_ns",
			      (json_int_t)r->time_ns, "type", r->type, "pid", (int)r->pid,
			      "container_id", r->cid, "pod_uid", r->pod, "runtime", r->runtime,
			      "seq", r->seq);
	ev.json = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	int rc = sl_store_submit(s, &ev);
	assert_null(ev.json); /* consumed either way */
	return rc;
}

static size_t query_count(struct sl_store *s, const struct sl_event_filter *f)
{
	char err[256];
	struct sl_event_filter all = {.limit = SL_STORE_QUERY_MAX_LIMIT};
	json_t *a = sl_store_query_events(s, f ? f : &all, err, sizeof(err));
	assert_non_null(a);
	size_t n = json_array_size(a);
	json_decref(a);
	return n;
}

static const char *const CID_A =
	"aaaa1111000000000000000000000000000000000000000000000000000000a1";
static const char *const CID_B =
	"aaaa2222000000000000000000000000000000000000000000000000000000b2";
static const char *const CID_C = "c%_x-wildcards";

static int starts_with(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* The oracle: does r pass f (ignoring after_id/limit/order)? */
static int rec_matches(const struct rec *r, const struct sl_event_filter *f)
{
	if (f->type && strcmp(r->type, f->type))
		return 0;
	if (f->container_id) {
		if (strlen(f->container_id) >= 4 ? !starts_with(r->cid, f->container_id)
						 : strcmp(r->cid, f->container_id))
			return 0;
	}
	if (f->pod_uid && strcmp(r->pod, f->pod_uid))
		return 0;
	if (f->since_ns && r->time_ns < f->since_ns)
		return 0;
	if (f->until_ns && r->time_ns >= f->until_ns)
		return 0;
	return 1;
}

/* Runs f against the store and checks the seqs against the oracle, given
 * that rec i got row id ids[i]. Returns the number of rows. */
static size_t check_filter(struct sl_store *s, const struct rec *recs, const int64_t *ids,
			   size_t n, const struct sl_event_filter *f)
{
	char err[256];
	json_t *a = sl_store_query_events(s, f, err, sizeof(err));
	assert_non_null(a);
	int expect[256];
	size_t ne = 0;
	for (size_t i = 0; i < n; i++)
		if (rec_matches(&recs[i], f) && (!f->after_id || ids[i] > f->after_id))
			expect[ne++] = recs[i].seq;
	/* Insertion sort into the documented order: ascending = id order;
	 * otherwise time_ns descending, ties id descending. */
	for (size_t a = 1; a < ne; a++) {
		for (size_t b = a; b > 0; b--) {
			const struct rec *x = &recs[expect[b - 1]], *y = &recs[expect[b]];
			int swap = f->ascending ? ids[x->seq] > ids[y->seq]
						: (x->time_ns < y->time_ns ||
						   (x->time_ns == y->time_ns && ids[x->seq] < ids[y->seq]));
			if (!swap)
				break;
			int t = expect[b - 1];
			expect[b - 1] = expect[b];
			expect[b] = t;
		}
	}
	uint32_t limit = f->limit ? f->limit : SL_STORE_QUERY_DEFAULT_LIMIT;
	if (ne > limit)
		ne = limit;
	assert_int_equal(json_array_size(a), ne);
	for (size_t k = 0; k < ne; k++) {
		json_t *o = json_array_get(a, k);
		assert_int_equal(json_integer_value(json_object_get(o, "seq")), expect[k]);
		assert_int_equal(json_integer_value(json_object_get(o, "id")), ids[expect[k]]);
		const struct rec *r = &recs[expect[k]];
		assert_string_equal(json_string_value(json_object_get(o, "type")), r->type);
		assert_string_equal(json_string_value(json_object_get(o, "container_id")), r->cid);
		assert_int_equal(json_integer_value(json_object_get(o, "time_ns")), r->time_ns);
	}
	json_decref(a);
	return ne;
}

static void test_round_trip_filters(void **state)
{
	struct fixture *fx = *state;
	struct sl_store *s = open_store(fx->path, 64, 5, 0, 0, 0);
	assert_non_null(s);
	struct stat st;
	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	const char *cids[] = {CID_A, CID_B, CID_C, ""};
	const char *pods[] = {"pod-a", "pod-b", "pod-c", ""};
	const char *rts[] = {"containerd", "docker", "runc", ""};
	const char *types[] = {"exec", "exit", "signal", "oom"};
	enum { N = 40 };
	struct rec recs[N];
	int64_t ids[N];
	const int64_t base = 1714564800000000000LL;
	for (int i = 0; i < N; i++) {
		int c = (i * 7) % 4;
		/* time_ns not in insertion order (17 is prime to N), with ties. */
		recs[i] = (struct rec){.seq = i, .time_ns = base + (int64_t)((i * 17) % N / 2) * 1000 + 1,
				       .type = types[(i * 3 + i / 4) % 4], .cid = cids[c],
				       .pod = pods[c], .runtime = rts[c], .pid = 100 + (uint32_t)i};
		assert_int_equal(submit_rec(s, &recs[i], 0), 0);
	}
	assert_int_equal(sl_store_flush(s), 0);

	/* Row ids: ascending query without filters gives submission order. */
	char err[256];
	struct sl_event_filter asc = {.ascending = 1};
	json_t *a = sl_store_query_events(s, &asc, err, sizeof(err));
	assert_non_null(a);
	assert_int_equal(json_array_size(a), N);
	for (int i = 0; i < N; i++) {
		json_t *o = json_array_get(a, (size_t)i);
		assert_int_equal(json_integer_value(json_object_get(o, "seq")), i);
		ids[i] = json_integer_value(json_object_get(o, "id"));
		if (i)
			assert_true(ids[i] > ids[i - 1]);
	}
	json_decref(a);
	a = sl_store_query_events(s, NULL, err, sizeof(err)); /* NULL filter = all, newest first */
	assert_non_null(a);
	assert_int_equal(json_array_size(a), N);
	json_decref(a);

	struct sl_event_filter fs[] = {
		{0},
		{.type = "exec"},
		{.type = "oom", .ascending = 1},
		{.container_id = CID_A},
		{.container_id = "aaaa1"},         /* prefix of A only */
		{.container_id = "aaaa"},          /* prefix of A and B */
		{.container_id = "aaa"},           /* < 4 chars: exact, nothing */
		{.container_id = "c%_x"},          /* literal %/_ in a prefix */
		{.container_id = "c%_"},           /* 3 chars: exact, nothing */
		{.container_id = "c___"},          /* would match C if _ were a wildcard */
		{.container_id = "aaaa%"},
		{.container_id = ""},              /* host rows */
		{.pod_uid = "pod-b"},
		{.pod_uid = "pod-b", .type = "exit"},
		{.since_ns = base + 10 * 1000 + 1},
		{.until_ns = base + 10 * 1000 + 1},
		{.since_ns = base + 5 * 1000, .until_ns = base + 25 * 1000, .type = "exec"},
		{.limit = 3},
		{.limit = 3, .ascending = 1},
		{.limit = 20000},                  /* capped, not an error */
		{.after_id = 0, .ascending = 1, .limit = 7},
		{.after_id = -1, .container_id = "aaaa", .type = "exec"}, /* after_id set below */
		{.after_id = -1, .container_id = "aaaa2", .ascending = 1, .since_ns = base + 3000},
		{.after_id = -1, .until_ns = base + 15000, .limit = 4},
		{.type = "exec' OR '1'='1"},       /* bound, not spliced */
		{.container_id = "zzzz"},          /* prefix matching nothing */
	};
	size_t total = 0;
	for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++) {
		if (fs[i].after_id == -1)
			fs[i].after_id = ids[N / 3];
		total += check_filter(s, recs, ids, N, &fs[i]);
	}
	assert_true(total > N); /* the filters did select something */
	assert_int_equal(check_filter(s, recs, ids, N, &fs[6]), 0);
	assert_int_equal(check_filter(s, recs, ids, N, &fs[9]), 0);
	assert_int_equal(check_filter(s, recs, ids, N, &fs[24]), 0);
	assert_int_equal(check_filter(s, recs, ids, N, &fs[25]), 0);
	assert_true(check_filter(s, recs, ids, N, &fs[21]) > 0);
	assert_true(check_filter(s, recs, ids, N, &fs[7]) > 0);
	assert_true(check_filter(s, recs, ids, N, &fs[5]) > check_filter(s, recs, ids, N, &fs[4]));

	/* Follow cursor: page through ascending with after_id. */
	int64_t cursor = 0;
	int seen = 0;
	for (;;) {
		struct sl_event_filter f = {.after_id = cursor, .ascending = 1, .limit = 6,
					    .type = "exec"};
		size_t got = check_filter(s, recs, ids, N, &f);
		if (!got)
			break;
		json_t *pg = sl_store_query_events(s, &f, err, sizeof(err));
		cursor = json_integer_value(json_object_get(json_array_get(pg, got - 1), "id"));
		json_decref(pg);
		seen += (int)got;
	}
	struct sl_event_filter ex = {.type = "exec"};
	assert_int_equal(seen, (int)check_filter(s, recs, ids, N, &ex));

	/* Containers: oracle counts per container id. */
	json_t *cs = sl_store_query_containers(s, err, sizeof(err));
	assert_non_null(cs);
	assert_int_equal(json_array_size(cs), 3); /* host excluded */
	for (size_t k = 0; k < json_array_size(cs); k++) {
		json_t *o = json_array_get(cs, k);
		const char *cid = json_string_value(json_object_get(o, "container_id"));
		int c = -1;
		for (int j = 0; j < 3; j++)
			if (strcmp(cid, cids[j]) == 0)
				c = j;
		assert_true(c >= 0);
		int count = 0, by[4] = {0};
		int64_t lo = INT64_MAX, hi = INT64_MIN;
		for (int i = 0; i < N; i++) {
			if (strcmp(recs[i].cid, cid))
				continue;
			count++;
			for (int t = 0; t < 4; t++)
				by[t] += strcmp(recs[i].type, types[t]) == 0;
			lo = recs[i].time_ns < lo ? recs[i].time_ns : lo;
			hi = recs[i].time_ns > hi ? recs[i].time_ns : hi;
		}
		assert_int_equal(json_integer_value(json_object_get(o, "events")), count);
		assert_string_equal(json_string_value(json_object_get(o, "pod_uid")), pods[c]);
		assert_string_equal(json_string_value(json_object_get(o, "runtime")), rts[c]);
		json_t *bt = json_object_get(o, "by_type");
		int sum = 0;
		for (int t = 0; t < 4; t++) {
			json_t *v = json_object_get(bt, types[t]);
			assert_int_equal(v ? json_integer_value(v) : 0, by[t]);
			sum += by[t];
		}
		assert_int_equal(sum, count);
		assert_int_equal(json_object_size(bt), (size_t)((by[0] > 0) + (by[1] > 0) +
								(by[2] > 0) + (by[3] > 0)));
		char tb[SL_TIME_RFC3339_MAX];
		sl_time_format(lo, tb, sizeof(tb));
		assert_string_equal(json_string_value(json_object_get(o, "first_seen")), tb);
		sl_time_format(hi, tb, sizeof(tb));
		assert_string_equal(json_string_value(json_object_get(o, "last_seen")), tb);
		if (k)
			assert_true(strcmp(json_string_value(json_object_get(
						   json_array_get(cs, k - 1), "container_id")),
					   cid) < 0);
	}
	json_decref(cs);

	struct sl_store_stats stv;
	sl_store_get_stats(s, &stv);
	assert_int_equal(stv.submitted, N);
	assert_int_equal(stv.written, N);
	assert_int_equal(stv.dropped_queue_full, 0);
	assert_int_equal(stv.write_errors, 0);
	assert_int_equal(stv.queue_depth, 0);
	assert_int_equal(stv.queue_capacity, 64);
	sl_store_close(s);

	/* On disk: WAL, schema version; reopen keeps the rows. */
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(fx->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *q;
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(q, 0), SL_STORE_SCHEMA_VERSION);
	sqlite3_finalize(q);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(q, 0), "wal");
	sqlite3_finalize(q);
	sqlite3_close(db);
	s = open_store(fx->path, 0, 0, 0, 0, 0);
	assert_non_null(s);
	assert_int_equal(query_count(s, NULL), N);
	sl_store_close(s);
}

static void test_open_errors(void **state)
{
	struct fixture *fx = *state;
	char err[256] = "";
	struct sl_store_config cfg = {.path = ":memory:"};
	assert_null(sl_store_open(&cfg, err, sizeof(err)));
	assert_true(strlen(err) > 0);
	cfg.path = NULL;
	assert_null(sl_store_open(&cfg, err, sizeof(err)));

	/* A database from a newer agent is refused, not silently altered. */
	char p[160];
	snprintf(p, sizeof(p), "%s/newer.db", fx->dir);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version=99", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(chmod(p, 0600), 0); /* private, as the store wants it */
	cfg.path = p;
	err[0] = '\0';
	assert_null(sl_store_open(&cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "newer"));

	/* A parent that cannot be created (a file in the way). */
	snprintf(p, sizeof(p), "%s/newer.db/x.db", fx->dir);
	assert_null(sl_store_open(&cfg, err, sizeof(err)));

	/* NULL json is rejected and counted. */
	struct sl_store *s = open_store(fx->path, 4, 4, 0, 0, 0);
	assert_non_null(s);
	struct sl_store_event ev = {.time_ns = 1, .type = "exec"};
	assert_int_equal(sl_store_submit(s, &ev), -EINVAL);
	struct sl_store_stats st;
	sl_store_get_stats(s, &st);
	assert_int_equal(st.write_errors, 1);
	assert_int_equal(st.submitted, 0);
	sl_store_close(s);
	sl_store_close(NULL);
}

static void test_queue_full(void **state)
{
	struct fixture *fx = *state;
	enum { CAP = 4, EXTRA = 3 };
	struct sl_store *s = open_store(fx->path, CAP, 2, 0, 0, 0);
	assert_non_null(s);
	sl_store_test_pause(s, 1);
	const uint64_t weights[CAP + EXTRA] = {0, 9, 0, 2, 0, 5, 11};
	uint64_t want_weight = 0;
	struct rec r = {.type = "exec", .cid = "", .pod = "", .runtime = ""};
	for (int i = 0; i < CAP + EXTRA; i++) {
		r.seq = i;
		r.time_ns = 1000 + i;
		int rc = submit_rec(s, &r, weights[i]);
		if (i < CAP) {
			assert_int_equal(rc, 0);
		} else {
			assert_int_equal(rc, -EAGAIN);
			want_weight += weights[i] ? weights[i] : 1;
		}
	}
	struct sl_store_stats st;
	sl_store_get_stats(s, &st);
	assert_int_equal(st.submitted, CAP);
	assert_int_equal(st.dropped_queue_full, EXTRA);
	assert_int_equal(st.dropped_queue_full_weight, want_weight);
	assert_int_equal(st.queue_depth, CAP);
	assert_int_equal(st.written, 0);
	assert_int_equal(query_count(s, NULL), 0); /* nothing on disk while paused */

	sl_store_test_pause(s, 0);
	assert_int_equal(sl_store_flush(s), 0);
	sl_store_get_stats(s, &st);
	assert_int_equal(st.written, CAP);
	assert_int_equal(st.queue_depth, 0);
	assert_int_equal(query_count(s, NULL), CAP);

	/* Space again after the drain. */
	r.seq = 99;
	assert_int_equal(submit_rec(s, &r, 0), 0);

	/* Close while paused with records queued: they are still written. */
	sl_store_test_pause(s, 1);
	r.seq = 100;
	assert_int_equal(submit_rec(s, &r, 0), 0);
	sl_store_close(s);
	s = open_store(fx->path, 0, 0, 0, 0, 0);
	assert_int_equal(query_count(s, NULL), CAP + 2);
	sl_store_close(s);
}

static void test_retention_age(void **state)
{
	struct fixture *fx = *state;
	/* Interval of an hour: only the pass at open and explicit ones run. */
	struct sl_store *s = open_store(fx->path, 16384, 1000, 60, 0, 3600000);
	assert_non_null(s);
	const int OLD = (int)SL_STORE_RETENTION_CHUNK + 904; /* needs > 1 chunk */
	const int NEW = 25;
	int64_t now = sl_time_now_ns();
	struct rec r = {.type = "exit", .cid = CID_A, .pod = "p", .runtime = "runc"};
	for (int i = 0; i < OLD + NEW; i++) {
		r.seq = i;
		/* Interleave old (2 min .. 1 h ago) and new (now, future) rows. */
		r.time_ns = (i % 5 == 0 && i / 5 < NEW) ? now + i
			    : now - 120000000000LL - (int64_t)(i % 3000) * 1000000000LL;
		assert_int_equal(submit_rec(s, &r, 0), 0);
	}
	assert_int_equal(sl_store_flush(s), 0);
	assert_int_equal(sl_store_run_retention(s), 0);
	struct sl_store_stats st;
	sl_store_get_stats(s, &st);
	assert_int_equal(st.retention_deleted, OLD);
	assert_int_equal(query_count(s, NULL), NEW);
	struct sl_event_filter f = {.limit = SL_STORE_QUERY_MAX_LIMIT, .until_ns = now};
	assert_int_equal(query_count(s, &f), 0);
	/* Another pass finds nothing more. */
	assert_int_equal(sl_store_run_retention(s), 0);
	sl_store_get_stats(s, &st);
	assert_int_equal(st.retention_deleted, OLD);
	sl_store_close(s);
}

static void test_retention_rows(void **state)
{
	struct fixture *fx = *state;
	enum { MAX = 100, TOTAL = 9000 };
	struct sl_store *s = open_store(fx->path, TOTAL, 512, 0, MAX, 3600000);
	assert_non_null(s);
	struct rec r = {.type = "exec", .cid = CID_B, .pod = "p", .runtime = "docker"};
	/* time_ns is not insertion order: the newest MAX by time must survive. */
	for (int i = 0; i < TOTAL; i++) {
		r.seq = i;
		r.time_ns = 1000000 + (int64_t)((i * 7919) % TOTAL);
		assert_int_equal(submit_rec(s, &r, 0), 0);
	}
	assert_int_equal(sl_store_flush(s), 0);
	assert_int_equal(sl_store_run_retention(s), 0);
	struct sl_store_stats st;
	sl_store_get_stats(s, &st);
	assert_int_equal(st.retention_deleted, TOTAL - MAX);
	struct sl_event_filter f = {.limit = SL_STORE_QUERY_MAX_LIMIT};
	char err[256];
	json_t *a = sl_store_query_events(s, &f, err, sizeof(err));
	assert_int_equal(json_array_size(a), MAX);
	for (size_t i = 0; i < json_array_size(a); i++) {
		int64_t t = json_integer_value(json_object_get(json_array_get(a, i), "time_ns"));
		assert_true(t >= 1000000 + TOTAL - MAX);
	}
	json_decref(a);
	sl_store_close(s);

	/* Periodic retention (20 ms) without an explicit request, and the row
	 * count carried over a reopen (MAX rows already there). */
	s = open_store(fx->path, 1024, 64, 0, MAX / 2, 20);
	assert_non_null(s);
	for (int i = 0; i < 300; i++) {
		r.seq = i;
		r.time_ns = 5000000 + i;
		assert_int_equal(submit_rec(s, &r, 0), 0);
	}
	assert_int_equal(sl_store_flush(s), 0);
	size_t n = 0;
	for (int tries = 0; tries < 500; tries++) {
		n = query_count(s, NULL);
		if (n == MAX / 2)
			break;
		usleep(10000);
	}
	assert_int_equal(n, MAX / 2);
	sl_store_close(s);
}

static void test_flush(void **state)
{
	struct fixture *fx = *state;
	struct sl_store *s = open_store(fx->path, 4096, 7, 0, 0, 0);
	assert_non_null(s);
	assert_int_equal(sl_store_flush(s), 0); /* nothing queued: returns at once */
	struct rec r = {.type = "signal", .cid = CID_C, .pod = "", .runtime = "podman"};
	size_t total = 0;
	for (int round = 1; round <= 20; round++) {
		for (int i = 0; i < round * 13; i++) {
			r.seq = (int)total;
			r.time_ns = (int64_t)total;
			assert_int_equal(submit_rec(s, &r, 0), 0);
			total++;
		}
		/* No sleeping: after flush every record is visible to a new reader. */
		assert_int_equal(sl_store_flush(s), 0);
		assert_int_equal(query_count(s, NULL), total);
		struct sl_store_stats st;
		sl_store_get_stats(s, &st);
		assert_int_equal(st.written, total);
		assert_int_equal(st.queue_depth, 0);
	}
	/* Close flushes too. */
	for (int i = 0; i < 500; i++) {
		r.seq = (int)total++;
		assert_int_equal(submit_rec(s, &r, 0), 0);
	}
	sl_store_close(s);
	s = open_store(fx->path, 0, 0, 0, 0, 0);
	assert_int_equal(query_count(s, NULL), total);
	sl_store_close(s);
}


/* Finding 6: the database file deleted while the store is open. Before,
 * the writer kept committing to the unlinked file (everything since lost
 * at restart); now the deletion is seen before the next batch, the file is
 * recreated at the path and the batch goes there. */
static void test_deleted_recreated(void **state)
{
	struct fixture *fx = *state;
	struct sl_store *s = open_store(fx->path, 1024, 64, 0, 0, 0);
	assert_non_null(s);
	struct rec r = {.type = "exec", .cid = "", .pod = "", .runtime = "host"};
	for (int i = 0; i < 10; i++) {
		r.seq = i;
		r.time_ns = 1000 + i;
		assert_int_equal(submit_rec(s, &r, 0), 0);
	}
	assert_int_equal(sl_store_flush(s), 0);
	assert_int_equal(query_count(s, NULL), 10);

	assert_int_equal(unlink(fx->path), 0);
	for (int i = 0; i < 5; i++) {
		r.seq = 10 + i;
		r.time_ns = 2000 + i;
		assert_int_equal(submit_rec(s, &r, 0), 0);
	}
	assert_int_equal(sl_store_flush(s), 0);
	struct stat st;
	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(query_count(s, NULL), 5); /* in the new file at the path */
	struct sl_store_stats ss;
	sl_store_get_stats(s, &ss);
	assert_int_equal(ss.reopens, 1);
	assert_int_equal(ss.conditions, 1);
	assert_int_equal(ss.state, SL_STORE_OK);
	assert_int_equal(ss.write_errors, 0);
	assert_int_equal(ss.written, 15);
	json_t *h = sl_store_health_json(s);
	assert_string_equal(json_string_value(json_object_get(h, "state")), "ok");
	assert_null(json_object_get(h, "reason"));
	json_decref(h);
	sl_store_close(s);
	s = open_store(fx->path, 0, 0, 0, 0, 0);
	assert_int_equal(query_count(s, NULL), 5);
	sl_store_close(s);
}

/* The file replaced by something that cannot be opened (a directory):
 * degraded with the reason, the batch held (flush returns -EAGAIN instead of
 * waiting forever), nothing lost; once the path is free again the file is
 * recreated and the held rows are written. */
static void test_held_until_recovered(void **state)
{
	struct fixture *fx = *state;
	/* retention due every 20 ms: a pass that waits for the store must not
	 * make the writer spin */
	struct sl_store *s = open_store(fx->path, 1024, 64, 0, 0, 20);
	assert_non_null(s);
	struct rec r = {.type = "exit", .cid = CID_A, .pod = "", .runtime = "runc"};
	for (int i = 0; i < 3; i++) {
		r.seq = i;
		assert_int_equal(submit_rec(s, &r, 0), 0);
	}
	assert_int_equal(sl_store_flush(s), 0);

	assert_int_equal(unlink(fx->path), 0);
	assert_int_equal(mkdir(fx->path, 0700), 0);
	for (int i = 0; i < 4; i++) {
		r.seq = 3 + i;
		assert_int_equal(submit_rec(s, &r, 0), 0);
	}
	assert_int_equal(sl_store_flush(s), -EAGAIN);
	struct sl_store_stats ss;
	sl_store_get_stats(s, &ss);
	assert_int_equal(ss.state, SL_STORE_DEGRADED);
	assert_int_equal(ss.held + ss.queue_depth, 4);
	assert_int_equal(ss.written, 3);
	assert_int_equal(ss.write_errors, 0);
	json_t *h = sl_store_health_json(s);
	assert_string_equal(json_string_value(json_object_get(h, "state")), "degraded");
	const char *why = json_string_value(json_object_get(h, "reason"));
	assert_non_null(why);
	assert_non_null(strstr(why, "replaced"));
	assert_non_null(json_object_get(h, "since"));
	json_decref(h);
	struct timespec c0, c1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	usleep(1000 * 1000);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	double cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
	fprintf(stderr, "writer CPU while the store is unavailable: %.3f s in 1 s\n", cpu);
	assert_true(cpu < 0.1); /* idle: ~0; a spinning writer took 0.3+ s here */
	assert_int_equal(sl_store_flush(s), -EAGAIN);

	assert_int_equal(rmdir(fx->path), 0);
	int rc = -1;
	for (int i = 0; i < 200 && rc != 0; i++) { /* back-off at most 5 s */
		rc = sl_store_flush(s);
		if (rc)
			usleep(50 * 1000);
	}
	assert_int_equal(rc, 0);
	sl_store_get_stats(s, &ss);
	assert_int_equal(ss.state, SL_STORE_OK);
	assert_int_equal(ss.held, 0);
	assert_int_equal(ss.written, 7);
	assert_true(ss.batch_failures >= 1);
	assert_int_equal(query_count(s, NULL), 4);
	sl_store_close(s);
}

/* A file at path with content body and mode. */
static void plant(const char *path, const char *body, mode_t mode)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(body, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

/* The content of path ("" when missing), at most 63 bytes. */
static const char *slurp(const char *path, char *buf, size_t len)
{
	buf[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return buf;
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* sl_store_open refuses path with a reason containing why. */
static void assert_refused(const char *path, const char *why)
{
	struct sl_store_config cfg = {.path = path};
	char err[256] = "";
	struct sl_store *s = sl_store_open(&cfg, err, sizeof(err));
	if (s)
		sl_store_close(s);
	assert_null(s);
	if (!strstr(err, why))
		fprintf(stderr, "error %s, wanted \"%s\"\n", err, why);
	assert_non_null(strstr(err, why));
}

/* A store path in a shared directory: a planted symlink, a file of another
 * user, a group/other-writable or -readable file, a planted -wal symlink
 * are each refused and what they point to stays as it was; a fresh store,
 * its -wal and -shm are created 0600 whatever the umask. */
static void test_planted(void **state)
{
	struct fixture *fx = *state;
	char p[160], t[160], w[176], buf[64];
	snprintf(p, sizeof(p), "%s/ev.db", fx->dir);
	snprintf(t, sizeof(t), "%s/important", fx->dir);
	snprintf(w, sizeof(w), "%s-wal", p);

	plant(t, "root's file", 0600);
	assert_int_equal(symlink(t, p), 0);
	assert_refused(p, "symbolic link");
	assert_string_equal(slurp(t, buf, sizeof(buf)), "root's file");
	assert_int_equal(unlink(p), 0);

	/* dangling: the target is not created */
	assert_int_equal(unlink(t), 0);
	assert_int_equal(symlink(t, p), 0);
	assert_refused(p, "symbolic link");
	assert_int_equal(access(t, F_OK), -1);
	assert_int_equal(unlink(p), 0);

	plant(p, "planted", 0620);
	assert_refused(p, "group/other-writable");
	assert_string_equal(slurp(p, buf, sizeof(buf)), "planted");
	assert_int_equal(chmod(p, 0666), 0);
	assert_refused(p, "group/other-writable");
	assert_int_equal(chmod(p, 0644), 0);
	assert_refused(p, "group/other-readable");
	assert_string_equal(slurp(p, buf, sizeof(buf)), "planted");
	assert_int_equal(unlink(p), 0);

	if (geteuid() == 0) {
		plant(p, "nobody's", 0600);
		assert_int_equal(chown(p, 65534, 65534), 0);
		assert_refused(p, "another user");
		assert_string_equal(slurp(p, buf, sizeof(buf)), "nobody's");
		assert_int_equal(unlink(p), 0);
	} else {
		fprintf(stderr, "not root: the foreign-owner case is not run\n");
	}

	/* a -wal planted as a symlink: refused, its target untouched */
	plant(t, "root's file", 0600);
	assert_int_equal(symlink(t, w), 0);
	assert_refused(w, "symbolic link");
	assert_string_equal(slurp(t, buf, sizeof(buf)), "root's file");
	assert_int_equal(unlink(w), 0);

	/* fresh: 0600 even under umask 022, and so are -wal and -shm */
	unlink(p);
	mode_t old = umask(022);
	struct sl_store *s = open_store(p, 0, 0, 0, 0, 0);
	umask(old);
	assert_non_null(s);
	struct rec r = {.type = "exec", .cid = "", .pod = "", .runtime = "host"};
	assert_int_equal(submit_rec(s, &r, 0), 0);
	assert_int_equal(sl_store_flush(s), 0);
	static const char *const sfx[] = {"", "-wal", "-shm"};
	for (size_t i = 0; i < 3; i++) {
		struct stat st;
		snprintf(w, sizeof(w), "%s%s", p, sfx[i]);
		assert_int_equal(lstat(w, &st), 0);
		if ((st.st_mode & 0777) != 0600)
			fprintf(stderr, "%s: mode %o\n", w, st.st_mode & 0777);
		assert_int_equal(st.st_mode & 0777, 0600);
	}

	/* recovery: the store deleted and a symlink planted in its place:
	 * degraded with the reason, no crash, the target untouched */
	plant(t, "root's file", 0600);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(symlink(t, p), 0);
	assert_int_equal(submit_rec(s, &r, 0), 0);
	int rc = 0;
	for (int i = 0; i < 100 && rc != -EAGAIN; i++) {
		rc = sl_store_flush(s);
		if (rc != -EAGAIN)
			usleep(20 * 1000);
	}
	assert_int_equal(rc, -EAGAIN);
	json_t *h = sl_store_health_json(s);
	assert_string_equal(json_string_value(json_object_get(h, "state")), "degraded");
	const char *why = json_string_value(json_object_get(h, "reason"));
	assert_non_null(why);
	if (!strstr(why, "symbolic link"))
		fprintf(stderr, "reason: %s\n", why);
	assert_non_null(strstr(why, "symbolic link"));
	json_decref(h);
	assert_string_equal(slurp(t, buf, sizeof(buf)), "root's file");
	sl_store_close(s);
	assert_string_equal(slurp(t, buf, sizeof(buf)), "root's file");
}

static uint64_t file_bytes(const char *path, const char *suffix)
{
	char p[200];
	struct stat st;
	snprintf(p, sizeof(p), "%s%s", path, suffix);
	return stat(p, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Byte cap (finding 8): 6 MiB of rows into a store capped at 1 MiB. The
 * file plus its WAL stay under the cap at every flush (freed pages are
 * reused), the newest rows are kept, the deletions are counted. */
static void test_byte_cap(void **state)
{
	struct fixture *fx = *state;
	const uint64_t cap = 1u << 20;
	struct sl_store_config cfg = {.path = fx->path, .queue_size = 4096, .batch_max = 128,
				      .max_bytes = cap};
	char err[256] = "", pad[1001];
	struct sl_store *s = sl_store_open(&cfg, err, sizeof(err));
	assert_non_null(s);
	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	uint64_t peak = 0;
	int seq = 0;
	for (int round = 0; round < 12; round++) {
		for (int i = 0; i < 500; i++, seq++) {
			struct sl_store_event ev = {.time_ns = seq, .pid = (uint32_t)seq};
			snprintf(ev.type, sizeof(ev.type), "exec");
			json_t *o = json_pack("{s:i, s:s}", "seq", seq, "pad", pad);
			ev.json = json_dumps(o, JSON_COMPACT);
			json_decref(o);
			assert_int_equal(sl_store_submit(s, &ev), 0);
		}
		assert_int_equal(sl_store_flush(s), 0);
		uint64_t sz = file_bytes(fx->path, "") + file_bytes(fx->path, "-wal");
		if (sz > peak)
			peak = sz;
		if (sz > cap)
			fprintf(stderr, "over the cap after round %d: file %llu + wal %llu\n", round,
				(unsigned long long)file_bytes(fx->path, ""),
				(unsigned long long)file_bytes(fx->path, "-wal"));
		assert_true(sz <= cap);
	}
	struct sl_store_stats ss;
	sl_store_get_stats(s, &ss);
	assert_true(ss.retention_deleted_bytes > 0);
	assert_true(ss.used_bytes <= cap);
	size_t kept = query_count(s, NULL);
	assert_true(kept > 100);
	/* the newest row is kept */
	struct sl_event_filter f = {.limit = 1};
	json_t *a = sl_store_query_events(s, &f, err, sizeof(err));
	assert_non_null(a);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(a, 0), "seq")), seq - 1);
	json_decref(a);
	fprintf(stderr, "byte cap %llu: peak file+wal %llu bytes, %zu rows kept, %llu deleted\n",
		(unsigned long long)cap, (unsigned long long)peak, kept,
		(unsigned long long)ss.retention_deleted_bytes);
	sl_store_close(s);
}

struct reader_arg {
	struct sl_store *s;
	_Atomic int *stop;
	int id;
	int queries, failures;
	char why[300];
};

static void *reader_main(void *p)
{
	struct reader_arg *ra = p;
	int64_t last_max = 0;
	while (!*ra->stop) {
		char err[256];
		struct sl_event_filter f = {.limit = 50};
		if (ra->id % 2)
			f.container_id = "aaaa";
		json_t *a = sl_store_query_events(ra->s, &f, err, sizeof(err));
		ra->queries++;
		if (!a) {
			ra->failures++;
			snprintf(ra->why, sizeof(ra->why), "events: %s", err);
			continue;
		}
		int64_t prev = INT64_MAX, prev_t = INT64_MAX;
		if (json_array_size(a) > 50)
			ra->failures++;
		for (size_t i = 0; i < json_array_size(a); i++) {
			json_t *o = json_array_get(a, i);
			int64_t id = json_integer_value(json_object_get(o, "id"));
			int64_t t = json_integer_value(json_object_get(o, "time_ns"));
			if (t > prev_t || (t == prev_t && id >= prev)) {
				ra->failures++;
				snprintf(ra->why, sizeof(ra->why), "not newest first");
			}
			prev = id;
			prev_t = t;
		}
		if (json_array_size(a)) {
			int64_t top = json_integer_value(json_object_get(json_array_get(a, 0), "id"));
			if (top < last_max) {
				ra->failures++;
				snprintf(ra->why, sizeof(ra->why), "newest id went back");
			}
			last_max = top;
		}
		json_decref(a);
		json_t *c = sl_store_query_containers(ra->s, err, sizeof(err));
		if (!c) {
			ra->failures++;
			snprintf(ra->why, sizeof(ra->why), "containers: %s", err);
		}
		json_decref(c);
	}
	return NULL;
}

static void test_concurrent_readers(void **state)
{
	struct fixture *fx = *state;
	struct sl_store *s = open_store(fx->path, 2048, 256, 0, 0, 0);
	assert_non_null(s);
	enum { READERS = 4, TOTAL = 20000 };
	_Atomic int stop = 0;
	struct reader_arg ra[READERS];
	pthread_t th[READERS];
	for (int i = 0; i < READERS; i++) {
		ra[i] = (struct reader_arg){.s = s, .stop = &stop, .id = i};
		assert_int_equal(pthread_create(&th[i], NULL, reader_main, &ra[i]), 0);
	}
	struct rec r = {.type = "exec", .pod = "p", .runtime = "runc"};
	size_t accepted = 0, dropped = 0;
	for (int i = 0; i < TOTAL; i++) {
		r.seq = i;
		r.time_ns = i;
		r.cid = (i % 3 == 0) ? CID_A : (i % 3 == 1) ? CID_B : "";
		int rc = submit_rec(s, &r, 0);
		if (rc == 0)
			accepted++;
		else if (rc == -EAGAIN)
			dropped++;
		else
			fail_msg("submit: %d", rc);
		if (i % 1000 == 999)
			usleep(2000); /* let readers overlap with several batches */
	}
	assert_int_equal(sl_store_flush(s), 0);
	stop = 1;
	for (int i = 0; i < READERS; i++) {
		pthread_join(th[i], NULL);
		if (ra[i].failures)
			fail_msg("reader %d: %d failures: %s", i, ra[i].failures, ra[i].why);
		assert_true(ra[i].queries > 0);
	}
	struct sl_store_stats st;
	sl_store_get_stats(s, &st);
	assert_int_equal(st.submitted, accepted);
	assert_int_equal(st.dropped_queue_full, dropped);
	assert_int_equal(accepted + dropped, TOTAL);
	assert_int_equal(st.written, accepted);
	assert_int_equal(st.write_errors, 0);
	assert_int_equal(query_count(s, NULL), accepted < SL_STORE_QUERY_MAX_LIMIT
							 ? accepted
							 : SL_STORE_QUERY_MAX_LIMIT);
	sl_store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip_filters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queue_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retention_age, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retention_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_readers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deleted_recreated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_until_recovered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_planted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_byte_cap, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
