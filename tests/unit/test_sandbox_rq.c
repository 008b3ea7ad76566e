/* Runqueue wait of sandbox vCPU threads (src/cgroup/sandbox_rq.h): the
 * schedstat parser (kernel fs/proc/base.c proc_pid_schedstat format),
 * the read against a fixture /proc (pid reuse never counted, unreadable =
 * unknown), per-sandbox sums and the interval tracker (counter reset). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "cgroup/sandbox_rq.h"

static void parse(void **state)
{
	(void)state;
	struct sl_sbx_rq r;
	assert_int_equal(sl_sbx_rq_parse("136356 233207 2\n", &r), 0);
	assert_int_equal(r.known, 1);
	assert_int_equal(r.oncpu_ns, 136356);
	assert_int_equal(r.run_delay_ns, 233207);
	assert_int_equal(r.timeslices, 2);
	assert_int_equal(sl_sbx_rq_parse("18446744073709551615 0 1", &r), 0); /* no newline, max */
	assert_true(r.oncpu_ns == UINT64_MAX);
	static const char *bad[] = {
		"",
		"\n",
		"1 2\n",                   /* a field missing */
		"1 2 x\n",                 /* garbage */
		"1 -2 3\n",                /* negative */
		"1 2 3 4\n",               /* trailing field */
		"1 2 3junk\n",
		"18446744073709551616 1 1\n", /* overflow */
		"0 0 0\n",                 /* accounting off (!sched_info_on) */
		"abc def ghi\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r.known = 1;
		assert_int_equal(sl_sbx_rq_parse(bad[i], &r), -EINVAL);
		assert_int_equal(r.known, 0);
	}
	assert_int_equal(sl_sbx_rq_parse(NULL, &r), -EINVAL);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* /proc/<pid>/stat with starttime (field 22) = start */
static void mkstat(const char *proc, int pid, unsigned long long start)
{
	char p[400], t[400];
	snprintf(p, sizeof(p), "%s/%d", proc, pid);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/%d/task", proc, pid);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/%d/stat", proc, pid);
	snprintf(t, sizeof(t), "%d (cloud-hyperviso) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 3 0 %llu 0 0\n", pid, start);
	put(p, t);
}

static void mksched(const char *proc, int pid, int tid, const char *text)
{
	char p[400];
	snprintf(p, sizeof(p), "%s/%d/task/%d", proc, pid, tid);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/%d/task/%d/schedstat", proc, pid, tid);
	put(p, text);
}

static void sbx_init(struct sl_sbx *s, int pid, unsigned long long start, int n)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->id, sizeof(s->id), "sbx%d", pid);
	s->vmm_pid = pid;
	s->vmm_start_time = start;
	s->nvcpus = (size_t)n;
	for (int i = 0; i < n; i++) {
		s->vcpu[i].tid = pid + 1 + i;
		s->vcpu[i].index = i;
	}
}

static void read_fixture(void **state)
{
	(void)state;
	char root[] = "/tmp/sl-sbxrq-XXXXXX";
	assert_non_null(mkdtemp(root));
	char proc[200];
	snprintf(proc, sizeof(proc), "%s/proc", root);
	assert_int_equal(mkdir(proc, 0755), 0);
	mkstat(proc, 700, 4242);
	mksched(proc, 700, 701, "5000000000 1500000000 40\n");
	mksched(proc, 700, 702, "4000000000 500000000 10\n");
	mksched(proc, 700, 703, "0 0 0\n"); /* accounting off */
	/* 704: no file (exited) */

	struct sl_sbx *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	sbx_init(s, 700, 4242, 2);
	assert_int_equal(sl_sbx_rq_read(proc, s), 2);
	assert_int_equal(s->vcpu[0].rq.run_delay_ns, 1500000000ull);
	assert_int_equal(s->vcpu[1].rq.timeslices, 10);
	struct sl_sbx_rq sum;
	assert_int_equal(sl_sbx_rq_sum(s, &sum), 1);
	assert_int_equal(sum.run_delay_ns, 2000000000ull);
	assert_int_equal(sum.timeslices, 50);
	assert_int_equal(sum.oncpu_ns, 9000000000ull);
	assert_int_equal(sum.iv_known, 0); /* no interval yet */

	/* an unknown vCPU makes that vCPU and the sum unknown, never 0 */
	sbx_init(s, 700, 4242, 4);
	assert_int_equal(sl_sbx_rq_read(proc, s), 2);
	assert_int_equal(s->vcpu[2].rq.known, 0);
	assert_int_equal(s->vcpu[3].rq.known, 0);
	assert_int_equal(sl_sbx_rq_sum(s, &sum), 0);
	assert_int_equal(sum.known, 0);

	/* pid reuse: /proc/700 now started at another time: nothing counted */
	sbx_init(s, 700, 4241, 2);
	assert_int_equal(sl_sbx_rq_read(proc, s), 0);
	assert_int_equal(s->vcpu[0].rq.known, 0);
	assert_int_equal(s->vcpu[1].rq.known, 0);
	/* gone */
	sbx_init(s, 999, 4242, 2);
	assert_int_equal(sl_sbx_rq_read(proc, s), 0);
	/* no vCPUs: no sum */
	sbx_init(s, 700, 4242, 0);
	assert_int_equal(sl_sbx_rq_read(proc, s), 0);
	assert_int_equal(sl_sbx_rq_sum(s, &sum), 0);
	free(s);

	char rm[700];
	snprintf(rm, sizeof(rm), "rm -rf '%s'", root);
	assert_int_equal(system(rm), 0);
}

