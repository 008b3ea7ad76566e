/* mem module histogram math; see mem_hist.h. */
#include "modules/mem_hist.h"
#include "common/log2hist.h"

#include <math.h>
#include <string.h>

unsigned sl_mem_slot(uint64_t ns)
{
	return sl_l2h_slot(ns, SL_MEM_SLOTS);
}

uint64_t sl_mem_slot_upper_ns(unsigned k)
{
	return sl_l2h_upper_ns(k, SL_MEM_SLOTS);
}

uint64_t sl_mem_slot_lower_ns(unsigned k)
{
	return sl_l2h_lower_ns(k, SL_MEM_SLOTS);
}

double sl_mem_slot_le_seconds(unsigned k)
{
	return k < SL_MEM_FINITE_SLOTS ? ldexp(1e-6, (int)k) : INFINITY;
}

uint64_t sl_mem_count(const uint64_t slots[SL_MEM_SLOTS])
{
	return sl_l2h_count(slots, SL_MEM_SLOTS);
}

double sl_mem_quantile(const uint64_t slots[SL_MEM_SLOTS], double q, uint64_t max_ns)
{
	uint64_t n = sl_mem_count(slots), below = 0, rank;
	double lo, hi, r;

	if (!n || !(q > 0) || q > 1)
		return 0;
	rank = (uint64_t)ceil(q * (double)n);
	if (rank < 1)
		rank = 1;
	for (unsigned k = 0; k < SL_MEM_SLOTS; k++) {
		if (!slots[k] || below + slots[k] < rank) {
			below += slots[k];
			continue;
		}
		/* slot 0 (lower bound 0) is not interpolated: what is there is
		 * mostly exactly 0 (throttle delays are whole jiffies or 0), and
		 * an interpolation would invent a fraction of a microsecond */
		if (k == 0)
			return 0;
		lo = (double)sl_mem_slot_lower_ns(k);
		hi = k < SL_MEM_FINITE_SLOTS ? (double)sl_mem_slot_upper_ns(k) : (double)max_ns;
		if (hi < lo)
			hi = lo;
		r = lo + (hi - lo) * (double)(rank - below) / (double)slots[k];
		if (max_ns && r > (double)max_ns)
			r = (double)max_ns;
		return r;
	}
	return 0;
}

void sl_mem_fold_cpus(const struct sl_mem_hist *percpu, int ncpus, struct sl_mem_hist *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (int c = 0; c < ncpus; c++) {
		const struct sl_mem_hist *h = &percpu[c];
		for (unsigned k = 0; k < SL_MEM_SLOTS; k++)
			sum->slots[k] += h->slots[k];
		sum->sum_ns += h->sum_ns;
		sum->nr_scanned += h->nr_scanned;
		sum->nr_reclaimed += h->nr_reclaimed;
		if (h->max_ns > sum->max_ns)
			sum->max_ns = h->max_ns;
	}
}

int sl_mem_delta(const struct sl_mem_hist *cur, const struct sl_mem_hist *last, struct sl_mem_hist *dst)
{
	int reset = cur->sum_ns < last->sum_ns || cur->nr_scanned < last->nr_scanned ||
		    cur->nr_reclaimed < last->nr_reclaimed;

	for (unsigned k = 0; k < SL_MEM_SLOTS && !reset; k++)
		reset = cur->slots[k] < last->slots[k];
	if (reset) {
		*dst = *cur;
		return 1;
	}
	for (unsigned k = 0; k < SL_MEM_SLOTS; k++)
		dst->slots[k] = cur->slots[k] - last->slots[k];
	dst->sum_ns = cur->sum_ns - last->sum_ns;
	dst->nr_scanned = cur->nr_scanned - last->nr_scanned;
	dst->nr_reclaimed = cur->nr_reclaimed - last->nr_reclaimed;
	dst->max_ns = cur->max_ns;
	return 0;
}
