/* Workload sums (STATS-2): pure arithmetic over struct sl_cgstat. */
#include "stats/stats.h"

#include <string.h>

void sl_stats_sum_init(struct sl_stats_sum *s)
{
	memset(s, 0, sizeof(*s));
	s->known = SL_SUM_ALL;
}

/* Saturating add: a sum never wraps (it stays at UINT64_MAX). */
static uint64_t sadd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

#define ADD(bit, have, dst, val)                       \
	do {                                           \
		if (have)                              \
			s->dst = sadd(s->dst, (val)); \
		else                                   \
			s->known &= ~(uint32_t)(bit);  \
	} while (0)

void sl_stats_sum_add(struct sl_stats_sum *s, const struct sl_cgstat *st)
{
	const struct sl_cgstat_cpu *c = &st->cpu;
	const struct sl_cgstat_mem *m = &st->mem;

	s->nread++;
	ADD(SL_SUM_CPU_USAGE, c->known & SL_CPU_USAGE, cpu_usage_usec, c->usage_usec);
	ADD(SL_SUM_CPU_USER, c->known & SL_CPU_USER, cpu_user_usec, c->user_usec);
	ADD(SL_SUM_CPU_SYSTEM, c->known & SL_CPU_SYSTEM, cpu_system_usec, c->system_usec);
	ADD(SL_SUM_CPU_PERIODS, c->known & SL_CPU_NR_PERIODS, cpu_nr_periods, c->nr_periods);
	ADD(SL_SUM_CPU_THROTTLED, c->known & SL_CPU_NR_THROTTLED, cpu_nr_throttled, c->nr_throttled);
	ADD(SL_SUM_CPU_THROTTLED_TIME, c->known & SL_CPU_THROTTLED, cpu_throttled_usec,
	    c->throttled_usec);
	ADD(SL_SUM_MEM_USAGE, m->known & SL_MEM_USAGE, mem_usage_bytes, m->usage_bytes);
	ADD(SL_SUM_MEM_WS, m->known & SL_MEM_WORKING_SET, mem_working_set_bytes,
	    m->working_set_bytes);
	ADD(SL_SUM_MEM_PEAK, m->known & SL_MEM_PEAK, mem_peak_bytes, m->peak_bytes);
	ADD(SL_SUM_MEM_CACHE, m->known & SL_MEM_CACHE, mem_cache_bytes, m->cache_bytes);
	ADD(SL_SUM_MEM_RSS, m->known & SL_MEM_RSS, mem_rss_bytes, m->rss_bytes);
	ADD(SL_SUM_MEM_SWAP, m->known & SL_MEM_SWAP, mem_swap_bytes, m->swap_bytes);
	ADD(SL_SUM_OOM, m->known & SL_MEM_OOM, oom_events, m->oom_events);
	ADD(SL_SUM_OOM_KILL, m->known & SL_MEM_OOM_KILL, oom_kill_events, m->oom_kill_events);
	ADD(SL_SUM_IO_BYTES, st->io.known & SL_IO_BYTES, io_rbytes, st->io.rbytes);
	ADD(SL_SUM_IO_BYTES, st->io.known & SL_IO_BYTES, io_wbytes, st->io.wbytes);
	ADD(SL_SUM_IO_OPS, st->io.known & SL_IO_OPS, io_rios, st->io.rios);
	ADD(SL_SUM_IO_OPS, st->io.known & SL_IO_OPS, io_wios, st->io.wios);
	ADD(SL_SUM_PIDS, st->pids.known & SL_PIDS_CURRENT, pids_current, st->pids.current);
}

void sl_stats_sum_finish(struct sl_stats_sum *s)
{
	if (s->nread == 0) {
		uint32_t n = s->nread;
		memset(s, 0, sizeof(*s));
		s->nread = n;
	}
	/* unknown figures read as 0, never as a partial sum */
#define Z(bit, f)                        \
	if (!(s->known & (bit)))         \
		s->f = 0;
	Z(SL_SUM_CPU_USAGE, cpu_usage_usec) Z(SL_SUM_CPU_USER, cpu_user_usec)
	Z(SL_SUM_CPU_SYSTEM, cpu_system_usec) Z(SL_SUM_CPU_PERIODS, cpu_nr_periods)
	Z(SL_SUM_CPU_THROTTLED, cpu_nr_throttled) Z(SL_SUM_CPU_THROTTLED_TIME, cpu_throttled_usec)
	Z(SL_SUM_MEM_USAGE, mem_usage_bytes) Z(SL_SUM_MEM_WS, mem_working_set_bytes)
	Z(SL_SUM_MEM_PEAK, mem_peak_bytes) Z(SL_SUM_MEM_CACHE, mem_cache_bytes)
	Z(SL_SUM_MEM_RSS, mem_rss_bytes) Z(SL_SUM_MEM_SWAP, mem_swap_bytes)
	Z(SL_SUM_OOM, oom_events) Z(SL_SUM_OOM_KILL, oom_kill_events)
	if (!(s->known & SL_SUM_IO_BYTES))
		s->io_rbytes = s->io_wbytes = 0;
	if (!(s->known & SL_SUM_IO_OPS))
		s->io_rios = s->io_wios = 0;
	Z(SL_SUM_PIDS, pids_current)
#undef Z
}
