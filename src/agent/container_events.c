/* Per-container event counters (container_events.h). */
#include "agent/container_events.h"
#include "cgroup/attr_labels.h"
#include "common/prom.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

struct centry {
	char key[SL_CONTAINER_ID_LEN + SL_POD_UID_LEN + 2]; /* "c:<id>" or "p:<uid>" */
	struct sl_attr at;                                  /* identity at its last event */
	uint64_t last_ns;
	UT_hash_handle hh;
	uint64_t counts[]; /* nkinds */
};

struct sl_cevents {
	pthread_mutex_t lock;
	unsigned max, nkinds, n;
	uint64_t evicted;
	struct centry *tab;
};

struct sl_cevents *sl_cevents_new(unsigned max, unsigned nkinds)
{
	if (!max || !nkinds)
		return NULL;
	struct sl_cevents *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->max = max;
	c->nkinds = nkinds;
	return c;
}

void sl_cevents_free(struct sl_cevents *c)
{
	struct centry *e, *t;
	if (!c)
		return;
	HASH_ITER(hh, c->tab, e, t) {
		HASH_DEL(c->tab, e);
		free(e);
	}
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* The entry whose last event is the oldest (the table is small enough for
 * a scan at the rare eviction). */
static void evict_oldest(struct sl_cevents *c)
{
	struct centry *e, *t, *old = NULL;
	HASH_ITER(hh, c->tab, e, t)
		if (!old || e->last_ns < old->last_ns)
			old = e;
	if (!old)
		return;
	HASH_DEL(c->tab, old);
	free(old);
	c->n--;
	c->evicted++;
}

void sl_cevents_count(struct sl_cevents *c, const struct sl_attr *at, unsigned kind, uint64_t weight,
		      uint64_t now_ns)
{
	char key[sizeof(((struct centry *)0)->key)];
	struct centry *e;

	if (!c || !at || kind >= c->nkinds)
		return;
	if (at->container_id[0])
		snprintf(key, sizeof(key), "c:%s", at->container_id);
	else if (at->pod_uid[0])
		snprintf(key, sizeof(key), "p:%s", at->pod_uid);
	else
		return;
	pthread_mutex_lock(&c->lock);
	HASH_FIND_STR(c->tab, key, e);
	if (!e) {
		if (c->n >= c->max)
			evict_oldest(c);
		e = calloc(1, sizeof(*e) + c->nkinds * sizeof(e->counts[0]));
		if (!e) {
			pthread_mutex_unlock(&c->lock);
			return;
		}
		memcpy(e->key, key, sizeof(key));
		HASH_ADD_STR(c->tab, key, e);
		c->n++;
	}
	e->at = *at; /* names may arrive after the first event */
	e->last_ns = now_ns;
	e->counts[kind] += weight ? weight : 1;
	pthread_mutex_unlock(&c->lock);
}

void sl_cevents_write(struct sl_cevents *c, struct sl_prom *p, const char *(*kind_name)(unsigned, void *),
		      void *ctx)
{
	static const char fam[] = "sandlens_container_events_total";
	struct centry *e, *t;

	if (!c)
		return;
	sl_prom_family(p, fam, SL_PROM_COUNTER,
		       "Events stored per container (or pod-level cgroup) and type, in kernel events (records "
		       "weighted by the suppressed events they carry); host events not included.");
	pthread_mutex_lock(&c->lock);
	HASH_ITER(hh, c->tab, e, t) {
		struct sl_prom_label l[SL_ATTR_LABELS_MAX + 2];
		size_t n = sl_attr_labels(&e->at, l);
		for (unsigned k = 0; k < c->nkinds; k++) {
			if (!e->counts[k])
				continue;
			l[n] = (struct sl_prom_label){"type", kind_name(k, ctx)};
			l[n + 1] = (struct sl_prom_label){NULL, NULL};
			sl_prom_u64(p, fam, l, e->counts[k]);
		}
	}
	uint64_t ev = c->evicted;
	pthread_mutex_unlock(&c->lock);
	sl_prom_family(p, "sandlens_container_events_evicted_total", SL_PROM_COUNTER,
		       "Containers dropped from sandlens_container_events_total because its table was full "
		       "(the one whose last event was the oldest).");
	sl_prom_u64(p, "sandlens_container_events_evicted_total", NULL, ev);
}

uint64_t sl_cevents_evicted(struct sl_cevents *c)
{
	pthread_mutex_lock(&c->lock);
	uint64_t v = c->evicted;
	pthread_mutex_unlock(&c->lock);
	return v;
}
