/* Sandbox identity: the live reader (sandbox.h sl_sbx_scan). Builds the
 * cgroup path list (sandbox segments only) with the one walker and the
 * process list from /proc, then calls the pure sl_sbx_identify(). */
#include "cgroup/sandbox.h"
#include "cgroup/cgwalk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ssize_t sl_sbx_read_at(int dirfd, const char *name, char *buf, size_t len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t got = 0;
	while (got + 1 < len) {
		ssize_t n = read(fd, buf + got, len - 1 - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			close(fd);
			return e;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = 0;
	return (ssize_t)got;
}

#define read_at sl_sbx_read_at

/* /proc/<pid>/stat: "pid (comm) S ppid ... starttime(22)". comm may hold
 * spaces and ')': the last ')' ends it. */
static int parse_stat(const char *buf, char comm[SL_SBX_COMM_LEN], int32_t *ppid, uint64_t *start)
{
	const char *l = strchr(buf, '('), *r = strrchr(buf, ')');
	if (!l || !r || r < l)
		return -EINVAL;
	size_t n = (size_t)(r - l - 1);
	if (n >= SL_SBX_COMM_LEN)
		n = SL_SBX_COMM_LEN - 1;
	memcpy(comm, l + 1, n);
	comm[n] = 0;
	/* fields from 3 on */
	const char *p = r + 1;
	unsigned long long v = 0;
	for (int f = 3; f <= 22; f++) {
		while (*p == ' ')
			p++;
		if (!*p)
			return -EINVAL;
		if (f == 4 || f == 22) {
			char *e;
			v = strtoull(p, &e, 10);
			if (e == p)
				return -EINVAL;
			if (f == 4)
				*ppid = (int32_t)v;
			else
				*start = v;
		}
		p += strcspn(p, " ");
	}
	return 0;
}

int sl_sbx_read_stat(const char *proc_root, int32_t pid, char comm[SL_SBX_COMM_LEN], int32_t *ppid,
		     uint64_t *start_time)
{
	char p[300], buf[1024];
	snprintf(p, sizeof(p), "%s/%d", proc_root ? proc_root : "/proc", (int)pid);
	int d = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	ssize_t n = read_at(d, "stat", buf, sizeof(buf));
	close(d);
	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	return parse_stat(buf, comm, ppid, start_time);
}

int sl_sbx_start_time_at(int pd, uint64_t *start_time)
{
	char buf[1024], comm[SL_SBX_COMM_LEN];
	int32_t ppid;
	ssize_t n = read_at(pd, "stat", buf, sizeof(buf));
	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	return parse_stat(buf, comm, &ppid, start_time);
}

int sl_sbx_proc_alive(const char *proc_root, int32_t pid, uint64_t start_time)
{
	char comm[SL_SBX_COMM_LEN];
	int32_t ppid;
	uint64_t st;
	return pid > 0 && sl_sbx_read_stat(proc_root, pid, comm, &ppid, &st) == 0 && st == start_time;
}

/* ------------------------------------------------------------ cgroups */

struct cglist {
	char **v;
	size_t n, cap;
	int oom;
};

static int keep_path(const char *rel)
{
	return strstr(rel, "kata") || strstr(rel, "firecracker");
}

static int visit(const struct sl_cgwalk_ent *e, void *arg)
{
	struct cglist *l = arg;
	if (!keep_path(e->rel))
		return SL_CGWALK_DESCEND;
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 16;
		char **nv = realloc(l->v, nc * sizeof(*nv));
		if (!nv) {
			l->oom = 1;
			return SL_CGWALK_STOP;
		}
		l->v = nv;
		l->cap = nc;
	}
	l->v[l->n] = strdup(e->rel);
	if (!l->v[l->n]) {
		l->oom = 1;
		return SL_CGWALK_STOP;
	}
	l->n++;
	return SL_CGWALK_DESCEND;
}

/* ---------------------------------------------------------- processes */

struct plist {
	struct sl_sbx_proc *v;
	size_t n, cap;
	struct sl_sbx_thread **thr; /* owned thread arrays, parallel to v */
};

/* The real uid of a /proc/<pid>/status text ("Uid:\t<real>\t<effective>..."),
 * or SL_SBX_UID_UNKNOWN. */
static uint32_t status_ruid(const char *st)
{
	const char *u = strstr(st, "\nUid:");
	if (!u)
		return SL_SBX_UID_UNKNOWN;
	char *e;
	errno = 0;
	unsigned long v = strtoul(u + 5, &e, 10);
	if (errno || e == u + 5 || v >= SL_SBX_UID_UNKNOWN)
		return SL_SBX_UID_UNKNOWN;
	return (uint32_t)v;
}

/* The namespaces that make the host's root (sandbox.h host_ns): the
 * targets of /proc/1/ns/pid and /proc/1/ns/user ("pid:[4026531836]",
 * "user:[4026531837]": type and nsfs inode, fs/nsfs.c ns_get_name), else,
 * when init's links cannot be read (ptrace access to pid 1 refused, e.g.
 * without CAP_SYS_PTRACE over it), the agent's own (/proc/self): the agent
 * runs in the host's PID namespace (it reads every process) and as the
 * host's root. "" when neither is readable: then no uid-0 process counts
 * as the host's root. */
struct host_ns {
	char pid[64], user[64];
};

static void ns_link(int dirfd, const char *name, char *out, size_t len)
{
	ssize_t n = readlinkat(dirfd, name, out, len - 1);
	out[n > 0 ? (size_t)n : 0] = 0;
}

/* 1 when /proc/<pid> (open at pd) is in the host's PID and user
 * namespaces, 0 when not or when a link cannot be read (reading ns links
 * needs ptrace read access, fs/proc/namespaces.c; root has it). */
