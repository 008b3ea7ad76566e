/* The CLI's command table and what derives from it (src/cli/commands.c,
 * run.c, help.c, gen.c compiled into this test, with the handlers stubbed):
 * the table is well-formed; the parser puts options (before or after the
 * command, --x=v, -o -) and positional arguments where the handler reads
 * them and refuses what is not declared; "did you mean" finds the
 * command or option one typo away and nothing for a word far from all;
 * help, completion and the man page name every command and option;
 * help lines fit 80 columns; docs/CLI.md names every command. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/commands.c"
#include "cli/run.c"
#include "cli/help.c"
#include "cli/gen.c"
#include "cli/term.c"
#include "cli/http.c"
#include "cli/peer_check.c"
#include "cli/sock_diag.c"
#include "cli/format.c"
#include "cli/schema.c"

volatile sig_atomic_t cli_stop;
void cli_catch_signals(void) {}

/* handlers: record the run they got */
static struct cli_run g_last;
static const char *g_called;
#define STUB(fn, name)                   \
	int fn(struct cli_run *r)        \
	{                                \
		g_last = *r;             \
		g_called = name;         \
		return 0;                \
	}
STUB(cli_cmd_events, "events")
STUB(cli_cmd_containers, "containers")
STUB(cli_cmd_status, "status")
STUB(cli_cmd_stats, "stats")
STUB(cli_cmd_top, "top")
STUB(cli_cmd_sandboxes, "sandboxes")
STUB(cli_cmd_profile, "profile")
STUB(cli_cmd_tasks, "tasks")
STUB(cli_cmd_syscall_errors, "syscall-errors")
STUB(cli_cmd_mcp, "mcp")
STUB(cli_cmd_io, "io")
STUB(cli_cmd_net, "net")
STUB(cli_cmd_flight, "flight")
STUB(cli_cmd_captures, "captures")

/* cli_parse of a NULL-terminated word list after "sandlens" */
static int parse(struct cli_run *r, int *act, ...)
{
	static char *argv[32];
	va_list ap;
	int argc = 0;
	argv[argc++] = "sandlens";
	va_start(ap, act);
	for (char *w; (w = va_arg(ap, char *)) && argc < 31;)
		argv[argc++] = w;
	va_end(ap);
	argv[argc] = NULL;
	FILE *saved = stderr; /* usage errors are expected: keep the log quiet */
	stderr = fopen("/dev/null", "w");
	int rc = cli_parse(argc, argv, r, act);
	fclose(stderr);
	stderr = saved;
	return rc;
}

static void test_table_well_formed(void **state)
{
	(void)state;
	size_t n = 0;
	for (const struct cli_command *c = cli_commands; c->name; c++, n++) {
		assert_non_null(c->summary);
		assert_non_null(c->usage);
		assert_non_null(c->run);
		assert_true(c->name[0] >= 'a' && c->name[0] <= 'z');
		assert_int_equal(strspn(c->name, "abcdefghijklmnopqrstuvwxyz0123456789-"), strlen(c->name));
		assert_true(c->min_pos <= c->max_pos && c->max_pos <= CLI_MAX_POS);
		for (const struct cli_command *d = c + 1; d->name; d++)
			if (!strcmp(c->name, d->name))
				fail_msg("command %s twice", c->name);
		size_t no = 0;
		for (const struct cli_opt *o = c->opts; o && o->name; o++, no++) {
			assert_non_null(o->doc);
			for (const struct cli_opt *p = o + 1; p->name; p++)
				if (!strcmp(o->name, p->name) || (o->shrt && o->shrt == p->shrt))
					fail_msg("%s: option %s declared twice", c->name, o->name);
			for (const struct cli_opt *g = cli_global_opts; g->name; g++)
				if (!strcmp(o->name, g->name) || (o->shrt && o->shrt == g->shrt))
					fail_msg("%s: option %s hides the global one", c->name, o->name);
		}
		assert_true(no <= CLI_MAX_OPTS);
	}
	assert_true(n >= 12);
}

