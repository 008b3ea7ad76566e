/* Continuous profiling: the window thread, the store and the queries
 * (cprof.h). */
#include "cprof/cprof_internal.h"
#include "cgroup/attr.h"
#include "cgroup/runc_state.h"
#include "sandlens/common.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "profile/profile.h"
#include "profile/profile_merge.h"
#include "store/prof_store.h"
#include "sandlens/cprof.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uthash.h>

#define MOD "cprof"
/* How often new processes are snapshotted and their cgroups resolved. */
#define PID_POLL_NS 1000000000ull
#define NEWPID_MAX 4096

/* A process snapshotted for the symbolizer, and in which window. */
struct seen_pid {
	UT_hash_handle hh;
	uint32_t pid;
	uint64_t window;
};

/* One container's part of a window. */
struct group {
	UT_hash_handle hh;
	char key[SL_CONTAINER_ID_LEN + SL_POD_UID_LEN + SL_RUNTIME_LEN + 4]; /* cid|pod|runtime */
	struct sl_attr at;
	struct sl_raw_profile *raw;
	uint64_t samples;
};

struct sl_cprof {
	struct sl_cprof_config cfg;
	struct sl_cprof_bpf *bpf;
	struct sl_pstore *store;
	struct sl_symbolizer *sym;
	struct sl_attr_cache *attr; /* this thread's own (the poll loop's takes no locks) */
	struct seen_pid *seen;
	uint64_t window_seq;
	uint64_t win_start_mono;
	/* the window in progress, read from the kernel every second (a
	 * buffer holds one second of stacks: the stack maps are direct-mapped
	 * hashes, a stack whose bucket holds another is lost, so the fewer
	 * distinct stacks a buffer holds, the fewer collide) */
	struct group *acc;
	int acc_oom;

	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	uint64_t flush_req, flush_done; /* sl_cprof_flush generations */

	/* figures (any thread) */
	_Atomic uint64_t windows, rows, samples, bytes_written, thread_cpu_ns, decode_errors;
	_Atomic uint64_t deleted_age, deleted_bytes, store_errors;
	_Atomic int64_t last_end_ns;
};

