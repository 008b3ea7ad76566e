/* The one cgroup-tree walker: iterative depth-first, openat + fdopendir
 * with O_NOFOLLOW | O_DIRECTORY, bounded in depth, directories and path
 * length (cgwalk.h). */
#include "cgroup/cgwalk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

/* Filesystems whose directories count their subdirectories in st_nlink (2
 * + subdirectories): kernfs (cgroup v1 and v2: kernfs_refresh_inode sets
 * nlink from kn->dir.subdirs), tmpfs and ext2/3/4 (fixture trees). */
static int nlink_counts_subdirs(int fd)
{
	struct statfs fs;
	if (fstatfs(fd, &fs) != 0)
		return 0;
	switch ((unsigned long)fs.f_type) {
	case 0x27e0ebUL:     /* CGROUP_SUPER_MAGIC */
	case 0x63677270UL:   /* CGROUP2_SUPER_MAGIC */
	case 0x01021994UL:   /* TMPFS_MAGIC */
	case 0xEF53UL:       /* EXT2/3/4_SUPER_MAGIC */
		return 1;
	default:
		return 0;
	}
}

struct frame {
	DIR *d;
	size_t len; /* length of this directory's path in the buffer */
	dev_t dev;
	ino_t ino;
	unsigned char *ctx;
	int visited; /* fn was called for it: its ctx is its children's parent */
};

uint64_t sl_cgwalk_cut(const struct sl_cgwalk_stats *st)
{
	return st ? st->depth_cut + st->dirs_cut + st->path_cut : 0;
}

/* Entry type without following it: DT_DIR, DT_LNK or other (DT_UNKNOWN
 * resolved with fstatat). */
static int entry_type(DIR *d, const struct dirent *de)
{
	if (de->d_type != DT_UNKNOWN)
		return de->d_type;
	struct stat sb;
	if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
		return DT_UNKNOWN;
	return S_ISDIR(sb.st_mode) ? DT_DIR : S_ISLNK(sb.st_mode) ? DT_LNK : DT_REG;
}

static int is_ancestor(const struct frame *fr, int top, dev_t dev, ino_t ino)
{
	for (int i = 0; i <= top; i++)
		if (fr[i].dev == dev && fr[i].ino == ino)
			return 1;
	return 0;
}

int sl_cgwalk(const char *root, const struct sl_cgwalk_opts *o, sl_cgwalk_fn fn, void *arg,
	      struct sl_cgwalk_stats *stp)
{
	static const struct sl_cgwalk_opts defaults;
	struct sl_cgwalk_stats st = {0};
	int rc = 0;

	if (!root || !fn)
		return -EINVAL;
	if (!o)
		o = &defaults;
	int max_depth = o->max_depth > 0 && o->max_depth < SL_CGWALK_MAX_DEPTH ? o->max_depth
									   : SL_CGWALK_MAX_DEPTH;
	uint64_t max_dirs = o->max_dirs ? o->max_dirs : SL_CGWALK_MAX_DIRS;
	size_t rootlen = strlen(root);
	while (rootlen > 1 && root[rootlen - 1] == '/')
		rootlen--;
	if (rootlen >= SL_CGWALK_PATH_MAX)
		return -ENAMETOOLONG;

	char *buf = malloc(SL_CGWALK_PATH_MAX);
	struct frame *fr = calloc((size_t)max_depth + 1, sizeof(*fr));
	unsigned char *ctx = o->ctx_size ? calloc((size_t)max_depth + 1, o->ctx_size) : NULL;
	if (!buf || !fr || (o->ctx_size && !ctx)) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(buf, root, rootlen);
	buf[rootlen] = '\0';

	int fd = open(buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) != 0) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		goto out;
	}
	fr[0] = (struct frame){.len = rootlen, .dev = sb.st_dev, .ino = sb.st_ino, .ctx = ctx};
	int leaf_ok = nlink_counts_subdirs(fd);
	if (o->visit_root) {
		struct sl_cgwalk_ent e = {buf, buf + rootlen, "", 0, (uint64_t)sb.st_ino, fd, NULL, ctx};
		st.dirs++;
		fr[0].visited = 1;
		int r = fn(&e, arg);
		if (r != SL_CGWALK_DESCEND) {
			st.stopped = r == SL_CGWALK_STOP;
			close(fd);
			goto out;
		}
	}
	if (!(fr[0].d = fdopendir(fd))) {
		st.unreadable++;
		close(fd);
		goto out;
	}

	int top = 0;
	while (top >= 0) {
		struct frame *f = &fr[top];
		errno = 0;
		struct dirent *de = readdir(f->d);
		if (!de) {
			if (errno)
				st.unreadable++;
			closedir(f->d);
			f->d = NULL;
			top--;
			continue;
		}
		const char *name = de->d_name;
		if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
			continue;
		int type = entry_type(f->d, de);
		if (type == DT_LNK) {
			st.symlinks++;
			continue;
		}
		if (type != DT_DIR)
			continue;
		int depth = top + 1;
		size_t nl = strlen(name);
		if (f->len + 1 + nl >= SL_CGWALK_PATH_MAX) {
			st.path_cut++;
			continue;
		}
		if (depth > max_depth) {
			st.depth_cut++;
			continue;
		}
		if (st.dirs >= max_dirs) {
			st.dirs_cut = 1;
			break;
		}
		int cfd = openat(dirfd(f->d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0) {
			if (errno == ELOOP)
				st.symlinks++; /* replaced by a link since readdir */
			else if (errno != ENOTDIR && errno != ENOENT)
				st.unreadable++;
			continue;
		}
		if (fstat(cfd, &sb) != 0) {
			st.unreadable++;
			close(cfd);
			continue;
		}
		if (o->same_dev && sb.st_dev != fr[0].dev) {
			st.other_dev++;
			close(cfd);
			continue;
		}
		if (is_ancestor(fr, top, sb.st_dev, sb.st_ino)) {
			st.loops++;
			close(cfd);
			continue;
		}
		buf[f->len] = '/';
		memcpy(buf + f->len + 1, name, nl + 1);
		unsigned char *c = ctx ? ctx + (size_t)depth * o->ctx_size : NULL;
		if (c)
			memset(c, 0, o->ctx_size);
		struct sl_cgwalk_ent e = {
			.abs = buf,
			.rel = buf + rootlen,
			.name = buf + f->len + 1,
			.depth = depth,
			.ino = (uint64_t)sb.st_ino,
			.fd = cfd,
			.parent = f->visited ? f->ctx : NULL,
			.ctx = c,
		};
		st.dirs++;
		int r = fn(&e, arg);
		if (r == SL_CGWALK_STOP) {
			st.stopped = 1;
			close(cfd);
			break;
		}
		if (r == SL_CGWALK_DESCEND && leaf_ok && sb.st_nlink == 2 && sb.st_dev == fr[0].dev) {
			st.leaves++; /* no subdirectory: nothing to list (find(1)'s leaf rule) */
			close(cfd);
			continue;
		}
		DIR *d = r == SL_CGWALK_DESCEND ? fdopendir(cfd) : NULL;
		if (!d) {
			if (r == SL_CGWALK_DESCEND)
				st.unreadable++;
			close(cfd);
			continue;
		}
		fr[++top] = (struct frame){d, f->len + 1 + nl, sb.st_dev, sb.st_ino, c, 1};
	}
	for (; top >= 0; top--)
		if (fr[top].d)
			closedir(fr[top].d);
out:
	if (stp)
		*stp = st;
	free(buf);
	free(fr);
	free(ctx);
	return rc;
}
