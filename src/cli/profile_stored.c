/* `sandlens profile` over stored continuous-profiling windows (docs/CLI.md
 * "Continuous profiles"): --since/--until merge the windows of a range,
 * --base-since/--base-until compare two ranges, --windows lists them. */
#include "cli/tasks.h"
#include "cli/commands.h"
#include "common/prof_format.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_profile_stored_wanted(const struct cli_run *cr)
{
	return cli_opt(cr, "since") || cli_opt(cr, "until") || cli_opt(cr, "base-since") || cli_opt(cr, "base-until") ||
	       cli_flag(cr, "windows") || cli_flag(cr, "host");
}

#define USAGE(...)                                                            \
	do {                                                                  \
		fprintf(stderr, "sandlens: profile: " __VA_ARGS__);           \
		fputc('\n', stderr);                                          \
		return CLI_USAGE;                                             \
	} while (0)

/* The diff without -o: the functions that changed most, as a table. */
static void print_delta(const char *body)
{
	json_t *j = json_loads(body, 0, NULL), *f;
	size_t i;
	if (!j) {
		fputs(body, stdout);
		return;
	}
	printf("base: %lld %s, new: %lld %s\n", (long long)json_integer_value(json_object_get(json_object_get(j, "base"), "total")),
	       cli_esc(json_string_value(json_object_get(j, "unit"))),
	       (long long)json_integer_value(json_object_get(json_object_get(j, "new"), "total")),
	       cli_esc(json_string_value(json_object_get(j, "unit"))));
	printf("%8s %8s %8s  %s\n", "BASE%", "NEW%", "DELTA%", "FUNCTION");
	json_array_foreach(json_object_get(j, "functions"), i, f) {
		if (i >= 20)
			break;
		printf("%8.2f %8.2f %+8.2f  ", json_number_value(json_object_get(f, "base_self_pct")),
		       json_number_value(json_object_get(f, "new_self_pct")),
		       json_number_value(json_object_get(f, "delta_self_pct")));
		fputs(cli_esc_sym(json_string_value(json_object_get(f, "function"))), stdout);
		fputc('\n', stdout);
	}
	json_decref(j);
}

static void print_windows(const char *body)
{
	json_t *j = json_loads(body, 0, NULL), *w;
	size_t i;
	if (!j) {
		fputs(body, stdout);
		return;
	}
	printf("%-30s %-30s %8s %8s  %s\n", "START", "END", "SAMPLES", "BYTES", "CONTAINER");
	json_array_foreach(json_object_get(j, "windows"), i, w) {
		const char *cid = json_string_value(json_object_get(w, "container_id"));
		printf("%-30s %-30s %8lld %8lld  %s\n", cli_esc(json_string_value(json_object_get(w, "start"))),
		       cli_esc(json_string_value(json_object_get(w, "end"))),
		       (long long)json_integer_value(json_object_get(w, "samples")),
		       (long long)json_integer_value(json_object_get(w, "bytes")),
		       cid && *cid ? cli_esc(cid) : cli_esc(json_string_value(json_object_get(w, "runtime"))));
	}
	json_decref(j);
}

int cli_profile_stored(struct cli_conn *c, const struct cli_run *cr, int (*write_file)(const char *, const char *, size_t),
		       int (*write_stdout)(const char *, size_t))
{
	const char *out = cli_opt(cr, "output"), *v;
	const char *ct = cli_opt(cr, "container"), *pod = cli_opt(cr, "pod");
	int host = cli_flag(cr, "host"), windows = cli_flag(cr, "windows");
	int diff = cli_opt(cr, "base-since") != NULL;
	char path[2048];
	int fmt = -1;

	if ((ct != NULL) + (pod != NULL) + host != 1)
		USAGE("stored windows: give one of --container ID, --pod UID, --host");
	if (cli_opt(cr, "pid") || cli_opt(cr, "tid"))
		USAGE("stored windows are per container, pod or host: --pid/--tid are for a profile task");
	if (cli_opt(cr, "duration") || cli_opt(cr, "hz") || cli_flag(cr, "off-cpu") || cli_opt(cr, "min-off-cpu-us") ||
	    cli_opt(cr, "type"))
		USAGE("--duration, --hz, --off-cpu, --min-off-cpu-us, --type are for a profile task; stored windows are on-CPU");
	if (cli_opt(cr, "base-until") && !diff)
		USAGE("--base-until needs --base-since");
	if (windows && (diff || out))
		USAGE("--windows lists the windows: no --base-since, no -o");
	if (out && strcmp(out, "-")) {
		fmt = sl_prof_format_from_path(out);
		if (fmt < 0)
			USAGE("cannot tell the format of '%s' from its extension (.svg, .pb.gz, .folded, .json)", out);
	} else if (!diff) {
		fmt = SL_FMT_FOLDED; /* no -o, or -o -: folded text on standard output */
	} else {
		fmt = SL_FMT_JSON;
	}
	snprintf(path, sizeof(path), "/api/v1/profiles%s", windows ? "/windows" : diff ? "/diff" : "");
	if ((ct && cli_query_add(path, sizeof(path), "container", ct)) ||
	    (pod && cli_query_add(path, sizeof(path), "pod", pod)) ||
	    (host && cli_query_add(path, sizeof(path), "host", "true")) ||
	    ((v = cli_opt(cr, "since")) && cli_query_add(path, sizeof(path), "since", v)) ||
	    ((v = cli_opt(cr, "until")) && cli_query_add(path, sizeof(path), "until", v)) ||
	    ((v = cli_opt(cr, "base-since")) && cli_query_add(path, sizeof(path), "base_since", v)) ||
	    ((v = cli_opt(cr, "base-until")) && cli_query_add(path, sizeof(path), "base_until", v)) ||
	    (!windows && cli_query_add(path, sizeof(path), "format", sl_prof_format_name(fmt))))
		USAGE("arguments too long");
#undef USAGE
	struct cli_resp r;
	if (cli_http_request(c, "GET", path, NULL, 120, &r)) {
		fprintf(stderr, "sandlens: %s: %s\n", path, cli_esc(r.error));
		cli_resp_free(&r);
		return CLI_ERR;
	}
	if (r.status != 200) {
		int rc = cli_http_error("profile", &r);
		cli_resp_free(&r);
		return rc;
	}
	int w = 0;
	if (windows)
		print_windows(r.body ? r.body : "");
	else if (diff && !out)
		print_delta(r.body ? r.body : "");
	else if (!out || !strcmp(out, "-"))
		w = write_stdout(r.body ? r.body : "", r.len);
	else
		w = write_file(out, r.body ? r.body : "", r.len);
	if (w) {
		fprintf(stderr, "sandlens: writing %s: %s\n", out ? out : "standard output", strerror(-w));
		cli_resp_free(&r);
		return CLI_ERR;
	}
	if (out && strcmp(out, "-"))
		printf("wrote %s (%s, %zu bytes) from stored windows\n", out, sl_prof_format_name(fmt), r.len);
	cli_resp_free(&r);
	return CLI_OK;
}
