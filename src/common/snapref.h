/* A published, reference-counted snapshot: the tick thread builds a new
 * snapshot and publishes it; API threads take a reference, read it without
 * locks, and put it back. The last put frees it (with the free function
 * given at sl_snap_init). One mutex guards only the pointer swap and the
 * reference increment, never a read of the snapshot. Used by every module
 * whose read side serves a per-tick snapshot (sched, mem, io, net, stall). */
#ifndef SANDLENS_COMMON_SNAPREF_H
#define SANDLENS_COMMON_SNAPREF_H

#include <pthread.h>
#include <stdatomic.h>

/* Embed as the first member of a module's snapshot struct. */
struct sl_snap {
	_Atomic int refs;
	void (*free)(struct sl_snap *s); /* NULL = free(s) */
};

struct sl_snapref {
	pthread_mutex_t lock;
	struct sl_snap *cur;
};

/* One reference held by the builder; free_fn NULL = free(). */
void sl_snap_init(struct sl_snap *s, void (*free_fn)(struct sl_snap *s));

/* Drop a reference (NULL is ignored); the last one frees. */
void sl_snap_put(struct sl_snap *s);

void sl_snapref_init(struct sl_snapref *r);

/* The current snapshot with a reference taken, or NULL before the first
 * publish. Pair with sl_snap_put. */
struct sl_snap *sl_snapref_get(struct sl_snapref *r);

/* Make s current (the builder's reference passes to the holder) and put
 * the previous one. s may be NULL (unpublish). */
void sl_snapref_publish(struct sl_snapref *r, struct sl_snap *s);

/* Unpublish and destroy the mutex; readers must be done. */
void sl_snapref_destroy(struct sl_snapref *r);

#endif
