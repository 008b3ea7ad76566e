/* API query parameter parsing and body building (src/api/api_params.c,
 * src/api/api_events.c): pure functions, no server. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"

#define NOW 1700000000000000000LL /* 2023-11-14T22:13:20Z */
/* the type filter's names: any list (the agent passes every module's kinds) */
static const char *const TYPES[] = {"exec", "exit", "signal", "oom", "sched_delay"};
#define NT (sizeof(TYPES) / sizeof(TYPES[0]))

static int parse1(const char *k, const char *v, struct sl_event_filter *f, char *err, size_t el)
{
	struct sl_api_param p = {k, v};
	return sl_api_parse_event_params(&p, 1, NOW, TYPES, NT, f, err, el);
}

static void test_defaults(void **state)
{
	(void)state;
	struct sl_event_filter f;
	char err[256] = "";
	memset(&f, 0xAB, sizeof(f));
	assert_int_equal(sl_api_parse_event_params(NULL, 0, NOW, TYPES, NT, &f, err, sizeof(err)), 0);
	assert_null(f.type);
	assert_null(f.container_id);
	assert_null(f.pod_uid);
	assert_true(f.since_ns == 0 && f.until_ns == 0 && f.after_id == 0);
	assert_int_equal(f.limit, 100);
	assert_int_equal(f.ascending, 0);
}

static void test_valid_each(void **state)
{
	(void)state;
	struct sl_event_filter f;
	char err[256];
	static const char *const types[] = {"exec", "exit", "signal", "oom", "sched_delay"};
	for (int i = 0; i < 5; i++) {
		assert_int_equal(parse1("type", types[i], &f, err, sizeof(err)), 0);
		assert_string_equal(f.type, types[i]);
	}
	assert_int_equal(parse1("container", "0123abcdef", &f, err, sizeof(err)), 0);
	assert_string_equal(f.container_id, "0123abcdef");
	assert_int_equal(parse1("pod", "4a1b2c3d-0000-1111-2222-333344445555", &f, err, sizeof(err)), 0);
	assert_string_equal(f.pod_uid, "4a1b2c3d-0000-1111-2222-333344445555");

	assert_int_equal(parse1("since", "5m", &f, err, sizeof(err)), 0);
	assert_true(f.since_ns == NOW - 300000000000LL);
	assert_int_equal(parse1("since", "2023-11-14T22:13:20.5Z", &f, err, sizeof(err)), 0);
	assert_true(f.since_ns == NOW + 500000000LL);
	assert_int_equal(parse1("since", "1699999999999999999", &f, err, sizeof(err)), 0);
	assert_true(f.since_ns == NOW - 1);
	assert_int_equal(parse1("since", "5", &f, err, sizeof(err)), 0); /* 5 ns after the epoch */
	assert_true(f.since_ns == 5);
	assert_int_equal(parse1("until", "90s", &f, err, sizeof(err)), 0);
	assert_true(f.until_ns == NOW - 90000000000LL);
	assert_int_equal(parse1("until", "2023-11-15T00:13:20 02:00", &f, err, sizeof(err)), 0);
	assert_true(f.until_ns == NOW);

	assert_int_equal(parse1("limit", "1", &f, err, sizeof(err)), 0);
	assert_int_equal(f.limit, 1);
	assert_int_equal(parse1("limit", "10000", &f, err, sizeof(err)), 0);
	assert_int_equal(f.limit, 10000);
	assert_int_equal(parse1("after_id", "0", &f, err, sizeof(err)), 0);
	assert_true(f.after_id == 0);
	assert_int_equal(parse1("after_id", "9223372036854775807", &f, err, sizeof(err)), 0);
	assert_true(f.after_id == INT64_MAX);
	assert_int_equal(parse1("order", "asc", &f, err, sizeof(err)), 0);
	assert_int_equal(f.ascending, 1);
	assert_int_equal(parse1("order", "desc", &f, err, sizeof(err)), 0);
	assert_int_equal(f.ascending, 0);
}

static void test_all_together(void **state)
{
	(void)state;
	struct sl_api_param p[] = {
		{"type", "oom"},      {"container", "abcd"}, {"pod", "p-1"},
		{"since", "1h"},      {"until", "1m"},       {"limit", "7"},
		{"after_id", "42"},   {"order", "asc"},
	};
	struct sl_event_filter f;
	char err[256] = "";
	assert_int_equal(sl_api_parse_event_params(p, 8, NOW, TYPES, NT, &f, err, sizeof(err)), 0);
	assert_string_equal(f.type, "oom");
	assert_string_equal(f.container_id, "abcd");
	assert_string_equal(f.pod_uid, "p-1");
	assert_true(f.since_ns == NOW - 3600000000000LL);
	assert_true(f.until_ns == NOW - 60000000000LL);
	assert_int_equal(f.limit, 7);
	assert_true(f.after_id == 42);
	assert_int_equal(f.ascending, 1);
}

