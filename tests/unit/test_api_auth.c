/* API access control policy (src/api/api_auth.c, api_conn.c's budget,
 * api_params.c / api_events.c UTF-8 handling): pure functions. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/api_auth.h"
#include "api/api_internal.h"

static const struct sl_api_caller tcp_anon = {.unix_peer = 0, .uid = (uid_t)-1};
static const struct sl_api_caller tcp_token = {.unix_peer = 0, .uid = (uid_t)-1, .token_ok = 1};
static const struct sl_api_caller unix_root = {.unix_peer = 1, .uid = 0};
static const struct sl_api_caller unix_user = {.unix_peer = 1, .uid = 1000};
static const struct sl_api_caller unix_group = {.unix_peer = 1, .uid = 1000, .in_admin_group = 1};
/* uid 0 claimed without peer credentials (TCP): not an admin */
static const struct sl_api_caller tcp_uid0 = {.unix_peer = 0, .uid = 0};

static void test_is_admin(void **state)
{
	(void)state;
	assert_false(sl_api_caller_is_admin(NULL));
	assert_false(sl_api_caller_is_admin(&tcp_anon));
	assert_false(sl_api_caller_is_admin(&tcp_uid0));
	assert_false(sl_api_caller_is_admin(&unix_user));
	assert_true(sl_api_caller_is_admin(&tcp_token));
	assert_true(sl_api_caller_is_admin(&unix_root));
	assert_true(sl_api_caller_is_admin(&unix_group));
}

static void test_cap_syslog(void **state)
{
	(void)state;
	assert_false(sl_api_caller_cap_syslog(NULL));
	assert_true(sl_api_caller_cap_syslog(&unix_root));
	assert_true(sl_api_caller_cap_syslog(&tcp_token));
	assert_false(sl_api_caller_cap_syslog(&unix_group)); /* admin, but not root */
	assert_false(sl_api_caller_cap_syslog(&unix_user));
	assert_false(sl_api_caller_cap_syslog(&tcp_anon));
	assert_false(sl_api_caller_cap_syslog(&tcp_uid0)); /* uid 0 without peer credentials */
}

static void test_route_access(void **state)
{
	(void)state;
	static const struct {
		const char *method, *url;
		enum sl_api_access want;
	} cases[] = {
		{"GET", "/healthz", SL_ACCESS_PUBLIC},
		{"HEAD", "/healthz", SL_ACCESS_PUBLIC},
		{"GET", "/metrics", SL_ACCESS_PUBLIC},
		{"GET", "/api/v1/containers", SL_ACCESS_PUBLIC},
		{"GET", "/api/v1/sched", SL_ACCESS_PUBLIC},
		{"GET", "/api/v1/workloads", SL_ACCESS_PUBLIC},
		{"GET", "/api/v1/workloads/abc/stats", SL_ACCESS_PUBLIC},
		{"GET", "/api/v1/capabilities", SL_ACCESS_PUBLIC},
		{"GET", "/nope", SL_ACCESS_PUBLIC},
		{"GET", "/api/v1/events", SL_ACCESS_REDACTED},
		{"HEAD", "/api/v1/events", SL_ACCESS_REDACTED},
		{"GET", "/api/v1/tasks", SL_ACCESS_ADMIN},
		{"GET", "/api/v1/tasks/abc", SL_ACCESS_ADMIN},
		{"GET", "/api/v1/tasks/abc/result", SL_ACCESS_ADMIN},
		{"HEAD", "/api/v1/tasks/abc/result", SL_ACCESS_ADMIN},
		{"GET", "/api/v1/tasks/", SL_ACCESS_ADMIN},
		{"POST", "/api/v1/tasks", SL_ACCESS_ADMIN},
		{"DELETE", "/api/v1/tasks/abc", SL_ACCESS_ADMIN},
		{"POST", "/healthz", SL_ACCESS_ADMIN},
		{"PUT", "/api/v1/events", SL_ACCESS_ADMIN},
		{"get", "/healthz", SL_ACCESS_ADMIN}, /* methods are case-sensitive */
		{"GET", "/api/v1/tasksx", SL_ACCESS_PUBLIC}, /* not a task route: a 404 */
		{NULL, "/healthz", SL_ACCESS_ADMIN},
		/* the MCP route: open; its tools' API requests get these rules */
		{"POST", "/mcp", SL_ACCESS_PUBLIC},
		{"GET", "/mcp", SL_ACCESS_PUBLIC},
		{"POST", "/mcp/", SL_ACCESS_ADMIN},
		{"POST", "/mcpx", SL_ACCESS_ADMIN},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum sl_api_access got = sl_api_route_access(cases[i].method, cases[i].url);
		if (got != cases[i].want)
			fail_msg("%s %s: got %d, want %d", cases[i].method, cases[i].url, got,
				 cases[i].want);
	}
}

