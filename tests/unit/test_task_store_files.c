/* The task store file (task_store.h): created 0600, and never through a
 * symlink planted at its path (audit of the files the agent creates, issue
 * 8 "Deliver 1"): sl_task_store_open fails and the link's target is neither
 * created nor changed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "task/task_store.h"

static char dir[64];

static void rm_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_created_0600(void **state)
{
	(void)state;
	char db[128], err[256] = "";
	struct stat st;
	snprintf(dir, sizeof(dir), "/tmp/sl-tstore.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/tasks.db", dir);
	struct sl_task_store *s = sl_task_store_open(db, err, sizeof(err));
	assert_non_null(s);
	sl_task_store_close(s);
	assert_int_equal(lstat(db, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	rm_dir();
}

static void test_symlink_refused(void **state)
{
	(void)state;
	char db[128], victim[128], other[128], err[256] = "";
	struct stat st;
	snprintf(dir, sizeof(dir), "/tmp/sl-tstore.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/tasks.db", dir);
	/* dangling: the target would be created */
	snprintf(victim, sizeof(victim), "%s/created-elsewhere", dir);
	assert_int_equal(symlink(victim, db), 0);
	assert_null(sl_task_store_open(db, err, sizeof(err)));
	print_message("dangling link: %s\n", err);
	assert_int_equal(lstat(victim, &st), -1);
	/* to an existing file: left as it was */
	unlink(db);
	snprintf(other, sizeof(other), "%s/precious", dir);
	FILE *f = fopen(other, "w");
	assert_non_null(f);
	fputs("precious\n", f);
	fclose(f);
	assert_int_equal(symlink(other, db), 0);
	assert_null(sl_task_store_open(db, err, sizeof(err)));
	print_message("link to a file: %s\n", err);
	assert_int_equal(stat(other, &st), 0);
	assert_int_equal(st.st_size, 9);
	rm_dir();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_created_0600),
		cmocka_unit_test(test_symlink_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
