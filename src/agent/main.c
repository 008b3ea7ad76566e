/* sandlensd: the node agent. Loads config, mounts tracefs when absent,
 * discovers cgroup mounts, opens the store, starts every enabled module,
 * the API, and runs the one poll loop until SIGINT/SIGTERM; SIGHUP re-reads
 * the configuration (reload.c). Tells a service manager (sd_notify) when it
 * is ready, reloading and stopping. */
#include "common/version.h"
#include "agent/agent.h"
#include "store/sqlite_private.h"
#include "auto/auto.h"
#include "agent/container_events.h"
#include "agent/pressure_rt.h"
#include "agent/probe.h"
#include "agent/sdnotify.h"
#include "agent/read.h"
#include "agent/series_hist.h"
#include "api/api.h"
#include "api/api_auth.h"
#include "cgroup/cgfd.h"
#include "cgroup/k8s_names.h"
#include "cgroup/runc_state.h"
#include "common/dir_trust.h"
#include "common/log.h"
#include "common/nofile.h"
#include "common/path_resolve.h"
#include "common/timefmt.h"
#include "store/store.h"
#include "stats/stats.h"
#include "stats/guest.h"
#include "task/task_agent.h"
#include "cprof/cprof_agent.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MOD "agent"

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[1024];
	if (level == LIBBPF_DEBUG && sl_log_get_level() < SL_LOG_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	buf[strcspn(buf, "\n")] = 0;
	sl_log(level == LIBBPF_WARN ? SL_LOG_WARN : SL_LOG_DEBUG, "libbpf", "%s", buf);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: sandlensd [--config PATH] [--check-config] [--version]\n"
		   "  --config PATH   YAML configuration (docs/CONFIG.md); default: built-in defaults\n"
		   "  --check-config  validate the configuration and exit (0 ok, 2 invalid)\n");
}

/* Mount tracefs at path when it is not there (tracepoint attach by name
 * needs it for tp/ programs). */
static void ensure_tracefs(const char *path)
{
	char ev[300];
	/* AT_EACCESS: with the effective ids and capabilities (a non-root
	 * agent reads the root-only tracefs through CAP_DAC_READ_SEARCH;
	 * plain access() would use the real uid without capabilities) */
	if (snprintf(ev, sizeof(ev), "%s/events", path) >= (int)sizeof(ev) ||
	    faccessat(AT_FDCWD, ev, F_OK, AT_EACCESS) == 0)
		return;
	mkdir(path, 0700);
	if (mount("nodev", path, "tracefs", 0, NULL))
		sl_warn(MOD, "tracefs not mounted at %s and mount failed: %s", path, strerror(errno));
	else
		sl_info(MOD, "mounted tracefs at %s", path);
}

/* mkdir -p of the directory part of path (0700 for what it creates). */
static void mkdir_parent(const char *path)
{
	char buf[600];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0700);
		*p = '/';
	}
}

/* Exclusive flock(2) on <file>.lock, held for the agent's life (released
 * by the kernel at exit). what names the file for messages ("store",
 * "tasks store"). Returns the fd, or -1 with a message when another
 * process holds it or the lock file cannot be created. */
static int file_lock(const char *what, const char *file, const char *key, char *err, size_t errlen)
{
	char path[PATH_MAX + 8];
	int fd;

	char real[PATH_MAX];
	/* before anything is created: not through another user's symlink, not
	 * in (or under) a directory others can write */
	const char *dwhy = sl_store_dir_refusal(file);
	if (dwhy) {
		snprintf(err, errlen, "%s %.200s: refusing its directory: it %s", key, file, dwhy);
		return -1;
	}
	mkdir_parent(file);
	if (!sl_path_resolve(file, real, sizeof(real))) {
		snprintf(err, errlen, "%s: cannot resolve %.200s: %s", key, file, strerror(errno));
		return -1;
	}
	/* the lock is named after the resolved file: a symlink (to the file or
	 * a directory on its path) reaches the same lock */
	if (snprintf(path, sizeof(path), "%s.lock", real) >= (int)sizeof(path)) {
		snprintf(err, errlen, "%s: path too long for its lock file", key);
		return -1;
	}
	/* never through a planted symlink; only a regular file of ours */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "%s lock %.200s: %s", what, path,
			 errno == ELOOP ? "is a symbolic link" : strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s lock %.200s: not a regular file owned by this user", what, path);
		close(fd);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		snprintf(err, errlen,
			 "%s %.200s is in use by another sandlensd (lock %.200s held); one agent per file (%s)",
			 what, file, path, key);
		close(fd);
		return -1;
	}
	return fd;
}

