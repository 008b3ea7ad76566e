/* The commands that only read (GET): events, containers, status, stats,
 * top: their handlers (commands.h) and the events listing and follow loop
 * (docs/CLI.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/follow.h"
#include "cli/schema.h"
#include "cli/stats.h"

#define FOLLOW_INTERVAL_MS 500
#define FOLLOW_PAGE "1000"
/* TYPE width when following an agent without the schema route before any
 * event arrived (the header is printed at once) */
#define EVENTS_TYPE_WIDTH_GUESS 11

struct opts {
	const char *type, *container, *pod, *since, *until, *limit;
	int follow, json, no_host;
};

/* Output failed: a closed pipe is a normal end (like `| head`). */
static int out_rc(void)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return CLI_OK;
	if (errno == EPIPE)
		return CLI_OK;
	fprintf(stderr, "sandlens: writing output: %s\n", strerror(errno));
	return CLI_ERR;
}

/* An event of the host (runtime "host"): hidden by --no-host. */
static int is_host_event(json_t *ev)
{
	const char *rt = json_string_value(json_object_get(ev, "runtime"));
	return rt && !strcmp(rt, "host");
}

static int g_no_host; /* --no-host of this run */

/* JSON line (s NULL) or table row */
static void print_event(json_t *ev, const struct cli_schema *s)
{
	int json = !s;
	if (g_no_host && is_host_event(ev))
		return;
	if (json) {
		char *s = json_dumps(ev, JSON_COMPACT);
		if (s) {
			fputs(s, stdout);
			fputc('\n', stdout);
			free(s);
		}
	} else {
		cli_print_event_row(stdout, s, ev);
	}
}

