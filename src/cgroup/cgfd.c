/* The cgroup descriptor cache (see cgfd.h). */
#include "cgroup/cgfd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uthash.h>

#define SLURP_MAX (4u << 20)

struct sl_cgfd_ent {
	char *path; /* key: absolute directory path */
	int dfd;
	uint64_t ino;
	uint64_t pass; /* last pass that used it */
	int ffd[SL_CGFD_NFILES]; /* kept file descriptors, -1 = none */
	UT_hash_handle hh;
};

struct sl_cgfd_cache {
	struct sl_cgfd_ent *map;
	size_t max_fds, nfds;
	uint64_t pass;
	struct sl_cgfd_stats st;
};

size_t sl_cgfd_default_max(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 512))
		return 0;
	rlim_t half = rl.rlim_cur == RLIM_INFINITY ? SL_CGFD_DEFAULT_MAX : rl.rlim_cur / 2;
	return half > SL_CGFD_DEFAULT_MAX ? SL_CGFD_DEFAULT_MAX : (size_t)half;
}

struct sl_cgfd_cache *sl_cgfd_cache_new(size_t max_fds)
{
	struct sl_cgfd_cache *c = calloc(1, sizeof(*c));
	if (c)
		c->max_fds = max_fds;
	return c;
}

static void ent_drop(struct sl_cgfd_cache *c, struct sl_cgfd_ent *e)
{
	HASH_DEL(c->map, e);
	for (int i = 0; i < SL_CGFD_NFILES; i++)
		if (e->ffd[i] >= 0) {
			close(e->ffd[i]);
			c->nfds--;
		}
	close(e->dfd);
	c->nfds--;
	free(e->path);
	free(e);
}

void sl_cgfd_cache_free(struct sl_cgfd_cache *c)
{
	struct sl_cgfd_ent *e, *tmp;
	if (!c)
		return;
	HASH_ITER(hh, c->map, e, tmp)
		ent_drop(c, e);
	free(c);
}

void sl_cgfd_cache_begin_pass(struct sl_cgfd_cache *c)
{
	if (c)
		c->pass++;
}

void sl_cgfd_cache_end_pass(struct sl_cgfd_cache *c)
{
	struct sl_cgfd_ent *e, *tmp;
	if (!c)
		return;
	HASH_ITER(hh, c->map, e, tmp)
		if (e->pass != c->pass) {
			ent_drop(c, e);
			c->st.dropped_unseen++;
		}
}

void sl_cgfd_cache_stats(const struct sl_cgfd_cache *c, struct sl_cgfd_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!c)
		return;
	*out = c->st;
	out->entries = HASH_COUNT(c->map);
	out->fds = c->nfds;
	out->max_fds = c->max_fds;
}

/* Room for one more descriptor: directories may use the whole budget,
 * files half of it. */
static int room(const struct sl_cgfd_cache *c, int is_file)
{
	size_t lim = is_file ? c->max_fds / 2 : c->max_fds;
	return c->nfds < lim;
}

int sl_cgfd_dir_open(struct sl_cgfd_cache *c, const char *path, uint64_t ino,
		     struct sl_cgfd_dir *d)
{
	struct sl_cgfd_ent *e = NULL;

	memset(d, 0, sizeof(*d));
	d->dfd = -1;
	d->c = c;
	if (!path || !*path)
		return -EINVAL;
	if (c) {
		HASH_FIND_STR(c->map, path, e);
		if (e && ino && e->ino != ino) {
			ent_drop(c, e); /* re-created under the same name */
			c->st.dropped_ino++;
			e = NULL;
		}
		if (e) {
			e->pass = c->pass;
			d->e = e;
			d->dfd = e->dfd;
			d->reused = 1;
			c->st.dir_hits++;
			return 0;
		}
	}
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d->dfd = fd;
	if (!c)
		return 0;
	struct stat sb;
	if (!room(c, 0) || fstat(fd, &sb) != 0) {
		c->st.fallbacks++;
		return 0;
	}
	e = calloc(1, sizeof(*e));
	if (e)
		e->path = strdup(path);
	if (!e || !e->path) {
		free(e);
		return 0; /* out of memory: read uncached */
	}
	e->dfd = fd;
	e->ino = (uint64_t)sb.st_ino;
	e->pass = c->pass;
	for (int i = 0; i < SL_CGFD_NFILES; i++)
		e->ffd[i] = -1;
	HASH_ADD_KEYPTR(hh, c->map, e->path, strlen(e->path), e);
	c->nfds++;
	d->e = e;
	return 0;
}

/* Read fd from offset 0 to its end into a NUL-terminated heap string.
 * NULL with *err = errno on a failed read, *err = ENOMEM out of memory. */
static char *slurp_fd(int fd, int *err)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);

	*err = ENOMEM;
	if (!buf)
		return NULL;
	for (;;) {
		if (len + 1 >= cap) {
			char *nb;
			if (cap >= SLURP_MAX)
				break; /* truncated: the cut line counts as malformed */
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
		/* pread at 0 first: a kernfs seq file regenerates its text */
		size_t want = cap - 1 - len;
		ssize_t r = pread(fd, buf + len, want, (off_t)len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			*err = errno; /* e.g. ENODEV: cgroup removed under us */
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		/* A short read is the end: a cgroup file's text is made by one
		 * ->seq_show into a buffer grown until it holds all of it, then
		 * copied out (fs/seq_file.c seq_read_iter; single record:
		 * kernel/cgroup/cgroup.c cgroup_seqfile_start), and a regular
		 * file (fixture trees) is short only at its end. Reading on to
		 * see 0 is one more syscall per file and pass (half of the
		 * collector's reads). */
		if ((size_t)r < want)
			break;
	}
	buf[len] = '\0';
	*err = 0;
	return buf;
}

static int gone_errno(int err)
{
	return err == ENODEV || err == ENOENT;
}

char *sl_cgfd_read(struct sl_cgfd_dir *d, unsigned slot, const char *name)
{
	int err;

	if (d->dfd < 0 || slot >= SL_CGFD_NFILES)
		return NULL;
	d->tried++;
	if (d->e && d->e->ffd[slot] >= 0) {
		char *s = slurp_fd(d->e->ffd[slot], &err);
		if (s) {
			d->nread++;
			d->c->st.file_hits++;
		} else if (gone_errno(err)) {
			d->stale = 1;
		}
		return s;
	}
	int fd = openat(d->dfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENODEV)
			d->stale = 1;
		return NULL;
	}
	struct stat sb;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return NULL;
	}
	char *s = slurp_fd(fd, &err);
	if (!s) {
		if (gone_errno(err))
			d->stale = 1;
		close(fd);
		return NULL;
	}
	d->nread++;
	if (d->e && room(d->c, 1)) {
		d->e->ffd[slot] = fd;
		d->c->nfds++;
	} else {
		if (d->e)
			d->c->st.fallbacks++;
		close(fd);
	}
	return s;
}

int sl_cgfd_dir_close(struct sl_cgfd_dir *d)
{
	int stale = d->stale;

	/* a kept directory of which nothing could be read: removed (and maybe
	 * re-created: kernfs answers ENOENT for files of a removed directory) */
	if (d->reused && d->tried && !d->nread)
		stale = 1;
	if (d->e) {
		if (stale) {
			ent_drop(d->c, d->e);
			d->c->st.dropped_gone++;
		}
	} else if (d->dfd >= 0) {
		close(d->dfd);
	}
	d->e = NULL;
	d->dfd = -1;
	d->stale = stale;
	return stale && d->reused;
}
