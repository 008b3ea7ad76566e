/* The agent's series history (src/agent/series_hist.h): readings kept in
 * order, the same snapshot not stored twice, the ring bound, the container
 * bound (the one updated longest ago replaced), container filters, wall
 * times, out-of-range indexes ignored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent/series_hist.h"

static struct sl_series_point pt(const char *id, uint64_t ts, double v)
{
	struct sl_series_point p;
	memset(&p, 0, sizeof(p));
	snprintf(p.container_id, sizeof(p.container_id), "%s", id);
	snprintf(p.pod_uid, sizeof(p.pod_uid), "pod-%s", id);
	p.ts_ns = ts;
	p.value = v;
	return p;
}

static json_t *points_of(json_t *arr, const char *id)
{
	size_t i;
	json_t *c;
	json_array_foreach(arr, i, c)
	{
		if (!strcmp(json_string_value(json_object_get(c, "container_id")), id))
			return json_object_get(c, "points");
	}
	return NULL;
}

static void test_order_and_dedup(void **state)
{
	(void)state;
	struct sl_series_hist *h = sl_series_hist_new();
	assert_non_null(h);
	for (int i = 0; i < 5; i++) {
		struct sl_series_point p[2] = {pt("aaaa1111", 1000000000ull * (uint64_t)(i + 1), i * 0.5),
					       pt("", 1000000000ull * (uint64_t)(i + 1), 10 + i)};
		sl_series_hist_add(h, 1, 0, p, 2);
		sl_series_hist_add(h, 1, 0, p, 2); /* the same snapshot again */
	}
	/* wall = mono + 1.5 s */
	json_t *j = sl_series_hist_json(h, 1, 0, NULL, 1500000000);
	assert_int_equal(json_array_size(j), 2);
	/* sorted by id: the host series ("") first */
	assert_string_equal(json_string_value(json_object_get(json_array_get(j, 0), "container_id")), "");
	json_t *pts = points_of(j, "aaaa1111");
	assert_non_null(pts);
	assert_int_equal(json_array_size(pts), 5);
	for (int i = 0; i < 5; i++) {
		json_t *p = json_array_get(pts, (size_t)i);
		assert_true(json_real_value(json_object_get(p, "value")) == i * 0.5);
	}
	assert_string_equal(json_string_value(json_object_get(json_array_get(pts, 0), "time")),
			    "1970-01-01T00:00:02.500000000Z");
	assert_string_equal(json_string_value(json_object_get(json_array_get(j, 1), "pod_uid")), "pod-aaaa1111");
	json_decref(j);
	/* another series and another module are separate */
	j = sl_series_hist_json(h, 1, 1, NULL, 0);
	assert_int_equal(json_array_size(j), 0);
	json_decref(j);
	j = sl_series_hist_json(h, 0, 0, NULL, 0);
	assert_int_equal(json_array_size(j), 0);
	json_decref(j);
	sl_series_hist_free(h);
}

static void test_ring_bound(void **state)
{
	(void)state;
	struct sl_series_hist *h = sl_series_hist_new();
	const int n = SL_SERIES_HIST_POINTS + 37;
	for (int i = 0; i < n; i++) {
		struct sl_series_point p = pt("bbbb2222", (uint64_t)(i + 1), i);
		sl_series_hist_add(h, 0, 3, &p, 1);
	}
	json_t *j = sl_series_hist_json(h, 0, 3, "bbbb2222", 0);
	json_t *pts = points_of(j, "bbbb2222");
	assert_int_equal(json_array_size(pts), SL_SERIES_HIST_POINTS);
	/* the oldest kept is reading n - POINTS, the newest n - 1 */
	assert_true(json_real_value(json_object_get(json_array_get(pts, 0), "value")) == n - SL_SERIES_HIST_POINTS);
	assert_true(json_real_value(json_object_get(json_array_get(pts, SL_SERIES_HIST_POINTS - 1), "value")) == n - 1);
	json_decref(j);
	sl_series_hist_free(h);
}

