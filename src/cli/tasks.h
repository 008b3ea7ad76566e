/* `sandlens profile`, `sandlens tasks`, `sandlens syscall-errors`: clients
 * of the task API (docs/TASKS.md, docs/CLI.md "Tasks"). */
#ifndef SANDLENS_CLI_TASKS_H
#define SANDLENS_CLI_TASKS_H

#include <jansson.h>
#include <signal.h>

#include "cli/cli.h"

/* Entry point from main(): when the command (the first argument that is
 * not --api/--socket or their value) is "profile", "tasks" or
 * "syscall-errors", parse and run it and return 1 with the exit code in
 * *rc; otherwise return 0 (main parses as before). */
int cli_task_dispatch(int argc, char **argv, int *rc);

/* Any method with an optional JSON body; same contract as cli_http_get
 * (0 when a response arrived, -1 transport error). timeout_s 0 = 30 s. */
int cli_http_request(struct cli_conn *c, const char *method, const char *path, const char *body,
		     long timeout_s, struct cli_resp *r);

/* Create a task with follow=true (body: the POST object, "follow" is set
 * here) and read its progress stream until the final record, calling
 * on_progress (may be NULL) with each record. *final gets the last record
 * (new reference). Stops early (closing the connection, which makes the
 * agent cancel the task) when *stop becomes non-zero. Returns a CLI exit
 * code: 0 when a final record arrived (whatever its status). */
int cli_task_follow(struct cli_conn *c, json_t *body, long timeout_s,
		    void (*on_progress)(json_t *rec, void *ctx), void *ctx,
		    volatile sig_atomic_t *stop, json_t **final);

/* Print an API error reply (JSON {"error":{code,message}}) for what; returns
 * the exit code (2 for HTTP 400, else 1). */
int cli_task_http_error(const char *what, const struct cli_resp *r);

/* `sandlens profile ...` with argv after the command (argc/argv like main). */
int cli_profile_main(struct cli_conn *c, int argc, char **argv, volatile sig_atomic_t *stop);

/* Parse the target options shared by profile and syscall-errors into the
 * POST body's "target": --container ID | --pod UID | --pid N | --tid N.
 * Returns 1 when argv[*i] was one (advancing *i), 0 when not, -1 on a
 * usage error (printed). */
int cli_task_target_opt(int argc, char **argv, int *i, json_t *body);

#endif
