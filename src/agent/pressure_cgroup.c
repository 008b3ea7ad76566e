/* The agent's own cgroup with hard limits (pressure.cgroup): cgroup v2
 * (cpu.max, memory.max) when the unified hierarchy has the cpu and memory
 * controllers, else the v1 cpu and memory hierarchies (hybrid hosts:
 * cpu.cfs_quota_us, memory.limit_in_bytes). See pressure_rt.h. */
#include "agent/pressure_rt.h"
#include "agent/config.h"
#include "cgroup/attr.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CPU_PERIOD_US 100000
#define CPU_QUOTA_MIN_US 1000 /* the kernel's minimum quota */

static unsigned long long quota_us(double cpus)
{
	unsigned long long q = (unsigned long long)(cpus * CPU_PERIOD_US);
	return q < CPU_QUOTA_MIN_US ? CPU_QUOTA_MIN_US : q;
}

struct mounts {
	char v2[256], cpu[256], memory[256];
};

/* Has the comma-separated list opts the item name? */
static int has_opt(const char *opts, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = opts; *p; p += strcspn(p, ","), p += *p == ',')
		if (strcspn(p, ",") == n && !strncmp(p, name, n))
			return 1;
	return 0;
}

/* Cgroup mounts from mountinfo, by the one mount discovery (src/cgroup/mounts.c). */
static int find_mounts(const char *mountinfo, struct mounts *m)
{
	struct sl_cg_mounts cm;
	memset(m, 0, sizeof(*m));
	if (sl_cg_mounts_discover_ex(mountinfo, NULL, NULL, &cm))
		return -1; /* errno from fopen */
	snprintf(m->v2, sizeof(m->v2), "%s", cm.v2);
	snprintf(m->cpu, sizeof(m->cpu), "%s", cm.v1_ctrl[SL_CG_CPU]);
	snprintf(m->memory, sizeof(m->memory), "%s", cm.v1_ctrl[SL_CG_MEMORY]);
	return 0;
}

