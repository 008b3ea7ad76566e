/* export.otlp.* keys (docs/CONFIG.md): defaults, a header list, and each
 * bad value refused naming its key. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "agent/config.h"

static int load(struct sl_config *c, const char *yaml, char *err, size_t errlen)
{
	sl_config_defaults(c);
	return sl_config_load_buf(c, "t.yaml", yaml, strlen(yaml), err, errlen);
}

static void defaults(void **st)
{
	(void)st;
	static struct sl_config c;
	sl_config_defaults(&c);
	assert_string_equal(c.export_otlp.endpoint, "");
	assert_int_equal(c.export_otlp.headers.n, 0);
	assert_int_equal(c.export_otlp.timeout_ns, 10000000000ull);
	assert_int_equal(c.export_otlp.interval_ns, 30000000000ull);
	assert_int_equal(c.export_otlp.batch_size, 512);
	assert_int_equal(c.export_otlp.queue_size, 16384);
	assert_int_equal(c.export_otlp.gzip, 1);
	assert_int_equal(c.export_otlp.max_retry_time_ns, 300000000000ull);
}

static void valid(void **st)
{
	(void)st;
	static struct sl_config c, d;
	char err[512];
	const char *y = "export:\n  otlp:\n    endpoint: \"http://127.0.0.1:4318\"\n"
			"    headers: [\"Authorization: Bearer abc.def\", \"X-Scope-OrgID: t1\"]\n"
			"    gzip: false\n    interval: 5s\n    retry_initial: 250ms\n    max_retry_time: 0\n";
	assert_int_equal(load(&c, y, err, sizeof(err)), 0);
	assert_string_equal(c.export_otlp.endpoint, "http://127.0.0.1:4318");
	assert_int_equal(c.export_otlp.headers.n, 2);
	assert_string_equal(c.export_otlp.headers.v[1], "X-Scope-OrgID: t1");
	assert_int_equal(c.export_otlp.gzip, 0);
	assert_int_equal(c.export_otlp.retry_initial_ns, 250000000ull);
	assert_int_equal(c.export_otlp.max_retry_time_ns, 0);
	/* a changed header is a differing key for SIGHUP */
	assert_int_equal(load(&d, "export:\n  otlp:\n    endpoint: \"http://127.0.0.1:4318\"\n"
				  "    headers: [\"Authorization: Bearer abc.def\", \"X-Scope-OrgID: t2\"]\n"
				  "    gzip: false\n    interval: 5s\n    retry_initial: 250ms\n    max_retry_time: 0\n",
			      err, sizeof(err)),
			 0);
	assert_int_equal(sl_config_diff(&c, &d, NULL, NULL), 1);
}

static void bad(void **st)
{
	(void)st;
	static struct sl_config c;
	char err[512];
	static const struct {
		const char *yaml, *want;
	} cases[] = {
		{"export:\n  otlp:\n    endpoint: \"ftp://x\"\n", "export.otlp.endpoint: 'ftp://x' is not an http"},
		{"export:\n  otlp:\n    headers: [\"no colon\"]\n", "export.otlp.headers[0]:"},
		{"export:\n  otlp:\n    headers: [\"ok: 1\", \"Bad Name: x\"]\n", "export.otlp.headers[1]:"},
		{"export:\n  otlp:\n    headers: \"X: y\"\n", "export.otlp.headers: expected a list"},
		{"export:\n  otlp:\n    batch_size: 100\n    queue_size: 10\n", "export.otlp.batch_size: 100 exceeds"},
		{"export:\n  otlp:\n    timeout: 10ms\n", "export.otlp.timeout"},
		{"export:\n  otlp:\n    interval: 2h\n", "export.otlp.interval"},
		{"export:\n  otlp:\n    gzip: maybe\n", "export.otlp.gzip"},
		{"export:\n  otlp:\n    nosuch: 1\n", "export.otlp.nosuch: unknown key"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = 0;
		assert_int_equal(load(&c, cases[i].yaml, err, sizeof(err)), -1);
		if (!strstr(err, cases[i].want))
			fail_msg("case %zu: '%s' does not contain '%s'", i, err, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(defaults), cmocka_unit_test(valid), cmocka_unit_test(bad)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
