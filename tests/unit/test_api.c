/* In-process API test: a real store on a temp file, the API on 127.0.0.1
 * (port 0) and on a unix socket in a mkdtemp directory, queried with
 * libcurl over both. the read interface (src/agent/read.h) is
 * test doubles here (the real ones need a running agent), so health status
 * and metrics size are under the test's control. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>
#include <stdatomic.h>
#include <zlib.h>

#include "agent/agent.h"
#include "agent/read.h"
#include "common/prom.h"
#include "modules/proc.h" /* the kinds of a real module: exec argv is SL_FF_ADMIN */
#include "api/api.h"
#include "api/api_ui.h"
#include "common/detail.h"
#include "common/gzpart.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "stats/stats.h"
#include "store/store.h"

/* ---- test doubles for the agent's read side ---- */

static const char *volatile g_status = "ok";
static volatile int g_metric_lines = 3;

static struct sl_agent g_agent;

/* the read interface (src/agent/read.h), over g_agent and a test view */
json_t *sl_read_health(struct sl_agent *a)
{
	(void)a;
	return json_pack("{s:s,s:[{s:s,s:s,s:[]}]}", "status", g_status, "modules", "name", "proc",
			 "state", strcmp(g_status, "ok") ? "failed" : "running", "hooks");
}

static void stub_write_metrics(struct sl_agent *a, FILE *out)
{
	(void)a;
	fprintf(out, "# TYPE sandlens_test_total counter\n");
	for (int i = 0; i < g_metric_lines; i++)
		fprintf(out, "sandlens_test_total{n=\"%d\"} %d\n", i, i);
}

/* The container families the stub agent serves (NULL: statistics off). */
static struct sl_stats_prom *g_prom;

struct sl_stats_prom *sl_agent_stats_prom(struct sl_agent *a)
{
	(void)a;
	if (g_prom)
		atomic_fetch_add(&g_prom->refs, 1);
	return g_prom;
}

const struct sl_config *sl_read_config(struct sl_agent *a) { return &a->cfg; }
struct sl_store *sl_read_store(struct sl_agent *a) { return a->store; }
struct sl_stats *sl_read_stats(struct sl_agent *a) { return a->stats; }
struct sl_tasks *sl_read_tasks(struct sl_agent *a) { return a->tasks; }
struct sl_cprof *sl_read_cprof(struct sl_agent *a) { (void)a; return NULL; }
struct sl_auto *sl_read_auto(struct sl_agent *a) { (void)a; return NULL; }
const struct sl_cg_mounts *sl_read_cg_mounts(struct sl_agent *a) { return &a->mounts; }
struct sl_stats_prom *sl_read_stats_prom(struct sl_agent *a) { return sl_agent_stats_prom(a); }
void sl_read_metrics(struct sl_agent *a, struct sl_prom *p) { stub_write_metrics(a, sl_prom_stream(p)); }
void sl_read_metrics_refused(struct sl_prom *p) { (void)p; }
int sl_read_refuse_tasks(struct sl_agent *a, char *err, size_t errlen)
{
	(void)a;
	(void)err;
	(void)errlen;
	return 0;
}
json_t *sl_read_schema(struct sl_agent *a) { return sl_kinds_schema_json(&a->kinds); }
size_t sl_read_withhold(struct sl_agent *a, json_t *ev) { return sl_kinds_withhold(&a->kinds, ev); }
size_t sl_read_kind_names(struct sl_agent *a, const char **names, size_t max)
{
	for (unsigned i = 0; i < a->kinds.n && i < max; i++)
		names[i] = a->kinds.e[i].k->name;
	return a->kinds.n;
}

/* one module "tv" (test view) with view "" (param "n") and admin view "/secret" */
static json_t *tv_get(struct sl_module *m, const struct sl_view_param *p, size_t n, unsigned *status, char *err,
		      size_t errlen)
{
	(void)m;
	(void)status;
	(void)err;
	(void)errlen;
	json_t *o = json_object();
	for (size_t i = 0; i < n; i++)
		json_object_set_new(o, p[i].name, json_string(p[i].value));
	return o;
}
static const struct sl_view_param_decl tv_params[] = {{"n", "a value echoed back"}};
static const struct sl_api_view tv_views[] = {{"", 0, tv_params, 1, tv_get, "echo"},
					      {"/secret", 1, NULL, 0, tv_get, "admin only"}};
static const struct sl_module_ops tv_ops = {.name = "tv", .views = tv_views, .nviews = 2};
static struct sl_module tv_mod = {.ops = &tv_ops, .enabled = 1};

int sl_read_view_find(struct sl_agent *a, const char *rest, struct sl_module **m, const struct sl_api_view **v)
{
	(void)a;
	for (unsigned i = 0; i < 2; i++) {
		char path[32];
		snprintf(path, sizeof(path), "tv%s", tv_views[i].path);
		if (!strcmp(rest, path) || (i == 0 && !strcmp(rest, "sched"))) {
			*m = &tv_mod;
			*v = &tv_views[i];
			return 0;
		}
	}
	return -ENOENT;
}

json_t *sl_read_view_get(struct sl_agent *a, struct sl_module *m, const struct sl_api_view *v,
			 const struct sl_view_param *p, size_t n, unsigned *status, char *err, size_t errlen)
{
	(void)a;
	*status = 200;
	return v->get(m, p, n, status, err, errlen);
}

json_t *sl_read_series(struct sl_agent *a, const char *module, const char *name, unsigned *status, char *err,
		       size_t errlen)
{
	(void)a;
	(void)name;
	*status = 404;
	snprintf(err, errlen, "module: no module '%s'", module);
	return NULL;
}

/* the history of series tv_x_seconds: two readings of container c0ffee01 */
json_t *sl_read_series_history(struct sl_agent *a, const char *module, const char *name, const char *container,
			       unsigned *status, char *err, size_t errlen)
{
	(void)a;
	if (strcmp(module, "tv") || strcmp(name, "tv_x_seconds")) {
		*status = 404;
		snprintf(err, errlen, "module: no module '%s'", module);
		return NULL;
	}
	*status = 200;
	json_t *cs = json_array();
	if (!container || !strncmp("c0ffee01", container, strlen(container)))
		json_array_append_new(cs, json_pack("{s:s,s:s,s:[{s:s,s:f},{s:s,s:f}]}", "container_id", "c0ffee01",
						    "pod_uid", "", "points", "time", "2024-05-01T12:00:00.000000000Z",
						    "value", 0.5, "time", "2024-05-01T12:00:01.000000000Z", "value",
						    0.25));
	return json_pack("{s:s,s:s,s:s,s:s,s:i,s:o}", "module", module, "name", name, "unit", "seconds", "doc", "d",
			 "points_max", 300, "containers", cs);
}

json_t *sl_read_series_list(struct sl_agent *a, const char *module, unsigned *status, char *err, size_t errlen)
{
	(void)a;
	if (module && strcmp(module, "tv")) {
		*status = 404;
		snprintf(err, errlen, "module: no module '%s'", module);
		return NULL;
	}
	*status = 200;
	return json_pack("{s:[{s:s,s:s,s:s,s:s}]}", "series", "module", "tv", "name", "tv_x_seconds", "unit",
			 "seconds", "doc", "d");
}

/* ---- fixture ---- */

#define NEV 5

static struct sl_api *g_api;
static struct sl_store *g_store;
static char g_dir[64];
static char g_sock[128];
static int g_port;
static int64_t g_t0;
/* the admin bearer token (api.token_file in g_dir); req() sends it unless
 * g_no_token */
static char g_token[80];
static int g_no_token;
static json_t *g_sent[NEV]; /* what was submitted, oldest first */

