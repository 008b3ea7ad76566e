/* sandlens: command-line client of sandlensd's local API (docs/CLI.md).
 *
 *   sandlens [--api URL | --socket PATH] [--token-file F] events [filters] [--follow] [--json]
 *   sandlens [--api URL | --socket PATH] containers [--json]
 *   sandlens [--api URL | --socket PATH] status [--json]
 *   sandlens [--api URL | --socket PATH] stats [ID] [--json]
 *   sandlens [--api URL | --socket PATH] top [--follow] [--json]
 *
 * Exit: 0 ok, 1 API unreachable or server error, 2 usage error (including a
 * parameter the server rejects with 400).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/follow.h"
#include "cli/schema.h"
#include "cli/stats.h"
#include "cli/tasks.h"

#define FOLLOW_INTERVAL_MS 500
#define FOLLOW_PAGE "1000"

volatile sig_atomic_t cli_stop;

static void on_signal(int sig)
{
	(void)sig;
	cli_stop = 1;
}

void cli_catch_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN); /* a closed stdout shows up as EPIPE */
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sandlens [--api URL | --socket PATH] <command> [options]\n"
		"\n"
		"commands:\n"
		"  events      list events of every kind the agent's modules declare\n"
		"  containers  list containers seen, with event counts\n"
		"  status      agent health: modules, hooks, self-metrics\n"
		"  stats [ID]  workload statistics: the list, or one pod uid / sandbox / container id\n"
		"  top         per-container runqueue latency, contention, neighbours (-f refreshes)\n"
		"  net         per-container retransmits, resets, drops by reason, softirq latency\n"
		"  profile     on-/off-CPU profile of a container, pod or process to a file\n"
		"  tasks       on-demand tasks: list, show ID, stop ID\n"
		"  syscall-errors  failed system calls of a container by (syscall, errno)\n"
		"              (sandlens profile --help for their options)\n"
		"\n"
		"connection (default: unix:" CLI_DEFAULT_SOCKET " when accessible, else " CLI_DEFAULT_API "):\n"
		"  --api URL        API base URL (env SANDLENS_API)\n"
		"  --socket PATH    talk HTTP over this unix socket (env SANDLENS_SOCKET)\n"
		"  --token-file F   send the admin bearer token read from F (env SANDLENS_TOKEN_FILE;\n"
		"                   default " CLI_DEFAULT_TOKEN_FILE " when readable)\n"
		"\n"
		"events options:\n"
		"  --type T         one event kind (the TYPE column; GET /api/v1/schema/events)\n"
		"  --container ID   container id or a prefix of >= 4 characters\n"
		"  --pod UID        pod UID\n"
		"  --since T        RFC 3339 time, duration ago (90s, 5m, 2h, 7d) or ns since epoch\n"
		"  --until T        same forms; exclusive\n"
		"  --limit N        at most N events (1..10000; server default 100)\n"
		"  -f, --follow     keep printing new events as they come until interrupted; survives\n"
		"                   agent restarts (resumes after the last event printed)\n"
		"\n"
		"common options:\n"
		"  --json           one compact JSON object per line instead of a table\n"
		"  -h, --help       this text\n"
		"\n"
		"exit status: 0 ok, 1 API unreachable or server error, 2 usage error\n");
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "sandlens: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'sandlens --help'.\n");
	return CLI_USAGE;
}

