/* net module: the netns inode -> container map, kept in user space from
 * /proc/<pid>/ns/net of every task (refreshed each tick), and the
 * per-netns /proc files (netstat, snmp, dev) read through a task of the
 * netns (/proc/<pid>/net is the net directory of that task's netns).
 * Poll-loop thread. */
#include "common/log.h"
#include "modules/net_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const struct net_stat_field sl_net_stat_fields[NET_NFIELDS] = {
	{"TcpExt", "ListenOverflows", "netstat"},  {"TcpExt", "ListenDrops", "netstat"},
	{"TcpExt", "TCPRcvCollapsed", "netstat"},  {"TcpExt", "PruneCalled", "netstat"},
	{"TcpExt", "RcvPruned", "netstat"},        {"TcpExt", "OfoPruned", "netstat"},
	{"TcpExt", "TCPBacklogDrop", "netstat"},   {"TcpExt", "TCPRcvQDrop", "netstat"},
	{"TcpExt", "TCPZeroWindowDrop", "netstat"}, {"TcpExt", "TCPOFODrop", "netstat"},
	{"TcpExt", "TCPMemoryPressures", "netstat"}, {"TcpExt", "TCPAbortOnMemory", "netstat"},
	{"TcpExt", "TCPReqQFullDrop", "netstat"},  {"Tcp", "RetransSegs", "snmp"},
	{"Tcp", "OutRsts", "snmp"},                {"Tcp", "InErrs", "snmp"},
	{"Tcp", "EstabResets", "snmp"},            {"Tcp", "AttemptFails", "snmp"},
};

/* A /proc file read whole: non-blocking, regular files only, at most max
 * bytes. Returns a NUL-terminated buffer (free) or NULL. */
static char *read_proc(const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	size_t len = 0, cap = 8192;
	char *buf;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !(buf = malloc(cap))) {
		close(fd);
		return NULL;
	}
	for (;;) {
		if (len + 1 >= cap) {
			char *nb;
			if (cap >= max || !(nb = realloc(buf, cap * 2)))
				break;
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + len, cap - 1 - len);
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = 0;
	return buf;
}

static uint32_t netns_of(int pid)
{
	char p[64], l[64];
	ssize_t n;
	unsigned long v;

	snprintf(p, sizeof(p), "/proc/%d/ns/net", pid);
	n = readlink(p, l, sizeof(l) - 1);
	if (n <= 0)
		return 0;
	l[n] = 0;
	if (sscanf(l, "net:[%lu]", &v) != 1)
		return 0;
	return (uint32_t)v;
}

/* the task's v2 cgroup id and that of the v1 hierarchy of the attribution
 * controller, from /proc/<pid>/cgroup and the cgroup mounts */
static void task_cgroups(struct net_priv *np, int pid, uint64_t *cg2, uint64_t *cg1)
{
	const struct sl_cg_mounts *cm = sl_module_mounts(np->m);
	char p[64], *txt, *line, *save = NULL;

	*cg2 = *cg1 = 0;
	snprintf(p, sizeof(p), "/proc/%d/cgroup", pid);
	if (!cm || !(txt = read_proc(p, 65536)))
		return;
	for (line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, full[PATH_MAX];
		struct stat st;
		if (!c2)
			continue;
		*c1 = 0;
		*c2 = 0;
		const char *ctrls = c1 + 1, *path = c2 + 1;
		if (!strcmp(line, "0") && !*ctrls && cm->v2[0]) {
			snprintf(full, sizeof(full), "%s%s", cm->v2, path);
			if (!stat(full, &st))
				*cg2 = (uint64_t)st.st_ino;
		} else if (cm->v1[0] && cm->v1_controller[0]) {
			size_t cl = strlen(cm->v1_controller);
			const char *f = strstr(ctrls, cm->v1_controller);
			if (f && (f == ctrls || f[-1] == ',') && (f[cl] == 0 || f[cl] == ',')) {
				snprintf(full, sizeof(full), "%s%s", cm->v1, path);
				if (!stat(full, &st))
					*cg1 = (uint64_t)st.st_ino;
			}
		}
	}
	free(txt);
}

static void read_comm(int pid, char *comm, size_t len)
{
	char p[64], *t;

	snprintf(p, sizeof(p), "/proc/%d/comm", pid);
	comm[0] = 0;
	if ((t = read_proc(p, 256))) {
		t[strcspn(t, "\n")] = 0;
		snprintf(comm, len, "%s", t);
		free(t);
	}
}

/* (Re)attribute ent to task pid. */
static void ent_set(struct net_priv *np, struct net_nsent *e, int pid)
{
	uint64_t cg2, cg1;

	task_cgroups(np, pid, &cg2, &cg1);
	memset(&e->task, 0, sizeof(e->task));
	e->task.pid = e->task.tid = (uint32_t)pid;
	e->task.cgroup_id = cg2;
	e->task.cgroup_v1_id = cg1;
	read_comm(pid, e->task.comm, sizeof(e->task.comm));
	memset(&e->at, 0, sizeof(e->at));
	sl_module_resolve_cgroup(np->m, cg2, cg1, &e->at, NULL);
	e->is_ct = e->at.is_container == SL_YES;
	e->pid = pid;
	sl_log(SL_LOG_DEBUG, "net", "netns %u: pid %d (%s) cgroups v2 %llu v1 %llu -> %s %s", e->ino, pid,
	       e->task.comm, (unsigned long long)cg2, (unsigned long long)cg1, e->is_ct ? "container" : "not a container",
	       e->at.container_id);
}

