/* SSE / CloudEvents framing of the event stream (src/api/api_sse.c) and
 * the watch route's pure parts (src/api/api_watch.c: parameters, where a
 * stream starts). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "api/api_sse.h"
#include "api/api_watch.h"

static json_t *event(void)
{
	return json_pack("{s:I, s:s, s:s, s:s, s:[s,s]}", "id", (json_int_t)1234, "type", "exec", "time",
			 "2024-05-01T12:00:00.000000001Z", "container_id", "4f3a2b1c0d9e", "argv", "sh", "a\nb");
}

static void cloudevent_fields(void **st)
{
	(void)st;
	json_t *ev = event();
	json_t *ce = sl_sse_cloudevent(ev, "/sandlens/node-7");
	assert_non_null(ce);
	assert_string_equal(json_string_value(json_object_get(ce, "specversion")), "1.0");
	assert_string_equal(json_string_value(json_object_get(ce, "id")), "1234");
	assert_string_equal(json_string_value(json_object_get(ce, "source")), "/sandlens/node-7");
	assert_string_equal(json_string_value(json_object_get(ce, "type")), "io.sandlens.event.exec");
	assert_string_equal(json_string_value(json_object_get(ce, "time")), "2024-05-01T12:00:00.000000001Z");
	assert_string_equal(json_string_value(json_object_get(ce, "datacontenttype")), "application/json");
	assert_string_equal(json_string_value(json_object_get(ce, "subject")), "4f3a2b1c0d9e");
	assert_true(json_equal(json_object_get(ce, "data"), ev));
	json_decref(ce);
	/* host event: subject host */
	json_object_set_new(ev, "container_id", json_string(""));
	ce = sl_sse_cloudevent(ev, "/s");
	assert_string_equal(json_string_value(json_object_get(ce, "subject")), "host");
	json_decref(ce);
	/* no id or no type: no CloudEvent */
	json_object_del(ev, "id");
	assert_null(sl_sse_cloudevent(ev, "/s"));
	json_decref(ev);
	ev = json_pack("{s:I}", "id", (json_int_t)1);
	assert_null(sl_sse_cloudevent(ev, "/s"));
	json_decref(ev);
}

static void frame_format(void **st)
{
	(void)st;
	json_t *ev = event();
	size_t len = 0;
	char *f = sl_sse_frame(ev, "/sandlens/x", &len);
	assert_non_null(f);
	assert_int_equal(len, strlen(f));
	assert_true(!strncmp(f, "id: 1234\ndata: {", 16));
	assert_true(len > 2 && f[len - 1] == '\n' && f[len - 2] == '\n');
	/* exactly two newlines before the blank line: one data line, even
	 * though argv holds a newline (escaped as \n in JSON) */
	size_t nl = 0;
	for (size_t i = 0; i < len; i++)
		nl += f[i] == '\n';
	assert_int_equal(nl, 3);
	json_error_t je;
	char *data = strstr(f, "data: ") + 6;
	f[len - 2] = 0;
	json_t *ce = json_loads(data, 0, &je);
	assert_non_null(ce);
	assert_string_equal(json_string_value(json_array_get(json_object_get(json_object_get(ce, "data"), "argv"), 1)), "a\nb");
	json_decref(ce);
	free(f);
	json_decref(ev);
}

static void source_and_last_id(void **st)
{
	(void)st;
	char s[64];
	sl_sse_source("node-7.example", s, sizeof(s));
	assert_string_equal(s, "/sandlens/node-7.example");
	sl_sse_source("we ird/host?", s, sizeof(s));
	assert_string_equal(s, "/sandlens/we_ird_host_");
	sl_sse_source("", s, sizeof(s));
	assert_string_equal(s, "/sandlens/localhost");
	int64_t id = -1;
	assert_int_equal(sl_sse_parse_last_id("42", &id), 0);
	assert_int_equal(id, 42);
	assert_int_equal(sl_sse_parse_last_id(" 7 ", &id), 0);
	assert_int_equal(id, 7);
	assert_int_equal(sl_sse_parse_last_id("9223372036854775807", &id), 0);
	assert_int_equal(sl_sse_parse_last_id("9223372036854775808", &id), -1);
	assert_int_equal(sl_sse_parse_last_id("", &id), -1);
	assert_int_equal(sl_sse_parse_last_id("-1", &id), -1);
	assert_int_equal(sl_sse_parse_last_id("1x", &id), -1);
	assert_int_equal(sl_sse_parse_last_id(NULL, &id), -1);
}

