/* Task routes of the API (src/api/api_tasks.c, docs/API.md "Tasks"): their
 * query parameters. A real task executor (no BPF is loaded: the tasks used
 * here are records seeded into its store, as an earlier agent leaves them)
 * behind the API on 127.0.0.1 (port 0), queried with libcurl. Each route
 * takes exactly its documented parameters (result: format; the others
 * none), each at most once, with no NUL byte (%00): anything else is a 400
 * INVALID_ARGUMENT naming the parameter, and does nothing (a DELETE with a
 * typo deletes nothing, a POST with one creates nothing). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>

#include "agent/agent.h"
#include "api/api.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "task/task.h"
#include "task/task_store.h"

static struct sl_agent g_agent;
static struct sl_api *g_api;
static char g_dir[64];
static char g_db[128];
static int g_port;

#define SVG "<svg xmlns=\"http://www.w3.org/2000/svg\"/>"
#define JSON_RESULT "{\"kind\":\"on_cpu\",\"total_count\":0}"

/* A finished on-CPU profile with its json and svg results, written to the
 * executor's store through a second connection. */
static void seed(const char *id)
{
	char err[256];
	struct sl_task_store *s = sl_task_store_open(g_db, err, sizeof(err));
	if (!s)
		fail_msg("task store: %s", err);
	int64_t now = sl_time_now_ns();
	json_t *rec = json_pack("{s:s,s:s,s:s,s:{s:s},s:f}", "id", id, "type", "profile_on_cpu",
				"status", "done", "target", "container", "c0ffee", "duration_s",
				1.0);
	assert_int_equal(sl_task_store_put(s, id, now - 2000000000LL, now - 1000000000LL, "done",
					   rec),
			 0);
	json_decref(rec);
	assert_int_equal(sl_task_store_put_result(s, id, "json", JSON_RESULT, strlen(JSON_RESULT)),
			 0);
	assert_int_equal(sl_task_store_put_result(s, id, "svg", SVG, strlen(SVG)), 0);
	sl_task_store_close(s);
}

#define TOKEN "tasks-test-token-0123456789"
#define AUTH_HEADER "Authorization: Bearer " TOKEN