/* Write s to dir/file (no symlinks followed at the last component). */
static int put(const char *dir, const char *file, const char *s)
{
	char p[700];
	if (snprintf(p, sizeof(p), "%s/%s", dir, file) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	/* O_TRUNC as a shell's "echo >" does (kernfs ignores it) */
	int fd = open(p, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, s, strlen(s));
	int e = n < 0 ? -errno : 0;
	close(fd);
	return e;
}

/* Read at most len-1 bytes of a small file, NUL-terminated. */
static int get(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

/* mkdir -p of mount/name, one component at a time (0755). */
static int make_dirs(const char *mount, const char *name, char *out, size_t len)
{
	if (snprintf(out, len, "%s/%s", mount, name) >= (int)len)
		return -ENAMETOOLONG;
	for (char *p = out + strlen(mount) + 1;; p++) {
		if (*p == '/' || !*p) {
			char c = *p;
			*p = 0;
			if (mkdir(out, 0755) && errno != EEXIST)
				return -errno;
			*p = c;
			if (!c)
				break;
		}
	}
	return 0;
}

/* This process' cgroup in the v2 hierarchy ("0::") or in the v1 hierarchy
 * with controller ctrl, from /proc/self/cgroup. */
static void self_cgroup(const char *ctrl, char *out, size_t len)
{
	char buf[4096];
	out[0] = 0;
	if (get("/proc/self/cgroup", buf, sizeof(buf)))
		return;
	for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = 0;
		if ((!ctrl && c1[1] == 0) || (ctrl && has_opt(c1 + 1, ctrl))) {
			snprintf(out, len, "%s", c2 + 1);
			return;
		}
	}
}

static int fail(struct sl_pressure_cgroup *cg, const char *what, int e)
{
	snprintf(cg->state, sizeof(cg->state), "failed");
	snprintf(cg->error, sizeof(cg->error), "%.180s: %s", what, strerror(-e));
	return -1;
}

int sl_pressure_cgroup_enter(const struct sl_config *cfg, const char *mountinfo, struct sl_pressure_cgroup *cg)
{
	struct mounts m;
	char ctrls[256] = "", v[64], pid[32];
	const char *name = cfg->pressure.cgroup.name;
	uint64_t mem = cfg->pressure.cgroup.memory_limit;
	double cpu = cfg->pressure.cgroup.cpu_limit;
	int e;

	memset(cg, 0, sizeof(*cg));
	snprintf(cg->rel, sizeof(cg->rel), "%s", name);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (find_mounts(mountinfo, &m))
		return fail(cg, "mountinfo", -errno);
	if (m.v2[0]) {
		char p[300];
		snprintf(p, sizeof(p), "%s/cgroup.controllers", m.v2);
		get(p, ctrls, sizeof(ctrls));
		ctrls[strcspn(ctrls, "\n")] = 0;
		for (char *s = ctrls; *s; s++)
			if (*s == ' ')
				*s = ',';
	}
	if (m.v2[0] && has_opt(ctrls, "cpu") && has_opt(ctrls, "memory")) {
		/* v2: every ancestor must delegate cpu and memory to its children */
		char dir[512];
		if ((e = make_dirs(m.v2, name, dir, sizeof(dir))))
			return fail(cg, dir, e);
		char anc[512];
		snprintf(anc, sizeof(anc), "%s", m.v2);
		for (const char *p = name;;) {
			/* EBUSY/EINVAL when already on or not allowed: cpu.max then says */
			put(anc, "cgroup.subtree_control", "+cpu +memory");
			const char *q = strchr(p, '/');
			if (!q)
				break;
			size_t al = strlen(anc);
			snprintf(anc + al, sizeof(anc) - al, "/%.*s", (int)(q - p), p);
			p = q + 1;
		}
		snprintf(cg->dir, sizeof(cg->dir), "%s", dir);
		if (cpu > 0)
			snprintf(v, sizeof(v), "%llu %d", quota_us(cpu), CPU_PERIOD_US);
		else
			snprintf(v, sizeof(v), "max %d", CPU_PERIOD_US);
		if ((e = put(dir, "cpu.max", v)))
			return fail(cg, "cpu.max", e);
		snprintf(v, sizeof(v), mem ? "%llu" : "max", (unsigned long long)mem);
		if ((e = put(dir, "memory.max", v)))
			return fail(cg, "memory.max", e);
		self_cgroup(NULL, cg->cpu_from, sizeof(cg->cpu_from));
		if ((e = put(dir, "cgroup.procs", pid)))
			return fail(cg, "cgroup.procs", e);
		snprintf(cg->state, sizeof(cg->state), "v2");
		return 0;
	}
	if (!m.cpu[0] || !m.memory[0])
		return fail(cg, "no cgroup v2 with cpu+memory and no v1 cpu and memory hierarchies", -ENOENT);
	/* v1 (hybrid hosts) */
	if ((e = make_dirs(m.cpu, name, cg->dir, sizeof(cg->dir))))
		return fail(cg, cg->dir, e);
	if ((e = make_dirs(m.memory, name, cg->mem_dir, sizeof(cg->mem_dir))))
		return fail(cg, cg->mem_dir, e);
	snprintf(v, sizeof(v), "%d", CPU_PERIOD_US);
	if ((e = put(cg->dir, "cpu.cfs_period_us", v)))
		return fail(cg, "cpu.cfs_period_us", e);
	if (cpu > 0)
		snprintf(v, sizeof(v), "%llu", quota_us(cpu));
	else
		snprintf(v, sizeof(v), "-1");
	if ((e = put(cg->dir, "cpu.cfs_quota_us", v)))
		return fail(cg, "cpu.cfs_quota_us", e);
	snprintf(v, sizeof(v), mem ? "%llu" : "-1", (unsigned long long)mem);
	if ((e = put(cg->mem_dir, "memory.limit_in_bytes", v)))
		return fail(cg, "memory.limit_in_bytes", e);
	self_cgroup("cpu", cg->cpu_from, sizeof(cg->cpu_from));
	self_cgroup("memory", cg->mem_from, sizeof(cg->mem_from));
	if ((e = put(cg->dir, "cgroup.procs", pid)))
		return fail(cg, "cpu cgroup.procs", e);
	if ((e = put(cg->mem_dir, "cgroup.procs", pid)))
		return fail(cg, "memory cgroup.procs", e);
	snprintf(cg->state, sizeof(cg->state), "v1");
	return 0;
}

/* Back to mount+from, then remove dir (the mount prefix of dir is the
 * part before "/<name>"; from is relative to the hierarchy's root). */
static void leave_one(const char *dir, const char *name, const char *from, const char *pid)
{
	char mount[512], back[1100];
	size_t dl = strlen(dir), nl = strlen(name);
	if (!dir[0] || dl <= nl + 1)
		return;
	snprintf(mount, sizeof(mount), "%.*s", (int)(dl - nl - 1), dir);
	snprintf(back, sizeof(back), "%s%s", mount, from[0] && strcmp(from, "/") ? from : "");
	if (put(back, "cgroup.procs", pid))
		put(mount, "cgroup.procs", pid);
	/* remove the leaf and any parents it made that are now empty */
	char p[512];
	snprintf(p, sizeof(p), "%s", dir);
	while (strlen(p) > strlen(mount) && rmdir(p) == 0) {
		char *s = strrchr(p, '/');
		if (!s)
			break;
		*s = 0;
	}
}

void sl_pressure_cgroup_leave(struct sl_pressure_cgroup *cg)
{
	char pid[32];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (!strcmp(cg->state, "v2") || !strcmp(cg->state, "v1")) {
		leave_one(cg->dir, cg->rel, cg->cpu_from, pid);
		if (cg->mem_dir[0])
			leave_one(cg->mem_dir, cg->rel, cg->mem_from, pid);
	}
	snprintf(cg->state, sizeof(cg->state), "off");
}
