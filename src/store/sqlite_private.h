/* One way for the agent's side stores (tasks.db, profiles.db, captures.db)
 * to open their SQLite file: they hold stacks, command lines and profiles,
 * so the file is the agent's own and no one else's to read or plant. */
#ifndef SANDLENS_STORE_SQLITE_PRIVATE_H
#define SANDLENS_STORE_SQLITE_PRIVATE_H

#include <sqlite3.h>
#include <stddef.h>

/* Open (creating it) the SQLite database at path for the agent alone:
 *   - its directory is made 0700 when missing (one level), and must pass
 *     sl_store_dir_refusal;
 *   - the file is created 0600 with O_CREAT|O_EXCL|O_NOFOLLOW before SQLite
 *     opens it (SQLITE_OPEN_NOFOLLOW too: never through a planted symlink);
 *   - an existing file must be a regular file owned by the effective uid
 *     with no permission bits for group or others (mode & 077 == 0): one
 *     planted by another user in a shared directory would be theirs to read;
 *   - SQLite's side files <path>-wal, -shm, -journal, when present, must be
 *     regular files of ours that others cannot write (a planted symlink or
 *     another user's file is refused, naming it);
 *   - opened read-write, serialized (SQLITE_OPEN_FULLMUTEX), busy timeout
 *     2 s, then schema_sql is run (PRAGMAs, CREATE ... IF NOT EXISTS,
 *     migrations; NULL for none).
 * Returns the handle, or NULL with err filled ("<path>: <reason>"). */
sqlite3 *sl_sqlite_open_private(const char *path, const char *schema_sql, char *err, size_t errlen);

/* Why the directory holding the file at path must not hold the agent's
 * files, or NULL when it may: it must be a directory owned by the
 * effective uid or root that neither group nor others can write, sticky or
 * not (in a directory others can write they can plant SQLite's side files,
 * <path>-wal / -shm / -journal, between our check and SQLite's own open,
 * and have the agent write argv and stacks into files they own).
 * "cannot be read: <errno text>" when stat fails. The reason is a static
 * string or held in a thread-local buffer. The walker is sl_dir_refusal
 * (src/common/dir_trust.h), without SL_DIR_STICKY_OK. */
const char *sl_store_dir_refusal(const char *path);

/* sqlite3_exec(sql) with its error message copied to err (when err is not
 * NULL). Returns 0 or -1. */
int sl_sqlite_exec(sqlite3 *db, const char *sql, char *err, size_t errlen);

#endif
