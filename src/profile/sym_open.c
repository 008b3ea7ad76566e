/* Opening and reading files whose path others control, for the symbolizer
 * (symbolize_proc.h, docs/PROFILING.md "Files from other users"): never
 * blocks in open() (O_NONBLOCK: a FIFO opens at once and is refused), never
 * follows a planted symlink out of a process's root (openat2
 * RESOLVE_IN_ROOT), regular files only, size-bounded. */
#include "profile/symbolize_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BASE_FLAGS (O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)

/* fd must be a regular file of at most max bytes; else closed. */
static int check_fd(int fd, uint64_t max, struct stat *out)
{
	struct stat st;
	int e = 0;
	if (fstat(fd, &st))
		e = errno;
	else if (!S_ISREG(st.st_mode))
		e = EINVAL;
	else if ((uint64_t)st.st_size > max)
		e = EFBIG;
	if (e) {
		close(fd);
		return -e;
	}
	if (out)
		*out = st;
	return fd;
}

int sl_sym_open(const char *root, const char *path, int flags, uint64_t max, struct stat *st)
{
	int of = BASE_FLAGS | ((flags & SL_SYM_NOFOLLOW) ? O_NOFOLLOW : 0);
	int fd;
	if (!root || !*root) {
		fd = open(path, of);
		return fd < 0 ? -errno : check_fd(fd, max, st);
	}
	int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return -errno;
	struct open_how how = {
		.flags = (uint64_t)of,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	while (*path == '/')
		path++;
	fd = (int)syscall(SYS_openat2, rfd, path, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS) {
		/* kernels before 5.6: the last component at least is not a
		 * symlink (an earlier one may still lead out of root) */
		how.flags |= O_NOFOLLOW;
		fd = openat(rfd, path, (int)how.flags);
	}
	int e = errno;
	close(rfd);
	return fd < 0 ? -e : check_fd(fd, max, st);
}

int sl_read_fd_bounded(int fd, size_t max, char **buf, size_t *len)
{
	size_t cap = max < 65536 ? max : 65536, n = 0;
	char *b = malloc(cap + 1);
	if (!b)
		return -ENOMEM;
	for (;;) {
		if (n == cap) {
			if (cap >= max)
				break;
			size_t nc = cap * 2 > max ? max : cap * 2;
			char *nb = realloc(b, nc + 1);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap = nc;
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			free(b);
			return e;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}

int sl_read_small_file(const char *path, size_t max, char **buf, size_t *len)
{
	/* (proc) files report size 0: the bound is max, not st_size */
	int fd = sl_sym_open(NULL, path, 0, UINT64_MAX, NULL);
	if (fd < 0)
		return fd;
	int rc = sl_read_fd_bounded(fd, max, buf, len);
	close(fd);
	return rc;
}