static void set_clock_offset(struct sl_agent *a)
{
	struct timespec r, m1, m2;
	clock_gettime(CLOCK_MONOTONIC, &m1);
	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m2);
	int64_t mono = ((int64_t)m1.tv_sec * 1000000000 + m1.tv_nsec + (int64_t)m2.tv_sec * 1000000000 +
			m2.tv_nsec) / 2;
	a->mono_to_real_ns = (int64_t)r.tv_sec * 1000000000 + r.tv_nsec - mono;
	a->start_mono_ns = (uint64_t)mono;
}

static void setup_cgroups(struct sl_agent *a)
{
	const char *ctrl = a->cfg.attribution.v1_controller;
	char enumerator[64];
	long v;

	a->v1_subsys_id = -1;
	if (sl_cg_mounts_discover("/proc/self/mountinfo", ctrl, &a->mounts))
		sl_warn(MOD, "cannot read /proc/self/mountinfo: cgroup mounts unknown");
	if (a->mounts.v1[0]) {
		/* the v1 "blkio" controller is io_cgrp_id in the kernel */
		snprintf(enumerator, sizeof(enumerator), "%s_cgrp_id", strcmp(ctrl, "blkio") ? ctrl : "io");
		if (sl_btf_enum_value("cgroup_subsys_id", enumerator, &v) == 0)
			a->v1_subsys_id = (int)v;
		else
			sl_warn(MOD, "controller %s not found in kernel BTF; v1 identity off", ctrl);
	}
	sl_info(MOD, "cgroup v2 at %s (root id %llu); v1 %s at %s (hierarchy %d)",
		a->mounts.v2[0] ? a->mounts.v2 : "(none)", (unsigned long long)a->mounts.v2_root_id, ctrl,
		a->mounts.v1[0] ? a->mounts.v1 : "(none)", a->mounts.v1_hierarchy_id);
	/* the one runc index: pipeline, statistics collector and task targets */
	/* every runtime-state path under attribution.host_root (docs/CONFIG.md) */
	char runc_root[sizeof(a->cfg.attribution.runc_root)];
	struct sl_k8s_roots roots; /* copied by the cache */
	sl_host_path(runc_root, sizeof(runc_root), a->cfg.attribution.host_root, a->cfg.attribution.runc_root);
	sl_k8s_roots_prefixed(&roots, a->cfg.attribution.host_root);
	a->runc = sl_runc_index_new(runc_root);
	if (a->cfg.attribution.enabled) {
		struct sl_attr_cache_config cc = {
			.capacity = a->cfg.attribution.cache_size,
			.positive_ttl_ns = a->cfg.attribution.positive_ttl_s * 1000000000ull,
			.negative_ttl_ns = a->cfg.attribution.negative_ttl_s * 1000000000ull,
			.rewalk_interval_ns = 1000000000ull,
			.names = 1, /* Kubernetes names from the runtimes' state */
			.runc = a->runc,
			.roots = &roots,
		};
		a->attr = sl_attr_cache_new(&cc, &a->mounts);
		if (!a->attr)
			sl_warn(MOD, "attribution cache could not be created; events carry cgroup ids only");
	} else {
		sl_info(MOD, "attribution off: events carry cgroup ids only");
	}
}

/* Init every enabled module of the registry, in its order, and register
 * the ring buffers each one set. Returns how many run. */
