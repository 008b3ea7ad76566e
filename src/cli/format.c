/* Human-readable tables for the CLI. */
#include "cli/cli.h"

#include "agent/module.h" /* sl_registry: every kind the agent emits (until the CLI reads the schema route) */

#include <inttypes.h>
#include <signal.h>
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

void cli_put_safe(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\x%02x", *p);
		else
			fputc(*p, out);
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
	const char *id = str(ev, "container_id"), *rt = str(ev, "runtime");
	if (*id)
		snprintf(buf, len, "%.12s", id);
	else if (*rt)
		snprintf(buf, len, "%s", rt);
	else
		snprintf(buf, len, "-");
}

void cli_signal_name(int sig, char *buf, size_t len)
{
	const char *n = sig > 0 ? sigabbrev_np(sig) : NULL;
	if (n)
		snprintf(buf, len, "SIG%s", n);
	else
		snprintf(buf, len, "SIG%d", sig);
}

/* "pid(comm)" of an actor/victim object or of pid/comm fields. */
static void task(FILE *f, long long pid, const char *comm)
{
	fprintf(f, "%lld(", pid);
	cli_put_safe(f, comm);
	fputc(')', f);
}

static void duration(FILE *f, long long ns)
{
	if (ns < 1000000LL)
		fprintf(f, "%.0fus", (double)(ns > 0 ? ns : 0) / 1e3);
	else if (ns >= 3600LL * 1000000000LL)
		fprintf(f, "%.1fh", (double)ns / 3.6e12);
	else if (ns >= 60LL * 1000000000LL)
		fprintf(f, "%.1fm", (double)ns / 6e10);
	else if (ns >= 1000000000LL)
		fprintf(f, "%.2fs", (double)ns / 1e9);
	else
		fprintf(f, "%.1fms", (double)ns / 1e6);
}

