/* Per-container event counters (src/agent/container_events.c): counted
 * under the container or the pod, weights, host not counted, eviction of
 * the oldest at the bound, the exposition. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/container_events.h"
#include "common/prom.h"

static const char *names[] = {"exec", "oom", "mem_stall"};
static const char *kname(unsigned k, void *ctx)
{
	(void)ctx;
	return names[k];
}

static struct sl_attr ct(const char *id, const char *pod)
{
	struct sl_attr a;
	memset(&a, 0, sizeof(a));
	a.is_container = id[0] ? SL_YES : SL_NO;
	snprintf(a.container_id, sizeof(a.container_id), "%s", id);
	snprintf(a.pod_uid, sizeof(a.pod_uid), "%s", pod);
	snprintf(a.runtime, sizeof(a.runtime), "%s", id[0] ? "runc" : pod[0] ? "" : "host");
	return a;
}

static char *render(struct sl_cevents *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct sl_prom *p = sl_prom_new(f);
	sl_cevents_write(c, p, kname, NULL);
	sl_prom_free(p);
	fclose(f);
	return buf;
}

static void test_counts(void **s)
{
	(void)s;
	struct sl_cevents *c = sl_cevents_new(8, 3);
	struct sl_attr a = ct("aaaa", ""), pod = ct("", "1111-2222"), host = ct("", "");
	sl_cevents_count(c, &a, 0, 1, 10);
	sl_cevents_count(c, &a, 0, 5, 11); /* a record carrying 4 suppressed execs */
	sl_cevents_count(c, &a, 1, 1, 12);
	sl_cevents_count(c, &pod, 2, 1, 13);
	sl_cevents_count(c, &host, 0, 1, 14); /* not counted */
	sl_cevents_count(c, &a, 7, 1, 15);    /* no such kind */
	char *t = render(c);
	assert_non_null(strstr(t, "sandlens_container_events_total{container_id=\"aaaa\",pod_uid=\"\",runtime=\"runc\",type=\"exec\"} 6\n"));
	assert_non_null(strstr(t, "sandlens_container_events_total{container_id=\"aaaa\",pod_uid=\"\",runtime=\"runc\",type=\"oom\"} 1\n"));
	assert_non_null(strstr(t, "sandlens_container_events_total{container_id=\"\",pod_uid=\"1111-2222\",runtime=\"\",type=\"mem_stall\"} 1\n"));
	assert_null(strstr(t, "runtime=\"host\""));
	assert_null(strstr(t, "type=\"mem_stall\"} 1\nsandlens_container_events_total{container_id=\"aaaa\",pod_uid=\"\",runtime=\"runc\",type=\"mem_stall\""));
	assert_non_null(strstr(t, "sandlens_container_events_evicted_total 0\n"));
	free(t);
	sl_cevents_free(c);
}

static void test_eviction(void **s)
{
	(void)s;
	struct sl_cevents *c = sl_cevents_new(2, 3);
	struct sl_attr a = ct("aaaa", ""), b = ct("bbbb", ""), d = ct("dddd", "");
	sl_cevents_count(c, &a, 0, 1, 10);
	sl_cevents_count(c, &b, 0, 1, 20);
	sl_cevents_count(c, &a, 0, 1, 30); /* a is now the newer one */
	sl_cevents_count(c, &d, 0, 1, 40); /* evicts b */
	assert_int_equal(sl_cevents_evicted(c), 1);
	char *t = render(c);
	assert_non_null(strstr(t, "container_id=\"aaaa\""));
	assert_non_null(strstr(t, "container_id=\"dddd\""));
	assert_null(strstr(t, "container_id=\"bbbb\""));
	assert_non_null(strstr(t, "sandlens_container_events_evicted_total 1\n"));
	free(t);
	sl_cevents_free(c);
	assert_null(sl_cevents_new(0, 3));
	sl_cevents_count(NULL, &a, 0, 1, 1); /* off: a no-op */
}

int main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_eviction),
	};
	return cmocka_run_group_tests(t, NULL, NULL);
}
