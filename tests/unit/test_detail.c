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

/* The conditions and formats the CLI's templates use. */
static void test_conditions(void **s)
{
	(void)s;
	const char *t = "{?sig}killed{/}{!sig}exit {code}{/}";
	assert_string_equal(render(t, "{\"sig\":9,\"code\":0}"), "killed");
	assert_string_equal(render(t, "{\"sig\":0,\"code\":3}"), "exit 3");
	assert_string_equal(render(t, "{\"code\":3}"), "exit 3");
	/* {+f}: present, even 0; not when absent or null */
	assert_string_equal(render("a{+cpu} cpu {cpu}{/}", "{\"cpu\":0}"), "a cpu 0");
	assert_string_equal(render("a{+cpu} cpu {cpu}{/}", "{}"), "a");
	assert_string_equal(render("a{+cpu} cpu {cpu}{/}", "{\"cpu\":null}"), "a");
	/* an empty array is not truthy, a non-empty one is */
	assert_string_equal(render("{?v}[{v:join}]{/}{!v}none{/}", "{\"v\":[]}"), "none");
	assert_string_equal(render("{?v}[{v:join}]{/}{!v}none{/}", "{\"v\":[\"a\",1]}"), "[a 1]");
	/* nested: an inner condition inside a false outer one prints nothing,
	 * and the outer's end is found past the inner's */
	t = "<{?n}n{?n.id} [{n.id:id}]{/}{!n.id}{?n.rt} [{n.rt}]{/}{/}{/}>";
	assert_string_equal(render(t, "{}"), "<>");
	assert_string_equal(render(t, "{\"n\":{\"id\":\"0123456789abcdef\",\"rt\":\"x\"}}"),
			    "<n [0123456789ab]>");
	assert_string_equal(render(t, "{\"n\":{\"id\":\"\",\"rt\":\"host\"}}"), "<n [host]>");
	assert_string_equal(render(t, "{\"n\":{\"pid\":1}}"), "<n>");
	assert_string_equal(render("{?a}{!b}{+c}{?d}x{/}y{/}z{/}w{/}.",
				   "{\"a\":1,\"c\":0,\"d\":1}"), "xyzw.");
}

static void test_formats(void **s)
{
	(void)s;
	static const struct {
		const char *json, *want;
	} dur[] = {{"0", "0us"},	  {"-5", "0us"},	{"250000", "250us"},   {"999999", "1000us"},
		   {"1000000", "1.0ms"}, {"4567890", "4.6ms"}, {"1500000000", "1.50s"}, {"59990000000", "59.99s"},
		   {"60000000000", "1.0m"}, {"3599000000000", "60.0m"}, {"7200000000000", "2.0h"}};
	char j[64];
	for (size_t i = 0; i < sizeof(dur) / sizeof(dur[0]); i++) {
		snprintf(j, sizeof(j), "{\"w\":%s}", dur[i].json);
		assert_string_equal(render("{w:dur}", j), dur[i].want);
	}
	assert_string_equal(render("{s:sig}", "{\"s\":11}"), "SIGSEGV");
	assert_string_equal(render("{s:sig}", "{\"s\":9}"), "SIGKILL");
	assert_string_equal(render("{s:sig}", "{\"s\":0}"), "SIG0");
	assert_string_equal(render("{s:sig}", "{\"s\":200}"), "SIG200");
	assert_string_equal(render("{s:sig}", "{\"s\":-3}"), "SIG-3");
	assert_string_equal(render("{s:sig}", "{\"s\":\"x\"}"), "x");
	assert_string_equal(render("{c:id}", "{\"c\":\"4f3a2b1c0d9e8877665544\"}"), "4f3a2b1c0d9e");
	assert_string_equal(render("{c:id}", "{\"c\":\"abc\"}"), "abc");
	assert_string_equal(render("{c:id}", "{\"c\":\"\\u001b[2J0123456789\"}"), "\\x1b[2J01234567");
	assert_string_equal(render("{a:join}", "{\"a\":[\"sh\",\"-c\",\"echo hi\"]}"), "sh -c echo hi");
	assert_string_equal(render("{a:join}", "{\"a\":[\"x\\ny\",null,true]}"), "x\\x0ay - true");
	assert_string_equal(render("{a:join}", "{\"a\":\"one string\"}"), "one string");
	assert_string_equal(render("{a:join}", "{}"), "-");
	assert_string_equal(render("{a}", "{\"a\":[1,2]}"), "[1,2]");
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

/* Invisible characters that spoof an argv or a name (finding 3b): zero
 * width space/non-joiner/joiner, word joiner, BOM, soft hyphen, tag
 * characters; each as \u{XXXX}, what is around them kept. */
static void test_escape_invisible(void **s)
{
	(void)s;
	static const struct {
		const char *in, *want;
	} c[] = {
		{"rm\xe2\x80\x8b -rf", "rm\\u{200b} -rf"},
		{"a\xe2\x80\x8c" "b", "a\\u{200c}b"},
		{"a\xe2\x80\x8d" "b", "a\\u{200d}b"},
		{"a\xe2\x81\xa0" "b", "a\\u{2060}b"},
		{"\xef\xbb\xbfsudo", "\\u{feff}sudo"},
		{"pass\xc2\xadwd", "pass\\u{00ad}wd"},
		{"x\xf3\xa0\x80\x80y", "x\\u{e0000}y"},
		{"x\xf3\xa0\x81\x81y", "x\\u{e0041}y"},
		{"x\xf3\xa0\x81\xbfy", "x\\u{e007f}y"},
		/* neighbours that are visible stay */
		{"\xe2\x80\x90\xe2\x81\xb0\xf3\xa0\x82\x80", "\xe2\x80\x90\xe2\x81\xb0\xf3\xa0\x82\x80"},
		{"caf\xc3\xa9\xe6\x97\xa5", "caf\xc3\xa9\xe6\x97\xa5"},
	};
	char out[64];
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		size_t n = sl_term_escape(c[i].in, strlen(c[i].in), out, sizeof(out));
		if (strcmp(out, c[i].want))
			fail_msg("case %zu: got '%s' want '%s'", i, out, c[i].want);
		assert_int_equal(n, strlen(c[i].want));
	}
}

static void test_parse_errors(void **s)
{
	(void)s;
	static const char *const bad[] = {"{", "{a", "a}", "{?a}x", "{/}", "{?a}{?b}{/}", "{?a}{!b}{+c}{?d}{?e}x{/}{/}{/}{/}{/}", "{}", "{a:xyz}",
					  "{.a}", "{a b}", "{?a:dur}x{/}", "{/x}", "{a:dur", "{a:}", "{a:du}", "{!a:sig}{/}",
					  "{+}", "{!a}", NULL};
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
		cmocka_unit_test(test_conditions),
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_escape_invisible),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_check),
	};
	return cmocka_run_group_tests(t, NULL, NULL);
}