static json_t *make_event(int i)
{
	static const char *const types[NEV] = {"exec", "exit", "signal", "oom", "exec"};
	static const char *const cids[NEV] = {"c0ffee0123456789abcdef", "c0ffee0123456789abcdef",
					      "deadbeef99887766", "c0ffee0123456789abcdef", ""};
	static const char *const pods[NEV] = {"pod-a", "pod-a", "", "pod-a", ""};
	static const char *const rts[NEV] = {"containerd", "containerd", "docker", "containerd",
					     "host"};
	char t[SL_TIME_RFC3339_MAX];
	sl_time_format(g_t0 + (int64_t)(i + 1) * 1000000000LL + 7, t, sizeof(t));
	json_t *o = json_pack("{s:s,s:s,s:i,s:i,s:s,s:I,s:s,s:s,s:s}", "time", t, "type", types[i],
			      "pid", 100 + i, "ppid", 1, "comm", "sh", "cgroup_id",
			      (json_int_t)(5000 + i), "container_id", cids[i], "pod_uid", pods[i],
			      "runtime", rts[i]);
	if (!strcmp(types[i], "exec")) {
		json_object_set_new(o, "filename", json_string("/bin/echo"));
		json_object_set_new(o, "argv", json_pack("[s,s,s]", "echo", "hello", "wörld \"q\""));
		json_object_set_new(o, "args_truncated", json_false());
		json_object_set_new(o, "truncated_count", json_integer(i));
	} else if (!strcmp(types[i], "exit")) {
		json_object_set_new(o, "exit_code", json_integer(3));
		json_object_set_new(o, "signal", json_integer(0));
		json_object_set_new(o, "core_dumped", json_false());
		json_object_set_new(o, "lifetime_ns", json_integer(123456789));
	} else if (!strcmp(types[i], "signal")) {
		json_object_set_new(o, "signal", json_integer(11));
		json_object_set_new(o, "sender_pid", json_integer(102));
		json_object_set_new(o, "sender_comm", json_string("crash"));
		json_object_set_new(o, "target_pid", json_integer(102));
		json_object_set_new(o, "target_comm", json_string("crash"));
	} else {
		json_object_set_new(o, "constraint", json_string("memcg"));
		json_object_set_new(o, "actor", json_pack("{s:i,s:s,s:i,s:s}", "pid", 103, "comm", "hog",
							  "cgroup_id", 5003, "container_id",
							  cids[i]));
		json_object_set_new(o, "victim", json_pack("{s:i,s:s,s:i,s:s}", "pid", 103, "comm",
							   "hog", "cgroup_id", 5003,
							   "container_id", cids[i]));
	}
	return o;
}

/* The set of open fds below 1024 (bit per fd). Leak checks compare sets, not
 * counts: the shared API instance's threads may still be closing connections
 * of an earlier test, which lowers a count without being a leak. */
struct fdset {
	unsigned char bit[128];
};
static struct fdset open_fds(void)
{
	struct fdset s = {{0}};
	DIR *d = opendir("/proc/self/fd");
	assert_non_null(d);
	int self = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (*end || end == e->d_name || fd == self || fd < 0 || fd >= 1024)
			continue;
		s.bit[fd / 8] |= (unsigned char)(1u << (fd % 8));
	}
	closedir(d);
	return s;
}
/* Fails naming the first fd open now that was not open in `before`. */
static void assert_no_new_fds(const struct fdset *before)
{
	struct fdset now = open_fds();
	for (int fd = 0; fd < 1024; fd++) {
		unsigned char m = (unsigned char)(1u << (fd % 8));
		if ((now.bit[fd / 8] & m) && !(before->bit[fd / 8] & m))
			fail_msg("fd %d left open", fd);
	}
}

static int setup(void **state)
{
	(void)state;
	char err[256];
	sl_log_set_level(SL_LOG_WARN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	strcpy(g_dir, "/tmp/sl-api-test.XXXXXX");
	if (!mkdtemp(g_dir))
		return -1;
	char db[128];
	snprintf(db, sizeof(db), "%s/events.db", g_dir);
	struct sl_store_config sc = {.path = db};
	g_store = sl_store_open(&sc, err, sizeof(err));
	if (!g_store) {
		fprintf(stderr, "store: %s\n", err);
		return -1;
	}
	g_t0 = sl_time_now_ns() - 600LL * 1000000000LL; /* ten minutes ago */
	for (int i = 0; i < NEV; i++) {
		g_sent[i] = make_event(i);
		struct sl_store_event ev = {0};
		ev.time_ns = g_t0 + (int64_t)(i + 1) * 1000000000LL + 7;
		snprintf(ev.type, sizeof(ev.type), "%s", json_string_value(json_object_get(g_sent[i], "type")));
		ev.pid = (uint32_t)(100 + i);
		snprintf(ev.container_id, sizeof(ev.container_id), "%s",
			 json_string_value(json_object_get(g_sent[i], "container_id")));
		snprintf(ev.pod_uid, sizeof(ev.pod_uid), "%s",
			 json_string_value(json_object_get(g_sent[i], "pod_uid")));
		snprintf(ev.runtime, sizeof(ev.runtime), "%s",
			 json_string_value(json_object_get(g_sent[i], "runtime")));
		ev.json = json_dumps(g_sent[i], JSON_COMPACT);
		if (sl_store_submit(g_store, &ev))
			return -1;
	}
	if (sl_store_flush(g_store))
		return -1;


	snprintf(g_agent.cfg.api.listen, sizeof(g_agent.cfg.api.listen), "127.0.0.1:0");
	snprintf(g_sock, sizeof(g_sock), "%s/run/api.sock", g_dir); /* run/ does not exist yet */
	snprintf(g_agent.cfg.api.unix_socket, sizeof(g_agent.cfg.api.unix_socket), "%s", g_sock);
	g_agent.cfg.api.threads = 2;
	g_agent.cfg.api.admin_gid = (gid_t)-1;
	snprintf(g_token, sizeof(g_token), "test-token-0123456789abcdef");
	snprintf(g_agent.cfg.api.token_file, sizeof(g_agent.cfg.api.token_file), "%s/api.token", g_dir);
	int tfd = open(g_agent.cfg.api.token_file, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (tfd < 0 || write(tfd, g_token, strlen(g_token)) != (ssize_t)strlen(g_token) || close(tfd))
		return -1;
	setenv("SANDLENS_TOKEN_FILE", g_agent.cfg.api.token_file, 1); /* the CLI runs */
	g_agent.store = g_store;
	{
		static const struct sl_module_ops *const mods[] = {&sl_proc_module};
		char kerr[256];
		assert_int_equal(sl_kinds_build(&g_agent.kinds, mods, 1, NULL, kerr, sizeof(kerr)), 0);
	}
	mode_t old = umask(0); /* the socket must be 0600 whatever the umask */
	g_api = sl_api_start(&g_agent, err, sizeof(err));
	umask(old);
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
	sl_store_close(g_store);
	for (int i = 0; i < NEV; i++)
		json_decref(g_sent[i]);
	static const char *const files[] = {"events.db", "events.db-wal", "events.db-shm",
					    "run/api.sock", "other.sock", "plain"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", g_dir, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/run", g_dir);
	rmdir(path);
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
	char allow[64];
	char encoding[32]; /* Content-Encoding */
	int vary_ae;       /* Vary names Accept-Encoding */
	char hdrs[4096];   /* every header line, as received */
};

/* Sent as Accept-Encoding by req() when set; curl leaves the body encoded. */
static const char *g_accept_encoding;

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

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
	struct http *h = ud;
	size_t len = sz * n, ret = len;
	size_t have = strlen(h->hdrs);
	if (have + len < sizeof(h->hdrs)) {
		memcpy(h->hdrs + have, p, len);
		h->hdrs[have + len] = 0;
	}
	if (len > 17 && strncasecmp(p, "Content-Encoding:", 17) == 0)
		sscanf(p + 17, " %31[^\r\n ]", h->encoding);
	if (len > 5 && strncasecmp(p, "Vary:", 5) == 0 && strcasestr(p, "accept-encoding"))
		h->vary_ae = 1;
	if (len > 6 && strncasecmp(p, "Allow:", 6) == 0) {
		p += 6;
		len -= 6;
		while (len && *p == ' ') {
			p++;
			len--;
		}
		size_t k = len < sizeof(h->allow) ? len : sizeof(h->allow) - 1;
		memcpy(h->allow, p, k);
		h->allow[k] = '\0';
		char *e = h->allow + strlen(h->allow);
		while (e > h->allow && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' '))
			*--e = '\0';
	}
	return ret;
}

/* path includes the query string. via_unix: use the unix socket. */
static void req(const char *method, const char *path, int via_unix, struct http *h)
{
	char url[1024];
	memset(h, 0, sizeof(*h));
	CURL *c = curl_easy_init();
	assert_non_null(c);
	if (via_unix) {
		snprintf(url, sizeof(url), "http://localhost%s", path);
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, g_sock);
	} else {
		snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", g_port, path);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	if (!strcmp(method, "HEAD"))
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	else if (strcmp(method, "GET"))
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (!strcmp(method, "POST")) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "{\"x\":1}");
	}
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	struct curl_slist *hdrs = NULL;
	char ae[128], auth[128];
	if (g_accept_encoding) {
		snprintf(ae, sizeof(ae), "Accept-Encoding: %s", g_accept_encoding);
		hdrs = curl_slist_append(hdrs, ae);
	}
	if (!g_no_token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", g_token);
		hdrs = curl_slist_append(hdrs, auth);
	}
	if (hdrs)
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
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

