/* The flight recorder (src/agent/flight.c, src/store/flight_store.c):
 * bounds by time and bytes, container eviction and expiry, completed copies
 * that later appends do not change, time order, rate limits, the external
 * trigger, host drop notes, admin-field withholding of the recorded events,
 * and the store (write, read, list, retention). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/flight.h"
#include "agent/kinds.h"
#include "store/flight_store.h"

int64_t sl_flight_freeze_at(struct sl_flight *f, const char *container_id, const char *reason,
			    int64_t trigger_event_id, uint64_t now_ns);

#define S 1000000000ull

/* completed recordings land here */
static struct sl_flight_rec *got[16];
static int ngot;
static void sink(void *ctx, struct sl_flight_rec *r)
{
	(void)ctx;
	assert_true(ngot < 16);
	got[ngot++] = r;
}
static void reset(void)
{
	for (int i = 0; i < ngot; i++)
		sl_flight_rec_free(got[i]);
	ngot = 0;
}

static struct sl_attr ct(const char *id)
{
	struct sl_attr a;
	memset(&a, 0, sizeof(a));
	a.is_container = id[0] ? SL_YES : SL_NO;
	snprintf(a.container_id, sizeof(a.container_id), "%s", id);
	snprintf(a.runtime, sizeof(a.runtime), "%s", id[0] ? "runc" : "host");
	return a;
}

/* an event JSON of n bytes at least, with a sequence number */
static void add(struct sl_flight *f, const char *id, const char *type, uint64_t ts, uint64_t now, int seq,
		size_t pad, uint64_t weight)
{
	char buf[4096];
	struct sl_attr a = ct(id);
	char padding[2048];
	memset(padding, 'x', pad);
	padding[pad] = 0;
	int n = snprintf(buf, sizeof(buf), "{\"type\":\"%s\",\"seq\":%d,\"container_id\":\"%s\",\"argv\":[\"s%d\"],\"p\":\"%s\"}",
			 type, seq, id, seq, padding);
	sl_flight_append(f, &a, 0, type, ts, weight, buf, (size_t)n, now);
}

static json_t *rec_json(int i)
{
	assert_true(i < ngot);
	json_error_t e;
	json_t *j = json_loads(got[i]->json, 0, &e);
	if (!j)
		fail_msg("recording does not parse: %s: %s", e.text, got[i]->json);
	return j;
}

static int seq_of(json_t *rec, size_t i)
{
	return (int)json_integer_value(json_object_get(json_array_get(json_object_get(rec, "events"), i), "seq"));
}

static void time_bound(void **st)
{
	(void)st;
	struct sl_flight_config c = {.window_ns = 10 * S, .post_trigger_ns = 0};
	struct sl_flight *f = sl_flight_new(&c, sink, NULL);
	for (int i = 0; i <= 20; i++)
		add(f, "c1", "exec", (uint64_t)i * S, (uint64_t)i * S, i, 10, 1);
	struct sl_flight_stats s;
	sl_flight_get_stats(f, &s);
	assert_int_equal(s.entries, 11); /* ts 10..20 at now 20 */
	assert_true(sl_flight_freeze_at(f, "c1", "test", 0, 20 * S) > 0);
	assert_int_equal(ngot, 1);
	json_t *r = rec_json(0);
	json_t *evs = json_object_get(r, "events");
	assert_int_equal(json_array_size(evs), 11);
	assert_int_equal(seq_of(r, 0), 10);
	assert_int_equal(seq_of(r, 10), 20);
	assert_int_equal(json_integer_value(json_object_get(r, "event_count")), 11);
	/* ticks age the rest out; the container is forgotten after freeze_interval (0 here) */
	sl_flight_tick(f, 40 * S, NULL, 0);
	sl_flight_get_stats(f, &s);
	assert_int_equal(s.entries, 0);
	assert_int_equal(s.containers, 0);
	assert_int_equal(s.containers_expired, 1);
	json_decref(r);
	reset();
	sl_flight_free(f);
}

