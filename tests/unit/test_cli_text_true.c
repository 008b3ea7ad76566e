/* The CLI's human output says true things (break-it item 12):
 * `sandlens captures show` never prints "value 0.15 > threshold 0.15"
 * (a PSI trigger's value is its threshold: ">="; close values get the
 * digits that tell them apart; src/cli/exceeds.c), and a function name of
 * 100 KB is cut at CLI_SYM_MAX code points with a "…" marker in the
 * captures, while --json stays whole (cli_esc_sym, src/cli/format.c).
 * captures.c is compiled in with its connection helpers stubbed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/format.c"
#include "cli/schema.c"
#include "cli/exceeds.c"
#define str captures_str /* format.c has its own static str() */
#include "cli/captures.c"
#undef str

const char *cli_opt(const struct cli_run *r, const char *name)
{
	(void)r, (void)name;
	return NULL;
}
int cli_flag(const struct cli_run *r, const char *name)
{
	(void)r, (void)name;
	return 0;
}
int cli_run_connect(struct cli_run *r, struct cli_conn **c)
{
	(void)r, (void)c;
	return CLI_ERR;
}
int cli_get_json(struct cli_conn *c, const char *path, int allow_503, json_t **out, long *status)
{
	(void)c, (void)path, (void)allow_503, (void)out, (void)status;
	return CLI_ERR;
}
int cli_http_get(struct cli_conn *c, const char *path, struct cli_resp *r)
{
	(void)c, (void)path, (void)r;
	return -1;
}
void cli_resp_free(struct cli_resp *r)
{
	(void)r;
}
int cli_unreachable(const struct cli_conn *c, const struct cli_resp *r)
{
	(void)c, (void)r;
	return CLI_ERR;
}
int cli_query_add(char *buf, size_t size, const char *k, const char *v)
{
	(void)buf, (void)size, (void)k, (void)v;
	return -1;
}

static void test_exceeds(void **state)
{
	(void)state;
	char v[CLI_NUM_LEN], t[CLI_NUM_LEN];
	assert_string_equal(cli_exceeds(0.3, 0.15, 0, 6, v, t), ">");
	assert_string_equal(v, "0.3");
	assert_string_equal(t, "0.15");
	/* 0.15 rounded: more digits until they differ */
	assert_string_equal(cli_exceeds(0.1500001, 0.15, 0, 6, v, t), ">");
	assert_string_equal(v, "0.1500001");
	assert_string_equal(t, "0.15");
	assert_string_equal(cli_exceeds(0.15000000000000002, 0.15, 0, 4, v, t), ">");
	assert_string_not_equal(v, t);
	/* equal: a lower bound is ">=", anything else never ">" */
	assert_string_equal(cli_exceeds(0.15, 0.15, 1, 6, v, t), ">=");
	assert_string_equal(v, "0.15");
	assert_string_equal(t, "0.15");
	assert_string_equal(cli_exceeds(0.15, 0.15, 0, 6, v, t), "<=");
	assert_string_equal(cli_exceeds(0.1, 0.15, 0, 6, v, t), "<=");
}

/* print_show's text through a temporary file as stdout */
static char *show_text(json_t *c, int row)
{
	char p[] = "/tmp/sl-clitext-XXXXXX";
	int fd = mkstemp(p);
	assert_true(fd >= 0);
	fflush(stdout);
	int saved = dup(1);
	dup2(fd, 1);
	if (row)
		print_row(c);
	else
		print_show(c);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	off_t n = lseek(fd, 0, SEEK_END);
	char *b = calloc(1, (size_t)n + 1);
	assert_non_null(b);
	assert_int_equal(pread(fd, b, (size_t)n, 0), n);
	close(fd);
	unlink(p);
	return b;
}

