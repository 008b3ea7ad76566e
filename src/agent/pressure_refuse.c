/* Pressure step 3 for the API (see pressure_rt.h). Kept apart from
 * pressure_rt.c so that code calling it links without the agent core. */
#include "agent/pressure_internal.h"

#include <stdio.h>

int sl_pressure_rt_refuse_tasks(struct sl_pressure_rt *r, char *why, size_t len)
{
	if (!r || atomic_load(r->level) < 3)
		return 0;
	pthread_mutex_lock(&r->mu);
	snprintf(why, len, "agent under pressure: level %d (%s): %s; tasks are refused until it is back below 3",
		 r->sm.level, sl_pressure_step_name(r->sm.level), r->up_reason);
	pthread_mutex_unlock(&r->mu);
	return 1;
}

