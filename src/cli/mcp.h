/* `sandlens mcp`: the MCP server over stdio (src/cli/mcp.c, docs/MCP.md). */
#ifndef SANDLENS_CLI_MCP_H
#define SANDLENS_CLI_MCP_H

#include <stdio.h>

#include "cli/cli.h"

/* Entry point from main(): when the command (the first argument that is
 * not --api/--socket or their value) is "mcp", run the stdio server and
 * return 1 with the exit code in *rc (0 at end of input or on SIGINT/
 * SIGTERM, 1 when the output failed, 2 usage); otherwise return 0. */
int cli_mcp_dispatch(int argc, char **argv, int *rc);

/* Serves newline-delimited JSON-RPC from in to out, one answer line per
 * request (none for notifications), the tools through c, until end of
 * input or cli_stop. Returns a CLI exit code. */
int cli_mcp_serve(struct cli_conn *c, FILE *in, FILE *out);

#endif
