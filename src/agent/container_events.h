/* Per-container event counters: sandlens_container_events_total{type,
 * <identity labels>} (docs/API.md "Metrics"). Every event the pipeline
 * stores is counted under the container (or, for a pod-level subject, the
 * pod) it was attributed to, by kind, in kernel events: the record's weight
 * (1 + the events of its key it carries as truncated_count), so a suppressed
 * exec or sched_delay still counts. Events attributed to the host, and
 * events lost before the pipeline (full ring buffers, pressure step 4,
 * counted in sandlens_events_dropped_total), are not in it.
 *
 * Bounded: at most `max` containers; a new one past that evicts the one
 * whose last event is the oldest, and sandlens_container_events_evicted_total
 * counts it (its counts restart if it comes back; rate() treats that as a
 * counter reset). Generic over kinds: it knows a kind only by its index in
 * the agent's kind table, never a module by name.
 *
 * Threads: sl_cevents_count on the poll-loop thread, sl_cevents_write on API
 * threads; one mutex, held for a hash lookup or for copying the table. */
#ifndef SANDLENS_AGENT_CONTAINER_EVENTS_H
#define SANDLENS_AGENT_CONTAINER_EVENTS_H

#include <stdint.h>

#include "cgroup/attr.h"

struct sl_prom;
struct sl_cevents;

/* A table of at most max containers for nkinds kinds. NULL on ENOMEM or
 * max/nkinds 0. */
struct sl_cevents *sl_cevents_new(unsigned max, unsigned nkinds);
void sl_cevents_free(struct sl_cevents *c);

/* Count weight events of kind for attribution at (no-op for the host, an
 * unknown container or a kind >= nkinds). now_ns orders eviction. */
void sl_cevents_count(struct sl_cevents *c, const struct sl_attr *at, unsigned kind, uint64_t weight,
		      uint64_t now_ns);

/* Write both families through p; kind_name(kind, ctx) names a kind (the
 * type label). Kinds never counted for a container are left out. */
void sl_cevents_write(struct sl_cevents *c, struct sl_prom *p, const char *(*kind_name)(unsigned, void *),
		      void *ctx);

/* Containers evicted so far (tests). */
uint64_t sl_cevents_evicted(struct sl_cevents *c);

#endif
