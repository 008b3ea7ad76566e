/* Detectors (detect.h). */
#include "auto/detect.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const method_names[SL_DET_NMETHODS] = {"mean", "ema", "jump", "consecutive"};

const char *sl_det_method_name(int method)
{
	return method >= 0 && method < SL_DET_NMETHODS ? method_names[method] : NULL;
}

int sl_det_method_parse(const char *name)
{
	for (int i = 0; name && i < SL_DET_NMETHODS; i++)
		if (!strcmp(name, method_names[i]))
			return i;
	return -1;
}

int sl_det_params_check(const struct sl_det_params *p, char *err, unsigned errlen)
{
	if (!sl_det_method_name(p->method)) {
		snprintf(err, errlen, "unknown method (mean, ema, jump or consecutive)");
		return -1;
	}
	if (!isfinite(p->threshold) || p->threshold <= 0) {
		snprintf(err, errlen, "threshold must be a positive number");
		return -1;
	}
	if (p->method != SL_DET_JUMP && (p->window < 1 || p->window > SL_DET_MAX_WINDOW)) {
		snprintf(err, errlen, "window must be 1..%d readings", SL_DET_MAX_WINDOW);
		return -1;
	}
	if (!isfinite(p->baseline_factor) || p->baseline_factor < 0) {
		snprintf(err, errlen, "baseline factor must be >= 0");
		return -1;
	}
	if (p->baseline_factor > 0 && (!isfinite(p->baseline_base) || p->baseline_base <= 0)) {
		snprintf(err, errlen, "baseline resolution must be > 0");
		return -1;
	}
	return 0;
}

void sl_det_reset(struct sl_det_state *st, uint64_t epoch)
{
	memset(st, 0, sizeof(*st));
	st->epoch = epoch;
}

/* Bucket of v: 0 below base, then half octaves. */
static unsigned bucket_of(double v, double base)
{
	if (!(v >= base))
		return 0;
	double b = floor(2.0 * log2(v / base)) + 1.0;
	if (b >= SL_DET_BASELINE_BUCKETS - 1)
		return SL_DET_BASELINE_BUCKETS - 1;
	return (unsigned)b;
}

/* Upper bound of bucket b. */
static double bucket_upper(unsigned b, double base)
{
	return base * pow(2.0, (double)b / 2.0);
}

static void baseline_rotate(struct sl_det_baseline *b, const struct sl_det_params *p, uint64_t now)
{
	uint64_t period = p->baseline_period_ns ? p->baseline_period_ns : 1800ull * 1000000000ull;
	if (!b->cur_start_ns) {
		b->cur_start_ns = now;
		return;
	}
	if (now - b->cur_start_ns < period)
		return;
	if (now - b->cur_start_ns >= 2 * period)
		memset(b->prev, 0, sizeof(b->prev)); /* nothing read for a whole period */
	else
		memcpy(b->prev, b->cur, sizeof(b->prev));
	memset(b->cur, 0, sizeof(b->cur));
	b->cur_start_ns = now;
}

static void baseline_add(struct sl_det_baseline *b, const struct sl_det_params *p, double v, uint64_t now)
{
	baseline_rotate(b, p, now);
	unsigned k = bucket_of(v, p->baseline_base);
	if (b->cur[k] < UINT16_MAX)
		b->cur[k]++;
}

double sl_det_baseline_p99(const struct sl_det_baseline *b, const struct sl_det_params *p)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < SL_DET_BASELINE_BUCKETS; i++)
		n += (uint64_t)b->cur[i] + b->prev[i];
	if (n < SL_DET_BASELINE_MIN || p->baseline_factor <= 0)
		return NAN;
	uint64_t rank = (n * 99 + 99) / 100, acc = 0; /* ceil(0.99 n) */
	for (unsigned i = 0; i < SL_DET_BASELINE_BUCKETS; i++) {
		acc += (uint64_t)b->cur[i] + b->prev[i];
		if (acc >= rank)
			return bucket_upper(i, p->baseline_base);
	}
	return bucket_upper(SL_DET_BASELINE_BUCKETS - 1, p->baseline_base);
}

void sl_det_feed(struct sl_det_state *st, const struct sl_det_params *p, uint64_t epoch, double value,
		 uint64_t now_ns, struct sl_det_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->baseline_p99 = NAN;
	v->stat = NAN;
	if (st->epoch != epoch)
		sl_det_reset(st, epoch);
	v->threshold = p->threshold;
	double p99 = sl_det_baseline_p99(&st->base, p);
	if (p->baseline_factor > 0 && !isnan(p99)) {
		v->baseline_p99 = p99;
		double rel = p->baseline_factor * p99;
		if (rel > p->threshold) {
			v->threshold = rel;
			v->baseline_used = 1;
		}
	}
	if (!isfinite(value)) {
		st->run = 0;
		st->has_prev = 0;
		return;
	}
	st->readings++;
	double stat = value;
	int ready = 1;
	unsigned win = p->window < 1 ? 1 : p->window > SL_DET_MAX_WINDOW ? SL_DET_MAX_WINDOW : p->window;
	switch (p->method) {
	case SL_DET_MEAN: {
		st->ring[st->ring_head] = value;
		st->ring_head = (st->ring_head + 1) % win;
		if (st->ring_n < win)
			st->ring_n++;
		double sum = 0;
		for (unsigned i = 0; i < st->ring_n; i++)
			sum += st->ring[i];
		stat = sum / st->ring_n;
		ready = st->ring_n >= win;
		v->samples = st->ring_n;
		break;
	}
	case SL_DET_EMA: {
		double alpha = 2.0 / (win + 1.0);
		st->ema = st->ema_n ? alpha * value + (1 - alpha) * st->ema : value;
		st->ema_n++;
		stat = st->ema;
		ready = st->ema_n >= win;
		v->samples = st->ema_n < win ? st->ema_n : win;
		break;
	}
	case SL_DET_JUMP:
		ready = st->has_prev;
		stat = ready ? value - st->prev : NAN;
		st->prev = value;
		st->has_prev = 1;
		v->samples = ready ? 2 : 1;
		break;
	case SL_DET_CONSEC:
	default:
		st->run = value > v->threshold ? st->run + 1 : 0;
		ready = st->run >= win;
		stat = value;
		v->samples = st->run;
		break;
	}
	v->stat = stat;
	v->evaluated = ready;
	int above = ready && stat > v->threshold;
	if (p->method == SL_DET_CONSEC)
		above = ready; /* the run itself is the condition */
	if (above && !st->latched) {
		v->fire = 1;
		st->latched = 1;
	} else if (!above && !(p->method == SL_DET_CONSEC && st->run > 0)) {
		st->latched = 0;
	}
	/* The baseline learns the container's normal: readings taken while the
	 * detector is latched (an excursion under way) are left out. */
	if (p->baseline_factor > 0 && !st->latched)
		baseline_add(&st->base, p, value, now_ns);
}

double sl_det_rate(uint64_t prev, uint64_t cur, double dt_s)
{
	if (!(dt_s > 0) || cur < prev)
		return NAN;
	return (double)(cur - prev) / dt_s;
}