static json_t *req_json(const char *path, int via_unix, long want_status)
{
	struct http h;
	req("GET", path, via_unix, &h);
	if (h.status != want_status)
		fail_msg("GET %s: status %ld, want %ld; body %s", path, h.status, want_status,
			 h.body ? h.body : "");
	assert_string_equal(h.ctype, "application/json");
	json_error_t je;
	json_t *o = json_loadb(h.body ? h.body : "", h.len, 0, &je);
	if (!o)
		fail_msg("GET %s: not JSON (%s): %s", path, je.text, h.body ? h.body : "");
	free(h.body);
	return o;
}

/* Event i of what was sent equals a returned object minus its "id". */
static void assert_event_is(json_t *got, int i)
{
	json_t *copy = json_deep_copy(got);
	assert_true(json_is_integer(json_object_get(copy, "id")));
	json_object_del(copy, "id");
	if (!json_equal(copy, g_sent[i])) {
		char *a = json_dumps(copy, JSON_SORT_KEYS), *b = json_dumps(g_sent[i], JSON_SORT_KEYS);
		fail_msg("event %d differs:\n got  %s\n want %s", i, a, b);
	}
	json_decref(copy);
}

/* Indexes into g_sent of an events body, by matching pid (100 + i). */
static int pids_of(json_t *body, int *out, int max)
{
	json_t *ev = json_object_get(body, "events");
	assert_true(json_is_array(ev));
	int n = (int)json_array_size(ev);
	assert_true(n <= max);
	for (int k = 0; k < n; k++) {
		json_t *e = json_array_get(ev, (size_t)k);
		out[k] = (int)json_integer_value(json_object_get(e, "pid")) - 100;
		assert_true(out[k] >= 0 && out[k] < NEV);
		assert_event_is(e, out[k]);
	}
	return n;
}

/* ---- tests ---- */

static void test_events_all_both_transports(void **state)
{
	(void)state;
	struct http a, b;
	req("GET", "/api/v1/events", 0, &a);
	req("GET", "/api/v1/events", 1, &b);
	assert_int_equal(a.status, 200);
	assert_int_equal(b.status, 200);
	assert_string_equal(a.body, b.body); /* same answer over TCP and the unix socket */
	free(a.body);
	free(b.body);

	json_t *o = req_json("/api/v1/events", 1, 200);
	int idx[NEV];
	assert_int_equal(pids_of(o, idx, NEV), NEV);
	for (int k = 0; k < NEV; k++) /* newest first by default */
		assert_int_equal(idx[k], NEV - 1 - k);
	json_t *first = json_array_get(json_object_get(o, "events"), 0);
	assert_int_equal(json_integer_value(json_object_get(o, "next_after_id")),
			 json_integer_value(json_object_get(first, "id")));
	assert_null(json_object_get(o, "truncated"));
	json_decref(o);
}

static void check_filter(const char *query, const int *want, int nwant)
{
	char path[512];
	snprintf(path, sizeof(path), "/api/v1/events?%s", query);
	json_t *o = req_json(path, 0, 200);
	int idx[NEV];
	int n = pids_of(o, idx, NEV);
	if (n != nwant)
		fail_msg("%s: %d events, want %d", query, n, nwant);
	for (int k = 0; k < n; k++)
		if (idx[k] != want[k])
			fail_msg("%s: event %d is #%d, want #%d", query, k, idx[k], want[k]);
	json_decref(o);
}

static void test_events_filters(void **state)
{
	(void)state;
	char q[256], t[SL_TIME_RFC3339_MAX];
	check_filter("type=exec", (int[]){4, 0}, 2);
	check_filter("type=oom", (int[]){3}, 1);
	check_filter("type=exec&order=asc", (int[]){0, 4}, 2);
	check_filter("container=c0ffee0123456789abcdef", (int[]){3, 1, 0}, 3);
	check_filter("container=c0ffee", (int[]){3, 1, 0}, 3); /* prefix */
	check_filter("container=deadbeef99887766&type=signal", (int[]){2}, 1);
	check_filter("container=ffff0000", (int[]){0}, 0);
	check_filter("pod=pod-a&type=exit", (int[]){1}, 1);
	check_filter("since=1h", (int[]){4, 3, 2, 1, 0}, 5);
	check_filter("since=1m", (int[]){0}, 0);
	check_filter("until=1h", (int[]){0}, 0);
	check_filter("limit=2", (int[]){4, 3}, 2);

	/* since is inclusive, until exclusive; times to the nanosecond */
	sl_time_format(g_t0 + 2000000007LL, t, sizeof(t)); /* event #1's time */
	snprintf(q, sizeof(q), "since=%s&order=asc", t);
	check_filter(q, (int[]){1, 2, 3, 4}, 4);
	sl_time_format(g_t0 + 2000000008LL, t, sizeof(t));
	snprintf(q, sizeof(q), "since=%s&order=asc", t);
	check_filter(q, (int[]){2, 3, 4}, 3);
	snprintf(q, sizeof(q), "until=%s&order=asc", t);
	check_filter(q, (int[]){0, 1}, 2);
	/* integer ns and an explicit offset (URL-encoded '+') */
	snprintf(q, sizeof(q), "since=%lld&until=%lld&order=asc", (long long)(g_t0 + 3000000007LL),
		 (long long)(g_t0 + 4000000007LL));
	check_filter(q, (int[]){2}, 1);
}

static void test_events_offset_time(void **state)
{
	(void)state;
	/* 2 h east of UTC, written both with %2B and with a raw '+' (which form
	 * decoding turns into a space): both must mean the same instant */
	char t[SL_TIME_RFC3339_MAX], q[256];
	int64_t at = g_t0 + 3000000007LL + 7200LL * 1000000000LL; /* event #2, shifted */
	sl_time_format(at, t, sizeof(t));
	t[strlen(t) - 1] = '\0'; /* drop Z */
	snprintf(q, sizeof(q), "since=%s%%2B02:00&order=asc", t);
	check_filter(q, (int[]){2, 3, 4}, 3);
	snprintf(q, sizeof(q), "since=%s+02:00&order=asc", t);
	check_filter(q, (int[]){2, 3, 4}, 3);
}

static void test_events_paging(void **state)
{
	(void)state;
	int64_t cursor = 0;
	int seen = 0;
	for (int round = 0; round < 10; round++) {
		char path[128];
		snprintf(path, sizeof(path), "/api/v1/events?order=asc&limit=2&after_id=%lld",
			 (long long)cursor);
		json_t *o = req_json(path, round & 1, 200);
		int idx[NEV];
		int n = pids_of(o, idx, 2);
		for (int k = 0; k < n; k++)
			assert_int_equal(idx[k], seen + k); /* oldest first, no gap, no repeat */
		seen += n;
		int64_t next = json_integer_value(json_object_get(o, "next_after_id"));
		if (n)
			assert_true(next > cursor);
		else
			assert_true(next == cursor); /* caught up: keep the place */
		cursor = next;
		json_decref(o);
		if (n == 0)
			break;
	}
	assert_int_equal(seen, NEV);
}

static void test_containers(void **state)
{
	(void)state;
	json_t *o = req_json("/api/v1/containers", 0, 200);
	json_t *cs = json_object_get(o, "containers");
	assert_int_equal(json_array_size(cs), 2); /* host rows are not containers */
	size_t i;
	json_t *c;
	int found = 0;
	json_array_foreach(cs, i, c)
	{
		const char *id = json_string_value(json_object_get(c, "container_id"));
		if (!strcmp(id, "c0ffee0123456789abcdef")) {
			assert_int_equal(json_integer_value(json_object_get(c, "events")), 3);
			found++;
		} else if (!strcmp(id, "deadbeef99887766")) {
			assert_int_equal(json_integer_value(json_object_get(c, "events")), 1);
			found++;
		}
	}
	assert_int_equal(found, 2);
	json_decref(o);
}

static void check_error(const char *method, const char *path, long status, const char *code,
			const char *needle)
{
	for (int via_unix = 0; via_unix < 2; via_unix++) {
		struct http h;
		req(method, path, via_unix, &h);
		if (h.status != status)
			fail_msg("%s %s: status %ld want %ld", method, path, h.status, status);
		assert_string_equal(h.ctype, "application/json");
		json_error_t je;
		json_t *o = json_loadb(h.body ? h.body : "", h.len, 0, &je);
		if (!o)
			fail_msg("%s %s: error body not JSON: %s", method, path, h.body);
		json_t *e = json_object_get(o, "error");
		assert_string_equal(json_string_value(json_object_get(e, "code")), code);
		const char *msg = json_string_value(json_object_get(e, "message"));
		if (!msg || !strstr(msg, needle))
			fail_msg("%s %s: message '%s' lacks '%s'", method, path, msg ? msg : "",
				 needle);
		if (status == 405)
			assert_string_equal(h.allow, "GET, HEAD");
		json_decref(o);
		free(h.body);
	}
}

