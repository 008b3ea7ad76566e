/* Whether a directory may hold the agent's files (dir_trust.c): the one
 * walker behind the store paths (sl_store_dir_refusal,
 * src/store/sqlite_private.h), the API's unix socket (api.unix_socket) and
 * the --config file. */
#ifndef SANDLENS_COMMON_DIR_TRUST_H
#define SANDLENS_COMMON_DIR_TRUST_H

#include <sys/types.h>

/* SL_DIR_STICKY_OK: a directory that group or others may write is accepted
 * when it is sticky (/tmp): no one else can rename or remove an entry of
 * ours in it. Without it such a directory is refused, sticky or not (the
 * stores: others could plant SQLite's side files next to ours). */
#define SL_DIR_STICKY_OK 1u

/* Why the directory that holds (or will hold) the file at path must not,
 * or NULL when it may. path's directory part ("." when none) is walked
 * component by component (lstat): a symbolic link owned by neither root
 * nor the effective uid on the way is refused (it could point anywhere and
 * be re-pointed); so is a directory above the nearest existing one that
 * is owned by neither, or that group or others may write without the
 * sticky bit (they could rename the rest of the path away and put their
 * own in its place; /tmp passes); the nearest existing component is where whatever is
 * missing gets created, and it must be a directory owned by the effective
 * uid or root that neither group nor others can write (see flags; a
 * directory on a read-only mount, statvfs ST_RDONLY, counts as written by
 * no one: a Kubernetes ConfigMap volume is 0777, mounted read-only). risk
 * ends the "writable by group or others" reason in parentheses (what
 * others could do there and what to do about it; NULL: none).
 * The reason reads after "it": "is owned by another user", "is writable
 * by group or others (...)", "would be made in /x, owned by another user",
 * "has /x/l on its path, a symbolic link owned by uid N", "has /x on its
 * path, a directory owned by uid N", "has /x on its path, a directory
 * writable by group or others (not sticky)", "is not a
 * directory", "cannot be read (<path>: <errno text>)", "is not a usable
 * path". Static or in a thread-local buffer (valid until the thread's
 * next call). */
const char *sl_dir_refusal(const char *path, unsigned flags, const char *risk);

/* mkdir(dir, mode) with exactly that mode: the agent runs with umask 077,
 * which would make a directory that others (api.admin_group) must enter
 * 0700. A directory that already exists is left as it is (its owner chose
 * its mode). Returns 1 when made, 0 when it existed, -errno on error (the
 * mode is set through an O_NOFOLLOW descriptor of what was made). */
int sl_mkdir_mode(const char *dir, mode_t mode);

#endif
