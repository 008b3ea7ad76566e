/* Published reference-counted snapshots; see snapref.h. */
#include "common/snapref.h"

#include <stdlib.h>

void sl_snap_init(struct sl_snap *s, void (*free_fn)(struct sl_snap *s))
{
	atomic_init(&s->refs, 1);
	s->free = free_fn;
}

void sl_snap_put(struct sl_snap *s)
{
	if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	if (s->free)
		s->free(s);
	else
		free(s);
}

void sl_snapref_init(struct sl_snapref *r)
{
	pthread_mutex_init(&r->lock, NULL);
	r->cur = NULL;
}

struct sl_snap *sl_snapref_get(struct sl_snapref *r)
{
	struct sl_snap *s;

	pthread_mutex_lock(&r->lock);
	s = r->cur;
	if (s)
		atomic_fetch_add(&s->refs, 1);
	pthread_mutex_unlock(&r->lock);
	return s;
}

void sl_snapref_publish(struct sl_snapref *r, struct sl_snap *s)
{
	struct sl_snap *old;

	pthread_mutex_lock(&r->lock);
	old = r->cur;
	r->cur = s;
	pthread_mutex_unlock(&r->lock);
	sl_snap_put(old);
}

void sl_snapref_destroy(struct sl_snapref *r)
{
	sl_snapref_publish(r, NULL);
	pthread_mutex_destroy(&r->lock);
}
