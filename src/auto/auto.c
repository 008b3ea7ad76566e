/* AutoTracing engine (auto.h): the auto thread, inputs, detectors, captures. */
#include "auto/auto.h"
#include "auto/auto_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "common/log.h"
#include "stats/stats.h"
#include "task/task.h"

#define MOD "auto"

const char *const sl_auto_det_inputs[SL_AUTO_NDET] = {
	"cpu_usage_ratio",    "cpu_throttled_ratio",      "", "tasks_dstate", "memory_working_set_growth_bytes_per_second",
	"memory_pressure_some_ratio", "cpu_pressure_some_ratio", "",
};
static const double det_resolution[SL_AUTO_NDET] = {1e-4, 1e-4, 1e-6, 1, 1024, 1e-4, 1e-4, 1e-6};

static uint64_t mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------ inputs */

/* Copy what the detectors need out of the snapshot (inside RCU). */
static void visit(const struct sl_stats_snap *s, void *ctx)
{
	struct sl_auto *au = ctx;
	if (s->seq == au->snap_seq)
		return;
	au->snap_seq = s->seq;
	au->snap_observed_ns = s->observed_ns;
	au->machine_cpus = s->machine_cpus;
	size_t n = 0;
	if (s->nctr > au->cin_cap) {
		struct sl_auto_cin *nc = realloc(au->cin, s->nctr * sizeof(*nc));
		if (!nc)
			return;
		au->cin = nc;
		au->cin_cap = s->nctr;
	}
	for (size_t i = 0; i < s->nctr; i++) {
		const struct sl_stats_ctr *c = &s->ctr[i];
		if (c->read_rc || !c->id[0])
			continue;
		struct sl_auto_cin *d = &au->cin[n++];
		memset(d, 0, sizeof(*d));
		memcpy(d->id, c->id, sizeof(d->id));
		memcpy(d->pod, c->pod_uid, sizeof(d->pod));
		memcpy(d->path, c->path, sizeof(d->path));
		d->ident = c->ident;
		d->ino_v2 = c->ino_v2;
		d->cpu = c->st.cpu;
		d->mem_known = c->st.mem.known;
		d->ws = c->st.mem.working_set_bytes;
		d->psi_cpu = c->st.psi[SL_PSI_CPU];
		d->psi_mem = c->st.psi[SL_PSI_MEMORY];
		d->spec = c->st.spec;
	}
	au->ncin = n;
	au->snap_new = 1;
}

/* Number of CPUs in a cpuset list ("0-3,8,10-11"); 0 when malformed. */
unsigned sl_auto_cpulist_count(const char *s)
{
	unsigned n = 0;
	while (s && *s && *s != '\n') {
		char *e;
		long a = strtol(s, &e, 10), b;
		if (e == s || a < 0)
			return 0;
		b = a;
		if (*e == '-') {
			s = e + 1;
			b = strtol(s, &e, 10);
			if (e == s || b < a)
				return 0;
		}
		n += (unsigned)(b - a + 1);
		s = e;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return 0;
	}
	return n;
}

static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	ssize_t r = read(fd, buf, len - 1);
	close(fd);
	if (r < 0)
		return -EIO;
	buf[r] = 0;
	return 0;
}

/* CPUs the container may use and what says so. */
static double allowed_cpus(struct sl_auto *au, const struct sl_auto_cin *c, const char **basis)
{
	if ((c->spec.known & SL_SPEC_CPU_QUOTA) && (c->spec.known & SL_SPEC_CPU_PERIOD) &&
	    c->spec.cpu_quota_usec != SL_CGSTAT_UNLIMITED && c->spec.cpu_period_usec) {
		*basis = "quota";
		return (double)c->spec.cpu_quota_usec / (double)c->spec.cpu_period_usec;
	}
	char path[1024], buf[256];
	const char *roots[2] = {au->mounts.v2, au->cpuset_v1};
	for (int i = 0; i < 2; i++) {
		if (!roots[i][0])
			continue;
		snprintf(path, sizeof(path), "%s%s/%s", roots[i], c->path, i ? "cpuset.effective_cpus" : "cpuset.cpus.effective");
		unsigned n;
		if (!read_text(path, buf, sizeof(buf)) && (n = sl_auto_cpulist_count(buf)) > 0) {
			*basis = "cpuset";
			return n;
		}
	}
	*basis = "host_cpus";
	return au->machine_cpus ? (double)au->machine_cpus : 1.0;
}