/* Access control (docs/API.md "Access control"): without the token, TCP
 * callers are readers: exec events lose argv (argv_withheld), task routes
 * and any non-GET are 403; root over the unix socket is an admin without a
 * token; a wrong token is no token. */
static void test_reader_access(void **state)
{
	(void)state;
	struct http h;
	g_no_token = 1;
	req("GET", "/api/v1/events?type=exec", 0, &h);
	assert_int_equal(h.status, 200);
	json_t *o = json_loads(h.body, 0, NULL);
	json_t *evs = json_object_get(o, "events");
	assert_true(json_array_size(evs) >= 1);
	size_t i;
	json_t *ev;
	json_array_foreach(evs, i, ev)
	{
		assert_null(json_object_get(ev, "argv"));
		assert_true(json_is_true(json_object_get(ev, "argv_withheld")));
		assert_string_equal(json_string_value(json_object_get(ev, "filename")), "/bin/echo");
	}
	json_decref(o);
	assert_null(strstr(h.body, "hello"));
	free(h.body);
	static const char *const denied[][2] = {
		{"POST", "/api/v1/tasks"}, {"GET", "/api/v1/tasks"}, {"GET", "/api/v1/tasks/x/result"},
		{"DELETE", "/api/v1/tasks/x"}, {"DELETE", "/healthz"}, {"PUT", "/metrics"},
	};
	for (size_t k = 0; k < sizeof(denied) / sizeof(denied[0]); k++) {
		req(denied[k][0], denied[k][1], 0, &h);
		if (h.status != 403 || !strstr(h.body, "PERMISSION_DENIED"))
			fail_msg("%s %s as a reader: %ld %s", denied[k][0], denied[k][1], h.status,
				 h.body ? h.body : "");
		free(h.body);
	}
	req("GET", "/healthz", 0, &h);
	assert_int_equal(h.status, 200);
	free(h.body);
	/* root over the socket: an admin by its peer credentials */
	req("GET", "/api/v1/events?type=exec", 1, &h);
	assert_int_equal(h.status, 200);
	assert_non_null(strstr(h.body, "\"argv\":[\"echo\""));
	assert_null(strstr(h.body, "argv_withheld"));
	free(h.body);
	g_no_token = 0;
	/* a wrong token: a reader */
	char saved[sizeof(g_token)];
	memcpy(saved, g_token, sizeof(saved));
	snprintf(g_token, sizeof(g_token), "test-token-0123456789abcdeX");
	req("DELETE", "/healthz", 0, &h);
	assert_int_equal(h.status, 403);
	free(h.body);
	memcpy(g_token, saved, sizeof(saved));
	req("DELETE", "/healthz", 0, &h);
	assert_int_equal(h.status, 405); /* an admin: the method check */
	free(h.body);
}

static void test_errors(void **state)
{
	(void)state;
	check_error("GET", "/api/v1/events?type=fork", 400, "INVALID_ARGUMENT", "type");
	check_error("GET", "/api/v1/events?limit=0", 400, "INVALID_ARGUMENT", "limit");
	check_error("GET", "/api/v1/events?limit=10001", 400, "INVALID_ARGUMENT", "limit");
	check_error("GET", "/api/v1/events?since=yesterday", 400, "INVALID_ARGUMENT", "since");
	check_error("GET", "/api/v1/events?until=2023-02-30T00:00:00Z", 400, "INVALID_ARGUMENT",
		    "until");
	check_error("GET", "/api/v1/events?after_id=-1", 400, "INVALID_ARGUMENT", "after_id");
	check_error("GET", "/api/v1/events?order=sideways", 400, "INVALID_ARGUMENT", "order");
	check_error("GET", "/api/v1/events?colour=red", 400, "INVALID_ARGUMENT", "colour");
	check_error("GET", "/api/v1/events?type=exec&type=exit", 400, "INVALID_ARGUMENT",
		    "more than once");
	check_error("GET", "/api/v1/events?container=a%20b", 400, "INVALID_ARGUMENT", "container");
	check_error("GET", "/api/v1/containers?all=1", 400, "INVALID_ARGUMENT", "all");
	check_error("GET", "/healthz?x", 400, "INVALID_ARGUMENT", "x");
	check_error("GET", "/metrics?format=json", 400, "INVALID_ARGUMENT", "format");
	check_error("GET", "//", 404, "NOT_FOUND", "//"); /* "/" redirects to the web UI (test_ui_routes) */
	check_error("GET", "/api/v1/event", 404, "NOT_FOUND", "/api/v1/event");
	check_error("GET", "/api/v1/events/", 404, "NOT_FOUND", "/api/v1/events/");
	check_error("DELETE", "/nowhere", 404, "NOT_FOUND", "/nowhere");
	check_error("POST", "/api/v1/events", 405, "METHOD_NOT_ALLOWED", "POST");
	check_error("DELETE", "/healthz", 405, "METHOD_NOT_ALLOWED", "DELETE");
	check_error("PUT", "/metrics", 405, "METHOD_NOT_ALLOWED", "PUT");

	char many[1024] = "/api/v1/events?";
	for (int i = 0; i < SL_API_MAX_PARAMS + 1; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "p%d=1&", i);
	check_error("GET", many, 400, "INVALID_ARGUMENT", "query parameters");
}

/* GET /api/v1/series without name lists the declared series (finding 6). */
static void test_series_list(void **state)
{
	(void)state;
	struct http h;
	req("GET", "/api/v1/series", 0, &h);
	assert_int_equal(h.status, 200);
	json_t *j = json_loadb(h.body, h.len, 0, NULL);
	assert_non_null(j);
	json_t *s0 = json_array_get(json_object_get(j, "series"), 0);
	assert_string_equal(json_string_value(json_object_get(s0, "name")), "tv_x_seconds");
	assert_string_equal(json_string_value(json_object_get(s0, "unit")), "seconds");
	json_decref(j);
	free(h.body);
	req("GET", "/api/v1/series?module=tv", 0, &h);
	assert_int_equal(h.status, 200);
	free(h.body);
	check_error("GET", "/api/v1/series?module=nope", 404, "NOT_FOUND", "nope");
	check_error("GET", "/api/v1/series?name=tv_x_seconds", 400, "INVALID_ARGUMENT", "module");
	check_error("GET", "/api/v1/series?module=tv&name=zz", 404, "NOT_FOUND", "module");
}

/* GET /api/v1/series/history: parameters checked, the read interface's
 * answer passed on. */
static void test_series_history(void **state)
{
	(void)state;
	struct http h;
	req("GET", "/api/v1/series/history?module=tv&name=tv_x_seconds", 0, &h);
	assert_int_equal(h.status, 200);
	json_t *j = json_loadb(h.body, h.len, 0, NULL);
	assert_non_null(j);
	json_t *c0 = json_array_get(json_object_get(j, "containers"), 0);
	assert_string_equal(json_string_value(json_object_get(c0, "container_id")), "c0ffee01");
	assert_int_equal(json_array_size(json_object_get(c0, "points")), 2);
	json_decref(j);
	free(h.body);
	req("GET", "/api/v1/series/history?module=tv&name=tv_x_seconds&container=c0ff", 1, &h);
	assert_int_equal(h.status, 200);
	assert_non_null(strstr(h.body, "c0ffee01"));
	free(h.body);
	check_error("GET", "/api/v1/series/history?module=tv", 400, "INVALID_ARGUMENT", "name");
	check_error("GET", "/api/v1/series/history?name=tv_x_seconds", 400, "INVALID_ARGUMENT", "module");
	check_error("GET", "/api/v1/series/history?module=tv&name=tv_x_seconds&container=a/b", 400, "INVALID_ARGUMENT",
		    "container");
	check_error("GET", "/api/v1/series/history?module=tv&name=tv_x_seconds&limit=3", 400, "INVALID_ARGUMENT", "limit");
	check_error("GET", "/api/v1/series/history?module=nope&name=x", 404, "NOT_FOUND", "nope");
}

