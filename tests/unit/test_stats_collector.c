/* Unit tests for src/stats/collector.c: the read path never takes the
 * collector's lock (STATS-3), snapshots are swapped safely under
 * concurrent readers (run under ASan), the thread starts and stops. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/prom.h"
#include "stats/stats.h"

#define POD "0a1b2c3d-1111-2222-3333-444455556666"
#define CA "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static char root[128];
static struct sl_stats_mounts mounts;

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(p);
}

static void mkctr(const char *id, uint64_t usage)
{
	char d[512], p[600];
	snprintf(d, sizeof(d), "%s/v2/kubepods/pod" POD, root);
	mkdir(d, 0755);
	snprintf(d, sizeof(d), "%s/v2/kubepods/pod" POD "/%s", root, id);
	mkdir(d, 0755);
	snprintf(p, sizeof(p), "%s/memory.current", d);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "%llu\n", (unsigned long long)usage);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	char d[300];
	snprintf(root, sizeof(root), "/tmp/sl-stats-coll.XXXXXX");
	assert_non_null(mkdtemp(root));
	snprintf(d, sizeof(d), "%s/v2", root);
	mkdir(d, 0755);
	snprintf(d, sizeof(d), "%s/v2/kubepods", root);
	mkdir(d, 0755);
	memset(&mounts, 0, sizeof(mounts));
	snprintf(mounts.v2, sizeof(mounts.v2), "%s/v2", root);
	mounts.use_v2 = 1;
	mkctr(CA, 4096);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

static struct sl_stats *new_collector(uint64_t interval_ms)
{
	struct sl_stats_config cfg = {.interval_ms = interval_ms, .mounts = &mounts};
	struct sl_stats *c = sl_stats_new(&cfg);
	assert_non_null(c);
	return c;
}

struct call {
	struct sl_stats *c;
	struct sl_stats_reply r;
	char *metrics;
	size_t mlen;
	atomic_int done;
};

/* What sl_stats_write_metrics writes through a writer (malloc'd text). */
static char *metrics_text(struct sl_stats *c, size_t *len)
{
	char *m = NULL;
	FILE *f = open_memstream(&m, len);
	assert_non_null(f);
	struct sl_prom *p = sl_prom_new(f);
	assert_non_null(p);
	sl_stats_write_metrics(c, p);
	sl_prom_free(p);
	fclose(f);
	return m;
}

static void *handler_thread(void *arg)
{
	struct call *k = arg;
	sl_stats_api_workload(k->c, POD, &k->r);
	k->metrics = metrics_text(k->c, &k->mlen);
	atomic_store(&k->done, 1);
	return NULL;
}

/* Hold the collector's mutex (as a pass does) and show that the handler
 * still answers: it would deadlock if it took that lock. */
static void test_handler_does_not_take_lock(void **state)
{
	(void)state;
	struct sl_stats *c = new_collector(1000);
	assert_int_equal(sl_stats_collect_now(c), 0);
	struct call k = {.c = c};
	pthread_t th;

	sl_stats_test_lock(c);
	assert_int_equal(pthread_create(&th, NULL, handler_thread, &k), 0);
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 5;
	int rc = pthread_timedjoin_np(th, NULL, &dl);
	sl_stats_test_unlock(c);
	if (rc == ETIMEDOUT) {
		pthread_join(th, NULL); /* unblocked now; still a failure */
		fail_msg("the handler blocked on the collector's lock");
	}
	assert_int_equal(rc, 0);
	assert_true(atomic_load(&k.done));
	assert_int_equal(k.r.status, 200);
	assert_non_null(strstr(k.r.body, "\"memory_current_bytes\":4096"));
	assert_non_null(strstr(k.metrics, "container_memory_usage_bytes{"));
	free(k.r.body);
	free(k.metrics);
	sl_stats_free(c);
}

