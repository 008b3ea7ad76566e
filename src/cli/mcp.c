/* `sandlens mcp`: the MCP server's stdio transport (docs/MCP.md). Reads
 * newline-delimited JSON-RPC messages from stdin, answers each on stdout
 * (one line, no embedded newline: jansson's compact output escapes them),
 * logs nothing on stdout. The tools reach the agent through the local REST
 * API like every other command (--api / --socket / --token-file), so the
 * caller's access is the API's: as root over the unix socket, or with the
 * token, an admin; else a reader (capture_profile and the capture tools are
 * refused with a JSON-RPC error).
 *
 * A line longer than SL_MCP_MAX_MESSAGE is answered -32600 and skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/mcp.h"
#include "cli/commands.h"
#include "common/mcp.h"

static int backend_request(void *ctx, const char *method, const char *path, const char *body, long *status,
			   char **resp, char *err, size_t errlen)
{
	struct cli_resp r = {0};
	*resp = NULL;
	/* a profile wait may take a while: 120 s for one request */
	if (cli_http_request(ctx, method, path, body, 120, &r)) {
		snprintf(err, errlen, "cannot reach the sandlens API: %s", r.error);
		cli_resp_free(&r);
		return -1;
	}
	*status = r.status;
	*resp = r.body; /* ownership moves */
	return 0;
}


/* Reads one line of at most max bytes into *buf (grown); returns its length
 * without the '\n', -1 at EOF, -2 when it was longer (the rest of the line
 * is consumed). */
static long read_line(FILE *in, char **buf, size_t *cap, size_t max)
{
	size_t n = 0;
	int c, over = 0;
	while ((c = getc(in)) != EOF && c != '\n') {
		if (over || n >= max) {
			over = 1;
			continue;
		}
		if (n + 1 >= *cap) {
			size_t nc = *cap ? *cap * 2 : 4096;
			char *t = realloc(*buf, nc);
			if (!t) {
				over = 1;
				continue;
			}
			*buf = t;
			*cap = nc;
		}
		(*buf)[n++] = (char)c;
	}
	if (c == EOF && n == 0 && !over)
		return -1;
	if (over)
		return -2;
	if (n && (*buf)[n - 1] == '\r')
		n--;
	return (long)n;
}

int cli_mcp_serve(struct cli_conn *c, FILE *in, FILE *out)
{
	struct sl_mcp_backend be = {backend_request, c, 60};
	struct sl_mcp_session s = {0};
	char *line = NULL;
	size_t cap = 0;
	long n;
	while (!cli_stop && (n = read_line(in, &line, &cap, SL_MCP_MAX_MESSAGE)) != -1) {
		struct sl_mcp_reply r = {0};
		if (n == -2) {
			char msg[120];
			snprintf(msg, sizeof(msg), "invalid request: message longer than %zu bytes", SL_MCP_MAX_MESSAGE);
			r.body = sl_mcp_error_text(NULL, SL_MCP_INVALID_REQUEST, msg, NULL);
		} else if (n == 0) {
			continue; /* blank line between messages */
		} else {
			sl_mcp_handle(&be, SL_MCP_STDIO, NULL, &s, line, (size_t)n, &r);
		}
		if (r.body) {
			fputs(r.body, out);
			fputc('\n', out);
			free(r.body);
			if (fflush(out) != 0) {
				free(line);
				return errno == EPIPE ? CLI_OK : CLI_ERR;
			}
		}
	}
	free(line);
	return CLI_OK;
}

int cli_cmd_mcp(struct cli_run *r)
{
	struct cli_conn *c;
	int rc = cli_run_connect(r, &c);
	return rc ? rc : cli_mcp_serve(c, stdin, stdout);
}
