/* Folded, SVG and JSON writers on the fixture profile: folded lines root
 * first, one per distinct stack, values summing to the sample count; SVG
 * frame widths proportional to totals, hover titles, escaping, the hottest
 * symbols table; JSON tree and top list; and, when Chromium is installed,
 * a headless render of the SVG. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile_fixture.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

__attribute__((noinline)) static char *render(struct sl_profile *p, int fmt, int value)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;
	if (fmt == SL_FMT_FOLDED)
		rc = sl_profile_write_folded(p, value, f);
	else
		rc = sl_profile_write(p, fmt, 1, f);
	fclose(f);
	assert_int_equal(rc, 0);
	return buf;
}

static void test_folded(void **state)
{
	(void)state;
	struct sl_profile *p = fx_profile(SL_PROF_ON_CPU);
	char *s = render(p, SL_FMT_FOLDED, SL_VALUE_COUNT);
	const char *want = "app;main;work 10\n"
			   "app;main;work;hot_fn 36\n"
			   "app;main;work;hot_fn;__schedule 4\n"
			   "side;main;op<&> 5\n";
	assert_string_equal(s, want);
	/* generic checks: sum and distinct lines */
	uint64_t sum = 0;
	int lines = 0;
	for (char *l = strtok(s, "\n"); l; l = strtok(NULL, "\n")) {
		char *sp = strrchr(l, ' ');
		assert_non_null(sp);
		sum += strtoull(sp + 1, NULL, 10);
		lines++;
	}
	assert_int_equal(sum, sl_profile_total_count(p));
	assert_int_equal(lines, 4);
	free(s);
	/* default value for on-CPU is the count */
	s = render(p, SL_FMT_FOLDED, SL_VALUE_DEFAULT);
	assert_non_null(strstr(s, "app;main;work;hot_fn 36\n"));
	free(s);
	sl_profile_free(p);

	/* off-CPU: state frame after comm; default unit microseconds */
	p = fx_profile(SL_PROF_OFF_CPU);
	s = render(p, SL_FMT_FOLDED, SL_VALUE_DEFAULT);
	assert_non_null(strstr(s, "app;[blocked];main;work;hot_fn 360000\n"));
	assert_non_null(strstr(s, "app;[runqueue];main;work;hot_fn;__schedule 40000\n"));
	free(s);
	sl_profile_free(p);
}

static void test_folded_sanitizes_names(void **state)
{
	(void)state;
	struct sl_profile *p = sl_prof_new(SL_PROF_ON_CPU, 0, 0, 1);
	uint32_t a = fx_frame(p, "a;b\nc", "/x", 1, 0);
	fx_add(p, 1, "c;m", "", 0, &a, 1, 2);
	char *s = render(p, SL_FMT_FOLDED, SL_VALUE_COUNT);
	assert_string_equal(s, "c_m;a_b_c 2\n");
	free(s);
	sl_profile_free(p);
}

/* width="" of the <rect> following <title>NAME ...</title> */
static double rect_width(const char *svg, const char *title_prefix)
{
	char pat[256];
	snprintf(pat, sizeof(pat), "<title>%s", title_prefix);
	const char *t = strstr(svg, pat);
	if (!t)
		return -1;
	const char *w = strstr(t, "width=\"");
	assert_non_null(w);
	return strtod(w + 7, NULL);
}

static void test_svg(void **state)
{
	(void)state;
	struct sl_profile *p = fx_profile(SL_PROF_ON_CPU);
	char *s = render(p, SL_FMT_SVG, 0);
	assert_non_null(strstr(s, "<svg"));
	assert_non_null(strstr(s, "</svg>"));
	double all = rect_width(s, "all ");
	double hot = rect_width(s, "hot_fn [/bin/app] (40 samples");
	double work = rect_width(s, "work [/bin/app] (50 samples");
	double side = rect_width(s, "side (5 samples");
	assert_true(all > 1000);
	assert_true(hot > 0 && work > 0 && side > 0);
	assert_float_equal(hot / all, 40.0 / 55.0, 0.001);
	assert_float_equal(work / all, 50.0 / 55.0, 0.001);
	assert_float_equal(side / all, 5.0 / 55.0, 0.001);
	/* escaped, never raw */
	assert_non_null(strstr(s, "op&lt;&amp;&gt;"));
	assert_null(strstr(s, "op<&>"));
	/* hottest symbols: hot_fn first (self 36) */
	const char *tab = strstr(s, "Hottest symbols");
	assert_non_null(tab);
	const char *h = strstr(tab, "hot_fn");
	const char *w = strstr(tab, "work [");
	assert_non_null(h);
	assert_non_null(w);
	assert_true(h < w);
	assert_non_null(strstr(tab, "65.45%")); /* 36/55 self */
	free(s);
	sl_profile_free(p);
}

