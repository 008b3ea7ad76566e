/* AutoTracing detectors, PSI trigger texts, cooldowns and the baseline diff
 * (src/auto/detect.h, psi_trigger.h, cooldown.h, prof_diff.h): table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <errno.h>
#include <cmocka.h>

#include "auto/cooldown.h"
#include "auto/detect.h"
#include "auto/prof_diff.h"
#include "auto/psi_trigger.h"
#include "profile/profile_internal.h"

#define S 1000000000ull

struct det_case {
	const char *name;
	int method;
	double threshold;
	unsigned window;
	int n;
	double v[16];
	uint64_t epoch[16]; /* 0 = 1 */
	int fire_at[16];    /* expected fire per reading */
};

static const struct det_case cases[] = {
	{"mean fires once the window is full and above", SL_DET_MEAN, 0.5, 3, 6,
	 {0.9, 0.9, 0.9, 0.9, 0.1, 0.1}, {0}, {0, 0, 1, 0, 0, 0}},
	{"mean re-arms after falling back", SL_DET_MEAN, 0.5, 2, 7,
	 {0.9, 0.9, 0.0, 0.0, 0.9, 0.9, 0.9}, {0}, {0, 1, 0, 0, 0, 1, 0}},
	{"mean below stays quiet", SL_DET_MEAN, 0.5, 2, 4, {0.4, 0.5, 0.5, 0.49}, {0}, {0, 0, 0, 0}},
	{"mean: NaN is not a sample", SL_DET_MEAN, 0.5, 3, 5, {0.9, NAN, 0.9, NAN, 0.9}, {0}, {0, 0, 0, 0, 1}},
	{"ema needs window readings", SL_DET_EMA, 0.5, 3, 4, {1, 1, 1, 1}, {0}, {0, 0, 1, 0}},
	{"ema smooths a single spike", SL_DET_EMA, 0.5, 3, 5, {0, 0, 0, 1.0, 0}, {0}, {0, 0, 0, 0, 0}},
	{"jump: step up over threshold", SL_DET_JUMP, 0.3, 1, 5, {0.1, 0.2, 0.6, 0.7, 0.1}, {0}, {0, 0, 1, 0, 0}},
	{"jump: NaN breaks the pair", SL_DET_JUMP, 0.3, 1, 4, {0.1, NAN, 0.6, 0.65}, {0}, {0, 0, 0, 0}},
	{"jump: a drop is no jump", SL_DET_JUMP, 0.3, 1, 3, {0.9, 0.1, 0.2}, {0}, {0, 0, 0}},
	{"consecutive: run of 3", SL_DET_CONSEC, 1, 3, 6, {2, 2, 2, 2, 0, 2}, {0}, {0, 0, 1, 0, 0, 0}},
	{"consecutive: broken run", SL_DET_CONSEC, 1, 3, 6, {2, 2, 0, 2, 2, 2}, {0}, {0, 0, 0, 0, 0, 1}},
	{"consecutive: NaN breaks the run", SL_DET_CONSEC, 1, 2, 4, {2, NAN, 2, 2}, {0}, {0, 0, 0, 1}},
	{"epoch change resets the window", SL_DET_MEAN, 0.5, 2, 4, {0.9, 0.9, 0.9, 0.9},
	 {1, 2, 2, 2}, {0, 0, 1, 0}},
	{"epoch change re-arms a latched detector", SL_DET_CONSEC, 0.5, 1, 4, {0.9, 0.9, 0.9, 0.9},
	 {1, 1, 7, 7}, {1, 0, 1, 0}},
};

static void test_detectors(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct det_case *k = &cases[c];
		struct sl_det_params p = {.method = k->method, .threshold = k->threshold, .window = k->window};
		struct sl_det_state st;
		sl_det_reset(&st, 1);
		for (int i = 0; i < k->n; i++) {
			struct sl_det_verdict v;
			sl_det_feed(&st, &p, k->epoch[i] ? k->epoch[i] : 1, k->v[i], (uint64_t)(i + 1) * S, &v);
			if (v.fire != k->fire_at[i]) {
				fprintf(stderr, "case '%s' reading %d (%g): fire %d, expected %d (stat %g)\n", k->name, i,
					k->v[i], v.fire, k->fire_at[i], v.stat);
				fail();
			}
		}
	}
}

