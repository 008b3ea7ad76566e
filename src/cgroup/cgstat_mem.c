/* memory controller readers (see cgstat.h, docs/STATS.md "Memory"). */
#include "cgroup/cgstat.h"

#include <string.h>

/* Single-value file into *dst with bit `bit`; "max" allowed only when
 * allow_max. Returns the malformed count (0 or 1). */
static int single(const char *text, bool allow_max, uint64_t *dst, uint32_t *known, uint32_t bit)
{
	uint64_t v;
	int rc;

	if (!text)
		return 0;
	rc = sl_cgparse_u64(text, &v);
	if (rc < 0 || (rc == 1 && !allow_max))
		return 1;
	*dst = v;
	*known |= bit;
	return 0;
}

/* working set from usage and the inactive-file figure. */
static void working_set(struct sl_cgstat_mem *m)
{
	if (!(m->known & SL_MEM_USAGE))
		return;
	m->known |= SL_MEM_WORKING_SET;
	if (!(m->known & SL_MEM_INACTIVE_FILE)) {
		m->working_set_bytes = m->usage_bytes;
		m->flags |= SL_MEMF_WS_NO_INACTIVE;
	} else if (m->inactive_file_bytes > m->usage_bytes) {
		m->working_set_bytes = 0;
		m->flags |= SL_MEMF_WS_FLOORED;
	} else {
		m->working_set_bytes = m->usage_bytes - m->inactive_file_bytes;
	}
}

enum { V2_ANON, V2_FILE, V2_INACTIVE_FILE, V2_N };
static const char *const v2_stat_keys[V2_N] = {
	[V2_ANON] = "anon", [V2_FILE] = "file", [V2_INACTIVE_FILE] = "inactive_file"};

int sl_cgstat_mem_v2_text(const struct sl_cgmem_v2_text *in, struct sl_cgstat_mem *out)
{
	uint64_t v[V2_N] = {0}, f = 0;
	int bad = 0;

	memset(out, 0, sizeof(*out));
	if (!in)
		return 0;
	bad += single(in->current, false, &out->usage_bytes, &out->known, SL_MEM_USAGE);
	bad += single(in->peak, false, &out->peak_bytes, &out->known, SL_MEM_PEAK);
	bad += single(in->max, true, &out->limit_bytes, &out->known, SL_MEM_LIMIT);
	bad += single(in->swap_current, false, &out->swap_bytes, &out->known, SL_MEM_SWAP);

	bad += sl_cgparse_kv(in->stat, v2_stat_keys, V2_N, v, &f);
	if (f & (1ull << V2_ANON)) {
		out->rss_bytes = v[V2_ANON];
		out->known |= SL_MEM_RSS;
	}
	if (f & (1ull << V2_FILE)) {
		out->cache_bytes = v[V2_FILE];
		out->known |= SL_MEM_CACHE;
	}
	if (f & (1ull << V2_INACTIVE_FILE)) {
		out->inactive_file_bytes = v[V2_INACTIVE_FILE];
		out->known |= SL_MEM_INACTIVE_FILE;
	}
	/* The root cgroup has no memory.current: anon + file (runc/opencontainers
	 * cgroups rootStatsFromMeminfo, Kubernetes memory-available docs). Only
	 * when memory.current is absent, not when it is malformed. */
	if (!in->current && (f & (1ull << V2_ANON)) && (f & (1ull << V2_FILE)) &&
	    v[V2_ANON] <= UINT64_MAX - v[V2_FILE]) {
		out->usage_bytes = v[V2_ANON] + v[V2_FILE];
		out->known |= SL_MEM_USAGE;
		out->flags |= SL_MEMF_USAGE_FROM_STAT;
	}
	if (!(out->known & SL_MEM_PEAK))
		out->flags |= SL_MEMF_NO_PEAK;
	working_set(out);

	if (in->events) {
		static const char *const keys[] = {"oom", "oom_kill"};
		uint64_t e[2] = {0}, ef = 0;
		bad += sl_cgparse_kv(in->events, keys, 2, e, &ef);
		if (ef & 1) {
			out->oom_events = e[0];
			out->known |= SL_MEM_OOM;
		}
		if (ef & 2) {
			out->oom_kill_events = e[1];
			out->known |= SL_MEM_OOM_KILL;
		}
	}
	return bad;
}

enum { V1_CACHE, V1_RSS, V1_SWAP, V1_INACTIVE_FILE, V1_N };
static const char *const v1_stat_keys[V1_N] = {
	[V1_CACHE] = "total_cache",
	[V1_RSS] = "total_rss",
	[V1_SWAP] = "total_swap",
	[V1_INACTIVE_FILE] = "total_inactive_file",
};

int sl_cgstat_mem_v1_text(const struct sl_cgmem_v1_text *in, struct sl_cgstat_mem *out)
{
	uint64_t v[V1_N] = {0}, f = 0;
	int bad = 0;

	memset(out, 0, sizeof(*out));
	if (!in)
		return 0;
	bad += single(in->usage_in_bytes, false, &out->usage_bytes, &out->known, SL_MEM_USAGE);
	bad += single(in->max_usage_in_bytes, false, &out->peak_bytes, &out->known, SL_MEM_PEAK);
	bad += single(in->limit_in_bytes, false, &out->limit_bytes, &out->known, SL_MEM_LIMIT);
	if ((out->known & SL_MEM_LIMIT) && out->limit_bytes >= SL_CGSTAT_V1_UNLIMITED_MIN)
		out->limit_bytes = SL_CGSTAT_UNLIMITED;

	bad += sl_cgparse_kv(in->stat, v1_stat_keys, V1_N, v, &f);
	if (f & (1ull << V1_CACHE)) {
		out->cache_bytes = v[V1_CACHE];
		out->known |= SL_MEM_CACHE;
	}
	if (f & (1ull << V1_RSS)) {
		out->rss_bytes = v[V1_RSS];
		out->known |= SL_MEM_RSS;
	}
	if (f & (1ull << V1_SWAP)) { /* only with swap accounting (memsw) */
		out->swap_bytes = v[V1_SWAP];
		out->known |= SL_MEM_SWAP;
	}
	if (f & (1ull << V1_INACTIVE_FILE)) {
		out->inactive_file_bytes = v[V1_INACTIVE_FILE];
		out->known |= SL_MEM_INACTIVE_FILE;
	}
	if (!(out->known & SL_MEM_PEAK))
		out->flags |= SL_MEMF_NO_PEAK;
	working_set(out);

	if (in->oom_control) {
		static const char *const keys[] = {"oom_kill"};
		uint64_t e = 0, ef = 0;
		bad += sl_cgparse_kv(in->oom_control, keys, 1, &e, &ef);
		if (ef & 1) {
			out->oom_kill_events = e;
			out->known |= SL_MEM_OOM_KILL;
		}
	}
	return bad;
}