static void test_parse_options(void **state)
{
	(void)state;
	struct cli_run r;
	int act;
	assert_int_equal(parse(&r, &act, "--json", "events", "--type", "exec", "-f", NULL), 0);
	assert_int_equal(act, CLI_ACT_RUN);
	assert_string_equal(r.cmd->name, "events");
	assert_string_equal(cli_opt(&r, "type"), "exec");
	assert_true(cli_flag(&r, "follow") && cli_flag(&r, "json"));
	assert_false(cli_flag(&r, "no-host"));
	assert_null(cli_opt(&r, "since"));

	/* an option's value before the command is not taken for the command */
	assert_int_equal(parse(&r, &act, "--type", "exec", "events", "--limit=5", "--no-host", NULL), 0);
	assert_string_equal(cli_opt(&r, "type"), "exec");
	assert_string_equal(cli_opt(&r, "limit"), "5");
	assert_true(cli_flag(&r, "no-host"));

	/* globals anywhere */
	assert_int_equal(parse(&r, &act, "events", "--api", "http://x:1", "--socket=/s", NULL), 0);
	assert_string_equal(r.api, "http://x:1");
	assert_string_equal(r.socket, "/s");

	/* -o - is a value, not an option */
	assert_int_equal(parse(&r, &act, "profile", "--pid", "7", "-o", "-", NULL), 0);
	assert_string_equal(cli_opt(&r, "output"), "-");
	assert_string_equal(cli_opt(&r, "pid"), "7");

	/* positional arguments */
	assert_int_equal(parse(&r, &act, "stats", "abc", "--json", NULL), 0);
	assert_int_equal(r.npos, 1);
	assert_string_equal(r.pos[0], "abc");
	assert_int_equal(parse(&r, &act, "tasks", "show", "t-1", NULL), 0);
	assert_int_equal(r.npos, 2);
	assert_int_equal(parse(&r, &act, "stats", "a", "b", NULL), CLI_USAGE);
	assert_int_equal(parse(&r, &act, "events", "extra", NULL), CLI_USAGE);
	assert_int_equal(parse(&r, &act, "completion", NULL), CLI_USAGE); /* needs its shell */

	/* undeclared options, missing values, values on flags */
	assert_int_equal(parse(&r, &act, "containers", "--type", "exec", NULL), CLI_USAGE);
	assert_int_equal(parse(&r, &act, "top", "--limit", "3", NULL), CLI_USAGE);
	assert_int_equal(parse(&r, &act, "events", "--type", NULL), CLI_USAGE);
	assert_int_equal(parse(&r, &act, "events", "--json=1", NULL), CLI_USAGE);
	assert_int_equal(parse(&r, &act, "profile", "--json", NULL), CLI_USAGE);
	assert_int_equal(parse(&r, &act, "frobnicate", NULL), CLI_USAGE);
	/* an option before the command that no command declares: refused at
	 * once (its value is not taken for the command) */
	assert_int_equal(parse(&r, &act, "--contianer", "x", "events", NULL), CLI_USAGE);
	assert_string_equal(suggest_any("--contianer"), "--container");
	assert_string_equal(suggest_any("--duraton=5s"), "--duration");
	assert_null(suggest_any("--colour"));
	assert_int_equal(parse(&r, &act, NULL), CLI_USAGE);

	/* help and version */
	assert_int_equal(parse(&r, &act, "--help", NULL), 0);
	assert_int_equal(act, CLI_ACT_HELP);
	assert_null(r.cmd);
	assert_int_equal(parse(&r, &act, "top", "-h", NULL), 0);
	assert_int_equal(act, CLI_ACT_HELP);
	assert_string_equal(r.cmd->name, "top");
	assert_int_equal(parse(&r, &act, "--version", NULL), 0);
	assert_int_equal(act, CLI_ACT_VERSION);

	/* the handler is the table's */
	assert_int_equal(parse(&r, &act, "syscall-errors", "--container", "abcd", NULL), 0);
	g_called = NULL;
	assert_int_equal(r.cmd->run(&r), 0);
	assert_string_equal(g_called, "syscall-errors");
	assert_string_equal(cli_opt(&g_last, "container"), "abcd");
}

static void test_suggest(void **state)
{
	(void)state;
	assert_int_equal(cli_edit_distance("events", "events"), 0);
	assert_int_equal(cli_edit_distance("evnts", "events"), 1);
	assert_int_equal(cli_edit_distance("evetns", "events"), 1); /* transposition */
	assert_int_equal(cli_edit_distance("", "top"), 3);
	assert_string_equal(cli_suggest_command("evnts"), "events");
	assert_string_equal(cli_suggest_command("stauts"), "status");
	assert_string_equal(cli_suggest_command("tpo"), "top");
	assert_string_equal(cli_suggest_command("syscall"), "syscall-errors"); /* a unique prefix */
	assert_null(cli_suggest_command("frobnicate"));
	assert_null(cli_suggest_command("x"));
	const struct cli_command *ev = cli_command_find("events");
	assert_string_equal(cli_suggest_option(ev, "--contianer"), "--container");
	assert_string_equal(cli_suggest_option(ev, "--folow"), "--follow");
	assert_string_equal(cli_suggest_option(ev, "--no-hsot=1"), "--no-host");
	assert_string_equal(cli_suggest_option(ev, "--sokcet"), "--socket"); /* a global */
	assert_null(cli_suggest_option(ev, "--colour"));
}

