/* Bounded in-memory history of the modules' series (GET /api/v1/series/history,
 * docs/API.md; what the web UI plots, docs/UI.md).
 *
 * The poll loop samples every running module's series once per tick
 * (sl_series_hist_sample) and keeps, per (module, series, container), the
 * last SL_SERIES_HIST_POINTS distinct readings (a reading whose time equals
 * the previous one's is the same snapshot again and is not stored twice).
 * At most SL_SERIES_HIST_CONTAINERS containers per series: a new one
 * replaces the one updated longest ago, unless all of them were read in the
 * same sample (more live containers than rings: the first ones read keep
 * their history, the others have none). Memory is bounded by
 * SL_MAX_MODULES x SL_SERIES_HIST_SERIES x SL_SERIES_HIST_CONTAINERS rings of
 * SL_SERIES_HIST_POINTS x 16 bytes, allocated when first used. Readers (API
 * threads) copy under a mutex held for the copy only. */
#ifndef SL_AGENT_SERIES_HIST_H
#define SL_AGENT_SERIES_HIST_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/module.h"

#define SL_SERIES_HIST_POINTS 300     /* readings kept per container (5 min at tick_interval 1s) */
#define SL_SERIES_HIST_CONTAINERS 64  /* containers per series (the host series counts as one) */
#define SL_SERIES_HIST_SERIES 16      /* series per module that get a history */

struct sl_series_hist;

/* A new, empty history; NULL when out of memory. */
struct sl_series_hist *sl_series_hist_new(void);
/* Free h and every ring (NULL: no-op). No reader or sampler may run. */
void sl_series_hist_free(struct sl_series_hist *h);

/* Store readings pts[0..n) of series sidx of module midx (indexes into the
 * agent's module array and that module's ops->series). Readings of a series
 * or module beyond the bounds are ignored. Poll-loop thread. */
void sl_series_hist_add(struct sl_series_hist *h, unsigned midx, unsigned sidx, const struct sl_series_point *pts,
			size_t n);

/* The history of series sidx of module midx as JSON (new reference):
 * [{"container_id","pod_uid","points":[{"time": RFC 3339,"value"}...]}...],
 * oldest point first, containers sorted by id. container: NULL for all, a
 * string of 4 or more characters matches ids it begins (docker-style), a
 * shorter one exactly ("" is the host series). mono_to_real_ns turns the
 * readings' CLOCK_MONOTONIC times into wall time. NULL when out of memory. */
json_t *sl_series_hist_json(struct sl_series_hist *h, unsigned midx, unsigned sidx, const char *container,
			    int64_t mono_to_real_ns);

#endif
