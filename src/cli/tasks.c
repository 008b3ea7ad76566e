/* Task commands of the CLI (tasks.h): dispatch, HTTP with bodies, follow
 * streams, `sandlens tasks`, `sandlens syscall-errors`. */
#include "cli/tasks.h"
#include "agent/config.h"

#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_API "http://127.0.0.1:9753"

static volatile sig_atomic_t g_stop;
static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

/* ---- HTTP ---- */

static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
	struct cli_resp *r = ud;
	size_t add = sz * n;
	if (r->len + add > CLI_MAX_BODY)
		return 0;
	char *nb = realloc(r->body, r->len + add + 1);
	if (!nb)
		return 0;
	r->body = nb;
	memcpy(r->body + r->len, p, add);
	r->len += add;
	r->body[r->len] = '\0';
	return add;
}

static void setup(struct cli_conn *c, CURL *h, const char *url, long timeout_s, char *cerr,
		  struct curl_slist **hdrs)
{
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, url);
	if (c->socket)
		curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->socket);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout_s > 0 ? timeout_s : 30L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "sandlens-cli");
	*hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	*hdrs = curl_slist_append(*hdrs, "Expect:");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdrs);
}

int cli_http_request(struct cli_conn *c, const char *method, const char *path, const char *body,
		     long timeout_s, struct cli_resp *r)
{
	CURL *h = c->curl;
	char url[4096], cerr[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs = NULL;

	memset(r, 0, sizeof(*r));
	if ((size_t)snprintf(url, sizeof(url), "%s%s", c->base, path) >= sizeof(url)) {
		snprintf(r->error, sizeof(r->error), "request URL too long");
		return -1;
	}
	setup(c, h, url, timeout_s, cerr, &hdrs);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	CURLcode rc = curl_easy_perform(h);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	if (rc != CURLE_OK) {
		snprintf(r->error, sizeof(r->error), "%s",
			 rc == CURLE_WRITE_ERROR ? "response too large" : cerr[0] ? cerr : curl_easy_strerror(rc));
		free(r->body);
		r->body = NULL;
		r->len = 0;
		return -1;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	return 0;
}

int cli_task_http_error(const char *what, const struct cli_resp *r)
{
	json_error_t je;
	json_t *o = r->body ? json_loads(r->body, 0, &je) : NULL;
	json_t *e = json_object_get(o, "error");
	const char *code = json_string_value(json_object_get(e, "code"));
	const char *msg = json_string_value(json_object_get(e, "message"));
	if (code && msg)
		fprintf(stderr, "sandlens: %s: %s (HTTP %ld %s)\n", what, msg, r->status, code);
	else
		fprintf(stderr, "sandlens: %s: HTTP %ld%s%.200s\n", what, r->status, r->body ? ": " : "",
			r->body ? r->body : "");
	json_decref(o);
	return r->status == 400 ? CLI_USAGE : CLI_ERR;
}

static int unreachable(struct cli_conn *c, const struct cli_resp *r)
{
	fprintf(stderr, "sandlens: cannot reach the API at %s%s: %s\n", c->socket ? "unix:" : "",
		c->socket ? c->socket : c->base, r->error);
	return CLI_ERR;
}

/* ---- follow stream ---- */

struct follow {
	struct cli_resp head;  /* non-2xx body */
	char *buf;             /* partial line */
	size_t len;
	json_t *last;
	void (*cb)(json_t *, void *);
	void *ctx;
	volatile sig_atomic_t *stop;
	long status;
	CURL *h;
};

static size_t on_stream(char *p, size_t sz, size_t n, void *ud)
{
	struct follow *f = ud;
	size_t add = sz * n;
	if (!f->status)
		curl_easy_getinfo(f->h, CURLINFO_RESPONSE_CODE, &f->status);
	if (f->status != 201)
		return on_data(p, sz, n, &f->head);
	char *nb = realloc(f->buf, f->len + add + 1);
	if (!nb)
		return 0;
	f->buf = nb;
	memcpy(f->buf + f->len, p, add);
	f->len += add;
	f->buf[f->len] = 0;
	char *nl;
	while ((nl = memchr(f->buf, '\n', f->len))) {
		*nl = 0;
		json_error_t je;
		json_t *rec = json_loads(f->buf, 0, &je);
		size_t used = (size_t)(nl - f->buf) + 1;
		memmove(f->buf, nl + 1, f->len - used);
		f->len -= used;
		f->buf[f->len] = 0;
		if (!rec)
			continue;
		if (f->cb)
			f->cb(rec, f->ctx);
		json_decref(f->last);
		f->last = rec;
	}
	return add;
}

static int on_xfer(void *ud, curl_off_t a, curl_off_t b, curl_off_t c2, curl_off_t d)
{
	(void)a, (void)b, (void)c2, (void)d;
	struct follow *f = ud;
	return f->stop && *f->stop ? 1 : 0; /* non-zero aborts: the agent cancels the task */
}

int cli_task_follow(struct cli_conn *c, json_t *body, long timeout_s,
		    void (*on_progress)(json_t *rec, void *ctx), void *ctx,
		    volatile sig_atomic_t *stop, json_t **final)
{
	CURL *h = c->curl;
	char url[4096], cerr[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs = NULL;
	struct follow f = {.cb = on_progress, .ctx = ctx, .stop = stop, .h = h};

	*final = NULL;
	json_object_set_new(body, "follow", json_true());
	char *js = json_dumps(body, JSON_COMPACT);
	if (!js)
		return CLI_ERR;
	snprintf(url, sizeof(url), "%s/api/v1/tasks", c->base);
	setup(c, h, url, timeout_s, cerr, &hdrs);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, js);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(js));
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_stream);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &f);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_xfer);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, &f);
	CURLcode rc = curl_easy_perform(h);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	free(js);
	free(f.buf);
	if (!f.status)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &f.status);
	if (rc == CURLE_ABORTED_BY_CALLBACK) {
		fprintf(stderr, "sandlens: interrupted: the task is cancelled by the agent\n");
		json_decref(f.last);
		cli_resp_free(&f.head);
		return CLI_ERR;
	}
	if (rc != CURLE_OK && f.status == 0) {
		struct cli_resp r = {0};
		snprintf(r.error, sizeof(r.error), "%s", cerr[0] ? cerr : curl_easy_strerror(rc));
		json_decref(f.last);
		return unreachable(c, &r);
	}
	if (f.status != 201) {
		f.head.status = f.status;
		int e = cli_task_http_error("create task", &f.head);
		cli_resp_free(&f.head);
		json_decref(f.last);
		return e;
	}
	const char *st = json_string_value(json_object_get(f.last, "status"));
	if (!st || !strcmp(st, "pending") || !strcmp(st, "running")) {
		fprintf(stderr, "sandlens: the progress stream ended before the task did (%s)\n",
			rc != CURLE_OK ? (cerr[0] ? cerr : curl_easy_strerror(rc)) : "connection closed");
		json_decref(f.last);
		return CLI_ERR;
	}
	*final = f.last;
	return CLI_OK;
}