static void test_container_bound_and_filter(void **state)
{
	(void)state;
	struct sl_series_hist *h = sl_series_hist_new();
	char id[32];
	/* "c0" is updated at every sample, the others once each in turn */
	for (int i = 0; i < SL_SERIES_HIST_CONTAINERS + 5; i++) {
		snprintf(id, sizeof(id), "ct%04d", i);
		struct sl_series_point p[2] = {pt("c0", (uint64_t)(i + 1), 1), pt(id, (uint64_t)(i + 1), 2)};
		sl_series_hist_add(h, 2, 0, p, 2);
	}
	json_t *j = sl_series_hist_json(h, 2, 0, NULL, 0);
	assert_int_equal(json_array_size(j), SL_SERIES_HIST_CONTAINERS);
	assert_non_null(points_of(j, "c0"));
	assert_int_equal(json_array_size(points_of(j, "c0")), SL_SERIES_HIST_CONTAINERS + 5);
	assert_null(points_of(j, "ct0000")); /* replaced: updated longest ago */
	snprintf(id, sizeof(id), "ct%04d", SL_SERIES_HIST_CONTAINERS + 4);
	assert_non_null(points_of(j, id));
	json_decref(j);
	/* 4+ characters: a prefix; fewer: exact */
	j = sl_series_hist_json(h, 2, 0, "ct00", 0);
	assert_true(json_array_size(j) >= 1);
	size_t i;
	json_t *c;
	json_array_foreach(j, i, c) assert_int_equal(strncmp(json_string_value(json_object_get(c, "container_id")), "ct00", 4), 0);
	json_decref(j);
	j = sl_series_hist_json(h, 2, 0, "c0", 0);
	assert_int_equal(json_array_size(j), 1);
	json_decref(j);
	j = sl_series_hist_json(h, 2, 0, "ct", 0);
	assert_int_equal(json_array_size(j), 0);
	json_decref(j);
	sl_series_hist_free(h);
}

/* more containers in one sample than rings: the first ones keep theirs,
 * the next sample does not churn them */
static void test_too_many_at_once(void **state)
{
	(void)state;
	struct sl_series_hist *h = sl_series_hist_new();
	struct sl_series_point p[SL_SERIES_HIST_CONTAINERS + 10];
	char id[32];
	for (int s = 0; s < 3; s++) {
		for (int i = 0; i < SL_SERIES_HIST_CONTAINERS + 10; i++) {
			snprintf(id, sizeof(id), "ee%04d", i);
			p[i] = pt(id, (uint64_t)(s + 1), s);
		}
		sl_series_hist_add(h, 0, 0, p, SL_SERIES_HIST_CONTAINERS + 10);
	}
	json_t *j = sl_series_hist_json(h, 0, 0, NULL, 0);
	assert_int_equal(json_array_size(j), SL_SERIES_HIST_CONTAINERS);
	assert_int_equal(json_array_size(points_of(j, "ee0000")), 3);
	snprintf(id, sizeof(id), "ee%04d", SL_SERIES_HIST_CONTAINERS - 1);
	assert_int_equal(json_array_size(points_of(j, id)), 3);
	snprintf(id, sizeof(id), "ee%04d", SL_SERIES_HIST_CONTAINERS);
	assert_null(points_of(j, id));
	json_decref(j);
	sl_series_hist_free(h);
}

static void test_bounds_ignored(void **state)
{
	(void)state;
	struct sl_series_hist *h = sl_series_hist_new();
	struct sl_series_point p = pt("dddd", 1, 1);
	sl_series_hist_add(h, SL_MAX_MODULES, 0, &p, 1);
	sl_series_hist_add(h, 0, SL_SERIES_HIST_SERIES, &p, 1);
	sl_series_hist_add(NULL, 0, 0, &p, 1);
	json_t *j = sl_series_hist_json(h, SL_MAX_MODULES, 0, NULL, 0);
	assert_int_equal(json_array_size(j), 0);
	json_decref(j);
	j = sl_series_hist_json(NULL, 0, 0, NULL, 0);
	assert_int_equal(json_array_size(j), 0);
	json_decref(j);
	sl_series_hist_free(h);
	sl_series_hist_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_dedup),
		cmocka_unit_test(test_ring_bound),
		cmocka_unit_test(test_container_bound_and_filter),
		cmocka_unit_test(test_too_many_at_once),
		cmocka_unit_test(test_bounds_ignored),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