static void byte_bounds(void **st)
{
	(void)st;
	/* 100 bytes of padding: each entry ~ 170 B + 64 overhead; 1000 B per container */
	struct sl_flight_config c = {.container_max_bytes = 1000, .max_bytes = 1500, .post_trigger_ns = 0};
	struct sl_flight *f = sl_flight_new(&c, sink, NULL);
	for (int i = 0; i < 10; i++)
		add(f, "a", "exec", (uint64_t)i * S, (uint64_t)i * S, i, 100, 1);
	struct sl_flight_stats s;
	sl_flight_get_stats(f, &s);
	assert_true(s.bytes <= 1000);
	assert_int_equal(s.entries + s.ring_dropped_container_bytes, 10);
	size_t kept = s.entries;
	assert_true(kept >= 3);
	/* the other container pushes the total over 1500: the host-wide oldest ("a"'s) go */
	for (int i = 10; i < 14; i++)
		add(f, "b", "exec", (uint64_t)i * S, (uint64_t)i * S, i, 100, 1);
	sl_flight_get_stats(f, &s);
	assert_true(s.bytes <= 1500);
	assert_true(s.ring_dropped_total_bytes > 0);
	assert_true(sl_flight_freeze_at(f, "a", "t", 0, 14 * S) > 0);
	json_t *r = rec_json(0);
	json_t *d = json_object_get(r, "drops");
	/* every dropped "a" entry noted, with the time the ring is complete from */
	assert_int_equal(json_integer_value(json_object_get(d, "ring_dropped")) + json_array_size(json_object_get(r, "events")), 10);
	assert_non_null(json_object_get(d, "complete_from"));
	/* the newest ones are the ones kept */
	size_t n = json_array_size(json_object_get(r, "events"));
	assert_int_equal(seq_of(r, n - 1), 9);
	json_decref(r);
	/* an entry larger than the container bound is not kept */
	add(f, "b", "exec", 15 * S, 15 * S, 99, 1500, 1);
	sl_flight_get_stats(f, &s);
	assert_true(s.bytes <= 1500);
	reset();
	sl_flight_free(f);
}

static void container_eviction(void **st)
{
	(void)st;
	struct sl_flight_config c = {.max_containers = 2};
	struct sl_flight *f = sl_flight_new(&c, sink, NULL);
	add(f, "a", "exec", 1 * S, 1 * S, 1, 1, 1);
	add(f, "b", "exec", 2 * S, 2 * S, 2, 1, 1);
	add(f, "a", "exec", 3 * S, 3 * S, 3, 1, 1); /* "b" is now the least recent */
	add(f, "c", "exec", 4 * S, 4 * S, 4, 1, 1);
	struct sl_flight_stats s;
	sl_flight_get_stats(f, &s);
	assert_int_equal(s.containers, 2);
	assert_int_equal(s.containers_evicted, 1);
	assert_int_equal(s.ring_dropped_evicted, 1);
	assert_int_equal(sl_flight_freeze_at(f, "b", "t", 0, 5 * S), -ENOENT);
	assert_true(sl_flight_freeze_at(f, "a", "t", 0, 5 * S) > 0);
	/* host and pod-level (no container) events are not recorded */
	struct sl_attr h = ct("");
	sl_flight_append(f, &h, 0, "exec", 5 * S, 1, "{}", 2, 5 * S);
	assert_int_equal(sl_flight_trigger(f, &h, "oom", NULL, 5 * S), 0);
	sl_flight_get_stats(f, &s);
	assert_int_equal(s.appended, 4);
	reset();
	sl_flight_free(f);
}