int cli_task_target_opt(int argc, char **argv, int *i, json_t *body)
{
	static const char *const keys[] = {"container", "pod", "pid", "tid"};
	const char *a = argv[*i];
	for (size_t k = 0; k < 4; k++) {
		char opt[16];
		snprintf(opt, sizeof(opt), "--%s", keys[k]);
		if (strcmp(a, opt))
			continue;
		if (*i + 1 >= argc) {
			fprintf(stderr, "sandlens: %s needs a value\n", opt);
			return -1;
		}
		if (json_object_get(body, "target")) {
			fprintf(stderr, "sandlens: give one target (--container, --pod, --pid or --tid)\n");
			return -1;
		}
		const char *v = argv[++*i];
		json_t *val;
		if (k >= 2) {
			char *end;
			long n = strtol(v, &end, 10);
			if (!*v || *end || n <= 0) {
				fprintf(stderr, "sandlens: %s: '%s' is not a process id\n", opt, v);
				return -1;
			}
			val = json_integer(n);
		} else {
			val = json_string(v);
		}
		json_object_set_new(body, "target", json_pack("{s:o}", keys[k], val));
		(*i)++;
		return 1;
	}
	return 0;
}

/* ---- tasks ---- */

static void print_task_row(json_t *t)
{
	json_t *tg = json_object_get(t, "target");
	const char *k = NULL;
	json_t *v = NULL;
	char target[64] = "-";
	json_object_foreach(tg, k, v) {
		if (json_is_string(v))
			snprintf(target, sizeof(target), "%s:%.12s", k, json_string_value(v));
		else
			snprintf(target, sizeof(target), "%s:%lld", k, (long long)json_integer_value(v));
	}
	const char *created = json_string_value(json_object_get(t, "created_at"));
	char tbuf[32] = "-";
	if (created)
		cli_short_time(created, tbuf, sizeof(tbuf));
	json_t *res = json_object_get(t, "result");
	char what[64] = "";
	if (json_object_get(res, "total_count"))
		snprintf(what, sizeof(what), "%lld samples",
			 (long long)json_integer_value(json_object_get(res, "total_count")));
	else if (json_object_get(res, "total_errors"))
		snprintf(what, sizeof(what), "%lld errors",
			 (long long)json_integer_value(json_object_get(res, "total_errors")));
	const char *reason = json_string_value(json_object_get(t, "reason"));
	printf("%-20s %-20s %-9s %-24s %-24s %6.1fs %s", json_string_value(json_object_get(t, "id")),
	       json_string_value(json_object_get(t, "type")), json_string_value(json_object_get(t, "status")),
	       target, tbuf, json_number_value(json_object_get(t, "duration_s")), what);
	if (reason) {
		fputs(what[0] ? " " : "", stdout);
		cli_put_safe(stdout, reason);
	}
	putchar('\n');
}

