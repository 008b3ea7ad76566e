/* The CLI's command table: the one place a command is declared
 * (src/cli/commands.c). Everything that lists commands or options derives
 * from it: dispatch and option parsing (main.c), `--help` and
 * `sandlens help CMD`, "did you mean" for a mistyped command or option
 * (help.c), `sandlens completion bash` and `sandlens man` (gen.c, and the
 * build's $(B)/doc/sandlens.1). docs/CLI.md "Adding a command".
 *
 * Adding a command is one entry of cli_commands[] (name, summary, usage,
 * options, handler) and the handler in a file of its own.
 */
#ifndef SANDLENS_CLI_COMMANDS_H
#define SANDLENS_CLI_COMMANDS_H

#include "cli/cli.h"

/* Most options one command may declare (its own, not the global ones). */
#define CLI_MAX_OPTS 24
/* Most positional arguments any command takes. */
#define CLI_MAX_POS 8

/* One option: --name [ARG] (and -c when shrt is set). */
struct cli_opt {
	const char *name; /* long name without "--": "container" */
	char shrt;        /* short letter ('f' for -f), or 0 */
	const char *arg;  /* metavariable of its value ("ID"), NULL for a flag;
			   * "FILE" or "PATH" make the completion offer files */
	const char *doc;  /* one line, for --help, the man page and completion */
};

struct cli_run;

struct cli_command {
	const char *name;    /* [a-z][a-z0-9-]*: `sandlens NAME` */
	const char *summary; /* one line, lower case, no full stop */
	const char *usage;   /* what follows NAME in the usage line ("[ID] [--json]") */
	const char *help;    /* more text for --help and the man page (may be NULL) */
	const struct cli_opt *opts; /* NULL-name terminated (may be NULL) */
	int min_pos, max_pos;       /* positional arguments allowed */
	const char *const *pos_words; /* words the completion offers for the first
				       * positional (NULL-terminated; may be NULL) */
	int (*run)(struct cli_run *r); /* returns the exit code (CLI_OK, CLI_ERR, CLI_USAGE) */
};

/* The table (commands.c), terminated by an entry with a NULL name. */
extern const struct cli_command cli_commands[];
/* The options every command takes, anywhere on the line (main.c). */
extern const struct cli_opt cli_global_opts[];

/* A parsed command line, handed to the handler. */
struct cli_run {
	const struct cli_command *cmd;
	const char *val[CLI_MAX_OPTS]; /* value of cmd->opts[i]: its argument, "" for
					* a flag given, NULL when absent (last one wins) */
	char *pos[CLI_MAX_POS];        /* positional arguments, in order */
	int npos;
	const char *api, *socket;      /* --api / --socket (NULL when not given) */
	struct cli_conn conn;          /* valid once cli_run_connect returned CLI_OK */
	int connected;
};

/* The command named name, or NULL. */
const struct cli_command *cli_command_find(const char *name);

/* Value of cmd's option name (long name without "--") in r: its argument,
 * "" for a flag that was given, NULL when absent or not declared. */
const char *cli_opt(const struct cli_run *r, const char *name);
/* 1 when the flag or option name was given. */
int cli_flag(const struct cli_run *r, const char *name);

/* Resolves the API address (cli_api_resolve), installs the signal handlers
 * and opens the connection, once; *c points at r->conn. Returns CLI_OK,
 * or prints why and returns CLI_USAGE (a bad --api) or CLI_ERR (libcurl). */
int cli_run_connect(struct cli_run *r, struct cli_conn **c);

/* ---- help.c ---- */

/* Levenshtein distance between a and b (insert, delete, substitute: 1
 * each; transposing two neighbours: 1), for strings up to 64 bytes; a
 * longer one counts as 99. */
int cli_edit_distance(const char *a, const char *b);
/* The candidate closest to word when close enough to be a typo (distance
 * <= 1 for words up to 4 characters, <= 2 up to 8, else <= 3; or word is a
 * prefix of exactly one candidate), else NULL. cands: n strings. */
const char *cli_suggest(const char *word, const char *const *cands, size_t n);
/* The command name closest to word (cli_suggest over the table), or NULL. */
const char *cli_suggest_command(const char *word);
/* The long option ("--container") of cmd (NULL: only the globals) or of the
 * globals closest to opt ("--contianer", "--contianer=x"), or NULL.
 * Returns a pointer into a static buffer. */
const char *cli_suggest_option(const struct cli_command *cmd, const char *opt);

/* `sandlens --help`: usage, every command with its summary, the global
 * options, exit codes. */
void cli_help_global(FILE *out);
/* `sandlens CMD --help`: usage line, summary, help text, its options, the
 * global options. */
void cli_help_command(FILE *out, const struct cli_command *cmd);
/* "sandlens: MSG\nTry 'sandlens [CMD ]--help'.\n" on stderr; returns CLI_USAGE. */
int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- gen.c ---- */

/* The bash completion script for the table (`sandlens completion bash`):
 * defines _sandlens and runs `complete -F _sandlens sandlens`. */
void cli_gen_bash_completion(FILE *out);
/* The man page sandlens(1) in roff (man(7) macros) from the table
 * (`sandlens man`; the build writes it to $(B)/doc/sandlens.1). */
void cli_gen_man(FILE *out);

/* ---- term.c ---- */

/* Columns the output may use: $COLUMNS when it is a number 20..10000, else
 * the terminal's width (TIOCGWINSZ on stdout) when stdout is a terminal,
 * else 0 (no limit: a pipe or file gets whole lines). */
int cli_term_width(void);

/* ---- handlers (one per entry of cli_commands[]) ---- */

int cli_cmd_events(struct cli_run *r);     /* events.c */
int cli_cmd_containers(struct cli_run *r); /* events.c */
int cli_cmd_status(struct cli_run *r);     /* events.c */
int cli_cmd_stats(struct cli_run *r);      /* stats.c */
int cli_cmd_top(struct cli_run *r);        /* top.c */
int cli_cmd_sandboxes(struct cli_run *r);  /* sandboxes.c */
int cli_cmd_profile(struct cli_run *r);    /* profile.c */
int cli_cmd_tasks(struct cli_run *r);      /* tasks.c */
int cli_cmd_syscall_errors(struct cli_run *r); /* tasks.c */
int cli_cmd_help(struct cli_run *r);       /* help.c */
int cli_cmd_version(struct cli_run *r);    /* help.c */
int cli_cmd_completion(struct cli_run *r); /* gen.c */
int cli_cmd_man(struct cli_run *r);        /* gen.c */
int cli_cmd_mcp(struct cli_run *r);        /* mcp.c */
int cli_cmd_io(struct cli_run *r);         /* io.c */
int cli_cmd_net(struct cli_run *r);        /* net.c */
int cli_cmd_flight(struct cli_run *r);     /* flight.c */
int cli_cmd_captures(struct cli_run *r);   /* captures.c */

#endif
