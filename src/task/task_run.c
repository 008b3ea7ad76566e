/* The runner of one task (task_internal.h, docs/TASKS.md "Life of a task"):
 * resolve, attach, refresh and report progress, collect, tear down,
 * symbolize and render, store. */
#include "task/task_internal.h"
#include "common/json.h"
#include "task/task_kprof.h"
#include "profile/prof_kinds.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "profile/profile.h"
#include "sandlens/task_abi.h"
#include "task/task_bpf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MOD "tasks"
#define REFRESH_MS 1000
#define MAX_PIDS 4096

struct run {
	struct sl_task *t;
	struct sl_tasks *ts;
	struct sl_target_opts topts;
	struct sl_target_set *set; /* container / pod targets */
	char pid_container[SL_CONTAINER_ID_LEN]; /* pid / tid targets */
	size_t ncached;
	uint32_t cached[MAX_PIDS]; /* pids given to the symbolizer */
	uint32_t pids[MAX_PIDS];
	size_t npids;
};

static void wait_ms(struct sl_tasks *ts, uint64_t ms)
{
	struct timespec dl;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += (time_t)(ms / 1000);
	dl.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&ts->cond, &ts->mu, &dl);
}

/* Snapshot the maps of pids the symbolizer has not seen for this task. */
static void cache_pids(struct run *r, const uint32_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int seen = 0;
		for (size_t j = 0; j < r->ncached && !seen; j++)
			seen = r->cached[j] == pids[i];
		if (seen || r->ncached == MAX_PIDS)
			continue;
		r->cached[r->ncached++] = pids[i];
		int rc = sl_symbolizer_cache_pid(r->ts->sym, (int)pids[i]);
		if (rc && rc != -ESRCH)
			sl_debug(MOD, "task %s: symbolizer snapshot of pid %u: %s", r->t->id, pids[i],
				 strerror(-rc));
	}
}

#define MAX_EXECS 64

/* Index, by build-id, the files the target exec'd (read from the BPF
 * object under bpf_mu, opened without it). */
static void index_execs(struct run *r)
{
	struct sl_prof_exec_val ex[MAX_EXECS];
	int n;
	do {
		pthread_mutex_lock(&r->t->bpf_mu);
		n = r->t->bpf ? sl_task_bpf_read_execs(r->t->bpf, ex, MAX_EXECS) : 0;
		pthread_mutex_unlock(&r->t->bpf_mu);
		for (int i = 0; i < n; i++) {
			int pids[2] = { (int)ex[i].tgid, (int)ex[i].ppid };
			int rc = sl_symbolizer_index_file(r->ts->sym, pids, 2, ex[i].path);
			if (rc)
				sl_debug(MOD, "task %s: indexing exec'd %s: %s", r->t->id, ex[i].path,
					 strerror(-rc));
		}
	} while (n == MAX_EXECS);
}

static const char *container_of(void *ctx, uint32_t tgid, uint64_t cg2, uint64_t cg1)
{
	struct run *r = ctx;
	(void)tgid;
	if (r->set)
		return sl_target_container_of(r->set, cg2, cg1);
	return r->pid_container;
}

/* End the task: status, reason, ended time; saved and announced. */
static void finish(struct run *r, int status, const char *reason)
{
	struct sl_tasks *ts = r->ts;
	struct sl_task *t = r->t;
	struct timespec cpu;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu); /* finish() runs on the runner */
	pthread_mutex_lock(&ts->mu);
	t->cpu_ns = (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec;
	if (t->reaped) { /* the reaper ended it at the deadline (task.c) */
		pthread_mutex_unlock(&ts->mu);
		sl_info(MOD, "task %s: runner returned after the deadline (would have been %s)", t->id,
			sl_task_status_name(status));
		return;
	}
	t->status = status;
	if (reason)
		snprintf(t->reason, sizeof(t->reason), "%s", reason);
	t->ended_ns = sl_time_now_ns();
	t->seq++;
	ts->active--;
	pthread_mutex_unlock(&ts->mu);
	sl_task_save(ts, t);
	pthread_cond_broadcast(&ts->cond);
	sl_info(MOD, "task %s: %s%s%s", t->id, sl_task_status_name(status), reason ? ": " : "",
		reason ? reason : "");
	sl_tasks_notify(ts);
}