static int start_modules(struct sl_agent *a)
{
	int running = 0;
	for (int i = 0; i < a->nmodules; i++) {
		struct sl_module *m = &a->modules[i];
		if (!m->enabled) {
			sl_info(m->ops->name, "disabled by configuration");
			continue;
		}
		m->state = m->ops->init(m);
		if (!m->state)
			m->state = sl_agent_add_module_ringbufs(a, m);
		if (m->state) {
			if (!m->error[0])
				snprintf(m->error, sizeof(m->error), "%s", strerror(-m->state));
			sl_err(m->ops->name, "module failed: %s", m->error);
			continue;
		}
		sl_info(m->ops->name, "running (%d hooks)", m->nhooks);
		running++;
	}
	return running;
}

static void publish_attr_stats(struct sl_agent *a)
{
	struct sl_attr_cache_stats cs;
	if (!a->attr)
		return;
	sl_attr_cache_get_stats(a->attr, &cs);
	atomic_store(&a->attr_entries, cs.entries);
	atomic_store(&a->attr_hits, cs.hits);
	atomic_store(&a->attr_misses, cs.misses);
	atomic_store(&a->attr_evictions, cs.evictions);
	atomic_store(&a->attr_rmdir_drops, cs.rmdir_drops);
}

/* Modules whose tick is metric collection (a snapshot of kernel counters
 * that keep counting in between; ops->tick_is_metrics): pressure step 1
 * runs it every n-th tick. Other ticks (bucket sweeps, drop accounting)
 * always run. */
static int is_metric_tick(const struct sl_module *m)
{
	return m->ops->tick_is_metrics;
}

/* One reading of every running module's series into the history that
 * GET /api/v1/series/history serves (series_hist.h). */
static void sample_series(struct sl_agent *a)
{
	static struct sl_series_point *pts;
	if (!a->series_hist)
		return;
	if (!pts && !(pts = calloc(SL_READ_SERIES_MAX, sizeof(*pts))))
		return;
	for (int i = 0; i < a->nmodules; i++) {
		struct sl_module *m = &a->modules[i];
		if (!m->enabled || m->state || !m->ops->read_series)
			continue;
		for (unsigned k = 0; k < m->ops->nseries && k < SL_SERIES_HIST_SERIES; k++) {
			int n = m->ops->read_series(m, k, pts, SL_READ_SERIES_MAX);
			if (n > 0)
				sl_series_hist_add(a->series_hist, (unsigned)i, k, pts,
						   (size_t)n < SL_READ_SERIES_MAX ? (size_t)n : SL_READ_SERIES_MAX);
		}
	}
}

static void tick(struct sl_agent *a)
{
	static uint64_t tick_no;
	uint64_t now = sl_mono_ns();
	sl_pressure_rt_tick(a->pressure, now);
	unsigned div = sl_pressure_rt_tick_divisor(a->pressure);
	tick_no++;
	for (int i = 0; i < a->nmodules; i++) {
		struct sl_module *m = &a->modules[i];
		if (m->enabled && !m->state && m->ops->tick && (!is_metric_tick(m) || div <= 1 || tick_no % div == 0))
			m->ops->tick(m, now);
	}
	publish_attr_stats(a);
	sample_series(a);
	sl_agent_flight_tick(a, now);
}

/* SIGHUP: reload config_path, bracketed for a service manager by
 * RELOADING=1 (with MONOTONIC_USEC) and READY=1 (sd_notify(3)). */
static void reload(struct sl_agent *a, const char *config_path)
{
	sl_sd_notify_reloading();
	sl_agent_reload(a, config_path);
	sl_sd_notify("READY=1\nSTATUS=running");
}

/* The poll loop: ring buffers, the tick timer and the signals in one epoll.
 * The ring buffers are also read when rb_wait ms passed without a wake-up
 * (records committed with BPF_RB_NO_WAKEUP): SL_RB_POLL_MS after a read
 * that found records, doubled after each that found none, up to
 * SL_RB_POLL_MAX_MS (src/agent/module.h). */
