/* The pressure state machine (src/agent/pressure.c) with synthetic inputs:
 * steps in order, one per dwell, hysteresis band holds, release in reverse
 * order, every input counts, severity rules. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "agent/pressure.h"
#include "agent/kinds.h"

#define SEC 1000000000ULL

static const struct sl_pressure_config cfg = {
	.cpu_budget = 0.10,
	.memory_budget = 256ull << 20,
	.queue_high = 0.5,
	.release_ratio = 0.5,
	.dwell_up_ns = 2 * SEC,
	.dwell_down_ns = 5 * SEC,
};

static struct sl_pressure_input in(uint64_t t_s, double cpu)
{
	struct sl_pressure_input i = {.now_ns = t_s * SEC, .cpu_share = cpu, .rss_bytes = 10 << 20,
				      .store_fill = 0, .ringbuf_fill = -1};
	return i;
}

/* Feed cpu from t0 to t1 (inclusive) once a second; returns the level. */
static int feed(struct sl_pressure *p, uint64_t t0, uint64_t t1, double cpu)
{
	int l = p->level;
	for (uint64_t t = t0; t <= t1; t++) {
		struct sl_pressure_input i = in(t, cpu);
		l = sl_pressure_update(p, &i);
	}
	return l;
}

static void steps_up_in_order_one_per_dwell(void **state)
{
	(void)state;
	struct sl_pressure p;
	sl_pressure_init(&p, &cfg);
	assert_int_equal(feed(&p, 1, 1, 0.5), 0); /* streak starts */
	assert_int_equal(feed(&p, 2, 2, 0.5), 0); /* 1 s < dwell */
	assert_int_equal(feed(&p, 3, 3, 0.5), 1); /* 2 s: step 1 */
	assert_int_equal(feed(&p, 4, 4, 0.5), 1); /* dwell counts from the transition */
	assert_int_equal(feed(&p, 5, 5, 0.5), 2);
	assert_int_equal(feed(&p, 6, 11, 0.5), 4);
	assert_int_equal(feed(&p, 12, 30, 0.5), 4); /* never above 4 */
	assert_int_equal(p.ntransitions, 4);
	for (int i = 0; i < 4; i++) { /* oldest first: 0->1, 1->2, 2->3, 3->4 */
		const struct sl_pressure_transition *t = sl_pressure_transition_at(&p, 3 - (unsigned)i);
		assert_non_null(t);
		assert_int_equal(t->from, i);
		assert_int_equal(t->to, i + 1);
		assert_non_null(strstr(t->reason, "cpu"));
	}
	assert_null(sl_pressure_transition_at(&p, 4));
	for (int l = 1; l <= 4; l++)
		assert_int_equal(p.steps_total[l], 1);
}

static void steps_down_in_reverse_after_dwell(void **state)
{
	(void)state;
	struct sl_pressure p;
	sl_pressure_init(&p, &cfg);
	feed(&p, 1, 20, 0.5);
	assert_int_equal(p.level, 4);
	/* under (0.01 < 0.05): one step per 5 s */
	assert_int_equal(feed(&p, 21, 25, 0.01), 4);
	assert_int_equal(feed(&p, 26, 26, 0.01), 3);
	assert_int_equal(feed(&p, 27, 30, 0.01), 3);
	assert_int_equal(feed(&p, 31, 31, 0.01), 2);
	assert_int_equal(feed(&p, 32, 60, 0.01), 0);
	assert_int_equal(p.ntransitions, 8);
	for (unsigned i = 0; i < 4; i++) { /* newest first: 1->0, 2->1, 3->2, 4->3 */
		const struct sl_pressure_transition *t = sl_pressure_transition_at(&p, i);
		assert_int_equal(t->from, (int)i + 1);
		assert_int_equal(t->to, (int)i);
	}
	assert_int_equal(p.steps_total[0], 1);
	assert_int_equal(p.steps_total[3], 2); /* up through 3 and down to 3 */
}

static void band_holds_and_resets_streaks(void **state)
{
	(void)state;
	struct sl_pressure p;
	sl_pressure_init(&p, &cfg);
	feed(&p, 1, 5, 0.5); /* 1 at 3, 2 at 5 */
	assert_int_equal(p.level, 2);
	/* 0.07 is in [0.05, 0.10]: hold for ever */
	assert_int_equal(feed(&p, 6, 100, 0.07), 2);
	assert_int_equal(p.zone, SL_PZ_BAND);
	assert_non_null(strstr(p.reason, "band"));
	/* alternating over/band never completes a dwell */
	for (uint64_t t = 101; t < 140; t += 2) {
		feed(&p, t, t, 0.5);
		feed(&p, t + 1, t + 1, 0.07);
	}
	assert_int_equal(p.level, 2);
	/* a short dip under does not step down */
	assert_int_equal(feed(&p, 140, 143, 0.0), 2);
	assert_int_equal(feed(&p, 144, 144, 0.5), 2);
}

