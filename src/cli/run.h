/* Parsing a command line against the command table (src/cli/run.c). */
#ifndef SANDLENS_CLI_RUN_H
#define SANDLENS_CLI_RUN_H

#include "cli/commands.h"

/* What cli_parse asks main() to do. */
enum { CLI_ACT_RUN, CLI_ACT_HELP, CLI_ACT_VERSION };

/* Parses argv (after main() took --token-file out) into r: the global
 * options (cli_global_opts: --api, --socket, -h/--help, -V/--version)
 * anywhere; the command, the first word that is not an option or an
 * option's value (an option before the command that takes a value in some
 * command takes the next word); the command's options as --name V,
 * --name=V or -c V (a value is taken whatever it looks like, so "-o -"
 * works), flags as --name; other words positional, as are all words after
 * "--". Sets *action: CLI_ACT_HELP for --help (r->cmd NULL: the global
 * help), CLI_ACT_VERSION for --version, else CLI_ACT_RUN. Returns CLI_OK,
 * or prints a usage error (with "did you mean" for an unknown command or
 * option close to a known one) and returns CLI_USAGE (CLI_ERR when out of
 * memory). r->pos points into argv. */
int cli_parse(int argc, char **argv, struct cli_run *r, int *action);

/* Closes the connection cli_run_connect opened (if any). */
void cli_run_close(struct cli_run *r);

#endif