static void frozen_copy_and_order(void **st)
{
	(void)st;
	struct sl_flight_config c = {.post_trigger_ns = 1 * S, .mono_to_real_ns = 1700000000ll * 1000000000ll};
	struct sl_flight *f = sl_flight_new(&c, sink, NULL);
	/* out of order between two sources: sorted by time in the recording */
	add(f, "a", "exec", 5 * S, 5 * S, 5, 1, 1);
	add(f, "a", "mem_stall", 4 * S, 5 * S, 4, 1, 3);
	struct sl_attr a = ct("a");
	json_t *info = json_pack("{s:s,s:i}", "type", "oom", "pid", 42);
	int64_t id = sl_flight_trigger(f, &a, "oom", info, 6 * S);
	assert_true(id > 0);
	add(f, "a", "oom", 6 * S, 6 * S, 6, 1, 1);
	/* a second trigger while open joins the recording */
	assert_int_equal(sl_flight_trigger(f, &a, "signal", info, 6 * S + 1), id);
	json_decref(info);
	add(f, "a", "exit", 6 * S + 500000000ull, 6 * S + 500000000ull, 7, 1, 1); /* in the post-trigger time */
	assert_int_equal(ngot, 0);
	sl_flight_tick(f, 7 * S, NULL, 0); /* due: completed */
	assert_int_equal(ngot, 1);
	assert_int_equal(got[0]->id, id);
	assert_string_equal(got[0]->container_id, "a");
	assert_string_equal(got[0]->reason, "oom");
	char *before = strdup(got[0]->json);
	add(f, "a", "exec", 8 * S, 8 * S, 8, 1, 1); /* later appends: the copy is unchanged */
	sl_flight_tick(f, 9 * S, NULL, 0);
	assert_int_equal(ngot, 1);
	assert_string_equal(before, got[0]->json);
	free(before);
	json_t *r = rec_json(0);
	assert_int_equal(json_array_size(json_object_get(r, "events")), 4);
	assert_int_equal(seq_of(r, 0), 4);
	assert_int_equal(seq_of(r, 1), 5);
	assert_int_equal(seq_of(r, 2), 6);
	assert_int_equal(seq_of(r, 3), 7);
	assert_int_equal(json_array_size(json_object_get(r, "triggers")), 2);
	assert_int_equal(json_integer_value(json_object_get(r, "triggers_total")), 2);
	/* the kernel-side suppression the events carry (weight - 1) */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(r, "drops"), "suppressed"), "mem_stall")), 2);
	assert_string_equal(json_string_value(json_object_get(r, "frozen")), "2023-11-14T22:13:27.000000000Z");
	json_decref(r);
	reset();
	sl_flight_free(f);
}

static void rate_limits(void **st)
{
	(void)st;
	struct sl_flight_config c = {.post_trigger_ns = 0, .freeze_interval_ns = 60 * S, .max_freezes_per_minute = 2};
	struct sl_flight *f = sl_flight_new(&c, sink, NULL);
	struct sl_attr a = ct("a"), b = ct("b"), d = ct("d");
	add(f, "a", "exec", 1 * S, 1 * S, 1, 1, 1);
	int64_t r1 = sl_flight_trigger(f, &a, "oom", NULL, 1 * S);
	assert_true(r1 > 0);
	sl_flight_complete_due(f, 1 * S);
	assert_int_equal(ngot, 1);
	/* a crash loop: refused for freeze_interval */
	assert_int_equal(sl_flight_trigger(f, &a, "signal", NULL, 5 * S), 0);
	/* a capture (external) has its own interval: the crash did not use it
	 * up, and a second capture within it is refused */
	assert_true(sl_flight_freeze_at(f, "a", "capture", 9, 6 * S) > 0);
	sl_flight_complete_due(f, 6 * S);
	assert_int_equal(sl_flight_freeze_at(f, "a", "capture", 9, 6 * S + 1), -EBUSY);
	struct sl_flight_stats s;
	sl_flight_get_stats(f, &s);
	assert_int_equal(s.rate_limited_container, 2);
	/* the host bucket: 2 a minute */
	assert_true(sl_flight_trigger(f, &b, "oom", NULL, 7 * S) > 0);
	assert_int_equal(sl_flight_trigger(f, &d, "oom", NULL, 8 * S), 0);
	sl_flight_get_stats(f, &s);
	assert_int_equal(s.rate_limited_host, 1);
	/* after the interval: a new recording, a new id */
	add(f, "a", "exec", 70 * S, 70 * S, 2, 1, 1);
	int64_t r2 = sl_flight_trigger(f, &a, "oom", NULL, 70 * S);
	assert_true(r2 > r1);
	sl_flight_complete_due(f, 70 * S);
	sl_flight_get_stats(f, &s);
	assert_int_equal(s.recorded, 4);
	/* a capture does not cost a container the recording of its death */
	struct sl_attr e = ct("e");
	add(f, "e", "exec", 71 * S, 71 * S, 3, 1, 1);
	assert_true(sl_flight_freeze_at(f, "e", "capture", 0, 71 * S) > 0);
	sl_flight_complete_due(f, 71 * S);
	assert_true(sl_flight_trigger(f, &e, "oom", NULL, 72 * S) > 0);
	sl_flight_complete_due(f, 72 * S);
	reset();
	sl_flight_free(f);
}

