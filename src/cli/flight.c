/* `sandlens flight`: the flight recorder's recordings (docs/CLI.md,
 * docs/FLIGHT.md): the list, one recording by id, or the one an event
 * froze (--event N). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/schema.h"

static int out_rc(void)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return CLI_OK;
	if (errno == EPIPE)
		return CLI_OK;
	fprintf(stderr, "sandlens: writing output: %s\n", strerror(errno));
	return CLI_ERR;
}

static void json_line(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);
	if (s) {
		fputs(s, stdout);
		fputc('\n', stdout);
		free(s);
	}
}

static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static int list(struct cli_conn *c, const char *container, int json)
{
	char path[512] = "/api/v1/flight";
	json_t *body = NULL;
	if (container && cli_query_add(path, sizeof(path), "container", container))
		return cli_usage_error(cli_command_find("flight"), "%s", "--container: too long");
	int rc = cli_get_json(c, path, 0, &body, NULL);
	if (rc)
		return rc;
	json_t *rs = json_object_get(body, "recordings"), *x;
	size_t i;
	if (!json)
		printf("%-8s %-30s %-12s %7s %9s  %s\n", "ID", "TIME", "CONTAINER", "EVENTS", "BYTES", "REASON");
	json_array_foreach(rs, i, x)
	{
		if (json) {
			json_line(x);
			continue;
		}
		/* the reason last: it is free text of any length ("capture c-...") */
		printf("%-8lld %-30s %-12.12s %7lld %9lld  ", (long long)json_integer_value(json_object_get(x, "id")),
		       str(x, "time"), str(x, "container_id"), (long long)json_integer_value(json_object_get(x, "events")),
		       (long long)json_integer_value(json_object_get(x, "bytes")));
		cli_put_safe(stdout, str(x, "reason"));
		putchar('\n');
	}
	json_decref(body);
	return out_rc();
}

static void print_counts(const char *what, json_t *o)
{
	const char *k;
	json_t *v;
	if (!json_object_size(o))
		return;
	printf("%s:", what);
	json_object_foreach(o, k, v)
	{
		if (json_is_object(v)) {
			const char *k2;
			json_t *v2;
			json_object_foreach(v, k2, v2)
			{
				printf(" %s/%s=%lld", k, k2, (long long)json_integer_value(v2));
			}
		} else {
			printf(" %s=%lld", k, (long long)json_integer_value(v));
		}
	}
	printf("\n");
}

static int one(struct cli_conn *c, const char *path, int json)
{
	json_t *rec = NULL;
	int rc = cli_get_json(c, path, 0, &rec, NULL);
	if (rc)
		return rc;
	if (json) {
		json_line(rec);
		json_decref(rec);
		return out_rc();
	}
	json_t *drops = json_object_get(rec, "drops"), *t;
	size_t i;
	printf("flight recording %lld of container %s (%s)\n", (long long)json_integer_value(json_object_get(rec, "id")),
	       str(rec, "container_id"), str(rec, "reason"));
	printf("window: %s .. %s (%g s), opened %s\n", str(rec, "from"), str(rec, "frozen"),
	       json_number_value(json_object_get(rec, "window_seconds")), str(rec, "opened"));
	printf("triggers (%lld):", (long long)json_integer_value(json_object_get(rec, "triggers_total")));
	json_array_foreach(json_object_get(rec, "triggers"), i, t)
	{
		printf(" %s", str(t, "type"));
		if (json_object_get(t, "pid"))
			printf(" %lld(%s)", (long long)json_integer_value(json_object_get(t, "pid")), str(t, "comm"));
		if (*str(t, "time"))
			printf(" at %s", str(t, "time"));
		printf(i + 1 < json_array_size(json_object_get(rec, "triggers")) ? ";" : "");
	}
	printf("\n");
	print_counts("suppressed in the kernel (carried by the events)", json_object_get(drops, "suppressed"));
	if (json_integer_value(json_object_get(drops, "ring_dropped")))
		printf("ring dropped %lld events (byte bounds); complete from %s\n",
		       (long long)json_integer_value(json_object_get(drops, "ring_dropped")), str(drops, "complete_from"));
	print_counts("host-wide drops in the window", json_object_get(drops, "host"));
	json_t *evs = json_object_get(rec, "events");
	printf("%zu events:\n", json_array_size(evs));
	struct cli_schema sch;
	rc = cli_schema_fetch(c, &sch);
	if (rc == CLI_OK) {
		if (!sch.loaded)
			cli_schema_fit_types(&sch, evs);
		cli_print_event_header(stdout, &sch);
		json_t *ev;
		json_array_foreach(evs, i, ev) cli_print_event_row(stdout, &sch, ev);
	}
	cli_schema_free(&sch);
	json_decref(rec);
	return rc ? rc : out_rc();
}

int cli_cmd_flight(struct cli_run *r)
{
	struct cli_conn *c;
	const char *ev = cli_opt(r, "event");
	char path[256];
	if (r->npos && ev)
		return cli_usage_error(r->cmd, "%s", "give a recording ID or --event N, not both");
	const char *id = r->npos ? r->pos[0] : ev;
	if (id && (!*id || strspn(id, "0123456789") != strlen(id) || strlen(id) > 19 || strspn(id, "0") == strlen(id)))
		return cli_usage_error(r->cmd, "%s: not a positive integer", cli_esc(id));
	int rc = cli_run_connect(r, &c);
	if (rc)
		return rc;
	if (!id)
		return list(c, cli_opt(r, "container"), cli_flag(r, "json"));
	if (ev)
		snprintf(path, sizeof(path), "/api/v1/events/%s/flight", id);
	else
		snprintf(path, sizeof(path), "/api/v1/flight/%s", id);
	return one(c, path, cli_flag(r, "json"));
}
