/* Generic cgroup text parsers and the directory readers (see cgstat.h). */
#include "cgroup/cgstat.h"
#include "cgroup/cgfd.h"

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

/* File slots of a directory in the descriptor cache (cgfd.h): one name per
 * slot, the same in every hierarchy. */
enum {
	F_CPU_STAT, F_MEM_CURRENT, F_MEM_STAT, F_MEM_PEAK, F_MEM_MAX, F_MEM_SWAP_CURRENT,
	F_MEM_EVENTS, F_CPU_PRESSURE, F_MEM_PRESSURE, F_IO_PRESSURE, F_IO_STAT, F_PIDS_CURRENT,
	F_PIDS_MAX, F_CPU_MAX, F_CPU_WEIGHT, F_MEM_MIN, F_MEM_SWAP_MAX,
	F_CPUACCT_USAGE, F_CPUACCT_STAT, F_MEM_USAGE_IN_BYTES, F_MEM_MAX_USAGE, F_MEM_LIMIT,
	F_MEM_OOM_CONTROL, F_BLKIO_BYTES_REC, F_BLKIO_BYTES, F_BLKIO_OPS_REC, F_BLKIO_OPS,
	F_CFS_QUOTA, F_CFS_PERIOD, F_CPU_SHARES, F_MEM_SOFT_LIMIT, F_MEMSW_LIMIT,
	F_NFILES
};
_Static_assert(F_NFILES <= SL_CGFD_NFILES, "cgfd.h: SL_CGFD_NFILES too small");

static const char *const fname[F_NFILES] = {
	[F_CPU_STAT] = "cpu.stat",
	[F_MEM_CURRENT] = "memory.current",
	[F_MEM_STAT] = "memory.stat",
	[F_MEM_PEAK] = "memory.peak",
	[F_MEM_MAX] = "memory.max",
	[F_MEM_SWAP_CURRENT] = "memory.swap.current",
	[F_MEM_EVENTS] = "memory.events",
	[F_CPU_PRESSURE] = "cpu.pressure",
	[F_MEM_PRESSURE] = "memory.pressure",
	[F_IO_PRESSURE] = "io.pressure",
	[F_IO_STAT] = "io.stat",
	[F_PIDS_CURRENT] = "pids.current",
	[F_PIDS_MAX] = "pids.max",
	[F_CPU_MAX] = "cpu.max",
	[F_CPU_WEIGHT] = "cpu.weight",
	[F_MEM_MIN] = "memory.min",
	[F_MEM_SWAP_MAX] = "memory.swap.max",
	[F_CPUACCT_USAGE] = "cpuacct.usage",
	[F_CPUACCT_STAT] = "cpuacct.stat",
	[F_MEM_USAGE_IN_BYTES] = "memory.usage_in_bytes",
	[F_MEM_MAX_USAGE] = "memory.max_usage_in_bytes",
	[F_MEM_LIMIT] = "memory.limit_in_bytes",
	[F_MEM_OOM_CONTROL] = "memory.oom_control",
	[F_BLKIO_BYTES_REC] = "blkio.throttle.io_service_bytes_recursive",
	[F_BLKIO_BYTES] = "blkio.throttle.io_service_bytes",
	[F_BLKIO_OPS_REC] = "blkio.throttle.io_serviced_recursive",
	[F_BLKIO_OPS] = "blkio.throttle.io_serviced",
	[F_CFS_QUOTA] = "cpu.cfs_quota_us",
	[F_CFS_PERIOD] = "cpu.cfs_period_us",
	[F_CPU_SHARES] = "cpu.shares",
	[F_MEM_SOFT_LIMIT] = "memory.soft_limit_in_bytes",
	[F_MEMSW_LIMIT] = "memory.memsw.limit_in_bytes",
};

/* A file slot: read file f of directory d (absent directory: NULL), count
 * reads. */
static char *get(struct sl_cgstat *st, struct sl_cgfd_dir *d, unsigned f)
{
	char *s = sl_cgfd_read(d, f, fname[f]);
	if (s)
		st->files_read++;
	return s;
}

static void read_psi(struct sl_cgstat *st, struct sl_cgfd_dir *d)
{
	static const unsigned slot[SL_PSI_NRES] = {
		[SL_PSI_CPU] = F_CPU_PRESSURE,
		[SL_PSI_MEMORY] = F_MEM_PRESSURE,
		[SL_PSI_IO] = F_IO_PRESSURE,
	};
	for (int i = 0; i < SL_PSI_NRES; i++) {
		char *t = get(st, d, slot[i]);
		st->malformed += (uint32_t)sl_cgparse_psi(t, &st->psi[i]);
		free(t);
	}
}

