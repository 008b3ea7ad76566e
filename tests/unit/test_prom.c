/* The Prometheus text writer (src/common/prom.c): HELP/TYPE once, label
 * escaping, histograms, name checks, the declared-families allow-list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdint.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/prom.h"

struct w {
	char *buf;
	size_t len;
	FILE *f;
	struct sl_prom *p;
};

static void w_open(struct w *w)
{
	w->buf = NULL;
	w->f = open_memstream(&w->buf, &w->len);
	assert_non_null(w->f);
	w->p = sl_prom_new(w->f);
	assert_non_null(w->p);
}

static const char *w_text(struct w *w)
{
	fflush(w->f);
	return w->buf;
}

static void w_close(struct w *w)
{
	sl_prom_free(w->p);
	fclose(w->f);
	free(w->buf);
}

static void test_once_and_escape(void **s)
{
	(void)s;
	struct w w;
	w_open(&w);
	const struct sl_prom_label l[] = {{"container_id", "a\"b\\c\nd"}, {"pod_uid", NULL}, {NULL, NULL}};
	assert_int_equal(sl_prom_family(w.p, "x_total", SL_PROM_COUNTER, "Help \\ with\nnewline."), 0);
	assert_int_equal(sl_prom_u64(w.p, "x_total", l, 7), 0);
	assert_int_equal(sl_prom_family(w.p, "x_total", SL_PROM_COUNTER, "Help"), 0);
	assert_int_equal(sl_prom_u64(w.p, "x_total", NULL, 1), 0);
	assert_int_equal(sl_prom_family(w.p, "g", SL_PROM_GAUGE, "G."), 0);
	assert_int_equal(sl_prom_f64(w.p, "g", NULL, 0.25), 0);
	assert_string_equal(w_text(&w), "# HELP x_total Help \\\\ with\\nnewline.\n"
					"# TYPE x_total counter\n"
					"x_total{container_id=\"a\\\"b\\\\c\\nd\"} 7\n"
					"x_total 1\n"
					"# HELP g G.\n# TYPE g gauge\ng 0.25\n");
	w_close(&w);
}

static void test_histogram(void **s)
{
	(void)s;
	struct w w;
	w_open(&w);
	const double le[] = {0.001, 0.002};
	const uint64_t c[] = {1, 2, 3};
	const struct sl_prom_label l[] = {{"id", "x"}, {NULL, NULL}};
	assert_int_equal(sl_prom_family(w.p, "h_seconds", SL_PROM_HISTOGRAM, "H."), 0);
	assert_int_equal(sl_prom_histogram(w.p, "h_seconds", l, le, c, 2, 1.5), 0);
	assert_string_equal(w_text(&w), "# HELP h_seconds H.\n# TYPE h_seconds histogram\n"
					"h_seconds_bucket{id=\"x\",le=\"0.001\"} 1\n"
					"h_seconds_bucket{id=\"x\",le=\"0.002\"} 3\n"
					"h_seconds_bucket{id=\"x\",le=\"+Inf\"} 6\n"
					"h_seconds_sum{id=\"x\"} 1.5\n"
					"h_seconds_count{id=\"x\"} 6\n");
	/* not ascending, an le label, a histogram call on a gauge */
	const double bad[] = {0.002, 0.001};
	assert_int_equal(sl_prom_histogram(w.p, "h_seconds", NULL, bad, c, 2, 0), -EINVAL);
	const struct sl_prom_label lel[] = {{"le", "1"}, {NULL, NULL}};
	assert_int_equal(sl_prom_histogram(w.p, "h_seconds", lel, le, c, 2, 0), -EINVAL);
	assert_int_equal(sl_prom_family(w.p, "g", SL_PROM_GAUGE, "G."), 0);
	assert_int_equal(sl_prom_histogram(w.p, "g", NULL, le, c, 2, 0), -EINVAL);
	w_close(&w);
}