static int poll_loop(struct sl_agent *a, const char *config_path)
{
	int ep = epoll_create1(EPOLL_CLOEXEC), tfd, sfd;
	struct epoll_event ev = {.events = EPOLLIN};
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (ep < 0 || sfd < 0 || tfd < 0) {
		sl_err(MOD, "poll loop setup: %s", strerror(errno));
		return -1;
	}
	struct itimerspec its = {
		.it_interval = {.tv_sec = a->cfg.tick_ms / 1000, .tv_nsec = (a->cfg.tick_ms % 1000) * 1000000},
		.it_value = {.tv_sec = a->cfg.tick_ms / 1000, .tv_nsec = (a->cfg.tick_ms % 1000) * 1000000},
	};
	timerfd_settime(tfd, 0, &its, NULL);
	ev.data.u32 = 1;
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
	ev.data.u32 = 2;
	epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
	if (a->rb) {
		ev.data.u32 = 3;
		epoll_ctl(ep, EPOLL_CTL_ADD, ring_buffer__epoll_fd(a->rb), &ev);
	}
	atomic_store(&a->running, 1);
	uint64_t rb_read = sl_mono_ns(); /* when the rings were last read */
	int rb_wait = SL_RB_POLL_MS;     /* ms between timed reads */
	while (atomic_load(&a->running)) {
		struct epoll_event evs[4];
		int n = epoll_wait(ep, evs, 4, a->rb ? rb_wait : -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			sl_err(MOD, "epoll_wait: %s", strerror(errno));
			break;
		}
		if (a->rb && sl_mono_ns() - rb_read >= (uint64_t)rb_wait * 1000000) {
			/* not woken for rb_wait: read what was committed without a wake-up */
			int c = ring_buffer__consume(a->rb);
			if (c < 0 && c != -EINTR)
				sl_warn(MOD, "ring buffer consume: %s", strerror(-c));
			rb_read = sl_mono_ns();
			rb_wait = c > 0 ? SL_RB_POLL_MS : rb_wait * 2 > SL_RB_POLL_MAX_MS ? SL_RB_POLL_MAX_MS : rb_wait * 2;
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u32 == 3) {
				int c = ring_buffer__consume(a->rb);
				if (c < 0 && c != -EINTR)
					sl_warn(MOD, "ring buffer consume: %s", strerror(-c));
				rb_read = sl_mono_ns();
				if (c > 0)
					rb_wait = SL_RB_POLL_MS;
			} else if (evs[i].data.u32 == 2) {
				uint64_t exp;
				if (read(tfd, &exp, sizeof(exp)) == sizeof(exp))
					tick(a);
			} else {
				struct signalfd_siginfo si;
				if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGHUP) {
						reload(a, config_path);
						continue;
					}
					sl_info(MOD, "signal %u: shutting down", si.ssi_signo);
					atomic_store(&a->running, 0);
				}
			}
		}
	}
	close(tfd);
	close(sfd);
	close(ep);
	return 0;
}

/* The capabilities docs/DEPLOY.md "Capabilities" lists for running as a
 * user other than root (the systemd unit's AmbientCapabilities), with their
 * numbers (linux/capability.h). */
static const struct {
	const char *name;
	int bit;
} deploy_caps[] = {
	{"CAP_BPF", 39}, {"CAP_PERFMON", 38}, {"CAP_DAC_READ_SEARCH", 2}, {"CAP_SYS_PTRACE", 19}, {"CAP_SYSLOG", 34},
};

/* Not root: which of deploy_caps the effective set (CapEff of
 * /proc/self/status) lacks: a warning naming them, else one info line. */