/* text of fn(stream) */
static char *capture(void (*fn)(FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fn(f);
	fclose(f);
	return buf;
}

static const struct cli_command *g_help_cmd;
static void help_of(FILE *f)
{
	cli_help_command(f, g_help_cmd);
}

static void check_width(const char *text, size_t max, const char *what)
{
	for (const char *p = text; *p;) {
		size_t ll = strcspn(p, "\n");
		if (ll > max)
			fail_msg("%s: a line of %zu > %zu columns: %.*s", what, ll, max, (int)ll, p);
		p += ll + (p[ll] == '\n');
	}
}

static void test_generated_name_everything(void **state)
{
	(void)state;
	char *global = capture(cli_help_global), *bash = capture(cli_gen_bash_completion),
	     *man = capture(cli_gen_man);
	check_width(global, 80, "sandlens --help");
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		char w[96];
		snprintf(w, sizeof(w), "\n  %s ", c->name);
		if (!strstr(global, w))
			fail_msg("--help does not list %s", c->name);
		snprintf(w, sizeof(w), "\t%s) opts=", c->name);
		if (!strstr(bash, w))
			fail_msg("the completion has no case for %s", c->name);
		size_t k = (size_t)snprintf(w, sizeof(w), ".SS \"");
		for (const char *q = c->name; *q && k + 3 < sizeof(w); q++) { /* roff: "-" is "\-" */
			if (*q == '-')
				w[k++] = '\\';
			w[k++] = *q;
		}
		w[k] = 0;
		if (!strstr(man, w))
			fail_msg("the man page has no section for %s", c->name);
		g_help_cmd = c;
		char *h = capture(help_of);
		check_width(h, 80, c->name);
		for (const struct cli_opt *o = c->opts; o && o->name; o++) {
			snprintf(w, sizeof(w), "--%s", o->name);
			if (!strstr(h, w))
				fail_msg("%s --help does not show %s", c->name, w);
			snprintf(w, sizeof(w), " --%s", o->name);
			if (!strstr(bash, w))
				fail_msg("the completion does not offer %s for %s", w, c->name);
			snprintf(w, sizeof(w), "\\fB\\-\\-");
			if (!strstr(man, w))
				fail_msg("the man page shows no option");
		}
		free(h);
	}
	assert_non_null(strstr(bash, "complete -F _sandlens sandlens"));
	assert_non_null(strstr(man, ".TH SANDLENS 1"));
	free(global);
	free(bash);
	free(man);
}

/* docs/CLI.md names every command of the table in its synopsis */
static void test_docs_name_every_command(void **state)
{
	(void)state;
	FILE *f = fopen("docs/CLI.md", "r");
	assert_non_null(f);
	static char doc[1 << 20];
	size_t n = fread(doc, 1, sizeof(doc) - 1, f);
	fclose(f);
	doc[n] = 0;
	for (const struct cli_command *c = cli_commands; c->name; c++) {
		char w[96];
		snprintf(w, sizeof(w), "sandlens %s", c->name);
		char *p = doc;
		int found = 0;
		while ((p = strstr(p, w))) { /* "sandlens top" but not "sandlens topx" */
			char nx = p[strlen(w)];
			found |= !(nx == '-' || (nx >= 'a' && nx <= 'z'));
			p++;
		}
		if (!found)
			fail_msg("docs/CLI.md does not show `%s`", w);
	}
}

static void test_term_width(void **state)
{
	(void)state;
	setenv("COLUMNS", "100", 1);
	assert_int_equal(cli_term_width(), 100);
	setenv("COLUMNS", "abc", 1);
	int w = cli_term_width(); /* not a number: the terminal's or none */
	assert_true(w == 0 || w >= 20);
	setenv("COLUMNS", "5", 1);
	w = cli_term_width();
	assert_true(w == 0 || w >= 20);
	unsetenv("COLUMNS");

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cli_put_lines(f, "0123456789abcdef\nshort\n", 10);
	fclose(f);
	assert_string_equal(buf, "0123456...\nshort\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_well_formed),
		cmocka_unit_test(test_parse_options),
		cmocka_unit_test(test_suggest),
		cmocka_unit_test(test_generated_name_everything),
		cmocka_unit_test(test_docs_name_every_command),
		cmocka_unit_test(test_term_width),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