/* A header line "Name: value" (case-insensitive name) in h, value into v. */
static int header_value(const struct http *h, const char *name, char *v, size_t vl)
{
	size_t nl = strlen(name);
	for (const char *p = h->hdrs; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (!strncasecmp(p, name, nl) && p[nl] == ':') {
			p += nl + 1;
			while (*p == ' ')
				p++;
			size_t k = strcspn(p, "\r\n");
			if (k >= vl)
				k = vl - 1;
			memcpy(v, p, k);
			v[k] = 0;
			return 1;
		}
	}
	return 0;
}

/* The web UI (docs/UI.md): every embedded file at /ui/<name> with its type,
 * its exact bytes, the CSP and nosniff; /ui/ is index.html; / and /ui
 * redirect; unknown files, parameters and other methods are refused. */
static void test_ui_routes(void **state)
{
	(void)state;
	struct http h;
	char v[512], path[160];
	assert_true(sl_ui_nassets >= 3);
	for (unsigned i = 0; i < sl_ui_nassets; i++) {
		snprintf(path, sizeof(path), "/ui/%s", sl_ui_assets[i].name);
		req("GET", path, (int)(i & 1), &h);
		assert_int_equal(h.status, 200);
		assert_string_equal(h.ctype, sl_ui_assets[i].ctype);
		assert_int_equal(h.len, sl_ui_assets[i].len);
		assert_memory_equal(h.body, sl_ui_assets[i].data, h.len);
		assert_true(header_value(&h, "Content-Security-Policy", v, sizeof(v)));
		assert_string_equal(v, SL_UI_CSP);
		assert_true(header_value(&h, "X-Content-Type-Options", v, sizeof(v)));
		assert_string_equal(v, "nosniff");
		assert_true(header_value(&h, "X-Frame-Options", v, sizeof(v)));
		free(h.body);
	}
	const struct sl_ui_asset *ix = sl_ui_asset_for("/ui/index.html");
	assert_non_null(ix);
	req("GET", "/ui/", 0, &h);
	assert_int_equal(h.status, 200);
	assert_string_equal(h.ctype, "text/html; charset=utf-8");
	assert_int_equal(h.len, ix->len);
	free(h.body);
	req("HEAD", "/ui/app.js", 0, &h);
	assert_int_equal(h.status, 200);
	assert_string_equal(h.ctype, "text/javascript; charset=utf-8");
	free(h.body);
	const char *redirects[] = {"/", "/ui"};
	for (int i = 0; i < 2; i++) {
		req("GET", redirects[i], 0, &h);
		assert_int_equal(h.status, 302);
		assert_true(header_value(&h, "Location", v, sizeof(v)));
		assert_string_equal(v, "/ui/");
		assert_true(header_value(&h, "Content-Security-Policy", v, sizeof(v)));
		free(h.body);
	}
	check_error("GET", "/ui/nope.js", 404, "NOT_FOUND", "/ui/nope.js");
	check_error("GET", "/ui/x/index.html", 404, "NOT_FOUND", "/ui/x/index.html");
	check_error("GET", "/uix", 404, "NOT_FOUND", "/uix");
	check_error("GET", "/ui/?token=x", 400, "INVALID_ARGUMENT", "token");
	check_error("POST", "/ui/", 405, "METHOD_NOT_ALLOWED", "POST"); /* an admin here; readers get 403 on any POST */
	/* every answer, JSON included, says nosniff */
	req("GET", "/healthz", 0, &h);
	assert_true(header_value(&h, "X-Content-Type-Options", v, sizeof(v)));
	assert_false(header_value(&h, "Content-Security-Policy", v, sizeof(v)));
	free(h.body);
}

/* A percent-encoded NUL byte in a query key or value is a 400 naming the
 * parameter on every route: cut at the NUL, "container=c0ffee...%00zz"
 * would match container c0ffee... (a typo widening the filter). */
static void test_nul_in_params(void **state)
{
	(void)state;
	check_error("GET", "/api/v1/events?container=c0ffee0123456789abcdef%00zzzzzz", 400,
		    "INVALID_ARGUMENT", "container: value contains a NUL byte");
	check_error("GET", "/api/v1/events?type=oom%00x", 400, "INVALID_ARGUMENT",
		    "type: value contains a NUL byte");
	check_error("GET", "/api/v1/events?limit=5%00", 400, "INVALID_ARGUMENT",
		    "limit: value contains a NUL byte");
	check_error("GET", "/api/v1/events?limit=5&order=asc%00", 400, "INVALID_ARGUMENT",
		    "order: value");
	check_error("GET", "/api/v1/events?type%00zz=oom", 400, "INVALID_ARGUMENT",
		    "parameter 'type%00zz': name contains a NUL byte");
	check_error("GET", "/api/v1/events?%00", 400, "INVALID_ARGUMENT", "'%00'");
	check_error("GET", "/api/v1/containers?%00=1", 400, "INVALID_ARGUMENT", "'%00'");
	check_error("GET", "/api/v1/containers?x=%00", 400, "INVALID_ARGUMENT", "x: value");
	check_error("GET", "/metrics?a%00b", 400, "INVALID_ARGUMENT", "'a%00b'");
	check_error("GET", "/healthz?x=%00", 400, "INVALID_ARGUMENT", "x: value");
	check_error("GET", "/api/v1/sched?%00", 400, "INVALID_ARGUMENT", "NUL");
	check_error("GET", "/api/v1/workloads?%00", 400, "INVALID_ARGUMENT", "NUL");
	check_error("GET", "/api/v1/workloads/abc/stats?x=%00", 400, "INVALID_ARGUMENT", "NUL");
	/* the task routes (no executor here: the 400 comes before the 503) */
	check_error("GET", "/api/v1/tasks?%00", 400, "INVALID_ARGUMENT", "'%00'");
	check_error("GET", "/api/v1/capabilities?a%00=1", 400, "INVALID_ARGUMENT", "'a%00'");
	check_error("GET", "/api/v1/tasks/abc/result?format=json%00x", 400, "INVALID_ARGUMENT",
		    "format: value contains a NUL byte");
	check_error("DELETE", "/api/v1/tasks/abc?%00", 400, "INVALID_ARGUMENT", "NUL");
	/* in the path: microhttpd's url would stop at the NUL and name a route */
	check_error("GET", "/api/v1/containers%00x", 404, "NOT_FOUND", "NUL byte");
	check_error("GET", "/api/v1/events%00?limit=1", 404, "NOT_FOUND", "/api/v1/events%00");
	check_error("GET", "/healthz%00", 404, "NOT_FOUND", "NUL byte");
	check_error("DELETE", "/api/v1/tasks/abc%00/result", 404, "NOT_FOUND", "NUL byte");
	check_error("GET", "/api/v1/capabilities%00", 404, "NOT_FOUND", "NUL byte");
	/* the same values without the NUL are fine */
	json_t *o = req_json("/api/v1/events?container=c0ffee0123456789abcdef&type=oom&limit=5", 0,
			     200);
	assert_int_equal(json_array_size(json_object_get(o, "events")), 1);
	json_decref(o);
}

static void test_healthz(void **state)
{
	(void)state;
	json_t *o = req_json("/healthz", 1, 200);
	assert_string_equal(json_string_value(json_object_get(o, "status")), "ok");
	json_decref(o);
	g_status = "failed";
	o = req_json("/healthz", 0, 503);
	assert_string_equal(json_string_value(json_object_get(o, "status")), "failed");
	json_decref(o);
	g_status = "ok";
}

static void test_metrics(void **state)
{
	(void)state;
	struct http h;
	req("GET", "/metrics", 0, &h);
	assert_int_equal(h.status, 200);
	assert_non_null(strstr(h.ctype, "text/plain; version=0.0.4"));
	/* the agent's part (the stub), then the API's own families */
	const char *agent_part = "# TYPE sandlens_test_total counter\n"
				 "sandlens_test_total{n=\"0\"} 0\n"
				 "sandlens_test_total{n=\"1\"} 1\n"
				 "sandlens_test_total{n=\"2\"} 2\n";
	assert_int_equal(strncmp(h.body, agent_part, strlen(agent_part)), 0);
	assert_non_null(strstr(h.body + strlen(agent_part), "# TYPE sandlens_api_denied_total counter\n"));
	free(h.body);
	req("HEAD", "/metrics", 1, &h);
	assert_int_equal(h.status, 200);
	assert_int_equal(h.len, 0);
	free(h.body);
}

static struct sl_stats_prom *make_prom(int lines)
{
	struct sl_stats_prom *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	atomic_init(&p->refs, 1);
	FILE *f = open_memstream(&p->text, &p->len);
	fputs("# TYPE container_threads gauge\n", f);
	for (int i = 0; i < lines; i++)
		fprintf(f, "container_threads{id=\"/kubepods/burstable/pod%08d/c%d\"} %d\n", i / 4, i, i % 7);
	fclose(f);
	assert_int_equal(sl_gz_part_make(p->text, p->len, 1, &p->gz), 0);
	return p;
}