static void every_input_counts(void **state)
{
	(void)state;
	struct sl_pressure p;
	struct sl_pressure_input i;

	sl_pressure_init(&p, &cfg);
	for (uint64_t t = 1; t <= 3; t++) {
		i = in(t, 0);
		i.rss_bytes = 300ull << 20;
		sl_pressure_update(&p, &i);
	}
	assert_int_equal(p.level, 1);
	assert_non_null(strstr(p.reason, "rss"));

	sl_pressure_init(&p, &cfg);
	for (uint64_t t = 1; t <= 3; t++) {
		i = in(t, 0);
		i.store_fill = 0.9;
		sl_pressure_update(&p, &i);
	}
	assert_int_equal(p.level, 1);
	assert_non_null(strstr(p.reason, "store queue"));

	sl_pressure_init(&p, &cfg);
	for (uint64_t t = 1; t <= 3; t++) {
		i = in(t, 0);
		i.ringbuf_fill = 0.75;
		sl_pressure_update(&p, &i);
	}
	assert_int_equal(p.level, 1);
	assert_non_null(strstr(p.reason, "ring buffer"));

	/* memory_budget 0: RSS not watched */
	struct sl_pressure_config c2 = cfg;
	c2.memory_budget = 0;
	sl_pressure_init(&p, &c2);
	for (uint64_t t = 1; t <= 10; t++) {
		i = in(t, 0);
		i.rss_bytes = 1ull << 40;
		sl_pressure_update(&p, &i);
	}
	assert_int_equal(p.level, 0);
	assert_int_equal(p.zone, SL_PZ_UNDER);
}

static void log_keeps_the_newest(void **state)
{
	(void)state;
	struct sl_pressure p;
	struct sl_pressure_config c = cfg;
	c.dwell_up_ns = c.dwell_down_ns = 0; /* a step per update */
	sl_pressure_init(&p, &c);
	uint64_t t = 1;
	for (int cycle = 0; cycle < 10; cycle++) {
		feed(&p, t, t + 3, 0.5);
		t += 4;
		feed(&p, t, t + 3, 0.0);
		t += 4;
	}
	assert_int_equal(p.level, 0);
	assert_int_equal(p.ntransitions, 80);
	const struct sl_pressure_transition *n = sl_pressure_transition_at(&p, 0);
	assert_int_equal(n->from, 1);
	assert_int_equal(n->to, 0);
	assert_non_null(sl_pressure_transition_at(&p, SL_PRESSURE_LOG - 1));
	assert_null(sl_pressure_transition_at(&p, SL_PRESSURE_LOG));
	/* the log is time-ordered */
	for (unsigned k = 1; k < SL_PRESSURE_LOG; k++)
		assert_true(sl_pressure_transition_at(&p, k)->mono_ns <= sl_pressure_transition_at(&p, k - 1)->mono_ns);
}

static void severity(void **state)
{
	(void)state;
	assert_true(sl_pressure_low_severity(SL_SEV_DEBUG));
	assert_true(sl_pressure_low_severity(SL_SEV_INFO));
	assert_false(sl_pressure_low_severity(SL_SEV_NOTICE));
	assert_false(sl_pressure_low_severity(SL_SEV_CRITICAL));
	/* what the modules declare: exec, a clean exit and sched_delay are
	 * low; an abnormal exit, signal and oom are not */
	struct sl_kinds ks;
	char err[256];
	assert_int_equal(sl_kinds_build(&ks, sl_registry, sl_registry_count, NULL, err, sizeof(err)), 0);
	static const struct {
		const char *type, *fields;
		int low;
	} c[] = {
		{"exec", "{}", 1},
		{"sched_delay", "{}", 1},
		{"exit", "{\"exit_code\":0,\"signal\":0}", 1},
		{"exit", "{\"exit_code\":1,\"signal\":0}", 0},
		{"exit", "{\"exit_code\":0,\"signal\":9}", 0},
		{"signal", "{}", 0},
		{"oom", "{}", 0},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int k = sl_kinds_find(&ks, c[i].type);
		assert_true(k >= 0);
		json_t *f = json_loads(c[i].fields, 0, NULL);
		assert_int_equal(sl_pressure_low_severity(sl_kinds_severity(&ks, (unsigned)k, f)), c[i].low);
		json_decref(f);
	}
	assert_string_equal(sl_pressure_step_name(1), "metrics_slowed");
	assert_string_equal(sl_pressure_step_name(4), "low_severity_dropped");
	assert_string_equal(sl_pressure_step_name(5), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(steps_up_in_order_one_per_dwell),
		cmocka_unit_test(steps_down_in_reverse_after_dwell),
		cmocka_unit_test(band_holds_and_resets_streaks),
		cmocka_unit_test(every_input_counts),
		cmocka_unit_test(log_keeps_the_newest),
		cmocka_unit_test(severity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