static void test_show_psi_trigger(void **state)
{
	(void)state;
	json_t *c = json_pack("{s:s,s:s,s:s,s:{s:s,s:s,s:s,s:s,s:f,s:f,s:f,s:s,s:s}}", "id", "c-1", "time", "t",
			      "status", "done", "reason", "detector", "mempsi", "series", "memory_psi", "method",
			      "trigger", "source", "psi_trigger", "value", 0.15, "threshold", 0.15, "reading", 0.12,
			      "threshold_source", "config", "value_is", "lower bound");
	char *s = show_text(c, 0);
	assert_non_null(strstr(s, "value 0.15 >= threshold 0.15"));
	assert_null(strstr(s, "0.15 > threshold"));
	free(s);
	/* method and source the same word: said once */
	json_object_set_new(json_object_get(c, "reason"), "method", json_string("psi_trigger"));
	json_object_set_new(c, "time", json_string("2026-12-05T10:03:22.123456789Z"));
	s = show_text(c, 0);
	assert_non_null(strstr(s, "on memory_psi (psi_trigger)"));
	assert_null(strstr(s, "psi_trigger, psi_trigger"));
	free(s);
	/* the list row: the trigger's bound, then the avg10 read, named as
	 * such (not "0.12, >= 0.15" that reads as a claim about 0.12); the
	 * time is not cut */
	s = show_text(c, 1);
	assert_non_null(strstr(s, "memory_psi >= 0.15 (psi_trigger; avg10 0.12)"));
	assert_non_null(strstr(s, "2026-12-05T10:03:22.123456789Z"));
	free(s);
	json_object_set_new(json_object_get(c, "reason"), "method", json_string("trigger"));
	/* a detector's value just above its threshold */
	json_t *r = json_object_get(c, "reason");
	json_object_set_new(r, "source", json_string("stats"));
	json_object_del(r, "value_is");
	json_object_del(r, "reading");
	json_object_set_new(r, "value", json_real(0.1500001));
	s = show_text(c, 0);
	assert_non_null(strstr(s, "value 0.1500001 > threshold 0.15"));
	free(s);
	s = show_text(c, 1);
	assert_non_null(strstr(s, "memory_psi 0.1500001 > 0.15 (stats)"));
	free(s);
	json_decref(c);
}

/* a non-admin's record (sl_auto_redact): each withheld field says so */
static void test_withheld(void **state)
{
	(void)state;
	json_t *c = json_pack("{s:s,s:s,s:s,s:{s:s,s:f,s:f},s:{s:{s:s,s:b}},s:{s:s,s:b},"
			      "s:{s:i,s:[{s:i,s:i,s:s,s:s,s:b}],s:[{s:i,s:b}]}}",
			      "id", "c-3", "time", "t", "status", "done", "reason", "detector", "cpu", "value", 0.9,
			      "threshold", 0.5, "profiles", "on_cpu", "status", "done", "top_functions_withheld", 1,
			      "baseline", "status", "ok", "top_regressions_withheld", 1, "snapshot", "processes_total", 1,
			      "dstate_tasks", "pid", 5, "tid", 5, "comm", "x", "wchan", "io_schedule", "stack_withheld", 1,
			      "open_files", "fds", 8, "path_withheld", 1);
	assert_non_null(c);
	char *s = show_text(c, 0);
	assert_non_null(strstr(s, "(functions withheld: needs root or api.admin_group)"));
	assert_non_null(strstr(s, "wchan io_schedule (stack withheld: needs root or api.admin_group)"));
	assert_non_null(strstr(s, "file       (path withheld: needs root or api.admin_group) (8 fds)"));
	assert_null(strstr(s, "file       - "));
	free(s);
	json_decref(c);
}

static void test_long_symbol(void **state)
{
	(void)state;
	size_t n = 100 * 1024;
	char *name = malloc(n + 1);
	assert_non_null(name);
	memset(name, 'x', n);
	memcpy(name, "std::vector<", 12);
	name[n] = 0;
	json_t *c = json_pack("{s:s,s:s,s:s,s:{s:s,s:f,s:f},s:{s:{s:s,s:[{s:s,s:i}]}}}", "id", "c-2", "time", "t",
			      "status", "done", "reason", "detector", "cpu", "value", 0.9, "threshold", 0.5,
			      "profiles", "on_cpu", "status", "done", "top_functions", "function", name, "count", 7);
	char *s = show_text(c, 0);
	assert_true(strlen(s) < 4096);
	char *at = strstr(s, "std::vector<");
	assert_non_null(at);
	char *mark = strstr(at, "\xe2\x80\xa6");
	assert_non_null(mark);
	assert_int_equal(mark - at, CLI_SYM_MAX - 1); /* ASCII: code points = bytes */
	free(s);
	s = show_text(c, 1);
	assert_true(strlen(s) < 1024);
	assert_non_null(strstr(s, "\xe2\x80\xa6"));
	free(s);
	/* a short name stays whole; multibyte names are cut on a code point */
	assert_string_equal(cli_esc_sym("main"), "main");
	char u[3 * 200 + 1] = "";
	for (int i = 0; i < 200; i++)
		strcat(u, "\xc3\xa9"); /* é: 2 bytes */
	const char *e = cli_esc_sym(u);
	assert_int_equal(strlen(e), (CLI_SYM_MAX - 1) * 2 + 3);
	/* the JSON output is not cut */
	char *js = json_dumps(c, JSON_COMPACT);
	assert_non_null(strstr(js, name));
	free(js);
	free(name);
	json_decref(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exceeds),
		cmocka_unit_test(test_show_psi_trigger),
		cmocka_unit_test(test_long_symbol),
		cmocka_unit_test(test_withheld),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