static char *gunzip(const char *z, size_t zlen, size_t *outlen)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK);
	size_t cap = zlen * 64 + 1024;
	char *out = malloc(cap);
	zs.next_in = (Bytef *)(uintptr_t)z;
	zs.avail_in = (uInt)zlen;
	zs.next_out = (Bytef *)out;
	zs.avail_out = (uInt)cap;
	int rc = inflate(&zs, Z_FINISH);
	if (rc != Z_STREAM_END || zs.avail_in)
		fail_msg("inflate: %d (%s), %u bytes left", rc, zs.msg ? zs.msg : "", zs.avail_in);
	*outlen = zs.total_out;
	inflateEnd(&zs);
	return out;
}

/* Waits until every response holding g_prom has been released. */
static void prom_refs_settle(void)
{
	for (int i = 0; i < 200 && atomic_load(&g_prom->refs) != 1; i++)
		usleep(5000);
	assert_int_equal(atomic_load(&g_prom->refs), 1);
}

/* The container families come from the snapshot, whole, by reference; with
 * Accept-Encoding gzip the body is one gzip member that inflates to exactly
 * the plain body. */
static void test_metrics_snapshot_gzip(void **state)
{
	(void)state;
	const char *own = "# TYPE sandlens_test_total counter\n"
			  "sandlens_test_total{n=\"0\"} 0\n"
			  "sandlens_test_total{n=\"1\"} 1\n"
			  "sandlens_test_total{n=\"2\"} 2\n";
	g_prom = make_prom(20000);
	size_t want_len = g_prom->len + strlen(own);
	char *want = malloc(want_len + 1);
	memcpy(want, g_prom->text, g_prom->len);
	strcpy(want + g_prom->len, own);

	struct http h;
	req("GET", "/metrics", 0, &h);
	assert_int_equal(h.status, 200);
	assert_string_equal(h.encoding, "");
	assert_true(h.vary_ae);
	/* the snapshot, the agent's part, then the API's own families */
	assert_true(h.len > want_len);
	assert_memory_equal(h.body, want, want_len);
	assert_non_null(strstr(h.body + want_len, "sandlens_api_denied_total"));
	free(h.body);

	static const char *const takes_gzip[] = {"gzip", "gzip, deflate, br", "identity;q=0.5, *"};
	for (size_t k = 0; k < 3; k++) {
		g_accept_encoding = takes_gzip[k];
		req("GET", "/metrics", k % 2, &h);
		assert_int_equal(h.status, 200);
		assert_string_equal(h.encoding, "gzip");
		assert_true(h.vary_ae);
		assert_true(h.len < want_len / 4);
		size_t n;
		char *plain = gunzip(h.body, h.len, &n);
		assert_true(n > want_len);
		assert_memory_equal(plain, want, want_len);
		free(plain);
		free(h.body);
	}
	/* two header lines form one list */
	g_accept_encoding = "identity\r\nAccept-Encoding: gzip";
	req("GET", "/metrics", 0, &h);
	assert_string_equal(h.encoding, "gzip");
	free(h.body);
	g_accept_encoding = "gzip;q=0, deflate";
	req("GET", "/metrics", 0, &h);
	assert_string_equal(h.encoding, "");
	assert_true(h.len > want_len);
	free(h.body);
	g_accept_encoding = "gzip";
	req("HEAD", "/metrics", 1, &h);
	assert_int_equal(h.status, 200);
	assert_int_equal(h.len, 0);
	free(h.body);

	/* the bound cuts what a scrape renders, never the snapshot */
	sl_api_set_max_body(g_api, 1500);
	g_metric_lines = 500;
	g_accept_encoding = NULL;
	req("GET", "/metrics", 0, &h);
	assert_true(h.len > g_prom->len && h.len <= g_prom->len + 1500);
	assert_memory_equal(h.body, g_prom->text, g_prom->len);
	const char *m = "# ...[truncated]\n";
	assert_string_equal(h.body + h.len - strlen(m), m);
	free(h.body);
	g_metric_lines = 3;
	sl_api_set_max_body(g_api, SL_API_MAX_BODY);

	/* statistics off: gzip of the own families alone */
	prom_refs_settle();
	sl_stats_prom_put(g_prom);
	g_prom = NULL;
	g_accept_encoding = "gzip";
	req("GET", "/metrics", 0, &h);
	assert_string_equal(h.encoding, "gzip");
	size_t n;
	char *plain = gunzip(h.body, h.len, &n);
	assert_true(n > strlen(own));
	assert_memory_equal(plain, own, strlen(own));
	free(plain);
	free(h.body);
	g_accept_encoding = NULL;
	free(want);
}

/* Slow clients cannot pin passes without bound: with
 * SL_API_MAX_METRICS_INFLIGHT responses unread, the next /metrics is a 429;
 * once they are gone, scrapes work again and every reference is back. */
static void test_metrics_inflight_bound(void **state)
{
	(void)state;
	g_prom = make_prom(40000); /* ~2.8 MiB: more than a unix socket buffers */
	int fds[SL_API_MAX_METRICS_INFLIGHT];
	for (int i = 0; i < SL_API_MAX_METRICS_INFLIGHT; i++) {
		fds[i] = socket(AF_UNIX, SOCK_STREAM, 0);
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		assert_true(strlen(g_sock) < sizeof(sa.sun_path));
		memcpy(sa.sun_path, g_sock, strlen(g_sock) + 1);
		assert_int_equal(connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)), 0);
		static const char rq[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
		assert_int_equal(write(fds[i], rq, sizeof(rq) - 1), (ssize_t)sizeof(rq) - 1);
		char b[16]; /* wait for the response to start: the handler has run */
		struct pollfd pf = {.fd = fds[i], .events = POLLIN};
		assert_int_equal(poll(&pf, 1, 5000), 1);
		assert_int_equal(recv(fds[i], b, sizeof(b), 0), (ssize_t)sizeof(b));
	}
	struct http h;
	req("GET", "/metrics", 0, &h);
	assert_int_equal(h.status, 429);
	assert_non_null(strstr(h.body, "RESOURCE_EXHAUSTED"));
	free(h.body);
	for (int i = 0; i < SL_API_MAX_METRICS_INFLIGHT; i++)
		close(fds[i]);
	long status = 0;
	for (int i = 0; i < 200 && status != 200; i++) {
		req("GET", "/metrics", 0, &h);
		status = h.status;
		free(h.body);
		if (status != 200)
			usleep(10000);
	}
	assert_int_equal(status, 200);
	prom_refs_settle();
	sl_stats_prom_put(g_prom);
	g_prom = NULL;
}

static void test_truncation(void **state)
{
	(void)state;
	sl_api_set_max_body(g_api, 1500);
	/* events: list cut, "truncated": true, still JSON, under the bound */
	struct http h;
	req("GET", "/api/v1/events?order=asc", 0, &h);
	assert_int_equal(h.status, 200);
	assert_true(h.len <= 1500);
	json_error_t je;
	json_t *o = json_loadb(h.body, h.len, 0, &je);
	assert_non_null(o);
	assert_true(json_is_true(json_object_get(o, "truncated")));
	json_t *ev = json_object_get(o, "events");
	size_t n = json_array_size(ev);
	assert_true(n >= 1 && n < NEV);
	assert_int_equal(json_integer_value(json_object_get(o, "next_after_id")),
			 json_integer_value(json_object_get(json_array_get(ev, n - 1), "id")));
	json_decref(o);
	free(h.body);

	/* metrics: whole lines, then the marker */
	g_metric_lines = 500;
	req("GET", "/metrics", 1, &h);
	assert_int_equal(h.status, 200);
	assert_true(h.len <= 1500 && h.len > 1000);
	const char *m = "# ...[truncated]\n";
	assert_string_equal(h.body + h.len - strlen(m), m);
	assert_int_equal(h.body[h.len - strlen(m) - 1], '\n');
	free(h.body);
	g_metric_lines = 3;
	sl_api_set_max_body(g_api, SL_API_MAX_BODY);
}

