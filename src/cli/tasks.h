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

/* Runs a task to completion: creates it with follow=true (body: the POST
 * object; "follow" is set here, the caller keeps ownership) and reads its
 * progress stream (cli_http_stream; timeout_s for the whole stream) until
 * the final record, calling on_progress (may be NULL) with each record;
 * then ends the progress line on a terminal (stderr). Returns CLI_OK with
 * *final (new reference) when the task's final status is "done". Otherwise
 * *final is NULL and it has printed why and returns the exit code:
 * "sandlens: task ID STATUS: REASON" (CLI_ERR) for a task that failed or was
 * cancelled; "interrupted: the task is cancelled by the agent" (CLI_ERR)
 * when *stop became non-zero (closing the stream makes the agent cancel the
 * task); cli_unreachable; cli_http_error("create task") for a reply other
 * than 201; "the progress stream ended before the task did" (CLI_ERR). */
int cli_task_run(struct cli_conn *c, json_t *body, long timeout_s,
		 void (*on_progress)(json_t *rec, void *ctx), void *ctx,
		 volatile sig_atomic_t *stop, json_t **final);

/* `sandlens profile ...` with argv after the command (argc/argv like main). */
int cli_profile_main(struct cli_conn *c, int argc, char **argv, volatile sig_atomic_t *stop);

/* Parse the target options shared by profile and syscall-errors into the
 * POST body's "target": --container ID | --pod UID | --pid N | --tid N.
 * Returns 1 when argv[*i] was one (advancing *i), 0 when not, -1 on a
 * usage error (printed). */
int cli_task_target_opt(int argc, char **argv, int *i, json_t *body);

#endif
