/* `sandlens top`: per-container runqueue latency and CPU contention over the
 * agent's last interval, from GET /api/v1/sched (docs/CLI.md, docs/SCHED.md). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

#define TOP_REFRESH_MS 1000

/* "850ns", "12.3us", "4.56ms", "1.20s"; "-" for a negative value. */
static void fmt_dur(double s, char *buf, size_t len)
{
	if (s < 0)
		snprintf(buf, len, "-");
	else if (s == 0)
		snprintf(buf, len, "0");
	else if (s < 1e-6)
		snprintf(buf, len, "%.0fns", s * 1e9);
	else if (s < 1e-3)
		snprintf(buf, len, "%.1fus", s * 1e6);
	else if (s < 1)
		snprintf(buf, len, "%.2fms", s * 1e3);
	else
		snprintf(buf, len, "%.2fs", s);
}

static double num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : -1;
}

static void short_id(json_t *o, char *buf, size_t len)
{
	const char *id = json_string_value(json_object_get(o, "container_id"));
	if (json_is_true(json_object_get(o, "host")) || !id || !*id)
		snprintf(buf, len, "host");
	else
		snprintf(buf, len, "%.12s", id);
}

static int by_wait_desc(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	double wx = num(json_object_get(x, "interval"), "wait_seconds");
	double wy = num(json_object_get(y, "interval"), "wait_seconds");
	return wx < wy ? 1 : wx > wy ? -1 : 0;
}

/* The columns of the table, left to right. drop: the order in which they
 * go when the line does not fit cli_width (1 first; 0 never). Every figure
 * is of the agent's last interval ("interval 1.00s" above the table). */
enum { C_ID, C_RT, C_RATE, C_P50, C_P90, C_P99, C_MAX, C_SHARE, C_IN, C_EX, C_THR, C_NB, NCOLS };
static const struct {
	const char *head;
	int width, left, drop;
} cols[NCOLS] = {
	[C_ID] = {"CONTAINER", 12, 1, 0},   [C_RT] = {"RUNTIME", 10, 1, 1},
	[C_RATE] = {"WAITS/s", 8, 0, 7},    [C_P50] = {"P50", 8, 0, 5},
	[C_P90] = {"P90", 8, 0, 2},         [C_P99] = {"P99", 8, 0, 0},
	[C_MAX] = {"MAX", 8, 0, 8},         [C_SHARE] = {"WAIT%", 6, 0, 0},
	[C_IN] = {"INTERNAL", 8, 0, 3},     [C_EX] = {"EXTERNAL", 8, 0, 4},
	[C_THR] = {"THROTTLED", 9, 0, 6},   [C_NB] = {"TOP NEIGHBOURS (wait caused)", 0, 1, 0},
};
/* the neighbours column keeps at least this much room before others go */
#define NB_MIN 24
#define COL_GAP 2

/* Which columns fit width (0: all): the least important go first. */
static void fit_columns(int width, int show[NCOLS])
{
	int total = 0;
	for (int c = 0; c < NCOLS; c++) {
		show[c] = 1;
		total += (c ? COL_GAP : 0) + (c == C_NB ? NB_MIN : cols[c].width);
	}
	for (int d = 1; width > 0 && total > width && d <= 8; d++)
		for (int c = 0; c < NCOLS; c++)
			if (cols[c].drop == d) {
				show[c] = 0;
				total -= COL_GAP + cols[c].width;
			}
}

/* Neighbour wait of the interval ("interval_wait_seconds"); an agent
 * older than that field has only the total since it started: -1. */
static double nb_wait(json_t *nb)
{
	return num(nb, "interval_wait_seconds");
}

static int by_nb_wait_desc(const void *a, const void *b)
{
	double x = nb_wait(*(json_t *const *)a), y = nb_wait(*(json_t *const *)b);
	return x < y ? 1 : x > y ? -1 : 0;
}

/* "abc (1.2ms), def (3us)": the two neighbours that caused the most wait in
 * the interval (none that caused none), cut to room code points (0: no
 * limit). */
static void neighbours_cell(json_t *nbs, char *buf, size_t len, int room)
{
	size_t n = json_array_size(nbs), used = 0;
	json_t *v[64];
	if (n > 64)
		n = 64;
	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(nbs, i);
	qsort(v, n, sizeof(*v), by_nb_wait_desc);
	buf[0] = 0;
	for (size_t j = 0, shown = 0; j < n && shown < 2; j++) {
		char nid[16], nw[16];
		double w = nb_wait(v[j]);
		if (w <= 0)
			continue; /* caused no wait in this interval (or an old agent) */
		short_id(v[j], nid, sizeof(nid));
		fmt_dur(w, nw, sizeof(nw));
		used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s (%s)", shown ? ", " : "",
					 cli_esc(nid), nw);
		shown++;
	}
	if (!buf[0])
		snprintf(buf, len, "-");
	if (room > 0 && strlen(buf) > (size_t)room) /* ASCII: ids are hex, runtimes short */
		snprintf(buf + (room > 3 ? room - 3 : 0), len - (size_t)(room > 3 ? room - 3 : 0), "%s",
			 room > 3 ? "..." : "");
}

static void put_cell(FILE *out, int c, const char *v, int *first)
{
	if (!*first)
		fprintf(out, "%*s", COL_GAP, "");
	*first = 0;
	if (c == C_NB)
		fputs(v, out);
	else if (cols[c].left)
		fprintf(out, "%-*s", cols[c].width, v);
	else
		fprintf(out, "%*s", cols[c].width, v);
}

static void print_table(FILE *out, json_t *body);