static void test_withhold(void **state)
{
	(void)state;
	json_t *evs = json_loads("[{\"id\":1,\"type\":\"exec\",\"filename\":\"/bin/x\",\"argv\":[\"x\",\"--password=1\"]},"
				 "{\"id\":2,\"type\":\"exit\",\"exit_code\":0},"
				 "{\"id\":3,\"type\":\"exec\",\"argv\":[]}, 7]",
				 0, NULL);
	assert_non_null(evs);
	assert_int_equal(sl_api_withhold_secrets(evs), 2);
	char *s = json_dumps(evs, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s, "[{\"argv_withheld\":true,\"filename\":\"/bin/x\",\"id\":1,\"type\":\"exec\"},"
			       "{\"exit_code\":0,\"id\":2,\"type\":\"exit\"},"
			       "{\"argv_withheld\":true,\"id\":3,\"type\":\"exec\"},7]");
	free(s);
	assert_int_equal(sl_api_withhold_secrets(evs), 0);
	json_decref(evs);
	assert_int_equal(sl_api_withhold_secrets(NULL), 0);
}

static void test_bearer(void **state)
{
	(void)state;
	const char *tok = "0123456789abcdef0123";
	size_t tl = strlen(tok);
	assert_true(sl_api_bearer_matches("Bearer 0123456789abcdef0123", tok, tl));
	assert_true(sl_api_bearer_matches("bearer   0123456789abcdef0123", tok, tl));
	assert_true(sl_api_bearer_matches("BEARER 0123456789abcdef0123 ", tok, tl));
	assert_false(sl_api_bearer_matches(NULL, tok, tl));
	assert_false(sl_api_bearer_matches("", tok, tl));
	assert_false(sl_api_bearer_matches("Bearer", tok, tl));
	assert_false(sl_api_bearer_matches("Bearer ", tok, tl));
	assert_false(sl_api_bearer_matches("Basic 0123456789abcdef0123", tok, tl));
	assert_false(sl_api_bearer_matches("Bearer 0123456789abcdef012", tok, tl));   /* prefix */
	assert_false(sl_api_bearer_matches("Bearer 0123456789abcdef01234", tok, tl)); /* longer */
	assert_false(sl_api_bearer_matches("Bearer 0123456789abcdef0124", tok, tl));  /* last byte */
	assert_false(sl_api_bearer_matches("Bearer 1123456789abcdef0123", tok, tl));  /* first byte */
	assert_false(sl_api_bearer_matches("Bearer x", "", 0)); /* no token: never */
	assert_false(sl_api_bearer_matches("Bearer ", "", 0));
}

static void test_token_stat(void **state)
{
	(void)state;
	char err[200];
	struct stat st = {.st_mode = S_IFREG | 0600, .st_uid = 0, .st_size = 65};
	assert_int_equal(sl_api_token_stat_ok(&st, err, sizeof(err)), 0);
	st.st_mode = S_IFREG | 0400;
	assert_int_equal(sl_api_token_stat_ok(&st, err, sizeof(err)), 0);
	st.st_mode = S_IFREG | 0640;
	assert_int_equal(sl_api_token_stat_ok(&st, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "0640"));
	st.st_mode = S_IFREG | 0604;
	assert_int_equal(sl_api_token_stat_ok(&st, err, sizeof(err)), -EPERM);
	st.st_mode = S_IFREG | 0610;
	assert_int_equal(sl_api_token_stat_ok(&st, err, sizeof(err)), -EPERM);
	st.st_mode = S_IFIFO | 0600;
	assert_int_equal(sl_api_token_stat_ok(&st, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "regular"));
	st.st_mode = S_IFREG | 0600;
	st.st_uid = 1000;
	assert_int_equal(sl_api_token_stat_ok(&st, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "root"));
	st.st_uid = 0;
	st.st_size = 1 << 20;
	assert_int_equal(sl_api_token_stat_ok(&st, err, sizeof(err)), -EPERM);
}

static void test_token_parse(void **state)
{
	(void)state;
	char tok[SL_API_TOKEN_MAX + 1], err[200];
	assert_int_equal(sl_api_token_parse("  abcdefghijklmnop\n", 19, tok, sizeof(tok), err, sizeof(err)), 16);
	assert_string_equal(tok, "abcdefghijklmnop");
	assert_int_equal(sl_api_token_parse("abcdefghijklmno", 15, tok, sizeof(tok), err, sizeof(err)), -EINVAL);
	assert_int_equal(sl_api_token_parse("abcdefgh ijklmnopq", 18, tok, sizeof(tok), err, sizeof(err)), -EINVAL);
	assert_int_equal(sl_api_token_parse("abcdefgh\x01ijklmnopq", 18, tok, sizeof(tok), err, sizeof(err)), -EINVAL);
	assert_int_equal(sl_api_token_parse("abcdefgh\xc3\xa9ijklmnopq", 19, tok, sizeof(tok), err, sizeof(err)), -EINVAL);
	assert_int_equal(sl_api_token_parse("\n\n", 2, tok, sizeof(tok), err, sizeof(err)), -EINVAL);
	char big[300];
	memset(big, 'a', sizeof(big));
	assert_int_equal(sl_api_token_parse(big, SL_API_TOKEN_MAX, tok, sizeof(tok), err, sizeof(err)), SL_API_TOKEN_MAX);
	assert_int_equal(sl_api_token_parse(big, SL_API_TOKEN_MAX + 1, tok, sizeof(tok), err, sizeof(err)), -EINVAL);
}

