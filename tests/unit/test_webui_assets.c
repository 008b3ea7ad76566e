/* The embedded web UI (src/api/api_ui.h, docs/UI.md), checked as built:
 *   - index.html is there, loads only scripts and styles of the UI itself
 *     (every src/href names an embedded file), has no inline script, style
 *     or event handler attribute (the CSP would block them; their absence
 *     is what lets it be strict);
 *   - no file refers to another origin (no http:, https: or // URL but the
 *     SVG namespace), so the UI works with no network and the CSP holds;
 *   - no script uses an HTML sink (innerHTML, outerHTML,
 *     insertAdjacentHTML, document.write, eval, new Function): values from
 *     the API are only ever set as text (the XSS rule of OUT-8);
 *   - names are plain and types follow the extension.
 * Dynamic behaviour is t_webui's (headless Chromium). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api_ui.h"

static char *text_of(const struct sl_ui_asset *a)
{
	char *s = malloc(a->len + 1);
	assert_non_null(s);
	memcpy(s, a->data, a->len);
	s[a->len] = 0;
	assert_int_equal(strlen(s), a->len); /* no NUL inside */
	return s;
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

static void test_names_and_types(void **state)
{
	(void)state;
	assert_non_null(sl_ui_asset_for("/ui/"));
	assert_string_equal(sl_ui_asset_for("/ui/")->name, "index.html");
	assert_null(sl_ui_asset_for("/ui/missing.js"));
	assert_null(sl_ui_asset_for("/api/v1/events"));
	assert_null(sl_ui_asset_for(NULL));
	for (unsigned i = 0; i < sl_ui_nassets; i++) {
		const struct sl_ui_asset *a = &sl_ui_assets[i];
		assert_int_equal(strspn(a->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"),
				 strlen(a->name));
		if (ends_with(a->name, ".js"))
			assert_string_equal(a->ctype, "text/javascript; charset=utf-8");
		else if (ends_with(a->name, ".css"))
			assert_string_equal(a->ctype, "text/css; charset=utf-8");
		else if (ends_with(a->name, ".html"))
			assert_string_equal(a->ctype, "text/html; charset=utf-8");
		else
			fail_msg("%s: unexpected file type", a->name);
	}
}

/* every value of attr="..." in html names an embedded file; returns how many */
static int refs_embedded(const char *html, const char *attr)
{
	int n = 0;
	char pat[16], name[128];
	snprintf(pat, sizeof(pat), "%s=\"", attr);
	for (const char *p = strstr(html, pat); p; p = strstr(p + 1, pat)) {
		const char *v = p + strlen(pat), *e = strchr(v, '"');
		assert_non_null(e);
		assert_true((size_t)(e - v) < sizeof(name) - 4);
		snprintf(name, sizeof(name), "/ui/%.*s", (int)(e - v), v);
		if (!strcmp(attr, "href") && v[0] == '#')
			continue; /* in-page routes */
		if (!sl_ui_asset_for(name))
			fail_msg("index.html: %s=\"%.*s\" is not an embedded file", attr, (int)(e - v), v);
		n++;
	}
	return n;
}

static void test_index_strict(void **state)
{
	(void)state;
	char *html = text_of(sl_ui_asset_for("/ui/index.html"));
	assert_true(refs_embedded(html, "src") >= 3);
	assert_true(refs_embedded(html, "href") >= 1);
	/* every <script> has a src */
	for (const char *p = strstr(html, "<script"); p; p = strstr(p + 1, "<script")) {
		const char *e = strchr(p, '>');
		assert_non_null(e);
		assert_non_null(memmem(p, (size_t)(e - p), " src=\"", 6));
		assert_int_equal(strncmp(e, "></script>", 10), 0);
	}
	assert_null(strstr(html, "<style"));
	assert_null(strstr(html, " style="));
	assert_null(strstr(html, "javascript:"));
	/* no on*= handler attribute */
	for (const char *p = strstr(html, " on"); p; p = strstr(p + 1, " on")) {
		size_t k = strspn(p + 3, "abcdefghijklmnopqrstuvwxyz");
		if (k && p[3 + k] == '=')
			fail_msg("index.html: inline event handler at '%.20s'", p);
	}
	free(html);
}

static void test_no_foreign_origin_no_html_sinks(void **state)
{
	(void)state;
	static const char *const sinks[] = {"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write",
					    "eval(", "new Function", "setAttribute('on", "srcdoc"};
	static const char svgns[] = "http://www.w3.org/2000/svg";
	for (unsigned i = 0; i < sl_ui_nassets; i++) {
		char *s = text_of(&sl_ui_assets[i]);
		for (char *p = strstr(s, svgns); p; p = strstr(p, svgns))
			memset(p, '_', sizeof(svgns) - 1); /* the one URL allowed: a namespace name, never fetched */
		assert_null(strstr(s, "http:"));
		assert_null(strstr(s, "https:"));
		assert_null(strstr(s, "@import"));
		assert_null(strstr(s, "url("));
		if (ends_with(sl_ui_assets[i].name, ".js"))
			for (size_t k = 0; k < sizeof(sinks) / sizeof(sinks[0]); k++)
				if (strstr(s, sinks[k]))
					fail_msg("%s uses %s", sl_ui_assets[i].name, sinks[k]);
		free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_and_types),
		cmocka_unit_test(test_index_strict),
		cmocka_unit_test(test_no_foreign_origin_no_html_sinks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