/* D-state tasks per container: one walk of /proc, the cgroup of each D task
 * matched to a container path (longest prefix). */
static void count_dstate(struct sl_auto *au)
{
	for (size_t i = 0; i < au->ncin; i++)
		au->cin[i].dstate = 0;
	DIR *d = opendir(au->proc_root);
	struct dirent *de;
	char path[640], buf[1024];
	while (d && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%s/%s/task", au->proc_root, de->d_name);
		DIR *t = opendir(path);
		struct dirent *te;
		int found = 0;
		while (t && (te = readdir(t))) {
			if (te->d_name[0] < '1' || te->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "%s/%s/task/%s/stat", au->proc_root, de->d_name, te->d_name);
			if (read_text(path, buf, sizeof(buf)))
				continue;
			const char *rp = strrchr(buf, ')');
			if (rp && rp[1] == ' ' && rp[2] == 'D')
				found++;
		}
		if (t)
			closedir(t);
		if (!found)
			continue;
		snprintf(path, sizeof(path), "%s/%s/cgroup", au->proc_root, de->d_name);
		if (read_text(path, buf, sizeof(buf)))
			continue;
		/* the v2 line "0::/path" */
		char *line = strstr(buf, "0::");
		if (line)
			line += 3;
		if (!line)
			continue;
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		size_t best = 0;
		struct sl_auto_cin *bc = NULL;
		for (size_t i = 0; i < au->ncin; i++) {
			size_t l = strlen(au->cin[i].path);
			if (l > best && !strncmp(line, au->cin[i].path, l) && (line[l] == 0 || line[l] == '/')) {
				best = l;
				bc = &au->cin[i];
			}
		}
		if (bc)
			bc->dstate += found;
	}
	if (d)
		closedir(d);
}

/* Points of a declared series by name, into au->series_vals[det] per container. */
static int read_series_input(struct sl_auto *au, int det)
{
	struct sl_auto_series *se = &au->series[det];
	if (!se->m)
		return -ENOENT;
	int n = se->m->ops->read_series(se->m, se->idx, au->pts, SL_AUTO_SERIES_MAX);
	se->npts = n > 0 ? (size_t)n : 0;
	return n < 0 ? n : 0;
}

static double series_value(struct sl_auto *au, int det, const char *id)
{
	struct sl_auto_series *se = &au->series[det];
	for (size_t i = 0; i < se->npts; i++)
		if (!strcmp(au->pts[i].container_id, id))
			return au->pts[i].value;
	return NAN;
}

/* ------------------------------------------------------------ containers */

int sl_auto_watched(const char *list, const char *id)
{
	if (!list || !*list)
		return 1;
	for (const char *p = list; *p;) {
		while (*p == ',' || *p == ' ')
			p++;
		size_t l = strcspn(p, ", ");
		if (l && !strncmp(id, p, l))
			return 1;
		p += l;
	}
	return 0;
}

static struct sl_auto_ctr *ctr_get(struct sl_auto *au, const struct sl_auto_cin *c)
{
	struct sl_auto_ctr *e;
	HASH_FIND_STR(au->ctrs, c->id, e);
	if (e)
		return e;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	memcpy(e->id, c->id, sizeof(e->id));
	e->psi_fd[0] = e->psi_fd[1] = -1;
	e->slot = ++au->next_slot;
	HASH_ADD_STR(au->ctrs, id, e);
	return e;
}

