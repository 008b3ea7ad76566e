/* Canonical paths of files that may not exist yet. */
#ifndef SANDLENS_COMMON_PATH_RESOLVE_H
#define SANDLENS_COMMON_PATH_RESOLVE_H

#include <stddef.h>

/* The canonical path of file (symlinks resolved) even when it or some of
 * its directories do not exist yet: realpath(3) of the nearest existing
 * ancestor, then the rest of the path with "." and ".." applied lexically
 * and repeated slashes folded. Writes at most len bytes (PATH_MAX is
 * enough) to out and returns it; NULL with errno set (ENAMETOOLONG, or
 * realpath's error for the current directory) on error. */
char *sl_path_resolve(const char *file, char *out, size_t len);

#endif
