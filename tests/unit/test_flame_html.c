/* The HTML flame graph and the differential flame graphs (profile.h
 * sl_profile_write_html, sl_profile_write_diff; docs/PROFILING.md "HTML",
 * "Differential flame graphs"):
 *   - the page: one data block whose JSON jansson parses back to the tree,
 *     the hot table and the title fields; the CSP's hashes are those of
 *     its inline script and style (checked with sha256sum);
 *   - hostile names (</script>, <!--, U+2028, invalid UTF-8, quotes) stay
 *     data: no markup, no raw line separators, exact round trip;
 *   - diff math: base normalized to cur's total, signs, max |delta|,
 *     colours; two-column folded lines (normalized and raw); errors;
 *   - the SVG title line and the diff SVG;
 *   - flamegraph.pl renders the folded and diff-folded outputs (SKIP when
 *     it is not installed: Debian has no package of it).
 * With SL_FLAME_OUT=DIR set, the diff outputs are also written there (the
 * headless Chromium check of tests/integration/t_flame_html.sh). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile_fixture.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static char *render_html(const struct sl_profile *p, const struct sl_flame_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(sl_profile_write_html(p, o, f), 0);
	fclose(f);
	return buf;
}

static char *render_diff(const struct sl_profile *b, const struct sl_profile *c, int fmt,
			 const struct sl_flame_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc = sl_profile_write_diff(b, c, fmt, o, f);
	fclose(f);
	assert_int_equal(rc, 0);
	return buf;
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* The JSON of the page's data block, parsed. */
static json_t *payload(const char *html)
{
	const char *open = "<script type=\"application/json\" id=\"sl-data\">";
	const char *a = strstr(html, open);
	assert_non_null(a);
	a += strlen(open);
	const char *e = strstr(a, "</script>");
	assert_non_null(e);
	json_error_t err;
	json_t *j = json_loadb(a, (size_t)(e - a), 0, &err);
	if (!j)
		fail_msg("payload does not parse: %s at %d", err.text, err.position);
	return j;
}

/* child of a payload tree node by name */
static json_t *child(json_t *n, const char *name)
{
	json_t *c;
	size_t i;
	json_array_foreach(json_object_get(n, "c"), i, c)
		if (!strcmp(json_string_value(json_object_get(c, "n")), name))
			return c;
	return NULL;
}

static json_int_t ival(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	assert_non_null(v);
	return json_integer_value(v);
}

