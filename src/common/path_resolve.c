/* Canonical paths of files that may not exist yet (path_resolve.h). */
#include "common/path_resolve.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *sl_path_resolve(const char *file, char *out, size_t len)
{
	char buf[PATH_MAX], base[PATH_MAX];
	if (realpath(file, out))
		return out;
	if (snprintf(buf, sizeof(buf), "%s", file) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	/* split at the longest existing prefix */
	char *rest = NULL;
	for (;;) {
		char *slash = strrchr(buf, '/');
		if (rest)
			rest[-1] = '/'; /* undo the previous split */
		if (!slash) {
			if (!realpath(".", base))
				return NULL;
			rest = buf;
			break;
		}
		*slash = '\0';
		rest = slash + 1;
		if (realpath(slash == buf ? "/" : buf, base))
			break;
	}
	size_t n = strlen(base);
	if (n == 1)
		n = 0; /* "/" */
	if (n >= len) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	memcpy(out, base, n);
	char *save = NULL;
	for (char *seg = strtok_r(rest, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
		if (!strcmp(seg, "."))
			continue;
		if (!strcmp(seg, "..")) {
			while (n && out[n - 1] != '/')
				n--;
			if (n)
				n--;
			continue;
		}
		size_t sl = strlen(seg);
		if (n + 1 + sl >= len) {
			errno = ENAMETOOLONG;
			return NULL;
		}
		out[n++] = '/';
		memcpy(out + n, seg, sl);
		n += sl;
	}
	if (!n)
		out[n++] = '/';
	out[n] = '\0';
	return out;
}
