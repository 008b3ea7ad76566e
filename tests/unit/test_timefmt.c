/* RFC 3339 formatting/parsing and relative durations (src/common/timefmt.c).
 * The calendar arithmetic is checked against glibc's gmtime_r/timegm as an
 * independent oracle. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/timefmt.h"

static void test_format_known(void **state)
{
	(void)state;
	static const struct {
		int64_t ns;
		const char *s;
	} t[] = {
		{0, "1970-01-01T00:00:00.000000000Z"},
		{1, "1970-01-01T00:00:00.000000001Z"},
		{-1, "1969-12-31T23:59:59.999999999Z"},
		{-1000000000, "1969-12-31T23:59:59.000000000Z"},
		{1700000000123456789LL, "2023-11-14T22:13:20.123456789Z"},
		{951782400000000000LL, "2000-02-29T00:00:00.000000000Z"},
		{INT64_MAX, "2262-04-11T23:47:16.854775807Z"},
		{INT64_MIN, "1677-09-21T00:12:43.145224192Z"},
	};
	char buf[SL_TIME_RFC3339_MAX];
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int n = sl_time_format(t[i].ns, buf, sizeof(buf));
		assert_int_equal(n, (int)strlen(t[i].s));
		assert_string_equal(buf, t[i].s);
		int64_t back = 42;
		assert_int_equal(sl_time_parse_rfc3339(buf, &back), 0);
		assert_true(back == t[i].ns);
	}
}

static void test_format_small_buffer(void **state)
{
	(void)state;
	char buf[30]; /* needs 31 with the NUL */
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(sl_time_format(0, buf, sizeof(buf)), -ENOSPC);
	assert_string_equal(buf, "");
	assert_int_equal(sl_time_format(0, NULL, 0), -ENOSPC);
}

/* Deterministic pseudo-random walk over 1678..2261, checked against glibc. */
static void test_roundtrip_vs_libc(void **state)
{
	(void)state;
	uint64_t x = 0x9E3779B97F4A7C15ULL;
	char buf[SL_TIME_RFC3339_MAX], want[64];
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* stay one year inside the int64 range so timegm agrees */
		int64_t ns = (int64_t)(x % 9100000000000000000ULL);
		if (x >> 63)
			ns = -ns;
		if (i < 1000)
			ns = (int64_t)i * 86399999999999LL - 500 * 86400000000000LL; /* near 1970 */
		int64_t sec = ns / 1000000000LL, frac = ns % 1000000000LL;
		if (frac < 0) {
			frac += 1000000000LL;
			sec--;
		}
		time_t tt = (time_t)sec;
		struct tm tm;
		assert_non_null(gmtime_r(&tt, &tm));
		snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long long)frac);
		assert_true(sl_time_format(ns, buf, sizeof(buf)) > 0);
		assert_string_equal(buf, want);
		int64_t back;
		assert_int_equal(sl_time_parse_rfc3339(buf, &back), 0);
		assert_true(back == ns);
		/* and timegm agrees with the parse of the seconds part */
		assert_true((int64_t)timegm(&tm) == sec);
	}
}

static void test_parse_forms(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int64_t ns;
	} t[] = {
		{"2023-11-14T22:13:20Z", 1700000000000000000LL},
		{"2023-11-14t22:13:20z", 1700000000000000000LL},
		{"2023-11-14 22:13:20Z", 1700000000000000000LL},
		{"2023-11-14T22:13:20.5Z", 1700000000500000000LL},
		{"2023-11-14T22:13:20.000000001Z", 1700000000000000001LL},
		{"2023-11-14T22:13:20.1234567899Z", 1700000000123456789LL}, /* 10th digit dropped */
		{"2023-11-15T00:13:20+02:00", 1700000000000000000LL},
		{"2023-11-15T00:13:20 02:00", 1700000000000000000LL}, /* form-decoded '+' */
		{"2023-11-14T17:43:20-04:30", 1700000000000000000LL},
		{"2023-11-14T22:13:20.25+00:00", 1700000000250000000LL},
		{"2016-12-31T23:59:60Z", 1483228800000000000LL}, /* leap second -> next minute */
		{"2024-02-29T00:00:00Z", 1709164800000000000LL},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int64_t ns = 0;
		int rc = sl_time_parse_rfc3339(t[i].s, &ns);
		if (rc != 0 || ns != t[i].ns)
			fail_msg("%s: rc=%d ns=%lld want %lld", t[i].s, rc, (long long)ns,
				 (long long)t[i].ns);
	}
}