static void report_nonroot_caps(void)
{
	unsigned long long eff = 0;
	int have = 0;
	char line[256], missing[160] = "";
	FILE *f = fopen("/proc/self/status", "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			have = 1;
	if (f)
		fclose(f);
	for (size_t i = 0; have && i < sizeof(deploy_caps) / sizeof(deploy_caps[0]); i++)
		if (!(eff >> deploy_caps[i].bit & 1))
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
				 missing[0] ? " " : "", deploy_caps[i].name);
	if (!have)
		sl_warn(MOD, "not running as root (uid %u) and the effective capabilities are unknown: "
			     "needs CAP_BPF CAP_PERFMON CAP_DAC_READ_SEARCH CAP_SYS_PTRACE CAP_SYSLOG "
			     "(docs/DEPLOY.md \"Capabilities\")",
			(unsigned)geteuid());
	else if (missing[0])
		sl_warn(MOD, "not running as root (uid %u) and without %s: see docs/DEPLOY.md \"Capabilities\" "
			     "for what each is for (the unit grants CAP_BPF CAP_PERFMON CAP_DAC_READ_SEARCH "
			     "CAP_SYS_PTRACE CAP_SYSLOG)",
			(unsigned)geteuid(), missing);
	else
		sl_info(MOD, "not running as root (uid %u): CAP_BPF CAP_PERFMON CAP_DAC_READ_SEARCH CAP_SYS_PTRACE "
			     "CAP_SYSLOG are effective (docs/DEPLOY.md \"Capabilities\")",
			(unsigned)geteuid());
}

