/* Runqueue-latency histogram math; see sched_hist.h. */
#include "modules/sched_hist.h"
#include "common/log2hist.h"

#include <stdio.h>
#include <string.h>

unsigned sl_sched_slot(uint64_t ns)
{
	return sl_l2h_slot(ns, SL_SCHED_SLOTS);
}

uint64_t sl_sched_slot_upper_ns(unsigned k)
{
	return sl_l2h_upper_ns(k, SL_SCHED_SLOTS);
}

uint64_t sl_sched_slot_lower_ns(unsigned k)
{
	return sl_l2h_lower_ns(k, SL_SCHED_SLOTS);
}

void sl_sched_le_label(unsigned k, char *buf, size_t len)
{
	if (k >= SL_SCHED_FINITE_SLOTS)
		snprintf(buf, len, "+Inf");
	else /* %.9g is exact for every 2^k * 1e-6, k <= 20 */
		snprintf(buf, len, "%.9g", (double)(1ull << k) * 1e-6);
}

void sl_sched_cumulative(const uint64_t slots[SL_SCHED_SLOTS], uint64_t cum[SL_SCHED_SLOTS])
{
	uint64_t s = 0;
	for (unsigned k = 0; k < SL_SCHED_SLOTS; k++) {
		s += slots[k];
		cum[k] = s;
	}
}

uint64_t sl_sched_count(const uint64_t slots[SL_SCHED_SLOTS])
{
	return sl_l2h_count(slots, SL_SCHED_SLOTS);
}

double sl_sched_quantile(const uint64_t slots[SL_SCHED_SLOTS], double q, uint64_t max_ns)
{
	return sl_l2h_quantile(slots, SL_SCHED_SLOTS, q, max_ns);
}

int sl_sched_delta(const uint64_t a[SL_SCHED_SLOTS], const uint64_t b[SL_SCHED_SLOTS],
		   uint64_t dst[SL_SCHED_SLOTS])
{
	return sl_l2h_delta(a, b, dst, SL_SCHED_SLOTS);
}

void sl_sched_fold_cpus(const struct sl_sched_hist *percpu, int ncpus, uint64_t epoch,
			struct sl_sched_hist *sum, uint64_t *epoch_max_ns)
{
	uint64_t mx = 0;

	memset(sum, 0, sizeof(*sum));
	for (int c = 0; c < ncpus; c++) {
		const struct sl_sched_hist *h = &percpu[c];
		for (unsigned k = 0; k < SL_SCHED_SLOTS; k++)
			sum->slots[k] += h->slots[k];
		sum->sum_ns += h->sum_ns;
		for (unsigned i = 0; i < 3; i++)
			sum->class_ns[i] += h->class_ns[i];
		unsigned s = epoch & 1;
		if (h->max_epoch[s] == epoch && h->max_ns[s] > mx)
			mx = h->max_ns[s];
	}
	if (epoch_max_ns)
		*epoch_max_ns = mx;
}
