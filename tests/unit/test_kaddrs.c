/* sl_kaddrs_visible (profile.h): kernel addresses go only to a caller who
 * could read them from /proc/kallsyms (issue 8), decided from a fake
 * sysctl directory (kptr_restrict, perf_event_paranoid) as the kernel's
 * kallsyms_show_value does. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/profile.h"

static char dir[64];

static void put(const char *name, const char *text)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (!text) {
		unlink(p);
		return;
	}
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/sl-kaddr.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	put("kptr_restrict", NULL);
	put("perf_event_paranoid", NULL);
	return rmdir(dir);
}

static void test_rules(void **state)
{
	(void)state;
	/* 0: privileged callers; others only with perf_event_paranoid <= 1 */
	put("kptr_restrict", "0\n");
	put("perf_event_paranoid", "2\n");
	assert_int_equal(sl_kaddrs_visible(dir, 1), 1);
	assert_int_equal(sl_kaddrs_visible(dir, 0), 0);
	put("perf_event_paranoid", "1\n");
	assert_int_equal(sl_kaddrs_visible(dir, 0), 1);
	put("perf_event_paranoid", "-1\n");
	assert_int_equal(sl_kaddrs_visible(dir, 0), 1);
	put("perf_event_paranoid", NULL);
	assert_int_equal(sl_kaddrs_visible(dir, 0), 0);
	/* 1: CAP_SYSLOG only */
	put("kptr_restrict", "1\n");
	put("perf_event_paranoid", "-1\n");
	assert_int_equal(sl_kaddrs_visible(dir, 1), 1);
	assert_int_equal(sl_kaddrs_visible(dir, 0), 0);
	/* 2: never */
	put("kptr_restrict", "2\n");
	assert_int_equal(sl_kaddrs_visible(dir, 1), 0);
	assert_int_equal(sl_kaddrs_visible(dir, 0), 0);
	/* unreadable or garbage: never */
	put("kptr_restrict", "x\n");
	assert_int_equal(sl_kaddrs_visible(dir, 1), 0);
	put("kptr_restrict", "");
	assert_int_equal(sl_kaddrs_visible(dir, 1), 0);
	put("kptr_restrict", NULL);
	assert_int_equal(sl_kaddrs_visible(dir, 1), 0);
	/* read at each call: a change applies at once */
	put("kptr_restrict", "1\n");
	assert_int_equal(sl_kaddrs_visible(dir, 1), 1);
	put("kptr_restrict", "2\n");
	assert_int_equal(sl_kaddrs_visible(dir, 1), 0);
}

static void test_real_sysctl(void **state)
{
	(void)state;
	/* the default directory is read (whatever this machine has): 0 or 1 */
	int v = sl_kaddrs_visible(NULL, 1);
	assert_true(v == 0 || v == 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rules, setup, teardown),
		cmocka_unit_test(test_real_sysctl),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
