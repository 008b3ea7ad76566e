/* The Prometheus text writer (src/common/prom.c): HELP/TYPE once, label
 * escaping, histograms, name checks, the declared-families allow-list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_once_and_escape),
		cmocka_unit_test(test_histogram),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_restrict),
	};
	return cmocka_run_group_tests(t, NULL, NULL);
}
