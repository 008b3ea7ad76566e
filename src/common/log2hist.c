/* Log2 duration histograms; see log2hist.h. */
#include "common/log2hist.h"

unsigned sl_l2h_slot(uint64_t ns, unsigned nslots)
{
	uint64_t v = ns ? (ns - 1) / 1000 : 0;
	unsigned r = 0, top;

	if (nslots < 2 || v == 0)
		return 0;
	top = nslots - 2 < 63 ? nslots - 2 : 63;
	if (v >= (1ull << top))
		return nslots - 1;
	while (v >>= 1)
		r++;
	return r + 1;
}

uint64_t sl_l2h_upper_ns(unsigned k, unsigned nslots)
{
	return nslots >= 2 && k < nslots - 1 && k < 44 ? 1000ull << k : UINT64_MAX;
}

uint64_t sl_l2h_lower_ns(unsigned k, unsigned nslots)
{
	if (k == 0 || nslots < 2)
		return 0;
	if (k > nslots - 1)
		k = nslots - 1;
	return k - 1 < 44 ? 1000ull << (k - 1) : UINT64_MAX;
}

void sl_l2h_le_seconds(double *le, unsigned nslots)
{
	double v = 1e-6;

	for (unsigned k = 0; nslots >= 2 && k < nslots - 1; k++, v *= 2)
		le[k] = v;
}

uint64_t sl_l2h_count(const uint64_t *slots, unsigned nslots)
{
	uint64_t n = 0;

	for (unsigned k = 0; k < nslots; k++)
		n += slots[k];
	return n;
}

double sl_l2h_quantile(const uint64_t *slots, unsigned nslots, double q, uint64_t max_ns)
{
	uint64_t n = sl_l2h_count(slots, nslots), below = 0, rank;
	double r;

	if (n == 0 || !(q > 0 && q <= 1))
		return 0;
	r = q * (double)n;
	rank = (uint64_t)r;
	if ((double)rank < r)
		rank++;
	if (rank == 0)
		rank = 1;
	for (unsigned k = 0; k < nslots; k++) {
		if (!slots[k] || below + slots[k] < rank) {
			below += slots[k];
			continue;
		}
		double lo = (double)sl_l2h_lower_ns(k, nslots);
		double hi = k < nslots - 1 ? (double)sl_l2h_upper_ns(k, nslots)
					   : (max_ns > lo ? (double)max_ns : lo);
		double v = lo + (hi - lo) * (double)(rank - below) / (double)slots[k];
		if (max_ns && v > (double)max_ns)
			v = (double)max_ns;
		return v;
	}
	return 0; /* not reached */
}

int sl_l2h_delta(const uint64_t *cur, const uint64_t *last, uint64_t *dst, unsigned nslots)
{
	int reset = 0;

	for (unsigned k = 0; k < nslots; k++)
		if (cur[k] < last[k])
			reset = 1;
	for (unsigned k = 0; k < nslots; k++)
		dst[k] = reset ? cur[k] : cur[k] - last[k];
	return reset;
}

void sl_l2h_add(uint64_t *acc, const uint64_t *add, unsigned nslots)
{
	for (unsigned k = 0; k < nslots; k++)
		acc[k] += add[k];
}
