/* Duration and byte-size parsers (src/common/units.c): units, plain
 * numbers, malformed text, overflow, and *out untouched on error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/units.h"

static void test_duration_s(void **s)
{
	(void)s;
	uint64_t v = 0;
	assert_int_equal(sl_parse_duration_s("90", &v), 0);
	assert_int_equal(v, 90);
	assert_int_equal(sl_parse_duration_s("30s", &v), 0);
	assert_int_equal(v, 30);
	assert_int_equal(sl_parse_duration_s("5m", &v), 0);
	assert_int_equal(v, 300);
	assert_int_equal(sl_parse_duration_s("2h", &v), 0);
	assert_int_equal(v, 7200);
	assert_int_equal(sl_parse_duration_s("7d", &v), 0);
	assert_int_equal(v, 604800);
	v = 42;
	static const char *const bad[] = {"", "s", "5x", "-1", " 5", "5 ", "1.5h", "5ms", "+5", "5S",
					  "213503982334602d" /* > 2^64 s */, NULL};
	for (const char *const *b = bad; *b; b++) {
		if (sl_parse_duration_s(*b, &v) != -1)
			fail_msg("'%s' parsed", *b);
		assert_int_equal(v, 42);
	}
	assert_int_equal(sl_parse_duration_s(NULL, &v), -1);
}

static void test_duration_ns(void **s)
{
	(void)s;
	uint64_t v = 0;
	static const struct {
		const char *in;
		uint64_t ns;
	} ok[] = {{"42", 42},
		  {"150ns", 150},
		  {"500us", 500000},
		  {"1ms", 1000000},
		  {"2s", 2000000000ull},
		  {"1m", 60000000000ull},
		  {"1h", 3600000000000ull},
		  {"1d", 86400000000000ull},
		  {"18446744073709551615", UINT64_MAX}};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(sl_parse_duration_ns(ok[i].in, &v), 0);
		assert_int_equal(v, ok[i].ns);
	}
	static const char *const bad[] = {"1w", "-1ms", "300000d", "ms", "99999999999999999999", "18446744073709551615s",
					  "6000000h", "1 ms", NULL};
	for (const char *const *b = bad; *b; b++)
		if (sl_parse_duration_ns(*b, &v) != -1)
			fail_msg("'%s' parsed", *b);
}

static void test_bytes(void **s)
{
	(void)s;
	uint64_t v = 0;
	assert_int_equal(sl_parse_bytes("4MiB", &v), 0);
	assert_int_equal(v, 4u << 20);
	assert_int_equal(sl_parse_bytes("512KiB", &v), 0);
	assert_int_equal(v, 512u << 10);
	assert_int_equal(sl_parse_bytes("1GiB", &v), 0);
	assert_int_equal(v, 1u << 30);
	assert_int_equal(sl_parse_bytes("2G", &v), 0);
	assert_int_equal(v, 2ull << 30);
	assert_int_equal(sl_parse_bytes("100B", &v), 0);
	assert_int_equal(v, 100);
	assert_int_equal(sl_parse_bytes("7", &v), 0);
	assert_int_equal(v, 7);
	static const char *const bad[] = {"1TiB", "1mib", "MiB", "99999999999999999999", "17179869184GiB", "1.5MiB",
					  NULL};
	for (const char *const *b = bad; *b; b++)
		if (sl_parse_bytes(*b, &v) != -1)
			fail_msg("'%s' parsed", *b);
}

int main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_duration_s),
		cmocka_unit_test(test_duration_ns),
		cmocka_unit_test(test_bytes),
	};
	return cmocka_run_group_tests(t, NULL, NULL);
}
