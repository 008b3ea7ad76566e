/* Generic cgroup text parsers and the directory readers (see cgstat.h). */
#include "cgroup/cgstat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

bool sl_cgparse_dec(const char **pp, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;

	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	*pp = p;
	return true;
}

int sl_cgparse_u64(const char *text, uint64_t *out)
{
	const char *p = text;
	uint64_t v;
	int rc;

	if (!p)
		return -EINVAL;
	while (is_blank(*p))
		p++;
	if (strncmp(p, "max", 3) == 0) {
		p += 3;
		v = SL_CGSTAT_UNLIMITED;
		rc = 1;
	} else if (sl_cgparse_dec(&p, &v)) {
		rc = 0;
	} else {
		return -EINVAL;
	}
	while (is_blank(*p))
		p++;
	if (*p)
		return -EINVAL;
	*out = v;
	return rc;
}

int sl_cgparse_kv(const char *text, const char *const *keys, size_t n, uint64_t *vals,
		  uint64_t *found)
{
	int bad = 0;
	const char *p = text;

	if (n > 64)
		n = 64;
	if (!p)
		return 0;
	while (*p) {
		const char *eol = strchr(p, '\n');
		const char *end = eol ? eol : p + strlen(p);
		const char *q = p, *key, *kend;
		uint64_t v;
		bool ok = false;

		while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q == end)
			goto next; /* blank line */
		key = q;
		while (q < end && !is_blank(*q))
			q++;
		kend = q;
		if (q < end && (*q == ' ' || *q == '\t')) {
			while (q < end && (*q == ' ' || *q == '\t'))
				q++;
			if (sl_cgparse_dec(&q, &v) && q <= end) {
				while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
					q++;
				ok = q == end;
			}
		}
		if (!ok) {
			bad++;
			goto next;
		}
		for (size_t i = 0; i < n; i++) {
			size_t kl = strlen(keys[i]);
			if (kl == (size_t)(kend - key) && memcmp(key, keys[i], kl) == 0) {
				vals[i] = v;
				*found |= 1ull << i;
			}
		}
next:
		p = eol ? eol + 1 : end;
	}
	return bad;
}

/* ------------------------------------------------------------ files */

#define SLURP_MAX (4u << 20)

/* Read a whole file relative to dfd into a NUL-terminated heap string.
 * Returns NULL (file absent, unreadable, or out of memory). */
