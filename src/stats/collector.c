/* The statistics collector thread and the lock-free read side.
 *
 * Publication: liburcu, bulletproof flavour (urcu-bp: reader threads —
 * libmicrohttpd's — register themselves on first use). The collector
 * builds a new snapshot under its mutex, publishes it with
 * rcu_assign_pointer, waits for the readers of the old one
 * (synchronize_rcu) and frees it. Readers take rcu_read_lock only, never
 * the mutex (tested: tests/unit/test_stats_collector.c). */
#include "stats/stats.h"
#include "stats/guest.h"
#include "cgroup/cgfd.h"
#include "cgroup/runc_state.h"
#include "common/log.h"
#include "common/prom.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* zlib level for the per-pass gzip of the Prometheus text: 1 is the
 * fastest; the text is label-heavy and repetitive, so level 1 already
 * shrinks it ~15x (4.8 MiB -> 318 KiB at 1,000 containers, ~47 ms with the
 * rendering: bench/RESULTS.md "Workload statistics") */
#define SL_STATS_GZ_LEVEL 1
#include <urcu-bp.h>

#define MOD "stats"

struct sl_stats {
	struct sl_k8s_roots k8s_roots; /* Kubernetes names (have_k8s_roots) */
	int have_k8s_roots;
	struct sl_stats_config cfg;
	struct sl_stats_mounts mounts;
	struct sl_runc_index *runc;
	struct sl_guest *guest; /* the guest-agent source, NULL = disabled */
	struct sl_cgfd_cache *fds; /* cgroup descriptors kept across passes (under mu) */
	struct sl_cgwalk_cache *walks[2]; /* replayed walks, v2 and v1 memory (under mu) */
	_Atomic uint64_t walks_full, walks_replayed; /* copied after each pass */
	_Atomic uint64_t walks_unwatched, walks_unsettled;
	int own_runc; /* runc made here (no shared one given) */
	pthread_mutex_t mu; /* held for a whole pass; never taken by readers */
	pthread_mutex_t rmu; /* one on-demand rendering at a time (sl_stats_prom_get) */
	struct sl_stats_snap *cur; /* RCU-protected */

	pthread_t th;
	int started;
	pthread_mutex_t wmu; /* sleep/stop signalling of the thread only */
	pthread_cond_t wcv;
	int stop;

