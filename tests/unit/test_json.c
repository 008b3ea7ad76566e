/* sl_json_str_lossy (src/common/json.c): valid UTF-8 kept byte for byte,
 * only invalid sequences replaced (finding 3a: one invalid byte used to turn
 * every non-ASCII byte of the string into U+FFFD). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/json.h"

#define R "\xef\xbf\xbd" /* U+FFFD */

static void expect(const char *in, size_t n, const char *want)
{
	json_t *j = sl_json_str_lossy(in, n);
	assert_non_null(j);
	size_t got_n = json_string_length(j);
	if (got_n != strlen(want) || memcmp(json_string_value(j), want, got_n))
		fail_msg("got '%.*s' want '%s'", (int)got_n, json_string_value(j), want);
	json_decref(j);
}

#define EXPECT(lit, want) expect(lit, sizeof(lit) - 1, want)

static void test_valid_kept(void **state)
{
	(void)state;
	EXPECT("caf\xc3\xa9\xe6\x97\xa5\xe6\x9c\xac", "caf\xc3\xa9\xe6\x97\xa5\xe6\x9c\xac");
	EXPECT("", "");
	/* valid: a JSON string carries controls as escapes, the bytes stay */
	EXPECT("\x1b[2J\x07", "\x1b[2J\x07");
}

static void test_only_invalid_replaced(void **state)
{
	(void)state;
	/* the tester's comm: ESC[2J ESC]0; BEL U+009B U+202E 0xFF: was six U+FFFD */
	EXPECT("\x1b[2J\x1b]0;\x07\xc2\x9b\xe2\x80\xae\xff",
	       "\x1b[2J\x1b]0;\x07\xc2\x9b\xe2\x80\xae" R);
	EXPECT("caf\xc3\xa9\xff\xe6\x97\xa5", "caf\xc3\xa9" R "\xe6\x97\xa5");
	/* stray continuation bytes: one each */
	EXPECT("a\x80\x80z", "a" R R "z");
	/* a lead cut short by ASCII: one for the subpart, the ASCII kept */
	EXPECT("\xe6\x97z", R "z");
	EXPECT("\xf0\x9f\x98", R);
	/* overlong, surrogate, above U+10FFFF, bytes never in UTF-8 */
	EXPECT("\xc0\xaf", R R);
	EXPECT("\xe0\x80\xaf", R R R);
	EXPECT("\xed\xa0\x80x", R R R "x");
	EXPECT("\xf4\x90\x80\x80", R R R R);
	EXPECT("\xf8\x88\x80\x80\x80", R R R R R);
	/* a 4-byte sequence is kept next to an invalid byte */
	EXPECT("\xf0\x9f\x98\x80\xfe", "\xf0\x9f\x98\x80" R);
	/* NUL in an invalid string: U+FFFD too (jansson needs no NUL there) */
	EXPECT("a\0b\xff", "a" R "b" R);
}

/* sl_json_strz: NULL -> null; names from the world serialise whole */
static void test_strz(void **state)
{
	(void)state;
	json_t *j = sl_json_strz(NULL);
	assert_true(json_is_null(j));
	json_decref(j);
	/* the tester's comm and symbol: 0xff 0xfe, overlong 0xc0, control \x01 */
	j = sl_json_strz("\xff\xfe\xc0" "bad\x01");
	assert_non_null(j);
	assert_string_equal(json_string_value(j), R R R "bad\x01");
	char *txt = json_dumps(j, JSON_ENCODE_ANY);
	assert_string_equal(txt, "\"" R R R "bad\\u0001\""); /* control as an escape */
	free(txt);
	json_decref(j);
	/* in json_pack "s:o": the entry is kept */
	j = json_pack("{s:o}", "comm", sl_json_strz("\xff\xfe\xc0" "bad"));
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "comm")), R R R "bad");
	json_decref(j);
	/* truncated multibyte at the end, surrogate, overlong NUL */
	j = sl_json_strz("x\xe2\x82");
	assert_string_equal(json_string_value(j), "x" R);
	json_decref(j);
	j = sl_json_strz("\xed\xbf\xbf\xc0\x80");
	assert_string_equal(json_string_value(j), R R R R R);
	json_decref(j);
}

/* sl_utf8_dup: a key json_object_set accepts */
static void test_utf8_dup(void **state)
{
	(void)state;
	char *k = sl_utf8_dup("/tmp/\xff\xfe\x01name");
	assert_string_equal(k, "/tmp/" R R "\x01name");
	json_t *o = json_object();
	assert_int_equal(json_object_set_new(o, k, json_integer(1)), 0);
	json_decref(o);
	free(k);
	k = sl_utf8_dup("caf\xc3\xa9");
	assert_string_equal(k, "caf\xc3\xa9");
	free(k);
}

/* sl_utf8_seq: lengths of valid sequences and spans of invalid ones */
static void test_utf8_seq(void **state)
{
	(void)state;
	size_t bad;
	assert_int_equal(sl_utf8_seq((const unsigned char *)"a", 1, &bad), 1);
	assert_int_equal(sl_utf8_seq((const unsigned char *)"\xc3\xa9", 2, &bad), 2);
	assert_int_equal(sl_utf8_seq((const unsigned char *)"\xf0\x9f\x98\x80", 4, &bad), 4);
	assert_int_equal(sl_utf8_seq((const unsigned char *)"\xf0\x9f\x98", 3, &bad), 0);
	assert_int_equal(bad, 3); /* cut short: one subpart */
	assert_int_equal(sl_utf8_seq((const unsigned char *)"\xe0\x80\x80", 3, &bad), 0);
	assert_int_equal(bad, 1); /* overlong: the lead alone */
	assert_int_equal(sl_utf8_seq((const unsigned char *)"\xed\xa0\x80", 3, &bad), 0);
	assert_int_equal(bad, 1); /* surrogate */
	assert_int_equal(sl_utf8_seq((const unsigned char *)"\xff", 1, &bad), 0);
	assert_int_equal(bad, 1);
	assert_int_equal(sl_utf8_seq((const unsigned char *)"\x80", 1, &bad), 0);
	assert_int_equal(bad, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_kept),
		cmocka_unit_test(test_only_invalid_replaced),
		cmocka_unit_test(test_strz),
		cmocka_unit_test(test_utf8_dup),
		cmocka_unit_test(test_utf8_seq),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
