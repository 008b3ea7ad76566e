/* The command line parsed against the command table (commands.h, run.h):
 * global options anywhere, the command, its options (long --name V,
 * --name=V, short -c V) and positional arguments. */
#include "cli/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct cli_command *cli_command_find(const char *name)
{
	for (const struct cli_command *c = cli_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

static int opt_index(const struct cli_command *c, const char *name)
{
	for (int i = 0; c && c->opts && c->opts[i].name; i++)
		if (!strcmp(c->opts[i].name, name))
			return i;
	return -1;
}

const char *cli_opt(const struct cli_run *r, const char *name)
{
	int i = opt_index(r->cmd, name);
	return i < 0 ? NULL : r->val[i];
}

int cli_flag(const struct cli_run *r, const char *name)
{
	return cli_opt(r, name) != NULL;
}

int cli_run_connect(struct cli_run *r, struct cli_conn **c)
{
	static char base[1024];
	if (r->connected) {
		*c = &r->conn;
		return CLI_OK;
	}
	int bad = cli_api_resolve(&r->api, &r->socket, base, sizeof(base));
	if (bad == -1)
		return cli_usage_error(NULL, "bad --api URL '%s'", r->api ? r->api : "");
	if (bad)
		return cli_usage_error(NULL, "--api wants a URL like http://127.0.0.1:9753, not '%s'", r->api);
	cli_catch_signals();
	if (cli_http_init(&r->conn, base, r->socket)) {
		fprintf(stderr, "sandlens: libcurl initialisation failed\n");
		return CLI_ERR;
	}
	r->connected = 1;
	*c = &r->conn;
	return CLI_OK;
}

void cli_run_close(struct cli_run *r)
{
	if (r->connected)
		cli_http_close(&r->conn);
	r->connected = 0;
}

/* The option of opts named by arg ("--name", "--name=v" or "-c"), or NULL. */
static const struct cli_opt *match(const struct cli_opt *opts, const char *arg, const char **eq)
{
	*eq = NULL;
	if (!opts)
		return NULL;
	if (arg[0] == '-' && arg[1] == '-') {
		const char *n = arg + 2;
		size_t nl = strcspn(n, "=");
		for (const struct cli_opt *o = opts; o->name; o++)
			if (strlen(o->name) == nl && !strncmp(o->name, n, nl)) {
				*eq = n[nl] == '=' ? n + nl + 1 : NULL;
				return o;
			}
		return NULL;
	}
	if (arg[0] == '-' && arg[1] && !arg[2])
		for (const struct cli_opt *o = opts; o->name; o++)
			if (o->shrt == arg[1])
				return o;
	return NULL;
}

/* Before the command is known: does arg name an option taking a value in
 * any command (so the next word is its value, not the command)? */
static int any_takes_value(const char *arg)
{
	const char *eq;
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		const struct cli_opt *o = match(c->opts, arg, &eq);
		if (o && o->arg && !eq)
			return 1;
	}
	return 0;
}

/* Before the command is known: does arg name an option of some command? */
static int any_declares(const char *arg)
{
	const char *eq;
	for (const struct cli_command *c = cli_commands; c->name; c++)
		if (match(c->opts, arg, &eq))
			return 1;
	return 0;
}

/* The closest long option of any command or the globals ("--container"),
 * for an option before the command that none declares; NULL if none is
 * close. */
static const char *suggest_any(const char *arg)
{
	static char out[80];
	const char *names[256], *w = arg;
	size_t n = 0;
	char word[80];
	for (const struct cli_opt *o = cli_global_opts; o->name && n < 256; o++)
		names[n++] = o->name;
	for (const struct cli_command *c = cli_commands; c->name; c++)
		for (const struct cli_opt *o = c->opts; o && o->name && n < 256; o++)
			names[n++] = o->name;
	while (*w == '-')
		w++;
	snprintf(word, sizeof(word), "%.*s", (int)strcspn(w, "="), w);
	const char *s = cli_suggest(word, names, n);
	if (!s)
		return NULL;
	snprintf(out, sizeof(out), "--%s", s);
	return out;
}

static int is_option(const char *a)
{
	return a[0] == '-' && a[1]; /* "-" alone is a value (stdout) */
}

int cli_parse(int argc, char **argv, struct cli_run *r, int *action)
{
	char **rest = NULL;
	int nrest = 0, dashdash = -1;
	const struct cli_command *cmd = NULL;
	int help = 0, version = 0;

	memset(r, 0, sizeof(*r));
	*action = CLI_ACT_RUN;
	rest = calloc((size_t)argc + 1, sizeof(*rest));
	if (!rest) {
		fprintf(stderr, "sandlens: out of memory\n");
		return CLI_ERR;
	}
	/* pass 1: global options anywhere, the command word, the rest in order */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq;
		if (dashdash < 0 && !strcmp(a, "--")) {
			dashdash = nrest;
			continue;
		}
		const struct cli_opt *g = dashdash < 0 ? match(cli_global_opts, a, &eq) : NULL;
		if (g) {
			const char *v = eq;
			if (g->arg && !v) {
				if (i + 1 >= argc) {
					free(rest);
					return cli_usage_error(cmd, "--%s needs a value %s", g->name, g->arg);
				}
				v = argv[++i];
			} else if (!g->arg && v) {
				free(rest);
				return cli_usage_error(cmd, "--%s takes no value", g->name);
			}
			if (!strcmp(g->name, "api"))
				r->api = v;
			else if (!strcmp(g->name, "socket"))
				r->socket = v;
			else if (!strcmp(g->name, "help"))
				help = 1;
			else if (!strcmp(g->name, "version"))
				version = 1;
			/* token-file: main() takes it out before (cli_take_token_option) */
			continue;
		}
		if (!cmd && (dashdash >= 0 || !is_option(a))) {
			cmd = cli_command_find(a);
			if (!cmd) {
				const char *s = cli_suggest_command(a);
				free(rest);
				if (s)
					return cli_usage_error(NULL, "unknown command '%s' (did you mean '%s'?)", a, s);
				return cli_usage_error(NULL, "unknown command '%s'", a);
			}
			continue;
		}
		if (!cmd && dashdash < 0 && is_option(a) && !any_declares(a)) {
			const char *s = suggest_any(a);
			free(rest);
			if (s)
				return cli_usage_error(NULL, "unknown option '%s' (did you mean %s?)", a, s);
			return cli_usage_error(NULL, "unknown option '%s'", a);
		}
		rest[nrest++] = argv[i];
		if (dashdash < 0 && is_option(a) && i + 1 < argc &&
		    (cmd ? (match(cmd->opts, a, &eq) && match(cmd->opts, a, &eq)->arg && !eq) : any_takes_value(a)))
			rest[nrest++] = argv[++i]; /* its value, whatever it looks like ("-o -") */
	}
	if (version && !cmd) {
		free(rest);
		*action = CLI_ACT_VERSION;
		return CLI_OK;
	}
	if (!cmd) {
		free(rest);
		if (help) {
			*action = CLI_ACT_HELP;
			return CLI_OK;
		}
		return cli_usage_error(NULL, "missing command (sandlens --help lists them)");
	}
	r->cmd = cmd;
	if (help) {
		free(rest);
		*action = CLI_ACT_HELP;
		return CLI_OK;
	}
	/* pass 2: the command's options and positional arguments */
	for (int i = 0; i < nrest; i++) {
		const char *a = rest[i], *eq;
		if ((dashdash < 0 || i < dashdash) && is_option(a)) {
			const struct cli_opt *o = match(cmd->opts, a, &eq);
			if (!o) {
				const char *s = cli_suggest_option(cmd, a);
				int rc = s ? cli_usage_error(cmd, "unknown option '%s' for '%s' (did you mean %s?)", a,
							     cmd->name, s)
					   : cli_usage_error(cmd, "unknown option '%s' for '%s'", a, cmd->name);
				free(rest);
				return rc;
			}
			int k = (int)(o - cmd->opts);
			if (o->arg) {
				if (!eq && i + 1 >= nrest) {
					free(rest);
					if (o->shrt && a[1] != '-')
						return cli_usage_error(cmd, "-%c needs a value %s", o->shrt, o->arg);
					return cli_usage_error(cmd, "--%s needs a value %s", o->name, o->arg);
				}
				r->val[k] = eq ? eq : rest[++i];
			} else {
				if (eq) {
					free(rest);
					return cli_usage_error(cmd, "--%s takes no value", o->name);
				}
				r->val[k] = "";
			}
			continue;
		}
		if (r->npos >= cmd->max_pos || r->npos >= CLI_MAX_POS) {
			free(rest);
			return cli_usage_error(cmd, "unexpected argument '%s' for '%s'", a, cmd->name);
		}
		r->pos[r->npos++] = rest[i];
	}
	free(rest);
	if (r->npos < cmd->min_pos)
		return cli_usage_error(cmd, "'%s' needs %s", cmd->name, cmd->usage);
	if (version)
		*action = CLI_ACT_VERSION;
	return CLI_OK;
}
