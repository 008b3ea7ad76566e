/* cpu / cpuacct readers (see cgstat.h, docs/STATS.md "CPU"). */
#include "cgroup/cgstat.h"

#include <string.h>

enum { K_USAGE, K_USER, K_SYSTEM, K_PERIODS, K_THROTTLED, K_THR_USEC, K_THR_NS, K_N };

static const char *const cpu_stat_keys[K_N] = {
	[K_USAGE] = "usage_usec",     [K_USER] = "user_usec",
	[K_SYSTEM] = "system_usec",   [K_PERIODS] = "nr_periods",
	[K_THROTTLED] = "nr_throttled", [K_THR_USEC] = "throttled_usec",
	[K_THR_NS] = "throttled_time",
};

/* cpu.stat, either spelling. Fills fields without zeroing *out. */
static int parse_cpu_stat(const char *text, struct sl_cgstat_cpu *out)
{
	uint64_t v[K_N] = {0}, f = 0;
	int bad = sl_cgparse_kv(text, cpu_stat_keys, K_N, v, &f);

#define TAKE(k, field, bit)            \
	if (f & (1ull << (k))) {        \
		out->field = v[k];     \
		out->known |= (bit);   \
	}
	TAKE(K_USAGE, usage_usec, SL_CPU_USAGE)
	TAKE(K_USER, user_usec, SL_CPU_USER)
	TAKE(K_SYSTEM, system_usec, SL_CPU_SYSTEM)
	TAKE(K_PERIODS, nr_periods, SL_CPU_NR_PERIODS)
	TAKE(K_THROTTLED, nr_throttled, SL_CPU_NR_THROTTLED)
#undef TAKE
	if (f & (1ull << K_THR_USEC)) {
		out->throttled_usec = v[K_THR_USEC];
		out->known |= SL_CPU_THROTTLED;
	} else if (f & (1ull << K_THR_NS)) {
		out->throttled_usec = v[K_THR_NS] / 1000; /* v1: ns, floor */
		out->known |= SL_CPU_THROTTLED;
	}
	return bad;
}

int sl_cgstat_cpu_v2_text(const char *cpu_stat, struct sl_cgstat_cpu *out)
{
	memset(out, 0, sizeof(*out));
	return parse_cpu_stat(cpu_stat, out);
}

/* ticks * 1e6 / hz without overflow for any ticks < 2^64 / 1e6 * hz. */
static uint64_t ticks_to_usec(uint64_t ticks, uint64_t hz)
{
	return ticks / hz * 1000000u + ticks % hz * 1000000u / hz;
}

int sl_cgstat_cpu_v1_text(const struct sl_cgcpu_v1_text *in, long clk_tck,
			  struct sl_cgstat_cpu *out)
{
	int bad = 0;

	memset(out, 0, sizeof(*out));
	if (!in)
		return 0;
	if (in->cpuacct_usage) {
		uint64_t ns;
		/* "max" is not a valid usage: treat as malformed */
		if (sl_cgparse_u64(in->cpuacct_usage, &ns) == 0) {
			out->usage_usec = ns / 1000;
			out->known |= SL_CPU_USAGE;
		} else {
			bad++;
		}
	}
	if (in->cpuacct_stat) {
		static const char *const keys[] = {"user", "system"};
		uint64_t v[2] = {0}, f = 0;
		bad += sl_cgparse_kv(in->cpuacct_stat, keys, 2, v, &f);
		if (clk_tck > 0) {
			if (f & 1) {
				out->user_usec = ticks_to_usec(v[0], (uint64_t)clk_tck);
				out->known |= SL_CPU_USER;
			}
			if (f & 2) {
				out->system_usec = ticks_to_usec(v[1], (uint64_t)clk_tck);
				out->known |= SL_CPU_SYSTEM;
			}
		}
	}
	if (in->cpu_stat) {
		/* v1 cpu.stat has no usage keys; keep only the CFS figures so a
		 * stray key cannot override cpuacct. */
		struct sl_cgstat_cpu t = {0};
		bad += parse_cpu_stat(in->cpu_stat, &t);
		t.known &= SL_CPU_NR_PERIODS | SL_CPU_NR_THROTTLED | SL_CPU_THROTTLED;
		out->nr_periods = t.nr_periods;
		out->nr_throttled = t.nr_throttled;
		out->throttled_usec = t.throttled_usec;
		out->known |= t.known;
	}
	return bad;
}