static void test_html_structure(void **state)
{
	(void)state;
	struct sl_profile *p = fx_profile(SL_PROF_ON_CPU);
	struct sl_flame_opts o = {.title = "On-CPU profile of ct", .container = "c0ffee1234", .pod = "pod-uid-1",
				  .host = "node-7", .start_ns = 1700000000000000000ull,
				  .end_ns = 1700000005000000000ull};
	char *h = render_html(p, &o);
	assert_memory_equal(h, "<!DOCTYPE html>", 15);
	assert_non_null(strstr(h, "<title>On-CPU profile of ct</title>"));
	assert_non_null(strstr(h, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
				  "script-src 'sha256-"));
	assert_non_null(strstr(h, "id=\"search\""));
	assert_non_null(strstr(h, "id=\"hot\""));
	/* no network: nothing the page would fetch */
	assert_null(strstr(h, "src=\""));
	assert_null(strstr(h, "href="));
	assert_null(strstr(h, "@import"));
	assert_int_equal(count(h, "</script>"), 2);
	json_t *d = payload(h);
	assert_string_equal(json_string_value(json_object_get(d, "title")), "On-CPU profile of ct");
	assert_false(json_is_true(json_object_get(d, "diff")));
	assert_string_equal(json_string_value(json_object_get(d, "unit")), "samples");
	assert_string_equal(json_string_value(json_object_get(d, "sample_type")), "cpu samples");
	json_t *m = json_object_get(d, "meta");
	assert_string_equal(json_string_value(json_object_get(m, "container")), "c0ffee1234");
	assert_string_equal(json_string_value(json_object_get(m, "pod")), "pod-uid-1");
	assert_string_equal(json_string_value(json_object_get(m, "host")), "node-7");
	assert_true(ival(m, "start_ns") == 1700000000000000000ll);
	assert_true(ival(m, "end_ns") == 1700000005000000000ll);
	assert_int_equal(ival(m, "samples"), 55);
	assert_int_equal(ival(d, "total"), 55);
	/* the tree: all 55 = app 50 + side 5; app;main;work 50 (self 10);
	 * hot_fn 40 (self 36) with the kernel leaf __schedule 4 */
	json_t *t = json_object_get(d, "tree");
	assert_int_equal(ival(t, "v"), 55);
	json_t *app = child(t, "app"), *side = child(t, "side");
	assert_non_null(app);
	assert_non_null(side);
	assert_int_equal(ival(app, "v"), 50);
	assert_string_equal(json_string_value(json_object_get(app, "k")), "p");
	json_t *work = child(child(app, "main"), "work");
	assert_non_null(work);
	assert_int_equal(ival(work, "v"), 50);
	assert_int_equal(ival(work, "s"), 10);
	assert_string_equal(json_string_value(json_object_get(work, "m")), "/bin/app");
	assert_string_equal(json_string_value(json_object_get(work, "k")), "u");
	json_t *hot = child(work, "hot_fn");
	assert_int_equal(ival(hot, "v"), 40);
	assert_int_equal(ival(hot, "s"), 36);
	json_t *k = child(hot, "__schedule");
	assert_string_equal(json_string_value(json_object_get(k, "k")), "k");
	assert_string_equal(json_string_value(json_object_get(child(child(side, "main"), "op<&>"), "n")), "op<&>");
	/* the hot table: by self */
	json_t *h0 = json_array_get(json_object_get(d, "hot"), 0);
	assert_string_equal(json_string_value(json_object_get(h0, "n")), "hot_fn");
	assert_int_equal(ival(h0, "s"), 36);
	assert_int_equal(ival(h0, "t"), 40);
	json_decref(d);
	free(h);

	/* off-CPU defaults: microseconds, the state frame, the default title */
	sl_profile_free(p);
	p = fx_profile(SL_PROF_OFF_CPU);
	h = render_html(p, NULL);
	d = payload(h);
	assert_string_equal(json_string_value(json_object_get(d, "title")), "Off-CPU profile");
	assert_string_equal(json_string_value(json_object_get(d, "unit")), "us");
	assert_null(json_object_get(json_object_get(d, "meta"), "container"));
	assert_non_null(child(child(json_object_get(d, "tree"), "app"), "[blocked]"));
	assert_true(ival(json_object_get(d, "meta"), "start_ns") == 1700000000000000000ll); /* the profile's */
	json_decref(d);
	free(h);
	sl_profile_free(p);
}

/* "sha256-BASE64" of bytes s[0..n) via sha256sum(1) */
static void sha256_b64(const char *s, size_t n, char out[64])
{
	char path[] = "/tmp/sl_flame_sha.XXXXXX", cmd[128], hex[80] = "";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, s, n), (ssize_t)n);
	close(fd);
	snprintf(cmd, sizeof(cmd), "sha256sum %s", path);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(hex, sizeof(hex), f));
	pclose(f);
	unlink(path);
	unsigned char b[32];
	for (int i = 0; i < 32; i++) {
		unsigned v;
		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		b[i] = (unsigned char)v;
	}
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *o = out + sprintf(out, "sha256-");
	for (int i = 0; i < 32; i += 3) {
		unsigned v = (unsigned)b[i] << 16 | (i + 1 < 32 ? (unsigned)b[i + 1] << 8 : 0) | (i + 2 < 32 ? b[i + 2] : 0);
		*o++ = t[v >> 18 & 63];
		*o++ = t[v >> 12 & 63];
		*o++ = i + 1 < 32 ? t[v >> 6 & 63] : '=';
		*o++ = i + 2 < 32 ? t[v & 63] : '=';
	}
	*o = 0;
}