/* Each bad input must fail with -EINVAL and name the parameter. */
static void test_invalid_each(void **state)
{
	(void)state;
	static const struct {
		const char *k, *v, *must_contain;
	} bad[] = {
		{"type", "fork", "type"},
		{"type", "EXEC", "type"},
		{"type", "", "type"},
		{"type", NULL, "type"},
		{"container", "abc def", "container"},
		{"container", "abc*", "container"},
		{"container", "x'; drop table events;--", "container"},
		{"container", "0123456789012345678901234567890123456789012345678901234567890123456789"
			      "0123456789",
		 "container"},
		{"pod", "a/b", "pod"},
		{"pod", "0123456789012345678901234567890123456789", "pod"},
		{"since", "yesterday", "since"},
		{"since", "-5m", "since"},
		{"since", "2023-02-30T00:00:00Z", "since"},
		{"since", "99999999999999999999", "since"},
		{"until", "5 m", "until"},
		{"until", "0", "until"},
		{"limit", "0", "limit"},
		{"limit", "10001", "limit"},
		{"limit", "-1", "limit"},
		{"limit", "1e3", "limit"},
		{"limit", "ten", "limit"},
		{"limit", "99999999999999999999999", "limit"},
		{"after_id", "-1", "after_id"},
		{"after_id", "1.5", "after_id"},
		{"after_id", "9223372036854775808", "after_id"},
		{"order", "up", "order"},
		{"order", "ASC", "order"},
		{"bogus", "1", "bogus"},
		{"Type", "exec", "Type"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sl_event_filter f;
		char err[256] = "";
		int rc = parse1(bad[i].k, bad[i].v, &f, err, sizeof(err));
		if (rc != -EINVAL || !strstr(err, bad[i].must_contain))
			fail_msg("%s=%s: rc=%d err='%s'", bad[i].k, bad[i].v ? bad[i].v : "(null)",
				 rc, err);
	}
}

static void test_duplicate_and_order(void **state)
{
	(void)state;
	struct sl_event_filter f;
	char err[256] = "";
	struct sl_api_param dup[] = {{"type", "exec"}, {"type", "exit"}};
	assert_int_equal(sl_api_parse_event_params(dup, 2, NOW, TYPES, NT, &f, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "type"));
	assert_non_null(strstr(err, "more than once"));

	struct sl_api_param rev[] = {{"since", "1m"}, {"until", "1h"}};
	assert_int_equal(sl_api_parse_event_params(rev, 2, NOW, TYPES, NT, &f, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "until"));
}

static void test_no_params(void **state)
{
	(void)state;
	char err[128] = "";
	struct sl_api_param p = {"verbose", "1"};
	assert_int_equal(sl_api_no_params(NULL, 0, err, sizeof(err)), 0);
	assert_int_equal(sl_api_no_params(&p, 1, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown parameter 'verbose'");
}

/* sl_api_params_add/check: microhttpd hands over sizes; a NUL byte (%00)
 * inside a key or value would cut the C string short (a filter typo would
 * widen the query), so it is an error naming the parameter. */
static void test_params_nul(void **state)
{
	(void)state;
	char err[256] = "";
	struct sl_api_params ps;

	memset(&ps, 0, sizeof(ps));
	assert_int_equal(sl_api_params_add(&ps, "container", 9, "1014b1", 6), 0);
	assert_int_equal(sl_api_params_add(&ps, "x", 1, NULL, 0), 0); /* bare ?x */
	assert_int_equal(sl_api_params_check(&ps, err, sizeof(err)), 0);
	assert_int_equal(ps.n, 2);
	assert_string_equal(ps.p[0].key, "container");
	assert_string_equal(ps.p[0].value, "1014b1");
	assert_null(ps.p[1].value);

	/* value "1014b1\0zzzzzz" */
	static const char v[] = "1014b1\0zzzzzz";
	memset(&ps, 0, sizeof(ps));
	assert_int_equal(sl_api_params_add(&ps, "type", 4, "oom", 3), 0);
	assert_int_equal(sl_api_params_add(&ps, "container", 9, v, sizeof(v) - 1), -EINVAL);
	assert_int_equal(ps.nul, 2);
	assert_int_equal(sl_api_params_check(&ps, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "container: value contains a NUL byte (%00)");

	/* a trailing NUL alone: "limit=5%00" */
	memset(&ps, 0, sizeof(ps));
	assert_int_equal(sl_api_params_add(&ps, "limit", 5, "5\0", 2), -EINVAL);
	assert_int_equal(sl_api_params_check(&ps, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "limit: value contains a NUL byte (%00)");

	/* key "type\0x" (value fine), and a key that is only NUL */
	memset(&ps, 0, sizeof(ps));
	assert_int_equal(sl_api_params_add(&ps, "type\0x", 6, "oom", 3), -EINVAL);
	assert_int_equal(ps.nul, 1);
	assert_int_equal(sl_api_params_check(&ps, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "parameter 'type%00x': name contains a NUL byte (%00)");
	memset(&ps, 0, sizeof(ps));
	assert_int_equal(sl_api_params_add(&ps, "\0", 1, NULL, 0), -EINVAL);
	assert_int_equal(sl_api_params_check(&ps, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "parameter '%00': name contains a NUL byte (%00)");
	/* other bytes of the name are shown escaped, never raw */
	memset(&ps, 0, sizeof(ps));
	assert_int_equal(sl_api_params_add(&ps, "a%\n", 3, "\0", 1), -EINVAL);
	assert_int_equal(sl_api_params_check(&ps, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "a%25%0A: value contains a NUL byte (%00)");
	/* a long name is cut, not overflowed */
	char longk[600];
	memset(longk, 'k', sizeof(longk));
	longk[599] = 0;
	memset(&ps, 0, sizeof(ps));
	assert_int_equal(sl_api_params_add(&ps, longk, sizeof(longk), "v", 1), -EINVAL);
	assert_int_equal(sl_api_params_check(&ps, err, sizeof(err)), -EINVAL);
	assert_true(strlen(ps.nul_name) < sizeof(ps.nul_name));

	/* more than SL_API_MAX_PARAMS */
	memset(&ps, 0, sizeof(ps));
	for (int i = 0; i < SL_API_MAX_PARAMS; i++)
		assert_int_equal(sl_api_params_add(&ps, "a", 1, "1", 1), 0);
	assert_int_equal(sl_api_params_add(&ps, "a", 1, "1", 1), -EINVAL);
	assert_int_equal(sl_api_params_check(&ps, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "more than 32 query parameters");
}

static void test_params_only(void **state)
{
	(void)state;
	char err[256] = "";
	static const char *const names[] = {"format"};
	const char *v = "junk";

	assert_int_equal(sl_api_params_only(NULL, 0, names, 1, &v, err, sizeof(err)), 0);
	assert_null(v);
	struct sl_api_param ok = {"format", "svg"};
	assert_int_equal(sl_api_params_only(&ok, 1, names, 1, &v, err, sizeof(err)), 0);
	assert_string_equal(v, "svg");

	struct sl_api_param dup[] = {{"format", "svg"}, {"format", "json"}};
	assert_int_equal(sl_api_params_only(dup, 2, names, 1, &v, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "format: given more than once");
	struct sl_api_param unk[] = {{"format", "svg"}, {"x", "1"}};
	assert_int_equal(sl_api_params_only(unk, 2, names, 1, &v, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown parameter 'x'");
	struct sl_api_param empty = {"format", ""}, bare = {"format", NULL};
	assert_int_equal(sl_api_params_only(&empty, 1, names, 1, &v, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "format: empty value");
	assert_int_equal(sl_api_params_only(&bare, 1, names, 1, &v, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "format: empty value");

	/* no names: every parameter is unknown, repeated or not */
	struct sl_api_param junk[] = {{"junk", "1"}, {"junk", "1"}};
	assert_int_equal(sl_api_params_only(junk, 2, NULL, 0, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown parameter 'junk'");
	assert_int_equal(sl_api_params_only(NULL, 0, NULL, 0, NULL, err, sizeof(err)), 0);
}

static void test_error_body(void **state)
{
	(void)state;
	size_t len = 0;
	char *s = sl_api_error_body("NOT_FOUND", "no \"route\"", &len);
	assert_non_null(s);
	assert_int_equal(len, strlen(s));
	json_error_t je;
	json_t *o = json_loads(s, 0, &je);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(json_object_get(o, "error"), "code")),
			    "NOT_FOUND");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(o, "error"), "message")),
		"no \"route\"");
	assert_int_equal(json_object_size(o), 1);
	json_decref(o);
	free(s);
}

static json_t *make_events(int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:I,s:s,s:s}", "id", (json_int_t)(100 + i),
						   "type", "exec", "comm", "abcdefghijklmnop"));
	return a;
}

static void test_list_body_fits(void **state)
{
	(void)state;
	json_t *a = make_events(5);
	int64_t cur = 3;
	size_t len, count;
	char *s = sl_api_list_body("events", a, SL_API_MAX_BODY, &cur, &count, &len);
	assert_non_null(s);
	assert_int_equal(len, strlen(s));
	assert_int_equal(count, 5);
	assert_true(cur == 104);
	json_error_t je;
	json_t *o = json_loads(s, 0, &je);
	assert_non_null(o);
	assert_true(json_equal(json_object_get(o, "events"), a));
	assert_int_equal(json_integer_value(json_object_get(o, "next_after_id")), 104);
	assert_null(json_object_get(o, "truncated"));
	json_decref(o);
	free(s);

	/* empty list keeps the cursor */
	json_t *e = json_array();
	cur = 77;
	s = sl_api_list_body("events", e, SL_API_MAX_BODY, &cur, &count, &len);
	assert_string_equal(s, "{\"events\":[],\"next_after_id\":77}");
	assert_int_equal(count, 0);
	free(s);
	/* no cursor: no next_after_id */
	s = sl_api_list_body("containers", e, SL_API_MAX_BODY, NULL, NULL, &len);
	assert_string_equal(s, "{\"containers\":[]}");
	free(s);
	json_decref(e);
	json_decref(a);
}

static void test_list_body_truncates(void **state)
{
	(void)state;
	json_t *a = make_events(1000);
	for (size_t max = 200; max < 40000; max = max * 3 / 2) {
		int64_t cur = 0;
		size_t len, count;
		char *s = sl_api_list_body("events", a, max, &cur, &count, &len);
		assert_non_null(s);
		assert_true(len <= max);
		assert_true(count < 1000);
		json_error_t je;
		json_t *o = json_loads(s, 0, &je);
		if (!o)
			fail_msg("max=%zu: not JSON: %s", max, je.text);
		assert_true(json_is_true(json_object_get(o, "truncated")));
		json_t *ev = json_object_get(o, "events");
		assert_int_equal(json_array_size(ev), count);
		if (count)
			assert_int_equal(json_integer_value(json_object_get(o, "next_after_id")),
					 100 + (int)count - 1);
		else
			assert_int_equal(json_integer_value(json_object_get(o, "next_after_id")), 0);
		for (size_t i = 0; i < count; i++)
			assert_true(json_equal(json_array_get(ev, i), json_array_get(a, i)));
		/* it took as many as fit: one more would not have */
		char *one = json_dumps(json_array_get(a, count), JSON_COMPACT);
		assert_true(len + strlen(one) + 1 > max - 64 - strlen(",\"truncated\":true"));
		free(one);
		json_decref(o);
		free(s);
	}
	json_decref(a);
}

static void test_truncate_text(void **state)
{
	(void)state;
	char buf[4096];
	size_t len = 0;
	for (int i = 0; len + 40 < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "sandlens_x{n=\"%d\"} %d\n", i, i);
	char copy[4096];
	memcpy(copy, buf, len);
	assert_int_equal(sl_api_truncate_text(buf, len, len), len); /* fits: unchanged */
	assert_memory_equal(buf, copy, len);

	size_t n = sl_api_truncate_text(buf, len, 1000);
	assert_true(n <= 1000);
	static const char marker[] = "# ...[truncated]\n";
	assert_memory_equal(buf + n - strlen(marker), marker, strlen(marker));
	/* what is kept is a prefix of whole lines */
	size_t kept = n - strlen(marker);
	assert_memory_equal(buf, copy, kept);
	assert_int_equal(buf[kept - 1], '\n');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_valid_each),
		cmocka_unit_test(test_all_together),
		cmocka_unit_test(test_invalid_each),
		cmocka_unit_test(test_duplicate_and_order),
		cmocka_unit_test(test_no_params),
		cmocka_unit_test(test_params_nul),
		cmocka_unit_test(test_params_only),
		cmocka_unit_test(test_error_body),
		cmocka_unit_test(test_list_body_fits),
		cmocka_unit_test(test_list_body_truncates),
		cmocka_unit_test(test_truncate_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