static void read_pids(struct sl_cgstat *st, struct sl_cgfd_dir *d)
{
	char *cur = get(st, d, F_PIDS_CURRENT);
	char *max = get(st, d, F_PIDS_MAX);
	st->malformed += (uint32_t)sl_cgstat_pids_text(cur, max, &st->pids);
	free(cur);
	free(max);
}

/* One read of a v2 directory; returns 1 when a kept descriptor went stale
 * (read again), with *rc set. */
static int read_v2_once(struct sl_cgfd_cache *cache, const char *dir, uint64_t ino,
			struct sl_cgstat *out, int *rc)
{
	struct sl_cgfd_dir dd, *d = &dd;

	memset(out, 0, sizeof(*out));
	out->version = 2;
	*rc = sl_cgfd_dir_open(cache, dir, ino, d);
	if (*rc < 0)
		return 0;

	char *cpu = get(out, d, F_CPU_STAT);
	out->malformed += (uint32_t)sl_cgstat_cpu_v2_text(cpu, &out->cpu);
	free(cpu);

	struct sl_cgmem_v2_text m = {
		.current = get(out, d, F_MEM_CURRENT),
		.stat = get(out, d, F_MEM_STAT),
		.peak = get(out, d, F_MEM_PEAK),
		.max = get(out, d, F_MEM_MAX),
		.swap_current = get(out, d, F_MEM_SWAP_CURRENT),
		.events = get(out, d, F_MEM_EVENTS),
	};
	out->malformed += (uint32_t)sl_cgstat_mem_v2_text(&m, &out->mem);
	free((char *)m.current);
	free((char *)m.stat);
	free((char *)m.peak);
	free((char *)m.max);
	free((char *)m.swap_current);
	free((char *)m.events);

	read_psi(out, d);

	char *io = get(out, d, F_IO_STAT);
	out->malformed += (uint32_t)sl_cgstat_io_v2_text(io, &out->io);
	free(io);

	read_pids(out, d);

	struct sl_cgspec_v2_text sp = {
		.cpu_max = get(out, d, F_CPU_MAX),
		.cpu_weight = get(out, d, F_CPU_WEIGHT),
		.memory_min = get(out, d, F_MEM_MIN),
		.swap_max = get(out, d, F_MEM_SWAP_MAX),
	};
	out->malformed += (uint32_t)sl_cgstat_spec_v2_text(&sp, &out->spec);
	free((char *)sp.cpu_max);
	free((char *)sp.cpu_weight);
	free((char *)sp.memory_min);
	free((char *)sp.swap_max);
	return sl_cgfd_dir_close(d);
}

int sl_cgstat_read_v2_cached(struct sl_cgfd_cache *cache, const char *dir, uint64_t ino,
			     struct sl_cgstat *out)
{
	int rc;
	if (read_v2_once(cache, dir, ino, out, &rc))
		read_v2_once(cache, dir, ino, out, &rc); /* the kept one was a removed cgroup */
	return rc;
}

int sl_cgstat_read_v2(const char *dir, struct sl_cgstat *out)
{
	return sl_cgstat_read_v2_cached(NULL, dir, 0, out);
}

/* First readable of two slots (the _recursive file, then the plain one). */
static char *get_either(struct sl_cgstat *st, struct sl_cgfd_dir *d, unsigned a, unsigned b)
{
	char *s = get(st, d, a);
	return s ? s : get(st, d, b);
}

enum { MEM, CPU, CPUACCT, BLKIO, PIDS, UNIFIED, NDIR };

static int read_v1_once(struct sl_cgfd_cache *cache, const struct sl_cgstat_v1_dirs *dirs,
			uint64_t ino_memory, uint64_t ino_unified, long clk_tck,
			struct sl_cgstat *out, int *rc)
{
	struct sl_cgfd_dir dd[NDIR], *d[NDIR];
	int given = 0, opened = 0, firsterr = -ENOENT, stale = 0;