static void test_html_csp_hashes(void **state)
{
	(void)state;
	struct sl_profile *p = fx_profile(SL_PROF_ON_CPU);
	char *h = render_html(p, NULL);
	const char *js = strstr(h, "<script>"), *css = strstr(h, "<style>");
	assert_non_null(js);
	assert_non_null(css);
	js += 8;
	css += 7;
	char hj[64], hc[64], want[160];
	sha256_b64(js, (size_t)(strstr(js, "</script>") - js), hj);
	sha256_b64(css, (size_t)(strstr(css, "</style>") - css), hc);
	snprintf(want, sizeof(want), "script-src '%s'; style-src '%s';", hj, hc);
	assert_non_null(strstr(h, want));
	/* the header policy: the same hashes, sandboxed, never framed */
	assert_non_null(strstr(sl_flame_html_csp(), want));
	assert_non_null(strstr(sl_flame_html_csp(), "sandbox allow-scripts"));
	assert_non_null(strstr(sl_flame_html_csp(), "frame-ancestors 'none'"));
	assert_int_equal(sl_prof_format_from_name("HTML"), SL_FMT_HTML);
	assert_int_equal(sl_prof_format_from_path("/tmp/x.html"), SL_FMT_HTML);
	assert_int_equal(sl_prof_format_from_path("x.htm"), SL_FMT_HTML);
	assert_string_equal(sl_prof_format_name(SL_FMT_HTML), "html");
	assert_string_equal(sl_prof_format_mime(SL_FMT_HTML), "text/html; charset=utf-8");
	/* sl_profile_write dispatches html */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(sl_profile_write(p, SL_FMT_HTML, 0, f), 0);
	fclose(f);
	assert_string_equal(buf, h);
	free(buf);
	free(h);
	sl_profile_free(p);
}

#define EVIL_SCRIPT "</script><img src=x onerror=alert(1)>"
#define EVIL_COMMENT "<!--<script>"
#define EVIL_LS "line\xe2\x80\xa8sep\xe2\x80\xa9"
#define EVIL_BYTES "bad\xff\xfe"
#define EVIL_QUOTE "q\"'&amp;\\u003c"

static void test_html_hostile_names(void **state)
{
	(void)state;
	struct sl_profile *p = sl_prof_new(SL_PROF_ON_CPU, 1700000000000000000ull, 1000000000ull, 10000000ull);
	uint32_t f[5] = {
		fx_frame(p, EVIL_SCRIPT, "/tmp/</script>.so", 1, 0), fx_frame(p, EVIL_COMMENT, NULL, 2, 0),
		fx_frame(p, EVIL_LS, "/bin/a", 3, 0), fx_frame(p, EVIL_BYTES, "/bin/a", 4, 0),
		fx_frame(p, EVIL_QUOTE, "/bin/a", 5, 0),
	};
	fx_add(p, 1, "<b>x", "", 0, f, 5, 7);
	struct sl_flame_opts o = {.title = "<h1>t</h1>", .container = "</script><i>", .host = "h\xe2\x80\xa8"};
	char *h = render_html(p, &o);
	assert_null(strstr(h, "<img"));
	assert_null(strstr(h, "<b>"));
	assert_null(strstr(h, "<i>"));
	assert_null(strstr(h, "<h1>t"));
	assert_null(strstr(h, "<!--"));
	assert_null(strstr(h, "\xe2\x80\xa8"));
	assert_null(strstr(h, "\xe2\x80\xa9"));
	assert_null(strstr(h, "\xff"));
	assert_int_equal(count(h, "</script"), 2);
	assert_int_equal(count(h, "<script"), 2);
	assert_non_null(strstr(h, "<title>&lt;h1&gt;t&lt;/h1&gt;</title>"));
	json_t *d = payload(h);
	assert_string_equal(json_string_value(json_object_get(d, "title")), "<h1>t</h1>");
	assert_string_equal(json_string_value(json_object_get(json_object_get(d, "meta"), "container")), "</script><i>");
	assert_string_equal(json_string_value(json_object_get(json_object_get(d, "meta"), "host")), "h\xe2\x80\xa8");
	json_t *n = child(json_object_get(d, "tree"), "<b>x");
	assert_non_null(n);
	n = child(n, EVIL_SCRIPT);
	assert_non_null(n);
	assert_string_equal(json_string_value(json_object_get(n, "m")), "/tmp/</script>.so");
	n = child(n, EVIL_COMMENT);
	assert_non_null(n);
	n = child(n, EVIL_LS);
	assert_non_null(n);
	n = child(n, "bad\xef\xbf\xbd\xef\xbf\xbd"); /* invalid UTF-8 bytes as U+FFFD */
	assert_non_null(n);
	n = child(n, EVIL_QUOTE);
	assert_non_null(n);
	assert_int_equal(ival(n, "s"), 7);
	json_decref(d);
	const char *dir = getenv("SL_FLAME_OUT");
	if (dir && *dir) { /* for the headless Chromium check */
		char path[512];
		snprintf(path, sizeof(path), "%s/hostile.html", dir);
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(h, f);
		fclose(f);
	}
	free(h);
	sl_profile_free(p);
}