static const char *const kinds[] = {"exec", "exit", "oom"};

static int parse(struct sl_api_watch_req *w, char *err, int n, ...)
{
	struct sl_api_param p[8];
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		p[i].key = va_arg(ap, const char *);
		p[i].value = va_arg(ap, const char *);
	}
	va_end(ap);
	return sl_api_watch_parse(p, (size_t)n, 2000000000000000000LL, kinds, 3, w, err, 256);
}

static void watch_params(void **st)
{
	(void)st;
	struct sl_api_watch_req w;
	char err[256];
	assert_int_equal(parse(&w, err, 0), 0);
	assert_int_equal(w.heartbeat_s, SL_API_WATCH_HEARTBEAT_S);
	assert_int_equal(w.f.ascending, 1);
	assert_false(w.after_given);
	assert_int_equal(parse(&w, err, 3, "type", "oom", "heartbeat", "2", "after_id", "10"), 0);
	assert_string_equal(w.f.type, "oom");
	assert_int_equal(w.heartbeat_s, 2);
	assert_true(w.after_given);
	assert_int_equal(w.f.after_id, 10);
	assert_int_not_equal(parse(&w, err, 1, "limit", "5"), 0);
	assert_non_null(strstr(err, "limit"));
	assert_int_not_equal(parse(&w, err, 1, "order", "asc"), 0);
	assert_int_not_equal(parse(&w, err, 1, "heartbeat", "0"), 0);
	assert_int_not_equal(parse(&w, err, 1, "heartbeat", "301"), 0);
	assert_int_not_equal(parse(&w, err, 1, "heartbeat", "99999999999999999999"), 0);
	assert_int_not_equal(parse(&w, err, 1, "heartbeat", ""), 0);
	assert_int_not_equal(parse(&w, err, 2, "heartbeat", "1", "heartbeat", "2"), 0);
	assert_int_not_equal(parse(&w, err, 1, "type", "nosuch"), 0);
	assert_int_not_equal(parse(&w, err, 1, "bogus", "1"), 0);
	assert_int_equal(parse(&w, err, 1, "heartbeat", "300"), 0);
	assert_int_equal(w.store_epoch, 0);
	assert_int_equal(parse(&w, err, 2, "store_epoch", "00000000000000aB", "after_id", "3"), 0);
	assert_true(w.store_epoch == 0xab);
	assert_int_equal(parse(&w, err, 1, "store_epoch", "ffffffffffffffff"), 0);
	assert_true(w.store_epoch == UINT64_MAX);
	static const char *bad[] = {"", "0", "0000", "12345678901234567", "xyz", "-1", "1 "};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_not_equal(parse(&w, err, 1, "store_epoch", bad[i]), 0);
		assert_non_null(strstr(err, "store_epoch"));
	}
	assert_int_not_equal(parse(&w, err, 2, "store_epoch", "1", "store_epoch", "1"), 0);
}

static void start_cursor(void **st)
{
	(void)st;
	struct sl_api_watch_req w = {0};
	assert_int_equal(sl_api_watch_start_cursor(&w, 0, 0, 99), 99); /* only new events */
	w.f.since_ns = 5;
	assert_int_equal(sl_api_watch_start_cursor(&w, 0, 0, 99), 0); /* since: from the start */
	w.after_given = 1;
	w.f.after_id = 7;
	assert_int_equal(sl_api_watch_start_cursor(&w, 0, 0, 99), 7);
	assert_int_equal(sl_api_watch_start_cursor(&w, 1, 40, 99), 40); /* Last-Event-ID wins */
	assert_int_equal(sl_api_watch_start_cursor(&w, 1, 0, 99), 0);
	int rec = -1;
	assert_int_equal(sl_api_watch_epoch_cursor(&w, 5, 40, &rec), 40); /* no epoch given */
	assert_int_equal(rec, 0);
	w.store_epoch = 5;
	assert_int_equal(sl_api_watch_epoch_cursor(&w, 5, 40, &rec), 40); /* the same store */
	assert_int_equal(rec, 0);
	assert_int_equal(sl_api_watch_epoch_cursor(&w, 6, 40, &rec), 0); /* another store */
	assert_int_equal(rec, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cloudevent_fields), cmocka_unit_test(frame_format),
		cmocka_unit_test(source_and_last_id), cmocka_unit_test(watch_params),
		cmocka_unit_test(start_cursor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