static void test_names(void **s)
{
	(void)s;
	struct w w;
	w_open(&w);
	assert_int_equal(sl_prom_family(w.p, "9bad", SL_PROM_GAUGE, ""), -EINVAL);
	assert_int_equal(sl_prom_family(w.p, "bad-name", SL_PROM_GAUGE, ""), -EINVAL);
	assert_int_equal(sl_prom_family(w.p, "ok:name", SL_PROM_GAUGE, ""), 0);
	const struct sl_prom_label bl[] = {{"a-b", "x"}, {NULL, NULL}};
	const struct sl_prom_label rl[] = {{"__name__", "x"}, {NULL, NULL}};
	assert_int_equal(sl_prom_u64(w.p, "ok:name", bl, 1), -EINVAL);
	assert_int_equal(sl_prom_u64(w.p, "ok:name", rl, 1), -EINVAL);
	/* a sample of another family than the current one */
	assert_int_equal(sl_prom_u64(w.p, "other", NULL, 1), -EINVAL);
	w_close(&w);
}

static void test_restrict(void **s)
{
	(void)s;
	struct w w;
	w_open(&w);
	const struct sl_prom_family decl[] = {{"mine_total", SL_PROM_COUNTER, "Mine."}};
	sl_prom_restrict(w.p, decl, 1);
	assert_int_equal(sl_prom_declared(w.p, &decl[0]), 0);
	assert_int_equal(sl_prom_u64(w.p, "mine_total", NULL, 1), 0);
	assert_int_equal(sl_prom_family(w.p, "theirs_total", SL_PROM_COUNTER, "No."), -EPERM);
	assert_int_equal(sl_prom_u64(w.p, "theirs_total", NULL, 1), -EPERM);
	assert_int_equal(sl_prom_refused(w.p), 1);
	sl_prom_restrict(w.p, NULL, 0); /* nothing declared: nothing allowed */
	assert_int_equal(sl_prom_family(w.p, "mine_total", SL_PROM_COUNTER, "Mine."), -EPERM);
	sl_prom_unrestrict(w.p);
	assert_int_equal(sl_prom_family(w.p, "theirs_total", SL_PROM_COUNTER, "Yes."), 0);
	assert_null(strstr(w_text(&w), "theirs_total 1"));
	assert_non_null(strstr(w_text(&w), "# TYPE theirs_total counter"));
	w_close(&w);
}

/* Invalid UTF-8 in a label value (or HELP) becomes U+FFFD per bad byte;
 * valid multi-byte sequences pass unchanged. */