static int get_json(struct cli_conn *c, const char *path, json_t **out)
{
	struct cli_resp r;
	if (cli_http_request(c, "GET", path, NULL, 30, &r))
		return unreachable(c, &r);
	if (r.status != 200) {
		int e = cli_task_http_error(path, &r);
		cli_resp_free(&r);
		return e;
	}
	json_error_t je;
	*out = r.body ? json_loads(r.body, 0, &je) : NULL;
	cli_resp_free(&r);
	if (!*out) {
		fprintf(stderr, "sandlens: %s: the API returned invalid JSON\n", path);
		return CLI_ERR;
	}
	return 0;
}

static int valid_task_id(const char *id)
{
	if (!*id || strlen(id) > 40)
		return 0;
	for (const char *p = id; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '-'))
			return 0;
	return 1;
}

static int cmd_tasks(struct cli_conn *c, int argc, char **argv, int json)
{
	json_t *o = NULL;
	char path[128];
	int rc;

	if (argc == 0 || !strcmp(argv[0], "list")) {
		if (argc > 1) {
			fprintf(stderr, "sandlens: tasks list takes no argument\n");
			return CLI_USAGE;
		}
		if ((rc = get_json(c, "/api/v1/tasks", &o)))
			return rc;
		json_t *ts = json_object_get(o, "tasks");
		size_t i;
		json_t *t;
		if (json) {
			json_array_foreach(ts, i, t) {
				char *s = json_dumps(t, JSON_COMPACT);
				if (s)
					puts(s);
				free(s);
			}
		} else {
			printf("%-20s %-20s %-9s %-24s %-24s %7s %s\n", "ID", "TYPE", "STATUS", "TARGET", "CREATED",
			       "DUR", "RESULT");
			json_array_foreach(ts, i, t) print_task_row(t);
		}
		json_decref(o);
		return CLI_OK;
	}
	if (argc != 2 || (strcmp(argv[0], "show") && strcmp(argv[0], "stop"))) {
		fprintf(stderr, "sandlens: usage: sandlens tasks [list | show ID | stop ID]\n");
		return CLI_USAGE;
	}
	if (!valid_task_id(argv[1])) {
		fprintf(stderr, "sandlens: '%s' is not a task id\n", argv[1]);
		return CLI_USAGE;
	}
	snprintf(path, sizeof(path), "/api/v1/tasks/%s", argv[1]);
	if (!strcmp(argv[0], "show")) {
		if ((rc = get_json(c, path, &o)))
			return rc;
		char *s = json_dumps(o, json ? JSON_COMPACT : JSON_INDENT(2));
		if (s)
			puts(s);
		free(s);
		json_decref(o);
		return CLI_OK;
	}
	struct cli_resp r;
	if (cli_http_request(c, "DELETE", path, NULL, 30, &r))
		return unreachable(c, &r);
	if (r.status != 200) {
		rc = cli_task_http_error(path, &r);
		cli_resp_free(&r);
		return rc;
	}
	cli_resp_free(&r);
	printf("task %s stopped and deleted\n", argv[1]);
	return CLI_OK;
}

