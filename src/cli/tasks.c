/* Task commands of the CLI (tasks.h): dispatch, running a task through its
 * follow stream, `sandlens tasks`, `sandlens syscall-errors`. */
#include "cli/tasks.h"
#include "cli/commands.h"
#include "common/units.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- follow stream ---- */

struct follow {
	json_t *last; /* the latest record */
	void (*cb)(json_t *, void *);
	void *ctx;
};

/* One line of the progress stream: a JSON record (other lines are skipped). */
static void on_record(char *line, void *ud)
{
	struct follow *f = ud;
	json_error_t je;
	json_t *rec = json_loads(line, 0, &je);
	if (!rec)
		return;
	if (f->cb)
		f->cb(rec, f->ctx);
	json_decref(f->last);
	f->last = rec;
}

/* Creates the task with follow=true and reads its progress stream until the
 * final record (any status), which goes to *final. Returns a CLI exit code. */
static int follow_task(struct cli_conn *c, json_t *body, long timeout_s,
		       void (*on_progress)(json_t *rec, void *ctx), void *ctx,
		       volatile sig_atomic_t *stop, json_t **final)
{
	struct follow f = {.cb = on_progress, .ctx = ctx};
	struct cli_resp r;
	int rc;

	*final = NULL;
	json_object_set_new(body, "follow", json_true());
	char *js = json_dumps(body, JSON_COMPACT);
	if (!js)
		return CLI_ERR;
	int hr = cli_http_stream(c, "POST", "/api/v1/tasks", js, timeout_s, on_record, &f, stop, &r);
	free(js);
	const char *st = json_string_value(json_object_get(f.last, "status"));
	if (hr == CLI_HTTP_STOPPED) {
		fprintf(stderr, "sandlens: interrupted: the task is cancelled by the agent\n");
		rc = CLI_ERR;
	} else if (hr && !r.status) {
		rc = cli_unreachable(c, &r);
	} else if (r.status != 201) {
		rc = cli_http_error("create task", &r);
	} else if (!st || !strcmp(st, "pending") || !strcmp(st, "running")) {
		fprintf(stderr, "sandlens: the progress stream ended before the task did (%s)\n",
			hr ? cli_esc(r.error) : "connection closed");
		rc = CLI_ERR;
	} else {
		*final = f.last;
		f.last = NULL;
		rc = CLI_OK;
	}
	json_decref(f.last);
	cli_resp_free(&r);
	return rc;
}

int cli_task_run(struct cli_conn *c, json_t *body, long timeout_s,
		 void (*on_progress)(json_t *rec, void *ctx), void *ctx,
		 volatile sig_atomic_t *stop, json_t **final)
{
	int rc = follow_task(c, body, timeout_s, on_progress, ctx, stop, final);
	if (isatty(2))
		fputc('\n', stderr); /* ends the progress line */
	if (rc)
		return rc;
	const char *st = json_string_value(json_object_get(*final, "status"));
	if (!st || strcmp(st, "done")) {
		fprintf(stderr, "sandlens: task %s %s: %s\n", cli_esc(json_string_value(json_object_get(*final, "id"))),
			cli_esc(st), cli_esc(json_string_value(json_object_get(*final, "reason"))));
		json_decref(*final);
		*final = NULL;
		return CLI_ERR;
	}
	return CLI_OK;
}