static int setup(void **state)
{
	(void)state;
	char err[256];
	sl_log_set_level(SL_LOG_WARN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	strcpy(g_dir, "/tmp/sl-api-tasks-test.XXXXXX");
	if (!mkdtemp(g_dir))
		return -1;
	snprintf(g_db, sizeof(g_db), "%s/tasks.db", g_dir);
	struct sl_tasks_config tc = {.max_concurrent = 2, .no_probe_load = 1, .v1_subsys_id = -1};
	tc.lim = (struct sl_task_limits){.max_duration_ns = 60000000000ull,
					 .default_duration_ns = 1000000000ull,
					 .default_hz = 99,
					 .max_hz = 999,
					 .default_min_off_cpu_ns = 0};
	snprintf(tc.db_path, sizeof(tc.db_path), "%s", g_db);
	g_agent.tasks = sl_tasks_new(&tc, err, sizeof(err));
	if (!g_agent.tasks) {
		fprintf(stderr, "tasks: %s\n", err);
		return -1;
	}
	snprintf(g_agent.cfg.api.listen, sizeof(g_agent.cfg.api.listen), "127.0.0.1:0");
	g_agent.cfg.api.threads = 2;
	g_agent.cfg.api.admin_gid = (gid_t)-1;
	/* task routes are admin-only: every request carries the bearer token */
	snprintf(g_agent.cfg.api.token_file, sizeof(g_agent.cfg.api.token_file), "%s/api.token", g_dir);
	int tfd = open(g_agent.cfg.api.token_file, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (tfd < 0 || write(tfd, TOKEN, strlen(TOKEN)) != (ssize_t)strlen(TOKEN) || close(tfd))
		return -1;
	g_agent.cfg.tasks.max_duration_s = 60;
	g_agent.cfg.tasks.default_duration_s = 1;
	g_agent.cfg.tasks.default_hz = 99;
	g_agent.cfg.tasks.max_hz = 999;
	g_api = sl_api_start(&g_agent, err, sizeof(err));
	if (!g_api) {
		fprintf(stderr, "api: %s\n", err);
		return -1;
	}
	g_port = sl_api_tcp_port(g_api);
	return g_port > 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char path[160];
	sl_api_stop(g_api);
	sl_tasks_free(g_agent.tasks);
	static const char *const files[] = {"tasks.db", "tasks.db-wal", "tasks.db-shm",
					    "tasks.db-journal"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", g_dir, files[i]);
		unlink(path);
	}
	rmdir(g_dir);
	curl_global_cleanup();
	return 0;
}

/* ---- HTTP client ---- */

struct http {
	long status;
	char *body;
	size_t len;
	char ctype[128];
};

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	struct http *h = ud;
	char *nb = realloc(h->body, h->len + sz * n + 1);
	if (!nb)
		return 0;
	h->body = nb;
	memcpy(h->body + h->len, p, sz * n);
	h->len += sz * n;
	h->body[h->len] = '\0';
	return sz * n;
}

/* path includes the query string; body (POST) may be NULL. */
static void req(const char *method, const char *path, const char *body, struct http *h)
{
	char url[1024];
	memset(h, 0, sizeof(*h));
	CURL *c = curl_easy_init();
	assert_non_null(c);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", g_port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	if (!strcmp(method, "HEAD"))
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	else if (strcmp(method, "GET"))
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	struct curl_slist *hdrs = curl_slist_append(NULL, AUTH_HEADER);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	CURLcode rc = curl_easy_perform(c);
	curl_slist_free_all(hdrs);
	if (rc != CURLE_OK)
		fail_msg("%s %s: %s", method, path, curl_easy_strerror(rc));
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &h->status);
	char *ct = NULL;
	curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
	snprintf(h->ctype, sizeof(h->ctype), "%s", ct ? ct : "");
	curl_easy_cleanup(c);
}

/* A 400 INVALID_ARGUMENT whose JSON error message contains needle. */
static void check_400(const char *method, const char *path, const char *body, const char *needle)
{
	struct http h;
	req(method, path, body, &h);
	if (h.status != 400)
		fail_msg("%s %s: status %ld want 400; body %s", method, path, h.status,
			 h.body ? h.body : "");
	assert_string_equal(h.ctype, "application/json");
	json_error_t je;
	json_t *o = json_loadb(h.body ? h.body : "", h.len, 0, &je);
	if (!o)
		fail_msg("%s %s: error body not JSON: %s", method, path, h.body ? h.body : "");
	json_t *e = json_object_get(o, "error");
	assert_string_equal(json_string_value(json_object_get(e, "code")), "INVALID_ARGUMENT");
	const char *msg = json_string_value(json_object_get(e, "message"));
	if (!msg || !strstr(msg, needle))
		fail_msg("%s %s: message '%s' lacks '%s'", method, path, msg ? msg : "", needle);
	json_decref(o);
	free(h.body);
}

static long status_of(const char *method, const char *path)
{
	struct http h;
	req(method, path, NULL, &h);
	free(h.body);
	return h.status;
}

static size_t task_count(void)
{
	struct http h;
	req("GET", "/api/v1/tasks", NULL, &h);
	assert_int_equal(h.status, 200);
	json_t *o = json_loadb(h.body, h.len, 0, NULL);
	assert_non_null(o);
	size_t n = json_array_size(json_object_get(o, "tasks"));
	json_decref(o);
	free(h.body);
	return n;
}

/* ---- tests ---- */

