/* Self-protection under pressure (PRES-1, P4): a pure state machine that
 * turns the agent's measured load (its own CPU share, RSS, store queue and
 * ring buffer fill) into a degradation level 0..4 with hysteresis and dwell
 * times. No clock, no I/O, no locks: the caller (src/agent/pressure_rt.c)
 * measures, feeds sl_pressure_update() once per tick and applies the level.
 *
 * Levels are cumulative; level L means steps 1..L are active, entered in
 * this order and undone in reverse (docs/ARCHITECTURE.md, "Pressure"):
 *   1 metrics_slowed        metric collection runs less often (counts exact)
 *   2 events_sampled        event rate limits lowered (all counted)
 *   3 tasks_refused         new on-demand tasks get 429
 *   4 low_severity_dropped  low-severity events are dropped and counted
 *
 * Rule, per update:
 *   over   = some input is above its threshold (cpu_share > cpu_budget,
 *            rss > memory_budget, a fill > queue_high);
 *   under  = every input is below release_ratio x its threshold;
 *   else   = the hysteresis band: the level holds and both streaks reset.
 * The level goes up one step when `over` has held for dwell_up_ns since
 * the later of the streak's start and the last transition, and down one
 * step when `under` has held for dwell_down_ns likewise. */
#ifndef SANDLENS_AGENT_PRESSURE_H
#define SANDLENS_AGENT_PRESSURE_H

#include <stdint.h>

#define SL_PRESSURE_MAX_LEVEL 4
#define SL_PRESSURE_LOG 32     /* transitions kept for /healthz */
#define SL_PRESSURE_REASON 160 /* bytes of a reason, NUL included */

struct sl_pressure_config {
	double cpu_budget;       /* share of one CPU (0.10 = 10 %), > 0 */
	uint64_t memory_budget;  /* RSS bytes; 0 = memory not watched */
	double queue_high;       /* store queue / ring buffer fill counted as pressure, (0, 1] */
	double release_ratio;    /* pressure gone below ratio x threshold, (0, 1) */
	uint64_t dwell_up_ns;    /* over for this long -> one step up */
	uint64_t dwell_down_ns;  /* under for this long -> one step down */
};

/* One measurement. Fills are 0..1; a negative value means "unknown" and
 * counts as zero. */
struct sl_pressure_input {
	uint64_t now_ns;         /* CLOCK_MONOTONIC, non-decreasing */
	double cpu_share;        /* agent CPU seconds per wall second over the window */
	uint64_t rss_bytes;
	double store_fill;       /* store queue depth / capacity */
	double ringbuf_fill;     /* the fullest BPF ring buffer */
};

struct sl_pressure_transition {
	uint64_t mono_ns;
	int from, to;
	char reason[SL_PRESSURE_REASON];
};

enum sl_pressure_zone { SL_PZ_UNDER, SL_PZ_BAND, SL_PZ_OVER };

struct sl_pressure {
	struct sl_pressure_config cfg;
	int level;                      /* 0..SL_PRESSURE_MAX_LEVEL */
	enum sl_pressure_zone zone;     /* of the last input */
	uint64_t streak_ns;             /* start of the current over/under streak */
	uint64_t last_change_ns;        /* time of the last transition (0: none) */
	char reason[SL_PRESSURE_REASON]; /* why the zone is what it is (last input) */
	uint64_t steps_total[SL_PRESSURE_MAX_LEVEL + 1]; /* entries into each level (index 0: returns to 0) */
	uint64_t ntransitions;          /* total; log holds the last SL_PRESSURE_LOG */
	struct sl_pressure_transition log[SL_PRESSURE_LOG];
	struct sl_pressure_input last;
};

/* Level 0, no history. cfg is copied. */
void sl_pressure_init(struct sl_pressure *p, const struct sl_pressure_config *cfg);

/* Feed one measurement; returns the (possibly changed) level. At most one
 * step per call. */
int sl_pressure_update(struct sl_pressure *p, const struct sl_pressure_input *in);

/* The i-th most recent transition (0 = newest), NULL past the end. */
const struct sl_pressure_transition *sl_pressure_transition_at(const struct sl_pressure *p, unsigned i);

/* Name of step 1..4 ("metrics_slowed", ...); "none" for 0, "?" otherwise. */
const char *sl_pressure_step_name(int step);

/* Step 4: is an event of this severity (enum sl_severity, the kind's
 * declared severity or its severity_of, src/agent/module.h) low, i.e.
 * dropped (and counted) at level 4? Low: debug and info (exec, a clean
 * exit, sched_delay as the modules declare them); notice and above are
 * never dropped. */
int sl_pressure_low_severity(int severity);

#endif