static void psi_close(struct sl_auto *au, struct sl_auto_ctr *e)
{
	for (int k = 0; k < 2; k++)
		if (e->psi_fd[k] >= 0) {
			epoll_ctl(au->ep, EPOLL_CTL_DEL, e->psi_fd[k], NULL);
			close(e->psi_fd[k]);
			e->psi_fd[k] = -1;
			au->psi_armed--;
		}
}

static void ctr_free(struct sl_auto *au, struct sl_auto_ctr *e)
{
	psi_close(au, e);
	HASH_DEL(au->ctrs, e);
	free(e);
}

/* Arm the PSI triggers of a container (once per epoch). */
static void psi_arm(struct sl_auto *au, struct sl_auto_ctr *e, const struct sl_auto_cin *c)
{
	static const char *const files[2] = {"memory.pressure", "cpu.pressure"};
	for (int k = 0; k < 2; k++) {
		if (!au->psi_on[k] || !au->det_on[k ? SL_AD_CPUPSI : SL_AD_MEMPSI] || e->psi_fd[k] >= 0 ||
		    e->psi_tried[k])
			continue;
		e->psi_tried[k] = 1;
		if (!au->mounts.v2[0] || !c->ino_v2) {
			snprintf(e->psi_reason[k], sizeof(e->psi_reason[k]), "no cgroup v2 directory: sampling");
			continue;
		}
		char path[1024];
		snprintf(path, sizeof(path), "%s%s/%s", au->mounts.v2, c->path, files[k]);
		int fd = sl_psi_trigger_open(path, &au->psi_trig[k]);
		if (fd < 0) {
			snprintf(e->psi_reason[k], sizeof(e->psi_reason[k]), "%s: %s: sampling", files[k], strerror(-fd));
			continue;
		}
		struct epoll_event ev = {.events = EPOLLPRI, .data.u64 = ((uint64_t)e->slot << 1) | (uint64_t)k};
		if (epoll_ctl(au->ep, EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			snprintf(e->psi_reason[k], sizeof(e->psi_reason[k]), "epoll: %s: sampling", strerror(errno));
			continue;
		}
		e->psi_fd[k] = fd;
		e->psi_reason[k][0] = 0;
		au->psi_armed++;
	}
}

/* ------------------------------------------------------------ evaluation */

static void fire(struct sl_auto *au, struct sl_auto_ctr *e, const struct sl_auto_cin *c, int det,
		 const struct sl_det_verdict *v, double reading, const char *source)
{
	atomic_fetch_add(&au->fired[det], 1);
	uint64_t now = mono_now(), rem = 0;
	if (!sl_cooldown_try(au->cooldown, c->id, (unsigned)det, now, &rem)) {
		atomic_fetch_add(&au->suppressed[det], 1);
		sl_debug(MOD, "%s fired for %.12s: within its cooldown (%.0f s left)", sl_auto_det_names[det], c->id,
			 rem / 1e9);
		return;
	}
	struct sl_auto_reason r = {
		.det = det,
		.reading = reading,
		.v = *v,
		.source = source,
	};
	r.extra = json_object();
	if (r.extra && det == SL_AD_CPU) {
		json_object_set_new(r.extra, "cpu_user_ratio", json_real(e->last_user));
		json_object_set_new(r.extra, "cpu_system_ratio", json_real(e->last_sys));
		json_object_set_new(r.extra, "normalized_by", json_string(e->norm_basis));
		json_object_set_new(r.extra, "allowed_cpus", json_real(e->allowed));
	}
	if (r.extra && (det == SL_AD_MEMPSI || det == SL_AD_CPUPSI) && !strcmp(source, "psi_trigger")) {
		char t[64];
		sl_psi_trigger_format(&au->psi_trig[det == SL_AD_MEMPSI ? 0 : 1], t, sizeof(t));
		json_object_set_new(r.extra, "trigger", json_string(t));
		json_object_set_new(r.extra, "value_is",
				    json_string("lower bound: the kernel's trigger fired (stall >= threshold within the "
						"window); reading: some avg10 at the event"));
	}
	sl_auto_capture_start(au, c, &r);
	json_decref(r.extra);
}

static void feed(struct sl_auto *au, struct sl_auto_ctr *e, const struct sl_auto_cin *c, int det, double value,
		 uint64_t now)
{
	if (!au->det_on[det])
		return;
	struct sl_det_verdict v;
	uint64_t t0 = mono_now();
	sl_det_feed(&e->det[det], &au->params[det], c->ident, value, now, &v);
	atomic_fetch_add(&au->eval_ns, mono_now() - t0);
	atomic_fetch_add(&au->evals, 1);
	e->last[det] = value;
	if (v.fire)
		fire(au, e, c, det, &v, value, "polling");
}

void sl_auto_evaluate(struct sl_auto *au)
{
	uint64_t now = mono_now();
	int64_t obs = au->snap_observed_ns;
	if (au->det_on[SL_AD_DSTATE])
		count_dstate(au);
	for (int d = 0; d < SL_AUTO_NDET; d++)
		if (au->series[d].m)
			read_series_input(au, d);
	au->gen++;
	for (size_t i = 0; i < au->ncin; i++) {
		const struct sl_auto_cin *c = &au->cin[i];
		if (!sl_auto_watched(au->a->cfg.autotr.containers, c->id))
			continue;
		struct sl_auto_ctr *e = ctr_get(au, c);
		if (!e)
			continue;
		e->gen = au->gen;
		if (e->ident != c->ident) { /* new container or a new epoch */
			psi_close(au, e);
			memset(e->psi_tried, 0, sizeof(e->psi_tried));
			e->have_prev = 0;
			e->ident = c->ident;
		}
		e->cin_idx = i;
		psi_arm(au, e, c);
		double dt = e->have_prev ? (double)(obs - e->prev_obs) / 1e9 : 0;
		double nan = NAN;
		/* CPU: usage over the interval / allowed CPUs */
		double cpu = nan, thr = nan, ws = nan, pm = nan, pc = nan;
		if (e->have_prev && dt > 0) {
			const char *basis = "host_cpus";
			double allowed = allowed_cpus(au, c, &basis);
			e->allowed = allowed;
			snprintf(e->norm_basis, sizeof(e->norm_basis), "%s", basis);
			if ((c->cpu.known & SL_CPU_USAGE) && (e->prev.cpu.known & SL_CPU_USAGE))
				cpu = sl_det_rate(e->prev.cpu.usage_usec, c->cpu.usage_usec, dt) / 1e6 / allowed;
			e->last_user = (c->cpu.known & SL_CPU_USER)
					       ? sl_det_rate(e->prev.cpu.user_usec, c->cpu.user_usec, dt) / 1e6 / allowed
					       : nan;
			e->last_sys = (c->cpu.known & SL_CPU_SYSTEM)
					      ? sl_det_rate(e->prev.cpu.system_usec, c->cpu.system_usec, dt) / 1e6 / allowed
					      : nan;
			if ((c->cpu.known & SL_CPU_NR_PERIODS) && (c->cpu.known & SL_CPU_NR_THROTTLED)) {
				double dp = sl_det_rate(e->prev.cpu.nr_periods, c->cpu.nr_periods, 1);
				double dth = sl_det_rate(e->prev.cpu.nr_throttled, c->cpu.nr_throttled, 1);
				thr = dp > 0 ? dth / dp : (dp == 0 ? 0 : nan);
			}
			if ((c->mem_known & SL_MEM_WORKING_SET) && (e->prev.mem_known & SL_MEM_WORKING_SET))
				ws = ((double)c->ws - (double)e->prev.ws) / dt;
			if (c->psi_mem.has_some && e->prev.psi_mem.has_some)
				pm = sl_det_rate(e->prev.psi_mem.some.total_usec, c->psi_mem.some.total_usec, dt) / 1e6;
			if (c->psi_cpu.has_some && e->prev.psi_cpu.has_some)
				pc = sl_det_rate(e->prev.psi_cpu.some.total_usec, c->psi_cpu.some.total_usec, dt) / 1e6;
		}
		e->prev = *c;
		e->prev_obs = obs;
		if (!e->have_prev) {
			e->have_prev = 1;
			continue;
		}
		feed(au, e, c, SL_AD_CPU, cpu, now);
		feed(au, e, c, SL_AD_THROTTLE, thr, now);
		feed(au, e, c, SL_AD_DSTATE, (double)c->dstate, now);
		feed(au, e, c, SL_AD_MEMGROWTH, ws, now);
		/* pressure: sampled only where no trigger is armed */
		if (e->psi_fd[0] < 0)
			feed(au, e, c, SL_AD_MEMPSI, pm, now);
		if (e->psi_fd[1] < 0)
			feed(au, e, c, SL_AD_CPUPSI, pc, now);
		e->last[SL_AD_MEMPSI] = pm;
		e->last[SL_AD_CPUPSI] = pc;
		if (au->series[SL_AD_RUNQUEUE].m)
			feed(au, e, c, SL_AD_RUNQUEUE, series_value(au, SL_AD_RUNQUEUE, c->id), now);
		if (au->series[SL_AD_IOLAT].m)
			feed(au, e, c, SL_AD_IOLAT, series_value(au, SL_AD_IOLAT, c->id), now);
	}
	/* containers gone from the snapshot */
	struct sl_auto_ctr *e, *tmp;
	HASH_ITER(hh, au->ctrs, e, tmp) {
		if (e->gen != au->gen)
			ctr_free(au, e);
	}
}

/* A PSI trigger fired (POLLPRI) or failed (POLLERR: the cgroup is gone). */
static void psi_event(struct sl_auto *au, uint64_t data, uint32_t events)
{
	uint64_t slot = data >> 1;
	int k = (int)(data & 1);
	struct sl_auto_ctr *e, *tmp, *found = NULL;
	HASH_ITER(hh, au->ctrs, e, tmp) {
		if (e->slot == slot)
			found = e;
	}
	e = found;
	if (!e || e->psi_fd[k] < 0 || e->cin_idx >= au->ncin)
		return;
	if (events & (EPOLLERR | EPOLLHUP)) {
		epoll_ctl(au->ep, EPOLL_CTL_DEL, e->psi_fd[k], NULL);
		close(e->psi_fd[k]);
		e->psi_fd[k] = -1;
		au->psi_armed--;
		snprintf(e->psi_reason[k], sizeof(e->psi_reason[k]), "trigger ended (cgroup removed)");
		return;
	}
	int det = k ? SL_AD_CPUPSI : SL_AD_MEMPSI;
	atomic_fetch_add(&au->psi_events, 1);
	if (!au->det_on[det])
		return;
	const struct sl_psi_trigger *t = &au->psi_trig[k];
	/* The kernel says only that the stall reached the threshold within the
	 * window (kernel/sched/psi.c window_update/psi_trigger): the value is
	 * that lower bound. The reading is the file's "some avg10" (share of
	 * wall time) read now from the trigger's own fd; unknown (NaN) when
	 * it cannot be read. */
	double reading = NAN;
	char buf[512];
	ssize_t n = pread(e->psi_fd[k], buf, sizeof(buf) - 1, 0);
	struct sl_cgstat_psi ps;
	if (n > 0) {
		buf[n] = 0;
		if (sl_cgparse_psi(buf, &ps) == 0 && ps.has_some)
			reading = ps.some.avg10 / 100.0;
	}
	struct sl_det_verdict v = {
		.fire = 1,
		.evaluated = 1,
		.stat = (double)t->threshold_us / (double)t->window_us,
		.threshold = (double)t->threshold_us / (double)t->window_us,
		.baseline_p99 = NAN,
		.samples = 1,
	};
	fire(au, e, &au->cin[e->cin_idx], det, &v, reading, "psi_trigger");
}

/* ------------------------------------------------------------ thread */

static void *run(void *arg)
{
	struct sl_auto *au = arg;
	uint64_t last_pending = 0;
	while (!atomic_load(&au->stop)) {
		struct epoll_event evs[16];
		int n = epoll_wait(au->ep, evs, 16, 100);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u64 == UINT64_MAX) { /* the wake-up pipe */
				char b[16];
				while (read(au->wake[0], b, sizeof(b)) > 0)
					;
				continue;
			}
			pthread_mutex_lock(&au->mu);
			psi_event(au, evs[i].data.u64, evs[i].events);
			pthread_mutex_unlock(&au->mu);
		}
		au->snap_new = 0;
		sl_stats_visit(au->stats, visit, au);
		if (au->snap_new) {
			uint64_t t0 = mono_now();
			pthread_mutex_lock(&au->mu);
			sl_auto_evaluate(au);
			pthread_mutex_unlock(&au->mu);
			atomic_store(&au->last_pass_ns, mono_now() - t0);
			atomic_fetch_add(&au->passes, 1);
		}
		uint64_t now = mono_now();
		if (now - last_pending >= 500000000ull) {
			last_pending = now;
			sl_auto_captures_poll(au);
		}
	}
	return NULL;
}

