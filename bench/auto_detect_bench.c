/* AutoTracing detector cost (issue 15 item 6a; bench/auto-detect.sh):
 * every detector method (mean, ema, jump, consecutive), with a constant
 * and with a baseline-relative threshold, fed one reading per container
 * per interval for NCTR containers over INTERVALS intervals (1 s apart on
 * the detector's clock, so the baseline warms after SL_DET_BASELINE_MIN
 * readings and its half-hour rotation is exercised by long runs).
 *
 * Readings are realistic CPU ratios: a per-container base load
 * (0.02..0.6) with +-20 % noise, a spike to ~0.95 for 8 intervals every
 * ~120 intervals (per container, phase-shifted), and one unknown (NaN)
 * reading in ~1 % of the samples (a counter reset). They are generated
 * before the timed loop (a table per container), so the clock covers
 * sl_det_feed() and the loop only.
 *
 *   auto_detect_bench [NCTR] [INTERVALS] [REPEATS] [METHOD BASELINE]
 *
 * Prints one line per configuration:
 *   <method> <const|baseline> ns_per_ctr_interval median=<ns> min=<ns> max=<ns> fired=<n>
 * With METHOD and BASELINE (0/1) given, runs only that configuration once
 * (for callgrind: --toggle-collect=feed_all).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auto/detect.h"

#define TABLE 256 /* readings per container, cycled */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One pass: every container, every interval. Not inlined: callgrind
 * toggles collection on it. */
__attribute__((noinline)) static unsigned long feed_all(struct sl_det_state *st, const struct sl_det_params *p,
							 const double *readings, unsigned nctr, unsigned intervals)
{
	unsigned long fired = 0;
	struct sl_det_verdict v;
	for (unsigned i = 0; i < intervals; i++) {
		uint64_t t = (uint64_t)(i + 1) * 1000000000ull;
		for (unsigned c = 0; c < nctr; c++) {
			sl_det_feed(&st[c], p, 1, readings[(size_t)c * TABLE + (i + c) % TABLE], t, &v);
			fired += (unsigned long)v.fire;
		}
	}
	return fired;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void params_for(int method, int baseline, struct sl_det_params *p)
{
	memset(p, 0, sizeof(*p));
	p->method = method;
	p->threshold = method == SL_DET_JUMP ? 0.4 : 0.9;
	p->window = method == SL_DET_CONSEC ? 3 : 5;
	p->baseline_factor = baseline ? 2.0 : 0;
	p->baseline_base = 1e-4;
	p->baseline_period_ns = 1800ull * 1000000000ull;
}

int main(int argc, char **argv)
{
	unsigned nctr = argc > 1 ? (unsigned)atoi(argv[1]) : 1000;
	unsigned intervals = argc > 2 ? (unsigned)atoi(argv[2]) : 600;
	unsigned reps = argc > 3 ? (unsigned)atoi(argv[3]) : 7;
	int only_method = argc > 4 ? sl_det_method_parse(argv[4]) : -1;
	int only_base = argc > 5 ? atoi(argv[5]) : -1;
	if (!nctr || !intervals || !reps || (argc > 4 && only_method < 0)) {
		fprintf(stderr, "usage: %s [NCTR] [INTERVALS] [REPEATS] [METHOD BASELINE(0|1)]\n", argv[0]);
		return 2;
	}
	double *readings = malloc(sizeof(double) * nctr * TABLE);
	struct sl_det_state *st = malloc(sizeof(*st) * nctr);
	double *ns = malloc(sizeof(double) * reps);
	if (!readings || !st || !ns)
		return 1;
	for (unsigned c = 0; c < nctr; c++) {
		double base = 0.02 + 0.58 * urand();
		unsigned phase = (unsigned)(urand() * 120);
		for (unsigned i = 0; i < TABLE; i++) {
			double r = base * (0.8 + 0.4 * urand());
			if ((i + phase) % 120 < 8)
				r = 0.9 + 0.1 * urand();
			if (urand() < 0.01)
				r = NAN;
			readings[(size_t)c * TABLE + i] = r;
		}
	}
	for (int m = 0; m < SL_DET_NMETHODS; m++) {
		for (int b = 0; b <= 1; b++) {
			if (only_method >= 0 && (m != only_method || b != only_base))
				continue;
			struct sl_det_params p;
			params_for(m, b, &p);
			char err[128];
			if (sl_det_params_check(&p, err, sizeof(err))) {
				fprintf(stderr, "params %s/%d: %s\n", sl_det_method_name(m), b, err);
				return 1;
			}
			unsigned long fired = 0;
			unsigned n = only_method >= 0 ? 1 : reps;
			for (unsigned r = 0; r < n; r++) {
				for (unsigned c = 0; c < nctr; c++)
					sl_det_reset(&st[c], 1);
				uint64_t t0 = now_ns();
				fired = feed_all(st, &p, readings, nctr, intervals);
				ns[r] = (double)(now_ns() - t0) / ((double)nctr * intervals);
			}
			qsort(ns, n, sizeof(double), cmp_d);
			printf("%s %s ns_per_ctr_interval median=%.1f min=%.1f max=%.1f fired=%lu\n",
			       sl_det_method_name(m), b ? "baseline" : "const", ns[n / 2], ns[0], ns[n - 1], fired);
		}
	}
	free(readings);
	free(st);
	free(ns);
	return 0;
}