char *cli_event_details(json_t *ev)
{
	char *buf = NULL, sig[32];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	const char *type = str(ev, "type");

	if (!strcmp(type, "exec")) {
		json_t *argv = json_object_get(ev, "argv");
		if (json_is_array(argv) && json_array_size(argv)) {
			size_t i;
			json_t *a;
			json_array_foreach(argv, i, a)
			{
				if (i)
					fputc(' ', f);
				cli_put_safe(f, json_string_value(a) ? json_string_value(a) : "");
			}
		} else if (json_is_string(argv)) {
			cli_put_safe(f, json_string_value(argv));
		} else {
			cli_put_safe(f, str(ev, "filename"));
		}
		if (json_is_true(json_object_get(ev, "args_truncated")))
			fputs(" ...[args truncated]", f);
		if (num(ev, "truncated_count") > 0)
			fprintf(f, " (+%lld execs suppressed)", num(ev, "truncated_count"));
	} else if (!strcmp(type, "exit")) {
		long long s = num(ev, "signal");
		if (s) {
			cli_signal_name((int)s, sig, sizeof(sig));
			fprintf(f, "killed by %s", sig);
			if (json_is_true(json_object_get(ev, "core_dumped")))
				fputs(" (core dumped)", f);
		} else {
			fprintf(f, "exit %lld", num(ev, "exit_code"));
		}
		if (json_object_get(ev, "lifetime_ns")) {
			fputs(" after ", f);
			duration(f, num(ev, "lifetime_ns"));
		}
		if (num(ev, "truncated_count") > 0)
			fprintf(f, " (+%lld exits suppressed, %lld abnormal)", num(ev, "truncated_count"),
				num(ev, "truncated_abnormal"));
	} else if (!strcmp(type, "signal")) {
		cli_signal_name((int)num(ev, "signal"), sig, sizeof(sig));
		fprintf(f, "%s ", sig);
		task(f, num(ev, "sender_pid"), str(ev, "sender_comm"));
		fputs(" -> ", f);
		task(f, num(ev, "target_pid"), str(ev, "target_comm"));
		if (num(ev, "truncated_count") > 0)
			fprintf(f, " (+%lld signals suppressed)", num(ev, "truncated_count"));
	} else if (!strcmp(type, "oom")) {
		json_t *v = json_object_get(ev, "victim"), *a = json_object_get(ev, "actor");
		fputs("victim ", f);
		task(f, num(v, "pid"), str(v, "comm"));
		if (*str(v, "container_id"))
			fprintf(f, " [%.12s]", str(v, "container_id"));
		fputs(" by ", f);
		task(f, num(a, "pid"), str(a, "comm"));
		if (*str(a, "container_id"))
			fprintf(f, " [%.12s]", str(a, "container_id"));
		fputs(" constraint=", f);
		cli_put_safe(f, str(ev, "constraint"));
	} else if (!strcmp(type, "sched_delay")) {
		json_t *n = json_object_get(ev, "neighbour");
		fputs("wait ", f);
		duration(f, num(ev, "wait_ns"));
		if (json_is_integer(json_object_get(ev, "cpu")))
			fprintf(f, " cpu %lld", num(ev, "cpu"));
		if (*str(ev, "contention")) {
			fputc(' ', f);
			cli_put_safe(f, str(ev, "contention"));
		}
		if (*str(ev, "enqueue")) {
			fputs(" (", f);
			cli_put_safe(f, str(ev, "enqueue"));
			fputc(')', f);
		}
		if (json_is_object(n)) {
			fputs(" neighbour ", f);
			task(f, num(n, "pid"), str(n, "comm"));
			const char *nid = str(n, "container_id"), *nrt = str(n, "runtime");
			if (*nid || *nrt) {
				fputs(" [", f);
				if (*nid)
					fprintf(f, "%.12s", nid);
				else
					cli_put_safe(f, nrt);
				fputc(']', f);
			}
		}
		if (num(ev, "truncated_count") > 0)
			fprintf(f, " (+%lld delays suppressed)", num(ev, "truncated_count"));
	} else {
		/* a type this CLI does not know (a newer agent): its own scalar
		 * fields as key=value, so the row is never blank */
		static const char *const common[] = {"id", "time", "type", "pid", "ppid", "tid",
						     "comm", "cgroup_id", "container_id", "pod_uid",
						     "runtime", "qos"};
		const char *k;
		json_t *v;
		int first = 1;
		json_object_foreach(ev, k, v)
		{
			size_t c = 0;
			while (c < sizeof(common) / sizeof(common[0]) && strcmp(k, common[c]))
				c++;
			if (c < sizeof(common) / sizeof(common[0]) || json_is_object(v) || json_is_array(v))
				continue;
			if (!first)
				fputc(' ', f);
			first = 0;
			cli_put_safe(f, k);
			fputc('=', f);
			if (json_is_string(v)) {
				cli_put_safe(f, json_string_value(v));
			} else {
				char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
				fputs(s ? s : "?", f);
				free(s);
			}
		}
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Width of the TYPE column: the longest event type the agent emits. */
static int type_width(void)
{
	size_t w = strlen("TYPE");
	for (unsigned m = 0; m < sl_registry_count; m++)
		for (unsigned k = 0; k < sl_registry[m]->nkinds; k++)
			if (strlen(sl_registry[m]->kinds[k].name) > w)
				w = strlen(sl_registry[m]->kinds[k].name);
	return (int)w;
}

void cli_print_event_header(FILE *out)
{
	fprintf(out, "%-24s %-*s %-12s %7s %-16s %s\n", "TIME", type_width(), "TYPE", "CONTAINER",
		"PID", "COMM", "DETAILS");
}

void cli_print_event_row(FILE *out, json_t *ev)
{
	char t[64], c[64];
	cli_short_time(str(ev, "time"), t, sizeof(t));
	cli_short_container(ev, c, sizeof(c));
	fprintf(out, "%-24s %-*s %-12s %7lld ", t, type_width(), str(ev, "type"), c, num(ev, "pid"));
	/* comm padded by hand: escapes change its width */
	char *comm = NULL;
	size_t cl = 0;
	FILE *m = open_memstream(&comm, &cl);
	if (m) {
		cli_put_safe(m, str(ev, "comm"));
		fclose(m);
	}
	fprintf(out, "%-16s ", comm ? comm : "");
	free(comm);
	char *d = cli_event_details(ev);
	fprintf(out, "%s\n", d ? d : "");
	free(d);
}

void cli_print_containers(FILE *out, json_t *cs)
{
	size_t i;
	json_t *c;
	fprintf(out, "%-12s %-10s %-36s %7s %6s %6s %6s %4s  %s\n", "CONTAINER", "RUNTIME", "POD",
		"EVENTS", "EXEC", "EXIT", "SIGNAL", "OOM", "LAST SEEN");
	json_array_foreach(cs, i, c)
	{
		json_t *bt = json_object_get(c, "by_type");
		char t[64];
		cli_short_time(str(c, "last_seen"), t, sizeof(t));
		fprintf(out, "%-12.12s %-10s %-36s %7lld %6lld %6lld %6lld %4lld  %s\n",
			str(c, "container_id"), *str(c, "runtime") ? str(c, "runtime") : "-",
			*str(c, "pod_uid") ? str(c, "pod_uid") : "-", num(c, "events"),
			num(bt, "exec"), num(bt, "exit"), num(bt, "signal"), num(bt, "oom"), t);
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

static void print_summary(FILE *out, const char *metrics)
{
	int any = 0;
	for (size_t f = 0; f < sizeof(summary_families) / sizeof(summary_families[0]); f++) {
		const char *fam = summary_families[f];
		size_t fl = strlen(fam);
		for (const char *p = metrics; p && *p;) {
			const char *eol = strchr(p, '\n');
			size_t ll = eol ? (size_t)(eol - p) : strlen(p);
			if (ll > fl && !strncmp(p, fam, fl) && (p[fl] == '{' || p[fl] == ' ')) {
				if (!any++)
					fprintf(out, "\nSELF-METRICS\n");
				fprintf(out, "  %.*s\n", (int)ll, p);
			}
			p = eol ? eol + 1 : NULL;
		}
	}
}

void cli_print_status(FILE *out, json_t *h, const char *metrics)
{
	json_t *up = json_object_get(h, "uptime_seconds");
	fprintf(out, "status: %s", *str(h, "status") ? str(h, "status") : "?");
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
		fprintf(out, "\nMODULE %-12s %s", str(m, "name"), str(m, "state"));
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
			fprintf(out, "  %-44s %-9s ", str(hk, "name"), str(hk, "state"));
			cli_put_safe(out, str(hk, "reason"));
			fputc('\n', out);
		}
	}
	print_summary(out, metrics);
}
