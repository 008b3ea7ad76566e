/* Help derived from the command table (commands.h): `sandlens --help`,
 * `sandlens CMD --help`, `sandlens help CMD`, `sandlens version`, and the
 * "did you mean" suggestions of usage errors. */
#include "cli/commands.h"
#include "common/version.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define HELP_WIDTH 79 /* help text is wrapped here, whatever the terminal */

int cli_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int d[65][65];
	if (la > 64 || lb > 64)
		return 99;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			int cost = a[i - 1] != b[j - 1];
			int v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1; /* transposition */
			d[i][j] = v;
		}
	return d[la][lb];
}

const char *cli_suggest(const char *word, const char *const *cands, size_t n)
{
	size_t wl = strlen(word);
	int best = 99, max = wl <= 4 ? 1 : wl <= 8 ? 2 : 3;
	const char *pick = NULL, *prefix = NULL;
	int nprefix = 0;
	if (!wl)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		int d = cli_edit_distance(word, cands[i]);
		if (d < best) {
			best = d;
			pick = cands[i];
		}
		if (!strncmp(cands[i], word, wl)) {
			prefix = cands[i];
			nprefix++;
		}
	}
	if (best <= max)
		return pick;
	return nprefix == 1 ? prefix : NULL;
}

const char *cli_suggest_command(const char *word)
{
	const char *names[64];
	size_t n = 0;
	for (const struct cli_command *c = cli_commands; c->name && n < 64; c++)
		names[n++] = c->name;
	return cli_suggest(word, names, n);
}

const char *cli_suggest_option(const struct cli_command *cmd, const char *opt)
{
	static char out[80];
	const char *names[CLI_MAX_OPTS + 16];
	size_t n = 0;
	char word[80];
	const char *w = opt;
	while (*w == '-')
		w++;
	snprintf(word, sizeof(word), "%.*s", (int)strcspn(w, "="), w);
	for (const struct cli_opt *o = cmd ? cmd->opts : NULL; o && o->name && n < CLI_MAX_OPTS; o++)
		names[n++] = o->name;
	for (const struct cli_opt *o = cli_global_opts; o->name && n < CLI_MAX_OPTS + 16; o++)
		names[n++] = o->name;
	const char *s = cli_suggest(word, names, n);
	if (!s)
		return NULL;
	snprintf(out, sizeof(out), "--%s", s);
	return out;
}

/* text wrapped at HELP_WIDTH, every line indented by indent, the first
 * starting at column col (already written). */
static void wrap(FILE *out, const char *text, int indent, int col)
{
	const char *p = text;
	while (*p) {
		size_t wl = strcspn(p, " ");
		if (col > indent && col + 1 + (int)wl > HELP_WIDTH) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', out);
			col++;
		}
		while (col < indent) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, wl, out);
		col += (int)wl;
		p += wl;
		while (*p == ' ')
			p++;
	}
	fputc('\n', out);
}

static void print_opts(FILE *out, const struct cli_opt *opts)
{
	for (const struct cli_opt *o = opts; o && o->name; o++) {
		char head[64];
		int n;
		if (o->shrt) /* "  -f, --follow"; a long-only option aligned with it */
			n = snprintf(head, sizeof(head), "  -%c, --%s%s%s", o->shrt, o->name, o->arg ? " " : "",
				     o->arg ? o->arg : "");
		else
			n = snprintf(head, sizeof(head), "      --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		fputs(head, out);
		if (n >= 26) {
			fputc('\n', out);
			n = 0;
		}
		wrap(out, o->doc, 26, n);
	}
}

void cli_help_global(FILE *out)
{
	fprintf(out, "usage: sandlens [--api URL | --socket PATH] [--token-file FILE]\n"
		     "                <command> [options]\n"
		     "\ncommands:\n");
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		int n = fprintf(out, "  %-16s", c->name);
		wrap(out, c->summary, 18, n > 18 ? 99 : n);
	}
	fprintf(out, "\nglobal options (before or after the command):\n");
	print_opts(out, cli_global_opts);
	fprintf(out, "\n'sandlens COMMAND --help' shows a command's options.\n"
		     "exit status: 0 ok, 1 API unreachable or server error, 2 usage error\n");
}

void cli_help_command(FILE *out, const struct cli_command *c)
{
	int col = fprintf(out, "usage: sandlens %s", c->name);
	if (c->usage[0])
		wrap(out, c->usage, col + 1, col);
	else
		fputc('\n', out);
	fputc('\n', out);
	char sum[256];
	snprintf(sum, sizeof(sum), "%s", c->summary);
	if (sum[0] >= 'a' && sum[0] <= 'z')
		sum[0] = (char)(sum[0] - 'a' + 'A');
	wrap(out, sum, 0, 0);
	if (c->help) {
		fputc('\n', out);
		wrap(out, c->help, 0, 0);
	}
	if (c->opts && c->opts->name) {
		fprintf(out, "\noptions:\n");
		print_opts(out, c->opts);
	}
	fprintf(out, "\nglobal options:\n");
	print_opts(out, cli_global_opts);
	fprintf(out, "\nexit status: 0 ok, 1 API unreachable or server error, 2 usage error\n");
}

int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("sandlens: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'sandlens %s%s--help'.\n", cmd ? cmd->name : "", cmd ? " " : "");
	return CLI_USAGE;
}

int cli_cmd_help(struct cli_run *r)
{
	if (!r->npos) {
		cli_help_global(stdout);
		return CLI_OK;
	}
	const struct cli_command *c = cli_command_find(r->pos[0]);
	if (!c) {
		const char *s = cli_suggest_command(r->pos[0]);
		if (s)
			return cli_usage_error(NULL, "unknown command '%s' (did you mean '%s'?)", r->pos[0], s);
		return cli_usage_error(NULL, "unknown command '%s'", r->pos[0]);
	}
	cli_help_command(stdout, c);
	return CLI_OK;
}

int cli_cmd_version(struct cli_run *r)
{
	(void)r;
	printf("sandlens %s\n", SANDLENS_VERSION);
	return CLI_OK;
}
