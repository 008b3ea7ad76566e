/* AutoTracing detectors (AUTO-1, docs/AUTO.md "Detectors"): pure state
 * machines over one per-container series, fed one reading per sample.
 *
 * Methods (enum sl_det_method), after the anchor's AutoTracing
 * (../shared/seeds/000_*.txt: "sliding window, EMA, incremental threshold,
 * continuous threshold exceedance"):
 *   mean         sliding-window mean of the last `window` readings > threshold
 *                (needs `window` readings before it can fire)
 *   ema          exponential moving average, alpha = 2 / (window + 1)
 *                (the span convention), > threshold; needs `window` readings
 *   jump         incremental threshold: reading - previous reading > threshold
 *   consecutive  `window` consecutive readings each > threshold
 *
 * Threshold: a constant in the input's unit, or, with baseline_factor > 0
 * and a warm baseline (>= SL_DET_BASELINE_MIN readings in the last
 * baseline period), max(threshold, baseline_factor x the container's own
 * p99 over the last 30..60 min) (sl_det_baseline below): the constant is then a floor, so an
 * idle container whose p99 is ~0 does not fire on noise.
 *
 * Edge-triggered: a detector fires once when its statistic goes above the
 * threshold and is latched until the statistic is at or below it again
 * (then it re-arms). Per-(container, detector) cooldowns are separate
 * (cooldown.h).
 *
 * Unknown readings: a NaN or infinite reading (a figure the kernel did not
 * give, a counter that went backwards) is not a sample: the window and EMA
 * keep their state, the consecutive run and the jump's previous reading are
 * reset (a run must be unbroken; a jump needs two known neighbours).
 * Epochs: a new cgroup identity (a container recreated under the same id:
 * docs/STATS.md "Epochs") resets everything, baseline included.
 *
 * No allocation, no global state: any thread, one state per thread at a time.
 */
#ifndef SANDLENS_AUTO_DETECT_H
#define SANDLENS_AUTO_DETECT_H

#include <stdint.h>

enum sl_det_method {
	SL_DET_MEAN = 0,
	SL_DET_EMA = 1,
	SL_DET_JUMP = 2,
	SL_DET_CONSEC = 3,
	SL_DET_NMETHODS
};

#define SL_DET_MAX_WINDOW 64   /* readings a sliding window / run may span */
#define SL_DET_BASELINE_BUCKETS 64
#define SL_DET_BASELINE_MIN 60 /* readings before a baseline counts (1 min at 1 s) */

/* "mean" | "ema" | "jump" | "consecutive"; NULL for an unknown method. */
const char *sl_det_method_name(int method);
/* Inverse; -1 for an unknown name. */
int sl_det_method_parse(const char *name);

struct sl_det_params {
	int method;             /* enum sl_det_method */
	double threshold;       /* in the input's unit (> 0 for mean/ema/consecutive) */
	unsigned window;        /* readings: 1..SL_DET_MAX_WINDOW (jump: unused) */
	double baseline_factor; /* 0: constant threshold; > 0: relative to the baseline p99 */
	/* baseline histogram resolution: bucket 0 is [0, base), bucket b >= 1
	 * is [base * 2^((b-1)/2), base * 2^(b/2)) (half octaves, so a p99 is
	 * known within a factor sqrt(2)); e.g. 1e-4 for ratios, 1e-6 for
	 * seconds, 1024 for bytes/s, 1 for counts */
	double baseline_base;
	uint64_t baseline_period_ns; /* one half of the baseline: 30 min (p99 over the last 30..60 min) */
};

/* The container's own baseline: two half-period histograms of readings
 * (the current and the previous one), 256 bytes. p99 = upper bound of the
 * bucket holding the 99th percentile of both. */
struct sl_det_baseline {
	uint64_t cur_start_ns;
	uint16_t cur[SL_DET_BASELINE_BUCKETS];
	uint16_t prev[SL_DET_BASELINE_BUCKETS];
};

struct sl_det_state {
	uint64_t epoch;                   /* cgroup identity the state belongs to */
	double ring[SL_DET_MAX_WINDOW];   /* mean: the last readings */
	unsigned ring_n, ring_head;
	double ema;
	unsigned ema_n;                   /* readings folded into ema */
	double prev;
	int has_prev;
	unsigned run;                     /* consecutive readings above threshold */
	int latched;                      /* fired and not yet back at or below the threshold */
	uint64_t readings;                /* known readings since the epoch began */
	struct sl_det_baseline base;
};

/* What one reading gave. */
struct sl_det_verdict {
	int fire;            /* 1: the detector fired with this reading */
	int evaluated;       /* 0: not enough readings yet (or NaN) */
	double stat;         /* the statistic compared: mean, ema, jump, or the reading (consecutive) */
	double threshold;    /* the effective threshold */
	int baseline_used;   /* 1: threshold came from the baseline */
	double baseline_p99; /* NaN while the baseline is cold (or baseline_factor 0) */
	unsigned samples;    /* readings the statistic covers (window fill, run length) */
};

/* Check p: 0, or -1 with "<reason>" in err (the caller names the key). */
int sl_det_params_check(const struct sl_det_params *p, char *err, unsigned errlen);

/* Reset st for cgroup identity epoch (everything, baseline included). */
void sl_det_reset(struct sl_det_state *st, uint64_t epoch);

/* Feed one reading taken at now_ns (CLOCK_MONOTONIC) of the container whose
 * cgroup identity is epoch (a change resets st first). Fills *v. */
void sl_det_feed(struct sl_det_state *st, const struct sl_det_params *p, uint64_t epoch, double value,
		 uint64_t now_ns, struct sl_det_verdict *v);

/* The baseline's p99 now (NaN when fewer than SL_DET_BASELINE_MIN readings
 * are in it). */
double sl_det_baseline_p99(const struct sl_det_baseline *b, const struct sl_det_params *p);

/* Rate of a cumulative counter: (cur - prev) / dt_s. NaN when dt_s <= 0,
 * either value unknown, or cur < prev (a counter reset: the cgroup was
 * recreated, or the counter wrapped). */
double sl_det_rate(uint64_t prev, uint64_t cur, double dt_s);

#endif