/* Before the first pass: 503 collector_not_ready; NULL collector: disabled. */
static void test_not_ready_and_disabled(void **state)
{
	(void)state;
	struct sl_stats *c = new_collector(1000);
	struct sl_stats_reply r;
	assert_int_equal(sl_stats_api_workload(c, POD, &r), 0);
	assert_int_equal(r.status, 503);
	assert_non_null(strstr(r.body, "collector_not_ready"));
	free(r.body);
	assert_int_equal(sl_stats_api_list(c, &r), 0);
	assert_int_equal(r.status, 503);
	free(r.body);
	sl_stats_free(c);

	assert_int_equal(sl_stats_api_workload(NULL, POD, &r), 0);
	assert_int_equal(r.status, 503);
	assert_non_null(strstr(r.body, "\"disabled\""));
	free(r.body);
	assert_int_equal(sl_stats_api_workload(NULL, "bad id", &r), 0);
	assert_int_equal(r.status, 400);
	free(r.body);
}

struct reader {
	struct sl_stats *c;
	atomic_int *stop;
	long answers;
};

static void *reader_thread(void *arg)
{
	struct reader *rd = arg;
	while (!atomic_load(rd->stop)) {
		struct sl_stats_reply r;
		sl_stats_api_workload(rd->c, POD, &r);
		assert_true(r.status == 200 || r.status == 503);
		free(r.body);
		sl_stats_api_list(rd->c, &r);
		free(r.body);
		size_t ml = 0;
		free(metrics_text(rd->c, &ml));
		rd->answers++;
	}
	return NULL;
}

/* Passes the collector completed, from its own self-metric. */
static long collections_ok(struct sl_stats *c)
{
	static const char key[] = "sandlens_stats_collections_total{result=\"ok\"} ";
	size_t ml = 0;
	char *m = metrics_text(c, &ml);
	const char *p = strstr(m, key);
	long n = p ? atol(p + strlen(key)) : -1;
	free(m);
	return n;
}

/* The thread publishes a snapshot every millisecond while four readers
 * answer: any use of a freed snapshot is an ASan error. */
static void test_concurrent_swap(void **state)
{
	(void)state;
	struct sl_stats *c = new_collector(1);
	atomic_int stop = 0;
	struct reader rd[4];
	pthread_t th[4];
	assert_int_equal(sl_stats_start(c), 0);
	for (int i = 0; i < 4; i++) {
		rd[i] = (struct reader){.c = c, .stop = &stop};
		assert_int_equal(pthread_create(&th[i], NULL, reader_thread, &rd[i]), 0);
	}
	for (int i = 0; i < 50; i++) {
		mkctr(i % 2 ? "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
			    : "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc",
		      (uint64_t)i);
		usleep(2000);
	}
	/* keep the readers going until the collector has made a few passes, however
	 * loaded the machine is (bounded: 20 s) */
	for (int i = 0; i < 2000 && collections_ok(c) <= 5; i++)
		usleep(10000);
	atomic_store(&stop, 1);
	long total = 0;
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		total += rd[i].answers;
	}
	sl_stats_stop(c);
	assert_true(total > 0);
	/* the collector made progress while the readers ran */
	assert_true(collections_ok(c) > 5);
	sl_stats_free(c);
}

/* Pressure step 1: the interval between passes is interval x factor. */
static void test_slowdown(void **state)
{
	(void)state;
	struct sl_stats *c = new_collector(250);
	assert_int_equal(sl_stats_interval_ms(c), 250);
	sl_stats_set_slowdown(c, 4);
	assert_int_equal(sl_stats_interval_ms(c), 1000);
	sl_stats_set_slowdown(c, 0); /* taken as 1 */
	assert_int_equal(sl_stats_interval_ms(c), 250);
	sl_stats_set_slowdown(NULL, 4);
	assert_int_equal(sl_stats_interval_ms(NULL), 0);
	sl_stats_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_handler_does_not_take_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_ready_and_disabled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_swap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slowdown, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
