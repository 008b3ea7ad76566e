/* Human-readable tables for the CLI. */
#include "cli/cli.h"

#include "cli/schema.h"
#include "common/detail.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static long long num(json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

int cli_width; /* cli.h */

/* Ring of escaped copies handed out by cli_esc (the CLI is one thread). */
#define ESC_RING 16
static char *esc_ring[ESC_RING];
static unsigned esc_next;

const char *cli_esc(const char *s)
{
	if (!s)
		s = "";
	size_t n = strlen(s), need = sl_term_escape(s, n, NULL, 0);
	char *b = malloc(need + 1);
	if (!b)
		return "?";
	sl_term_escape(s, n, b, need + 1);
	free(esc_ring[esc_next]);
	esc_ring[esc_next] = b;
	esc_next = (esc_next + 1) % ESC_RING;
	return b;
}

void cli_put_safe(FILE *out, const char *s)
{
	fputs(cli_esc(s), out);
}

const char *cli_esc_sym(const char *s)
{
	static const char mark[] = "\xe2\x80\xa6"; /* U+2026 */
	const char *e = cli_esc(s);
	size_t cp = 0, i = 0;
	for (; e[i]; i++)
		if (((unsigned char)e[i] & 0xc0) != 0x80 && cp++ == CLI_SYM_MAX)
			break;
	if (!e[i])
		return e;
	/* e[i] begins code point CLI_SYM_MAX + 1: keep CLI_SYM_MAX - 1 and the mark */
	size_t keep = 0;
	for (cp = 0; keep < i; keep++)
		if (((unsigned char)e[keep] & 0xc0) != 0x80 && cp++ == CLI_SYM_MAX - 1)
			break;
	char *b = malloc(keep + sizeof(mark));
	if (!b)
		return "?";
	memcpy(b, e, keep);
	memcpy(b + keep, mark, sizeof(mark));
	unsigned last = (esc_next + ESC_RING - 1) % ESC_RING; /* e's slot: replaced */
	free(esc_ring[last]);
	esc_ring[last] = b;
	return b;
}

/* Code points of UTF-8 text (what cli_esc returns is valid UTF-8, each
 * escape plain ASCII): the width a cell takes, without wcwidth. */