int cli_task_target(const struct cli_run *r, json_t *body)
{
	static const char *const keys[] = {"container", "pod", "pid", "tid"};
	for (size_t k = 0; k < 4; k++) {
		const char *v = cli_opt(r, keys[k]);
		if (!v)
			continue;
		if (json_object_get(body, "target")) {
			fprintf(stderr, "sandlens: give one target (--container, --pod, --pid or --tid)\n");
			return -1;
		}
		json_t *val;
		if (k >= 2) {
			char *end;
			long n = strtol(v, &end, 10);
			if (!*v || *end || n <= 0) {
				fprintf(stderr, "sandlens: --%s: '%s' is not a process id\n", keys[k], v);
				return -1;
			}
			val = json_integer(n);
		} else {
			val = json_string(v);
		}
		json_object_set_new(body, "target", json_pack("{s:o}", keys[k], val));
	}
	return json_object_get(body, "target") ? 1 : 0;
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
	printf("%-20s %-20s %-9s %-24s %-24s %6.1fs %s", cli_esc(json_string_value(json_object_get(t, "id"))),
	       cli_esc(json_string_value(json_object_get(t, "type"))),
	       cli_esc(json_string_value(json_object_get(t, "status"))), cli_esc(target), cli_esc(tbuf),
	       json_number_value(json_object_get(t, "duration_s")), what);
	if (reason) {
		fputs(what[0] ? " " : "", stdout);
		cli_put_safe(stdout, reason);
	}
	putchar('\n');
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
		if ((rc = cli_get_json(c, "/api/v1/tasks", 0, &o, NULL)))
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
		if ((rc = cli_get_json(c, path, 0, &o, NULL)))
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
		return cli_unreachable(c, &r);
	if (r.status != 200) {
		rc = cli_http_error(path, &r);
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
		fprintf(stderr, "\r%s %.0f s, %lld errors so far ", cli_esc(json_string_value(json_object_get(rec, "id"))),
			json_number_value(json_object_get(p, "elapsed_s")),
			(long long)json_integer_value(json_object_get(p, "matched")));
}

static int cmd_syscall_errors(struct cli_conn *c, const struct cli_run *r, int json)
{
	json_t *body = json_pack("{s:s}", "type", "trace_syscall_errors");
	uint64_t ns = 5000000000ull;
	const char *d = cli_opt(r, "duration");
	int t = cli_task_target(r, body);
	if (t < 0) {
		json_decref(body);
		return CLI_USAGE;
	}
	if (d && cli_parse_task_duration(d, &ns)) {
		fprintf(stderr, "sandlens: --duration: '%s' is not a duration like 5s or 2m\n", d);
		json_decref(body);
		return CLI_USAGE;
	}
	if (!t) {
		fprintf(stderr, "sandlens: syscall-errors needs --container ID, --pod UID, --pid N or --tid N\n");
		json_decref(body);
		return CLI_USAGE;
	}
	json_object_set_new(body, "duration_s", json_real((double)ns / 1e9));
	json_t *final = NULL;
	int rc = cli_task_run(c, body, (long)(ns / 1000000000ull) + 120, progress_dot, NULL, &cli_stop, &final);
	json_decref(body);
	if (rc)
		return rc;
	char path[128];
	snprintf(path, sizeof(path), "/api/v1/tasks/%s/result?format=json",
		 json_string_value(json_object_get(final, "id")));
	json_decref(final);
	json_t *res = NULL;
	if ((rc = cli_get_json(c, path, 0, &res, NULL)))
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
			printf("%-20s %-14s %10lld  %lld(", cli_esc(json_string_value(json_object_get(e, "syscall"))),
			       cli_esc(json_string_value(json_object_get(e, "errno_name"))),
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

/* ---- handlers (commands.h) ---- */

int cli_parse_task_duration(const char *v, uint64_t *ns)
{
	uint64_t x;
	size_t n = strlen(v);
	/* the config's parser (src/common/units.h); a plain number is refused
	 * here: the unit is written out on a command line */
	if (sl_parse_duration_ns(v, &x) || x < 1000000 || !n || v[n - 1] < 'a' || v[n - 1] > 'z')
		return -1;
	*ns = x;
	return 0;
}

int cli_cmd_tasks(struct cli_run *r)
{
	struct cli_conn *c;
	int rc = cli_run_connect(r, &c);
	return rc ? rc : cmd_tasks(c, r->npos, r->pos, cli_flag(r, "json"));
}

int cli_cmd_syscall_errors(struct cli_run *r)
{
	struct cli_conn *c;
	int rc = cli_run_connect(r, &c);
	return rc ? rc : cmd_syscall_errors(c, r, cli_flag(r, "json"));
}

int cli_cmd_profile(struct cli_run *r)
{
	struct cli_conn *c;
	int rc = cli_run_connect(r, &c);
	return rc ? rc : cli_profile_main(c, r, &cli_stop);
}