	_Atomic unsigned slowdown;  /* pressure step 1: interval factor, 0/1 = none */
	_Atomic uint64_t passes, failures;
	_Atomic uint64_t render_failures; /* on-demand renderings out of memory */
	_Atomic uint64_t render_ns; /* last pass: Prometheus text + its gzip */
	_Atomic uint64_t prom_bytes, prom_gz_bytes;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct sl_stats *sl_stats_new(const struct sl_stats_config *cfg)
{
	struct sl_stats *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->cfg = *cfg;
	if (!c->cfg.interval_ms)
		c->cfg.interval_ms = 1000;
	if (!c->cfg.max_containers)
		c->cfg.max_containers = 4096;
	struct sl_cg_mounts cm;
	if (cfg->mounts) {
		c->mounts = *cfg->mounts;
	} else if (cfg->cg_mounts) {
		sl_stats_mounts_from(cfg->cg_mounts, &c->mounts);
	} else if (sl_cg_mounts_discover(cfg->mountinfo[0] ? cfg->mountinfo : "/proc/self/mountinfo",
					 "memory", &cm) == 0) {
		sl_stats_mounts_from(&cm, &c->mounts);
	} else {
		sl_warn(MOD, "cannot read mountinfo: no cgroup hierarchies to walk");
	}
	c->cfg.mounts = NULL;
	c->cfg.cg_mounts = NULL;
	if (cfg->runc) {
		c->runc = cfg->runc; /* the agent's, shared with the pipeline and tasks */
	} else if (c->cfg.runc_root[0]) {
		c->runc = sl_runc_index_new(c->cfg.runc_root);
		c->own_runc = 1;
	}
	c->cfg.runc = NULL;
	if (cfg->k8s_roots) {
		c->k8s_roots = *cfg->k8s_roots; /* copied: the caller's may go */
		c->have_k8s_roots = 1;
	}
	c->cfg.k8s_roots = NULL;
	if (cfg->guest)
		c->guest = sl_guest_new(cfg->guest);
	c->cfg.guest = NULL;
	/* NULL (out of memory, or a budget of 0) reads by path every pass */
	size_t max_fds = sl_cgfd_default_max();
	c->fds = max_fds ? sl_cgfd_cache_new(max_fds) : NULL;
	/* NULL (out of memory): walk every pass; a real walk at least every
	 * 12 passes */
	c->walks[0] = sl_cgwalk_cache_new(12);
	c->walks[1] = sl_cgwalk_cache_new(12);
	pthread_mutex_init(&c->mu, NULL);
	pthread_mutex_init(&c->rmu, NULL);
	pthread_mutex_init(&c->wmu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->wcv, &ca);
	pthread_condattr_destroy(&ca);
	sl_info(MOD, "cgroup v2 %s, v1 memory %s cpu %s cpuacct %s blkio %s pids %s; reader v%d; up to %zu descriptors kept",
		c->mounts.v2[0] ? c->mounts.v2 : "-", c->mounts.memory[0] ? c->mounts.memory : "-",
		c->mounts.cpu[0] ? c->mounts.cpu : "-", c->mounts.cpuacct[0] ? c->mounts.cpuacct : "-",
		c->mounts.blkio[0] ? c->mounts.blkio : "-", c->mounts.pids[0] ? c->mounts.pids : "-",
		c->mounts.use_v2 ? 2 : 1, c->fds ? max_fds : 0);
	return c;
}

int sl_stats_collect_now(struct sl_stats *c)
{
	int64_t grace = (int64_t)__atomic_load_n(&c->cfg.interval_ms, __ATOMIC_RELAXED) * 3 * 1000000;
	if (grace < 10 * (int64_t)1000000000)
		grace = 10 * (int64_t)1000000000;
	struct sl_stats_build_opts o = {
		.mounts = &c->mounts,
		.path_opts = &c->cfg.path_opts,
		.runc = c->runc,
		.k8s_roots = c->have_k8s_roots ? &c->k8s_roots : NULL,
		.runc_root = c->cfg.runc_root,
		.max_containers = c->cfg.max_containers,
		.gone_grace_ns = grace,
		.fd_cache = c->fds,
		.walk_cache = {c->walks[0], c->walks[1]},
	};

	pthread_mutex_lock(&c->mu);
	struct sl_stats_snap *prev = c->cur; /* only this mutex's holder writes it */
	struct sl_stats_snap *s = sl_stats_build(&o, prev);
	if (!s) {
		pthread_mutex_unlock(&c->mu);
		atomic_fetch_add(&c->failures, 1);
		return -ENOMEM;
	}
	/* the Prometheus text is rendered by the first /metrics request that
	 * wants this snapshot (sl_stats_prom_get), not here: at idle, and
	 * when scrapes are rarer than passes, most snapshots are never
	 * scraped */
	rcu_assign_pointer(c->cur, s);
	atomic_fetch_add(&c->passes, 1);
	{
		struct sl_cgwalk_cache_stats w0, w1;
		sl_cgwalk_cache_stats(c->walks[0], &w0);
		sl_cgwalk_cache_stats(c->walks[1], &w1);
		atomic_store(&c->walks_full, w0.walks + w1.walks);
		atomic_store(&c->walks_replayed, w0.replays + w1.replays);
		atomic_store(&c->walks_unwatched, w0.watch_failures + w1.watch_failures);
		atomic_store(&c->walks_unsettled, w0.unsettled + w1.unsettled);
	}
	pthread_mutex_unlock(&c->mu);
	if (prev) {
		synchronize_rcu(); /* every reader of prev is done */
		sl_stats_snap_free(prev);
	}
	/* A snapshot is a few large blocks (MBs at thousands of containers) made
	 * on this thread's arena; glibc keeps freed arena memory, so after a burst
	 * of containers the RSS would stay at the high-water mark. Give it back. */
	malloc_trim(0);
	return 0;
}

void sl_stats_set_slowdown(struct sl_stats *c, unsigned factor)
{
	if (c)
		atomic_store(&c->slowdown, factor ? factor : 1);
}

uint64_t sl_stats_interval_ms(struct sl_stats *c)
{
	if (!c)
		return 0;
	unsigned f = atomic_load(&c->slowdown);
	return __atomic_load_n(&c->cfg.interval_ms, __ATOMIC_RELAXED) * (f ? f : 1);
}

void sl_stats_set_interval(struct sl_stats *c, uint64_t interval_ms)
{
	if (c)
		__atomic_store_n(&c->cfg.interval_ms, interval_ms ? interval_ms : 1000, __ATOMIC_RELAXED);
}

static void *run(void *arg)
{
	struct sl_stats *c = arg;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		if (sl_stats_collect_now(c))
			sl_warn(MOD, "statistics pass failed: out of memory");
		uint64_t ns = (uint64_t)next.tv_nsec + sl_stats_interval_ms(c) * 1000000ull;
		next.tv_sec += (time_t)(ns / 1000000000ull);
		next.tv_nsec = (long)(ns % 1000000000ull);
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > next.tv_sec || (now.tv_sec == next.tv_sec && now.tv_nsec > next.tv_nsec))
			next = now; /* a pass overran the interval: do not catch up */
		pthread_mutex_lock(&c->wmu);
		while (!c->stop && pthread_cond_timedwait(&c->wcv, &c->wmu, &next) != ETIMEDOUT)
			;
		int stop = c->stop;
		pthread_mutex_unlock(&c->wmu);
		if (stop)
			break;
	}
	return NULL;
}