struct net_nsent *net_ns_find(struct net_priv *np, uint32_t ino)
{
	struct net_nsent *e;

	HASH_FIND(hh, np->ns, &ino, sizeof(ino), e);
	return e;
}

int net_ns_read_files(int pid, uint32_t ino, struct net_nsfig *fig, unsigned max_devs)
{
	char p[64], *ns = NULL, *snmp = NULL, *dev = NULL;

	memset(fig, 0, sizeof(*fig));
	fig->netns = ino;
	snprintf(p, sizeof(p), "/proc/%d/net/netstat", pid);
	ns = read_proc(p, 1 << 16);
	snprintf(p, sizeof(p), "/proc/%d/net/snmp", pid);
	snmp = read_proc(p, 1 << 16);
	snprintf(p, sizeof(p), "/proc/%d/net/dev", pid);
	dev = read_proc(p, 1 << 20);
	/* the task may have left the netns meanwhile: the figures must be the netns' */
	if ((!ns && !snmp && !dev) || netns_of(pid) != ino) {
		free(ns);
		free(snmp);
		free(dev);
		return -ESRCH;
	}
	for (unsigned i = 0; i < NET_NFIELDS; i++) {
		const struct net_stat_field *f = &sl_net_stat_fields[i];
		const char *t = !strcmp(f->file, "snmp") ? snmp : ns;
		fig->fset[i] = t && sl_net_proc_field(t, f->section, f->name, &fig->f[i]) == 0;
	}
	if (dev)
		fig->ndev = sl_net_parse_dev(dev, fig->dev, (int)(max_devs < NET_MAX_DEVS ? max_devs : NET_MAX_DEVS));
	fig->have = 1;
	free(ns);
	free(snmp);
	free(dev);
	return 0;
}

/* One pass over /proc: every pid's netns (read when the pid is new, in
 * the next 2 scans, and every NET_NS_RECHECK_SCANS scans), the netns ->
 * task map, and what is gone dropped. */
static void ns_scan(struct net_priv *np)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	struct net_nsent *e, *tmp;
	uint64_t tick = ++np->ns_scans;

	struct net_pident *pe, *pt;
	int recheck = tick % NET_NS_RECHECK_SCANS == 1;

	np->ns_scan_tick = np->tick_no;
	np->ns_scan_ns = sl_mono_ns();
	if (!d)
		return;
	while ((de = readdir(d))) {
		int pid;
		uint32_t ino;
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		if (pid <= 0)
			continue;
		HASH_FIND_INT(np->pids, &pid, pe);
		if (!pe && (pe = calloc(1, sizeof(*pe)))) {
			pe->pid = pid;
			pe->ino = netns_of(pid);
			pe->first_tick = tick;
			HASH_ADD_INT(np->pids, pid, pe);
		} else if (pe && (recheck || tick - pe->first_tick <= 2)) {
			pe->ino = netns_of(pid);
		}
		if (pe)
			pe->seen_tick = tick;
		ino = pe ? pe->ino : netns_of(pid);
		if (!ino || ino == np->host_netns)
			continue;
		e = net_ns_find(np, ino);
		if (!e) {
			if (!(e = calloc(1, sizeof(*e))))
				continue;
			e->ino = ino;
			HASH_ADD(hh, np->ns, ino, sizeof(e->ino), e);
			ent_set(np, e, pid);
		} else if (e->seen_tick != tick && (!e->is_ct || kill(e->pid, 0))) {
			/* not a container's task yet, or gone: try this one
			 * (once per netns and scan) */
			int was_pid = e->pid, was_ct = e->is_ct;
			ent_set(np, e, pid);
			if (e->pid != was_pid || e->is_ct != was_ct)
				np->ns_gen++;
		}
		e->seen_tick = tick;
	}
	closedir(d);
	HASH_ITER(hh, np->pids, pe, pt) {
		if (pe->seen_tick != tick) {
			HASH_DEL(np->pids, pe);
			free(pe);
		}
	}
	HASH_ITER(hh, np->ns, e, tmp) {
		if (e->seen_tick != tick) {
			HASH_DEL(np->ns, e);
			free(e);
			np->ns_gen++;
		}
	}
}

void net_ns_refresh(struct net_priv *np, int read_files, unsigned max_devs)
{
	struct net_nsent *e, *tmp;

	if (!np->ns_scans || np->tick_no - np->ns_scan_tick >= NET_NS_SCAN_TICKS)
		ns_scan(np);
	if (!read_files)
		return;
	HASH_ITER(hh, np->ns, e, tmp) {
		if (e->is_ct && net_ns_read_files(e->pid, e->ino, &e->fig, max_devs))
			e->fig.have = 0;
	}
}

struct net_nsent *net_ns_lookup(struct net_priv *np, uint32_t ino)
{
	struct net_nsent *e = net_ns_find(np, ino);

	if ((!e || kill(e->pid, 0)) && ino && ino != np->host_netns &&
	    sl_mono_ns() - np->ns_scan_ns >= NET_NS_MISS_SCAN_NS) {
		ns_scan(np); /* a netns the last scan did not see, or whose task is gone */
		e = net_ns_find(np, ino);
	}
	return e;
}

void net_ns_free_all(struct net_priv *np)
{
	struct net_nsent *e, *tmp;

	struct net_pident *pe, *pt;

	HASH_ITER(hh, np->ns, e, tmp) {
		HASH_DEL(np->ns, e);
		free(e);
	}
	HASH_ITER(hh, np->pids, pe, pt) {
		HASH_DEL(np->pids, pe);
		free(pe);
	}
}