static int in_host_ns(int pd, const struct host_ns *h)
{
	char pid[64], user[64];
	if (!h->pid[0] || !h->user[0])
		return 0;
	ns_link(pd, "ns/pid", pid, sizeof(pid));
	ns_link(pd, "ns/user", user, sizeof(user));
	return pid[0] && user[0] && !strcmp(pid, h->pid) && !strcmp(user, h->user);
}

static int read_threads(int pd, struct sl_sbx_thread **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	int td = openat(pd, "task", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (td < 0)
		return 0;
	DIR *d = fdopendir(td);
	if (!d) {
		close(td);
		return 0;
	}
	size_t cap = 0;
	struct dirent *de;
	while ((de = readdir(d)) && *n < 4096) {
		char *e;
		long tid = strtol(de->d_name, &e, 10);
		if (*e || tid <= 0)
			continue;
		char name[64], buf[64];
		snprintf(name, sizeof(name), "%ld/comm", tid);
		ssize_t r = read_at(td, name, buf, sizeof(buf));
		if (r <= 0)
			continue; /* exited */
		buf[strcspn(buf, "\n")] = 0;
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			struct sl_sbx_thread *nv = realloc(*out, nc * sizeof(*nv));
			if (!nv) {
				closedir(d);
				return -ENOMEM;
			}
			*out = nv;
			cap = nc;
		}
		(*out)[*n].tid = (int32_t)tid;
		buf[SL_SBX_COMM_LEN - 1] = 0;
		memcpy((*out)[*n].comm, buf, SL_SBX_COMM_LEN);
		(*n)++;
	}
	closedir(d);
	return 0;
}

static void plist_free(struct plist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->thr[i]);
	free(l->thr);
	free(l->v);
}

static int read_procs(const char *root, struct plist *l)
{
	int rd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rd < 0)
		return -errno;
	DIR *d = fdopendir(rd);
	if (!d) {
		int e = -errno;
		close(rd);
		return e;
	}
	struct dirent *de;
	int rc = 0;
	struct host_ns hns;
	ns_link(rd, "1/ns/pid", hns.pid, sizeof(hns.pid));
	ns_link(rd, "1/ns/user", hns.user, sizeof(hns.user));
	if (!hns.pid[0] || !hns.user[0]) {
		ns_link(rd, "self/ns/pid", hns.pid, sizeof(hns.pid));
		ns_link(rd, "self/ns/user", hns.user, sizeof(hns.user));
	}
	char *cgbuf = malloc(8192);
	if (!cgbuf) {
		closedir(d);
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		char *e;
		long pid = strtol(de->d_name, &e, 10);
		if (*e || pid <= 0)
			continue;
		int pd = openat(rd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (pd < 0)
			continue;
		char sb[1024];
		struct sl_sbx_proc p;
		memset(&p, 0, sizeof(p));
		p.pid = (int32_t)pid;
		if (read_at(pd, "stat", sb, sizeof(sb)) <= 0 ||
		    parse_stat(sb, p.comm, &p.ppid, &p.start_time) ||
		    !sl_sbx_proc_candidate(p.comm)) {
			close(pd);
			continue;
		}
		ssize_t n = read_at(pd, "cmdline", p.cmdline, sizeof(p.cmdline));
		p.cmdline_len = n > 0 ? (size_t)n : 0;
		p.uid = SL_SBX_UID_UNKNOWN;
		if (read_at(pd, "status", cgbuf, 8192) > 0)
			p.uid = status_ruid(cgbuf);
		p.host_ns = in_host_ns(pd, &hns);
		if (read_at(pd, "cgroup", cgbuf, 8192) > 0)
			sl_sbx_cgroup_pick(cgbuf, p.cgroup, sizeof(p.cgroup));
		else
			snprintf(p.cgroup, sizeof(p.cgroup), "/");
		struct sl_sbx_thread *thr = NULL;
		size_t nthr = 0;
		if (read_threads(pd, &thr, &nthr)) {
			close(pd);
			rc = -ENOMEM;
			break;
		}
		close(pd);
		if (l->n == l->cap) {
			size_t nc = l->cap ? l->cap * 2 : 16;
			struct sl_sbx_proc *nv = realloc(l->v, nc * sizeof(*nv));
			struct sl_sbx_thread **nt = nv ? realloc(l->thr, nc * sizeof(*nt)) : NULL;
			if (nv)
				l->v = nv;
			if (!nv || !nt) {
				free(thr);
				rc = -ENOMEM;
				break;
			}
			l->thr = nt;
			l->cap = nc;
		}
		p.threads = thr;
		p.nthreads = nthr;
		l->thr[l->n] = thr;
		l->v[l->n++] = p;
	}
	free(cgbuf);
	closedir(d);
	return rc;
}

int sl_sbx_scan(const struct sl_sbx_scan_opts *o, struct sl_sbx_list *out)
{
	if (!out)
		return -EINVAL;
	out->n = 0;
	out->sbx = NULL;
	struct cglist cg = {0};
	struct plist pl = {0};
	if (o && o->mounts) {
		const char *h[2] = {o->mounts->v2, o->mounts->v1};
		for (int i = 0; i < 2 && !cg.oom; i++)
			if (h[i][0] && (i == 0 || strcmp(h[0], h[1])))
				sl_cgwalk(h[i], NULL, visit, &cg, NULL);
	}
	int rc = cg.oom ? -ENOMEM : read_procs(o && o->proc_root ? o->proc_root : "/proc", &pl);
	if (!rc)
		rc = sl_sbx_identify((const char *const *)cg.v, cg.n, pl.v, pl.n, out);
	for (size_t i = 0; i < cg.n; i++)
		free(cg.v[i]);
	free(cg.v);
	plist_free(&pl);
	return rc;
}
