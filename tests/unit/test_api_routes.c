/* docs/API.md lists every route the agent serves (issue 16 item 4): each
 * route of the API's own tables (sl_api_routes: the fixed routes, the event
 * stream, the task routes) and each view every registered module declares
 * (/api/v1/<module><path>) must appear in docs/API.md as "`METHOD PATH"
 * followed by something that ends the path (so /api/v1/events does not
 * pass for /api/v1/events/watch). A route added without its documentation
 * fails here. Also: the document does not call the API read-only (POST
 * /api/v1/tasks starts kernel work). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/module.h"
#include "api/api.h"

static char g_doc[1 << 20];
static int g_routes, g_missing;

static void load_doc(void)
{
	FILE *f = fopen("docs/API.md", "r");
	assert_non_null(f);
	size_t n = fread(g_doc, 1, sizeof(g_doc) - 1, f);
	fclose(f);
	g_doc[n] = 0;
	assert_true(n > 1000);
}

/* "`GET /path" with the path ended (not followed by more of a path) */
static int documented(const char *method, const char *path)
{
	char w[256];
	snprintf(w, sizeof(w), "`%s %s", method, path);
	for (const char *p = g_doc; (p = strstr(p, w)); p++) {
		char nx = p[strlen(w)];
		if (!(nx == '/' || nx == '_' || nx == '-' || (nx >= 'a' && nx <= 'z') || (nx >= '0' && nx <= '9')))
			return 1;
	}
	return 0;
}

static void check(const char *method, const char *path, void *ctx)
{
	(void)ctx;
	g_routes++;
	if (!documented(method, path)) {
		g_missing++;
		print_error("docs/API.md does not list `%s %s`\n", method, path);
	}
}

static void test_every_route_documented(void **state)
{
	(void)state;
	load_doc();
	g_routes = g_missing = 0;
	sl_api_routes(check, NULL);
	int fixed = g_routes;
	for (unsigned i = 0; i < sl_registry_count; i++) {
		const struct sl_module_ops *m = sl_registry[i];
		for (unsigned v = 0; v < m->nviews; v++) {
			char path[192];
			snprintf(path, sizeof(path), "/api/v1/%s%s", m->name, m->views[v].path);
			check("GET", path, NULL);
		}
	}
	assert_true(fixed >= 14); /* 8 fixed, the stream, 6 task routes */
	assert_true(g_routes > fixed); /* the modules' views were seen */
	if (g_missing)
		fail_msg("%d of %d routes are not in docs/API.md", g_missing, g_routes);
}

static void test_not_called_read_only(void **state)
{
	(void)state;
	load_doc();
	const char *bad[] = {"read-only API", "API is read-only", "read-only HTTP API", "API is read only"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (strstr(g_doc, bad[i]))
			fail_msg("docs/API.md says '%s', but POST /api/v1/tasks starts kernel work", bad[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_route_documented),
		cmocka_unit_test(test_not_called_read_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