static void test_params_check(void **state)
{
	(void)state;
	char err[128];
	struct sl_det_params ok = {.method = SL_DET_MEAN, .threshold = 1, .window = 3};
	assert_int_equal(sl_det_params_check(&ok, err, sizeof(err)), 0);
	struct sl_det_params bad[] = {
		{.method = 9, .threshold = 1, .window = 3},
		{.method = SL_DET_MEAN, .threshold = 0, .window = 3},
		{.method = SL_DET_MEAN, .threshold = NAN, .window = 3},
		{.method = SL_DET_MEAN, .threshold = 1, .window = 0},
		{.method = SL_DET_EMA, .threshold = 1, .window = SL_DET_MAX_WINDOW + 1},
		{.method = SL_DET_MEAN, .threshold = 1, .window = 3, .baseline_factor = -1},
		{.method = SL_DET_MEAN, .threshold = 1, .window = 3, .baseline_factor = 2, .baseline_base = 0},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(sl_det_params_check(&bad[i], err, sizeof(err)), -1);
	assert_int_equal(sl_det_method_parse("consecutive"), SL_DET_CONSEC);
	assert_int_equal(sl_det_method_parse("avg"), -1);
	assert_string_equal(sl_det_method_name(SL_DET_EMA), "ema");
}

static void test_rate(void **state)
{
	(void)state;
	assert_true(fabs(sl_det_rate(100, 300, 2.0) - 100) < 1e-9);
	assert_true(isnan(sl_det_rate(300, 100, 1.0))); /* counter reset */
	assert_true(isnan(sl_det_rate(1, 2, 0)));
	assert_true(isnan(sl_det_rate(1, 2, -1)));
	assert_true(sl_det_rate(5, 5, 1) == 0);
}

/* baseline-relative: 60+ readings around 0.1 -> p99 ~0.1 (within sqrt 2);
 * factor 2 -> threshold ~0.2 wins over the constant floor 0.05. */
static void test_baseline_relative(void **state)
{
	(void)state;
	struct sl_det_params p = {.method = SL_DET_CONSEC, .threshold = 0.05, .window = 1, .baseline_factor = 2,
				  .baseline_base = 1e-4, .baseline_period_ns = 1800 * S};
	struct sl_det_state st;
	struct sl_det_verdict v;
	sl_det_reset(&st, 1);
	uint64_t t = S;
	/* cold baseline: the constant (0.05) applies: 0.1 fires */
	sl_det_feed(&st, &p, 1, 0.1, t, &v);
	assert_int_equal(v.fire, 1);
	assert_int_equal(v.baseline_used, 0);
	assert_true(isnan(v.baseline_p99));
	/* latched readings are not learned; drop below, then learn 0.04 x 70 */
	sl_det_feed(&st, &p, 1, 0.01, t += S, &v);
	for (int i = 0; i < 70; i++)
		sl_det_feed(&st, &p, 1, 0.04, t += S, &v);
	assert_false(isnan(v.baseline_p99));
	assert_true(v.baseline_p99 >= 0.04 && v.baseline_p99 <= 0.04 * 1.4143);
	/* 2 x p99 <= 0.1132 > floor 0.05? 2*0.04..0.0566 = 0.08..0.113 */
	assert_int_equal(v.baseline_used, 1);
	double thr = v.threshold;
	assert_true(thr >= 0.08 && thr <= 0.1132);
	sl_det_feed(&st, &p, 1, thr * 0.99, t += S, &v);
	assert_int_equal(v.fire, 0);
	/* (that reading was learned: the threshold may have risen a bucket) */
	sl_det_feed(&st, &p, 1, 1.0, t += S, &v);
	assert_int_equal(v.fire, 1);
	assert_int_equal(v.baseline_used, 1);
	/* a factor whose product is below the floor: the constant wins */
	struct sl_det_params p2 = p;
	p2.baseline_factor = 0.5;
	struct sl_det_state st2;
	sl_det_reset(&st2, 1);
	for (int i = 0; i < 70; i++)
		sl_det_feed(&st2, &p2, 1, 0.01, (uint64_t)(i + 1) * S, &v);
	assert_int_equal(v.baseline_used, 0);
	assert_true(v.threshold == 0.05);
	/* an epoch change forgets the baseline */
	sl_det_feed(&st, &p, 2, 0.01, t += S, &v);
	assert_true(isnan(v.baseline_p99));
	/* the baseline ages out: two periods without readings empty it */
	struct sl_det_state st3;
	sl_det_reset(&st3, 1);
	for (int i = 0; i < 70; i++)
		sl_det_feed(&st3, &p, 1, 0.01, (uint64_t)(i + 1) * S, &v);
	assert_false(isnan(v.baseline_p99));
	sl_det_feed(&st3, &p, 1, 0.01, 5 * 1800 * S, &v);
	assert_true(isnan(sl_det_baseline_p99(&st3.base, &p)));
}

static void test_psi_trigger(void **state)
{
	(void)state;
	struct sl_psi_trigger t;
	char buf[64], err[128];
	assert_int_equal(sl_psi_trigger_parse("some 150000 1000000", &t), 0);
	assert_int_equal(t.full, 0);
	assert_int_equal(t.threshold_us, 150000);
	assert_int_equal(t.window_us, 1000000);
	assert_int_equal(sl_psi_trigger_format(&t, buf, sizeof(buf)), 19);
	assert_string_equal(buf, "some 150000 1000000");
	assert_int_equal(sl_psi_trigger_parse("full 500000 4000000\n", &t), 0);
	assert_int_equal(t.full, 1);
	static const char *const bad[] = {"", "some", "some 1", "some 150000 1000000 x", "half 1 1000000",
					  "some 0 1000000", "some 2000000 1000000", "some 1000 499999",
					  "some 1000 10000001", "some -1 1000000", "some 99999999999 1000000",
					  "SOME 1 1000000"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(sl_psi_trigger_parse(bad[i], &t), -EINVAL);
	/* unprivileged: 2 s multiples, share kept */
	t = (struct sl_psi_trigger){0, 150000, 1000000};
	assert_int_equal(sl_psi_trigger_check(&t, 0, err, sizeof(err)), -EINVAL);
	assert_int_equal(sl_psi_trigger_unpriv(&t), 1);
	assert_int_equal(t.window_us, 2000000);
	assert_int_equal(t.threshold_us, 300000);
	assert_int_equal(sl_psi_trigger_check(&t, 0, err, sizeof(err)), 0);
	assert_int_equal(sl_psi_trigger_unpriv(&t), 0);
	t = (struct sl_psi_trigger){1, 9000000, 9500000};
	sl_psi_trigger_unpriv(&t);
	assert_int_equal(t.window_us, 10000000);
	assert_true(t.threshold_us <= t.window_us);
	/* a missing file */
	t = (struct sl_psi_trigger){0, 150000, 2000000};
	assert_int_equal(sl_psi_trigger_open("/nonexistent/memory.pressure", &t), -ENOENT);
}

static void test_cooldown(void **state)
{
	(void)state;
	struct sl_cooldown *c = sl_cooldown_new(10 * S, 3);
	struct sl_cooldown_stats st;
	uint64_t rem = 0;
	assert_int_equal(sl_cooldown_try(c, "aaa", 0, 1 * S, NULL), 1);
	assert_int_equal(sl_cooldown_try(c, "aaa", 0, 5 * S, &rem), 0);
	assert_true(rem == 6 * S);
	assert_int_equal(sl_cooldown_try(c, "aaa", 1, 5 * S, NULL), 1); /* another detector */
	assert_int_equal(sl_cooldown_try(c, "bbb", 0, 5 * S, NULL), 1); /* another container */
	assert_int_equal(sl_cooldown_try(c, "aaa", 0, 11 * S - 1, NULL), 0);
	assert_int_equal(sl_cooldown_try(c, "aaa", 0, 11 * S, NULL), 1); /* cooldown over */
	/* full table: a new key evicts (the oldest still cooling: counted) */
	assert_int_equal(sl_cooldown_try(c, "ccc", 0, 12 * S, NULL), 1);
	sl_cooldown_stats(c, &st);
	assert_int_equal(st.keys, 3);
	assert_int_equal(st.evicted, 1);
	assert_int_equal(st.suppressed, 2);
	assert_int_equal(st.allowed, 5);
	/* expired keys go first, without counting an eviction */
	assert_int_equal(sl_cooldown_try(c, "ddd", 0, 40 * S, NULL), 1);
	sl_cooldown_stats(c, &st);
	assert_int_equal(st.evicted, 1);
	sl_cooldown_free(c);
}

static struct sl_profile *prof(const char *folded)
{
	struct sl_profile *p = sl_prof_from_folded(folded, strlen(folded), 0);
	assert_non_null(p);
	return p;
}

static void test_diff(void **state)
{
	(void)state;
	/* baseline: mostly idle_wait; capture: mostly spin */
	struct sl_profile *base = prof("app;main;idle_wait 90\napp;main;work 10\n");
	struct sl_profile *cap = prof("app;main;work;spin 70\napp;main;work 10\napp;main;idle_wait 20\nbad line\n");
	assert_int_equal(sl_profile_total_count(cap), 100);
	struct sl_prof_diff_frame *f = NULL;
	int n = sl_prof_diff(cap, base, 10, &f);
	assert_int_equal(n, 2); /* spin, work grew; main flat; idle_wait shrank */
	assert_string_equal(f[0].name, "spin");
	assert_true(fabs(f[0].self_delta - 0.70) < 1e-9);
	assert_true(fabs(f[0].total_delta - 0.70) < 1e-9);
	assert_true(f[0].self_baseline == 0);
	assert_string_equal(f[1].name, "work");
	assert_true(fabs(f[1].self_delta - 0.0) < 1e-9);
	assert_true(fabs(f[1].total_capture - 0.80) < 1e-9);
	assert_true(fabs(f[1].total_delta - 0.70) < 1e-9);
	json_t *j = sl_prof_diff_json(f, (size_t)n);
	assert_int_equal(json_array_size(j), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(j, 0), "function")), "spin");
	json_decref(j);
	free(f);
	/* recursion counts once per stack for total */
	struct sl_profile *rec = prof("app;f;f;f 10\n");
	n = sl_prof_diff(rec, NULL, 10, &f);
	assert_int_equal(n, 1);
	assert_true(fabs(f[0].total_capture - 1.0) < 1e-9);
	assert_true(fabs(f[0].self_capture - 1.0) < 1e-9);
	free(f);
	/* top bound, empty capture */
	n = sl_prof_diff(cap, base, 1, &f);
	assert_int_equal(n, 1);
	free(f);
	struct sl_profile *empty = prof("");
	assert_int_equal(sl_prof_diff(empty, base, 10, &f), -EINVAL);
	assert_int_equal(sl_prof_diff(NULL, base, 10, &f), -EINVAL);
	/* same profile: nothing regressed */
	n = sl_prof_diff(base, base, 10, &f);
	assert_int_equal(n, 0);
	free(f);
	sl_profile_free(rec);
	sl_profile_free(empty);
	sl_profile_free(base);
	sl_profile_free(cap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_detectors), cmocka_unit_test(test_params_check),
		cmocka_unit_test(test_rate),      cmocka_unit_test(test_baseline_relative),
		cmocka_unit_test(test_psi_trigger), cmocka_unit_test(test_cooldown),
		cmocka_unit_test(test_diff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