static void test_socket_mode(void **state)
{
	(void)state;
	struct stat st;
	assert_int_equal(lstat(g_sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, geteuid());
}

struct worker {
	int id, ok;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	static const char *const paths[] = {"/api/v1/events?limit=3", "/healthz", "/metrics",
					    "/api/v1/containers", "/api/v1/events?type=exec"};
	for (int i = 0; i < 25; i++) {
		char url[256];
		CURL *c = curl_easy_init();
		FILE *devnull = fopen("/dev/null", "w");
		const char *p = paths[(w->id + i) % 5];
		if ((w->id + i) & 1) {
			snprintf(url, sizeof(url), "http://localhost%s", p);
			curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, g_sock);
		} else {
			snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", g_port, p);
		}
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, devnull);
		curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
		long st = 0;
		if (curl_easy_perform(c) == CURLE_OK &&
		    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &st) == CURLE_OK && st == 200)
			w->ok++;
		fclose(devnull);
		curl_easy_cleanup(c);
	}
	return NULL;
}

static void test_concurrent(void **state)
{
	(void)state;
	pthread_t th[8];
	struct worker w[8];
	for (int i = 0; i < 8; i++) {
		w[i] = (struct worker){.id = i};
		assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].ok, 25);
	}
}

/* A second API instance on other.sock: stale file replaced, live socket and
 * non-socket refused, file removed and no fd left behind on stop. */
static void test_socket_lifecycle(void **state)
{
	(void)state;
	static struct sl_agent b; /* static: large */
	char err[256], path[100], plain[100];
	snprintf(path, sizeof(path), "%s/other.sock", g_dir);
	snprintf(plain, sizeof(plain), "%s/plain", g_dir);
	memset(&b, 0, sizeof(b));

	b.cfg.api.listen[0] = '\0';
	snprintf(b.cfg.api.unix_socket, sizeof(b.cfg.api.unix_socket), "%s", path);
	b.cfg.api.threads = 1;
	b.store = g_store;

	/* stale: bound then closed, file left behind */
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);

	struct fdset fds_before = open_fds();
	struct sl_api *api = sl_api_start(&b, err, sizeof(err));
	if (!api)
		fail_msg("start over stale socket: %s", err);
	assert_int_equal(sl_api_tcp_port(api), 0);

	/* live: a second start on the same path is refused */
	struct sl_api *again = sl_api_start(&b, err, sizeof(err));
	assert_null(again);
	assert_non_null(strstr(err, "in use"));

	sl_api_stop(api);
	struct stat st;
	assert_int_equal(lstat(path, &st), -1); /* removed on stop */
	assert_no_new_fds(&fds_before);

	/* a regular file is never removed */
	FILE *f = fopen(plain, "w");
	fclose(f);
	snprintf(b.cfg.api.unix_socket, sizeof(b.cfg.api.unix_socket), "%s", plain);
	assert_null(sl_api_start(&b, err, sizeof(err)));
	assert_non_null(strstr(err, "not a socket"));
	assert_int_equal(lstat(plain, &st), 0);

	/* nothing to listen on, bad listen specs */
	b.cfg.api.unix_socket[0] = '\0';
	assert_null(sl_api_start(&b, err, sizeof(err)));
	static const char *const bad[] = {"127.0.0.1", "127.0.0.1:", ":9753", "127.0.0.1:70000",
					  "127.0.0.1:x", "[::1:9753", "a:b:c"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(b.cfg.api.listen, sizeof(b.cfg.api.listen), "%s", bad[i]);
		err[0] = '\0';
		if (sl_api_start(&b, err, sizeof(err)))
			fail_msg("'%s' accepted", bad[i]);
		assert_non_null(strstr(err, "api.listen"));
	}
	/* a TCP port already taken */
	snprintf(b.cfg.api.listen, sizeof(b.cfg.api.listen), "127.0.0.1:%d", g_port);
	assert_null(sl_api_start(&b, err, sizeof(err)));
	assert_non_null(strstr(err, "api.listen"));
	/* IPv6 loopback works when the host has it */
	snprintf(b.cfg.api.listen, sizeof(b.cfg.api.listen), "[::1]:0");
	api = sl_api_start(&b, err, sizeof(err));
	if (api) {
		assert_true(sl_api_tcp_port(api) > 0);
		sl_api_stop(api);
	}
	assert_no_new_fds(&fds_before);
}


/* ---- the sandlens CLI against this server ---- */

/* The CLI binary: $SL_CLI, else <build dir>/sandlens next to tests/. */
static int cli_path(char *buf, size_t len)
{
	const char *env = getenv("SL_CLI");
	if (env && *env) {
		snprintf(buf, len, "%s", env);
	} else {
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			return -1;
		exe[n] = '\0';
		char *tests_dir = dirname(exe);        /* build/tests */
		char *bdir = dirname(tests_dir);       /* build */
		snprintf(buf, len, "%s/sandlens", bdir);
	}
	return access(buf, X_OK);
}

struct run {
	int status; /* exit code, or 128+signal */
	char out[65536];
	char err[4096];
};

static pid_t spawn(char *const argv[], int *out_fd, int *err_fd)
{
	int o[2], e[2];
	if (pipe2(o, O_CLOEXEC) || pipe2(e, O_CLOEXEC))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(o[1], 1);
		dup2(e[1], 2);
		unsetenv("SANDLENS_API");
		unsetenv("SANDLENS_SOCKET");
		execv(argv[0], argv);
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	*out_fd = o[0];
	*err_fd = e[0];
	return pid;
}

static int wait_status(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void read_all(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	while ((n = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(fd);
}

/* Runs the CLI with up to 8 arguments (NULL-terminated). */
static void run_cli(struct run *r, const char *a0, ...)
{
	char bin[PATH_MAX];
	char *argv[12];
	int argc = 0;
	assert_int_equal(cli_path(bin, sizeof(bin)), 0);
	argv[argc++] = bin;
	va_list ap;
	va_start(ap, a0);
	for (const char *a = a0; a && argc < 11; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	int ofd, efd;
	pid_t pid = spawn(argv, &ofd, &efd);
	assert_true(pid > 0);
	read_all(ofd, r->out, sizeof(r->out));
	read_all(efd, r->err, sizeof(r->err));
	r->status = wait_status(pid);
}

#define NEED_CLI()                                                                      \
	do {                                                                            \
		char b_[PATH_MAX];                                                      \
		if (cli_path(b_, sizeof(b_))) {                                         \
			fprintf(stderr, "SKIP: no sandlens binary at %s (set SL_CLI)\n", b_); \
			skip();                                                         \
		}                                                                       \
	} while (0)

/* Splits r->out into JSON lines; returns how many. */
static int json_lines(char *out, json_t **v, int max)
{
	int n = 0;
	for (char *save = NULL, *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		json_error_t je;
		assert_true(n < max);
		v[n] = json_loads(l, 0, &je);
		if (!v[n])
			fail_msg("not a JSON line: %s", l);
		n++;
	}
	return n;
}

static void test_cli_events(void **state)
{
	(void)state;
	NEED_CLI();
	static struct run r;
	char api[64];
	snprintf(api, sizeof(api), "http://127.0.0.1:%d", g_port);

	/* --json over TCP: one object per line, oldest first, exact fields */
	run_cli(&r, "--api", api, "events", "--json", NULL);
	if (r.status != 0)
		fail_msg("exit %d: %s", r.status, r.err);
	json_t *v[16];
	int n = json_lines(r.out, v, 16);
	assert_int_equal(n, NEV);
	for (int i = 0; i < n; i++) {
		assert_event_is(v[i], i);
		json_decref(v[i]);
	}

	/* the unix socket, a filter, options after the command */
	run_cli(&r, "events", "--socket", g_sock, "--type", "exec", "--json", NULL);
	assert_int_equal(r.status, 0);
	n = json_lines(r.out, v, 16);
	assert_int_equal(n, 2);
	assert_event_is(v[0], 0);
	assert_event_is(v[1], 4);
	json_decref(v[0]);
	json_decref(v[1]);

	/* table for people: each row's DETAILS is its kind's template from GET
	 * /api/v1/schema/events rendered for the event (the CLI names no
	 * kind); an agent without that route (404) gets key=value DETAILS, one
	 * line on stderr saying why, and exit 0 (test_cli_format.c checks both
	 * without a server) */
	struct http sh;
	req("GET", "/api/v1/schema/events", 0, &sh);
	json_t *schema = sh.status == 200 ? json_loads(sh.body, 0, NULL) : NULL;
	free(sh.body);
	run_cli(&r, "--api", api, "events", NULL);
	assert_int_equal(r.status, 0);
	static const char *const want[] = {"TIME", "CONTAINER", "DETAILS", "c0ffee012345 ", "deadbeef9988 ", " host "};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(r.out, want[i]))
			fail_msg("table lacks '%s':\n%s", want[i], r.out);
	static const char *const want_kv[] = {
		"filename=/bin/echo args_truncated=false truncated_count=4",
		"exit_code=3 signal=0 core_dumped=false lifetime_ns=123456789",
		"signal=11 sender_pid=102 sender_comm=crash target_pid=102 target_comm=crash", "constraint=memcg",
	};
	if (!schema) {
		assert_int_equal(sh.status, 404);
		if (!strstr(r.err, "does not serve /api/v1/schema/events"))
			fail_msg("no note about the missing schema route on stderr: '%s'", r.err);
		for (size_t i = 0; i < sizeof(want_kv) / sizeof(want_kv[0]); i++)
			if (!strstr(r.out, want_kv[i]))
				fail_msg("table lacks '%s' (no schema route):\n%s", want_kv[i], r.out);
	} else {
		assert_string_equal(r.err, "");
		for (int i = 0; i < NEV; i++) {
			const char *type = json_string_value(json_object_get(g_sent[i], "type"));
			size_t k;
			json_t *kind, *tmpl = NULL;
			json_array_foreach(json_object_get(schema, "kinds"), k, kind)
				if (!strcmp(json_string_value(json_object_get(kind, "name")), type))
					tmpl = json_object_get(kind, "details");
			if (!json_is_string(tmpl))
				fail_msg("the schema has no DETAILS template for '%s'", type);
			struct sl_detail *d;
			char derr[128], line[1024], *nl;
			assert_int_equal(sl_detail_parse(json_string_value(tmpl), &d, derr, sizeof(derr)), 0);
			sl_detail_render(d, g_sent[i], line, sizeof(line));
			sl_detail_free(d);
			nl = strstr(r.out, line);
			if (!*line || !nl || nl[strlen(line)] != '\n')
				fail_msg("no row ends with '%s' (template of %s):\n%s", line, type, r.out);
		}
		json_decref(schema);
	}

	/* --since is passed through and applied by the server */
	run_cli(&r, "--api", api, "events", "--since", "1m", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "");
	run_cli(&r, "--api", api, "events", "--limit", "2", "--json", NULL);
	assert_int_equal(r.status, 0);
	n = json_lines(r.out, v, 16);
	assert_int_equal(n, 2); /* the newest two, oldest first */
	assert_event_is(v[0], 3);
	assert_event_is(v[1], 4);
	json_decref(v[0]);
	json_decref(v[1]);
}

static void test_cli_other_commands(void **state)
{
	(void)state;
	NEED_CLI();
	static struct run r;
	char api[64];
	snprintf(api, sizeof(api), "http://127.0.0.1:%d", g_port);

	run_cli(&r, "--socket", g_sock, "containers", "--json", NULL);
	assert_int_equal(r.status, 0);
	json_t *v[8];
	assert_int_equal(json_lines(r.out, v, 8), 2);
	json_decref(v[0]);
	json_decref(v[1]);
	run_cli(&r, "--socket", g_sock, "containers", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "c0ffee012345"));
	assert_non_null(strstr(r.out, "containerd"));

	run_cli(&r, "--api", api, "status", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "status: ok"));
	assert_non_null(strstr(r.out, "MODULE proc"));
	run_cli(&r, "--api", api, "status", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\"status\":\"ok\""));
	g_status = "failed";
	run_cli(&r, "--api", api, "status", NULL);
	g_status = "ok";
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "status: failed"));
}

