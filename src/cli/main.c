/* sandlens: command-line client of sandlensd's local API (docs/CLI.md).
 *
 *   sandlens [--api URL | --socket PATH] [--token-file FILE] <command> [options]
 *
 * The commands, their options and handlers are in the command table
 * (src/cli/commands.c); this file parses the line against it and runs the
 * handler. Exit: 0 ok, 1 API unreachable or server error, 2 usage error
 * (including a parameter the server rejects with 400).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/run.h"

volatile sig_atomic_t cli_stop;

static void on_signal(int sig)
{
	(void)sig;
	cli_stop = 1;
}

void cli_catch_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN); /* a closed stdout shows up as EPIPE */
}

int main(int argc, char **argv)
{
	struct cli_run r;
	int action;

	/* --token-file is global: taken out before any command parses argv */
	if (cli_take_token_option(&argc, argv))
		return cli_usage_error(NULL, "--token-file needs a value FILE");
	if (cli_token_file) {
		char tok[260];
		int tl = cli_read_token(cli_token_file, tok, sizeof(tok));
		memset(tok, 0, sizeof(tok));
		if (tl < 0) {
			fprintf(stderr, "sandlens: --token-file %s: %s\n", cli_token_file,
				tl == -EINVAL ? "not a regular file holding one token of 16..256 printable characters"
					      : strerror(-tl));
			return CLI_USAGE;
		}
	}

	int rc = cli_parse(argc, argv, &r, &action);
	if (rc)
		return rc;
	if (action == CLI_ACT_VERSION)
		return cli_cmd_version(&r);
	if (action == CLI_ACT_HELP) {
		if (r.cmd)
			cli_help_command(stdout, r.cmd);
		else
			cli_help_global(stdout);
		return CLI_OK;
	}
	cli_width = cli_term_width();
	rc = r.cmd->run(&r);
	cli_run_close(&r);
	fflush(stdout);
	return rc;
}
