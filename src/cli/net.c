/* `sandlens net`: per-container network figures from GET /api/v1/net
 * (docs/CLI.md, docs/NET.md): TCP retransmits and resets, kernel drops by
 * reason next to the devices' own drop/error counters and the netns' TCP
 * queue counters, and NET_RX/NET_TX softirq latency per CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"

static long long inum(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

static double dnum(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : 0;
}

/* "12.3us", "4.56ms" */
static void fmt_s(double s, char *b, size_t n)
{
	if (s <= 0)
		snprintf(b, n, "0");
	else if (s < 1e-3)
		snprintf(b, n, "%.1fus", s * 1e6);
	else if (s < 1)
		snprintf(b, n, "%.2fms", s * 1e3);
	else
		snprintf(b, n, "%.2fs", s);
}

/* the reason with the most drops, "-" none */
static void top_reason(json_t *drops, char *b, size_t n)
{
	const char *k, *best = NULL;
	json_t *v;
	long long bv = 0;

	json_object_foreach(drops, k, v) {
		if (json_integer_value(v) > bv) {
			bv = json_integer_value(v);
			best = k;
		}
	}
	snprintf(b, n, "%s", best ? best : "-");
}

void cli_print_net(FILE *out, json_t *body)
{
	json_t *cs = json_object_get(body, "containers"), *c, *sq = json_object_get(body, "softirq"), *s;
	size_t i;

	fprintf(out, "%-12s  %-10s  %8s  %7s  %7s  %8s  %-22s  %8s  %8s  %9s  %9s\n", "CONTAINER", "RUNTIME",
		"RETRANS", "RST_OUT", "RST_IN", "DROPS", "TOP DROP REASON", "DEV_DROP", "DEV_ERR", "LISTENOVF",
		"RCVPRUNED");
	json_array_foreach(cs, i, c) {
		const char *id = json_string_value(json_object_get(c, "container_id"));
		const char *rt = json_string_value(json_object_get(c, "runtime"));
		char sid[16], reason[23], rts[11];
		long long devd = 0, deve = 0, lo = 0, rp = 0;
		json_t *ns, *d;
		size_t j, k;

		snprintf(sid, sizeof(sid), "%.12s", json_is_true(json_object_get(c, "host")) || !id || !*id ? "host" : id);
		snprintf(rts, sizeof(rts), "%s", rt && *rt ? rt : "-");
		top_reason(json_object_get(c, "drops"), reason, sizeof(reason));
		json_array_foreach(json_object_get(c, "netns"), j, ns) {
			json_t *ctr = json_object_get(ns, "counters");
			lo += inum(ctr, "ListenOverflows");
			rp += inum(ctr, "RcvPruned");
			json_array_foreach(json_object_get(ns, "devices"), k, d) {
				devd += inum(d, "rx_dropped") + inum(d, "tx_dropped");
				deve += inum(d, "rx_errors") + inum(d, "tx_errors");
			}
		}
		fprintf(out, "%-12s  %-10s  %8lld  %7lld  %7lld  %8lld  %-22s  %8lld  %8lld  %9lld  %9lld\n",
			cli_esc(sid), cli_esc(rts),
			inum(c, "tcp_retransmit_segs") + inum(c, "tcp_synack_retransmits"), inum(c, "tcp_resets_sent"),
			inum(c, "tcp_resets_received"), inum(c, "drops_total"), cli_esc(reason), devd, deve, lo, rp);
	}
	fprintf(out, "\n%-4s  %-7s  %10s  %9s  %9s  %9s\n", "CPU", "VECTOR", "COUNT", "P50", "P99", "MAX");
	json_array_foreach(sq, i, s) {
		char p50[16], p99[16], mx[16];
		const char *v = json_string_value(json_object_get(s, "vector"));
		fmt_s(dnum(s, "p50_seconds"), p50, sizeof(p50));
		fmt_s(dnum(s, "p99_seconds"), p99, sizeof(p99));
		fmt_s(dnum(s, "max_seconds"), mx, sizeof(mx));
		fprintf(out, "%-4lld  %-7s  %10lld  %9s  %9s  %9s\n", inum(s, "cpu"), v ? cli_esc(v) : "-",
			inum(s, "count"), p50, p99, mx);
	}
}

int cli_net(struct cli_conn *c, int json)
{
	json_t *body = NULL;
	long status = 0;
	int rc = cli_get_json(c, "/api/v1/net", 0, &body, &status);

	if (rc != CLI_OK)
		return rc;
	if (json) {
		char *t = json_dumps(body, JSON_COMPACT);
		if (t)
			puts(t);
		free(t);
	} else {
		cli_print_net(stdout, body);
	}
	json_decref(body);
	return fflush(stdout) ? CLI_ERR : CLI_OK;
}

int cli_cmd_net(struct cli_run *r)
{
	struct cli_conn *c;
	int rc = cli_run_connect(r, &c);
	return rc ? rc : cli_net(c, cli_flag(r, "json"));
}
