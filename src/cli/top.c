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

void cli_print_top(FILE *out, json_t *body)
{
	json_t *cs = json_object_get(body, "containers");
	size_t n = json_array_size(cs);
	json_t **rows = calloc(n ? n : 1, sizeof(*rows));
	double ivs = num(body, "interval_seconds");

	if (!rows)
		return;
	for (size_t i = 0; i < n; i++)
		rows[i] = json_array_get(cs, i);
	qsort(rows, n, sizeof(*rows), by_wait_desc);
	fprintf(out, "interval %.2fs\n", ivs > 0 ? ivs : 0);
	fprintf(out, "%-12s  %-10s  %8s  %8s  %8s  %8s  %8s  %6s  %8s  %8s  %9s  %s\n", "CONTAINER", "RUNTIME",
		"WAITS/s", "P50", "P90", "P99", "MAX", "WAIT%", "INTERNAL", "EXTERNAL", "THROTTLED",
		"TOP NEIGHBOURS (wait caused)");
	for (size_t i = 0; i < n; i++) {
		json_t *c = rows[i], *iv = json_object_get(c, "interval"), *th = json_object_get(c, "throttling");
		json_t *nbs = json_object_get(c, "neighbours");
		char id[16], p50[16], p90[16], p99[16], mx[16], in[16], ex[16], thr[16], share[16], nid[16], nw[16];
		const char *rt = json_string_value(json_object_get(c, "runtime"));
		double sh = num(iv, "runnable_wait_share");

		short_id(c, id, sizeof(id));
		fmt_dur(num(iv, "p50_seconds"), p50, sizeof(p50));
		fmt_dur(num(iv, "p90_seconds"), p90, sizeof(p90));
		fmt_dur(num(iv, "p99_seconds"), p99, sizeof(p99));
		fmt_dur(num(iv, "max_seconds"), mx, sizeof(mx));
		fmt_dur(num(iv, "internal_seconds"), in, sizeof(in));
		fmt_dur(num(iv, "external_seconds"), ex, sizeof(ex));
		fmt_dur(json_is_object(th) ? num(th, "interval_throttled_seconds") : -1, thr, sizeof(thr));
		if (sh >= 0)
			snprintf(share, sizeof(share), "%.1f", sh * 100);
		else
			snprintf(share, sizeof(share), "-");
		char rts[11];
		snprintf(rts, sizeof(rts), "%s", rt && *rt ? rt : "-");
		fprintf(out, "%-12s  %-10s  %8.0f  %8s  %8s  %8s  %8s  %6s  %8s  %8s  %9s  ", cli_esc(id), cli_esc(rts),
			num(iv, "waits_per_second") > 0 ? num(iv, "waits_per_second") : 0, p50, p90, p99, mx, share,
			in, ex, thr);
		/* the two neighbours that caused the most wait */
		for (size_t j = 0; j < 2 && j < json_array_size(nbs); j++) {
			json_t *nb = json_array_get(nbs, j);
			short_id(nb, nid, sizeof(nid));
			fmt_dur(num(nb, "wait_seconds"), nw, sizeof(nw));
			fprintf(out, "%s%s (%s)", j ? ", " : "", cli_esc(nid), nw);
		}
		fprintf(out, "%s\n", json_array_size(nbs) ? "" : "-");
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
