/* The task executor: registry, limits, API entry points, the reaper
 * (task.h, docs/TASKS.md). The runner of each task is in task_run.c. */
#include "task/task_internal.h"
#include "common/log.h"
#include "common/timefmt.h"
#include "profile/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define MOD "tasks"
#define REAPER_PERIOD_MS 250
#define RETENTION_PERIOD_MS 60000
#define DELETE_WAIT_MS 5000
#define LIST_MAX 1000

uint64_t sl_task_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct timespec abs_after_ms(uint64_t ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

static void set_time(json_t *o, const char *key, int64_t ns)
{
	char buf[SL_TIME_RFC3339_MAX];
	if (ns && sl_time_format(ns, buf, sizeof(buf)) > 0)
		json_object_set_new(o, key, json_string(buf));
	else
		json_object_set_new(o, key, json_null());
}

json_t *sl_task_record(const struct sl_task *t)
{
	const struct sl_task_spec *s = &t->spec;
	json_t *o = json_object(), *tg = json_object();

	json_object_set_new(o, "id", json_string(t->id));
	json_object_set_new(o, "type", json_string(sl_task_type_name(s->type)));
	json_object_set_new(o, "status", json_string(sl_task_status_name(t->status)));
	if (t->reason[0])
		json_object_set_new(o, "reason", json_string(t->reason));
	switch (s->target_kind) {
	case SL_TGT_CONTAINER: json_object_set_new(tg, "container", json_string(s->target)); break;
	case SL_TGT_POD: json_object_set_new(tg, "pod", json_string(s->target)); break;
	case SL_TGT_PID: json_object_set_new(tg, "pid", json_integer(s->pid)); break;
	default: json_object_set_new(tg, "tid", json_integer(s->pid)); break;
	}
	json_object_set_new(o, "target", tg);
	if (t->target_info)
		json_object_set(o, "resolved", t->target_info);
	json_object_set_new(o, "duration_s", json_real((double)s->duration_ns / 1e9));
	if (s->type == SL_TASK_PROFILE_ON_CPU)
		json_object_set_new(o, "hz", json_integer(s->hz));
	if (s->type == SL_TASK_PROFILE_OFF_CPU)
		json_object_set_new(o, "min_off_cpu_us", json_integer((json_int_t)(s->min_off_cpu_ns / 1000)));
	if (s->type == SL_TASK_PROFILE_PAGE_FAULTS)
		json_object_set_new(o, "fault_period", json_integer(s->fault_period));
	json_object_set_new(o, "follow", json_boolean(s->follow));
	if (t->event[0])
		json_object_set_new(o, "event", json_string(t->event));
	json_object_set_new(o, "created_ns", json_integer(t->created_ns));
	set_time(o, "created_at", t->created_ns);
	set_time(o, "started_at", t->started_ns);
	set_time(o, "ended_at", t->ended_ns);
	set_time(o, "deadline_at",
		 t->created_ns + (int64_t)(t->deadline_mono - t->created_mono));
	if (t->progress)
		json_object_set(o, "progress", t->progress);
	if (t->ended_ns)
		json_object_set_new(o, "agent_cpu_s", json_real((double)t->cpu_ns / 1e9));
	if (t->result)
		json_object_set(o, "result", t->result);
	return o;
}

void sl_task_save(struct sl_tasks *ts, struct sl_task *t)
{
	pthread_mutex_lock(&ts->mu);
	json_t *r = sl_task_record(t);
	int64_t created = t->created_ns, ended = t->ended_ns;
	const char *st = sl_task_status_name(t->status);
	int deleted = t->deleted;
	pthread_mutex_unlock(&ts->mu);
	if (!deleted && ts->store)
		sl_task_store_put(ts->store, t->id, created, ended, st, r);
	json_decref(r);
}

void sl_tasks_notify(struct sl_tasks *ts)
{
	void (*fn)(void *);
	void *ctx;
	pthread_mutex_lock(&ts->mu);
	fn = ts->notify;
	ctx = ts->notify_ctx;
	pthread_mutex_unlock(&ts->mu);
	if (fn)
		fn(ctx);
}

void sl_tasks_set_notify(struct sl_tasks *ts, void (*fn)(void *), void *ctx)
{
	pthread_mutex_lock(&ts->mu);
	ts->notify = fn;
	ts->notify_ctx = ctx;
	pthread_mutex_unlock(&ts->mu);
}

int sl_task_teardown(struct sl_task *t)
{
	pthread_mutex_lock(&t->bpf_mu);
	struct sl_task_bpf *b = t->bpf;
	t->bpf = NULL;
	sl_task_bpf_destroy(b);
	pthread_mutex_unlock(&t->bpf_mu);
	if (b)
		pthread_cond_broadcast(&t->ts->cond);
	return b != NULL;
}

static void task_free(struct sl_task *t)
{
	json_decref(t->progress);
	json_decref(t->result);
	json_decref(t->target_info);
	pthread_mutex_destroy(&t->bpf_mu);
	free(t);
}

/* References (task_internal.h "Lifetime"); both with ts->mu held. */
static void task_hold(struct sl_task *t)
{
	t->refs++;
}

/* Drops one reference; frees t when it was the last. */
static void task_unref(struct sl_task *t)
{
	if (--t->refs == 0)
		task_free(t);
}

/* Reaper: deadlines, joins, retention. */
/* A task past its deadline whose runner has not ended it: ended now, failed
 * with the deadline reason (or cancelled, when a cancel was pending). Its slot is free again (active--); the runner's
 * finish() sees `reaped` and leaves the record alone. */
static void end_overdue(struct sl_tasks *ts, struct sl_task *t)
{
	char reason[sizeof(t->reason)];
	int st = 0;
	pthread_mutex_lock(&ts->mu);
	int end = !t->reaped && (t->status == SL_TS_PENDING || t->status == SL_TS_RUNNING);
	if (end) {
		t->reaped = 1;
		/* a cancel (client, shutdown, lost follow client) that was already
		 * pending is what ends it; else the deadline, a failure */
		t->status = strncmp(t->cancel_reason, "deadline", 8) ? SL_TS_CANCELLED : SL_TS_FAILED;
		snprintf(t->reason, sizeof(t->reason), "%s", t->cancel_reason);
		t->ended_ns = sl_time_now_ns();
		t->seq++;
		ts->active--;
		st = t->status;
		memcpy(reason, t->reason, sizeof(reason));
	}
	pthread_mutex_unlock(&ts->mu);
	if (!end)
		return;
	sl_task_save(ts, t);
	pthread_cond_broadcast(&ts->cond);
	sl_warn(MOD, "task %s: %s: %s", t->id, sl_task_status_name(st), reason);
	sl_tasks_notify(ts);
}

static void *reaper_main(void *arg)
{
	struct sl_tasks *ts = arg;
	uint64_t last_retention = 0;

	pthread_mutex_lock(&ts->mu);
	while (!ts->shutdown || ts->tasks) {
		uint64_t now = sl_task_mono_ns();
		struct sl_task *t, *tmp, *overdue[64];
		struct sl_task *done[64];
		size_t nover = 0, ndone = 0;

		HASH_ITER(hh, ts->tasks, t, tmp) {
			if (!t->finished && now > t->deadline_mono && nover < 64)
				overdue[nover++] = t;
			if (t->finished && ndone < 64)
				done[ndone++] = t;
		}
		for (size_t i = 0; i < nover; i++) {
			t = overdue[i];
			if (!t->cancel) {
				t->cancel = 1;
				snprintf(t->cancel_reason, sizeof(t->cancel_reason),
					 "deadline exceeded: still running %.1f s after its deadline (duration + tasks.deadline_grace)",
					 (double)(now - t->deadline_mono) / 1e9);
			}
		}
		pthread_cond_broadcast(&ts->cond);
		pthread_mutex_unlock(&ts->mu);

		/* The reaper itself destroys the BPF objects of overdue tasks:
		 * a runner that does not come back cannot keep probes alive,
		 * and the record says failed now, not when (if) it returns. */
		for (size_t i = 0; i < nover; i++) {
			if (sl_task_teardown(overdue[i])) {
				atomic_fetch_add(&ts->reaped_total, 1);
				sl_warn(MOD, "task %s: deadline exceeded, BPF links and maps destroyed by the reaper",
					overdue[i]->id);
			}
			end_overdue(ts, overdue[i]);
		}
		for (size_t i = 0; i < ndone; i++)
			pthread_join(done[i]->thread, NULL);
		if (ts->store && now - last_retention > RETENTION_PERIOD_MS * 1000000ull) {
			last_retention = now;
			int n = sl_task_store_retain(ts->store, sl_time_now_ns(), ts->cfg.retention_ns,
						     ts->cfg.max_records);
			if (n > 0)
				sl_info(MOD, "retention removed %d task records", n);
		}
		sl_tasks_notify(ts); /* at least every period: follow streams write progress */

		pthread_mutex_lock(&ts->mu);
		for (size_t i = 0; i < ndone; i++) {
			t = done[i];
			HASH_DEL(ts->tasks, t);
			if (t->deleted && ts->store) {
				pthread_mutex_unlock(&ts->mu);
				sl_task_store_delete(ts->store, t->id);
				pthread_mutex_lock(&ts->mu);
			}
			task_unref(t); /* a DELETE still waiting holds its own */
		}
		if (ts->shutdown && !ts->tasks)
			break;
		struct timespec dl = abs_after_ms(REAPER_PERIOD_MS);
		pthread_cond_timedwait(&ts->cond, &ts->mu, &dl);
	}
	pthread_mutex_unlock(&ts->mu);
	return NULL;
}

struct sl_tasks *sl_tasks_new(const struct sl_tasks_config *cfg, char *err, size_t errlen)
{
	struct sl_tasks *ts = calloc(1, sizeof(*ts));
	pthread_condattr_t ca;

	if (!ts) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ts->cfg = *cfg;
	if (!ts->cfg.max_concurrent)
		ts->cfg.max_concurrent = 4;
	pthread_mutex_init(&ts->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ts->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (cfg->db_path[0]) {
		ts->store = sl_task_store_open(cfg->db_path, err, errlen);
		if (!ts->store)
			goto fail;
	}
	ts->sym = cfg->sym;
	if (!ts->sym) {
		struct sl_sym_config sc = { .debuginfod_urls = cfg->debuginfod_urls,
					    .debuginfod_cache = cfg->debuginfod_cache,
					    .debuginfod_timeout_s = cfg->debuginfod_timeout_s };
		ts->sym = sl_symbolizer_new(&sc);
		ts->own_sym = 1;
		if (!ts->sym) {
			snprintf(err, errlen, "symbolizer: out of memory");
			goto fail;
		}
	}
	sl_tasks_probe(ts);
	if (pthread_create(&ts->reaper, NULL, reaper_main, ts)) {
		snprintf(err, errlen, "cannot start the reaper thread");
		goto fail;
	}
	ts->reaper_started = 1;
	pthread_setname_np(ts->reaper, "sl-task-reaper");
	return ts;
fail:
	if (ts->own_sym)
		sl_symbolizer_free(ts->sym);
	sl_task_store_close(ts->store);
	pthread_cond_destroy(&ts->cond);
	pthread_mutex_destroy(&ts->mu);
	free(ts);
	return NULL;
}

void sl_tasks_shutdown(struct sl_tasks *ts)
{
	struct sl_task *t, *tmp;
	if (!ts)
		return;
	pthread_mutex_lock(&ts->mu);
	ts->shutdown = 1;
	HASH_ITER(hh, ts->tasks, t, tmp) {
		if (!t->cancel) {
			t->cancel = 1;
			snprintf(t->cancel_reason, sizeof(t->cancel_reason), "agent shutting down");
		}
	}
	pthread_cond_broadcast(&ts->cond);
	pthread_mutex_unlock(&ts->mu);
}

int sl_tasks_wait_idle(struct sl_tasks *ts, unsigned timeout_ms)
{
	if (!ts)
		return 0;
	struct timespec dl = abs_after_ms(timeout_ms);
	pthread_mutex_lock(&ts->mu);
	while (ts->active > 0)
		if (pthread_cond_timedwait(&ts->cond, &ts->mu, &dl) == ETIMEDOUT)
			break;
	int left = ts->active;
	pthread_mutex_unlock(&ts->mu);
	return left;
}

void sl_tasks_free(struct sl_tasks *ts)
{
	if (!ts)
		return;
	sl_tasks_shutdown(ts);
	if (ts->reaper_started)
		pthread_join(ts->reaper, NULL); /* returns once every runner was joined */
	if (ts->own_sym)
		sl_symbolizer_free(ts->sym);
	sl_task_store_close(ts->store);
	pthread_cond_destroy(&ts->cond);
	pthread_mutex_destroy(&ts->mu);
	free(ts);
}

size_t sl_tasks_active(struct sl_tasks *ts)
{
	pthread_mutex_lock(&ts->mu);
	size_t n = ts->active;
	pthread_mutex_unlock(&ts->mu);
	return n;
}

void sl_tasks_test_stall_runners(struct sl_tasks *ts, int on)
{
	pthread_mutex_lock(&ts->mu);
	ts->test_stall = on != 0;
	pthread_cond_broadcast(&ts->cond);
	pthread_mutex_unlock(&ts->mu);
}

void sl_tasks_test_delete_lets_reaper_win(struct sl_tasks *ts, int on)
{
	pthread_mutex_lock(&ts->mu);
	ts->test_reaper_wins = on != 0;
	pthread_mutex_unlock(&ts->mu);
}

/* sl_tasks_test_delete_lets_reaper_win: with ts->mu held, wait (releasing
 * it) until task id is no longer in the registry, at most 10 s. */
static void test_wait_reaped(struct sl_tasks *ts, const char *id)
{
	struct sl_task *x = NULL;
	for (int i = 0; i < 500; i++) {
		HASH_FIND_STR(ts->tasks, id, x);
		if (!x)
			return;
		struct timespec dl = abs_after_ms(20);
		pthread_cond_timedwait(&ts->cond, &ts->mu, &dl);
	}
}

static void new_id(char *id)
{
	unsigned char r[8];
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		uint64_t x = sl_task_mono_ns() ^ ((uint64_t)getpid() << 32);
		memcpy(r, &x, sizeof(r));
	}
	snprintf(id, SL_TASK_ID_LEN, "t-%02x%02x%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3], r[4],
		 r[5], r[6], r[7]);
}

int sl_tasks_create(struct sl_tasks *ts, const struct sl_task_spec *spec, char *id, char *err,
		    size_t errlen)
{
	if (spec->type < 0 || spec->type >= SL_TASK_NTYPES) {
		snprintf(err, errlen, "unknown task type");
		return -EINVAL;
	}
	if (!ts->supported[spec->type]) {
		snprintf(err, errlen, "%s is not supported on this kernel: %s", sl_task_type_name(spec->type),
			 ts->why[spec->type]);
		return -ENOTSUP;
	}
	struct sl_task *t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	t->ts = ts;
	t->spec = *spec;
	pthread_mutex_init(&t->bpf_mu, NULL);
	pthread_mutex_lock(&ts->mu);
	if (ts->shutdown) {
		pthread_mutex_unlock(&ts->mu);
		task_free(t);
		snprintf(err, errlen, "the agent is shutting down");
		return -ESHUTDOWN;
	}
	if (ts->active >= ts->cfg.max_concurrent) {
		size_t a = ts->active;
		pthread_mutex_unlock(&ts->mu);
		task_free(t);
		atomic_fetch_add(&ts->refused_total, 1);
		snprintf(err, errlen, "%zu tasks are active, the limit is %zu (tasks.max_concurrent_tasks)", a,
			 ts->cfg.max_concurrent);
		return -EBUSY;
	}
	for (struct sl_task *o = t; o;) {
		new_id(t->id);
		HASH_FIND_STR(ts->tasks, t->id, o);
	}
	t->status = SL_TS_PENDING;
	t->created_ns = sl_time_now_ns();
	t->created_mono = sl_task_mono_ns();
	t->deadline_mono = t->created_mono + spec->duration_ns + ts->cfg.grace_ns;
	HASH_ADD_STR(ts->tasks, id, t);
	t->refs = 1; /* the registry's */
	ts->active++;
	int rc = pthread_create(&t->thread, NULL, sl_task_runner, t);
	if (!rc)
		pthread_setname_np(t->thread, "sl-task");
	if (rc) {
		HASH_DEL(ts->tasks, t);
		ts->active--;
		pthread_mutex_unlock(&ts->mu);
		task_free(t);
		snprintf(err, errlen, "cannot start the task thread: %s", strerror(rc));
		return -EAGAIN;
	}
	snprintf(id, SL_TASK_ID_LEN, "%s", t->id);
	pthread_mutex_unlock(&ts->mu);
	/* t is not touched from here on: its runner may already have ended it
	 * and the reaper forgotten it. The runner stores the first record. */
	atomic_fetch_add(&ts->created_total, 1);
	sl_info(MOD, "task %s: %s created", id, sl_task_type_name(spec->type));
	return 0;
}

json_t *sl_tasks_get(struct sl_tasks *ts, const char *id)
{
	struct sl_task *t;
	json_t *r = NULL;
	pthread_mutex_lock(&ts->mu);
	HASH_FIND_STR(ts->tasks, id, t);
	if (t && !t->deleted)
		r = sl_task_record(t);
	pthread_mutex_unlock(&ts->mu);
	if (!r && !t && ts->store)
		r = sl_task_store_get(ts->store, id);
	return r;
}

json_t *sl_tasks_list(struct sl_tasks *ts)
{
	json_t *stored = ts->store ? sl_task_store_list(ts->store, LIST_MAX) : json_array();
	json_t *out = json_array();
	struct sl_task *t, *tmp;
	size_t i;
	json_t *r;

	pthread_mutex_lock(&ts->mu);
	/* live records first (fresher than the stored copy) */
	HASH_ITER(hh, ts->tasks, t, tmp) {
		if (!t->deleted)
			json_array_append_new(out, sl_task_record(t));
	}
	json_array_foreach(stored, i, r) {
		const char *rid = json_string_value(json_object_get(r, "id"));
		HASH_FIND_STR(ts->tasks, rid ? rid : "", t);
		if (!t)
			json_array_append(out, r);
	}
	pthread_mutex_unlock(&ts->mu);
	json_decref(stored);
	/* newest first */
	size_t n = json_array_size(out);
	for (size_t a = 1; a < n; a++)
		for (size_t b = a; b > 0; b--) {
			json_t *x = json_array_get(out, b - 1), *y = json_array_get(out, b);
			if (json_integer_value(json_object_get(x, "created_ns")) >=
			    json_integer_value(json_object_get(y, "created_ns")))
				break;
			json_incref(x);
			json_array_set(out, b - 1, y);
			json_array_set_new(out, b, x);
		}
	return json_pack("{s:o}", "tasks", out);
}

int sl_tasks_cancel(struct sl_tasks *ts, const char *id, const char *reason)
{
	struct sl_task *t;
	pthread_mutex_lock(&ts->mu);
	HASH_FIND_STR(ts->tasks, id, t);
	if (!t || t->deleted) {
		pthread_mutex_unlock(&ts->mu);
		return -ENOENT;
	}
	if (!t->cancel && !t->finished && (t->status == SL_TS_PENDING || t->status == SL_TS_RUNNING)) {
		t->cancel = 1;
		snprintf(t->cancel_reason, sizeof(t->cancel_reason), "%s", reason ? reason : "cancelled");
		sl_info(MOD, "task %s: cancel requested: %s", id, t->cancel_reason);
	}
	pthread_cond_broadcast(&ts->cond);
	pthread_mutex_unlock(&ts->mu);
	return 0;
}

int sl_tasks_delete(struct sl_tasks *ts, const char *id)
{
	struct sl_task *t;
	pthread_mutex_lock(&ts->mu);
	HASH_FIND_STR(ts->tasks, id, t);
	if (t && (t->deleted || t->delete_claimed)) {
		/* deleted, or another DELETE is waiting for it: one DELETE wins */
		pthread_mutex_unlock(&ts->mu);
		return -ENOENT;
	}
	if (!t) {
		pthread_mutex_unlock(&ts->mu);
		/* only in the store: the one whose DELETE removed the row wins */
		return ts->store && sl_task_store_delete(ts->store, id) == 0 ? 0 : -ENOENT;
	}
	t->delete_claimed = 1;
	if (!t->cancel && !t->finished) {
		t->cancel = 1;
		snprintf(t->cancel_reason, sizeof(t->cancel_reason), "deleted by a client");
	}
	pthread_cond_broadcast(&ts->cond);
	/* wait until the runner is past its BPF teardown; the wait releases
	 * mu, and meanwhile the reaper may join the runner and forget t: the
	 * reference keeps t alive until we are done with it */
	task_hold(t);
	struct timespec dl = abs_after_ms(DELETE_WAIT_MS);
	while (!t->finished && t->status != SL_TS_CANCELLED && t->status != SL_TS_DONE &&
	       t->status != SL_TS_FAILED)
		if (pthread_cond_timedwait(&ts->cond, &ts->mu, &dl) == ETIMEDOUT)
			break;
	if (ts->test_reaper_wins)
		test_wait_reaped(ts, id);
	t->deleted = 1; /* the reaper removes the stored record after the runner ends */
	task_unref(t);
	pthread_mutex_unlock(&ts->mu);
	if (ts->store)
		sl_task_store_delete(ts->store, id);
	sl_info(MOD, "task %s: deleted", id);
	return 0;
}

int sl_tasks_result(struct sl_tasks *ts, const char *id, const char *fmt, int kaddrs_visible,
		    char **body, size_t *len, const char **ctype)
{
	struct sl_task *t;
	int status = -1, type = -1;
	json_t *r = NULL;

	*body = NULL;
	*len = 0;
	pthread_mutex_lock(&ts->mu);
	HASH_FIND_STR(ts->tasks, id, t);
	if (t && t->deleted) {
		pthread_mutex_unlock(&ts->mu);
		return -ENOENT;
	}
	if (t) {
		/* done only once the result is stored (the runner sets it last) */
		status = t->status;
		type = t->spec.type;
	}
	pthread_mutex_unlock(&ts->mu);
	if (!t) {
		r = ts->store ? sl_task_store_get(ts->store, id) : NULL;
		if (!r)
			return -ENOENT;
		const char *st = json_string_value(json_object_get(r, "status"));
		for (int i = 0; i <= SL_TS_CANCELLED; i++)
			if (st && !strcmp(st, sl_task_status_name(i)))
				status = i;
		type = sl_task_type_parse(json_string_value(json_object_get(r, "type")));
	}
	if (status == SL_TS_PENDING || status == SL_TS_RUNNING || status != SL_TS_DONE) {
		json_decref(r);
		return status == SL_TS_PENDING || status == SL_TS_RUNNING ? -EAGAIN : -ENODATA;
	}
	if (!fmt)
		fmt = "json";
	int f = sl_prof_format_from_name(fmt);
	/* a stored task lists the formats it was rendered in: one from before a
	 * format existed (html) does not offer it (400, not a read error) */
	json_t *fmts = r ? json_object_get(json_object_get(r, "result"), "formats") : NULL;
	int offered = !json_is_array(fmts) || f < 0;
	for (size_t i = 0; !offered && i < json_array_size(fmts); i++)
		offered = !strcmp(json_string_value(json_array_get(fmts, i)) ?: "", sl_prof_format_name(f));
	json_decref(r);
	if (!offered || (type == SL_TASK_SYSCALL_ERRORS ? strcmp(fmt, "json") != 0 : f < 0))
		return -EINVAL;
	if (!ts->store)
		return -EIO;
	/* kernel addresses: only to a caller who may see them now */
	const char *stored = f == SL_FMT_PPROF && !kaddrs_visible ? SL_TASK_PPROF_NOKADDRS
				 : f >= 0 ? sl_prof_format_name(f) : fmt; /* "SVG" is stored as "svg" */
	int rc = sl_task_store_get_result(ts->store, id, stored, body, len);
	if (rc == -ENOENT)
		return -EIO; /* done without its result: retention raced us, or a write error */
	if (rc)
		return rc;
	*ctype = type == SL_TASK_SYSCALL_ERRORS ? "application/json" : sl_prof_format_mime(f);
	return 0;
}

int sl_tasks_progress(struct sl_tasks *ts, const char *id, uint64_t *seq, json_t **rec, int *final)
{
	struct sl_task *t;
	int rc = 0;
	*rec = NULL;
	pthread_mutex_lock(&ts->mu);
	HASH_FIND_STR(ts->tasks, id, t);
	if (!t) {
		/* ended and already reaped from memory: its stored record is final */
		pthread_mutex_unlock(&ts->mu);
		*rec = ts->store ? sl_task_store_get(ts->store, id) : NULL;
		*final = 1;
		return *rec ? 1 : -ENOENT;
	}
	*final = t->status != SL_TS_PENDING && t->status != SL_TS_RUNNING;
	if (t->seq != *seq) {
		*seq = t->seq;
		*rec = sl_task_record(t);
		rc = 1;
	}
	pthread_mutex_unlock(&ts->mu);
	return rc;
}