static int resolve(struct run *r, char *err, size_t errlen)
{
	struct sl_task *t = r->t;
	json_t *info = json_object();

	if (t->spec.target_kind == SL_TGT_CONTAINER || t->spec.target_kind == SL_TGT_POD) {
		r->set = calloc(1, sizeof(*r->set));
		if (!r->set) {
			json_decref(info);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		int rc = sl_target_resolve(&r->topts, t->spec.target_kind == SL_TGT_POD, t->spec.target,
					   r->set, err, errlen);
		if (rc) {
			json_decref(info);
			return rc;
		}
		if (r->set->container_id[0])
			json_object_set_new(info, "container_id", json_string(r->set->container_id));
		if (r->set->pod_uid[0])
			json_object_set_new(info, "pod_uid", json_string(r->set->pod_uid));
		json_object_set_new(info, "containers", json_integer((json_int_t)r->set->ncontainers));
		json_object_set_new(info, "cgroups", json_integer((json_int_t)r->set->n));
	} else {
		char p[64];
		struct stat st;
		snprintf(p, sizeof(p), "/proc/%u", t->spec.pid);
		if (stat(p, &st) != 0) {
			json_decref(info);
			snprintf(err, errlen, "target: no process %u", t->spec.pid);
			return -ESRCH;
		}
		sl_target_pid_container(&r->topts, NULL, t->spec.pid, r->pid_container,
					sizeof(r->pid_container));
		json_object_set_new(info, "container_id", json_string(r->pid_container));
	}
	pthread_mutex_lock(&r->ts->mu);
	t->target_info = info;
	pthread_mutex_unlock(&r->ts->mu);
	return 0;
}

/* Fill the BPF filter (all of the set, or the pid) and refresh pids. */
static void feed(struct run *r, size_t from)
{
	struct sl_task *t = r->t;
	pthread_mutex_lock(&t->bpf_mu);
	if (t->bpf) {
		if (r->set)
			for (size_t i = from; i < r->set->n; i++)
				sl_task_bpf_add_cgroup(t->bpf, r->set->cg[i].id, r->set->cg[i].hier);
		else if (from == 0)
			sl_task_bpf_add_pid(t->bpf, t->spec.pid);
	}
	pthread_mutex_unlock(&t->bpf_mu);
}

static void refresh(struct run *r)
{
	if (r->set) {
		size_t before = r->set->n;
		if (sl_target_refresh(&r->topts, r->set))
			feed(r, before);
		r->npids = sl_target_pids(&r->topts, r->set, r->pids, MAX_PIDS);
	} else {
		r->pids[0] = r->t->spec.pid;
		r->npids = 1;
	}
	if (r->t->spec.type != SL_TASK_SYSCALL_ERRORS) {
		cache_pids(r, r->pids, r->npids);
		index_execs(r);
	}
}

static json_t *progress_json(struct run *r, uint64_t elapsed_ns)
{
	struct sl_task *t = r->t;
	uint64_t ev = 0, matched = 0;
	pthread_mutex_lock(&t->bpf_mu);
	if (t->bpf) {
		int sce = t->spec.type == SL_TASK_SYSCALL_ERRORS;
		ev = sl_task_bpf_stat(t->bpf, sce ? SL_SCE_EXITS : SL_PST_EVENTS);
		matched = sl_task_bpf_stat(t->bpf, sce ? SL_SCE_ERRORS : SL_PST_MATCHED);
	}
	pthread_mutex_unlock(&t->bpf_mu);
	return json_pack("{s:f, s:I, s:I, s:I, s:I}", "elapsed_s", (double)elapsed_ns / 1e9, "events",
			 (json_int_t)ev, "matched", (json_int_t)matched, "pids", (json_int_t)r->npids,
			 "cgroups", (json_int_t)(r->set ? r->set->n : 0));
}

/* 1 when the reaper has ended the task at its deadline: a result that
 * comes later is not stored (the record says failed). */
static int was_reaped(struct run *r)
{
	pthread_mutex_lock(&r->ts->mu);
	int v = r->t->reaped;
	pthread_mutex_unlock(&r->ts->mu);
	return v;
}

/* Render p in every profile format into the store. Returns 0 or -errno. */
static int store_profile(struct run *r, const struct sl_profile *p)
{
	if (was_reaped(r))
		return -ETIMEDOUT;
	/* "pprof" with kernel addresses when root may see them now (read again
	 * when served: sl_tasks_result), SL_TASK_PPROF_NOKADDRS without */
	int kv = sl_kaddrs_visible(r->ts->cfg.sysctl_dir[0] ? r->ts->cfg.sysctl_dir : NULL, 1);
	static const char *const fmts[] = {"pprof", SL_TASK_PPROF_NOKADDRS, "folded", "svg", "json", "html"};
	/* the flame graphs' title: what was profiled, where, when */
	char host[256] = "", cids[3 * SL_CONTAINER_ID_LEN] = "";
	gethostname(host, sizeof(host) - 1);
	if (r->set && r->set->container_id[0])
		snprintf(cids, sizeof(cids), "%s%s", r->set->container_id,
			 r->set->ncontainers > 1 ? " (and others of the pod)" : "");
	else if (!r->set && r->pid_container[0])
		snprintf(cids, sizeof(cids), "%s", r->pid_container);
	char target[64] = "";
	if (!r->set)
		snprintf(target, sizeof(target), "%s %u", r->t->spec.target_kind == SL_TGT_TID ? "thread" : "process",
			 r->t->spec.pid);
	char title[128];
	snprintf(title, sizeof(title), "%s profile%s%s", p->kind == SL_PROF_OFF_CPU ? "Off-CPU" : "On-CPU",
		 target[0] ? " of " : "", target);
	struct sl_flame_opts fo = {
		.title = title,
		.container = cids,
		.pod = r->set && r->set->pod_uid[0] ? r->set->pod_uid : NULL,
		.host = host,
		.start_ns = p->start_ns,
		.end_ns = p->start_ns + p->duration_ns,
	};
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		if (!f)
			return -ENOMEM;
		int nok = !strcmp(fmts[i], SL_TASK_PPROF_NOKADDRS);
		int rc = sl_profile_write_opts(p, nok ? SL_FMT_PPROF : sl_prof_format_from_name(fmts[i]), nok ? 0 : kv,
					       &fo, f);
		if (fclose(f) && !rc)
			rc = -EIO;
		if (!rc && r->ts->store)
			rc = sl_task_store_put_result(r->ts->store, r->t->id, fmts[i], buf, len);
		free(buf);
		if (rc)
			return rc;
	}
	return 0;
}

