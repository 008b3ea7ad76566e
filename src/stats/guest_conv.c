/* The guest source's conversion and summing rule (docs/STATS.md
 * "Guest-agent source"): pure, no I/O, never fails. */
#include "stats/guest.h"

#include <string.h>

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* memory.stat key as the agent passed it through; 1 when present. */
static int stat_key(const Grpc__MemoryStats *m, const char *key, uint64_t *v)
{
	for (size_t i = 0; i < m->n_stats; i++)
		if (m->stats[i] && m->stats[i]->key && !strcmp(m->stats[i]->key, key)) {
			*v = m->stats[i]->value;
			return 1;
		}
	return 0;
}

void sl_guest_from_cgroup_stats(const Grpc__CgroupStats *cs, struct sl_guest_sample *o)
{
	memset(o, 0, sizeof(*o));
	if (!cs) {
		o->flags = SL_GSF_NIL;
		return;
	}
	const Grpc__CpuStats *cpu = cs->cpu_stats;
	if (cpu && cpu->cpu_usage) {
		o->cpu_usage_usec = cpu->cpu_usage->total_usage / 1000;
		o->cpu_user_usec = cpu->cpu_usage->usage_in_usermode / 1000;
		o->cpu_system_usec = cpu->cpu_usage->usage_in_kernelmode / 1000;
		o->known |= SL_GS_CPU_USAGE | SL_GS_CPU_USER | SL_GS_CPU_SYSTEM;
	}
	if (cpu && cpu->throttling_data) {
		o->cpu_periods = cpu->throttling_data->periods;
		o->cpu_throttled_periods = cpu->throttling_data->throttled_periods;
		o->cpu_throttled_usec = cpu->throttling_data->throttled_time / 1000;
		o->known |= SL_GS_CPU_THROTTLE;
	}
	const Grpc__MemoryStats *m = cs->memory_stats;
	if (m) {
		o->mem_cache_bytes = m->cache;
		o->known |= SL_GS_MEM_CACHE;
		if (m->swap_usage) {
			o->mem_swap_bytes = m->swap_usage->usage;
			o->known |= SL_GS_MEM_SWAP;
		}
	}
	if (m && m->usage) {
		uint64_t u = m->usage->usage, inact = 0;
		o->mem_usage_bytes = u;
		o->known |= SL_GS_MEM_USAGE | SL_GS_MEM_WS;
		if (stat_key(m, "total_inactive_file", &inact)) {
			o->flags |= SL_GSF_WS_V1;
		} else if (!stat_key(m, "inactive_file", &inact)) {
			o->flags |= SL_GSF_WS_NO_INACTIVE;
			inact = 0;
		}
		if (inact > u)
			o->flags |= SL_GSF_WS_FLOORED;
		o->mem_working_set_bytes = inact >= u ? 0 : u - inact;
		if (m->usage->max_usage) {
			o->mem_peak_bytes = m->usage->max_usage;
			o->known |= SL_GS_MEM_PEAK;
		}
	}
	if (cs->pids_stats) {
		o->pids_current = cs->pids_stats->current;
		o->known |= SL_GS_PIDS;
	}
}

void sl_guest_sample_add(struct sl_guest_sample *a, const struct sl_guest_sample *b)
{
	a->known |= b->known;
	a->flags |= b->flags;
#define S(f) a->f = sat_add(a->f, b->f)
	S(cpu_usage_usec);
	S(cpu_user_usec);
	S(cpu_system_usec);
	S(cpu_periods);
	S(cpu_throttled_periods);
	S(cpu_throttled_usec);
	S(mem_usage_bytes);
	S(mem_working_set_bytes);
	S(mem_peak_bytes);
	S(mem_cache_bytes);
	S(mem_swap_bytes);
	S(pids_current);
#undef S
}