static void external_and_host_drops(void **st)
{
	(void)st;
	struct sl_flight_config c = {.window_ns = 10 * S, .post_trigger_ns = 0, .first_id = 41};
	struct sl_flight *f = sl_flight_new(&c, sink, NULL);
	assert_int_equal(sl_flight_freeze(f, "", "x", 0), -EINVAL);
	assert_int_equal(sl_flight_freeze(f, "a", NULL, 0), -EINVAL);
	assert_int_equal(sl_flight_freeze(f, "nope", "x", 0), -ENOENT);
	struct sl_flight_drop d0[] = {{"ringbuf_full", "exec", 5}, {"pressure", "exec", 1}};
	struct sl_flight_drop d1[] = {{"ringbuf_full", "exec", 7}, {"pressure", "exec", 1}};
	struct sl_flight_drop d2[] = {{"ringbuf_full", "exec", 10}, {"pressure", "exec", 4}};
	sl_flight_tick(f, 1 * S, d0, 2);
	sl_flight_tick(f, 12 * S, d1, 2); /* the window's start (20 - 10 s) is after this one */
	sl_flight_tick(f, 15 * S, d2, 2);
	add(f, "a", "exec", 19 * S, 19 * S, 1, 1, 1);
	int64_t id = sl_flight_freeze_at(f, "a", "cpu capture", 77, 20 * S);
	assert_int_equal(id, 42); /* after the store's largest */
	assert_int_equal(ngot, 1); /* post_trigger 0: at once */
	json_t *r = rec_json(0);
	assert_int_equal(json_integer_value(json_object_get(r, "trigger_event_id")), 77);
	assert_string_equal(json_string_value(json_object_get(r, "reason")), "cpu capture");
	json_t *h = json_object_get(json_object_get(r, "drops"), "host");
	/* from the newest sample at or before the window start (20 - 10 s): the one at 1 s */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(h, "ringbuf_full"), "exec")), 5);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(h, "pressure"), "exec")), 3);
	json_decref(r);
	reset();
	sl_flight_free(f);
}

/* the events of a recording: a reader gets them without SL_FF_ADMIN fields */
static const struct sl_field exec_fields[] = {
	{"argv", SL_FT_ARRAY, SL_FF_ADMIN, "arguments"},
	{"seq", SL_FT_INT, 0, "n"},
	{"p", SL_FT_STR, 0, "pad"},
};
static const struct sl_event_kind kinds[] = {
	{.name = "exec", .severity = SL_SEV_INFO, .fields = exec_fields, .nfields = 3, .details = "{seq}", .doc = "d"},
};
static const struct sl_module_ops mod = {.name = "fake", .kinds = kinds, .nkinds = 1};

static void withheld(void **st)
{
	(void)st;
	struct sl_kinds ks;
	char err[256];
	const struct sl_module_ops *ops[] = {&mod};
	assert_int_equal(sl_kinds_build(&ks, ops, 1, NULL, err, sizeof(err)), 0);
	struct sl_flight_config c = {.post_trigger_ns = 0};
	struct sl_flight *f = sl_flight_new(&c, sink, NULL);
	add(f, "a", "exec", 1 * S, 1 * S, 1, 1, 1);
	add(f, "a", "exec", 2 * S, 2 * S, 2, 1, 1);
	assert_true(sl_flight_freeze_at(f, "a", "t", 0, 3 * S) > 0);
	json_t *r = rec_json(0);
	json_t *evs = json_object_get(r, "events");
	assert_non_null(json_object_get(json_array_get(evs, 0), "argv"));
	assert_int_equal(sl_kinds_withhold(&ks, evs), 2);
	for (size_t i = 0; i < 2; i++) {
		assert_null(json_object_get(json_array_get(evs, i), "argv"));
		assert_true(json_is_true(json_object_get(json_array_get(evs, i), "argv_withheld")));
	}
	json_decref(r);
	reset();
	sl_flight_free(f);
}