/* Summary of a symbolized profile for the task record. */
static json_t *profile_summary(const struct sl_profile *p, json_t *dropped)
{
	json_t *top = json_object(), *ctr = json_object();
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sl_sample *s = &p->samples[i];
		const char *cid = s->container_id[0] ? s->container_id : "host";
		json_t *c = json_object_get(ctr, cid);
		json_object_set_new(ctr, cid, json_integer(json_integer_value(c) + (json_int_t)s->count));
		/* user leaf: the last frame that is not kernel text */
		for (uint32_t j = s->nframes; j-- > 0;) {
			const struct sl_frame *fr = &p->frames[s->frames[j]];
			if (fr->flags & (SL_FRAME_KERNEL | SL_FRAME_PSEUDO))
				continue;
			/* a key must be UTF-8: a symbol that is not would be dropped */
			char *key = sl_utf8_dup(fr->name);
			if (key) {
				json_t *v = json_object_get(top, key);
				json_object_set_new(top, key, json_integer(json_integer_value(v) + (json_int_t)s->count));
				free(key);
			}
			break;
		}
	}
	/* top 10 user leaves by count */
	json_t *arr = json_array();
	for (int k = 0; k < 10; k++) {
		const char *best = NULL, *key;
		json_int_t bv = -1;
		json_t *v;
		json_object_foreach(top, key, v) {
			if (json_integer_value(v) > bv) {
				bv = json_integer_value(v);
				best = key;
			}
		}
		if (!best)
			break;
		json_array_append_new(arr, json_pack("{s:s, s:I}", "function", best, "count", bv));
		json_object_del(top, best);
	}
	json_decref(top);
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:[sssss]}", "kind",
			 sl_prof_kind_info(p->kind)->name, "total_count",
			 (json_int_t)sl_profile_total_count(p), "total_ns", (json_int_t)sl_profile_total_ns(p),
			 "stacks", (json_int_t)p->nsamples, "frames", (json_int_t)p->nframes, "top_user_leaves",
			 arr, "by_container", ctr, "dropped", dropped ? dropped : json_object(), "formats", "pprof",
			 "folded", "svg", "json", "html");
}

