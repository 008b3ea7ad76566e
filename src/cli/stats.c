/* `sandlens stats`: tables of workload statistics. */
#include "cli/stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* GET path: the parsed body in *out; with raw_json, the body printed on one
 * line as the API sent it instead (*out NULL). Returns a CLI exit code. */
static int get(struct cli_conn *c, const char *path, json_t **out, int raw_json)
{
	if (!raw_json)
		return cli_get_json(c, path, 0, out, NULL);
	struct cli_resp r;
	int rc = cli_get_reply(c, path, 0, &r, NULL);
	if (rc)
		return rc;
	*out = NULL;
	if (r.body) {
		fputs(r.body, stdout);
		fputc('\n', stdout);
	} else {
		fprintf(stderr, "sandlens: %s: the API returned invalid JSON\n", path);
		rc = CLI_ERR;
	}
	cli_resp_free(&r);
	return rc;
}

/* "12.3MiB"; "-" when the figure is unknown (null). */
static void fmt_bytes(json_t *v, char *buf, size_t len)
{
	if (!json_is_integer(v)) {
		snprintf(buf, len, "-");
		return;
	}
	double b = (double)json_integer_value(v);
	static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int i = 0;
	while (b >= 1024 && i < 4) {
		b /= 1024;
		i++;
	}
	snprintf(buf, len, i ? "%.1f%s" : "%.0f%s", b, u[i]);
}