struct opts {
	const char *api, *socket;
	const char *type, *container, *pod, *since, *until, *limit;
	int follow, json;
	int events_only_set; /* an events-only option was given */
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

/* JSON line (s NULL) or table row */
static void print_event(json_t *ev, const struct cli_schema *s)
{
	int json = !s;
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

static void sleep_ms(int ms);

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
		*rc = usage_error("%s", "filter values too long");
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
static int cmd_events(struct cli_conn *c, const struct opts *o)
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
		return usage_error("%s", "filter values too long");
	rc = cli_get_json(c, path, 0, &body, NULL);
	if (rc)
		return rc;
	json_t *evs = json_object_get(body, "events");
	int header = sch && (json_array_size(evs) || !o->follow);
	if (sch && !sch->loaded)
		cli_schema_fit_types(sch, evs); /* no schema: as wide as the types seen */
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
			return usage_error("%s", "filter values too long");
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

static int cmd_containers(struct cli_conn *c, const struct opts *o)
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

static int cmd_status(struct cli_conn *c, const struct opts *o)
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

static int cmd_top(struct cli_conn *c, const struct opts *o)
{
	return cli_top(c, o->json, o->follow, &cli_stop);
}

static int cmd_net(struct cli_conn *c, const struct opts *o) { return cli_net(c, o->json); }

static const char *g_stats_id; /* the ID of `stats ID`, NULL for the list */

static int cmd_stats(struct cli_conn *c, const struct opts *o)
{
	return cli_stats(c, g_stats_id, o->json);
}

int main(int argc, char **argv)
{
	enum { O_API = 256, O_SOCKET, O_TYPE, O_CONTAINER, O_POD, O_SINCE, O_UNTIL, O_LIMIT, O_JSON };
	static const struct option longopts[] = {
		{"api", required_argument, NULL, O_API},
		{"socket", required_argument, NULL, O_SOCKET},
		{"type", required_argument, NULL, O_TYPE},
		{"container", required_argument, NULL, O_CONTAINER},
		{"pod", required_argument, NULL, O_POD},
		{"since", required_argument, NULL, O_SINCE},
		{"until", required_argument, NULL, O_UNTIL},
		{"limit", required_argument, NULL, O_LIMIT},
		{"follow", no_argument, NULL, 'f'},
		{"json", no_argument, NULL, O_JSON},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct opts o = {0};
	int ch, trc;

	/* --token-file is global: taken out before any command parses argv */
	if (cli_take_token_option(&argc, argv))
		return usage_error("%s", "--token-file needs a PATH");
	if (cli_token_file) {
		char tok[260];
		int tl = cli_read_token(cli_token_file, tok, sizeof(tok));
		memset(tok, 0, sizeof(tok));
		if (tl < 0) {
			fprintf(stderr, "sandlens: --token-file %s: %s\n", cli_token_file,
				tl == -EINVAL ? "not a regular file holding one token of 16..256 printable characters"
					      : strerror(-tl));
			return CLI_USAGE;
		}
	}

	/* profile, tasks, syscall-errors parse their own options (src/cli/tasks.c) */
	if (cli_task_dispatch(argc, argv, &trc))
		return trc;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "fh", longopts, NULL)) != -1) {
		switch (ch) {
		case O_API: o.api = optarg; break;
		case O_SOCKET: o.socket = optarg; break;
		case O_TYPE: o.type = optarg; o.events_only_set = 1; break;
		case O_CONTAINER: o.container = optarg; o.events_only_set = 1; break;
		case O_POD: o.pod = optarg; o.events_only_set = 1; break;
		case O_SINCE: o.since = optarg; o.events_only_set = 1; break;
		case O_UNTIL: o.until = optarg; o.events_only_set = 1; break;
		case O_LIMIT: o.limit = optarg; o.events_only_set = 1; break;
		case 'f': o.follow = 1; o.events_only_set = 1; break;
		case O_JSON: o.json = 1; break;
		case 'h': usage(stdout); return CLI_OK;
		case '?':
		default:
			if (optopt && optopt < 256)
				return usage_error("unknown or incomplete option -%s",
						   (char[]){(char)optopt, 0});
			return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("%s", "missing command (events, containers, status, stats, top, profile, tasks or syscall-errors)");
	int stats_id = optind + 1 < argc && !strcmp(argv[optind], "stats"); /* stats ID */
	if (optind + 1 + stats_id < argc)
		return usage_error("unexpected argument '%s'", argv[optind + 1 + stats_id]);
	if (stats_id)
		g_stats_id = argv[optind + 1];
	const char *cmd = argv[optind];
	int (*fn)(struct cli_conn *, const struct opts *) = NULL;
	if (!strcmp(cmd, "events"))
		fn = cmd_events;
	else if (!strcmp(cmd, "containers"))
		fn = cmd_containers;
	else if (!strcmp(cmd, "status"))
		fn = cmd_status;
	else if (!strcmp(cmd, "stats"))
		fn = cmd_stats;
	else if (!strcmp(cmd, "top"))
		fn = cmd_top;
	else if (!strcmp(cmd, "net"))
		fn = cmd_net;
	else
		return usage_error("unknown command '%s'", cmd);
	if (fn == cmd_top && o.events_only_set && !(o.follow && !o.type && !o.container && !o.pod &&
						      !o.since && !o.until && !o.limit))
		return usage_error("%s", "'top' takes only --follow and --json (and --api/--socket)");
	if (fn != cmd_events && fn != cmd_top && o.events_only_set)
		return usage_error("'%s' takes only --json (and --api/--socket)", cmd);

	char base[1024];
	int bad = cli_api_resolve(&o.api, &o.socket, base, sizeof(base));
	if (bad == -1)
		return usage_error("bad --api URL '%s'", o.api);
	if (bad)
		return usage_error("--api wants a URL like http://127.0.0.1:9753, not '%s'", o.api);
	cli_catch_signals();

	struct cli_conn c;
	if (cli_http_init(&c, base, o.socket)) {
		fprintf(stderr, "sandlens: libcurl initialisation failed\n");
		return CLI_ERR;
	}
	int rc = fn(&c, &o);
	cli_http_close(&c);
	return rc;
}