static void test_parse_invalid(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"",
		"2023-11-14",
		"2023-11-14T22:13:20",      /* no offset */
		"2023-11-14T22:13Z",        /* no seconds */
		"2023-11-14T22:13:20.Z",    /* empty fraction */
		"2023-13-01T00:00:00Z",     /* month */
		"2023-00-01T00:00:00Z",
		"2023-02-29T00:00:00Z",     /* not a leap year */
		"1900-02-29T00:00:00Z",     /* century rule */
		"2023-04-31T00:00:00Z",
		"2023-11-00T00:00:00Z",
		"2023-11-14T24:00:00Z",
		"2023-11-14T22:60:00Z",
		"2023-11-14T22:13:61Z",
		"2023-11-14T22:13:20+24:00",
		"2023-11-14T22:13:20+02:60",
		"2023-11-14T22:13:20+0200",
		"2023-11-14T22:13:20Zjunk",
		" 2023-11-14T22:13:20Z",
		"23-11-14T22:13:20Z",
		"2023/11/14T22:13:20Z",
		"2023-11-14X22:13:20Z",
		"abcd-ef-ghTij:kl:mnZ",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t ns = 7;
		int rc = sl_time_parse_rfc3339(bad[i], &ns);
		if (rc != -EINVAL)
			fail_msg("'%s' gave rc=%d", bad[i], rc);
		assert_true(ns == 7);
	}
	int64_t ns;
	assert_int_equal(sl_time_parse_rfc3339(NULL, &ns), -EINVAL);
	/* valid syntax, outside int64 ns */
	assert_int_equal(sl_time_parse_rfc3339("1600-01-01T00:00:00Z", &ns), -ERANGE);
	assert_int_equal(sl_time_parse_rfc3339("2300-01-01T00:00:00Z", &ns), -ERANGE);
	assert_int_equal(sl_time_parse_rfc3339("2262-04-11T23:47:16.854775808Z", &ns), -ERANGE);
	assert_int_equal(sl_time_parse_rfc3339("2262-04-11T23:47:16.854775807Z", &ns), 0);
	assert_true(ns == INT64_MAX);
}

static void test_duration(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int64_t ns;
	} ok[] = {
		{"90s", 90000000000LL},
		{"5m", 300000000000LL},
		{"2h", 7200000000000LL},
		{"7d", 604800000000000LL},
		{"1h30m", 5400000000000LL},
		{"500ms", 500000000LL},
		{"250us", 250000LL},
		{"17ns", 17LL},
		{"0s", 0},
		{"1d2h3m4s5ms6us7ns", 93784005006007LL},
		{"106751d", 106751LL * 86400 * 1000000000LL},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int64_t ns = -1;
		int rc = sl_time_parse_duration(ok[i].s, &ns);
		if (rc != 0 || ns != ok[i].ns)
			fail_msg("%s: rc=%d ns=%lld", ok[i].s, rc, (long long)ns);
	}
	static const char *const bad[] = {"", "90", "s", "5x", "-5m", "5 m", "5m ", "1.5h",
					  "5M", "m5", "5mm", "5sec", "1h30"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t ns;
		int rc = sl_time_parse_duration(bad[i], &ns);
		if (rc != -EINVAL)
			fail_msg("'%s' gave rc=%d", bad[i], rc);
	}
	int64_t ns;
	assert_int_equal(sl_time_parse_duration("106752d", &ns), -ERANGE);
	assert_int_equal(sl_time_parse_duration("99999999999999999999s", &ns), -ERANGE);
	assert_int_equal(sl_time_parse_duration("9223372036854775807ns1ns", &ns), -ERANGE);
	assert_int_equal(sl_time_parse_duration("99999999999999999999s!", &ns), -EINVAL);
}

static void test_point(void **state)
{
	(void)state;
	const int64_t now = 1700000000000000000LL;
	int64_t ns;
	assert_int_equal(sl_time_parse_point("5m", now, &ns), 0);
	assert_true(ns == now - 300000000000LL);
	assert_int_equal(sl_time_parse_point("1699999999000000001", now, &ns), 0);
	assert_true(ns == 1699999999000000001LL);
	assert_int_equal(sl_time_parse_point("0", now, &ns), 0);
	assert_true(ns == 0);
	assert_int_equal(sl_time_parse_point("2023-11-14T22:13:20.000000042Z", now, &ns), 0);
	assert_true(ns == 1700000000000000042LL);
	assert_int_equal(sl_time_parse_point("", now, &ns), -EINVAL);
	assert_int_equal(sl_time_parse_point(NULL, now, &ns), -EINVAL);
	assert_int_equal(sl_time_parse_point("yesterday", now, &ns), -EINVAL);
	assert_int_equal(sl_time_parse_point("-5m", now, &ns), -EINVAL);
	assert_int_equal(sl_time_parse_point("99999999999999999999", now, &ns), -ERANGE);
	assert_int_equal(sl_time_parse_point("106000d", INT64_MIN + 5, &ns), -ERANGE);
	/* now really is now */
	int64_t a = sl_time_now_ns();
	assert_true(a > 1700000000000000000LL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_known),   cmocka_unit_test(test_format_small_buffer),
		cmocka_unit_test(test_roundtrip_vs_libc), cmocka_unit_test(test_parse_forms),
		cmocka_unit_test(test_parse_invalid),  cmocka_unit_test(test_duration),
		cmocka_unit_test(test_point),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