static json_t *offcpu_split(const struct sl_profile *p)
{
	uint64_t ns[3] = {0}, cnt[3] = {0};
	for (size_t i = 0; i < p->nsamples; i++) {
		int st = p->samples[i].off_cpu_state;
		if (st >= 0 && st < 3) {
			ns[st] += p->samples[i].value_ns;
			cnt[st] += p->samples[i].count;
		}
	}
	return json_pack("{s:{s:I, s:I}, s:{s:I, s:I}}", "blocked", "ns", (json_int_t)ns[1], "count",
			 (json_int_t)cnt[1], "runqueue", "ns", (json_int_t)ns[2], "count", (json_int_t)cnt[2]);
}

/* Collect, tear down, symbolize, store. Returns 0 or -errno (reason in err). */
static int collect(struct run *r, uint64_t start_wall, uint64_t dur, char *err, size_t errlen)
{
	struct sl_task *t = r->t;
	struct sl_raw_profile *raw = NULL;
	json_t *sce = NULL, *dropped = NULL, *summary = NULL;
	int rc = 0;

	if (t->spec.type != SL_TASK_SYSCALL_ERRORS)
		index_execs(r);
	pthread_mutex_lock(&t->bpf_mu);
	if (!t->bpf) {
		pthread_mutex_unlock(&t->bpf_mu);
		snprintf(err, errlen, "BPF object destroyed before the result was read (deadline)");
		return -ETIMEDOUT;
	}
	sl_task_bpf_detach(t->bpf); /* counting stops here */
	if (t->spec.type == SL_TASK_SYSCALL_ERRORS)
		sce = sl_task_bpf_read_syscall_errors(t->bpf);
	else
		raw = sl_task_bpf_read_profile(t->bpf, start_wall, dur, container_of, r, &dropped);
	pthread_mutex_unlock(&t->bpf_mu);
	sl_task_teardown(t); /* maps freed before the (slower) symbolization */

	if (t->spec.type == SL_TASK_SYSCALL_ERRORS) {
		if (!sce) {
			snprintf(err, errlen, "reading the syscall error counts failed");
			return -ENOMEM;
		}
		json_object_set_new(sce, "duration_s", json_real((double)dur / 1e9));
		char *js = json_dumps(sce, JSON_COMPACT);
		if (js && r->ts->store)
			rc = was_reaped(r) ? -ETIMEDOUT
					   : sl_task_store_put_result(r->ts->store, t->id, "json", js, strlen(js));
		free(js);
		summary = json_pack("{s:O, s:I, s:[s]}", "dropped", json_object_get(sce, "dropped"),
				    "total_errors", json_integer_value(json_object_get(sce, "total_errors")),
				    "formats", "json");
		json_t *topn = json_array();
		json_t *errs = json_object_get(sce, "errors");
		for (size_t i = 0; i < json_array_size(errs) && i < 10; i++)
			json_array_append(topn, json_array_get(errs, i));
		json_object_set_new(summary, "top", topn);
		json_decref(sce);
	} else {
		if (!raw) {
			json_decref(dropped);
			snprintf(err, errlen, "reading the profile maps failed (out of memory)");
			return -ENOMEM;
		}
		struct sl_profile *p = sl_symbolize(r->ts->sym, raw);
		sl_raw_profile_free(raw);
		if (!p) {
			json_decref(dropped);
			snprintf(err, errlen, "symbolization failed (out of memory)");
			return -ENOMEM;
		}
		rc = store_profile(r, p);
		summary = profile_summary(p, dropped);
		if (p->kind == SL_PROF_OFF_CPU)
			json_object_set_new(summary, "off_cpu", offcpu_split(p));
		else if (sl_kprof_is_type(t->spec.type))
			sl_kprof_summarize(p, summary);
		sl_profile_free(p);
	}
	if (rc) {
		json_decref(summary);
		snprintf(err, errlen, "storing the result: %s", strerror(-rc));
		return rc;
	}
	pthread_mutex_lock(&r->ts->mu);
	json_decref(t->result);
	t->result = summary;
	pthread_mutex_unlock(&r->ts->mu);
	return 0;
}