/* base: app;main;{grow_fn 10, shrink_fn 50, same_fn 30, gone_fn 10}   total 100
 * cur:  app;main;{grow_fn 100, shrink_fn 40, same_fn 60}              total 200
 * scale 2: grow +80, shrink -60, same 0, gone -20, main/app 0. */
static struct sl_profile *diff_profile(int cur)
{
	struct sl_profile *p = sl_prof_new(SL_PROF_ON_CPU, 1700000000000000000ull + (cur ? 60000000000ull : 0),
					   10000000000ull, 10000000ull);
	uint32_t m = fx_frame(p, "main", "/bin/app", 0x10, 0);
	const char *names[] = {"grow_fn", "shrink_fn", "same_fn", "gone_fn"};
	uint64_t b[] = {10, 50, 30, 10}, c[] = {100, 40, 60, 0};
	for (int i = 0; i < 4; i++) {
		uint32_t st[] = {m, fx_frame(p, names[i], "/bin/app", 0x100 + (uint64_t)i * 0x10, 0)};
		uint64_t v = cur ? c[i] : b[i];
		if (v)
			fx_add(p, 10, "app", "", 0, st, 2, v);
	}
	return p;
}

static json_t *dnode_by(struct sl_dnode *n, const char *name, struct sl_dnode **out)
{
	if (!strcmp(n->name, name))
		*out = n;
	for (size_t i = 0; i < n->nchild; i++)
		dnode_by(n->child[i], name, out);
	return NULL;
}