static struct sl_flight_rec *mkrec(int64_t id, const char *ctid, size_t pad)
{
	struct sl_flight_rec *r = calloc(1, sizeof(*r));
	r->id = id;
	r->time_ns = 1700000000ll * 1000000000ll + id;
	snprintf(r->container_id, sizeof(r->container_id), "%s", ctid);
	snprintf(r->reason, sizeof(r->reason), "oom");
	r->events = 1;
	r->json = malloc(pad + 64);
	r->len = (size_t)snprintf(r->json, pad + 64, "{\"id\":%lld,\"events\":[{\"p\":\"%*s\"}]}", (long long)id, (int)pad, "");
	return r;
}

static void store(void **st)
{
	(void)st;
	char dir[] = "/tmp/test_flight.XXXXXX", path[128], err[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/events.db", dir);
	struct sl_flight_db_config c = {.path = path, .max_recordings = 2};
	assert_null(sl_flight_db_open(&c, err, sizeof(err))); /* the event store's file must exist */
	FILE *fp = fopen(path, "w");
	fclose(fp);
	struct sl_flight_db *db = sl_flight_db_open(&c, err, sizeof(err));
	assert_non_null(db);
	assert_int_equal(sl_flight_db_max_id(db), 0);
	sl_flight_db_submit(db, mkrec(1, "a", 10));
	sl_flight_db_submit(db, mkrec(2, "b", 10));
	sl_flight_db_submit(db, mkrec(3, "a", 10));
	sl_flight_db_flush(db);
	unsigned status;
	json_t *j = sl_flight_db_get(db, 3, &status, err, sizeof(err));
	assert_non_null(j);
	assert_int_equal(status, 200);
	assert_int_equal(json_integer_value(json_object_get(j, "id")), 3);
	json_decref(j);
	/* retention by count (after each insert): the oldest went */
	assert_null(sl_flight_db_get(db, 1, &status, err, sizeof(err)));
	assert_int_equal(status, 404);
	json_t *l = sl_flight_db_list(db, "a", 10, err, sizeof(err));
	assert_int_equal(json_array_size(l), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(l, 0), "id")), 3);
	json_decref(l);
	l = sl_flight_db_list(db, NULL, 10, err, sizeof(err));
	assert_int_equal(json_array_size(l), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(l, 0), "id")), 3);
	json_decref(l);
	struct sl_flight_db_stats s;
	sl_flight_db_get_stats(db, &s);
	assert_int_equal(s.written, 3);
	assert_int_equal(s.retention_deleted, 1);
	sl_flight_db_close(db);
	/* reopened: ids go on after the largest; the byte cap */
	c.max_recordings = 0;
	c.max_bytes = 1500;
	db = sl_flight_db_open(&c, err, sizeof(err));
	assert_int_equal(sl_flight_db_max_id(db), 3);
	sl_flight_db_submit(db, mkrec(4, "a", 1000));
	sl_flight_db_submit(db, mkrec(5, "a", 1000));
	sl_flight_db_flush(db);
	l = sl_flight_db_list(db, NULL, 10, err, sizeof(err));
	assert_int_equal(json_array_size(l), 1); /* 5 alone fits 1500 bytes */
	assert_int_equal(json_integer_value(json_object_get(json_array_get(l, 0), "id")), 5);
	json_decref(l);
	sl_flight_db_close(db);
	unlink(path);
	char side[160];
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(time_bound),
		cmocka_unit_test(byte_bounds),
		cmocka_unit_test(container_eviction),
		cmocka_unit_test(frozen_copy_and_order),
		cmocka_unit_test(rate_limits),
		cmocka_unit_test(external_and_host_drops),
		cmocka_unit_test(withheld),
		cmocka_unit_test(store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