void *sl_task_runner(void *arg)
{
	struct sl_task *t = arg;
	struct sl_tasks *ts = t->ts;
	struct run *r = calloc(1, sizeof(*r));
	char err[256] = "";
	int cancelled = 0;

	if (!r) {
		finish(&(struct run){.t = t, .ts = ts}, SL_TS_FAILED, "out of memory");
		goto out;
	}
	r->t = t;
	r->ts = ts;
	sl_task_save(ts, t); /* the pending record (sl_tasks_create leaves it to us) */
	r->topts.mounts = &ts->cfg.mounts;
	r->topts.runc = ts->cfg.runc;

	if (resolve(r, err, sizeof(err))) {
		finish(r, SL_TS_FAILED, err);
		goto out;
	}
	struct sl_task_bpf_opts bo = {
		.type = t->spec.type,
		.filter_kind = t->spec.target_kind == SL_TGT_PID   ? SL_TF_TGID
			       : t->spec.target_kind == SL_TGT_TID ? SL_TF_TID
								    : SL_TF_CGROUP,
		.hz = t->spec.hz,
		.min_off_cpu_ns = t->spec.min_off_cpu_ns,
		.fault_period = t->spec.fault_period,
		.stack_entries = ts->cfg.stack_entries,
		.count_entries = ts->cfg.count_entries,
		.v1_subsys_id = ts->cfg.v1_subsys_id,
	};
	/* symbolizer snapshots before the first sample */
	refresh(r);
	struct sl_task_bpf *b = sl_task_bpf_open(&bo, err, sizeof(err));
	if (!b) {
		finish(r, SL_TS_FAILED, err);
		goto out;
	}
	pthread_mutex_lock(&t->bpf_mu);
	t->bpf = b;
	pthread_mutex_unlock(&t->bpf_mu);
	feed(r, 0);

	uint64_t start = sl_task_mono_ns(), start_wall = (uint64_t)sl_time_now_ns();
	uint64_t end = start + t->spec.duration_ns, next = start + REFRESH_MS * 1000000ull;
	pthread_mutex_lock(&ts->mu);
	if (t->reaped) { /* ended at its deadline while it was starting */
		pthread_mutex_unlock(&ts->mu);
		finish(r, SL_TS_FAILED, NULL); /* a no-op on the record; logs */
		goto out;
	}
	t->status = SL_TS_RUNNING;
	t->started_ns = (int64_t)start_wall;
	snprintf(t->event, sizeof(t->event), "%s", sl_task_bpf_event(b));
	t->seq++;
	pthread_mutex_unlock(&ts->mu);
	sl_task_save(ts, t);
	sl_info(MOD, "task %s: running (%s, %s)", t->id, sl_task_type_name(t->spec.type), t->event);
	sl_tasks_notify(ts);

	pthread_mutex_lock(&ts->mu);
	/* tests only (sl_tasks_test_stall_runners): a runner that does not
	 * come back; never true in the agent */
	while (ts->test_stall && !ts->shutdown)
		pthread_cond_wait(&ts->cond, &ts->mu);
	for (;;) {
		uint64_t now = sl_task_mono_ns();
		if (t->cancel || now >= end)
			break;
		if (now >= next) {
			pthread_mutex_unlock(&ts->mu);
			refresh(r);
			json_t *pj = progress_json(r, now - start);
			pthread_mutex_lock(&ts->mu);
			json_decref(t->progress);
			t->progress = pj;
			t->seq++;
			next = now + REFRESH_MS * 1000000ull;
			pthread_mutex_unlock(&ts->mu);
			sl_tasks_notify(ts);
			pthread_mutex_lock(&ts->mu);
			continue;
		}
		uint64_t until = next < end ? next : end;
		wait_ms(ts, (until - now + 999999) / 1000000);
	}
	cancelled = t->cancel;
	snprintf(err, sizeof(err), "%s", t->cancel_reason);
	pthread_mutex_unlock(&ts->mu);

	uint64_t dur = sl_task_mono_ns() - start;
	if (cancelled) {
		sl_task_teardown(t);
		/* a deadline is a failure; a cancel by a client or shutdown is not */
		finish(r, strncmp(err, "deadline", 8) ? SL_TS_CANCELLED : SL_TS_FAILED, err);
		goto out;
	}
	json_t *pj = progress_json(r, dur);
	pthread_mutex_lock(&ts->mu);
	json_decref(t->progress);
	t->progress = pj;
	pthread_mutex_unlock(&ts->mu);
	if (collect(r, start_wall, dur, err, sizeof(err))) {
		sl_task_teardown(t);
		finish(r, SL_TS_FAILED, err);
		goto out;
	}
	finish(r, SL_TS_DONE, NULL);
out:
	sl_task_teardown(t); /* no path leaves BPF objects behind */
	if (r)
		free(r->set);
	free(r);
	pthread_mutex_lock(&ts->mu);
	t->finished = 1;
	pthread_cond_broadcast(&ts->cond);
	pthread_mutex_unlock(&ts->mu);
	return NULL;
}