/* µs as seconds "1.234s"; "-" when unknown. */
static void fmt_usec(json_t *v, char *buf, size_t len)
{
	if (!json_is_integer(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.3fs", (double)json_integer_value(v) / 1e6);
}

static void fmt_int(json_t *v, char *buf, size_t len)
{
	if (!json_is_integer(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
}

static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

void cli_stats_print_workload(json_t *w)
{
	char a[32], b[32], c[32], d[32];
	json_t *ep = json_object_get(w, "epoch");
	printf("%s %s\n", cli_esc(str(w, "kind")), cli_esc(str(w, "id")));
	printf("  source %s, observed %s\n", cli_esc(str(w, "source")), cli_esc(str(w, "observed_at")));
	printf("  epoch %s since %s", cli_esc(str(ep, "id")), cli_esc(str(ep, "start")));
	if (!strcmp(str(w, "source"), "guest_agent")) {
		/* the guest source's epoch rules: docs/STATS.md "Guest-agent source" */
		printf(" (%s%s, VMM restarts within it %lld)", cli_esc(str(ep, "reason")),
		       json_is_true(json_object_get(ep, "first_sample")) ? ", this sample began it" : "",
		       (long long)json_integer_value(json_object_get(ep, "vmm_restarts")));
		printf("\n  guest kernel's accounting (Kata agent, %s): not comparable with the host-cgroup source",
		       *str(w, "hypervisor") ? cli_esc(str(w, "hypervisor")) : "hypervisor unknown");
	}
	printf("\n");
	printf("  containers read %lld of %lld\n",
	       (long long)json_integer_value(json_object_get(w, "containers_read")),
	       (long long)json_integer_value(json_object_get(w, "containers_total")));
	fmt_usec(json_object_get(w, "cpu_usage_usec"), a, sizeof(a));
	fmt_usec(json_object_get(w, "cpu_user_usec"), b, sizeof(b));
	fmt_usec(json_object_get(w, "cpu_system_usec"), c, sizeof(c));
	printf("  cpu     usage %s  user %s  system %s", a, b, c);
	fmt_int(json_object_get(w, "cpu_cfs_throttled_periods"), a, sizeof(a));
	fmt_int(json_object_get(w, "cpu_cfs_periods"), b, sizeof(b));
	fmt_usec(json_object_get(w, "cpu_cfs_throttled_usec"), c, sizeof(c));
	printf("  throttled %s/%s periods, %s\n", a, b, c);
	fmt_bytes(json_object_get(w, "memory_current_bytes"), a, sizeof(a));
	fmt_bytes(json_object_get(w, "memory_working_set_bytes"), b, sizeof(b));
	fmt_bytes(json_object_get(w, "memory_peak_bytes"), c, sizeof(c));
	printf("  memory  current %s  working set %s  peak %s%s\n", a, b, c,
	       json_is_true(json_object_get(w, "memory_peak_is_upper_bound"))
		       ? " (sum of the containers' peaks: an upper bound)"
		       : "");
	fmt_bytes(json_object_get(w, "memory_cache_bytes"), a, sizeof(a));
	fmt_bytes(json_object_get(w, "memory_rss_bytes"), b, sizeof(b));
	fmt_bytes(json_object_get(w, "memory_swap_bytes"), c, sizeof(c));
	fmt_int(json_object_get(w, "memory_oom_kill_events"), d, sizeof(d));
	printf("          cache %s  rss %s  swap %s  oom kills %s\n", a, b, c, d);
	fmt_bytes(json_object_get(w, "io_read_bytes"), a, sizeof(a));
	fmt_bytes(json_object_get(w, "io_write_bytes"), b, sizeof(b));
	fmt_int(json_object_get(w, "io_read_ops"), c, sizeof(c));
	fmt_int(json_object_get(w, "io_write_ops"), d, sizeof(d));
	printf("  io      read %s (%s ops)  write %s (%s ops)\n", a, c, b, d);
	fmt_int(json_object_get(w, "pids_current"), a, sizeof(a));
	printf("  pids    %s\n", a);

	json_t *cs = json_object_get(w, "containers"), *x;
	size_t i;
	printf("\n  %-14s %-8s %10s %10s %10s %10s  %s\n", "CONTAINER", "RUNTIME", "CPU", "MEMORY",
	       "WSET", "PEAK", "CGROUP");
	json_array_foreach(cs, i, x) {
		char id[16];
		snprintf(id, sizeof(id), "%.12s", str(x, "id"));
		fmt_usec(json_object_get(x, "cpu_usage_usec"), a, sizeof(a));
		fmt_bytes(json_object_get(x, "memory_current_bytes"), b, sizeof(b));
		fmt_bytes(json_object_get(x, "memory_working_set_bytes"), c, sizeof(c));
		fmt_bytes(json_object_get(x, "memory_peak_bytes"), d, sizeof(d));
		printf("  %-14s %-8s %10s %10s %10s %10s  %s", cli_esc(id),
		       *str(x, "runtime") ? cli_esc(str(x, "runtime")) : "-", a, b, c, d,
		       json_object_get(x, "cgroup_path") ? cli_esc(str(x, "cgroup_path"))
							  : cli_esc(str(x, "state")));
		if (json_is_false(json_object_get(x, "read")) && !json_object_get(x, "error")) {
			printf("  (the guest did not answer for it: contributes 0)\n");
			continue;
		}
		if (json_is_false(json_object_get(x, "read")))
			printf("  (unreadable: %s)", cli_esc(str(x, "error")));
		printf("\n");
	}
}

static void print_list(json_t *body)
{
	json_t *ws = json_object_get(body, "workloads"), *w;
	size_t i;
	printf("%-10s %-66s %-13s %9s  %s\n", "KIND", "ID", "STATE", "READ", "EPOCH START");
	json_array_foreach(ws, i, w) {
		json_t *ep = json_object_get(w, "epoch");
		char rt[32] = "-";
		if (json_object_get(w, "containers_total"))
			snprintf(rt, sizeof(rt), "%lld/%lld",
				 (long long)json_integer_value(json_object_get(w, "containers_read")),
				 (long long)json_integer_value(json_object_get(w, "containers_total")));
		printf("%-10s %-66s %-13s %9s  %s\n", cli_esc(str(w, "kind")), cli_esc(str(w, "id")),
		       cli_esc(str(w, "state")), rt, *str(ep, "start") ? cli_esc(str(ep, "start")) : "-");
	}
}

int cli_stats(struct cli_conn *c, const char *id, const char *source, int json)
{
	json_t *body = NULL;
	int rc;
	if (!id) {
		rc = get(c, "/api/v1/workloads", &body, 0);
		if (rc)
			return rc;
		if (json) {
			json_t *ws = json_object_get(body, "workloads"), *w;
			size_t i;
			json_array_foreach(ws, i, w) {
				char *s = json_dumps(w, JSON_COMPACT);
				if (s)
					puts(s);
				free(s);
			}
		} else {
			print_list(body);
		}
	} else {
		char path[1024];
		size_t n = strlen("/api/v1/workloads/");
		memcpy(path, "/api/v1/workloads/", n);
		/* percent-encode everything outside the id alphabet */
		for (const unsigned char *p = (const unsigned char *)id; *p && n + 16 < sizeof(path); p++) {
			if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-", *p))
				path[n++] = (char)*p;
			else
				n += (size_t)snprintf(path + n, 4, "%%%02X", *p);
		}
		snprintf(path + n, sizeof(path) - n, "/stats%s%s", source ? "?source=" : "",
			 source ? source : "");
		rc = get(c, path, &body, json);
		if (rc || json)
			return rc;
		cli_stats_print_workload(body);
	}
	json_decref(body);
	if (fflush(stdout) || ferror(stdout))
		return errno == EPIPE ? CLI_OK : CLI_ERR;
	return CLI_OK;
}
