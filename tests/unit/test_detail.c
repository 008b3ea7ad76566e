/* DETAILS templates (src/common/detail.c): parse errors, checks against
 * declared fields, rendering, terminal escaping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "common/detail.h"

static char *render(const char *tmpl, const char *json)
{
	static char out[512];
	struct sl_detail *d;
	char err[128];
	json_error_t je;
	json_t *ev = json_loads(json, 0, &je);
	assert_non_null(ev);
	if (sl_detail_parse(tmpl, &d, err, sizeof(err)))
		fail_msg("parse '%s': %s", tmpl, err);
	sl_detail_render(d, ev, out, sizeof(out));
	sl_detail_free(d);
	json_decref(ev);
	return out;
}

static void test_render(void **s)
{
	(void)s;
	assert_string_equal(render("code={exit_code} sig={signal}", "{\"exit_code\":3,\"signal\":0}"),
			    "code=3 sig=0");
	assert_string_equal(render("{actor.comm}({actor.pid}) -> {victim.pid}",
				   "{\"actor\":{\"comm\":\"a\",\"pid\":1},\"victim\":{\"pid\":2}}"),
			    "a(1) -> 2");
	assert_string_equal(render("x{?core_dumped} (core){/}", "{\"core_dumped\":true}"), "x (core)");
	assert_string_equal(render("x{?core_dumped} (core){/}", "{\"core_dumped\":false}"), "x");
	assert_string_equal(render("x{?n} n={n}{/}!", "{}"), "x!");
	assert_string_equal(render("{missing}", "{}"), "-");
	assert_string_equal(render("{{{a}}}", "{\"a\":\"b\"}"), "{b}");
	assert_string_equal(render("{w:dur}", "{\"w\":1500000}"), "1.5ms");
	assert_string_equal(render("{b:bytes}", "{\"b\":67108864}"), "64.0MiB");
	assert_string_equal(render("{r}", "{\"r\":0.5}"), "0.5");
}

static void test_escape(void **s)
{
	(void)s;
	/* ESC, a C1 CSI, a bidi override, invalid UTF-8, a backslash */
	assert_string_equal(render("{v}", "{\"v\":\"a\\u001b[2Jb\"}"), "a\\x1b[2Jb");
	assert_string_equal(render("{v}", "{\"v\":\"\\u009b\"}"), "\\u{009b}");
	assert_string_equal(render("{v}", "{\"v\":\"\\u202eabc\"}"), "\\u{202e}abc");
	assert_string_equal(render("{v}", "{\"v\":\"a\\\\x1b\"}"), "a\\\\x1b");
	assert_string_equal(render("{v}", "{\"v\":\"caf\\u00e9\"}"), "caf\xc3\xa9");
	char out[32];
	assert_int_equal(sl_term_escape("\xff\xfe", 2, out, sizeof(out)), 8);
	assert_string_equal(out, "\\xff\\xfe");
	/* cut output is NUL-terminated and the return says how long it needed */
	assert_int_equal(sl_term_escape("abcdef", 6, out, 4), 6);
	assert_string_equal(out, "abc");
}

static void test_parse_errors(void **s)
{
	(void)s;
	static const char *const bad[] = {"{", "{a", "a}", "{?a}x", "{/}", "{?a}{?b}{/}{/}", "{}", "{a:xyz}",
					  "{.a}", "{a b}", "{?a:dur}x{/}", "{/x}", NULL};
	for (const char *const *t = bad; *t; t++) {
		struct sl_detail *d = NULL;
		char err[128] = "";
		if (!sl_detail_parse(*t, &d, err, sizeof(err)))
			fail_msg("'%s' parsed", *t);
		assert_null(d);
		assert_non_null(strstr(err, "offset"));
	}
}

static void test_check(void **s)
{
	(void)s;
	const char *names[] = {"exit_code", "signal", "actor"};
	char err[128];
	assert_int_equal(sl_detail_check("{exit_code} {actor.pid}", names, 3, err, sizeof(err)), 0);
	assert_int_equal(sl_detail_check("{exit_code} {nope}", names, 3, err, sizeof(err)), -1);
	assert_string_equal(err, "unknown field 'nope'");
	assert_int_equal(sl_detail_check("{exit", names, 3, err, sizeof(err)), -1);
	struct sl_detail *d;
	assert_int_equal(sl_detail_parse("{a} {?b}{c.d}{/}", &d, err, sizeof(err)), 0);
	assert_int_equal(sl_detail_nrefs(d), 3);
	assert_string_equal(sl_detail_ref(d, 2), "c.d");
	assert_null(sl_detail_ref(d, 3));
	sl_detail_free(d);
}

int main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_check),
	};
	return cmocka_run_group_tests(t, NULL, NULL);
}
