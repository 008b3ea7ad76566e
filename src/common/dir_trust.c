/* The directory walker of the agent's files (dir_trust.h). */
#include "common/dir_trust.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Whether dir is on a read-only mount (statvfs ST_RDONLY). */
static int on_ro_mount(const char *dir)
{
	struct statvfs vfs;
	return statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_RDONLY);
}

const char *sl_dir_refusal(const char *path, unsigned flags, const char *risk)
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
	int seen = 0; /* last is a component of the path that exists */
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
		/* last is a directory above one that exists: its owner, or
		 * anyone who may write it without the sticky bit, could rename
		 * what is below and put their own in its place (the nearest
		 * existing one gets the stricter check after the walk) */
		if (seen && stat(last, &st) == 0 && S_ISDIR(st.st_mode) && !on_ro_mount(last)) {
			if (st.st_uid != 0 && st.st_uid != geteuid()) {
				snprintf(why, sizeof(why), "has %s on its path, a directory owned by uid %u", last,
					 (unsigned)st.st_uid);
				return why;
			}
			if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
				snprintf(why, sizeof(why),
					 "has %s on its path, a directory writable by group or others (not sticky)", last);
				return why;
			}
		}
		snprintf(last, sizeof(last), "%s", pre);
		seen = 1;
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
	/* a read-only mount: no one writes there, whatever its mode (a
	 * Kubernetes ConfigMap volume's directory is 0777, mounted read-only) */
	int ro = on_ro_mount(last);
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !ro && !((flags & SL_DIR_STICKY_OK) && (st.st_mode & S_ISVTX))) {
		snprintf(why, sizeof(why), "%s%s is writable by group or others%s%s%s",
			 here ? "" : "would be made in ", here ? "" : last, risk ? " (" : "", risk ? risk : "",
			 risk ? ")" : "");
		if (here)
			return why + 1; /* "is writable ..." */
		return why;
	}
	return NULL;
}

int sl_mkdir_mode(const char *dir, mode_t mode)
{
	if (mkdir(dir, mode) != 0)
		return errno == EEXIST ? 0 : -errno;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fchmod(fd, mode) ? -errno : 1;
	close(fd);
	return rc;
}
