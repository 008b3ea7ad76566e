/* Trusted files; see trusted_file.h. */
#include "common/trusted_file.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int owner_ok(const struct stat *st)
{
	return st->st_uid == 0 || st->st_uid == geteuid();
}

int sl_file_trusted(const char *path, char *err, size_t errlen)
{
	char real[PATH_MAX];
	struct stat st;

	if (!realpath(path, real)) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return e == ENOENT ? -ENOENT : -EPERM;
	}
	if (stat(real, &st)) {
		snprintf(err, errlen, "%s: %s", real, strerror(errno));
		return -EPERM;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is not a regular file", real);
		return -EINVAL;
	}
	if (!owner_ok(&st) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(err, errlen, "%s is owned by uid %u or writable by group/others (mode %03o): not trusted",
			 real, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
		return -EPERM;
	}
	/* each directory above it */
	for (char *slash = strrchr(real, '/'); slash; slash = strrchr(real, '/')) {
		if (slash == real)
			slash[1] = 0; /* "/" itself */
		else
			*slash = 0;
		if (stat(real, &st)) {
			snprintf(err, errlen, "%s: %s", real, strerror(errno));
			return -EPERM;
		}
		/* a sticky directory (/tmp) is fine above an entry owned by
		 * root: no one else can rename or remove that entry */
		if (!owner_ok(&st) || ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))) {
			snprintf(err, errlen,
				 "directory %s is owned by uid %u or writable by group/others (mode %04o): files in it are not trusted",
				 real, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
			return -EPERM;
		}
		if (!strcmp(real, "/"))
			break;
	}
	return 0;
}
