/* The hard-coded DETAILS formatter of src/cli/format.c before DETAILS came
 * from templates (commit ac37593), kept verbatim (only renamed) as the
 * oracle of tests/unit/test_cli_format.c: the templates of
 * tests/unit/cases/schema_events.json must render what it printed. */
#ifndef SANDLENS_TEST_LEGACY_DETAILS_H
#define SANDLENS_TEST_LEGACY_DETAILS_H

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *llstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static long long llnum(json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

static void legacy_put_safe(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\x%02x", *p);
		else
			fputc(*p, out);
	}
}

static void legacy_signal_name(int sig, char *buf, size_t len)
{
	const char *n = sig > 0 ? sigabbrev_np(sig) : NULL;
	if (n)
		snprintf(buf, len, "SIG%s", n);
	else
		snprintf(buf, len, "SIG%d", sig);
}

static void legacy_task(FILE *f, long long pid, const char *comm)
{
	fprintf(f, "%lld(", pid);
	legacy_put_safe(f, comm);
	fputc(')', f);
}

static void legacy_duration(FILE *f, long long ns)
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

static char *legacy_details(json_t *ev)
{
	char *buf = NULL, sig[32];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	const char *type = llstr(ev, "type");

	if (!strcmp(type, "exec")) {
		json_t *argv = json_object_get(ev, "argv");
		if (json_is_array(argv) && json_array_size(argv)) {
			size_t i;
			json_t *a;
			json_array_foreach(argv, i, a)
			{
				if (i)
					fputc(' ', f);
				legacy_put_safe(f, json_string_value(a) ? json_string_value(a) : "");
			}
		} else if (json_is_string(argv)) {
			legacy_put_safe(f, json_string_value(argv));
		} else {
			legacy_put_safe(f, llstr(ev, "filename"));
		}
		if (json_is_true(json_object_get(ev, "args_truncated")))
			fputs(" ...[args truncated]", f);
		if (llnum(ev, "truncated_count") > 0)
			fprintf(f, " (+%lld execs suppressed)", llnum(ev, "truncated_count"));
	} else if (!strcmp(type, "exit")) {
		long long s = llnum(ev, "signal");
		if (s) {
			legacy_signal_name((int)s, sig, sizeof(sig));
			fprintf(f, "killed by %s", sig);
			if (json_is_true(json_object_get(ev, "core_dumped")))
				fputs(" (core dumped)", f);
		} else {
			fprintf(f, "exit %lld", llnum(ev, "exit_code"));
		}
		if (json_object_get(ev, "lifetime_ns")) {
			fputs(" after ", f);
			legacy_duration(f, llnum(ev, "lifetime_ns"));
		}
		if (llnum(ev, "truncated_count") > 0)
			fprintf(f, " (+%lld exits suppressed, %lld abnormal)", llnum(ev, "truncated_count"),
				llnum(ev, "truncated_abnormal"));
	} else if (!strcmp(type, "signal")) {
		legacy_signal_name((int)llnum(ev, "signal"), sig, sizeof(sig));
		fprintf(f, "%s ", sig);
		if (json_is_true(json_object_get(ev, "sender_kernel"))) /* SI_KERNEL: issue 16 */
			fputs("kernel", f);
		else
			legacy_task(f, llnum(ev, "sender_pid"), llstr(ev, "sender_comm"));
		fputs(" -> ", f);
		legacy_task(f, llnum(ev, "target_pid"), llstr(ev, "target_comm"));
		if (llnum(ev, "truncated_count") > 0)
			fprintf(f, " (+%lld signals suppressed)", llnum(ev, "truncated_count"));
	} else if (!strcmp(type, "oom")) {
		json_t *v = json_object_get(ev, "victim"), *a = json_object_get(ev, "actor");
		fputs("victim ", f);
		legacy_task(f, llnum(v, "pid"), llstr(v, "comm"));
		if (*llstr(v, "container_id"))
			fprintf(f, " [%.12s]", llstr(v, "container_id"));
		fputs(" by ", f);
		legacy_task(f, llnum(a, "pid"), llstr(a, "comm"));
		if (*llstr(a, "container_id"))
			fprintf(f, " [%.12s]", llstr(a, "container_id"));
		fputs(" constraint=", f);
		legacy_put_safe(f, llstr(ev, "constraint"));
	} else if (!strcmp(type, "sched_delay")) {
		json_t *n = json_object_get(ev, "neighbour");
		fputs("wait ", f);
		legacy_duration(f, llnum(ev, "wait_ns"));
		if (json_is_integer(json_object_get(ev, "cpu")))
			fprintf(f, " cpu %lld", llnum(ev, "cpu"));
		if (*llstr(ev, "contention")) {
			fputc(' ', f);
			legacy_put_safe(f, llstr(ev, "contention"));
		}
		if (*llstr(ev, "enqueue")) {
			fputs(" (", f);
			legacy_put_safe(f, llstr(ev, "enqueue"));
			fputc(')', f);
		}
		if (json_is_object(n)) {
			fputs(" neighbour ", f);
			legacy_task(f, llnum(n, "pid"), llstr(n, "comm"));
			const char *nid = llstr(n, "container_id"), *nrt = llstr(n, "runtime");
			if (*nid || *nrt) {
				fputs(" [", f);
				if (*nid)
					fprintf(f, "%.12s", nid);
				else
					legacy_put_safe(f, nrt);
				fputc(']', f);
			}
		}
		if (llnum(ev, "truncated_count") > 0)
			fprintf(f, " (+%lld delays suppressed)", llnum(ev, "truncated_count"));
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
			legacy_put_safe(f, k);
			fputc('=', f);
			if (json_is_string(v)) {
				legacy_put_safe(f, json_string_value(v));
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

#endif
