/* `sandlens stats [ID] [--json]`: workload statistics from
 * GET /api/v1/workloads and GET /api/v1/workloads/{id}/stats
 * (docs/STATS.md "API", docs/CLI.md). */
#ifndef SANDLENS_CLI_STATS_H
#define SANDLENS_CLI_STATS_H

#include "cli/cli.h"

/* id NULL: the list of workloads (table, or one JSON object per workload
 * with json). id given: that workload's figures (table, or the API body on
 * one line with json); source (NULL = the API's default, cgroup) is passed
 * as ?source= (cgroup, guest_agent, auto). Errors from the API are printed with their code and
 * reason. Returns CLI_OK; CLI_USAGE for a 400 (malformed id); CLI_ERR for
 * 404 NOT_FOUND, 409/503 FAILED_PRECONDITION, transport errors. */
int cli_stats(struct cli_conn *c, const char *id, const char *source, int json);

/* `sandlens stats --sandbox ID`: the workload ID's figures (as cli_stats)
 * when it is a sandbox; exit CLI_ERR with a message when it is a pod or a
 * container, or on the API errors cli_stats reports. (sandboxes.c) */
int cli_stats_sandbox(struct cli_conn *c, const char *id, const char *source, int json);

/* The table of one workload's figures (the 200 body of
 * /api/v1/workloads/{id}/stats). */
void cli_stats_print_workload(json_t *w);

#endif
