/* `sandlens io`: per-container block I/O (queue and device latency, requests,
 * bytes per disk and op), page cache and writeback figures, and per-disk
 * /proc/diskstats next to the module's counts, from GET /api/v1/io
 * (docs/CLI.md, docs/IO.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"

static double num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : -1;
}

static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

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

/* "512B", "4.0KiB", "12.5MiB", "1.2GiB". */
static void fmt_bytes(double b, char *buf, size_t len)
{
	static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int i = 0;

	if (b < 0) {
		snprintf(buf, len, "-");
		return;
	}
	while (b >= 1024 && i < 4) {
		b /= 1024;
		i++;
	}
	snprintf(buf, len, i ? "%.1f%s" : "%.0f%s", b, u[i]);
}

static void who(json_t *o, char *buf, size_t len)
{
	const char *kind = str(o, "kind"), *id = str(o, "container_id");

	if (!strcmp(kind, "host") || (!*id && strcmp(kind, "pod")))
		snprintf(buf, len, "host");
	else if (!strcmp(kind, "pod"))
		snprintf(buf, len, "pod/%.8s", str(o, "pod_uid"));
	else
		snprintf(buf, len, "%.12s", id);
}

static int by_device_time(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	double sx = num(json_object_get(x, "device_stage"), "seconds");
	double sy = num(json_object_get(y, "device_stage"), "seconds");
	return sx < sy ? 1 : sx > sy ? -1 : 0;
}

void cli_print_io(FILE *out, json_t *body)
{
	json_t *ser = json_object_get(body, "series"), *pc = json_object_get(body, "pagecache");
	json_t *disks = json_object_get(body, "disks");
	size_t n = json_array_size(ser);
	json_t **rows = calloc(n ? n : 1, sizeof(*rows));

	if (!rows)
		return;
	for (size_t i = 0; i < n; i++)
		rows[i] = json_array_get(ser, i);
	qsort(rows, n, sizeof(*rows), by_device_time);
	fprintf(out, "%-12s  %-10s  %-10s  %-7s  %8s  %9s  %7s  %8s  %8s  %8s  %8s  %8s  %4s\n", "CONTAINER", "RUNTIME",
		"DEVICE", "OP", "REQS", "BYTES", "REQS/iv", "Q_P50", "Q_P99", "DEV_P50", "DEV_P99", "DEV_MAX", "ERR");
	for (size_t i = 0; i < n; i++) {
		json_t *s = rows[i], *q = json_object_get(s, "queue"), *d = json_object_get(s, "device_stage");
		char id[24], by[16], qp50[16], qp99[16], p50[16], p99[16], mx[16];
		int queued = num(q, "count") > 0;
		who(s, id, sizeof(id));
		fmt_bytes(num(s, "bytes"), by, sizeof(by));
		fmt_dur(queued ? num(q, "p50_seconds") : -1, qp50, sizeof(qp50));
		fmt_dur(queued ? num(q, "p99_seconds") : -1, qp99, sizeof(qp99));
		fmt_dur(num(d, "p50_seconds"), p50, sizeof(p50));
		fmt_dur(num(d, "p99_seconds"), p99, sizeof(p99));
		fmt_dur(num(d, "max_seconds"), mx, sizeof(mx));
		fprintf(out, "%-12s  %-10.10s  %-10.10s  %-7s  %8.0f  %9s  %7.0f  %8s  %8s  %8s  %8s  %8s  %4.0f\n", cli_esc(id),
			cli_esc(str(s, "runtime")), cli_esc(str(s, "device")), cli_esc(str(s, "op")), num(s, "requests"), by,
			num(json_object_get(s, "interval"), "requests"), qp50, qp99, p50, p99, mx, num(s, "errors"));
	}
	if (!n)
		fprintf(out, "(no block requests counted yet)\n");
	free(rows);
	fprintf(out, "\n%-12s  %-10s  %12s  %8s  %8s  %10s  %9s  %10s\n", "CONTAINER", "RUNTIME", "PAGECACHE+", "RA_SYNC",
		"RA_ASYNC", "RA_PAGES", "DIRTY_THR", "DIRTY_WAIT");
	for (size_t i = 0; i < json_array_size(pc); i++) {
		json_t *g = json_array_get(pc, i);
		char id[24], w[16];
		who(g, id, sizeof(id));
		fmt_dur(num(g, "dirty_throttled_seconds"), w, sizeof(w));
		fprintf(out, "%-12s  %-10.10s  %12.0f  %8.0f  %8.0f  %10.0f  %9.0f  %10s\n", cli_esc(id),
			cli_esc(str(g, "runtime")), num(g, "pagecache_added_pages"), num(g, "readahead_sync"),
			num(g, "readahead_async"), num(g, "readahead_pages"), num(g, "dirty_throttled"), w);
	}
	fprintf(out, "\n%-10s  %-8s  %10s  %10s  %10s  %10s  %9s  %10s\n", "DISK", "DEVNUM", "SL_READS", "STAT_READS",
		"SL_WRITES", "STAT_WRITE", "IN_FLIGHT", "IO_TICKS");
	for (size_t i = 0; i < json_array_size(disks); i++) {
		json_t *d = json_array_get(disks, i), *mine = json_object_get(d, "requests");
		json_t *st = json_object_get(d, "diskstats"), *c = json_object_get(st, "completed");
		char t[16];
		fmt_dur(json_is_object(st) ? num(st, "io_ticks_ms") / 1e3 : -1, t, sizeof(t));
		fprintf(out, "%-10.10s  %-8s  %10.0f  %10.0f  %10.0f  %10.0f  %9.0f  %10s\n", cli_esc(str(d, "device")),
			cli_esc(str(d, "devnum")), num(mine, "read"), json_is_object(c) ? num(c, "read") : -1,
			num(mine, "write"), json_is_object(c) ? num(c, "write") : -1,
			json_is_object(st) ? num(st, "in_flight") : -1, t);
	}
}

int cli_io(struct cli_conn *c, int json)
{
	struct cli_resp r;
	json_error_t je;
	json_t *body;

	if (cli_http_get(c, "/api/v1/io", &r))
		return cli_unreachable(c, &r);
	body = r.body ? json_loads(r.body, 0, &je) : NULL;
	if (r.status != 200) {
		const char *msg = json_string_value(json_object_get(json_object_get(body, "error"), "message"));
		fprintf(stderr, "sandlens: /api/v1/io: HTTP %ld: %s\n", r.status, msg ? cli_esc(msg) : "error");
		json_decref(body);
		cli_resp_free(&r);
		return r.status == 400 ? CLI_USAGE : CLI_ERR;
	}
	if (!body) {
		fprintf(stderr, "sandlens: /api/v1/io: the API returned invalid JSON\n");
		cli_resp_free(&r);
		return CLI_ERR;
	}
	if (json) {
		fputs(r.body, stdout);
		fputc('\n', stdout);
	} else {
		cli_print_io(stdout, body);
	}
	json_decref(body);
	cli_resp_free(&r);
	if (fflush(stdout) != 0 || ferror(stdout))
		return errno == EPIPE ? CLI_OK : CLI_ERR;
	return CLI_OK;
}

int cli_cmd_io(struct cli_run *r)
{
	struct cli_conn *c;
	int rc = cli_run_connect(r, &c);
	return rc ? rc : cli_io(c, cli_flag(r, "json"));
}