static void test_diff_math(void **state)
{
	(void)state;
	struct sl_profile *b = diff_profile(0), *c = diff_profile(1);
	struct sl_dtree t;
	assert_int_equal(sl_dtree_build(b, c, SL_VALUE_DEFAULT, &t), 0);
	assert_int_equal(t.base_total, 100);
	assert_int_equal(t.cur_total, 200);
	assert_true(fabs(t.scale - 2.0) < 1e-12);
	assert_true(fabs(t.max_abs_delta - 80.0) < 1e-9);
	const char *names[] = {"grow_fn", "shrink_fn", "same_fn", "gone_fn", "main", "app"};
	double want[] = {80, -60, 0, -20, 0, 0};
	uint64_t cur[] = {100, 40, 60, 0, 200, 200};
	for (int i = 0; i < 6; i++) {
		struct sl_dnode *n = NULL;
		dnode_by(t.root, names[i], &n);
		assert_non_null(n);
		assert_int_equal(n->cur, cur[i]);
		assert_true(fabs(sl_dnode_delta(&t, n) - want[i]) < 1e-9);
	}
	char col[40];
	sl_diff_color(80, t.max_abs_delta, col, sizeof(col));
	assert_string_equal(col, "rgb(255,0,0)");
	sl_diff_color(-60, t.max_abs_delta, col, sizeof(col));
	assert_string_equal(col, "rgb(53,53,255)"); /* 210 * (1 - 60/80) = 52.5 */
	sl_diff_color(0, t.max_abs_delta, col, sizeof(col));
	assert_string_equal(col, "rgb(250,250,250)");
	sl_dtree_free(&t);

	struct sl_hot_diff *h = NULL;
	int n = sl_prof_hot_diff(b, c, SL_VALUE_DEFAULT, 2.0, 10, &h);
	assert_int_equal(n, 5); /* main and the 4 functions */
	assert_string_equal(h[0].name, "grow_fn");
	assert_true(fabs(h[0].delta_self - 80) < 1e-9);
	assert_string_equal(h[1].name, "shrink_fn");
	assert_true(fabs(h[1].delta_self + 60) < 1e-9);
	assert_string_equal(h[2].name, "gone_fn");
	assert_int_equal(h[2].base_self, 10);
	assert_int_equal(h[2].cur_self, 0);
	assert_true(fabs(h[2].delta_self + 20) < 1e-9);
	free(h);

	/* identical profiles: every delta 0 */
	assert_int_equal(sl_dtree_build(c, c, SL_VALUE_DEFAULT, &t), 0);
	assert_true(t.max_abs_delta == 0);
	sl_dtree_free(&t);
	/* errors */
	struct sl_profile *off = fx_profile(SL_PROF_OFF_CPU);
	FILE *f = fopen("/dev/null", "w");
	assert_int_equal(sl_profile_write_diff(b, off, SL_FMT_HTML, NULL, f), -EINVAL);
	assert_int_equal(sl_profile_write_diff(b, c, SL_FMT_PPROF, NULL, f), -EINVAL);
	assert_int_equal(sl_profile_write_diff(NULL, c, SL_FMT_FOLDED, NULL, f), -EINVAL);
	fclose(f);
	sl_profile_free(off);
	sl_profile_free(b);
	sl_profile_free(c);
}

static void test_diff_folded(void **state)
{
	(void)state;
	struct sl_profile *b = diff_profile(0), *c = diff_profile(1);
	char *s = render_diff(b, c, SL_FMT_FOLDED, NULL);
	assert_string_equal(s, "app;main;gone_fn 20 0\n"
			       "app;main;grow_fn 20 100\n"
			       "app;main;same_fn 60 60\n"
			       "app;main;shrink_fn 100 40\n");
	free(s);
	struct sl_flame_opts raw = {.diff_raw = 1};
	s = render_diff(b, c, SL_FMT_FOLDED, &raw);
	assert_string_equal(s, "app;main;gone_fn 10 0\n"
			       "app;main;grow_fn 10 100\n"
			       "app;main;same_fn 30 60\n"
			       "app;main;shrink_fn 50 40\n");
	free(s);
	sl_profile_free(b);
	sl_profile_free(c);
}

