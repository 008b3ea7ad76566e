/* sandlens captures: AutoTracing capture records (docs/CLI.md, docs/AUTO.md). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/exceeds.h"

/* o[k] escaped for the terminal (function names, comm, paths and wchan
 * come from the workload: cli_esc), "-" when absent */
static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? cli_esc(s) : "-";
}

/* a function name: escaped and cut (cli_esc_sym), "-" when absent */
static const char *sym(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? cli_esc_sym(s) : "-";
}

/* what a non-admin reader is told where the API withheld a field
 * (sl_auto_redact: argv, stacks, paths, functions) */
#define WITHHELD "needs root or api.admin_group"

static void print_row(json_t *c)
{
	json_t *r = json_object_get(c, "reason"), *on = json_object_get(json_object_get(c, "profiles"), "on_cpu");
	json_t *top = json_array_get(json_object_get(on, "top_functions"), 0);
	char why[96];
	json_t *rd = json_object_get(r, "reading");
	const char *src = json_string_value(json_object_get(r, "source"));
	char v[CLI_NUM_LEN], t[CLI_NUM_LEN];
	double thr = json_number_value(json_object_get(r, "threshold"));
	if (src && !strcmp(src, "psi_trigger")) {
		/* the kernel's trigger fired: the stall over its window reached
		 * the threshold (a lower bound); the avg10 read at the event is
		 * another average and may be lower */
		snprintf(t, sizeof(t), "%.4g", thr);
		if (json_is_number(rd))
			snprintf(why, sizeof(why), "%s >= %s (psi_trigger; avg10 %.4g)", str(r, "series"), t,
				 json_number_value(rd));
		else
			snprintf(why, sizeof(why), "%s >= %s (psi_trigger)", str(r, "series"), t);
	} else {
		const char *op = cli_exceeds(json_number_value(json_object_get(r, "value")), thr, 0, 4, v, t);
		snprintf(why, sizeof(why), "%s %s %s %s (%s)", str(r, "series"), v, op, t, str(r, "source"));
	}
	printf("%-18s %-30s %-12.12s %-10s %-9s %-24s %s\n", str(c, "id"), str(c, "time"), str(c, "container_id"),
	       str(r, "detector"), str(c, "status"), top ? sym(top, "function") : "-", why);
}

static void print_show(json_t *c)
{
	json_t *r = json_object_get(c, "reason");
	printf("capture    %s  %s  status %s\n", str(c, "id"), str(c, "time"), str(c, "status"));
	printf("container  %s\n", str(c, "container_id"));
	/* a PSI trigger's value is its threshold, a lower bound (value_is) */
	const char *src = json_string_value(json_object_get(r, "source"));
	char v[CLI_NUM_LEN], t[CLI_NUM_LEN];
	const char *op = cli_exceeds(json_number_value(json_object_get(r, "value")),
				     json_number_value(json_object_get(r, "threshold")),
				     (src && !strcmp(src, "psi_trigger")) || json_object_get(r, "value_is"), 6, v, t);
	/* method and source: once when they are the same word (a PSI trigger) */
	const char *meth = json_string_value(json_object_get(r, "method"));
	char how[160];
	if (meth && src && !strcmp(meth, src))
		snprintf(how, sizeof(how), "%s", str(r, "source"));
	else
		snprintf(how, sizeof(how), "%s, %s", str(r, "method"), str(r, "source"));
	printf("why        detector %s on %s (%s): value %s %s threshold %s (%s), window %lld, samples %lld\n",
	       str(r, "detector"), str(r, "series"), how, v, op, t,
	       str(r, "threshold_source"), (long long)json_integer_value(json_object_get(r, "window")),
	       (long long)json_integer_value(json_object_get(r, "samples")));
	if (json_is_number(json_object_get(r, "reading")))
		printf("reading    %.6g%s\n", json_number_value(json_object_get(r, "reading")),
		       json_object_get(r, "value_is") ? " (some avg10 at the event; the value is the trigger's lower bound)" : "");
	const char *k;
	json_t *p;
	json_object_foreach(json_object_get(c, "profiles"), k, p) {
		printf("profile    %s: %s", k, str(p, "status"));
		if (json_object_get(p, "task_id"))
			printf(" (task %s, %lld samples)", str(p, "task_id"),
			       (long long)json_integer_value(json_object_get(p, "total_count")));
		if (json_object_get(p, "reason"))
			printf(": %s", str(p, "reason"));
		printf("\n");
		size_t i;
		json_t *f;
		json_array_foreach(json_object_get(p, "top_functions"), i, f)
			printf("             %-40s %lld\n", sym(f, "function"), (long long)json_integer_value(json_object_get(f, "count")));
		if (json_is_true(json_object_get(p, "top_functions_withheld")))
			printf("             (functions withheld: %s)\n", WITHHELD);
	}
	json_t *b = json_object_get(c, "baseline");
	printf("baseline   %s%s%s\n", str(b, "status"), json_object_get(b, "reason") ? ": " : "",
	       json_object_get(b, "reason") ? str(b, "reason") : "");
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(b, "top_regressions"), i, f)
		printf("             %-40s self %+.1f%%  total %+.1f%%\n", sym(f, "function"),
		       100 * json_number_value(json_object_get(f, "self_delta")),
		       100 * json_number_value(json_object_get(f, "total_delta")));
	if (json_is_true(json_object_get(b, "top_regressions_withheld")))
		printf("             (functions withheld: %s)\n", WITHHELD);
	json_t *s = json_object_get(c, "snapshot");
	printf("processes  %lld\n", (long long)json_integer_value(json_object_get(s, "processes_total")));
	json_array_foreach(json_object_get(s, "processes"), i, f)
		printf("             %7lld %-16s %s threads %lld rss %lld fds %lld\n",
		       (long long)json_integer_value(json_object_get(f, "pid")), str(f, "comm"), str(f, "state"),
		       (long long)json_integer_value(json_object_get(f, "threads")),
		       (long long)json_integer_value(json_object_get(f, "rss_bytes")),
		       (long long)json_integer_value(json_object_get(f, "open_fds")));
	json_array_foreach(json_object_get(s, "dstate_tasks"), i, f)
		printf("D-state    %lld/%lld %s wchan %s%s\n", (long long)json_integer_value(json_object_get(f, "pid")),
		       (long long)json_integer_value(json_object_get(f, "tid")), str(f, "comm"), str(f, "wchan"),
		       json_is_true(json_object_get(f, "stack_withheld")) ? " (stack withheld: " WITHHELD ")" : "");
	json_array_foreach(json_object_get(s, "open_files"), i, f)
		printf("file       %s (%lld fds)\n",
		       json_is_true(json_object_get(f, "path_withheld")) ? "(path withheld: " WITHHELD ")" : str(f, "path"),
		       (long long)json_integer_value(json_object_get(f, "fds")));
}

