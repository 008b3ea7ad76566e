/* Trusted files (src/common/trusted_file.c): what gpu.nvml_path may load. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "common/trusted_file.h"

static void verdicts(void **st)
{
	(void)st;
	char dir[] = "/tmp/sl-trust-XXXXXX", p[128], err[512];
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/lib.so", dir);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
	chmod(p, 0644);
	assert_int_equal(sl_file_trusted(p, err, sizeof(err)), 0); /* root-owned, under sticky /tmp */
	chmod(p, 0666);
	assert_int_equal(sl_file_trusted(p, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "not trusted"));
	chmod(p, 0644);
	chmod(dir, 0777); /* a world-writable, not sticky directory above it */
	assert_int_equal(sl_file_trusted(p, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "directory"));
	chmod(dir, 0700);
	if (geteuid() == 0) { /* a file of another user */
		assert_int_equal(chown(p, 65534, 65534), 0);
		assert_int_equal(sl_file_trusted(p, err, sizeof(err)), -EPERM);
		assert_int_equal(chown(p, 0, 0), 0);
	}
	char l[160];
	snprintf(l, sizeof(l), "%s/link.so", dir); /* a symlink to it: judged by its target */
	assert_int_equal(symlink(p, l), 0);
	assert_int_equal(sl_file_trusted(l, err, sizeof(err)), 0);
	char fifo[160];
	snprintf(fifo, sizeof(fifo), "%s/fifo.so", dir); /* never opened: no hang */
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(sl_file_trusted(fifo, err, sizeof(err)), -EINVAL);
	assert_int_equal(sl_file_trusted(dir, err, sizeof(err)), -EINVAL);
	snprintf(l, sizeof(l), "%s/none.so", dir);
	assert_int_equal(sl_file_trusted(l, err, sizeof(err)), -ENOENT);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(sl_file_trusted("/bin/sh", err, sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(verdicts)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