static void test_json(void **state)
{
	(void)state;
	struct sl_profile *p = fx_profile(SL_PROF_ON_CPU);
	char *s = render(p, SL_FMT_JSON, 0);
	json_error_t err;
	json_t *o = json_loads(s, 0, &err);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "kind")), "on_cpu");
	assert_int_equal(json_integer_value(json_object_get(o, "total_count")), 55);
	assert_int_equal(json_integer_value(json_object_get(o, "total")), 55);
	assert_string_equal(json_string_value(json_object_get(o, "unit")), "samples");
	json_t *top = json_object_get(o, "top");
	assert_string_equal(json_string_value(json_object_get(json_array_get(top, 0), "function")), "hot_fn");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(top, 0), "self")), 36);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(top, 0), "total")), 40);
	json_t *tree = json_object_get(o, "tree");
	assert_int_equal(json_integer_value(json_object_get(tree, "value")), 55);
	json_t *app = json_array_get(json_object_get(tree, "children"), 0);
	assert_string_equal(json_string_value(json_object_get(app, "name")), "app");
	assert_int_equal(json_integer_value(json_object_get(app, "value")), 50);
	json_decref(o);
	free(s);
	sl_profile_free(p);
}

static void test_formats(void **state)
{
	(void)state;
	assert_int_equal(sl_prof_format_from_path("out.svg"), SL_FMT_SVG);
	assert_int_equal(sl_prof_format_from_path("out.pb.gz"), SL_FMT_PPROF);
	assert_int_equal(sl_prof_format_from_path("x.folded"), SL_FMT_FOLDED);
	assert_int_equal(sl_prof_format_from_path("x.json"), SL_FMT_JSON);
	assert_int_equal(sl_prof_format_from_path("x.png"), -1);
	assert_int_equal(sl_prof_format_from_name("pprof"), SL_FMT_PPROF);
	assert_int_equal(sl_prof_format_from_name("nope"), -1);
	assert_int_equal(sl_profile_write(NULL, 99, 1, stdout), -EINVAL);
}

static void test_chromium_renders(void **state)
{
	(void)state;
	const char *br = !system("command -v chromium >/dev/null 2>&1") ? "chromium" :
			 !system("command -v chromium-browser >/dev/null 2>&1") ? "chromium-browser" : NULL;
	if (!br) {
		printf("SKIP reason: chromium not installed (scripts/install-deps.sh installs it)\n");
		skip();
		return;
	}
	char dir[] = "/tmp/sl_flame.XXXXXX", svg[64], png[64], cmd[512];
	assert_non_null(mkdtemp(dir));
	snprintf(svg, sizeof(svg), "%s/f.svg", dir);
	snprintf(png, sizeof(png), "%s/f.png", dir);
	struct sl_profile *p = fx_profile(SL_PROF_ON_CPU);
	FILE *f = fopen(svg, "w");
	assert_int_equal(sl_profile_write_svg(p, NULL, f), 0);
	fclose(f);
	sl_profile_free(p);
	snprintf(cmd, sizeof(cmd),
		 "HOME=%s timeout 60 %s --headless --no-sandbox --disable-gpu --window-size=1200,600 "
		 "--screenshot=%s file://%s >/dev/null 2>&1",
		 dir, br, png, svg);
	assert_int_equal(system(cmd), 0);
	struct stat st;
	assert_int_equal(stat(png, &st), 0);
	assert_true(st.st_size > 5000); /* a blank 1200x600 PNG is ~3 KB */
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_folded_sanitizes_names),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_chromium_renders),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