static void test_cli_exit_codes(void **state)
{
	(void)state;
	NEED_CLI();
	static struct run r;
	char api[64];
	snprintf(api, sizeof(api), "http://127.0.0.1:%d", g_port);

	/* usage errors: 2 */
	run_cli(&r, NULL);
	assert_int_equal(r.status, 2);
	run_cli(&r, "frobnicate", NULL);
	assert_int_equal(r.status, 2);
	run_cli(&r, "events", "--colour", NULL);
	assert_int_equal(r.status, 2);
	run_cli(&r, "containers", "--type", "exec", NULL);
	assert_int_equal(r.status, 2);
	run_cli(&r, "events", "extra", NULL);
	assert_int_equal(r.status, 2);
	/* a value the server rejects is a usage error too, with its message */
	run_cli(&r, "--api", api, "events", "--type", "fork", NULL);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "type"));
	run_cli(&r, "--api", api, "events", "--limit", "0", NULL);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "limit"));
	/* unreachable: 1 */
	run_cli(&r, "--api", "http://127.0.0.1:1", "status", NULL);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "cannot reach"));
	char nosock[160];
	snprintf(nosock, sizeof(nosock), "%s/none.sock", g_dir);
	run_cli(&r, "--socket", nosock, "events", NULL);
	assert_int_equal(r.status, 1);
	run_cli(&r, "--help", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "usage"));
	/* every command is listed (docs/CLI.md's synopsis has the same) */
	static const char *const cmds[] = {"events", "containers", "status", "stats", "top",
					   "profile", "tasks", "syscall-errors"};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char line[64];
		snprintf(line, sizeof(line), "\n  %s ", cmds[i]);
		if (!strstr(r.out, line))
			fail_msg("--help does not list '%s':\n%s", cmds[i], r.out);
	}
}

/* --follow prints the backlog, then new events as they are stored, and
 * ends with status 0 on SIGINT. Adds a sixth event: keep it last. */
static void test_cli_follow(void **state)
{
	(void)state;
	NEED_CLI();
	char bin[PATH_MAX];
	assert_int_equal(cli_path(bin, sizeof(bin)), 0);
	char *argv[] = {bin, "--socket", g_sock, "events", "--follow", "--json", "--type", "exit", NULL};
	int ofd, efd;
	pid_t pid = spawn(argv, &ofd, &efd);
	assert_true(pid > 0);

	char buf[65536];
	size_t len = 0;
	int64_t deadline = sl_time_now_ns() + 10LL * 1000000000LL;
	int submitted = 0;
	while (sl_time_now_ns() < deadline) {
		struct pollfd p = {.fd = ofd, .events = POLLIN};
		if (poll(&p, 1, 100) > 0) {
			ssize_t n = read(ofd, buf + len, sizeof(buf) - 1 - len);
			if (n <= 0)
				break;
			len += (size_t)n;
			buf[len] = '\0';
		}
		if (!submitted && strstr(buf, "\"pid\":101")) {
			/* backlog seen: store a new exit and an exec (filtered out) */
			for (int k = 0; k < 2; k++) {
				json_t *o = make_event(k == 0 ? 1 : 0);
				json_object_set_new(o, "pid", json_integer(777 + k));
				struct sl_store_event ev = {0};
				ev.time_ns = sl_time_now_ns();
				snprintf(ev.type, sizeof(ev.type), "%s", k == 0 ? "exit" : "exec");
				ev.pid = 777 + k;
				ev.json = json_dumps(o, JSON_COMPACT);
				json_decref(o);
				assert_int_equal(sl_store_submit(g_store, &ev), 0);
			}
			assert_int_equal(sl_store_flush(g_store), 0);
			submitted = 1;
		}
		if (submitted && strstr(buf, "\"pid\":777"))
			break;
	}
	kill(pid, SIGINT);
	char rest[4096];
	read_all(ofd, rest, sizeof(rest));
	char err[4096];
	read_all(efd, err, sizeof(err));
	int st = wait_status(pid);
	if (!strstr(buf, "\"pid\":777"))
		fail_msg("follow did not show the new event; got:\n%s\nstderr: %s", buf, err);
	assert_null(strstr(buf, "\"pid\":778")); /* the exec was filtered out */
	assert_null(strstr(rest, "\"pid\":778"));
	/* the backlog event came exactly once */
	char *first = strstr(buf, "\"pid\":101");
	assert_null(strstr(first + 1, "\"pid\":101"));
	assert_int_equal(st, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events_all_both_transports),
		cmocka_unit_test(test_events_filters),
		cmocka_unit_test(test_events_offset_time),
		cmocka_unit_test(test_events_paging),
		cmocka_unit_test(test_containers),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_series_list),
		cmocka_unit_test(test_reader_access),
		cmocka_unit_test(test_nul_in_params),
		cmocka_unit_test(test_healthz),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_metrics_snapshot_gzip),
		cmocka_unit_test(test_metrics_inflight_bound),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_socket_mode),
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_socket_lifecycle),
		cmocka_unit_test(test_cli_events),
		cmocka_unit_test(test_cli_other_commands),
		cmocka_unit_test(test_cli_exit_codes),
		cmocka_unit_test(test_cli_follow),
		cmocka_unit_test(test_series_history),
		cmocka_unit_test(test_ui_routes),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
