/* Where the unit tests find the shared real-world cases: the directory
 * shared/cases beside the project (../shared/cases from the project root,
 * the cwd of tests/run-unit.sh), or $SL_SHARED_CASES. They are required:
 * a test that reads them FAILS (never skips) when they are missing, with a
 * message saying where they are expected (docs/TESTING.md).
 * Include after <cmocka.h>. Use:
 *   if (sl_shared_cases_dir("test_x", "memory", dir, sizeof(dir)))
 *           return sl_shared_cases_fail("test_x");  */
#ifndef SL_TEST_SHARED_CASES_H
#define SL_TEST_SHARED_CASES_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#define SL_SHARED_CASES_DEFAULT "../shared/cases"

/* The root of the shared cases: $SL_SHARED_CASES, else ../shared/cases. */
static inline const char *sl_shared_cases_root(void)
{
	const char *e = getenv("SL_SHARED_CASES");
	return e && *e ? e : SL_SHARED_CASES_DEFAULT;
}

/* Writes <root>/<kind> to out. Returns 0 when it is a directory; else
 * prints why the test fails and where the cases belong to stderr (test
 * names the program) and returns -1. */
static inline int sl_shared_cases_dir(const char *test, const char *kind, char *out, size_t len)
{
	const char *root = sl_shared_cases_root();
	struct stat sb;
	snprintf(out, len, "%s/%s", root, kind);
	if (stat(out, &sb) == 0 && S_ISDIR(sb.st_mode))
		return 0;
	char parent[PATH_MAX];
	const char *abs = realpath("..", parent) ? parent : "..";
	fprintf(stderr,
		"%s: FAIL: the shared cases are missing: %s is not a directory.\n"
		"  The unit tests read the project's real-world cases in place from its\n"
		"  sibling directory shared/cases: %s/shared/cases\n"
		"  (../shared/cases relative to the project root: next to the clone, not inside it)%s%s%s.\n"
		"  Put the cases there (or set SL_SHARED_CASES=/path/to/shared/cases) and run again;\n"
		"  they are required, so this test fails without them (docs/TESTING.md).\n",
		test, out, abs, getenv("SL_SHARED_CASES") && *getenv("SL_SHARED_CASES") ? "; SL_SHARED_CASES=" : "",
		getenv("SL_SHARED_CASES") ? getenv("SL_SHARED_CASES") : "",
		getenv("SL_SHARED_CASES") && *getenv("SL_SHARED_CASES") ? " overrides it" : "");
	return -1;
}

static void shared_cases_present(void **state)
{
	(void)state;
	fail_msg("the shared cases are missing (where they belong: see above)");
}

/* Runs one cmocka test that fails (so tests/run-unit.sh counts and shows a
 * failure); returns the program's exit status. */
static inline int sl_shared_cases_fail(const char *group)
{
	const struct CMUnitTest t[] = {cmocka_unit_test(shared_cases_present)};
	return _cmocka_run_group_tests(group, t, 1, NULL, NULL);
}

#endif