int main(int argc, char **argv)
{
	static struct sl_agent agent; /* large; zero-initialised */
	struct sl_agent *a = &agent;
	const char *config_path = NULL;
	int check_only = 0, rc = 0;
	char err[512];
	static const struct option opts[] = {{"config", required_argument, 0, 'c'},
					     {"check-config", no_argument, 0, 'k'},
					     {"version", no_argument, 0, 'V'},
					     {"help", no_argument, 0, 'h'},
					     {0, 0, 0, 0}};
	int o;

	/* Large transient buffers (statistics snapshots, the Prometheus text and
	 * its gzip: MBs per pass at 1,000 containers) are mmap'd and go back to
	 * the kernel on free. A fixed threshold also turns off glibc's dynamic
	 * one, which after the first freed large block would put such blocks in
	 * the heap, where fragmentation keeps RSS at the high-water mark. */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	/* Every file the agent creates is private (the store, its -wal and
	 * -shm, which SQLite creates with the database's mode, the locks). */
	umask(077);
	/* room for the statistics collector's kept cgroup descriptors (half the
	 * soft limit, at most SL_CGFD_DEFAULT_MAX: cgroup/cgfd.h) */
	sl_nofile_raise(2 * SL_CGFD_DEFAULT_MAX + 1024);

	while ((o = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (o) {
		case 'c': config_path = optarg; break;
		case 'k': check_only = 1; break;
		case 'V': printf("sandlensd %s\n", SANDLENS_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	sl_config_defaults(&a->cfg);
	if (config_path && sl_config_load(&a->cfg, config_path, err, sizeof(err))) {
		fprintf(stderr, "sandlensd: invalid configuration: %s\n", err);
		return 2;
	}
	if (a->cfg.tasks.enabled) { /* the two SQLite files must differ */
		char tdb[sizeof(a->cfg.tasks.store_path) + 64], r1[PATH_MAX], r2[PATH_MAX];
		sl_tasks_db_path(&a->cfg, tdb, sizeof(tdb));
		if (!strcmp(tdb, a->cfg.store.path) ||
		    (sl_path_resolve(tdb, r1, sizeof(r1)) && sl_path_resolve(a->cfg.store.path, r2, sizeof(r2)) &&
		     !strcmp(r1, r2))) {
			fprintf(stderr,
				"sandlensd: invalid configuration: tasks.store_path: '%s' is the event store (store.path); the task store needs its own file\n",
				tdb);
			return 2;
		}
	}
	if (sl_cprof_check_paths(&a->cfg, err, sizeof(err))) { /* its own SQLite file too */
		fprintf(stderr, "sandlensd: invalid configuration: %s\n", err);
		return 2;
	}
	if (a->cfg.autotr.enabled) { /* the capture store: a file of its own too */
		char ap[700], op[700], r1[PATH_MAX], r2[PATH_MAX];
		const char *what[3] = {"the event store (store.path)", "the task store", "the profile window store"};
		sl_auto_db_path(&a->cfg, ap, sizeof(ap));
		for (int i = 0; i < 3; i++) {
			if (i == 0)
				snprintf(op, sizeof(op), "%.699s", a->cfg.store.path);
			else if (i == 1 && a->cfg.tasks.enabled)
				sl_tasks_db_path(&a->cfg, op, sizeof(op));
			else if (i == 2 && a->cfg.cprof.enabled)
				sl_cprof_db_path(&a->cfg, op, sizeof(op));
			else
				continue;
			if (!strcmp(ap, op) || (sl_path_resolve(ap, r1, sizeof(r1)) && sl_path_resolve(op, r2, sizeof(r2)) &&
						!strcmp(r1, r2))) {
				fprintf(stderr,
					"sandlensd: invalid configuration: auto.store_path: '%s' is %s; the capture store needs its own file\n",
					ap, what[i]);
				return 2;
			}
		}
	}
	{
		/* every store path absolute (a relative one would land wherever the
		 * agent was started from; break-it) */
		const char *const keys[4] = { "store.path", "tasks.store_path", "auto.store_path",
					      "profiling.continuous.store_path" };
		const char *const vals[4] = { a->cfg.store.path, a->cfg.tasks.store_path, a->cfg.autotr.store_path,
					      a->cfg.cprof.store_path };
		for (int i = 0; i < 4; i++)
			if (vals[i][0] && vals[i][0] != '/') {
				fprintf(stderr, "sandlensd: invalid configuration: %s: must be an absolute path\n",
					keys[i]);
				return 2;
			}
	}
	if (a->cfg.api.token_file[0]) { /* a token file others can read is a config error */
		char tok[SL_API_TOKEN_MAX + 1];
		int tl = sl_api_token_load(a->cfg.api.token_file, !check_only, tok,
					   sizeof(tok), err, sizeof(err));
		explicit_bzero(tok, sizeof(tok));
		if (tl < 0) {
			fprintf(stderr, "sandlensd: invalid configuration: %s\n", err);
			return 2;
		}
	}
	if (a->cfg.api.unix_socket[0]) { /* the socket's directory: as the stores' (sticky allowed) */
		const char *why = sl_dir_refusal(a->cfg.api.unix_socket, SL_DIR_STICKY_OK,
						 "others could put their own socket in its place, or remove ours, "
						 "and answer the CLI; use a directory only root can write, e.g. "
						 "/run/sandlens 0755");
		if (why) {
			fprintf(stderr, "sandlensd: invalid configuration: api.unix_socket: %s: refusing its directory: it %s\n",
				a->cfg.api.unix_socket, why);
			return 2;
		}
	}
	/* the modules' declarations: kind names unique, DETAILS templates
	 * valid; a bad declaration is a build's bug, the agent does not start */
	if (sl_agent_modules_setup(a, err, sizeof(err))) {
		fprintf(stderr, "sandlensd: module declarations: %s\n", err);
		return 1;
	}
	if (check_only) {
		printf("configuration ok\n");
		return 0;
	}
	sl_log_set_level(a->cfg.log_level);
	libbpf_set_print(libbpf_log);
	if (geteuid() != 0)
		report_nonroot_caps();

	/* SIGINT/SIGTERM go to the poll loop's signalfd; every thread started
	 * after this inherits the mask. */
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP); /* reload (never a stop) */
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* One agent per store (a second one would record every event twice,
	 * and its retention pass at open would delete the first one's rows)
	 * and per task store: both locks are taken before anything is opened
	 * or loaded. */
	int lock_fd = file_lock("store", a->cfg.store.path, "store.path", err, sizeof(err));
	if (lock_fd < 0) {
		sl_err(MOD, "%s", err);
		return 1;
	}
	int tasks_lock_fd = -1;
	if (a->cfg.tasks.enabled) {
		char tdb[sizeof(a->cfg.tasks.store_path) + 64];
		sl_tasks_db_path(&a->cfg, tdb, sizeof(tdb));
		tasks_lock_fd = file_lock("tasks store", tdb, "tasks.store_path", err, sizeof(err));
		if (tasks_lock_fd < 0) {
			sl_err(MOD, "%s", err);
			close(lock_fd);
			return 1;
		}
	}

	set_clock_offset(a);
	ensure_tracefs(a->cfg.tracefs);
	setup_cgroups(a);

	struct sl_store_config sc = {
		.path = a->cfg.store.path,
		.queue_size = a->cfg.store.queue_size,
		.batch_max = a->cfg.store.batch_max,
		.max_age_s = a->cfg.store.max_age_s,
		.max_rows = a->cfg.store.max_rows,
		.max_bytes = a->cfg.store.max_bytes,
		.retention_interval_ms = 10000,
	};
	a->store = sl_store_open(&sc, err, sizeof(err));
	if (!a->store) {
		sl_err(MOD, "store.path %s: %s", a->cfg.store.path, err);
		sl_attr_cache_free(a->attr);
		sl_runc_index_free(a->runc);
		close(lock_fd);
		if (tasks_lock_fd >= 0)
			close(tasks_lock_fd);
		return 1;
	}
	sl_info(MOD, "store %s (WAL)", a->cfg.store.path);
	/* per-container event counts (container_events.h), as many containers
	 * as the stats collector takes per pass */
	a->cevents = sl_cevents_new((unsigned)a->cfg.stats.max_containers, a->kinds.n);
	if (a->cfg.stats.enabled) {
		struct sl_stats_config stc = {
			.interval_ms = a->cfg.stats.interval_ns / 1000000,
			.max_containers = a->cfg.stats.max_containers,
		};
		_Static_assert(sizeof(stc.runc_root) == sizeof(a->cfg.attribution.runc_root), "runc_root");
		sl_host_path(stc.runc_root, sizeof(stc.runc_root), a->cfg.attribution.host_root,
			     a->cfg.attribution.runc_root);
		stc.runc = a->runc;
		stc.cg_mounts = &a->mounts;
		struct sl_k8s_roots k8s_roots; /* Kubernetes names (copied by the collector) */
		sl_k8s_roots_prefixed(&k8s_roots, a->cfg.attribution.host_root);
		stc.k8s_roots = &k8s_roots;
		struct sl_guest_config gc = { /* the guest-agent source (copied) */
			.timeout_ns = a->cfg.stats.guest.timeout_ns,
			.max_inflight = (unsigned)a->cfg.stats.guest.max_inflight,
		};
		/* a guest that never answers holds an API thread for the whole
		 * timeout: never all of them (a reader's loop stalled /healthz) */
		unsigned spare = a->cfg.api.threads > 1 ? (unsigned)a->cfg.api.threads - 1 : 1;
		if (gc.max_inflight > spare)
			gc.max_inflight = spare;
		_Static_assert(sizeof(gc.kata_root) == sizeof(a->cfg.stats.guest.kata_root), "kata_root");
		_Static_assert(sizeof(gc.host_root) == sizeof(a->cfg.attribution.host_root), "host_root");
		memcpy(gc.kata_root, a->cfg.stats.guest.kata_root, sizeof(gc.kata_root));
		memcpy(gc.host_root, a->cfg.attribution.host_root, sizeof(gc.host_root));
		if (a->cfg.stats.guest.enabled)
			stc.guest = &gc;
		a->stats = sl_stats_new(&stc);
		if (!a->stats || sl_stats_start(a->stats)) {
			sl_warn(MOD, "statistics collector could not start; stats answers 503");
			sl_stats_free(a->stats);
			a->stats = NULL;
		}
	}

	int64_t export_after = -1; /* the events the modules emit from now on are exported */
	if (a->cfg.export_otlp.endpoint[0] && sl_store_max_id(a->store, &export_after, err, sizeof(err)))
		export_after = -1;
	sl_agent_flight_start(a); /* failure: logged, the agent goes on without */
	if (start_modules(a) == 0) {
		sl_err(MOD, "no module could start; see the errors above");
		rc = 1;
		goto out_modules;
	}
	a->pressure = sl_pressure_rt_new(a); /* NULL: off (logged) */
	a->series_hist = sl_series_hist_new(); /* NULL (out of memory): the history route answers empty */
	if (a->cfg.tasks.enabled)
		a->tasks = sl_tasks_start_agent(a); /* NULL: logged, task routes answer 503 */
	if (a->cfg.cprof.enabled)
		a->cprof = sl_cprof_start_agent(a); /* NULL: logged, profile routes answer 503 */
	a->autotr = sl_auto_start(a); /* NULL: auto.enabled false or failed (logged) */
	if (a->autotr && a->cprof) /* captures are diffed against the container's healthy windows */
		sl_auto_set_baseline_provider(a->autotr, sl_cprof_baseline, a->cprof);
	struct sl_api *api = sl_api_start(a, err, sizeof(err));
	if (!api) {
		sl_err(MOD, "API: %s", err);
		rc = 1;
		goto out_modules;
	}
	sl_agent_export_start(a, export_after, SANDLENS_VERSION); /* failure: logged, agent goes on */
	sl_info(MOD, "sandlensd %s ready: api %s%s%s", SANDLENS_VERSION, a->cfg.api.listen,
		a->cfg.api.unix_socket[0] ? " + unix:" : "", a->cfg.api.unix_socket);

	/* every module is up and the API listens (Type=notify) */
	int nr = sl_sd_notify("READY=1\nSTATUS=running");
	if (nr < 0)
		sl_warn(MOD, "sd_notify READY=1 to $NOTIFY_SOCKET: %s", strerror(-nr));
	if (poll_loop(a, config_path))
		rc = 1;
	sl_sd_notify("STOPPING=1");
	sl_agent_export_stop(a);

	/* Tasks first: cancelled as "agent shutting down" (not as lost follow
	 * clients), given a moment to end, so that follow streams send their
	 * final record before the API closes them. */
	sl_tasks_shutdown(a->tasks);
	if (sl_tasks_wait_idle(a->tasks, 3000))
		sl_warn(MOD, "tasks still running 3 s after shutdown began; their streams end without a final record");
	sl_api_drain_streams(api, 1000); /* the streams of the tasks that did end */
	sl_api_stop(api); /* ends the remaining follow streams; no handler runs after this */
out_modules:
	sl_auto_stop(a->autotr); /* before the tasks it starts; the API is stopped */
	a->autotr = NULL;
	sl_pressure_rt_free(a->pressure); /* level 0, own cgroup left; before modules and stats go */
	a->pressure = NULL;
	sl_tasks_free(a->tasks); /* cancels running tasks, destroys their BPF objects */
	a->tasks = NULL;
	sl_cprof_free(a->cprof); /* stores the window in progress, detaches */
	a->cprof = NULL;
	/* Drain what the kernel already wrote, then detach everything. */
	if (a->rb) {
		ring_buffer__consume(a->rb);
		ring_buffer__free(a->rb);
		a->rb = NULL;
	}
	for (int i = 0; i < a->nmodules; i++)
		if (a->modules[i].ops->destroy && a->modules[i].enabled && a->modules[i].ops->init)
			a->modules[i].ops->destroy(&a->modules[i]);
	sl_agent_flight_stop(a); /* the API is stopped, the modules are gone: no more events */
	sl_stats_free(a->stats); /* stops its thread; the API is already stopped */
	a->stats = NULL;
	sl_store_close(a->store); /* flushes the queue */
	close(lock_fd);
	if (tasks_lock_fd >= 0)
		close(tasks_lock_fd);
	sl_attr_cache_free(a->attr);
	sl_runc_index_free(a->runc);
	sl_cevents_free(a->cevents);
	sl_series_hist_free(a->series_hist);
	a->series_hist = NULL;
	sl_info(MOD, "stopped");
	return rc;
}
