/* /dev/kmsg records; see kmsg.h. */
#include "common/kmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sl_kmsg {
	int fd;
	int is_dev; /* a character device: one record per read() */
	uint64_t lost;
	char buf[8192];
	size_t have, off; /* fixture file: buffered lines */
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int parse_u64(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	if (s >= end || *s < '0' || *s > '9')
		return -1;
	while (s < end && *s >= '0' && *s <= '9') {
		if (x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s++ - '0');
	}
	*v = x;
	*p = s;
	return 0;
}

int sl_kmsg_parse(const char *buf, size_t len, struct sl_kmsg_rec *r)
{
	const char *p = buf, *end = buf + len, *semi, *nl;
	uint64_t pri;
	size_t o = 0;

	memset(r, 0, sizeof(*r));
	nl = memchr(buf, '\n', len);
	if (nl)
		end = nl;
	semi = memchr(buf, ';', (size_t)(end - buf));
	if (!semi)
		return -EINVAL;
	if (parse_u64(&p, semi, &pri) || p >= semi || *p++ != ',' || parse_u64(&p, semi, &r->seq) ||
	    p >= semi || *p++ != ',' || parse_u64(&p, semi, &r->ts_us) || p >= semi || *p != ',')
		return -EINVAL;
	r->level = (unsigned)(pri & 7);
	r->facility = (unsigned)(pri >> 3);
	for (p = semi + 1; p < end && o + 1 < sizeof(r->msg); p++) {
		int h1, h2;
		if (*p == '\\' && end - p >= 4 && p[1] == 'x' && (h1 = hexval(p[2])) >= 0 &&
		    (h2 = hexval(p[3])) >= 0) {
			r->msg[o++] = (char)(h1 << 4 | h2);
			p += 3;
			continue;
		}
		r->msg[o++] = *p;
	}
	r->msg[o] = 0;
	return 0;
}

struct sl_kmsg *sl_kmsg_open(const char *path, int from_end)
{
	struct sl_kmsg *k = calloc(1, sizeof(*k));
	struct stat st;

	if (!k)
		return NULL;
	k->fd = open(path ? path : "/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (k->fd < 0 || fstat(k->fd, &st)) {
		int e = errno;
		if (k->fd >= 0)
			close(k->fd);
		free(k);
		errno = e;
		return NULL;
	}
	k->is_dev = S_ISCHR(st.st_mode);
	if (!k->is_dev && !S_ISREG(st.st_mode)) {
		close(k->fd);
		free(k);
		errno = EINVAL;
		return NULL;
	}
	if (from_end)
		lseek(k->fd, 0, SEEK_END); /* /dev/kmsg: SEEK_END = after the newest record */
	return k;
}

/* A fixture file: one record a line. */
static int next_line(struct sl_kmsg *k, struct sl_kmsg_rec *r)
{
	for (;;) {
		char *nl = memchr(k->buf + k->off, '\n', k->have - k->off);
		if (nl) {
			size_t n = (size_t)(nl - (k->buf + k->off));
			const char *line = k->buf + k->off;
			k->off += n + 1;
			if (sl_kmsg_parse(line, n, r) == 0)
				return 1;
			continue; /* not a record (a blank or comment line) */
		}
		memmove(k->buf, k->buf + k->off, k->have - k->off);
		k->have -= k->off;
		k->off = 0;
		if (k->have == sizeof(k->buf))
			k->have = 0; /* a line longer than the buffer: dropped */
		ssize_t got = read(k->fd, k->buf + k->have, sizeof(k->buf) - k->have);
		if (got < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		if (got == 0) {
			if (k->have && sl_kmsg_parse(k->buf, k->have, r) == 0) {
				k->have = 0;
				return 1;
			}
			k->have = 0;
			return 0;
		}
		k->have += (size_t)got;
	}
}

int sl_kmsg_next(struct sl_kmsg *k, struct sl_kmsg_rec *r)
{
	if (!k->is_dev)
		return next_line(k, r);
	for (;;) {
		ssize_t got = read(k->fd, k->buf, sizeof(k->buf) - 1);
		if (got < 0) {
			if (errno == EPIPE) { /* overwritten before we read it */
				k->lost++;
				continue;
			}
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -errno;
		}
		if (got == 0)
			return 0;
		if (sl_kmsg_parse(k->buf, (size_t)got, r) == 0)
			return 1;
	}
}

uint64_t sl_kmsg_lost(const struct sl_kmsg *k)
{
	return k->lost;
}

void sl_kmsg_close(struct sl_kmsg *k)
{
	if (!k)
		return;
	close(k->fd);
	free(k);
}