static uint64_t mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Attribution of a cgroup pair (this thread's cache). */
static void attribute(struct sl_cprof *cp, uint64_t cg2, uint64_t cg1, struct sl_attr *at)
{
	char path[SL_CGPATH_BYTES];
	int hier = -1;
	memset(at, 0, sizeof(*at));
	path[0] = 0;
	if (cp->attr)
		sl_attr_cache_resolve(cp->attr, cg2, cg1, mono_now(), at, path, sizeof(path), &hier);
	/* a plain runc container whose cgroup path names no runtime: the
	 * runc state index, as the event pipeline does (src/agent/pipeline.c) */
	if (cp->attr)
		sl_runc_attr_fallback(cp->cfg.runc, &cp->cfg.mounts, path, hier, at);
	if (!at->container_id[0] && !at->pod_uid[0])
		snprintf(at->runtime, sizeof(at->runtime), "host");
}

/* Snapshot the processes sampled for the first time in this window and
 * resolve their cgroups while both still exist. */
static void poll_new_pids(struct sl_cprof *cp)
{
	static struct sl_cprof_newpid np[NEWPID_MAX];
	size_t n = sl_cprof_bpf_new_pids(cp->bpf, np, NEWPID_MAX);
	for (size_t i = 0; i < n; i++) {
		struct seen_pid *e;
		struct sl_attr at;
		attribute(cp, np[i].cgroup_id, np[i].cgroup_v1_id, &at); /* fills the cache */
		HASH_FIND(hh, cp->seen, &np[i].tgid, sizeof(uint32_t), e);
		if (e && e->window == cp->window_seq)
			continue;
		if (!e) {
			e = calloc(1, sizeof(*e));
			if (!e)
				continue;
			e->pid = np[i].tgid;
			HASH_ADD(hh, cp->seen, pid, sizeof(uint32_t), e);
		}
		e->window = cp->window_seq;
		if (sl_symbolizer_cache_pid(cp->sym, (int)np[i].tgid) == 0)
			continue;
		/* gone already (a few-ms process): index the file it exec'd
		 * through its parent's root, as the task profiler does
		 * (src/task/task_run.c); its user stacks are build-id frames */
		struct sl_prof_exec_val ex;
		if (sl_cprof_bpf_exec_of(cp->bpf, np[i].tgid, &ex) == 0) {
			int pids[2] = { (int)ex.tgid, (int)ex.ppid };
			int rc = sl_symbolizer_index_file(cp->sym, pids, 2, ex.path);
			if (rc)
				sl_debug(MOD, "indexing %s exec'd by pid %u: %s", ex.path, ex.tgid, strerror(-rc));
		}
	}
}

/* Drop what is older than the last window (pids are re-snapshotted once
 * per window they are sampled in: an exec replaces the mappings). */
static void prune_seen(struct sl_cprof *cp)
{
	struct seen_pid *e, *t;
	HASH_ITER(hh, cp->seen, e, t) {
		if (e->window + 1 < cp->window_seq) {
			HASH_DEL(cp->seen, e);
			free(e);
		}
	}
}

static int on_stack(void *ctx, const struct sl_cprof_stack *s)
{
	struct sl_cprof *cp = ctx;
	struct sl_attr at;
	char key[sizeof(((struct group *)0)->key)];
	struct group *g;
	uint64_t period = 1000000000ull / cp->cfg.hz;

	attribute(cp, s->cgroup_id, s->cgroup_v1_id, &at);
	snprintf(key, sizeof(key), "%s|%s|%s", at.container_id, at.pod_uid, at.runtime);
	HASH_FIND_STR(cp->acc, key, g);
	if (!g) {
		g = calloc(1, sizeof(*g));
		/* start and duration are set when the window ends */
		if (!g || !(g->raw = sl_raw_profile_new(SL_PROF_ON_CPU, 0, 0, period))) {
			free(g);
			cp->acc_oom = 1;
			return -ENOMEM;
		}
		snprintf(g->key, sizeof(g->key), "%s", key);
		g->at = at;
		HASH_ADD_STR(cp->acc, key, g);
	}
	struct sl_raw_stack rs = {.pid = s->tgid, .user_ips = s->user_ips, .user_bid = s->user_bid, .n_user = s->n_user,
				  .kernel_ips = s->kernel_ips, .n_kernel = s->n_kernel, .count = s->count,
				  .value_ns = s->count * period};
	memcpy(rs.comm, s->comm, sizeof(rs.comm));
	rs.comm[sizeof(rs.comm) - 1] = 0;
	if (s->user_lost)
		rs.flags |= SL_RAW_USER_LOST;
	if (s->kernel_lost)
		rs.flags |= SL_RAW_KERNEL_LOST;
	snprintf(rs.container_id, sizeof(rs.container_id), "%s", at.container_id);
	if (sl_raw_profile_add(g->raw, &rs)) {
		cp->acc_oom = 1;
		return -ENOMEM;
	}
	g->samples += s->count;
	return 0;
}

/* End the window in progress at now: flip, read, symbolize, split, store,
 * retain. Window thread. */
/* Move the buffer the programs wrote since the last flip into cp->acc
 * (flip, grace period, read, clear). Window thread. */
static void drain_buffer(struct sl_cprof *cp)
{
	unsigned buf = sl_cprof_bpf_flip(cp->bpf);
	sl_cprof_bpf_drain(cp->bpf, buf, on_stack, cp);
}

static void end_window(struct sl_cprof *cp)
{
	poll_new_pids(cp); /* the last second's newcomers, while alive */
	uint64_t end_mono = mono_now();
	drain_buffer(cp);
	uint64_t start_real = (uint64_t)((int64_t)cp->win_start_mono + cp->cfg.mono_to_real_ns);
	uint64_t dur = end_mono - cp->win_start_mono;
	cp->win_start_mono = end_mono;
	cp->window_seq++;
	if (cp->acc_oom)
		sl_warn(MOD, "out of memory reading a window: part of it is lost");
	cp->acc_oom = 0;

	size_t ng = HASH_COUNT(cp->acc), nw = 0;
	struct sl_pstore_window *w = calloc(ng + 1, sizeof(*w));
	struct group *g, *t;
	uint64_t samples = 0;
	HASH_ITER(hh, cp->acc, g, t) {
		g->raw->start_ns = start_real;
		g->raw->duration_ns = dur;
		struct sl_profile *p = w ? sl_symbolize(cp->sym, g->raw) : NULL;
		char *body = NULL;
		size_t len = 0;
		FILE *f = p ? open_memstream(&body, &len) : NULL;
		/* stored with kernel addresses (the file is the agent's, 0600):
		 * the routes zero them for callers who may not see them */
		int rc = f ? sl_profile_write_pprof(p, 1, f) : -ENOMEM;
		if (f && fclose(f))
			rc = -EIO;
		if (!rc) {
			struct sl_pstore_window *x = &w[nw++];
			x->start_ns = (int64_t)start_real;
			x->end_ns = (int64_t)(start_real + dur);
			snprintf(x->kind, sizeof(x->kind), "on_cpu");
			snprintf(x->container_id, sizeof(x->container_id), "%s", g->at.container_id);
			snprintf(x->pod_uid, sizeof(x->pod_uid), "%s", g->at.pod_uid);
			snprintf(x->runtime, sizeof(x->runtime), "%s", g->at.runtime);
			x->samples = g->samples;
			x->body = body;
			x->len = len;
			samples += g->samples;
		} else {
			free(body);
		}
		sl_profile_free(p);
		sl_raw_profile_free(g->raw);
		HASH_DEL(cp->acc, g);
		free(g);
	}
	if (nw && sl_pstore_put(cp->store, w, nw)) {
		atomic_fetch_add(&cp->store_errors, 1);
		sl_warn(MOD, "storing %zu profile windows failed", nw);
	} else {
		uint64_t bytes = 0;
		for (size_t i = 0; i < nw; i++)
			bytes += w[i].len;
		atomic_fetch_add(&cp->rows, nw);
		atomic_fetch_add(&cp->bytes_written, bytes);
	}
	sl_pstore_windows_free(w, nw);
	uint64_t da = 0, db = 0;
	if (sl_pstore_retain(cp->store, (int64_t)(end_mono + (uint64_t)cp->cfg.mono_to_real_ns), cp->cfg.max_age_ns,
			     cp->cfg.max_bytes, &da, &db))
		atomic_fetch_add(&cp->store_errors, 1);
	atomic_fetch_add(&cp->deleted_age, da);
	atomic_fetch_add(&cp->deleted_bytes, db);
	atomic_fetch_add(&cp->samples, samples);
	atomic_store(&cp->last_end_ns, (int64_t)(start_real + dur));
	atomic_fetch_add(&cp->windows, 1);
	prune_seen(cp);
	atomic_store(&cp->thread_cpu_ns, thread_cpu_now());
}

static void *window_thread(void *arg)
{
	struct sl_cprof *cp = arg;
	uint64_t next_poll = mono_now() + PID_POLL_NS;
	pthread_mutex_lock(&cp->mu);
	for (;;) {
		uint64_t now = mono_now(), wend = cp->win_start_mono + cp->cfg.window_ns;
		int flush = cp->flush_req != cp->flush_done;
		if (cp->stop || flush || now >= wend) {
			uint64_t req = cp->flush_req;
			int stop = cp->stop;
			pthread_mutex_unlock(&cp->mu);
			end_window(cp);
			pthread_mutex_lock(&cp->mu);
			cp->flush_done = req;
			pthread_cond_broadcast(&cp->cv);
			if (stop)
				break;
			continue;
		}
		if (now >= next_poll) {
			pthread_mutex_unlock(&cp->mu);
			poll_new_pids(cp);
			drain_buffer(cp);
			pthread_mutex_lock(&cp->mu);
			next_poll = now + PID_POLL_NS;
			continue;
		}
		uint64_t until = next_poll < wend ? next_poll : wend;
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t abs_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + (until - now);
		ts.tv_sec = (time_t)(abs_ns / 1000000000ull);
		ts.tv_nsec = (long)(abs_ns % 1000000000ull);
		pthread_cond_timedwait(&cp->cv, &cp->mu, &ts);
	}
	pthread_mutex_unlock(&cp->mu);
	return NULL;
}

void sl_cprof_free(struct sl_cprof *cp)
{
	if (!cp)
		return;
	if (cp->started) {
		pthread_mutex_lock(&cp->mu);
		cp->stop = 1;
		pthread_cond_broadcast(&cp->cv);
		pthread_mutex_unlock(&cp->mu);
		pthread_join(cp->thread, NULL);
	}
	struct group *g, *gt;
	HASH_ITER(hh, cp->acc, g, gt) {
		HASH_DEL(cp->acc, g);
		sl_raw_profile_free(g->raw);
		free(g);
	}
	sl_cprof_bpf_destroy(cp->bpf);
	sl_pstore_close(cp->store);
	sl_symbolizer_free(cp->sym);
	sl_attr_cache_free(cp->attr);
	struct seen_pid *e, *t;
	HASH_ITER(hh, cp->seen, e, t) {
		HASH_DEL(cp->seen, e);
		free(e);
	}
	pthread_cond_destroy(&cp->cv);
	pthread_mutex_destroy(&cp->mu);
	free(cp);
}

struct sl_cprof *sl_cprof_new(const struct sl_cprof_config *c, char *err, size_t errlen)
{
	struct sl_cprof *cp = calloc(1, sizeof(*cp));
	if (!cp) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	cp->cfg = *c;
	if (!cp->cfg.hz)
		cp->cfg.hz = 19;
	if (!cp->cfg.window_ns)
		cp->cfg.window_ns = 10000000000ull;
	pthread_mutex_init(&cp->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cp->cv, &ca);
	pthread_condattr_destroy(&ca);
	char e2[400];
	cp->store = sl_pstore_open(c->db_path, e2, sizeof(e2));
	if (!cp->store) {
		snprintf(err, errlen, "window store: %s", e2);
		goto fail;
	}
	cp->sym = sl_symbolizer_new(NULL);
	if (!cp->sym) {
		snprintf(err, errlen, "symbolizer: out of memory");
		goto fail;
	}
	if (c->attribution) {
		struct sl_attr_cache_config cc = {
			.capacity = c->attr_cache_size ? c->attr_cache_size : 4096,
			.positive_ttl_ns = 300000000000ull,
			.negative_ttl_ns = 30000000000ull,
			.rewalk_interval_ns = 1000000000ull,
			.runc = c->runc,
		};
		cp->attr = sl_attr_cache_new(&cc, &cp->cfg.mounts);
	}
	cp->bpf = sl_cprof_bpf_open(cp->cfg.hz, c->stack_entries ? c->stack_entries : 4096,
				    c->count_entries ? c->count_entries : 8192, c->v1_subsys_id, err, errlen);
	if (!cp->bpf)
		goto fail;
	cp->win_start_mono = mono_now();
	if (pthread_create(&cp->thread, NULL, window_thread, cp)) {
		snprintf(err, errlen, "cannot start the window thread");
		goto fail;
	}
	cp->started = 1;
	return cp;
fail:
	sl_cprof_free(cp);
	return NULL;
}

int sl_cprof_flush(struct sl_cprof *cp)
{
	if (!cp)
		return -ENODEV;
	pthread_mutex_lock(&cp->mu);
	uint64_t gen = ++cp->flush_req;
	pthread_cond_broadcast(&cp->cv);
	while (cp->flush_done < gen && !cp->stop)
		pthread_cond_wait(&cp->cv, &cp->mu);
	pthread_mutex_unlock(&cp->mu);
	return 0;
}

/* The stored windows of a selection; resolves a container prefix. */
static int select_windows(struct sl_cprof *cp, int scope, const char *id, int64_t since_ns, int64_t until_ns,
			  int with_body, size_t max, struct sl_pstore_window **w, size_t *n, char *err,
			  size_t errlen)
{
	char cid[SL_CONTAINER_ID_LEN];
	struct sl_pstore_sel sel = {.scope = scope, .id = id, .kind = "on_cpu", .since_ns = since_ns,
				    .until_ns = until_ns};
	if (scope == SL_CPROF_CONTAINER) {
		int rc = sl_pstore_resolve_container(cp->store, id ? id : "", cid, sizeof(cid));
		if (rc == -ENOENT) {
			snprintf(err, errlen, "no stored profile window of container '%.100s'", id ? id : "");
			return rc;
		}
		if (rc == -EINVAL) {
			snprintf(err, errlen, "container '%.100s' matches more than one container: give more of its id",
				 id);
			return rc;
		}
		if (rc) {
			snprintf(err, errlen, "window store query failed");
			return rc;
		}
		sel.id = cid;
	}
	int rc = sl_pstore_query(cp->store, &sel, with_body, max, w, n);
	if (rc) {
		snprintf(err, errlen, "window store query failed: %s", strerror(-rc));
		return rc;
	}
	return 0;
}

void sl_cprof_none_msg(int scope, const char *id, int64_t since_ns, int64_t until_ns, char *err, size_t errlen)
{
	char who[160], when[120], a[40] = "", b[40] = "";
	if (scope == SL_CPROF_CONTAINER)
		snprintf(who, sizeof(who), "container '%.100s'", id ? id : "");
	else if (scope == SL_CPROF_POD)
		snprintf(who, sizeof(who), "pod '%.100s'", id ? id : "");
	else
		snprintf(who, sizeof(who), "the host");
	if (since_ns > 0)
		sl_time_format(since_ns, a, sizeof(a));
	if (until_ns > 0)
		sl_time_format(until_ns, b, sizeof(b));
	if (a[0] && b[0])
		snprintf(when, sizeof(when), "overlapping [%s, %s)", a, b);
	else if (a[0])
		snprintf(when, sizeof(when), "since %s", a);
	else if (b[0])
		snprintf(when, sizeof(when), "before %s", b);
	else
		snprintf(when, sizeof(when), "at any time (no since/until given)");
	snprintf(err, errlen, "no stored profile window of %s %s%s", who, when,
		 scope == SL_CPROF_POD ? ": pod= takes the pod's exact uid (not its name or a prefix); "
					 "GET /api/v1/profiles/windows?pod=UID lists its stored windows"
				       : ": GET /api/v1/profiles/windows lists the stored ones");
}

int sl_cprof_query(struct sl_cprof *cp, int scope, const char *id, int64_t since_ns, int64_t until_ns,
		   struct sl_profile **out, size_t *nwindows, char *err, size_t errlen)
{
	struct sl_pstore_window *w = NULL;
	size_t n = 0, np = 0;
	*out = NULL;
	if (nwindows)
		*nwindows = 0;
	if (!cp) {
		snprintf(err, errlen, "continuous profiling is off");
		return -ENOENT;
	}
	int rc = select_windows(cp, scope, id, since_ns, until_ns, 1, 0, &w, &n, err, errlen);
	if (rc)
		return rc;
	if (!n) {
		sl_cprof_none_msg(scope, id, since_ns, until_ns, err, errlen);
		return -ENOENT;
	}
	struct sl_profile **v = calloc(n, sizeof(*v));
	if (!v) {
		sl_pstore_windows_free(w, n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		int e;
		v[np] = sl_profile_read_pprof(w[i].body, w[i].len, &e);
		if (v[np])
			np++;
		else if (e == -ENOMEM)
			rc = -ENOMEM;
		else
			atomic_fetch_add(&cp->decode_errors, 1);
	}
	sl_pstore_windows_free(w, n);
	if (!rc && np) {
		int e;
		*out = sl_profile_merge((const struct sl_profile *const *)v, np, &e);
		rc = *out ? 0 : e;
	} else if (!rc) {
		snprintf(err, errlen, "no stored profile window could be read");
		rc = -EIO;
	}
	for (size_t i = 0; i < np; i++)
		sl_profile_free(v[i]);
	free(v);
	if (!rc && nwindows)
		*nwindows = np;
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	return rc;
}

int sl_cprof_range(struct sl_cprof *cp, const char *container_id, uint64_t from_ns, uint64_t to_ns,
		   struct sl_profile **out)
{
	char err[256];
	if (!cp || !container_id) {
		*out = NULL;
		return -ENOENT;
	}
	return sl_cprof_query(cp, SL_CPROF_CONTAINER, container_id, (int64_t)from_ns, (int64_t)to_ns, out, NULL,
			      err, sizeof(err));
}

json_t *sl_cprof_windows_json(struct sl_cprof *cp, int scope, const char *id, int64_t since_ns, int64_t until_ns,
			      size_t limit, unsigned *status, char *err, size_t errlen)
{
	struct sl_pstore_window *w = NULL;
	size_t n = 0;
	if (!cp) {
		*status = 503;
		snprintf(err, errlen, "continuous profiling is off");
		return NULL;
	}
	int rc = select_windows(cp, scope, id, since_ns, until_ns, 0, limit ? limit : 10000, &w, &n, err, errlen);
	if (rc == -ENOENT) { /* no such container: an empty list */
		w = NULL;
		n = 0;
	} else if (rc) {
		*status = rc == -EINVAL ? 400 : 500;
		return NULL;
	}
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < n; i++) {
		char s[40], e[40];
		sl_time_format(w[i].start_ns, s, sizeof(s));
		sl_time_format(w[i].end_ns, e, sizeof(e));
		json_array_append_new(arr, json_pack("{s:I, s:s, s:s, s:I, s:I, s:s, s:s, s:s, s:s, s:I, s:I}", "id",
						     (json_int_t)w[i].id, "start", s, "end", e, "start_ns",
						     (json_int_t)w[i].start_ns, "end_ns", (json_int_t)w[i].end_ns, "kind",
						     w[i].kind, "container_id", w[i].container_id, "pod_uid",
						     w[i].pod_uid, "runtime", w[i].runtime, "samples",
						     (json_int_t)w[i].samples, "bytes", (json_int_t)w[i].len));
	}
	sl_pstore_windows_free(w, n);
	if (!arr) {
		*status = 500;
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	return json_pack("{s:o, s:I}", "windows", arr, "count", (json_int_t)n);
}

void sl_cprof_cost(struct sl_cprof *cp, uint64_t *thread_cpu_ns, uint64_t *windows)
{
	*thread_cpu_ns = cp ? atomic_load(&cp->thread_cpu_ns) : 0;
	*windows = cp ? atomic_load(&cp->windows) : 0;
}

json_t *sl_cprof_health_json(struct sl_cprof *cp, int enabled, const char *err_if_null)
{
	if (!cp) {
		const char *st = enabled ? "failed" : "disabled";
		return json_pack("{s:b, s:s, s:s?, s:[{s:s, s:s, s:s?}]}", "enabled", enabled, "state", st, "reason",
				 enabled ? (err_if_null ? err_if_null : "not started") : NULL, "hooks", "name",
				 "perf_event", "state", st, "reason",
				 enabled ? (err_if_null ? err_if_null : "not started") : NULL);
	}
	char hook[64], last[40] = "";
	uint64_t used = 0, file = 0, nwin = 0;
	snprintf(hook, sizeof(hook), "perf_event/%s", sl_cprof_bpf_event(cp->bpf));
	int64_t le = atomic_load(&cp->last_end_ns);
	if (le)
		sl_time_format(le, last, sizeof(last));
	sl_pstore_size(cp->store, &used, &file, &nwin);
	const char *xerr = sl_cprof_bpf_exec_error(cp->bpf);
	return json_pack(
		"{s:b, s:s, s:[{s:s, s:s}, {s:s, s:s, s:s?}], s:s, s:I, s:I, s:I, s:s?, s:I, s:I, s:{s:I, s:I, s:I, s:I, s:I}, s:{s:I, s:I, s:I, s:I, s:I, s:I}}",
		"enabled", 1, "state", "running", "hooks", "name", hook, "state", "attached", "name",
		"tp_btf/sched_process_exec", "state", xerr ? "degraded" : "attached", "reason", xerr, "event",
		sl_cprof_bpf_event(cp->bpf), "hz", (json_int_t)cp->cfg.hz, "window_seconds",
		(json_int_t)(cp->cfg.window_ns / 1000000000ull), "windows_ended", (json_int_t)atomic_load(&cp->windows),
		"last_window_end", le ? last : NULL, "samples", (json_int_t)atomic_load(&cp->samples),
		"thread_cpu_ns", (json_int_t)atomic_load(&cp->thread_cpu_ns), "lost", "counts_full",
		(json_int_t)sl_cprof_bpf_stat(cp->bpf, SL_CPST_COUNTS_FULL), "user_stack_lost",
		(json_int_t)sl_cprof_bpf_stat(cp->bpf, SL_CPST_USTACK_LOST), "kernel_stack_lost",
		(json_int_t)sl_cprof_bpf_stat(cp->bpf, SL_CPST_KSTACK_LOST), "pids_full",
		(json_int_t)sl_cprof_bpf_stat(cp->bpf, SL_CPST_PIDS_FULL), "undecodable_windows",
		(json_int_t)atomic_load(&cp->decode_errors), "store", "windows", (json_int_t)nwin, "used_bytes",
		(json_int_t)used, "file_bytes", (json_int_t)file, "bytes_written", (json_int_t)atomic_load(&cp->bytes_written),
		"deleted_age", (json_int_t)atomic_load(&cp->deleted_age), "deleted_bytes",
		(json_int_t)atomic_load(&cp->deleted_bytes));
}