/* I/O, in a private temp directory: generate when missing, then read back;
 * a file we did not make with a bad mode is refused. Needs root (the
 * token file and its directory must be owned by root). */
static void test_token_load(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	char dir[] = "/tmp/sl-token-XXXXXX", path[128], tok[SL_API_TOKEN_MAX + 1], tok2[SL_API_TOKEN_MAX + 1],
	     err[300];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sub/api.token", dir);
	assert_int_equal(sl_api_token_load(path, 0, tok, sizeof(tok), err, sizeof(err)), 0); /* missing, no create */
	assert_int_equal(sl_api_token_load(path, 1, tok, sizeof(tok), err, sizeof(err)), 64);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(strspn(tok, "0123456789abcdef"), 64);
	assert_int_equal(sl_api_token_load(path, 1, tok2, sizeof(tok2), err, sizeof(err)), 64);
	assert_string_equal(tok, tok2); /* kept, not regenerated */
	assert_int_equal(chmod(path, 0644), 0);
	assert_true(sl_api_token_load(path, 1, tok2, sizeof(tok2), err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "api.token_file"));
	/* a directory others may write to: no token is generated there */
	char path2[128], sub[64];
	snprintf(sub, sizeof(sub), "%s/open", dir);
	assert_int_equal(mkdir(sub, 0777), 0);
	assert_int_equal(chmod(sub, 0777), 0);
	snprintf(path2, sizeof(path2), "%s/api.token", sub);
	assert_true(sl_api_token_load(path2, 1, tok2, sizeof(tok2), err, sizeof(err)) < 0);
	assert_int_equal(access(path2, F_OK), -1);
	unlink(path);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/open", dir);
	rmdir(sub);
	rmdir(dir);
}

static void test_budget(void **state)
{
	(void)state;
	assert_true(sl_api_client_budget_ok(0, 16, 0));
	assert_true(sl_api_client_budget_ok(15, 16, 0));
	assert_false(sl_api_client_budget_ok(16, 16, 0));
	assert_false(sl_api_client_budget_ok(100, 16, 0));
	assert_true(sl_api_client_budget_ok(100, 16, 1)); /* root */
	assert_false(sl_api_client_budget_ok(1, 1, 0));
}

static void test_utf8(void **state)
{
	(void)state;
	struct sl_api_params ps;
	char err[256];
	memset(&ps, 0, sizeof(ps));
	assert_int_equal(sl_api_params_add(&ps, "container", 9, "\xff\xfe", 2), -EINVAL);
	assert_int_equal(sl_api_params_check(&ps, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "container: value is not valid UTF-8");
	memset(&ps, 0, sizeof(ps));
	assert_int_equal(sl_api_params_add(&ps, "a\xc0\xaf", 3, "1", 1), -EINVAL); /* overlong '/' */
	assert_int_equal(sl_api_params_check(&ps, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "parameter 'a%C0%AF': name is not valid UTF-8");
	memset(&ps, 0, sizeof(ps));
	assert_int_equal(sl_api_params_add(&ps, "k", 1, "\xc3\xa9t\xc3\xa9", 5), 0);
	assert_int_equal(sl_api_params_check(&ps, err, sizeof(err)), 0);

	/* an error message quoting raw bytes still makes a JSON body */
	size_t len = 0;
	char *b = sl_api_error_body("NOT_FOUND", "no route for /api/v1/\xff\xfe", &len);
	assert_non_null(b);
	assert_string_equal(b, "{\"error\":{\"code\":\"NOT_FOUND\",\"message\":\"no route for /api/v1/\\\\xFF\\\\xFE\"}}");
	assert_int_equal(len, strlen(b));
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_is_admin),   cmocka_unit_test(test_cap_syslog),
		cmocka_unit_test(test_route_access), cmocka_unit_test(test_withhold),
		cmocka_unit_test(test_bearer),     cmocka_unit_test(test_token_stat),
		cmocka_unit_test(test_token_parse), cmocka_unit_test(test_token_load),
		cmocka_unit_test(test_budget),     cmocka_unit_test(test_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