static void test_diff_html_svg(void **state)
{
	(void)state;
	struct sl_profile *b = diff_profile(0), *c = diff_profile(1);
	struct sl_flame_opts o = {.container = "ctr-diff", .host = "node-d"};
	char *h = render_diff(b, c, SL_FMT_HTML, &o);
	assert_null(strstr(h, "<img"));
	json_t *d = payload(h);
	assert_true(json_is_true(json_object_get(d, "diff")));
	assert_int_equal(ival(d, "total"), 200);
	assert_int_equal(ival(d, "base_total"), 100);
	assert_true(fabs(json_number_value(json_object_get(d, "scale")) - 2.0) < 1e-12);
	assert_string_equal(json_string_value(json_object_get(d, "title")), "On-CPU differential profile");
	assert_true(ival(json_object_get(d, "base_meta"), "start_ns") == 1700000000000000000ll);
	assert_true(ival(json_object_get(d, "meta"), "start_ns") == 1700000060000000000ll);
	json_t *main = child(child(json_object_get(d, "tree"), "app"), "main");
	json_t *g = child(main, "grow_fn"), *gone = child(main, "gone_fn");
	assert_int_equal(ival(g, "v"), 100);
	assert_int_equal(ival(g, "b"), 10);
	assert_int_equal(ival(gone, "v"), 0);
	assert_int_equal(ival(gone, "b"), 10);
	assert_int_equal(ival(gone, "bs"), 10);
	json_t *h0 = json_array_get(json_object_get(d, "hot"), 0);
	assert_string_equal(json_string_value(json_object_get(h0, "n")), "grow_fn");
	assert_true(fabs(json_number_value(json_object_get(h0, "d")) - 80) < 1e-9);
	json_decref(d);

	char *s = render_diff(b, c, SL_FMT_SVG, &o);
	assert_non_null(strstr(s, "<svg"));
	const char *g1 = strstr(s, "<title>grow_fn [/bin/app] (base 10 samples (normalized 20.0), cur 100, delta +80.0");
	assert_non_null(g1);
	assert_non_null(strstr(g1, "fill=\"rgb(255,0,0)\""));
	const char *s1 = strstr(s, "<title>shrink_fn");
	assert_non_null(s1);
	assert_non_null(strstr(s1, "fill=\"rgb(53,53,255)\""));
	assert_non_null(strstr(s, "container ctr-diff"));
	assert_null(strstr(s, "<title>gone_fn")); /* width 0 */

	const char *dir = getenv("SL_FLAME_OUT");
	if (dir && *dir) {
		char path[512];
		struct { const char *name, *body; } outs[] = {{"diff.html", h}, {"diff.svg", s}};
		for (size_t i = 0; i < 2; i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, outs[i].name);
			FILE *f = fopen(path, "w");
			assert_non_null(f);
			fputs(outs[i].body, f);
			fclose(f);
		}
	}
	free(h);
	free(s);
	sl_profile_free(b);
	sl_profile_free(c);
}

static void test_svg_title_meta(void **state)
{
	(void)state;
	struct sl_profile *p = fx_profile(SL_PROF_ON_CPU);
	struct sl_flame_opts o = {.container = "c0ffee<&>", .pod = "p1", .host = "node-7"};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(sl_profile_write_svg(p, &o, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "container c0ffee&lt;&amp;&gt;, pod p1, host node-7, "
				    "2023-11-14T22:13:20.000000000Z .. 2023-11-14T22:13:25.000000000Z (5.000 s), "
				    "cpu samples"));
	free(buf);
	sl_profile_free(p);
}

static void test_flamegraph_pl(void **state)
{
	(void)state;
	if (system("command -v flamegraph.pl >/dev/null 2>&1")) {
		printf("SKIP reason: flamegraph.pl not in PATH (github.com/brendangregg/FlameGraph; Debian "
		       "packages no flamegraph)\n");
		skip();
		return;
	}
	char dir[] = "/tmp/sl_flamepl.XXXXXX", path[128], cmd[512];
	assert_non_null(mkdtemp(dir));
	struct sl_profile *p = fx_profile(SL_PROF_ON_CPU), *b = diff_profile(0), *c = diff_profile(1);
	snprintf(path, sizeof(path), "%s/a.folded", dir);
	FILE *f = fopen(path, "w");
	assert_int_equal(sl_profile_write_folded(p, SL_VALUE_DEFAULT, f), 0);
	fclose(f);
	snprintf(path, sizeof(path), "%s/d.folded", dir);
	f = fopen(path, "w");
	assert_int_equal(sl_profile_write_diff(b, c, SL_FMT_FOLDED, NULL, f), 0);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && flamegraph.pl a.folded > a.svg && flamegraph.pl d.folded > d.svg && "
		 "grep -q hot_fn a.svg && grep -q grow_fn d.svg && grep -q shrink_fn d.svg && "
		 "grep -q 'rgb(255,' d.svg && grep -Eq 'rgb\\([0-9]+,[0-9]+,255\\)' d.svg && test $(wc -c < a.svg) -gt 1000",
		 dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	sl_profile_free(p);
	sl_profile_free(b);
	sl_profile_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_html_structure),
		cmocka_unit_test(test_html_csp_hashes),
		cmocka_unit_test(test_html_hostile_names),
		cmocka_unit_test(test_diff_math),
		cmocka_unit_test(test_diff_folded),
		cmocka_unit_test(test_diff_html_svg),
		cmocka_unit_test(test_svg_title_meta),
		cmocka_unit_test(test_flamegraph_pl),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
