/* sl_sqlite_open_private (store/sqlite_private.h): the side stores' files
 * are created 0600 in a 0700 directory, and a planted symlink, a file
 * others may read or write, or a file of another user is refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/sqlite_private.h"

static char tdir[64];

static void test_create(void **state)
{
	(void)state;
	char p[200], err[300];
	struct stat st;
	snprintf(p, sizeof(p), "%s/sub/x.db", tdir);
	sqlite3 *db = sl_sqlite_open_private(p, "CREATE TABLE t(a INTEGER); INSERT INTO t VALUES(7);", err,
					     sizeof(err));
	assert_non_null(db);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	snprintf(p, sizeof(p), "%s/sub", tdir);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(sl_sqlite_exec(db, "SELECT a FROM t", err, sizeof(err)), 0);
	assert_int_equal(sl_sqlite_exec(db, "SELECT nope FROM t", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "nope"));
	sqlite3_close(db);
	/* reopened: the same file, schema IF NOT EXISTS */
	snprintf(p, sizeof(p), "%s/sub/x.db", tdir);
	db = sl_sqlite_open_private(p, "CREATE TABLE IF NOT EXISTS t(a INTEGER);", err, sizeof(err));
	assert_non_null(db);
	sqlite3_close(db);
	/* a bad schema: NULL and the reason */
	db = sl_sqlite_open_private(p, "CREATE TABLE t(a INTEGER);", err, sizeof(err));
	assert_null(db);
	assert_non_null(strstr(err, "schema"));
}

static void test_refused(void **state)
{
	(void)state;
	char p[200], target[200], err[300];
	sqlite3 *db;
	/* a symlink planted where the file goes */
	snprintf(target, sizeof(target), "%s/elsewhere.db", tdir);
	snprintf(p, sizeof(p), "%s/link.db", tdir);
	assert_int_equal(symlink(target, p), 0);
	db = sl_sqlite_open_private(p, NULL, err, sizeof(err));
	assert_null(db);
	assert_non_null(strstr(err, "refusing"));
	assert_int_not_equal(access(target, F_OK), 0); /* nothing made through it */
	/* a file others can read */
	snprintf(p, sizeof(p), "%s/open.db", tdir);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(chmod(p, 0644), 0);
	db = sl_sqlite_open_private(p, NULL, err, sizeof(err));
	assert_null(db);
	assert_non_null(strstr(err, "refusing"));
	/* a file of another user (root only can make one) */
	if (geteuid() == 0) {
		assert_int_equal(chmod(p, 0600), 0);
		assert_int_equal(chown(p, 65534, 65534), 0);
		db = sl_sqlite_open_private(p, NULL, err, sizeof(err));
		assert_null(db);
		assert_non_null(strstr(err, "refusing"));
	}
	/* a planted side file: a symlink as the WAL of a fresh database */
	snprintf(p, sizeof(p), "%s/side.db", tdir);
	char wal[220];
	snprintf(wal, sizeof(wal), "%s-wal", p);
	assert_int_equal(symlink(target, wal), 0);
	db = sl_sqlite_open_private(p, "PRAGMA journal_mode=WAL;", err, sizeof(err));
	assert_null(db);
	assert_non_null(strstr(err, "side.db-wal: refusing"));
	assert_int_not_equal(access(target, F_OK), 0);
	assert_int_equal(unlink(wal), 0);
	db = sl_sqlite_open_private(p, "PRAGMA journal_mode=WAL; CREATE TABLE t(a);", err, sizeof(err));
	assert_non_null(db);
	sqlite3_close(db);
	/* a directory where the file goes */
	snprintf(p, sizeof(p), "%s/dir.db", tdir);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_null(sl_sqlite_open_private(p, NULL, err, sizeof(err)));
	assert_null(sl_sqlite_open_private("", NULL, err, sizeof(err)));
}

/* A directory others can write (sticky or not): refused, nothing created
 * in it; the same directory made private: accepted. */
static void test_shared_dir(void **state)
{
	(void)state;
	char d[120], p[200], err[300];
	snprintf(d, sizeof(d), "%s/shared", tdir);
	assert_int_equal(mkdir(d, 0700), 0);
	snprintf(p, sizeof(p), "%s/x.db", d);
	const mode_t modes[] = { 01777, 0777, 0770, 0720 };
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		assert_int_equal(chmod(d, modes[i]), 0);
		assert_null(sl_sqlite_open_private(p, NULL, err, sizeof(err)));
		assert_non_null(strstr(err, "refusing its directory"));
		assert_non_null(strstr(err, "writable by group or others"));
		assert_int_not_equal(access(p, F_OK), 0);
		assert_non_null(sl_store_dir_refusal(p));
	}
	assert_int_equal(chmod(d, 0755), 0);
	assert_null(sl_store_dir_refusal(p));
	sqlite3 *db = sl_sqlite_open_private(p, NULL, err, sizeof(err));
	assert_non_null(db);
	sqlite3_close(db);
	/* another user's directory (root only can make one) */
	if (geteuid() == 0) {
		assert_int_equal(chown(d, 65534, 65534), 0);
		assert_string_equal(sl_store_dir_refusal(p), "is owned by another user");
	}
	/* no directory part: the working directory; a missing one is made in
	 * its nearest existing directory, which must be private */
	assert_null(sl_store_dir_refusal("/x.db"));
	assert_null(sl_store_dir_refusal("/nonexistent-sl/a/x.db"));
	char sh[160], q[300];
	snprintf(sh, sizeof(sh), "%s/open1777", tdir);
	assert_int_equal(mkdir(sh, 0700), 0);
	assert_int_equal(chmod(sh, 01777), 0);
	snprintf(q, sizeof(q), "%s/not/yet/x.db", sh);
	const char *w = sl_store_dir_refusal(q);
	assert_non_null(w);
	assert_non_null(strstr(w, "would be made in"));
	assert_null(sl_sqlite_open_private(q, NULL, err, sizeof(err)));
	snprintf(q, sizeof(q), "%s/not", sh);
	assert_int_not_equal(access(q, F_OK), 0); /* nothing made */
	/* another user's symlink on the path (to a private directory of ours) */
	if (geteuid() == 0) {
		char priv[160], ln[200];
		snprintf(priv, sizeof(priv), "%s/private", tdir);
		assert_int_equal(mkdir(priv, 0700), 0);
		snprintf(ln, sizeof(ln), "%s/plant", sh);
		assert_int_equal(symlink(priv, ln), 0);
		assert_int_equal(lchown(ln, 65534, 65534), 0);
		snprintf(q, sizeof(q), "%s/sub/x.db", ln);
		w = sl_store_dir_refusal(q);
		assert_non_null(w);
		assert_non_null(strstr(w, "symbolic link owned by uid 65534"));
		/* ours (root's): followed */
		assert_int_equal(lchown(ln, 0, 0), 0);
		assert_null(sl_store_dir_refusal(q));
	}
}

int main(void)
{
	snprintf(tdir, sizeof(tdir), "/tmp/sl-sqlp-XXXXXX");
	if (!mkdtemp(tdir))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_shared_dir),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tdir);
	if (system(cmd))
		rc = rc ? rc : 1;
	return rc;
}