static int build_events_path(const struct opts *o, char *path, size_t size, int with_since)
{
	snprintf(path, size, "/api/v1/events");
	if ((o->type && cli_query_add(path, size, "type", o->type)) ||
	    (o->container && cli_query_add(path, size, "container", o->container)) ||
	    (o->pod && cli_query_add(path, size, "pod", o->pod)) ||
	    (with_since && o->since && cli_query_add(path, size, "since", o->since)) ||
	    (o->until && cli_query_add(path, size, "until", o->until)))
		return -1;
	return 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (!cli_stop && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int events_run(struct cli_conn *c, const struct opts *o, struct cli_schema *sch);

/* ---- --follow over the event stream (follow.h) ---- */

#define WATCH_HEARTBEAT "5"  /* s; the stream's comment line keeps it busy */
#define WATCH_IDLE_S 20L     /* no byte this long: the agent is gone */

struct follow_print {
	struct cli_schema *sch;
	int header;
};

static void follow_print(json_t *ev, void *ctx)
{
	struct follow_print *fp = ctx;
	if (fp->sch && !fp->header) {
		if (!fp->sch->loaded) {
			json_t *one = json_pack("[O]", ev);
			cli_schema_fit_types(fp->sch, one);
			json_decref(one);
		}
		cli_print_event_header(stdout, fp->sch);
		fp->header = 1;
	}
	print_event(ev, fp->sch);
	if (fflush(stdout) != 0 || ferror(stdout))
		cli_stop = 1; /* out_rc() tells a closed pipe from an error */
}

static int watch_open(void *tctx, const char *path, int64_t last_id, void (*on_line)(char *, void *),
		      void *lctx, long *status, char *err, size_t errlen)
{
	struct cli_conn *c = tctx;
	struct cli_resp r;
	char hdr[64];
	snprintf(hdr, sizeof(hdr), "Last-Event-ID: %lld", (long long)last_id);
	int rc = cli_http_watch(c, path, hdr, WATCH_IDLE_S, on_line, lctx, &cli_stop, &r);
	*status = r.status;
	if (rc == -1)
		snprintf(err, errlen, "%s", r.error);
	else if (r.status / 100 != 2 && r.body)
		snprintf(err, errlen, "%.200s", r.body);
	cli_resp_free(&r);
	return rc;
}

/* 0 and done (*rc), or 1: the agent has no stream route, poll instead. */
static int follow_stream(struct cli_conn *c, const struct opts *o, struct cli_schema *sch, int header,
			 int64_t *cursor, int *rc)
{
	char path[2200];
	snprintf(path, sizeof(path), "/api/v1/events/watch");
	if ((o->type && cli_query_add(path, sizeof(path), "type", o->type)) ||
	    (o->container && cli_query_add(path, sizeof(path), "container", o->container)) ||
	    (o->pod && cli_query_add(path, sizeof(path), "pod", o->pod)) ||
	    (o->until && cli_query_add(path, sizeof(path), "until", o->until)) ||
	    cli_query_add(path, sizeof(path), "heartbeat", WATCH_HEARTBEAT)) {
		*rc = cli_usage_error(cli_command_find("events"), "%s", "filter values too long");
		return 0;
	}
	struct follow_print fp = {.sch = sch, .header = header};
	struct cli_follow f = {.cursor = *cursor, .print = follow_print, .pctx = &fp, .err = stderr,
			       .sleep_ms = sleep_ms};
	int r = cli_follow_run(&f, path, watch_open, c, &cli_stop);
	*cursor = f.cursor;
	if (r == CLI_FOLLOW_NO_ROUTE)
		return 1;
	*rc = r ? r : out_rc();
	return 0;
}

/* The table renders DETAILS from the agent's schema, fetched once. */
static int events(struct cli_conn *c, const struct opts *o)
{
	struct cli_schema sch;
	int rc;
	if (o->json)
		return events_run(c, o, NULL);
	rc = cli_schema_fetch(c, &sch);
	if (rc == CLI_OK)
		rc = events_run(c, o, &sch);
	cli_schema_free(&sch);
	return rc;
}

static int events_run(struct cli_conn *c, const struct opts *o, struct cli_schema *sch)
{
	char path[2048];
	json_t *body = NULL;
	int64_t cursor = 0;
	int rc;

	if (o->follow) {
		/* the newest id overall: the floor of the follow cursor, so an
		 * empty first answer does not replay old non-matching history */
		rc = cli_get_json(c, "/api/v1/events?limit=1", 0, &body, NULL);
		if (rc)
			return rc;
		cursor = json_integer_value(json_object_get(body, "next_after_id"));
		json_decref(body);
	}

	/* first page: newest first (server order), printed oldest first */
	if (build_events_path(o, path, sizeof(path), 1) ||
	    (o->limit && cli_query_add(path, sizeof(path), "limit", o->limit)))
		return cli_usage_error(cli_command_find("events"), "%s", "filter values too long");
	rc = cli_get_json(c, path, 0, &body, NULL);
	if (rc)
		return rc;
	json_t *evs = json_object_get(body, "events");
	/* the header at once, also when following and nothing matched yet */
	int header = sch != NULL;
	if (sch && !sch->loaded) {
		cli_schema_fit_types(sch, evs); /* no schema: as wide as the types seen */
		if (o->follow && sch->type_width < EVENTS_TYPE_WIDTH_GUESS)
			sch->type_width = EVENTS_TYPE_WIDTH_GUESS; /* rows to come: room for common kinds */
	}
	if (header)
		cli_print_event_header(stdout, sch);
	for (size_t i = json_array_size(evs); i-- > 0;)
		print_event(json_array_get(evs, i), sch);
	if (json_is_true(json_object_get(body, "truncated")))
		fprintf(stderr, "sandlens: the answer was cut at the server's size bound; "
				"narrow the query or lower --limit\n");
	int64_t next = json_integer_value(json_object_get(body, "next_after_id"));
	if (next > cursor)
		cursor = next;
	json_decref(body);
	rc = out_rc();
	if (rc || !o->follow)
		return rc;

	/* follow: the agent's event stream, resumed across agent restarts */
	if (!follow_stream(c, o, sch, header, &cursor, &rc))
		return rc;

	/* an agent without the stream route: oldest first after the cursor;
	 * since applies only to the first page (the cursor already guarantees
	 * newness) */
	while (!cli_stop) {
		char p2[2200], cur[32];
		snprintf(cur, sizeof(cur), "%lld", (long long)cursor);
		if (build_events_path(o, p2, sizeof(p2), 0) ||
		    cli_query_add(p2, sizeof(p2), "order", "asc") ||
		    cli_query_add(p2, sizeof(p2), "limit", FOLLOW_PAGE) ||
		    cli_query_add(p2, sizeof(p2), "after_id", cur))
			return cli_usage_error(cli_command_find("events"), "%s", "filter values too long");
		rc = cli_get_json(c, p2, 0, &body, NULL);
		if (rc)
			return cli_stop ? CLI_OK : rc;
		evs = json_object_get(body, "events");
		size_t n = json_array_size(evs);
		if (n && !header && sch) {
			if (!sch->loaded)
				cli_schema_fit_types(sch, evs);
			cli_print_event_header(stdout, sch);
			header = 1;
		}
		for (size_t i = 0; i < n; i++)
			print_event(json_array_get(evs, i), sch);
		next = json_integer_value(json_object_get(body, "next_after_id"));
		if (next > cursor)
			cursor = next;
		json_decref(body);
		if (fflush(stdout) != 0 || ferror(stdout))
			return out_rc();
		if (n < (size_t)atoi(FOLLOW_PAGE))
			sleep_ms(FOLLOW_INTERVAL_MS);
	}
	return out_rc();
}

static int containers(struct cli_conn *c, const struct opts *o)
{
	json_t *body = NULL;
	int rc = cli_get_json(c, "/api/v1/containers", 0, &body, NULL);
	if (rc)
		return rc;
	json_t *cs = json_object_get(body, "containers");
	if (o->json) {
		size_t i;
		json_t *x;
		json_array_foreach(cs, i, x) print_event(x, NULL);
	} else {
		cli_print_containers(stdout, cs);
	}
	if (json_is_true(json_object_get(body, "truncated")))
		fprintf(stderr, "sandlens: the list was cut at the server's size bound\n");
	json_decref(body);
	return out_rc();
}

static int status(struct cli_conn *c, const struct opts *o)
{
	json_t *h = NULL;
	long status = 0;
	int rc = cli_get_json(c, "/healthz", 1, &h, &status);
	if (rc)
		return rc;
	if (o->json) {
		print_event(h, NULL);
	} else {
		struct cli_resp m;
		const char *metrics = NULL;
		if (cli_http_get(c, "/metrics", &m) == 0 && m.status == 200)
			metrics = m.body;
		cli_print_status(stdout, h, metrics);
		cli_resp_free(&m);
	}
	json_decref(h);
	rc = out_rc();
	if (rc == CLI_OK && status == 503) {
		fprintf(stderr, "sandlens: the agent reports a failed module\n");
		return CLI_ERR;
	}
	return rc;
}


static void read_opts(const struct cli_run *r, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->type = cli_opt(r, "type");
	o->container = cli_opt(r, "container");
	o->pod = cli_opt(r, "pod");
	o->since = cli_opt(r, "since");
	o->until = cli_opt(r, "until");
	o->limit = cli_opt(r, "limit");
	o->follow = cli_flag(r, "follow");
	o->json = cli_flag(r, "json");
	o->no_host = cli_flag(r, "no-host");
}

/* connect, then fn(conn, options) */
static int run(struct cli_run *r, int (*fn)(struct cli_conn *, const struct opts *))
{
	struct opts o;
	struct cli_conn *c;
	read_opts(r, &o);
	g_no_host = o.no_host;
	int rc = cli_run_connect(r, &c);
	return rc ? rc : fn(c, &o);
}

int cli_cmd_events(struct cli_run *r)
{
	return run(r, events);
}

int cli_cmd_containers(struct cli_run *r)
{
	return run(r, containers);
}

int cli_cmd_status(struct cli_run *r)
{
	return run(r, status);
}

int cli_cmd_stats(struct cli_run *r)
{
	/* --sandbox ID: that id, source auto unless --source says otherwise */
	const char *sb = cli_opt(r, "sandbox"), *src = cli_opt(r, "source");
	if (sb && r->npos)
		return cli_usage_error(r->cmd, "give the id either as ID or as --sandbox ID, not both");
	if (src && !r->npos && !sb)
		return cli_usage_error(r->cmd, "--source needs an ID or --sandbox ID");
	if (src && strcmp(src, "cgroup") && strcmp(src, "guest") && strcmp(src, "auto"))
		return cli_usage_error(r->cmd, "--source: one of cgroup, guest, auto");
	if (!src && sb)
		src = "auto";
	if (src && !strcmp(src, "guest"))
		src = "guest_agent";
	struct cli_conn *c;
	int rc = cli_run_connect(r, &c);
	if (rc)
		return rc;
	/* --sandbox: the id must be a sandbox (exit 1 otherwise) */
	if (sb)
		return cli_stats_sandbox(c, sb, src, cli_flag(r, "json"));
	return cli_stats(c, r->npos ? r->pos[0] : NULL, src, cli_flag(r, "json"));
}

int cli_cmd_top(struct cli_run *r)
{
	struct cli_conn *c;
	int rc = cli_run_connect(r, &c);
	return rc ? rc : cli_top(c, cli_flag(r, "json"), cli_flag(r, "follow"), &cli_stop);
}
