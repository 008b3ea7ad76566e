/* sandlensd configuration loading (src/agent/config.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/config.h"
#include "common/log.h"

static char path[64];

static int load(const char *yaml, struct sl_config *c, char *err, size_t len)
{
	strcpy(path, "/tmp/sl-config-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
	close(fd);
	sl_config_defaults(c);
	err[0] = 0;
	int rc = sl_config_load(c, path, err, len);
	unlink(path);
	return rc;
}

static void defaults(void **state)
{
	(void)state;
	struct sl_config c;
	sl_config_defaults(&c);
	assert_string_equal(c.api.listen, "127.0.0.1:9753");
	assert_int_equal(c.attribution.cache_size, 4096);
	assert_int_equal(c.attribution.positive_ttl_s, 300);
	assert_int_equal(c.attribution.negative_ttl_s, 30);
	assert_int_equal(c.store.max_age_s, 7 * 86400);
	assert_int_equal(c.proc.ringbuf_bytes, 4u << 20);
}

static void full_file(void **state)
{
	(void)state;
	struct sl_config c;
	char err[256];
	const char *y = "log_level: debug\n"
			"store:\n  path: /tmp/x.db\n  max_age: 2d\n  max_rows: 500\n"
			"api:\n  listen: 127.0.0.1:1234\n  unix_socket: /run/s.sock\n"
			"attribution:\n  enabled: false\n  negative_ttl: 1m\n"
			"proc:\n  exec_rate: 7\n  exec_burst: 9\n  ringbuf_size: 8MiB\n";
	assert_int_equal(load(y, &c, err, sizeof(err)), 0);
	assert_int_equal(c.log_level, SL_LOG_DEBUG);
	assert_string_equal(c.store.path, "/tmp/x.db");
	assert_int_equal(c.store.max_age_s, 2 * 86400);
	assert_int_equal(c.store.max_rows, 500);
	assert_string_equal(c.api.unix_socket, "/run/s.sock");
	assert_int_equal(c.attribution.enabled, 0);
	assert_int_equal(c.attribution.negative_ttl_s, 60);
	assert_int_equal(c.proc.exec_rate, 7);
	assert_int_equal(c.proc.exec_burst, 9);
	assert_int_equal(c.proc.ringbuf_bytes, 8u << 20);
}

static void errors_name_the_key(void **state)
{
	(void)state;
	static const struct { const char *yaml, *want; } cases[] = {
		{"bogus: 1\n", "bogus: unknown key"},
		{"proc:\n  exec_rat: 3\n", "proc.exec_rat: unknown key"},
		{"nosuch:\n  a: 1\n", "nosuch: unknown key"},
		{"proc:\n  exec_rate: fast\n", "proc.exec_rate:"},
		{"proc:\n  exec_rate: -1\n", "proc.exec_rate:"},
		{"proc:\n  exec_burst: 0\n", "proc.exec_burst:"},
		{"proc:\n  ringbuf_size: 3MiB\n", "proc.ringbuf_size:"},
		{"attribution:\n  enabled: maybe\n", "attribution.enabled:"},
		{"log_level: loud\n", "log_level:"},
		{"store:\n  max_age: 5 weeks\n", "store.max_age:"},
		{"api:\n  listen: nowhere\n", "api.listen:"},
		{"api:\n  unix_socket: relative.sock\n", "api.unix_socket:"},
		{"api:\n  listen: [a, b]\n", "api.listen:"},
		{"- a\n- b\n", "top level"},
		{"store: {path: \"\"}\n", "store.path:"},
		{"api:\n  listen: 127.0.0.1:99999\n", "api.listen:"},
		{"api:\n  listen: \"127.0.0.1:\"\n", "api.listen:"},
		{"api:\n  listen: \":80\"\n", "api.listen:"},
		{"log_level: info\nlog_level: debug\n", "log_level: given more than once"},
		{"proc:\n  exec_rate: 1\nproc:\n  exec_burst: 2\n", "proc: given more than once"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sl_config c;
		char err[256];
		assert_int_equal(load(cases[i].yaml, &c, err, sizeof(err)), -1);
		if (!strstr(err, cases[i].want)) {
			print_error("case %zu: error '%s' does not contain '%s'\n", i, err, cases[i].want);
			fail();
		}
	}
}

static void syntax_error_has_line(void **state)
{
	(void)state;
	struct sl_config c;
	char err[256];
	assert_int_equal(load("a: 1\nb: [1, 2\n", &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ":3:"));
}

static void empty_file_is_defaults(void **state)
{
	(void)state;
	struct sl_config c;
	char err[256];
	assert_int_equal(load("", &c, err, sizeof(err)), 0);
	assert_int_equal(c.proc.exec_rate, 50);
}

static void duration_and_bytes(void **state)
{
	(void)state;
	uint64_t v;
	assert_int_equal(sl_parse_duration_s("90", &v), 0);
	assert_int_equal(v, 90);
	assert_int_equal(sl_parse_duration_s("5m", &v), 0);
	assert_int_equal(v, 300);
	assert_int_equal(sl_parse_duration_s("7d", &v), 0);
	assert_int_equal(v, 604800);
	assert_int_equal(sl_parse_duration_s("5x", &v), -1);
	assert_int_equal(sl_parse_duration_s("", &v), -1);
	assert_int_equal(sl_parse_bytes("4MiB", &v), 0);
	assert_int_equal(v, 4u << 20);
	assert_int_equal(sl_parse_bytes("99999999999999999999", &v), -1);
	assert_int_equal(sl_parse_bytes("1TiB", &v), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(full_file),
		cmocka_unit_test(errors_name_the_key),
		cmocka_unit_test(syntax_error_has_line),
		cmocka_unit_test(empty_file_is_defaults),
		cmocka_unit_test(duration_and_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
