/* `sandlens sandboxes [ID]` (GET /api/v1/sandboxes[/{id}]) and
 * `sandlens stats --sandbox ID` (GET /api/v1/workloads/{id}/stats, kind
 * sandbox). docs/CLI.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/stats.h"

static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static const char ID_CHARS[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-";

/* prefix + id percent-encoded + suffix into path. */
static void mkpath(char *path, size_t len, const char *prefix, const char *id, const char *suffix)
{
	size_t n = (size_t)snprintf(path, len, "%s", prefix);
	for (const unsigned char *p = (const unsigned char *)id; *p && n + 16 < len; p++) {
		if (strchr(ID_CHARS, *p))
			path[n++] = (char)*p;
		else
			n += (size_t)snprintf(path + n, 4, "%%%02X", *p);
	}
	snprintf(path + n, len - n, "%s", suffix);
}

static void list_ints(json_t *a, char *buf, size_t len, const char *key)
{
	size_t i, n = 0;
	json_t *x;
	buf[0] = 0;
	json_array_foreach(a, i, x) {
		if (n + 24 >= len)
			break;
		json_t *v = key ? json_object_get(x, key) : x;
		n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? "," : "", (long long)json_integer_value(v));
	}
	if (!buf[0])
		snprintf(buf, len, "-");
}

/* "12.345s" of a number of seconds, "-" when null (unknown). */
static void secs(json_t *v, char *buf, size_t len)
{
	if (json_is_number(v))
		snprintf(buf, len, "%.3fs", json_number_value(v));
	else
		snprintf(buf, len, "-");
}

/* "rq wait 1.234s (57 timeslices; last 2.0s: 0.120s, 0.350ms per timeslice)"
 * of a vcpus[] entry or vcpu_runqueue (docs/CLI.md). */
static void print_rq(json_t *o)
{
	char w[32], iw[32];
	json_t *iv = json_object_get(o, "interval");
	secs(json_object_get(o, "runqueue_wait_seconds"), w, sizeof(w));
	printf("rq wait %s", w);
	if (json_is_integer(json_object_get(o, "timeslices")))
		printf(" (%lld timeslices", (long long)json_integer_value(json_object_get(o, "timeslices")));
	else
		printf(" (timeslices -");
	if (json_is_object(iv)) {
		secs(json_object_get(iv, "runqueue_wait_seconds"), iw, sizeof(iw));
		json_t *pt = json_object_get(iv, "wait_per_timeslice_seconds");
		printf("; last %.1fs: %s", json_number_value(json_object_get(iv, "seconds")), iw);
		if (json_is_number(pt))
			printf(", %.3fms per timeslice", json_number_value(pt) * 1e3);
	}
	printf(")");
}

static void print_one(json_t *s)
{
	char shim[128], gof[128];
	json_t *vc = json_object_get(s, "vcpus"), *x;
	size_t i;
	list_ints(json_object_get(s, "shim_pids"), shim, sizeof(shim), NULL);
	list_ints(json_object_get(s, "gofer_pids"), gof, sizeof(gof), NULL);
	printf("sandbox %s\n", cli_esc(str(s, "id")));
	printf("  runtime %s  vmm %s  pod %s\n", *str(s, "runtime") ? cli_esc(str(s, "runtime")) : "-",
	       *str(s, "vmm") ? cli_esc(str(s, "vmm")) : "-", *str(s, "pod_uid") ? cli_esc(str(s, "pod_uid")) : "-");
	if (json_is_integer(json_object_get(s, "vmm_pid")))
		printf("  vmm pid %lld (%s)\n", (long long)json_integer_value(json_object_get(s, "vmm_pid")),
		       cli_esc(str(s, "vmm_comm")));
	else
		printf("  vmm pid -\n");
	printf("  shim pids %s  gofer pids %s\n", shim, gof);
	printf("  cgroup %s\n", *str(s, "cgroup") ? cli_esc(str(s, "cgroup")) : "-");
	printf("  overhead cgroup %s\n", *str(s, "overhead_cgroup") ? cli_esc(str(s, "overhead_cgroup")) : "-");
	if (*str(s, "vm_dir"))
		printf("  vm dir %s\n", cli_esc(str(s, "vm_dir")));
	printf("  vcpus %zu", json_array_size(vc));
	if (json_array_size(vc)) {
		printf("  ");
		print_rq(json_object_get(s, "vcpu_runqueue"));
	}
	printf("\n");
	json_array_foreach(vc, i, x) {
		printf("    vcpu %-4lld tid %-8lld %-16s ", (long long)json_integer_value(json_object_get(x, "index")),
		       (long long)json_integer_value(json_object_get(x, "tid")), cli_esc(str(x, "comm")));
		print_rq(x);
		printf("\n");
	}
}

