/* TASK-3 deadline (docs/TASKS.md "Life of a task"): a task whose runner
 * does not come back is ended by the reaper at created + duration +
 * tasks.deadline_grace. The runner is held with the test-only hook
 * sl_tasks_test_stall_runners() (task.h) right after it attached its BPF
 * object; the test then checks, on the real executor with real BPF objects
 * (needs root; skipped otherwise):
 *   - while the runner is still held, the reaper alone brings this
 *     process's BPF prog/map/link and perf-event fds (/proc/self/fd, as
 *     tests/integration/t_task_chaos.sh counts them) back to the baseline,
 *     no earlier than the deadline;
 *   - once released, the task ends failed, reason "deadline exceeded...",
 *     with no result, and no task is active;
 *   - the executor keeps working: a next task of the same type ends done
 *     with a result, and the fds are back to the baseline again.
 * Types: trace_syscall_errors and profile_on_cpu (perf events), each when
 * this kernel supports it. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "task/task.h"

#define DURATION_NS 200000000ull  /* 0.2 s */
#define GRACE_NS 2000000000ull    /* 2 s: far above the BPF load time */
#define POLL_MS 20

struct fds {
	int prog, map, link, perf;
};

struct fx {
	char dir[64];
	struct sl_tasks *ts;
	json_t *caps;
};

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&t, NULL);
}

/* BPF and perf-event fds of this process, like bpf_fds() in
 * tests/integration/lib_prof.sh. */
static struct fds count_fds(void)
{
	struct fds f = {0};
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	assert_non_null(d);
	while ((e = readdir(d))) {
		char p[300], l[128];
		snprintf(p, sizeof(p), "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(p, l, sizeof(l) - 1);
		if (n <= 0)
			continue;
		l[n] = 0;
		if (!strcmp(l, "anon_inode:bpf-prog"))
			f.prog++;
		else if (!strcmp(l, "anon_inode:bpf-map"))
			f.map++;
		else if (!strcmp(l, "anon_inode:bpf_link"))
			f.link++;
		else if (!strcmp(l, "anon_inode:[perf_event]"))
			f.perf++;
	}
	closedir(d);
	return f;
}

static int fds_eq(struct fds a, struct fds b)
{
	return a.prog == b.prog && a.map == b.map && a.link == b.link && a.perf == b.perf;
}

static void print_fds(const char *what, struct fds f)
{
	print_message("%s: progs %d maps %d links %d perf %d\n", what, f.prog, f.map, f.link, f.perf);
}

/* Status of task id ("" when unknown); reason copied when asked. */
static void status_of(struct sl_tasks *ts, const char *id, char *st, size_t stlen, char *reason,
		      size_t rlen)
{
	json_t *r = sl_tasks_get(ts, id);
	const char *s = r ? json_string_value(json_object_get(r, "status")) : NULL;
	const char *why = r ? json_string_value(json_object_get(r, "reason")) : NULL;
	snprintf(st, stlen, "%s", s ? s : "");
	if (reason)
		snprintf(reason, rlen, "%s", why ? why : "");
	json_decref(r);
}

/* Poll until the status of id is not `from` (nor pending when from is
 * running); at most ms. Returns the final status in st. */
static void wait_status_leaves(struct sl_tasks *ts, const char *id, const char *from, long ms,
			       char *st, size_t stlen, char *reason, size_t rlen)
{
	for (long w = 0;; w += POLL_MS) {
		status_of(ts, id, st, stlen, reason, rlen);
		if (strcmp(st, from) && strcmp(st, "pending"))
			return;
		if (w >= ms)
			return;
		sleep_ms(POLL_MS);
	}
}

static int supported(json_t *caps, const char *type)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(caps, "task_types"), i, e) {
		if (!strcmp(json_string_value(json_object_get(e, "type")), type))
			return json_is_true(json_object_get(e, "supported"));
	}
	return 0;
}

static int setup(void **state)
{
	static struct fx fx;
	char err[256] = "";
	memset(&fx, 0, sizeof(fx));
	snprintf(fx.dir, sizeof(fx.dir), "/tmp/sl-tdl.XXXXXX");
	assert_non_null(mkdtemp(fx.dir));
	struct sl_tasks_config cfg = {
		.max_concurrent = 4,
		.grace_ns = GRACE_NS,
		.retention_ns = 3600000000000ull,
		.max_records = 100,
		.v1_subsys_id = -1,
	};
	snprintf(cfg.db_path, sizeof(cfg.db_path), "%s/tasks.db", fx.dir);
	fx.ts = sl_tasks_new(&cfg, err, sizeof(err));
	if (!fx.ts)
		fail_msg("sl_tasks_new: %s", err);
	fx.caps = sl_tasks_capabilities(fx.ts);
	assert_non_null(fx.caps);
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[128];
	json_decref(fx->caps);
	sl_tasks_free(fx->ts);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	if (system(cmd) != 0)
		return -1;
	return 0;
}