static void find_series(struct sl_auto *au, int det, const char *name)
{
	struct sl_auto_series *se = &au->series[det];
	snprintf(se->name, sizeof(se->name), "%s", name);
	if (!name[0]) {
		snprintf(se->why, sizeof(se->why), "no series configured");
		return;
	}
	for (int i = 0; i < au->a->nmodules; i++) {
		struct sl_module *m = &au->a->modules[i];
		for (unsigned k = 0; k < m->ops->nseries; k++) {
			if (strcmp(m->ops->series[k].name, name))
				continue;
			if (!m->enabled || m->state || !m->ops->read_series) {
				snprintf(se->why, sizeof(se->why), "series %s: its module is not running", name);
				return;
			}
			se->m = m;
			se->idx = k;
			se->why[0] = 0;
			return;
		}
	}
	snprintf(se->why, sizeof(se->why), "no running module declares series %s", name);
}

struct sl_auto *sl_auto_start(struct sl_agent *a)
{
	const __typeof__(a->cfg.autotr) *cfg = &a->cfg.autotr;
	char err[256];
	if (!cfg->enabled)
		return NULL;
	if (!a->stats) {
		sl_warn(MOD, "auto.enabled but statistics are off (stats.enabled): no detectors run");
		return NULL;
	}
	struct sl_auto *au = calloc(1, sizeof(*au));
	if (!au)
		return NULL;
	pthread_mutex_init(&au->mu, NULL);
	au->a = a;
	au->stats = a->stats;
	au->tasks = a->tasks;
	au->mounts = a->mounts;
	snprintf(au->proc_root, sizeof(au->proc_root), "/proc");
	for (int i = 0; i < SL_CG_NCTRL; i++)
		if (strstr(a->mounts.v1_ctrl[i], "cpuset"))
			snprintf(au->cpuset_v1, sizeof(au->cpuset_v1), "%s", a->mounts.v1_ctrl[i]);
	if (!au->cpuset_v1[0] && !access("/sys/fs/cgroup/cpuset/cpuset.effective_cpus", R_OK))
		snprintf(au->cpuset_v1, sizeof(au->cpuset_v1), "/sys/fs/cgroup/cpuset");
	au->wake[0] = au->wake[1] = -1;
	for (int d = 0; d < SL_AUTO_NDET; d++) {
		const struct sl_cfg_auto_det *dc = &cfg->det[d];
		au->det_on[d] = dc->enabled;
		au->params[d] = (struct sl_det_params){
			.method = sl_det_method_parse(dc->method),
			.threshold = dc->threshold,
			.window = (unsigned)dc->window,
			.baseline_factor = dc->baseline,
			.baseline_base = det_resolution[d],
			.baseline_period_ns = 1800ull * 1000000000ull,
		};
		if (sl_det_params_check(&au->params[d], err, sizeof(err))) {
			sl_warn(MOD, "auto.%s: %s: detector off", sl_auto_det_names[d], err);
			au->det_on[d] = 0;
		}
	}
	find_series(au, SL_AD_RUNQUEUE, cfg->det[SL_AD_RUNQUEUE].series);
	find_series(au, SL_AD_IOLAT, cfg->det[SL_AD_IOLAT].series);
	/* PSI triggers: the configured text; without CAP_SYS_RESOURCE the
	 * kernel takes only 2 s multiples, so the window is widened (same share) */
	au->psi_priv = sl_psi_privileged();
	for (int k = 0; k < 2; k++) {
		const char *t = cfg->det[k ? SL_AD_CPUPSI : SL_AD_MEMPSI].trigger;
		if (!t[0] || sl_psi_trigger_parse(t, &au->psi_trig[k]))
			continue;
		au->psi_on[k] = 1;
		if (!au->psi_priv && sl_psi_trigger_unpriv(&au->psi_trig[k]))
			au->psi_widened[k] = 1;
	}
	au->cooldown = sl_cooldown_new(cfg->cooldown_s * 1000000000ull, 0);
	au->ep = epoll_create1(EPOLL_CLOEXEC);
	if (!au->cooldown || au->ep < 0 || pipe2(au->wake, O_CLOEXEC | O_NONBLOCK))
		goto fail;
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = UINT64_MAX};
	epoll_ctl(au->ep, EPOLL_CTL_ADD, au->wake[0], &ev);
	if (sl_auto_captures_init(au, err, sizeof(err))) {
		sl_err(MOD, "capture store: %s", err);
		goto fail;
	}
	if (pthread_create(&au->thread, NULL, run, au))
		goto fail;
	au->started = 1;
	sl_info(MOD, "AutoTracing on: %d detectors, cooldown %llus, PSI triggers %s%s", SL_AUTO_NDET,
		(unsigned long long)cfg->cooldown_s, au->psi_priv ? "privileged" : "unprivileged (2 s windows)",
		a->tasks ? "" : "; tasks are off: captures have no profile");
	return au;
fail:
	sl_err(MOD, "AutoTracing not started");
	sl_auto_stop(au);
	return NULL;
}

void sl_auto_stop(struct sl_auto *au)
{
	if (!au)
		return;
	atomic_store(&au->stop, 1);
	if (au->wake[1] >= 0 && write(au->wake[1], "x", 1) < 0) {
	}
	if (au->started)
		pthread_join(au->thread, NULL);
	struct sl_auto_ctr *e, *tmp;
	HASH_ITER(hh, au->ctrs, e, tmp) {
		ctr_free(au, e);
	}
	sl_auto_captures_fini(au);
	sl_cooldown_free(au->cooldown);
	if (au->ep >= 0)
		close(au->ep);
	for (int i = 0; i < 2; i++)
		if (au->wake[i] >= 0)
			close(au->wake[i]);
	free(au->cin);
	pthread_mutex_destroy(&au->mu);
	free(au);
}

void sl_auto_set_baseline_provider(struct sl_auto *au, sl_auto_baseline_fn fn, void *ctx)
{
	if (!au)
		return;
	pthread_mutex_lock(&au->mu);
	au->baseline_fn = fn;
	au->baseline_ctx = ctx;
	pthread_mutex_unlock(&au->mu);
}
