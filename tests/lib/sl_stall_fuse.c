/* A FUSE file system for tests/integration/t_stall_hung.sh (libfuse3,
 * built by the test): one file /data of SIZE bytes (zeros), opened with
 * direct_io so every read and write reaches this server. A read or write
 * waits while the gate file (argv[1]) exists: the caller sleeps in the
 * kernel's FUSE request wait (D, TASK_KILLABLE) until the test removes the
 * gate; a second writer of the file waits for the inode lock the first
 * holds (D, TASK_UNINTERRUPTIBLE: what khungtaskd reports).
 *   sl_stall_fuse GATE MOUNTPOINT [fuse options...] */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fuse.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SIZE (64u << 20)
static const char *gate;

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (!strcmp(path, "/data")) {
		st->st_mode = S_IFREG | 0666;
		st->st_nlink = 1;
		st->st_size = SIZE;
		return 0;
	}
	return -ENOENT;
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
	fill(buf, "data", NULL, 0, 0);
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, "/data"))
		return -ENOENT;
	fi->direct_io = 1;
	return 0;
}

static int fs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, "/data"))
		return -ENOENT;
	while (access(gate, F_OK) == 0)
		usleep(100000);
	if ((size_t)off >= SIZE)
		return 0;
	if (size > SIZE - (size_t)off)
		size = SIZE - (size_t)off;
	memset(buf, 0, size);
	return (int)size;
}

static int fs_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)buf;
	(void)off;
	(void)fi;
	if (strcmp(path, "/data"))
		return -ENOENT;
	while (access(gate, F_OK) == 0)
		usleep(100000);
	return (int)size;
}

static const struct fuse_operations ops = {
	.write = fs_write,
	.getattr = fs_getattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.read = fs_read,
};

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	gate = argv[1];
	argv[1] = argv[0];
	return fuse_main(argc - 1, argv + 1, &ops, NULL);
}