static void deadline_case(struct fx *fx, int type)
{
	const char *tname = sl_task_type_name(type);
	char id[SL_TASK_ID_LEN], err[256] = "", st[32], reason[256];

	if (geteuid() != 0 || !supported(fx->caps, tname)) {
		print_message("%s not supported here (needs root and BPF); skipped\n", tname);
		skip();
	}
	struct fds base = count_fds();
	print_fds("baseline", base);

	struct sl_task_spec spec = {
		.type = type,
		.target_kind = SL_TGT_PID,
		.pid = (uint32_t)getpid(),
		.duration_ns = DURATION_NS,
		.hz = 99,
		.min_off_cpu_ns = 0,
	};
	sl_tasks_test_stall_runners(fx->ts, 1);
	uint64_t created = mono_ns();
	int rc = sl_tasks_create(fx->ts, &spec, id, err, sizeof(err));
	if (rc)
		fail_msg("create %s: %d %s", tname, rc, err);

	/* the runner attached its object and is now held */
	wait_status_leaves(fx->ts, id, "pending", 10000, st, sizeof(st), NULL, 0);
	assert_string_equal(st, "running");
	struct fds during = count_fds();
	print_fds("held runner", during);
	assert_true(during.prog > base.prog);
	assert_true(during.map > base.map);
	assert_true(during.link + during.perf > base.link + base.perf);

	/* the reaper alone destroys the object, at the deadline */
	uint64_t back = 0;
	struct fds now = during;
	while (mono_ns() - created < DURATION_NS + GRACE_NS + 5000000000ull) {
		now = count_fds();
		if (fds_eq(now, base)) {
			back = mono_ns();
			break;
		}
		sleep_ms(POLL_MS);
	}
	print_fds("after the deadline", now);
	if (!back)
		fail_msg("%s: BPF fds not back to the baseline %.1f s after creation", tname,
			 (double)(mono_ns() - created) / 1e9);
	print_message("%s: fds back to baseline %.2f s after creation (deadline %.2f s)\n", tname,
		      (double)(back - created) / 1e9, (double)(DURATION_NS + GRACE_NS) / 1e9);
	assert_true(back - created >= DURATION_NS + GRACE_NS);
	/* the runner is still held, yet the record already says failed: the
	 * reaper ended it, and its slot is free */
	wait_status_leaves(fx->ts, id, "running", 5000, st, sizeof(st), reason, sizeof(reason));
	print_message("%s (runner held): %s: %s\n", tname, st, reason);
	assert_string_equal(st, "failed");
	assert_int_equal(strncmp(reason, "deadline exceeded", 17), 0);
	assert_int_equal(sl_tasks_active(fx->ts), 0);

	/* released, the runner changes nothing */
	sl_tasks_test_stall_runners(fx->ts, 0);
	sleep_ms(500);
	status_of(fx->ts, id, st, sizeof(st), reason, sizeof(reason));
	assert_string_equal(st, "failed");
	assert_int_equal(strncmp(reason, "deadline exceeded", 17), 0);
	char *body = NULL;
	size_t len = 0;
	const char *ctype = NULL;
	assert_int_equal(sl_tasks_result(fx->ts, id, NULL, 1, &body, &len, &ctype), -ENODATA);
	assert_null(body);
	for (int w = 0; w < 5000 && sl_tasks_active(fx->ts); w += POLL_MS)
		sleep_ms(POLL_MS);
	assert_int_equal(sl_tasks_active(fx->ts), 0);
	assert_true(fds_eq(count_fds(), base));

	/* the executor goes on: the same task, not held, ends done */
	rc = sl_tasks_create(fx->ts, &spec, id, err, sizeof(err));
	if (rc)
		fail_msg("second create %s: %d %s", tname, rc, err);
	wait_status_leaves(fx->ts, id, "running", 15000, st, sizeof(st), reason, sizeof(reason));
	print_message("%s (not held): %s %s\n", tname, st, reason);
	assert_string_equal(st, "done");
	assert_int_equal(sl_tasks_result(fx->ts, id, "json", 1, &body, &len, &ctype), 0);
	assert_non_null(body);
	assert_true(len > 0);
	free(body);
	if (type == SL_TASK_PROFILE_ON_CPU) {
		/* the pprof without kernel addresses exists for callers who may
		 * not see them (sl_kaddrs_visible), and with them for those who may */
		for (int kv = 0; kv < 2; kv++) {
			body = NULL;
			assert_int_equal(sl_tasks_result(fx->ts, id, "pprof", kv, &body, &len, &ctype), 0);
			assert_non_null(body);
			assert_true(len > 0);
			free(body);
		}
	}
	for (int w = 0; w < 5000 && !fds_eq(count_fds(), base); w += POLL_MS)
		sleep_ms(POLL_MS);
	print_fds("after the second task", count_fds());
	assert_true(fds_eq(count_fds(), base));
}

static void test_deadline_syscall_errors(void **state)
{
	deadline_case(*state, SL_TASK_SYSCALL_ERRORS);
}

static void test_deadline_on_cpu(void **state)
{
	deadline_case(*state, SL_TASK_PROFILE_ON_CPU);
}

/* Shutdown releases a held runner: sl_tasks_free (in teardown) must not
 * hang, and the task's BPF object is gone before it returns. */
static void test_shutdown_releases_held_runner(void **state)
{
	struct fx *fx = *state;
	char id[SL_TASK_ID_LEN], err[256] = "", st[32];
	if (geteuid() != 0 || !supported(fx->caps, "trace_syscall_errors"))
		skip();
	struct sl_task_spec spec = {
		.type = SL_TASK_SYSCALL_ERRORS,
		.target_kind = SL_TGT_PID,
		.pid = (uint32_t)getpid(),
		.duration_ns = 60000000000ull,
	};
	struct fds base = count_fds();
	sl_tasks_test_stall_runners(fx->ts, 1);
	assert_int_equal(sl_tasks_create(fx->ts, &spec, id, err, sizeof(err)), 0);
	wait_status_leaves(fx->ts, id, "pending", 10000, st, sizeof(st), NULL, 0);
	assert_string_equal(st, "running");
	assert_false(fds_eq(count_fds(), base));
	json_decref(fx->caps);
	fx->caps = NULL;
	sl_tasks_free(fx->ts); /* held, long before its deadline */
	fx->ts = NULL;
	assert_true(fds_eq(count_fds(), base));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_deadline_syscall_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deadline_on_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shutdown_releases_held_runner, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
