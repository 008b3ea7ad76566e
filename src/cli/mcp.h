/* `sandlens mcp`: the MCP server over stdio (src/cli/mcp.c, docs/MCP.md). */
#ifndef SANDLENS_CLI_MCP_H
#define SANDLENS_CLI_MCP_H

#include <stdio.h>

#include "cli/cli.h"


/* Serves newline-delimited JSON-RPC from in to out, one answer line per
 * request (none for notifications), the tools through c, until end of
 * input or cli_stop. Returns a CLI exit code. */
int cli_mcp_serve(struct cli_conn *c, FILE *in, FILE *out);

#endif