/* Without parameters every route answers as documented. */
static void test_plain_routes(void **state)
{
	(void)state;
	seed("plain-1");
	assert_int_equal(status_of("GET", "/api/v1/capabilities"), 200);
	assert_int_equal(status_of("GET", "/api/v1/tasks"), 200);
	assert_int_equal(status_of("GET", "/api/v1/tasks/plain-1"), 200);
	assert_int_equal(status_of("HEAD", "/api/v1/tasks/plain-1"), 200);

	struct http h;
	req("GET", "/api/v1/tasks/plain-1/result", NULL, &h);
	assert_int_equal(h.status, 200);
	assert_string_equal(h.body, JSON_RESULT);
	free(h.body);
	req("GET", "/api/v1/tasks/plain-1/result?format=svg", NULL, &h);
	assert_int_equal(h.status, 200);
	assert_string_equal(h.ctype, "image/svg+xml");
	assert_string_equal(h.body, SVG);
	free(h.body);
	req("GET", "/api/v1/tasks/plain-1/result?format=json", NULL, &h);
	assert_int_equal(h.status, 200);
	assert_string_equal(h.body, JSON_RESULT);
	free(h.body);

	assert_int_equal(status_of("DELETE", "/api/v1/tasks/plain-1"), 200);
	assert_int_equal(status_of("GET", "/api/v1/tasks/plain-1"), 404);
	/* the method is checked before the parameters */
	assert_int_equal(status_of("PUT", "/api/v1/tasks?x=1"), 405);
	assert_int_equal(status_of("POST", "/api/v1/tasks/abc/result?x=1"), 405);
}

/* Every task route: an unknown parameter, and a repeated one. */
static void test_unknown_and_repeated(void **state)
{
	(void)state;
	seed("params-1");
	check_400("GET", "/api/v1/capabilities?bogus=1", NULL, "unknown parameter 'bogus'");
	check_400("GET", "/api/v1/capabilities?bogus=1&bogus=1", NULL, "bogus");
	assert_int_equal(status_of("HEAD", "/api/v1/capabilities?x"), 400);
	check_400("GET", "/api/v1/tasks?x=1", NULL, "unknown parameter 'x'");
	check_400("GET", "/api/v1/tasks?status=done&status=done", NULL, "status");
	check_400("GET", "/api/v1/tasks/params-1?verbose=1", NULL, "unknown parameter 'verbose'");
	check_400("GET", "/api/v1/tasks/params-1?x&x", NULL, "'x'");
	check_400("GET", "/api/v1/tasks/params-1/result?fromat=svg", NULL,
		  "unknown parameter 'fromat'");
	check_400("GET", "/api/v1/tasks/params-1/result?format=svg&x=1", NULL,
		  "unknown parameter 'x'");
	check_400("GET", "/api/v1/tasks/params-1/result?format=svg&format=json", NULL,
		  "format: given more than once");
	check_400("GET", "/api/v1/tasks/params-1/result?format=json&format=json", NULL,
		  "format: given more than once");
	check_400("GET", "/api/v1/tasks/params-1/result?format=", NULL, "format: empty value");
	check_400("GET", "/api/v1/tasks/params-1/result?format", NULL, "format: empty value");
	/* a task that does not exist: still the parameter's 400 first */
	check_400("GET", "/api/v1/tasks/nosuch/result?format=svg&format=svg", NULL, "format");
	check_400("DELETE", "/api/v1/tasks/params-1?junk=1", NULL, "unknown parameter 'junk'");
	check_400("DELETE", "/api/v1/tasks/params-1?junk=1&junk=1", NULL, "junk");
	/* none of this deleted anything */
	assert_int_equal(status_of("GET", "/api/v1/tasks/params-1"), 200);
	assert_int_equal(status_of("GET", "/api/v1/tasks/params-1/result?format=svg"), 200);

	/* POST: everything is in the body; a query parameter creates nothing */
	size_t before = task_count();
	check_400("POST", "/api/v1/tasks?follow=true",
		  "{\"type\":\"trace_syscall_errors\",\"target\":{\"pid\":1},\"duration_s\":1}",
		  "unknown parameter 'follow'");
	check_400("POST", "/api/v1/tasks?a=1&a=1", "{}", "'a'");
	assert_int_equal(task_count(), before);
	assert_int_equal(sl_tasks_active(g_agent.tasks), 0);

	assert_int_equal(status_of("DELETE", "/api/v1/tasks/params-1"), 200);
}