#define FFFD "\xef\xbf\xbd"
static void test_utf8(void **s)
{
	(void)s;
	static const struct {
		const char *in, *out;
	} c[] = {
		{"plain", "plain"},
		{"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xb3", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xb3"}, /* é € 🐳 */
		{"a\xff" "b", "a" FFFD "b"},                        /* never valid */
		{"\x80", FFFD},                                  /* stray continuation */
		{"\xc0\xaf", FFFD FFFD},                         /* overlong '/' */
		{"\xe0\x80\xaf", FFFD FFFD FFFD},                /* overlong, 3 bytes */
		{"\xed\xa0\x80", FFFD FFFD FFFD},                /* surrogate U+D800 */
		{"\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD},       /* above U+10FFFF */
		{"x\xe2\x82", "x" FFFD FFFD},                    /* truncated at the end */
		{"\xe2\x82\"", FFFD FFFD "\\\""},              /* truncated before a quote */
		{"\xc3\n", FFFD "\\n"},
		/* C0 controls other than \n, DEL and C1 (finding 4: a terminal
		 * reading `curl /metrics` obeyed ESC[2J from a cgroup path) */
		{"\\\"\n\t\r", "\\\\\\\"\\n" FFFD FFFD},
		{"/bk/\x1b[2J\x07/evil2", "/bk/" FFFD "[2J" FFFD "/evil2"},
		{"\x01\x1f\x7f", FFFD FFFD FFFD},
		{"a\xc2\x9b" "1m\xc2\x80\xc2\x9f", "a" FFFD "1m" FFFD FFFD},
		{"\xc2\xa0\xc2\xbf ok", "\xc2\xa0\xc2\xbf ok"}, /* U+00A0, U+00BF: not C1 */
		{"\x1b]0;t\x07\xe2\x80\xae", FFFD "]0;t" FFFD "\xe2\x80\xae"},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		assert_non_null(f);
		sl_prom_escape(f, c[i].in);
		fclose(f);
		assert_string_equal(buf, c[i].out);
		free(buf);
	}
	struct w w;
	w_open(&w);
	assert_int_equal(sl_prom_family(w.p, "u", SL_PROM_GAUGE, "bad \xff \"q\""), 0);
	assert_string_equal(w_text(&w), "# HELP u bad " FFFD " \"q\"\n# TYPE u gauge\n");
	w_close(&w);
	w_open(&w);
	assert_int_equal(sl_prom_family(w.p, "v", SL_PROM_GAUGE, "esc \x1b[2J"), 0);
	assert_string_equal(w_text(&w), "# HELP v esc " FFFD "[2J\n# TYPE v gauge\n");
	w_close(&w);
}

static void test_decimal(void **s)
{
	(void)s;
	struct w w;
	w_open(&w);
	assert_int_equal(sl_prom_family(w.p, "d_seconds", SL_PROM_GAUGE, "D."), 0);
	assert_int_equal(sl_prom_decimal(w.p, "d_seconds", NULL, 12345678, 6), 0);
	assert_int_equal(sl_prom_decimal(w.p, "d_seconds", NULL, 5, 3), 0);
	assert_int_equal(sl_prom_decimal(w.p, "d_seconds", NULL, 42, 0), 0);
	assert_int_equal(sl_prom_decimal(w.p, "d_seconds", NULL, UINT64_MAX, 6), 0);
	assert_int_equal(sl_prom_decimal(w.p, "d_seconds", NULL, 1764614400123456789ULL, 9), 0);
	assert_int_equal(sl_prom_decimal(w.p, "d_seconds", NULL, 7, 19), 0);
	assert_int_equal(sl_prom_decimal(w.p, "d_seconds", NULL, 7, 20), -EINVAL);
	assert_int_equal(sl_prom_decimal(w.p, "other", NULL, 7, 1), -EINVAL);
	assert_int_equal(sl_prom_one_u64(w.p, "one_total", SL_PROM_COUNTER, "One.", 3), 0);
	assert_int_equal(sl_prom_one_f64(w.p, "half", SL_PROM_GAUGE, "Half.", 0.5), 0);
	assert_int_equal(sl_prom_one_u64(w.p, "bad-name", SL_PROM_GAUGE, "No.", 1), -EINVAL);
	assert_string_equal(w_text(&w), "# HELP d_seconds D.\n# TYPE d_seconds gauge\n"
					"d_seconds 12.345678\n"
					"d_seconds 0.005\n"
					"d_seconds 42\n"
					"d_seconds 18446744073709.551615\n"
					"d_seconds 1764614400.123456789\n"
					"d_seconds 0.0000000000000000007\n"
					"# HELP one_total One.\n# TYPE one_total counter\none_total 3\n"
					"# HELP half Half.\n# TYPE half gauge\nhalf 0.5\n");
	w_close(&w);
}

/* promtool from PATH, NULL when it is not installed. */
static const char *promtool(void)
{
	static char path[512];
	const char *env = getenv("PATH");
	char *dirs = strdup(env && *env ? env : "/usr/bin:/bin");
	assert_non_null(dirs);
	const char *found = NULL;
	for (char *sv = NULL, *d = strtok_r(dirs, ":", &sv); d && !found; d = strtok_r(NULL, ":", &sv)) {
		snprintf(path, sizeof(path), "%s/promtool", d);
		if (access(path, X_OK) == 0)
			found = path;
	}
	free(dirs);
	return found;
}

/* Exit status of `promtool check metrics` over text; its output in out. */
static int promtool_check(const char *tool, const char *text, char *out, size_t outlen)
{
	char tmpl[] = "/tmp/sl-test-prom.XXXXXX", cmd[1200];
	int fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	size_t n = strlen(text);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	close(fd);
	snprintf(cmd, sizeof(cmd), "'%s' check metrics < '%s' 2>&1", tool, tmpl);
	FILE *pp = popen(cmd, "r");
	assert_non_null(pp);
	size_t got = fread(out, 1, outlen - 1, pp);
	out[got] = 0;
	int st = pclose(pp);
	unlink(tmpl);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const char *const hostile[] = {
	"quote\"in",  "back\\slash", "new\nline", "\\\"\n", "trailing\\", "\"",
	"bad\xff\xfe", "\xc0\xaf", "\xed\xa0\x80", "trunc\xe2\x82", "caf\xc3\xa9", "tab\tcr\r",
	"} 1\nfake_metric 2", "", "/bk/\x1b[2J\x1b]0;t\x07\xc2\x9b\x7f/evil2",
};

/* The writer's output for hostile label values, histograms included, is a
 * valid exposition for promtool; the same values written raw are not (so
 * the check can fail). */
static void test_promtool(void **s)
{
	(void)s;
	const char *tool = promtool();
	if (!tool) {
		fprintf(stderr, "SKIP test_promtool: promtool not installed (Debian package prometheus)\n");
		skip();
	}
	struct w w;
	w_open(&w);
	const size_t nh = sizeof(hostile) / sizeof(hostile[0]);
	const double le[] = {0.001, 0.01, 0.1};
	const uint64_t counts[] = {1, 2, 3, 4};
	assert_int_equal(sl_prom_family(w.p, "sl_test_events_total", SL_PROM_COUNTER, "Hostile \xff help \\ \"q\"\nline."), 0);
	for (size_t i = 0; i < nh; i++) {
		char idx[8];
		snprintf(idx, sizeof(idx), "%zu", i);
		const struct sl_prom_label l[] = {{"i", idx}, {"value", hostile[i]}, {NULL, NULL}};
		assert_int_equal(sl_prom_u64(w.p, "sl_test_events_total", l, i), 0);
	}
	assert_int_equal(sl_prom_family(w.p, "sl_test_wait_seconds", SL_PROM_HISTOGRAM, "Waits."), 0);
	for (size_t i = 0; i < nh; i++) {
		char idx[8];
		snprintf(idx, sizeof(idx), "%zu", i);
		const struct sl_prom_label l[] = {{"i", idx}, {"id", hostile[i]}, {NULL, NULL}};
		assert_int_equal(sl_prom_histogram(w.p, "sl_test_wait_seconds", l, le, counts, 3, 0.5), 0);
	}
	assert_int_equal(sl_prom_family(w.p, "sl_test_cpu_seconds_total", SL_PROM_COUNTER, "Decimal."), 0);
	assert_int_equal(sl_prom_decimal(w.p, "sl_test_cpu_seconds_total", NULL, UINT64_MAX, 6), 0);
	char out[4096];
	int rc = promtool_check(tool, w_text(&w), out, sizeof(out));
	if (rc)
		fprintf(stderr, "promtool (exit %d):\n%s\n--- input:\n%s", rc, out, w_text(&w));
	assert_int_equal(rc, 0);
	w_close(&w);

	/* the old hand-written renderers: escaped, but invalid UTF-8 raw */
	int raw = 0;
	for (size_t i = 0; i < nh; i++) {
		if (!strchr(hostile[i], '\xff') && !strstr(hostile[i], "\xc0\xaf"))
			continue;
		char text[256];
		snprintf(text, sizeof(text), "# HELP x_total X.\n# TYPE x_total counter\nx_total{id=\"%s\"} 1\n",
			 hostile[i]);
		assert_int_not_equal(promtool_check(tool, text, out, sizeof(out)), 0);
		raw++;
	}
	assert_int_equal(raw, 2);
}

int main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_once_and_escape),
		cmocka_unit_test(test_histogram),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_restrict),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_decimal),
		cmocka_unit_test(test_promtool),
	};
	return cmocka_run_group_tests(t, NULL, NULL);
}
