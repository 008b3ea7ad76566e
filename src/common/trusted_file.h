/* Whether a file may be trusted with root's code or secrets: what a root
 * agent dlopen()s (gpu.nvml_path) must be a file only root could have put
 * there. */
#ifndef SANDLENS_COMMON_TRUSTED_FILE_H
#define SANDLENS_COMMON_TRUSTED_FILE_H

#include <stddef.h>

/* 0 when path (symlinks resolved, realpath(3)) is a regular file owned by
 * root (or by the calling effective uid) and writable by no one else, and
 * every directory from / down to it is owned by root (or the euid) and
 * writable by no one else, or sticky (/tmp: no one else can rename or
 * remove the root-owned entry below it).
 * Else -ENOENT (no such file), -EINVAL (not a regular file), -EPERM (who
 * could write it), with the reason in err. Never opens the file (a FIFO
 * cannot block it). */
int sl_file_trusted(const char *path, char *err, size_t errlen);

#endif
