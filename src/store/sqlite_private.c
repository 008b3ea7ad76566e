/* Private SQLite files of the side stores (sqlite_private.h). */
#include "store/sqlite_private.h"

#include "common/dir_trust.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sl_sqlite_exec(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		if (err)
			snprintf(err, errlen, "%s", msg ? msg : "sqlite error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

const char *sl_store_dir_refusal(const char *path)
{
	return sl_dir_refusal(path, 0,
			      "others could plant the database's side files or the directories; use a directory only "
			      "this user can write, e.g. chmod 700");
}

sqlite3 *sl_sqlite_open_private(const char *path, const char *schema_sql, char *err, size_t errlen)
{
	char dir[1024];
	struct stat st;
	sqlite3 *db = NULL;
	if (!path || !*path || strlen(path) >= sizeof(dir)) {
		snprintf(err, errlen, "%s: not a usable path", path ? path : "(null)");
		return NULL;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	char *sl = strrchr(dir, '/');
	if (sl && sl != dir) {
		*sl = 0;
		if (mkdir(dir, 0700) && errno != EEXIST) {
			snprintf(err, errlen, "%s: cannot create its directory: %s", path, strerror(errno));
			return NULL;
		}
	}
	const char *dwhy = sl_store_dir_refusal(path);
	if (dwhy) {
		snprintf(err, errlen, "%s: refusing its directory: it %s", path, dwhy);
		return NULL;
	}
	int cfd = open(path, O_CREAT | O_EXCL | O_NOFOLLOW | O_RDWR | O_CLOEXEC, 0600);
	if (cfd >= 0)
		close(cfd);
	if (lstat(path, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		snprintf(err, errlen, "%s: refusing it: not a regular file of ours that only we can read and write",
			 path);
		return NULL;
	}
	/* SQLite's side files (WAL, shared memory, rollback journal) are
	 * opened by name too: one planted by another user would be written
	 * through or make every open fail with "unable to open database file" */
	static const char *const side[3] = { "-wal", "-shm", "-journal" };
	for (int i = 0; i < 3; i++) {
		char sp[1100];
		snprintf(sp, sizeof(sp), "%s%s", path, side[i]);
		if (lstat(sp, &st)) {
			if (errno == ENOENT)
				continue;
			snprintf(err, errlen, "%s: cannot check it: %s", sp, strerror(errno));
			return NULL;
		}
		if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
			snprintf(err, errlen, "%s: refusing it: not a regular file of ours that only we can write", sp);
			return NULL;
		}
	}
	if (sqlite3_open_v2(path, &db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW,
			    NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, 2000);
	char e2[256];
	if (schema_sql && sl_sqlite_exec(db, schema_sql, e2, sizeof(e2))) {
		snprintf(err, errlen, "%s: schema: %s", path, e2);
		sqlite3_close(db);
		return NULL;
	}
	return db;
}
