/* sl_json_str_lossy (src/common/json.c): valid UTF-8 kept byte for byte,
 * only invalid sequences replaced (finding 3a: one invalid byte used to turn
 * every non-ASCII byte of the string into U+FFFD). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_kept),
		cmocka_unit_test(test_only_invalid_replaced),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