/* ---- syscall-errors ---- */

static void progress_dot(json_t *rec, void *ctx)
{
	(void)ctx;
	json_t *p = json_object_get(rec, "progress");
	if (p && isatty(2))
		fprintf(stderr, "\r%s %.0f s, %lld errors so far ", json_string_value(json_object_get(rec, "id")),
			json_number_value(json_object_get(p, "elapsed_s")),
			(long long)json_integer_value(json_object_get(p, "matched")));
}

static int cmd_syscall_errors(struct cli_conn *c, int argc, char **argv, int json)
{
	json_t *body = json_pack("{s:s}", "type", "trace_syscall_errors");
	uint64_t ns = 5000000000ull;
	for (int i = 0; i < argc;) {
		int t = cli_task_target_opt(argc, argv, &i, body);
		if (t < 0) {
			json_decref(body);
			return CLI_USAGE;
		}
		if (t)
			continue;
		if (!strcmp(argv[i], "--duration") && i + 1 < argc) {
			if (sl_parse_duration_ns(argv[i + 1], &ns) || ns < 1000000 ||
			    !strpbrk(argv[i + 1], "smh")) {
				fprintf(stderr, "sandlens: --duration: '%s' is not a duration like 5s or 2m\n", argv[i + 1]);
				json_decref(body);
				return CLI_USAGE;
			}
			i += 2;
			continue;
		}
		fprintf(stderr, "sandlens: syscall-errors: unknown or incomplete option '%s'\n", argv[i]);
		json_decref(body);
		return CLI_USAGE;
	}
	if (!json_object_get(body, "target")) {
		fprintf(stderr, "sandlens: syscall-errors needs --container ID, --pod UID, --pid N or --tid N\n");
		json_decref(body);
		return CLI_USAGE;
	}
	json_object_set_new(body, "duration_s", json_real((double)ns / 1e9));
	json_t *final = NULL;
	int rc = cli_task_follow(c, body, (long)(ns / 1000000000ull) + 120, progress_dot, NULL, &g_stop, &final);
	json_decref(body);
	if (isatty(2))
		fputc('\n', stderr);
	if (rc)
		return rc;
	const char *st = json_string_value(json_object_get(final, "status"));
	const char *id = json_string_value(json_object_get(final, "id"));
	if (strcmp(st, "done")) {
		fprintf(stderr, "sandlens: task %s %s: %s\n", id, st,
			json_string_value(json_object_get(final, "reason")) ?: "");
		json_decref(final);
		return CLI_ERR;
	}
	char path[128];
	snprintf(path, sizeof(path), "/api/v1/tasks/%s/result?format=json", id);
	json_decref(final);
	json_t *res = NULL;
	if ((rc = get_json(c, path, &res)))
		return rc;
	if (json) {
		char *s = json_dumps(res, JSON_COMPACT);
		if (s)
			puts(s);
		free(s);
	} else {
		printf("%-20s %-14s %10s  %s\n", "SYSCALL", "ERRNO", "COUNT", "EXAMPLE");
		size_t i;
		json_t *e;
		json_array_foreach(json_object_get(res, "errors"), i, e) {
			json_t *ex = json_object_get(e, "example");
			printf("%-20s %-14s %10lld  %lld(", json_string_value(json_object_get(e, "syscall")),
			       json_string_value(json_object_get(e, "errno_name")),
			       (long long)json_integer_value(json_object_get(e, "count")),
			       (long long)json_integer_value(json_object_get(ex, "pid")));
			cli_put_safe(stdout, json_string_value(json_object_get(ex, "comm")) ?: "");
			printf(")\n");
		}
		printf("total %lld failed calls in %.1f s\n",
		       (long long)json_integer_value(json_object_get(res, "total_errors")), (double)ns / 1e9);
	}
	json_decref(res);
	return CLI_OK;
}