/* A NUL byte (%00) in a key or value on every task route. */
static void test_nul(void **state)
{
	(void)state;
	seed("nul-1");
	check_400("GET", "/api/v1/capabilities?a%00=1", NULL, "parameter 'a%00'");
	check_400("GET", "/api/v1/tasks?%00", NULL, "parameter '%00'");
	check_400("GET", "/api/v1/tasks/nul-1?x=%00", NULL, "x: value contains a NUL byte");
	check_400("GET", "/api/v1/tasks/nul-1/result?format=svg%00", NULL,
		  "format: value contains a NUL byte");
	check_400("GET", "/api/v1/tasks/nul-1/result?format=json%00xyz", NULL,
		  "format: value contains a NUL byte");
	check_400("GET", "/api/v1/tasks/nul-1/result?format%00x=svg", NULL,
		  "parameter 'format%00x': name contains a NUL byte");
	check_400("DELETE", "/api/v1/tasks/nul-1?%00=1", NULL, "NUL byte");
	check_400("POST", "/api/v1/tasks?x=%00", "{}", "x: value contains a NUL byte");
	assert_int_equal(status_of("GET", "/api/v1/tasks/nul-1"), 200);
	assert_int_equal(status_of("DELETE", "/api/v1/tasks/nul-1"), 200);
}

static void get_on(CURL *c, const char *path, long want)
{
	char url[512];
	long status = 0;
	struct http h = {0};
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", g_port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	CURLcode rc = curl_easy_perform(c);
	if (rc != CURLE_OK)
		fail_msg("GET %s: %s", path, curl_easy_strerror(rc));
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status != want)
		fail_msg("GET %s: status %ld want %ld; body %s", path, status, want,
			 h.body ? h.body : "");
	free(h.body);
}

/* A NUL byte in the path: microhttpd's url stops at it, so
 * "/api/v1/tasks/ID%00/result" would be the task itself (DELETE would
 * delete it). 404, nothing done; the next request (on the same connection
 * if it is kept alive) is not affected. */
static void test_nul_in_path(void **state)
{
	(void)state;
	seed("path-1");
	struct http h;
	req("DELETE", "/api/v1/tasks/path-1%00/result", NULL, &h);
	assert_int_equal(h.status, 404);
	assert_non_null(strstr(h.body, "NUL byte"));
	free(h.body);
	assert_int_equal(status_of("DELETE", "/api/v1/tasks/path-1%00"), 404);
	assert_int_equal(status_of("GET", "/api/v1/tasks%00/path-1"), 404);
	assert_int_equal(status_of("POST", "/api/v1/tasks%00"), 404);
	assert_int_equal(status_of("GET", "/api/v1/tasks/path-1"), 200);

	/* one handle: the connection is reused when microhttpd keeps it alive
	 * (0.9.75 closes after each of these answers) */
	CURL *c = curl_easy_init();
	assert_non_null(c);
	struct curl_slist *auth = curl_slist_append(NULL, AUTH_HEADER);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, auth);
	get_on(c, "/api/v1/tasks/path-1%00", 404);
	get_on(c, "/api/v1/tasks/path-1", 200);
	get_on(c, "/api/v1/tasks/path-1?x=%00", 400);
	get_on(c, "/api/v1/tasks/path-1/result?format=svg", 200);
	curl_easy_cleanup(c);
	curl_slist_free_all(auth);
	assert_int_equal(status_of("DELETE", "/api/v1/tasks/path-1"), 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_routes),
		cmocka_unit_test(test_unknown_and_repeated),
		cmocka_unit_test(test_nul),
		cmocka_unit_test(test_nul_in_path),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