static void set(struct sl_sbx *s, int i, uint64_t delay, uint64_t slices)
{
	s->vcpu[i].rq.known = 1;
	s->vcpu[i].rq.oncpu_ns = 1;
	s->vcpu[i].rq.run_delay_ns = delay;
	s->vcpu[i].rq.timeslices = slices;
}

static void interval(void **state)
{
	(void)state;
	const uint64_t S = 1000000000ull;
	struct sl_sbx_rq_track t;
	sl_sbx_rq_track_init(&t, S);
	struct sl_sbx_list l = {.n = 1, .sbx = calloc(1, sizeof(struct sl_sbx))};
	assert_non_null(l.sbx);
	struct sl_sbx *s = &l.sbx[0];
	sbx_init(s, 700, 4242, 2);

	/* first reading: no interval */
	set(s, 0, 100, 10);
	set(s, 1, 200, 20);
	assert_int_equal(sl_sbx_rq_track(&t, &l, 10 * S), 0);
	assert_int_equal(s->vcpu[0].rq.iv_known, 0);

	/* 2 s later */
	set(s, 0, 100 + 40000000, 30);
	set(s, 1, 200 + 10000000, 20);
	assert_int_equal(sl_sbx_rq_track(&t, &l, 12 * S), 0);
	assert_int_equal(s->vcpu[0].rq.iv_known, 1);
	assert_int_equal(s->vcpu[0].rq.iv_ns, 2 * S);
	assert_int_equal(s->vcpu[0].rq.iv_run_delay_ns, 40000000);
	assert_int_equal(s->vcpu[0].rq.iv_timeslices, 20);
	assert_int_equal(s->vcpu[1].rq.iv_timeslices, 0);
	struct sl_sbx_rq sum;
	assert_int_equal(sl_sbx_rq_sum(s, &sum), 1);
	assert_int_equal(sum.iv_known, 1);
	assert_int_equal(sum.iv_run_delay_ns, 50000000);
	assert_int_equal(sum.iv_timeslices, 20);

	/* 0.5 s later: too short, the last interval is reported, baseline kept */
	set(s, 0, 100 + 40000000 + 5, 31);
	assert_int_equal(sl_sbx_rq_track(&t, &l, 12 * S + S / 2), 0);
	assert_int_equal(s->vcpu[0].rq.iv_known, 1);
	assert_int_equal(s->vcpu[0].rq.iv_run_delay_ns, 40000000);
	/* 1 s after the baseline: from the baseline at 12 s */
	set(s, 0, 100 + 40000000 + 7, 33);
	assert_int_equal(sl_sbx_rq_track(&t, &l, 13 * S), 0);
	assert_int_equal(s->vcpu[0].rq.iv_run_delay_ns, 7);
	assert_int_equal(s->vcpu[0].rq.iv_timeslices, 3);
	assert_int_equal(s->vcpu[0].rq.iv_ns, S);

	/* counter reset (another thread under the tid): no interval, new baseline */
	set(s, 0, 50, 2);
	assert_int_equal(sl_sbx_rq_track(&t, &l, 15 * S), 0);
	assert_int_equal(s->vcpu[0].rq.iv_known, 0);
	assert_int_equal(sl_sbx_rq_sum(s, &sum), 1);
	assert_int_equal(sum.iv_known, 0); /* one vCPU without an interval */
	set(s, 0, 80, 5);
	assert_int_equal(sl_sbx_rq_track(&t, &l, 16 * S), 0);
	assert_int_equal(s->vcpu[0].rq.iv_known, 1);
	assert_int_equal(s->vcpu[0].rq.iv_run_delay_ns, 30);

	/* the VMM restarted under the same pid (another start time): the old
	 * baseline does not apply */
	s->vmm_start_time = 5000;
	set(s, 0, 1000000, 100);
	set(s, 1, 1000000, 100);
	assert_int_equal(sl_sbx_rq_track(&t, &l, 18 * S), 0);
	assert_int_equal(s->vcpu[0].rq.iv_known, 0);
	assert_int_equal(s->vcpu[1].rq.iv_known, 0);
	assert_int_equal(t.n, 2); /* the old process's entries are forgotten */

	/* an unknown reading has no interval and is forgotten */
	s->vcpu[1].rq.known = 0;
	assert_int_equal(sl_sbx_rq_track(&t, &l, 20 * S), 0);
	assert_int_equal(s->vcpu[1].rq.iv_known, 0);
	assert_int_equal(t.n, 1);

	free(l.sbx);
	sl_sbx_rq_track_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse),
		cmocka_unit_test(read_fixture),
		cmocka_unit_test(interval),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
