/* /dev/kmsg record parsing (src/common/kmsg.c): the documented format
 * (Documentation/ABI/testing/dev-kmsg), \xNN unescaping, continuation lines
 * ignored, malformed headers refused; a fixture file read one record a line;
 * and, when readable, the real /dev/kmsg from its end. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <cmocka.h>

#include "common/kmsg.h"

static void test_parse(void **state)
{
	struct sl_kmsg_rec r;
	const char *a = "6,339,5140900,-;NET: Registered protocol family 10\n SUBSYSTEM=net\n";
	(void)state;
	assert_int_equal(sl_kmsg_parse(a, strlen(a), &r), 0);
	assert_int_equal(r.level, 6);
	assert_int_equal(r.facility, 0);
	assert_int_equal(r.seq, 339);
	assert_int_equal(r.ts_us, 5140900);
	assert_string_equal(r.msg, "NET: Registered protocol family 10");
	const char *b = "0,1,2,c,extra;watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [spin:123]\\x0a";
	assert_int_equal(sl_kmsg_parse(b, strlen(b), &r), 0);
	assert_int_equal(r.level, 0);
	assert_string_equal(r.msg, "watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [spin:123]\n");
	const char *c = "30,5,6,-;x"; /* facility 3 (daemon), level 6 */
	assert_int_equal(sl_kmsg_parse(c, strlen(c), &r), 0);
	assert_int_equal(r.facility, 3);
	assert_int_equal(r.level, 6);
	static const char *bad[] = {"", "no header", "6,1,2;x", "6,a,2,-;x", ",1,2,-;x", "6,1,,-;x",
				    "99999999999999999999999,1,2,-;x"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(sl_kmsg_parse(bad[i], strlen(bad[i]), &r), -EINVAL);
	char big[3000];
	memset(big, 'x', sizeof(big));
	memcpy(big, "4,1,2,-;", 8);
	assert_int_equal(sl_kmsg_parse(big, sizeof(big), &r), 0);
	assert_int_equal(strlen(r.msg), sizeof(r.msg) - 1);
}

static void test_fixture_file(void **state)
{
	char path[] = "/tmp/sl-kmsg-XXXXXX";
	int fd = mkstemp(path);
	struct sl_kmsg_rec r;
	(void)state;
	assert_true(fd >= 0);
	const char *txt = "3,10,100,-;first\nnot a record\n4,11,200,-;second\n4,12,300,-;third-no-newline";
	assert_int_equal(write(fd, txt, strlen(txt)), (ssize_t)strlen(txt));
	close(fd);
	struct sl_kmsg *k = sl_kmsg_open(path, 0);
	assert_non_null(k);
	assert_int_equal(sl_kmsg_next(k, &r), 1);
	assert_string_equal(r.msg, "first");
	assert_int_equal(sl_kmsg_next(k, &r), 1);
	assert_string_equal(r.msg, "second");
	assert_int_equal(sl_kmsg_next(k, &r), 1);
	assert_string_equal(r.msg, "third-no-newline");
	assert_int_equal(sl_kmsg_next(k, &r), 0);
	sl_kmsg_close(k);
	k = sl_kmsg_open(path, 1); /* from the end: nothing */
	assert_non_null(k);
	assert_int_equal(sl_kmsg_next(k, &r), 0);
	sl_kmsg_close(k);
	unlink(path);
	assert_null(sl_kmsg_open("/nonexistent/kmsg", 0));
	assert_int_equal(errno, ENOENT);
	assert_null(sl_kmsg_open("/tmp", 0));
}

/* The real device, when this process may read it: from the end, a record
 * written to /dev/kmsg comes back. */
static void test_real_kmsg(void **state)
{
	struct sl_kmsg_rec r;
	char mark[64];
	int found = 0;
	(void)state;
	struct sl_kmsg *k = sl_kmsg_open(NULL, 1);
	FILE *w = fopen("/dev/kmsg", "w");
	if (!k || !w) {
		if (k)
			sl_kmsg_close(k);
		if (w)
			fclose(w);
		skip();
	}
	snprintf(mark, sizeof(mark), "sandlens-test_kmsg-%d", (int)getpid());
	fprintf(w, "%s\n", mark);
	fclose(w);
	for (int i = 0; i < 100 && !found; i++) {
		int n = sl_kmsg_next(k, &r);
		if (n == 1)
			found = strstr(r.msg, mark) != NULL;
		else
			usleep(10000);
	}
	sl_kmsg_close(k);
	assert_true(found);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_fixture_file),
		cmocka_unit_test(test_real_kmsg),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