static size_t cli_cps(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

void cli_put_padded(FILE *out, const char *s, int width)
{
	fputs(s, out);
	for (size_t n = cli_cps(s); n < (size_t)(width > 0 ? width : 0); n++)
		fputc(' ', out);
}

/* byte offset of code point number cp of p[0..ll) (ll when fewer) */
static size_t cp_offset(const char *p, size_t ll, size_t cp)
{
	size_t n = 0, i;
	for (i = 0; i < ll; i++)
		if (((unsigned char)p[i] & 0xc0) != 0x80 && n++ == cp)
			break;
	return i;
}

void cli_put_lines(FILE *out, const char *text, int width)
{
	for (const char *p = text; *p;) {
		size_t ll = strcspn(p, "\n");
		if (width > 3 && cp_offset(p, ll, (size_t)width) < ll) {
			fwrite(p, 1, cp_offset(p, ll, (size_t)width - 3), out); /* cut: "..." says so */
			fputs("...", out);
		} else {
			fwrite(p, 1, width > 0 ? cp_offset(p, ll, (size_t)width) : ll, out);
		}
		fputc('\n', out);
		p += ll;
		if (*p == '\n')
			p++;
	}
}

void cli_short_time(const char *t, char *buf, size_t len)
{
	/* YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ -> YYYY-MM-DDTHH:MM:SS.mmmZ */
	if (strlen(t) == 30 && t[19] == '.' && t[29] == 'Z')
		snprintf(buf, len, "%.23sZ", t);
	else
		snprintf(buf, len, "%s", t);
}

void cli_short_container(json_t *ev, char *buf, size_t len)
{
	const char *id = str(ev, "container_id"), *rt = str(ev, "runtime"), *pod = str(ev, "pod_uid");
	if (*id)
		snprintf(buf, len, "%.12s", id);
	else if (*pod) /* a pod-level subject (e.g. a pod's memcg) */
		snprintf(buf, len, "pod:%.8s", pod);
	else if (*rt)
		snprintf(buf, len, "%s", rt);
	else
		snprintf(buf, len, "-");
}

/* An event of a kind without a template: its own scalar fields as
 * key=value (not the common ones, not objects or arrays), so the row is
 * never blank. */
static void key_values(FILE *f, const struct cli_schema *s, json_t *ev)
{
	const char *k;
	json_t *v;
	int first = 1;
	json_object_foreach(ev, k, v)
	{
		if (cli_schema_is_common(s, k) || json_is_object(v) || json_is_array(v))
			continue;
		if (!first)
			fputc(' ', f);
		first = 0;
		fprintf(f, "%s=", cli_esc(k));
		if (json_is_string(v)) {
			fputs(cli_esc(json_string_value(v)), f);
		} else {
			char *d = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
			fputs(d ? cli_esc(d) : "?", f);
			free(d);
		}
	}
}

char *cli_event_details(const struct cli_schema *s, json_t *ev)
{
	const struct cli_kind *k = cli_schema_kind(s, json_string_value(json_object_get(ev, "type")));
	if (k && k->details) {
		char small[512];
		size_t need = sl_detail_render(k->details, ev, small, sizeof(small));
		char *b = malloc(need + 1);
		if (b) {
			if (need < sizeof(small))
				memcpy(b, small, need + 1);
			else
				sl_detail_render(k->details, ev, b, need + 1);
		}
		return b;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	key_values(f, s, ev);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

void cli_print_event_header(FILE *out, const struct cli_schema *s)
{
	char h[160];
	snprintf(h, sizeof(h), "%-24s %-*s %-12s %7s %-16s %s\n", "TIME", s->type_width, "TYPE", "CONTAINER", "PID",
		 "COMM", "DETAILS");
	cli_put_lines(out, h, cli_width);
}

static void event_row(FILE *out, const struct cli_schema *s, json_t *ev);

void cli_print_event_row(FILE *out, const struct cli_schema *s, json_t *ev)
{
	if (cli_width <= 0) {
		event_row(out, s, ev);
		return;
	}
	char *buf = NULL; /* DETAILS cut to the width (with "...") */
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return;
	event_row(m, s, ev);
	if (fclose(m) == 0)
		cli_put_lines(out, buf, cli_width);
	free(buf);
}

static void event_row(FILE *out, const struct cli_schema *s, json_t *ev)
{
	char t[64], c[64], pid[24];
	cli_short_time(str(ev, "time"), t, sizeof(t));
	cli_short_container(ev, c, sizeof(c));
	/* a subject that is not a task (a memcg, a device, a CPU) has no pid
	 * or comm: "-", not a made-up 0 */
	const json_t *jp = json_object_get(ev, "pid");
	if (json_is_integer(jp))
		snprintf(pid, sizeof(pid), "%lld", (long long)json_integer_value(jp));
	else
		snprintf(pid, sizeof(pid), "-");
	const char *comm = json_is_string(json_object_get(ev, "comm")) ? str(ev, "comm") : "-";
	/* escapes change a cell's width: pad the escaped text, by code points
	 * (printf's %-16s counts bytes: a multibyte comm came out short) */
	cli_put_padded(out, cli_esc(t), 24);
	fputc(' ', out);
	cli_put_padded(out, cli_esc(str(ev, "type")), s->type_width);
	fputc(' ', out);
	cli_put_padded(out, cli_esc(c), 12);
	fprintf(out, " %7s ", pid);
	cli_put_padded(out, cli_esc(comm), 16);
	fputc(' ', out);
	char *d = cli_event_details(s, ev);
	fprintf(out, "%s\n", d ? d : "");
	free(d);
}

/* "exec=3 exit=1": the non-zero counts of by_type in the API's order (the
 * kinds are the agent's: this table names none). "-" when there are none. */
static void by_type(FILE *out, json_t *bt)
{
	const char *k;
	json_t *v;
	int any = 0;
	json_object_foreach(bt, k, v)
	{
		if (!json_integer_value(v))
			continue;
		fprintf(out, "%s%s=%lld", any++ ? " " : "", cli_esc(k), (long long)json_integer_value(v));
	}
	if (!any)
		fputc('-', out);
}

void cli_print_containers(FILE *out, json_t *cs)
{
	size_t i;
	json_t *c;
	fprintf(out, "%-12s %-10s %-36s %7s  %-24s %s\n", "CONTAINER", "RUNTIME", "POD", "EVENTS", "LAST SEEN",
		"BY TYPE");
	json_array_foreach(cs, i, c)
	{
		char t[64], id[16];
		cli_short_time(str(c, "last_seen"), t, sizeof(t));
		snprintf(id, sizeof(id), "%.12s", str(c, "container_id"));
		cli_put_padded(out, cli_esc(id), 12);
		fputc(' ', out);
		cli_put_padded(out, *str(c, "runtime") ? cli_esc(str(c, "runtime")) : "-", 10);
		fputc(' ', out);
		cli_put_padded(out, *str(c, "pod_uid") ? cli_esc(str(c, "pod_uid")) : "-", 36);
		fprintf(out, " %7lld  ", num(c, "events"));
		cli_put_padded(out, cli_esc(t), 24);
		fputc(' ', out);
		by_type(out, json_object_get(c, "by_type"));
		fputc('\n', out);
	}
}

/* Metric families the status summary shows, in this order. */
static const char *const summary_families[] = {
	"sandlens_events_total",
	"sandlens_events_dropped_total",
	"sandlens_exec_truncated_total",
	"sandlens_ringbuf_reserve_failures_total",
	"sandlens_ringbuf_fill_ratio",
	"sandlens_store_queue_depth",
	"sandlens_store_queue_dropped_total",
	"process_resident_memory_bytes",
	"process_cpu_seconds_total",
};

/* A sample line "name{labels} value" whose value is 0 (a counter that never
 * counted: most drop reasons of most kinds). */
static int zero_sample(const char *line, size_t len)
{
	const char *sp = memrchr(line, ' ', len);
	if (!sp)
		return 0;
	size_t vl = len - (size_t)(sp + 1 - line);
	return (vl == 1 && sp[1] == '0') || (vl == 3 && !strncmp(sp + 1, "0.0", 3));
}

/* Counters (_total) that are 0 are left out and counted: a status with nine
 * modules has about a hundred drop counters and nearly all are 0. */
static void print_summary(FILE *out, const char *metrics)
{
	int any = 0, zeros = 0;
	for (size_t f = 0; f < sizeof(summary_families) / sizeof(summary_families[0]); f++) {
		const char *fam = summary_families[f];
		size_t fl = strlen(fam);
		for (const char *p = metrics; p && *p;) {
			const char *eol = strchr(p, '\n');
			size_t ll = eol ? (size_t)(eol - p) : strlen(p);
			if (ll > fl && !strncmp(p, fam, fl) && (p[fl] == '{' || p[fl] == ' ')) {
				if (fl > 6 && !strcmp(fam + fl - 6, "_total") && zero_sample(p, ll)) {
					zeros++;
					p = eol ? eol + 1 : NULL;
					continue;
				}
				if (!any++)
					fprintf(out, "\nSELF-METRICS\n");
				char *line = strndup(p, ll);
				fprintf(out, "  %s\n", line ? cli_esc(line) : "?");
				free(line);
			}
			p = eol ? eol + 1 : NULL;
		}
	}
	if (zeros)
		fprintf(out, "  (%d counters at 0 not shown; /metrics has every one)\n", zeros);
}

void cli_print_status(FILE *out, json_t *h, const char *metrics)
{
	json_t *up = json_object_get(h, "uptime_seconds");
	fprintf(out, "status: %s", *str(h, "status") ? cli_esc(str(h, "status")) : "?");
	if (*str(h, "version"))
		fprintf(out, "   version: %s", cli_esc(str(h, "version")));
	if (json_is_number(up))
		fprintf(out, "   uptime: %.0fs", json_number_value(up));
	if (json_is_boolean(json_object_get(h, "attribution")))
		fprintf(out, "   attribution: %s",
			json_is_true(json_object_get(h, "attribution")) ? "on" : "off");
	fputc('\n', out);

	size_t i, j;
	json_t *m, *hk;
	json_array_foreach(json_object_get(h, "modules"), i, m)
	{
		fprintf(out, "\nMODULE %-12s %s", cli_esc(str(m, "name")), cli_esc(str(m, "state")));
		if (*str(m, "error")) {
			fputs("  error: ", out);
			cli_put_safe(out, str(m, "error"));
		}
		fputc('\n', out);
		json_t *hooks = json_object_get(m, "hooks");
		if (json_array_size(hooks))
			fprintf(out, "  %-44s %-9s %s\n", "HOOK", "STATE", "REASON");
		json_array_foreach(hooks, j, hk)
		{
			fprintf(out, "  %-44s %-9s ", cli_esc(str(hk, "name")), cli_esc(str(hk, "state")));
			cli_put_safe(out, str(hk, "reason"));
			fputc('\n', out);
		}
	}
	print_summary(out, metrics);
}
