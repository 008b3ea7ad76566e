/* `sandlens profile`, `sandlens tasks`, `sandlens syscall-errors`: clients
 * of the task API (docs/TASKS.md, docs/CLI.md "Tasks"). */
#ifndef SANDLENS_CLI_TASKS_H
#define SANDLENS_CLI_TASKS_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>

#include "cli/cli.h"

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

struct cli_run;

/* `sandlens profile` with its parsed options (commands.c profile_opts). */
int cli_profile_main(struct cli_conn *c, const struct cli_run *r, volatile sig_atomic_t *stop);
/* `sandlens profile` over stored continuous-profiling windows
 * (profile_stored.c, docs/CLI.md): wanted when --since, --until,
 * --base-since, --base-until, --windows or --host is given. write_file and
 * write_stdout: profile.c's safe writers (0 or -errno). Returns the exit
 * code. */
int cli_profile_stored_wanted(const struct cli_run *r);
int cli_profile_stored(struct cli_conn *c, const struct cli_run *r, int (*write_file)(const char *, const char *, size_t),
		       int (*write_stdout)(const char *, size_t));

/* The target options shared by profile and syscall-errors (--container ID |
 * --pod UID | --pid N | --tid N, parsed in r) into the POST body's
 * "target". Returns 1 when one was given, 0 when none, -1 on a usage error
 * (printed: two targets, a pid that is not a positive number). */
int cli_task_target(const struct cli_run *r, json_t *body);

/* A task's --duration: the config's duration syntax (sl_parse_duration_ns,
 * src/common/units.h) with its unit written (a plain number is refused),
 * at least 1 ms. Returns 0 with *ns, or -1. */
int cli_parse_task_duration(const char *v, uint64_t *ns);

#endif