void cli_print_top(FILE *out, json_t *body)
{
	/* columns are dropped to fit cli_width; on a terminal narrower than
	 * the columns that are never dropped, lines are cut: never wrapped */
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return;
	print_table(m, body);
	if (fclose(m) == 0)
		cli_put_lines(out, buf, cli_width);
	free(buf);
}

static void print_table(FILE *out, json_t *body)
{
	json_t *cs = json_object_get(body, "containers");
	size_t n = json_array_size(cs);
	json_t **rows = calloc(n ? n : 1, sizeof(*rows));
	double ivs = num(body, "interval_seconds");
	int show[NCOLS], first = 1, room = 0;

	if (!rows)
		return;
	for (size_t i = 0; i < n; i++)
		rows[i] = json_array_get(cs, i);
	qsort(rows, n, sizeof(*rows), by_wait_desc);
	fit_columns(cli_width, show);
	if (cli_width > 0) { /* what the neighbours column has left */
		room = cli_width;
		for (int c = 0; c < C_NB; c++)
			if (show[c])
				room -= cols[c].width + COL_GAP;
	}
	char line[64];
	snprintf(line, sizeof(line), "interval %.2fs: every figure is of this interval", ivs > 0 ? ivs : 0);
	if (cli_width > 0 && strlen(line) > (size_t)cli_width)
		line[cli_width] = 0;
	fprintf(out, "%s\n", line);
	for (int c = 0; c < NCOLS; c++)
		if (show[c]) {
			char h[64];
			snprintf(h, sizeof(h), "%s", cols[c].head);
			if (c == C_NB && room > 0 && strlen(h) > (size_t)room)
				h[room] = 0;
			put_cell(out, c, h, &first);
		}
	fputc('\n', out);
	for (size_t i = 0; i < n; i++) {
		json_t *c = rows[i], *iv = json_object_get(c, "interval"), *th = json_object_get(c, "throttling");
		char v[NCOLS][160];
		const char *rt = json_string_value(json_object_get(c, "runtime"));
		double sh = num(iv, "runnable_wait_share"), rate = num(iv, "waits_per_second");

		short_id(c, v[C_ID], sizeof(v[C_ID]));
		snprintf(v[C_ID], sizeof(v[C_ID]), "%s", cli_esc(v[C_ID]));
		snprintf(v[C_RT], 11, "%s", rt && *rt ? cli_esc(rt) : "-");
		snprintf(v[C_RATE], sizeof(v[C_RATE]), "%.0f", rate > 0 ? rate : 0);
		fmt_dur(num(iv, "p50_seconds"), v[C_P50], sizeof(v[C_P50]));
		fmt_dur(num(iv, "p90_seconds"), v[C_P90], sizeof(v[C_P90]));
		fmt_dur(num(iv, "p99_seconds"), v[C_P99], sizeof(v[C_P99]));
		fmt_dur(num(iv, "max_seconds"), v[C_MAX], sizeof(v[C_MAX]));
		fmt_dur(num(iv, "internal_seconds"), v[C_IN], sizeof(v[C_IN]));
		fmt_dur(num(iv, "external_seconds"), v[C_EX], sizeof(v[C_EX]));
		fmt_dur(json_is_object(th) ? num(th, "interval_throttled_seconds") : -1, v[C_THR], sizeof(v[C_THR]));
		if (sh >= 0)
			snprintf(v[C_SHARE], sizeof(v[C_SHARE]), "%.1f", sh * 100);
		else
			snprintf(v[C_SHARE], sizeof(v[C_SHARE]), "-");
		neighbours_cell(json_object_get(c, "neighbours"), v[C_NB], sizeof(v[C_NB]), room);
		first = 1;
		for (int k = 0; k < NCOLS; k++)
			if (show[k])
				put_cell(out, k, v[k], &first);
		fputc('\n', out);
	}
	free(rows);
}

int cli_top(struct cli_conn *c, int json, int follow, volatile sig_atomic_t *stop)
{
	int tty = isatty(STDOUT_FILENO);

	do {
		struct cli_resp r;
		json_error_t je;
		json_t *body;

		if (cli_http_get(c, "/api/v1/sched", &r))
			return cli_unreachable(c, &r);
		if (r.status != 200) {
			body = r.body ? json_loads(r.body, 0, &je) : NULL;
			const char *msg = json_string_value(json_object_get(json_object_get(body, "error"), "message"));
			fprintf(stderr, "sandlens: /api/v1/sched: HTTP %ld: %s\n", r.status, msg ? cli_esc(msg) : "error");
			json_decref(body);
			cli_resp_free(&r);
			return r.status == 400 ? CLI_USAGE : CLI_ERR;
		}
		body = r.body ? json_loads(r.body, 0, &je) : NULL;
		if (!body) {
			fprintf(stderr, "sandlens: /api/v1/sched: the API returned invalid JSON\n");
			cli_resp_free(&r);
			return CLI_ERR;
		}
		if (json) {
			fputs(r.body, stdout);
			fputc('\n', stdout);
		} else {
			if (follow && tty)
				fputs("\033[H\033[2J", stdout);
			cli_print_top(stdout, body);
		}
		json_decref(body);
		cli_resp_free(&r);
		if (fflush(stdout) != 0 || ferror(stdout))
			return errno == EPIPE ? CLI_OK : CLI_ERR;
		if (follow) {
			struct timespec ts = {TOP_REFRESH_MS / 1000, (long)(TOP_REFRESH_MS % 1000) * 1000000L};
			while (!*stop && nanosleep(&ts, &ts) != 0 && errno == EINTR)
				;
		}
	} while (follow && !*stop);
	return CLI_OK;
}