	memset(out, 0, sizeof(*out));
	out->version = 1;
	*rc = -EINVAL;
	if (!dirs)
		return 0;
	const char *path[NDIR] = {dirs->memory, dirs->cpu,  dirs->cpuacct,
				  dirs->blkio,  dirs->pids, dirs->unified};
	const uint64_t ino[NDIR] = {[MEM] = ino_memory, [UNIFIED] = ino_unified};
	for (int i = 0; i < NDIR; i++) {
		d[i] = &dd[i];
		sl_cgfd_dir_open(NULL, NULL, 0, &dd[i]); /* absent: reads nothing */
		if (!path[i] || !*path[i])
			continue;
		given++;
		for (int j = 0; j < i; j++)
			if (path[j] && !strcmp(path[j], path[i]))
				d[i] = d[j]; /* co-mounted (cpu,cpuacct): one directory */
		if (d[i] != &dd[i]) {
			opened += d[i]->dfd >= 0;
			continue;
		}
		int r = sl_cgfd_dir_open(cache, path[i], ino[i], &dd[i]);
		if (r == 0)
			opened++;
		else if (r != -ENOENT && firsterr == -ENOENT)
			firsterr = r;
	}
	if (!given)
		return 0;
	if (!opened) {
		*rc = firsterr;
		return 0;
	}
	*rc = 0;
	if (clk_tck <= 0)
		clk_tck = sysconf(_SC_CLK_TCK);

	struct sl_cgcpu_v1_text c = {
		.cpuacct_usage = get(out, d[CPUACCT], F_CPUACCT_USAGE),
		.cpuacct_stat = get(out, d[CPUACCT], F_CPUACCT_STAT),
		.cpu_stat = get(out, d[CPU], F_CPU_STAT),
	};
	out->malformed += (uint32_t)sl_cgstat_cpu_v1_text(&c, clk_tck, &out->cpu);
	free((char *)c.cpuacct_usage);
	free((char *)c.cpuacct_stat);
	free((char *)c.cpu_stat);

	struct sl_cgmem_v1_text m = {
		.usage_in_bytes = get(out, d[MEM], F_MEM_USAGE_IN_BYTES),
		.stat = get(out, d[MEM], F_MEM_STAT),
		.max_usage_in_bytes = get(out, d[MEM], F_MEM_MAX_USAGE),
		.limit_in_bytes = get(out, d[MEM], F_MEM_LIMIT),
		.oom_control = get(out, d[MEM], F_MEM_OOM_CONTROL),
	};
	out->malformed += (uint32_t)sl_cgstat_mem_v1_text(&m, &out->mem);
	free((char *)m.usage_in_bytes);
	free((char *)m.stat);
	free((char *)m.max_usage_in_bytes);
	free((char *)m.limit_in_bytes);
	free((char *)m.oom_control);

	char *sb = get_either(out, d[BLKIO], F_BLKIO_BYTES_REC, F_BLKIO_BYTES);
	char *so = get_either(out, d[BLKIO], F_BLKIO_OPS_REC, F_BLKIO_OPS);
	out->malformed += (uint32_t)sl_cgstat_io_v1_text(sb, so, &out->io);
	free(sb);
	free(so);

	read_pids(out, d[PIDS]);
	read_psi(out, d[UNIFIED]);

	struct sl_cgspec_v1_text sp = {
		.cfs_quota_us = get(out, d[CPU], F_CFS_QUOTA),
		.cfs_period_us = get(out, d[CPU], F_CFS_PERIOD),
		.shares = get(out, d[CPU], F_CPU_SHARES),
		.soft_limit = get(out, d[MEM], F_MEM_SOFT_LIMIT),
		.memsw_limit = get(out, d[MEM], F_MEMSW_LIMIT),
	};
	out->malformed += (uint32_t)sl_cgstat_spec_v1_text(&sp, &out->spec);
	free((char *)sp.cfs_quota_us);
	free((char *)sp.cfs_period_us);
	free((char *)sp.shares);
	free((char *)sp.soft_limit);
	free((char *)sp.memsw_limit);

	for (int i = 0; i < NDIR; i++)
		if (d[i] == &dd[i] && sl_cgfd_dir_close(&dd[i]))
			stale = 1;
	return stale;
}

int sl_cgstat_read_v1_cached(struct sl_cgfd_cache *cache, const struct sl_cgstat_v1_dirs *dirs,
			     uint64_t ino_memory, uint64_t ino_unified, long clk_tck,
			     struct sl_cgstat *out)
{
	int rc;
	if (read_v1_once(cache, dirs, ino_memory, ino_unified, clk_tck, out, &rc))
		read_v1_once(cache, dirs, ino_memory, ino_unified, clk_tck, out, &rc);
	return rc;
}

int sl_cgstat_read_v1(const struct sl_cgstat_v1_dirs *dirs, long clk_tck, struct sl_cgstat *out)
{
	return sl_cgstat_read_v1_cached(NULL, dirs, 0, 0, clk_tck, out);
}
