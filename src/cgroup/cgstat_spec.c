/* Container limits (cAdvisor's container_spec_* figures; see cgstat.h,
 * docs/STATS.md "Prometheus"). */
#include "cgroup/cgstat.h"

#include <errno.h>
#include <string.h>

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int sl_cgparse_cpu_max(const char *text, uint64_t *quota, uint64_t *period)
{
	const char *p = text;
	uint64_t q, per;

	if (!p)
		return -EINVAL;
	while (blank(*p))
		p++;
	if (strncmp(p, "max", 3) == 0) {
		q = SL_CGSTAT_UNLIMITED;
		p += 3;
	} else if (!sl_cgparse_dec(&p, &q)) {
		return -EINVAL;
	}
	if (*p != ' ')
		return -EINVAL;
	while (*p == ' ')
		p++;
	if (!sl_cgparse_dec(&p, &per) || per == 0)
		return -EINVAL;
	while (blank(*p))
		p++;
	if (*p)
		return -EINVAL;
	*quota = q;
	*period = per;
	return 0;
}

int sl_cgparse_cfs_quota(const char *text, uint64_t *out)
{
	const char *p = text;

	if (!p)
		return -EINVAL;
	while (blank(*p))
		p++;
	if (p[0] == '-' && p[1] == '1') {
		p += 2;
		while (blank(*p))
			p++;
		if (*p)
			return -EINVAL;
		*out = SL_CGSTAT_UNLIMITED;
		return 1;
	}
	uint64_t v;
	if (sl_cgparse_u64(p, &v) != 0) /* "max" is not a v1 value */
		return -EINVAL;
	*out = v;
	return 0;
}

bool sl_cgstat_weight_to_shares(uint64_t weight, uint64_t *shares)
{
	if (weight < 1 || weight > 10000)
		return false;
	*shares = 2 + ((weight - 1) * 262142) / 9999;
	return true;
}

/* A byte limit: a decimal or "max" (allow_max), v1 huge values taken as
 * unlimited. Returns the malformed count (0 or 1). */
static int limit(const char *text, bool allow_max, uint64_t *dst, uint32_t *known, uint32_t bit)
{
	uint64_t v;
	int rc;

	if (!text)
		return 0;
	rc = sl_cgparse_u64(text, &v);
	if (rc < 0 || (rc == 1 && !allow_max))
		return 1;
	if (v >= SL_CGSTAT_V1_UNLIMITED_MIN)
		v = SL_CGSTAT_UNLIMITED;
	*dst = v;
	*known |= bit;
	return 0;
}

int sl_cgstat_spec_v2_text(const struct sl_cgspec_v2_text *in, struct sl_cgstat_spec *out)
{
	int bad = 0;

	memset(out, 0, sizeof(*out));
	if (!in)
		return 0;
	if (in->cpu_max) {
		if (sl_cgparse_cpu_max(in->cpu_max, &out->cpu_quota_usec, &out->cpu_period_usec) == 0)
			out->known |= SL_SPEC_CPU_QUOTA | SL_SPEC_CPU_PERIOD;
		else
			bad++;
	}
	if (in->cpu_weight) {
		uint64_t w;
		if (sl_cgparse_u64(in->cpu_weight, &w) == 0 &&
		    sl_cgstat_weight_to_shares(w, &out->cpu_shares))
			out->known |= SL_SPEC_CPU_SHARES;
		else
			bad++;
	}
	bad += limit(in->memory_min, true, &out->mem_reservation_bytes, &out->known,
		     SL_SPEC_MEM_RESERVATION);
	bad += limit(in->swap_max, true, &out->mem_swap_limit_bytes, &out->known,
		     SL_SPEC_MEM_SWAP_LIMIT);
	return bad;
}

int sl_cgstat_spec_v1_text(const struct sl_cgspec_v1_text *in, struct sl_cgstat_spec *out)
{
	int bad = 0;
	uint64_t v;

	memset(out, 0, sizeof(*out));
	if (!in)
		return 0;
	if (in->cfs_quota_us) {
		if (sl_cgparse_cfs_quota(in->cfs_quota_us, &out->cpu_quota_usec) >= 0)
			out->known |= SL_SPEC_CPU_QUOTA;
		else
			bad++;
	}
	if (in->cfs_period_us) {
		if (sl_cgparse_u64(in->cfs_period_us, &v) == 0 && v > 0) {
			out->cpu_period_usec = v;
			out->known |= SL_SPEC_CPU_PERIOD;
		} else {
			bad++;
		}
	}
	if (in->shares) {
		if (sl_cgparse_u64(in->shares, &v) == 0) {
			out->cpu_shares = v;
			out->known |= SL_SPEC_CPU_SHARES;
		} else {
			bad++;
		}
	}
	bad += limit(in->soft_limit, false, &out->mem_reservation_bytes, &out->known,
		     SL_SPEC_MEM_RESERVATION);
	bad += limit(in->memsw_limit, false, &out->mem_swap_limit_bytes, &out->known,
		     SL_SPEC_MEM_SWAP_LIMIT);
	return bad;
}