int sl_stats_start(struct sl_stats *c)
{
	int rc = pthread_create(&c->th, NULL, run, c);
	if (!rc) /* named for top -H and the benchmarks */
		pthread_setname_np(c->th, "sl-stats");
	if (rc)
		return -rc;
	c->started = 1;
	return 0;
}

void sl_stats_stop(struct sl_stats *c)
{
	if (!c || !c->started)
		return;
	pthread_mutex_lock(&c->wmu);
	c->stop = 1;
	pthread_cond_signal(&c->wcv);
	pthread_mutex_unlock(&c->wmu);
	pthread_join(c->th, NULL);
	c->started = 0;
}

void sl_stats_free(struct sl_stats *c)
{
	if (!c)
		return;
	sl_stats_stop(c);
	struct sl_stats_snap *s = c->cur;
	rcu_assign_pointer(c->cur, NULL);
	synchronize_rcu();
	sl_stats_snap_free(s);
	if (c->own_runc)
		sl_runc_index_free(c->runc);
	sl_guest_free(c->guest);
	sl_cgfd_cache_free(c->fds);
	sl_cgwalk_cache_free(c->walks[0]);
	sl_cgwalk_cache_free(c->walks[1]);
	pthread_mutex_destroy(&c->mu);
	pthread_mutex_destroy(&c->rmu);
	pthread_mutex_destroy(&c->wmu);
	pthread_cond_destroy(&c->wcv);
	free(c);
}

static int disabled(struct sl_stats_reply *r)
{
	memset(r, 0, sizeof(*r));
	r->status = 503;
	r->body = sl_stats_error_body("FAILED_PRECONDITION", "disabled",
				      "workload statistics are disabled (stats.enabled: false)", &r->len);
	return r->body ? 0 : -ENOMEM;
}

int sl_stats_api_workload(struct sl_stats *c, const char *id, struct sl_stats_reply *r)
{
	if (!c) {
		if (!sl_stats_id_valid(id))
			return sl_stats_answer(NULL, id, r); /* 400 first */
		return disabled(r);
	}
	rcu_read_lock();
	int rc = sl_stats_answer(rcu_dereference(c->cur), id, r);
	rcu_read_unlock();
	return rc;
}

int sl_stats_source_parse(const char *s)
{
	return !strcmp(s, "cgroup") ? SL_SRC_CGROUP : !strcmp(s, "guest_agent") ? SL_SRC_GUEST
		: !strcmp(s, "auto") ? SL_SRC_AUTO : -1;
}

int sl_stats_api_workload_source(struct sl_stats *c, const char *id, int source,
				 struct sl_stats_reply *r)
{
	if (source == SL_SRC_AUTO)
		source = c && sl_stats_id_valid(id) && sl_guest_knows(c->guest, id) ? SL_SRC_GUEST : SL_SRC_CGROUP;
	if (source != SL_SRC_GUEST)
		return sl_stats_api_workload(c, id, r);
	if (!c && sl_stats_id_valid(id))
		return disabled(r);
	return sl_guest_answer(c ? c->guest : NULL, id, r);
}

int sl_stats_api_list(struct sl_stats *c, struct sl_stats_reply *r)
{
	if (!c)
		return disabled(r);
	rcu_read_lock();
	int rc = sl_stats_list_answer(rcu_dereference(c->cur), r);
	rcu_read_unlock();
	return rc;
}

struct sl_stats_prom *sl_stats_prom_get(struct sl_stats *c)
{
	if (!c)
		return NULL;
	rcu_read_lock();
	struct sl_stats_snap *s = rcu_dereference(c->cur);
	struct sl_stats_prom *p = s ? __atomic_load_n(&s->prom, __ATOMIC_ACQUIRE) : NULL;
	if (s && !p) {
		/* first reader of this snapshot: render it, once (s stays valid:
		 * the collector frees it only after synchronize_rcu) */
		pthread_mutex_lock(&c->rmu);
		p = __atomic_load_n(&s->prom, __ATOMIC_ACQUIRE);
		if (!p) {
			uint64_t r0 = mono_ns();
			if (sl_stats_render_prom(s, SL_STATS_GZ_LEVEL) == 0) {
				p = __atomic_load_n(&s->prom, __ATOMIC_ACQUIRE);
				atomic_store(&c->render_ns, mono_ns() - r0);
				atomic_store(&c->prom_bytes, p->len);
				atomic_store(&c->prom_gz_bytes, p->gz.zlen);
			} else {
				atomic_fetch_add(&c->render_failures, 1);
			}
		}
		pthread_mutex_unlock(&c->rmu);
	}
	if (p) /* the snapshot holds a reference until after synchronize_rcu */
		atomic_fetch_add(&p->refs, 1);
	rcu_read_unlock();
	return p;
}