static int done(void)
{
	if (fflush(stdout) || ferror(stdout))
		return errno == EPIPE ? CLI_OK : CLI_ERR;
	return CLI_OK;
}

static int sandboxes(struct cli_conn *c, const char *id, int json)
{
	json_t *body = NULL;
	char path[512];
	if (id)
		mkpath(path, sizeof(path), "/api/v1/sandboxes/", id, "");
	else
		snprintf(path, sizeof(path), "/api/v1/sandboxes");
	int rc = cli_get_json(c, path, 0, &body, NULL);
	if (rc)
		return rc;
	if (id) {
		if (json) {
			char *s = json_dumps(body, JSON_COMPACT);
			if (s)
				puts(s);
			free(s);
		} else {
			print_one(body);
		}
	} else {
		json_t *l = json_object_get(body, "sandboxes"), *s;
		size_t i;
		if (!json)
			printf("%-66s %-11s %-16s %8s %5s %10s  %s\n", "ID", "RUNTIME", "VMM", "VMM PID", "VCPUS", "RQ WAIT",
			       "POD");
		json_array_foreach(l, i, s) {
			if (json) {
				char *t = json_dumps(s, JSON_COMPACT);
				if (t)
					puts(t);
				free(t);
				continue;
			}
			char pid[24] = "-";
			if (json_is_integer(json_object_get(s, "vmm_pid")))
				snprintf(pid, sizeof(pid), "%lld", (long long)json_integer_value(json_object_get(s, "vmm_pid")));
			char rq[32];
			secs(json_object_get(json_object_get(s, "vcpu_runqueue"), "runqueue_wait_seconds"), rq, sizeof(rq));
			printf("%-66s %-11s %-16s %8s %5zu %10s  %s\n", cli_esc(str(s, "id")),
			       *str(s, "runtime") ? cli_esc(str(s, "runtime")) : "-",
			       *str(s, "vmm") ? cli_esc(str(s, "vmm")) : "-", pid,
			       json_array_size(json_object_get(s, "vcpus")), rq,
			       *str(s, "pod_uid") ? cli_esc(str(s, "pod_uid")) : "-");
		}
	}
	json_decref(body);
	return done();
}

int cli_cmd_sandboxes(struct cli_run *r)
{
	struct cli_conn *c;
	int rc = cli_run_connect(r, &c);
	return rc ? rc : sandboxes(c, r->npos ? r->pos[0] : NULL, cli_flag(r, "json"));
}

int cli_stats_sandbox(struct cli_conn *c, const char *id, const char *source, int json)
{
	json_t *body = NULL;
	char path[512];
	mkpath(path, sizeof(path), "/api/v1/workloads/", id, "/stats");
	if (source && cli_query_add(path, sizeof(path), "source", source)) {
		fprintf(stderr, "sandlens: stats: sandbox id too long\n");
		return CLI_USAGE;
	}
	int rc = cli_get_json(c, path, 0, &body, NULL);
	if (rc)
		return rc;
	if (strcmp(str(body, "kind"), "sandbox")) {
		fprintf(stderr, "sandlens: stats: %s is a %s, not a sandbox\n", cli_esc(id), cli_esc(str(body, "kind")));
		json_decref(body);
		return CLI_ERR;
	}
	if (json) {
		char *s = json_dumps(body, JSON_COMPACT);
		if (s)
			puts(s);
		free(s);
	} else {
		cli_stats_print_workload(body);
	}
	json_decref(body);
	return done();
}