static char *slurp_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t cap = 4096, len = 0;
	char *buf;

	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	if (!buf)
		goto fail;
	for (;;) {
		ssize_t r;
		if (len + 1 >= cap) {
			char *nb;
			if (cap >= SLURP_MAX)
				break; /* truncated: the cut line counts as malformed */
			nb = realloc(buf, cap * 2);
			if (!nb)
				goto fail;
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - 1 - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			goto fail; /* e.g. ENODEV: cgroup removed under us */
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

/* A file slot: read `name` from dfd (dfd < 0: absent), count reads. */
static char *get(struct sl_cgstat *st, int dfd, const char *name)
{
	char *s;

	if (dfd < 0)
		return NULL;
	s = slurp_at(dfd, name);
	if (s)
		st->files_read++;
	return s;
}

static int open_dir(const char *dir)
{
	if (!dir || !*dir)
		return -EINVAL;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static void read_psi(struct sl_cgstat *st, int dfd)
{
	static const char *const names[SL_PSI_NRES] = {
		[SL_PSI_CPU] = "cpu.pressure",
		[SL_PSI_MEMORY] = "memory.pressure",
		[SL_PSI_IO] = "io.pressure",
	};
	for (int i = 0; i < SL_PSI_NRES; i++) {
		char *t = get(st, dfd, names[i]);
		st->malformed += (uint32_t)sl_cgparse_psi(t, &st->psi[i]);
		free(t);
	}
}

static void read_pids(struct sl_cgstat *st, int dfd)
{
	char *cur = get(st, dfd, "pids.current");
	char *max = get(st, dfd, "pids.max");
	st->malformed += (uint32_t)sl_cgstat_pids_text(cur, max, &st->pids);
	free(cur);
	free(max);
}

int sl_cgstat_read_v2(const char *dir, struct sl_cgstat *out)
{
	int dfd;

	memset(out, 0, sizeof(*out));
	out->version = 2;
	dfd = open_dir(dir);
	if (dfd < 0)
		return dfd;

	char *cpu = get(out, dfd, "cpu.stat");
	out->malformed += (uint32_t)sl_cgstat_cpu_v2_text(cpu, &out->cpu);
	free(cpu);

	struct sl_cgmem_v2_text m = {
		.current = get(out, dfd, "memory.current"),
		.stat = get(out, dfd, "memory.stat"),
		.peak = get(out, dfd, "memory.peak"),
		.max = get(out, dfd, "memory.max"),
		.swap_current = get(out, dfd, "memory.swap.current"),
		.events = get(out, dfd, "memory.events"),
	};
	out->malformed += (uint32_t)sl_cgstat_mem_v2_text(&m, &out->mem);
	free((char *)m.current);
	free((char *)m.stat);
	free((char *)m.peak);
	free((char *)m.max);
	free((char *)m.swap_current);
	free((char *)m.events);

	read_psi(out, dfd);

	char *io = get(out, dfd, "io.stat");
	out->malformed += (uint32_t)sl_cgstat_io_v2_text(io, &out->io);
	free(io);

	read_pids(out, dfd);

	struct sl_cgspec_v2_text sp = {
		.cpu_max = get(out, dfd, "cpu.max"),
		.cpu_weight = get(out, dfd, "cpu.weight"),
		.memory_min = get(out, dfd, "memory.min"),
		.swap_max = get(out, dfd, "memory.swap.max"),
	};
	out->malformed += (uint32_t)sl_cgstat_spec_v2_text(&sp, &out->spec);
	free((char *)sp.cpu_max);
	free((char *)sp.cpu_weight);
	free((char *)sp.memory_min);
	free((char *)sp.swap_max);
	close(dfd);
	return 0;
}

/* First readable of two names (the _recursive file, then the plain one). */
static char *get_either(struct sl_cgstat *st, int dfd, const char *a, const char *b)
{
	char *s = get(st, dfd, a);
	return s ? s : get(st, dfd, b);
}

int sl_cgstat_read_v1(const struct sl_cgstat_v1_dirs *dirs, long clk_tck, struct sl_cgstat *out)
{
	enum { MEM, CPU, CPUACCT, BLKIO, PIDS, UNIFIED, NDIR };
	int fd[NDIR];
	int given = 0, opened = 0, firsterr = -ENOENT;

	memset(out, 0, sizeof(*out));
	out->version = 1;
	if (!dirs)
		return -EINVAL;
	const char *path[NDIR] = {dirs->memory, dirs->cpu,  dirs->cpuacct,
				  dirs->blkio,  dirs->pids, dirs->unified};
	for (int i = 0; i < NDIR; i++) {
		fd[i] = -1;
		if (!path[i] || !*path[i])
			continue;
		given++;
		fd[i] = open_dir(path[i]);
		if (fd[i] >= 0) {
			opened++;
		} else {
			if (fd[i] != -ENOENT && firsterr == -ENOENT)
				firsterr = fd[i];
			fd[i] = -1;
		}
	}
	if (!given)
		return -EINVAL;
	if (!opened)
		return firsterr;
	if (clk_tck <= 0)
		clk_tck = sysconf(_SC_CLK_TCK);

	struct sl_cgcpu_v1_text c = {
		.cpuacct_usage = get(out, fd[CPUACCT], "cpuacct.usage"),
		.cpuacct_stat = get(out, fd[CPUACCT], "cpuacct.stat"),
		.cpu_stat = get(out, fd[CPU], "cpu.stat"),
	};
	out->malformed += (uint32_t)sl_cgstat_cpu_v1_text(&c, clk_tck, &out->cpu);
	free((char *)c.cpuacct_usage);
	free((char *)c.cpuacct_stat);
	free((char *)c.cpu_stat);

	struct sl_cgmem_v1_text m = {
		.usage_in_bytes = get(out, fd[MEM], "memory.usage_in_bytes"),
		.stat = get(out, fd[MEM], "memory.stat"),
		.max_usage_in_bytes = get(out, fd[MEM], "memory.max_usage_in_bytes"),
		.limit_in_bytes = get(out, fd[MEM], "memory.limit_in_bytes"),
		.oom_control = get(out, fd[MEM], "memory.oom_control"),
	};
	out->malformed += (uint32_t)sl_cgstat_mem_v1_text(&m, &out->mem);
	free((char *)m.usage_in_bytes);
	free((char *)m.stat);
	free((char *)m.max_usage_in_bytes);
	free((char *)m.limit_in_bytes);
	free((char *)m.oom_control);

	char *sb = get_either(out, fd[BLKIO], "blkio.throttle.io_service_bytes_recursive",
			      "blkio.throttle.io_service_bytes");
	char *so = get_either(out, fd[BLKIO], "blkio.throttle.io_serviced_recursive",
			      "blkio.throttle.io_serviced");
	out->malformed += (uint32_t)sl_cgstat_io_v1_text(sb, so, &out->io);
	free(sb);
	free(so);

	read_pids(out, fd[PIDS]);
	read_psi(out, fd[UNIFIED]);

	struct sl_cgspec_v1_text sp = {
		.cfs_quota_us = get(out, fd[CPU], "cpu.cfs_quota_us"),
		.cfs_period_us = get(out, fd[CPU], "cpu.cfs_period_us"),
		.shares = get(out, fd[CPU], "cpu.shares"),
		.soft_limit = get(out, fd[MEM], "memory.soft_limit_in_bytes"),
		.memsw_limit = get(out, fd[MEM], "memory.memsw.limit_in_bytes"),
	};
	out->malformed += (uint32_t)sl_cgstat_spec_v1_text(&sp, &out->spec);
	free((char *)sp.cfs_quota_us);
	free((char *)sp.cfs_period_us);
	free((char *)sp.shares);
	free((char *)sp.soft_limit);
	free((char *)sp.memsw_limit);

	for (int i = 0; i < NDIR; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return 0;
}
