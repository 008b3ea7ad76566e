/* The runtime state of pressure_rt.c, shared with pressure_refuse.c (the
 * API's step-3 check lives apart so the API links without the agent core). */
#ifndef SANDLENS_AGENT_PRESSURE_INTERNAL_H
#define SANDLENS_AGENT_PRESSURE_INTERNAL_H

#include "agent/pressure.h"
#include "agent/pressure_rt.h"

#include <pthread.h>
#include <stdatomic.h>

#define PRESSURE_NSAMPLES 128 /* CPU samples kept: the window at one per tick, up to 128 ticks */

struct cpu_sample {
	uint64_t mono_ns, cpu_ns;
};

struct sl_pressure_rt {
	struct sl_agent *a;
	_Atomic int *level;        /* &a->pressure_level */
	pthread_mutex_t mu;        /* guards sm, up_reason and cg for readers */
	struct sl_pressure sm;     /* written by the poll loop under mu */
	char up_reason[SL_PRESSURE_REASON]; /* reason of the last step up */
	struct sl_pressure_cgroup cg;
	struct cpu_sample s[PRESSURE_NSAMPLES];
	unsigned ns, head;         /* samples held, next slot */
	_Atomic unsigned divisor;  /* step 1 for the poll loop's metric ticks */
	_Atomic unsigned shift;    /* step 2 as applied */
	long page;
};

#endif
