/* The `sandlens` command: a client of the local HTTP API (docs/CLI.md). */
#ifndef SANDLENS_CLI_H
#define SANDLENS_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

/* Exit codes (docs/CLI.md). */
enum { CLI_OK = 0, CLI_ERR = 1, CLI_USAGE = 2 };

/* ---- http.c: GET over TCP or a unix socket (libcurl) ---- */

struct cli_conn {
	const char *base;   /* "http://127.0.0.1:9753" (no trailing '/') */
	const char *socket; /* unix socket path, or NULL for TCP */
	void *curl;         /* CURL easy handle, reused (keep-alive) */
};

struct cli_resp {
	long status;       /* HTTP status, 0 on transport error */
	char *body;        /* malloc'd, NUL-terminated; NULL when empty */
	size_t len;
	char error[256];   /* transport error text */
};

/* Largest body the CLI accepts (the server bounds its bodies at 8 MiB). */
#define CLI_MAX_BODY ((size_t)64 << 20)

int cli_http_init(struct cli_conn *c, const char *base, const char *socket);
void cli_http_close(struct cli_conn *c);
/* GET base + path (path includes any query). Returns 0 when an HTTP
 * response arrived (any status), -1 on transport error (r->error set).
 * Free r->body with cli_resp_free(). */
int cli_http_get(struct cli_conn *c, const char *path, struct cli_resp *r);
void cli_resp_free(struct cli_resp *r);

/* Query string builder: appends "&k=v" (or "?k=v" first) with v
 * percent-encoded to a fixed buffer. Returns -1 when it does not fit. */
int cli_query_add(char *buf, size_t size, const char *k, const char *v);

/* ---- format.c: tables for people ---- */

/* Writes s to out with control bytes escaped as \xNN (terminal safety). */
void cli_put_safe(FILE *out, const char *s);
/* "2024-05-01T12:00:00.123Z" from the API's ns RFC 3339 string (copied
 * unchanged when it is not in that form). */
void cli_short_time(const char *rfc3339, char *buf, size_t len);
/* First 12 chars of the container id; the runtime ("host") when there is
 * none; "-" when neither is known. */
void cli_short_container(json_t *ev, char *buf, size_t len);
/* Type-specific DETAILS column of an event (exec argv, exit code/signal,
 * signal sender->target, oom actor/victim/constraint). malloc'd. */
char *cli_event_details(json_t *ev);
/* "SIGSEGV" for 11, "SIG42" when unnamed. */
void cli_signal_name(int sig, char *buf, size_t len);

void cli_print_event_header(FILE *out);
void cli_print_event_row(FILE *out, json_t *ev);
void cli_print_containers(FILE *out, json_t *containers);
/* Health table; metrics may be NULL (Prometheus text for a short summary). */
void cli_print_status(FILE *out, json_t *health, const char *metrics);

/* ---- top.c: `sandlens top` (GET /api/v1/sched) ---- */

#include <signal.h>
/* Table of the sched snapshot: one row per container (and host), sorted by
 * runqueue wait in the interval: waits/s, p50/p90/p99/max wait, WAIT% (share
 * of runnable time spent waiting), internal/external wait, throttled time,
 * top two neighbours with the wait they caused. */
void cli_print_top(FILE *out, json_t *sched);
/* One snapshot (follow = 0) or a refresh every second until *stop; json
 * prints the API body as one line per refresh. Returns a CLI exit code. */
int cli_top(struct cli_conn *c, int json, int follow, volatile sig_atomic_t *stop);

#endif