/* ---- dispatch ---- */

static void usage(void)
{
	printf("usage:\n"
	       "  sandlens [--api URL | --socket PATH] profile (--container ID | --pod UID | --pid N | --tid N)\n"
	       "           [--duration 10s] [--hz 99] [--off-cpu [--min-off-cpu-us N]] -o FILE\n"
	       "           FILE's extension picks the format: .svg .pb.gz .folded .json\n"
	       "  sandlens [--api URL | --socket PATH] tasks [list | show ID | stop ID] [--json]\n"
	       "  sandlens [--api URL | --socket PATH] syscall-errors (--container ID | --pod UID | --pid N)\n"
	       "           [--duration 5s] [--json]\n");
}

int cli_task_dispatch(int argc, char **argv, int *rc)
{
	const char *api = NULL, *sock = NULL, *cmd = NULL;
	int json = 0, help = 0, n = 0;
	char **rest = calloc((size_t)argc + 1, sizeof(*rest));

	if (!rest)
		return 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!cmd && !strcmp(a, "--api") && i + 1 < argc)
			api = argv[++i];
		else if (!cmd && !strncmp(a, "--api=", 6))
			api = a + 6;
		else if (!cmd && !strcmp(a, "--socket") && i + 1 < argc)
			sock = argv[++i];
		else if (!cmd && !strncmp(a, "--socket=", 9))
			sock = a + 9;
		else if (!cmd && a[0] == '-')
			break; /* an option main() knows: not ours */
		else if (!cmd)
			cmd = a;
		else if (!strcmp(a, "--json"))
			json = 1;
		else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			help = 1;
		else if (!strcmp(a, "--api") && i + 1 < argc)
			api = argv[++i];
		else if (!strcmp(a, "--socket") && i + 1 < argc)
			sock = argv[++i];
		else
			rest[n++] = argv[i];
	}
	if (!cmd || (strcmp(cmd, "profile") && strcmp(cmd, "tasks") && strcmp(cmd, "syscall-errors"))) {
		free(rest);
		return 0;
	}
	if (help) {
		usage();
		free(rest);
		*rc = CLI_OK;
		return 1;
	}
	if (!api)
		api = getenv("SANDLENS_API");
	if (!sock)
		sock = getenv("SANDLENS_SOCKET");
	if (!api || !*api)
		api = DEFAULT_API;
	char base[1024];
	size_t bl = strlen(api);
	while (bl && api[bl - 1] == '/')
		bl--;
	if (bl == 0 || bl >= sizeof(base) || !strstr(api, "://")) {
		fprintf(stderr, "sandlens: --api wants a URL like http://127.0.0.1:9753, not '%s'\n", api);
		free(rest);
		*rc = CLI_USAGE;
		return 1;
	}
	memcpy(base, api, bl);
	base[bl] = 0;

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	struct cli_conn c;
	if (cli_http_init(&c, base, sock)) {
		fprintf(stderr, "sandlens: libcurl initialisation failed\n");
		free(rest);
		*rc = CLI_ERR;
		return 1;
	}
	if (!strcmp(cmd, "tasks"))
		*rc = cmd_tasks(&c, n, rest, json);
	else if (!strcmp(cmd, "syscall-errors"))
		*rc = cmd_syscall_errors(&c, n, rest, json);
	else
		*rc = json ? (fprintf(stderr, "sandlens: profile: use -o FILE.json for JSON\n"), CLI_USAGE)
			   : cli_profile_main(&c, n, rest, &g_stop);
	cli_http_close(&c);
	free(rest);
	fflush(stdout);
	return 1;
}
