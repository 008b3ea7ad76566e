/* Private SQLite files of the side stores (sqlite_private.h). */
#include "store/sqlite_private.h"

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
	static _Thread_local char why[PATH_MAX + 200];
	char dir[PATH_MAX], pre[PATH_MAX], last[PATH_MAX];
	struct stat st;
	const char *sl = path ? strrchr(path, '/') : NULL;
	if (!path || strlen(path) >= sizeof(dir))
		return "is not a usable path";
	if (!sl)
		snprintf(dir, sizeof(dir), ".");
	else if (sl == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(sl - path), path);
	/* every component that exists: no symlink of another user (it could
	 * point anywhere, and be re-pointed); the nearest existing one is
	 * where whatever is missing gets created */
	snprintf(last, sizeof(last), "%s", dir[0] == '/' ? "/" : ".");
	for (size_t i = 1; i <= strlen(dir); i++) {
		if (dir[i] != '/' && dir[i] != 0)
			continue;
		snprintf(pre, sizeof(pre), "%.*s", (int)i, dir);
		if (lstat(pre, &st)) {
			if (errno == ENOENT)
				break;
			snprintf(why, sizeof(why), "cannot be read (%s: %s)", pre, strerror(errno));
			return why;
		}
		if (S_ISLNK(st.st_mode) && st.st_uid != 0 && st.st_uid != geteuid()) {
			snprintf(why, sizeof(why), "has %s on its path, a symbolic link owned by uid %u", pre,
				 (unsigned)st.st_uid);
			return why;
		}
		snprintf(last, sizeof(last), "%s", pre);
	}
	if (stat(last, &st)) {
		snprintf(why, sizeof(why), "cannot be read (%s: %s)", last, strerror(errno));
		return why;
	}
	int here = !strcmp(last, dir);
	if (!S_ISDIR(st.st_mode)) {
		if (here)
			return "is not a directory";
		snprintf(why, sizeof(why), "would be made under %s, not a directory", last);
		return why;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		if (here)
			return "is owned by another user";
		snprintf(why, sizeof(why), "would be made in %s, owned by another user", last);
		return why;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, sizeof(why),
			 "%s%s is writable by group or others (others could plant the database's side files "
			 "or the directories; use a directory only this user can write, e.g. chmod 700)",
			 here ? "" : "would be made in ", here ? "" : last);
		if (here)
			return why + 1; /* "is writable ..." */
		return why;
	}
	return NULL;
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
