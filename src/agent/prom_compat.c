/* TRANSITIONAL FILE * entry points (src/common/prom_compat.h): each call
 * gets a writer of its own on out. Remove once src/agent/agent.c passes a
 * struct sl_prom *. */
#include "agent/pressure_rt.h"
#include "api/api.h"
#include "common/prom.h"
#include "stats/stats.h"
#include "store/store.h"

/* <fn>_file(obj, out): fn(obj, a writer on out). */
#define SHIM(fn, T)                                  \
	void fn##_file(T *obj, FILE *out)            \
	{                                            \
		struct sl_prom *p = sl_prom_new(out); \
		if (p)                               \
			(fn)(obj, p);                \
		sl_prom_free(p);                     \
	}

SHIM(sl_store_write_metrics, struct sl_store)
SHIM(sl_pressure_rt_write_metrics, struct sl_pressure_rt)
SHIM(sl_stats_write_self_metrics, struct sl_stats)

void sl_api_write_metrics_file(FILE *out)
{
	struct sl_prom *p = sl_prom_new(out);
	if (p)
		(sl_api_write_metrics)(p);
	sl_prom_free(p);
}