void sl_stats_write_self_metrics(struct sl_stats *c, struct sl_prom *p)
{
	if (!c)
		return;
	const char *n = "sandlens_stats_collections_total";
	const struct sl_prom_label ok[] = {{"result", "ok"}, {NULL, NULL}};
	const struct sl_prom_label failed[] = {{"result", "failed"}, {NULL, NULL}};
	sl_prom_family(p, n, SL_PROM_COUNTER, "Statistics passes by result.");
	sl_prom_u64(p, n, ok, atomic_load(&c->passes));
	sl_prom_u64(p, n, failed, atomic_load(&c->failures) + atomic_load(&c->render_failures));
	n = "sandlens_stats_cgroup_walks_total";
	const struct sl_prom_label wf[] = {{"kind", "full"}, {NULL, NULL}};
	const struct sl_prom_label wr[] = {{"kind", "replayed"}, {NULL, NULL}};
	sl_prom_family(p, n, SL_PROM_COUNTER,
		       "Cgroup hierarchy walks of the statistics passes: full (every directory opened and listed) or replayed (inotify saw no mkdir/rmdir since the last full walk: its directories are reused; a full walk at least every 12 passes).");
	sl_prom_u64(p, n, wf, atomic_load(&c->walks_full));
	sl_prom_u64(p, n, wr, atomic_load(&c->walks_replayed));
	n = "sandlens_stats_cgroup_walks_unreplayable_total";
	const struct sl_prom_label uw[] = {{"reason", "watch_failed"}, {NULL, NULL}};
	const struct sl_prom_label us[] = {{"reason", "unsettled"}, {NULL, NULL}};
	sl_prom_family(p, n, SL_PROM_COUNTER,
		       "Full walks whose record cannot be replayed, so the next pass walks again: watch_failed (inotify could not watch every directory: fs.inotify.max_user_watches or max_user_instances), unsettled (a directory's subdirectory count differed from what the walk listed: made during the walk, or cut by a bound).");
	sl_prom_u64(p, n, uw, atomic_load(&c->walks_unwatched));
	sl_prom_u64(p, n, us, atomic_load(&c->walks_unsettled));
	n = "sandlens_stats_render_duration_seconds";
	sl_prom_family(p, n, SL_PROM_GAUGE,
		       "Rendering the last scraped snapshot's Prometheus text and compressing it (gzip level 1), done once per snapshot by its first scrape.");
	sl_prom_decimal(p, n, NULL, (atomic_load(&c->render_ns) + 500) / 1000, 6);
	n = "sandlens_stats_exposition_bytes";
	const struct sl_prom_label id[] = {{"encoding", "identity"}, {NULL, NULL}};
	const struct sl_prom_label gz[] = {{"encoding", "gzip"}, {NULL, NULL}};
	sl_prom_family(p, n, SL_PROM_GAUGE, "Size of the last pass's container families in /metrics.");
	sl_prom_u64(p, n, id, atomic_load(&c->prom_bytes));
	sl_prom_u64(p, n, gz, atomic_load(&c->prom_gz_bytes));
}

void sl_stats_write_metrics(struct sl_stats *c, struct sl_prom *p)
{
	struct sl_stats_prom *sp = sl_stats_prom_get(c);
	if (sp)
		fwrite(sp->text, 1, sp->len, sl_prom_stream(p));
	sl_stats_prom_put(sp);
	sl_stats_write_self_metrics(c, p);
}

int sl_stats_visit(struct sl_stats *c, void (*fn)(const struct sl_stats_snap *s, void *ctx), void *ctx)
{
	if (!c)
		return -ENODEV;
	rcu_read_lock();
	const struct sl_stats_snap *s = rcu_dereference(c->cur);
	if (s)
		fn(s, ctx);
	rcu_read_unlock();
	return s ? 0 : -EAGAIN;
}

void sl_stats_test_lock(struct sl_stats *c) { pthread_mutex_lock(&c->mu); }
void sl_stats_test_unlock(struct sl_stats *c) { pthread_mutex_unlock(&c->mu); }
