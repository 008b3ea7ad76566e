/* The persisted OTLP logs cursor (src/export/cursor_file.c): a round trip,
 * replacement, a missing file, and what must be refused: a symlink, a FIFO
 * (non-blocking: never hangs), a directory, garbage, a negative id. */
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

#include "export/cursor_file.h"

static char dir[64], path[128];

static int setup(void **st)
{
	(void)st;
	strcpy(dir, "/tmp/sl-cursor-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/events.db.otlp-cursor", dir);
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static void write_text(const char *p, const char *t)
{
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(t, f);
	fclose(f);
}

static void round_trip(void **st)
{
	(void)st;
	uint64_t ep = 0;
	int64_t id = -1;
	char err[256];
	struct stat sb;
	assert_int_equal(sl_export_cursor_load(path, &ep, &id, err, sizeof(err)), 0);
	assert_int_equal(sl_export_cursor_save(path, 0x1f0c2a9d3e4b5a67ull, 1234), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(sl_export_cursor_load(path, &ep, &id, err, sizeof(err)), 1);
	assert_true(ep == 0x1f0c2a9d3e4b5a67ull);
	assert_int_equal(id, 1234);
	assert_int_equal(sl_export_cursor_save(path, 7, 0), 0); /* replaced */
	assert_int_equal(sl_export_cursor_load(path, &ep, &id, err, sizeof(err)), 1);
	assert_int_equal(ep, 7);
	assert_int_equal(id, 0);
	assert_int_equal(sl_export_cursor_save(path, 7, -1), -EINVAL);
}

static void refused(void **st)
{
	(void)st;
	uint64_t ep = 0;
	int64_t id = 0;
	char err[256], other[160];
	static const char *bad[] = {
		"", "hello\n", "sandlens-otlp-cursor 1\nstore_epoch 12\nafter_id 5\n",
		"sandlens-otlp-cursor 1\nstore_epoch 0000000000000001\nafter_id -5\n",
		"sandlens-otlp-cursor 1\nstore_epoch 0000000000000001\nafter_id 5\nextra\n",
		"sandlens-otlp-cursor 2\nstore_epoch 0000000000000001\nafter_id 5\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_text(path, bad[i]);
		assert_int_equal(sl_export_cursor_load(path, &ep, &id, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, path));
	}
	unlink(path);
	/* a symlink to a valid cursor file is not followed */
	snprintf(other, sizeof(other), "%s/real", dir);
	write_text(other, "sandlens-otlp-cursor 1\nstore_epoch 0000000000000001\nafter_id 5\n");
	assert_int_equal(symlink(other, path), 0);
	assert_int_equal(sl_export_cursor_load(path, &ep, &id, err, sizeof(err)), -ELOOP);
	/* saving replaces the link itself, never writes through it */
	assert_int_equal(sl_export_cursor_save(path, 2, 9), 0);
	struct stat sb;
	assert_int_equal(lstat(path, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_int_equal(sl_export_cursor_load(other, &ep, &id, err, sizeof(err)), 1);
	assert_int_equal(id, 5);
	unlink(path);
	/* a FIFO: refused at once, no blocking open */
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(sl_export_cursor_load(path, &ep, &id, err, sizeof(err)), -EINVAL);
	unlink(path);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_true(sl_export_cursor_load(path, &ep, &id, err, sizeof(err)) < 0);
	assert_true(sl_export_cursor_save(path, 1, 1) < 0);
	rmdir(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(refused, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
