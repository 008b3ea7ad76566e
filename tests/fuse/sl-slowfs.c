/* sl-slowfs: a deliberately slow FUSE filesystem for the io module's tests
 * (tests/integration/t_io_fidelity.sh). It holds one file, /disk, backed by
 * a file given on the command line; every read and write of /disk sleeps
 * SL_SLOWFS_DELAY_US microseconds (default 3000) before being passed to
 * the backing file with pread/pwrite. Opened with direct_io, so a loop
 * device over /disk sees the delay on every request (no page cache in
 * between).
 *
 *   sl-slowfs BACKING MOUNTPOINT [fuse options]   (foreground: -f is added)
 *
 * Built by the test with `cc $(pkg-config --cflags --libs fuse3)`. */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int backing = -1;
static long delay_us = 3000;

static void slow(void)
{
	struct timespec ts = {delay_us / 1000000, (delay_us % 1000000) * 1000};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (strcmp(path, "/disk"))
		return -ENOENT;
	struct stat b;
	if (fstat(backing, &b))
		return -errno;
	st->st_mode = S_IFREG | 0600;
	st->st_nlink = 1;
	st->st_size = b.st_size;
	return 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags fl)
{
	(void)off;
	(void)fi;
	(void)fl;
	if (strcmp(path, "/"))
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, "disk", NULL, 0, 0);
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, "/disk"))
		return -ENOENT;
	fi->direct_io = 1;
	return 0;
}

static int fs_read(const char *path, char *buf, size_t n, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	slow();
	ssize_t r = pread(backing, buf, n, off);
	return r < 0 ? -errno : (int)r;
}

static int fs_write(const char *path, const char *buf, size_t n, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	slow();
	ssize_t r = pwrite(backing, buf, n, off);
	return r < 0 ? -errno : (int)r;
}

static int fs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	(void)datasync;
	(void)fi;
	return 0;
}

static const struct fuse_operations ops = {
	.getattr = fs_getattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.read = fs_read,
	.write = fs_write,
	.fsync = fs_fsync,
};

int main(int argc, char **argv)
{
	const char *d = getenv("SL_SLOWFS_DELAY_US");
	char *fargv[16];
	int fargc = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s BACKING MOUNTPOINT [fuse options]\n", argv[0]);
		return 2;
	}
	if (d)
		delay_us = strtol(d, NULL, 10);
	backing = open(argv[1], O_RDWR);
	if (backing < 0) {
		perror(argv[1]);
		return 1;
	}
	fargv[fargc++] = argv[0];
	fargv[fargc++] = "-f";
	for (int i = 3; i < argc && fargc < 14; i++)
		fargv[fargc++] = argv[i];
	fargv[fargc++] = argv[2];
	fargv[fargc] = NULL;
	return fuse_main(fargc, fargv, &ops, NULL);
}