static int valid_id(const char *id)
{
	size_t n = strlen(id);
	if (n < 3 || n > 31 || id[0] != 'c' || id[1] != '-')
		return 0;
	return strspn(id + 2, "0123456789abcdef") == n - 2;
}

int cli_cmd_captures(struct cli_run *r)
{
	struct cli_conn *c;
	int rc = cli_run_connect(r, &c), json = cli_flag(r, "json");
	json_t *o = NULL;
	char path[512] = "/api/v1/captures";
	if (rc)
		return rc;
	if (r->npos == 0 || !strcmp(r->pos[0], "list")) {
		if (r->npos > 1) {
			fprintf(stderr, "sandlens: captures list takes no argument\n");
			return CLI_USAGE;
		}
		static const char *const qs[] = {"container", "detector", "limit"};
		for (int q = 0; q < 3; q++)
			if (cli_opt(r, qs[q]) && cli_query_add(path, sizeof(path), qs[q], cli_opt(r, qs[q]))) {
				fprintf(stderr, "sandlens: query too long\n");
				return CLI_USAGE;
			}
		if ((rc = cli_get_json(c, path, 0, &o, NULL)))
			return rc;
		size_t i;
		json_t *t;
		if (!json)
			printf("%-18s %-30s %-12s %-10s %-9s %-24s %s\n", "ID", "TIME", "CONTAINER", "DETECTOR", "STATUS",
			       "TOP FUNCTION", "WHY");
		json_array_foreach(json_object_get(o, "captures"), i, t) {
			if (json) {
				char *s = json_dumps(t, JSON_COMPACT);
				if (s)
					puts(s);
				free(s);
			} else {
				print_row(t);
			}
		}
		json_decref(o);
		return CLI_OK;
	}
	if (r->npos != 2 || strcmp(r->pos[0], "show")) {
		fprintf(stderr, "sandlens: usage: sandlens captures [list | show ID]\n");
		return CLI_USAGE;
	}
	if (!valid_id(r->pos[1])) {
		fprintf(stderr, "sandlens: '%s' is not a capture id (c-<hex>)\n", cli_esc(r->pos[1]));
		return CLI_USAGE;
	}
	snprintf(path, sizeof(path), "/api/v1/captures/%s", r->pos[1]);
	if ((rc = cli_get_json(c, path, 0, &o, NULL)))
		return rc;
	if (json) {
		char *s = json_dumps(o, JSON_COMPACT);
		if (s)
			puts(s);
		free(s);
	} else {
		print_show(o);
	}
	json_decref(o);
	return CLI_OK;
}
