/* Bounded history of the modules' series (series_hist.h). */
#include "agent/series_hist.h"
#include "common/timefmt.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct ring {
	char id[SL_CONTAINER_ID_LEN];
	char pod_uid[SL_POD_UID_LEN];
	uint64_t last_add; /* sample counter at the last reading (eviction order) */
	unsigned head, n;  /* next slot, readings held */
	struct { uint64_t ts_ns; double v; } p[SL_SERIES_HIST_POINTS];
};

struct series_rings {
	int nr;
	struct ring *r[SL_SERIES_HIST_CONTAINERS];
};

struct sl_series_hist {
	pthread_mutex_t lock;
	uint64_t adds;
	struct series_rings *s[SL_MAX_MODULES][SL_SERIES_HIST_SERIES];
};

struct sl_series_hist *sl_series_hist_new(void)
{
	struct sl_series_hist *h = calloc(1, sizeof(*h));
	if (h && pthread_mutex_init(&h->lock, NULL)) {
		free(h);
		h = NULL;
	}
	return h;
}

void sl_series_hist_free(struct sl_series_hist *h)
{
	if (!h)
		return;
	for (unsigned m = 0; m < SL_MAX_MODULES; m++)
		for (unsigned s = 0; s < SL_SERIES_HIST_SERIES; s++) {
			struct series_rings *sr = h->s[m][s];
			for (int i = 0; sr && i < sr->nr; i++)
				free(sr->r[i]);
			free(sr);
		}
	pthread_mutex_destroy(&h->lock);
	free(h);
}

/* The ring of container id in sr, made (or taken from the container
 * updated longest ago) when there is none. NULL: out of memory, or every
 * ring was updated by this very sample (adds): more containers than rings
 * read at once, the first ones keep theirs rather than all of them churning. */
static struct ring *ring_for(struct series_rings *sr, const struct sl_series_point *p, uint64_t adds)
{
	int oldest = -1;
	for (int i = 0; i < sr->nr; i++) {
		if (!strcmp(sr->r[i]->id, p->container_id))
			return sr->r[i];
		if (oldest < 0 || sr->r[i]->last_add < sr->r[oldest]->last_add)
			oldest = i;
	}
	struct ring *r;
	if (sr->nr < SL_SERIES_HIST_CONTAINERS) {
		r = malloc(sizeof(*r));
		if (!r)
			return NULL;
		sr->r[sr->nr++] = r;
	} else if (sr->r[oldest]->last_add == adds) {
		return NULL;
	} else {
		r = sr->r[oldest];
	}
	memset(r, 0, offsetof(struct ring, p));
	memcpy(r->id, p->container_id, sizeof(r->id));
	r->id[sizeof(r->id) - 1] = 0;
	memcpy(r->pod_uid, p->pod_uid, sizeof(r->pod_uid));
	r->pod_uid[sizeof(r->pod_uid) - 1] = 0;
	return r;
}

void sl_series_hist_add(struct sl_series_hist *h, unsigned midx, unsigned sidx, const struct sl_series_point *pts,
			size_t n)
{
	if (!h || midx >= SL_MAX_MODULES || sidx >= SL_SERIES_HIST_SERIES || !n)
		return;
	pthread_mutex_lock(&h->lock);
	struct series_rings *sr = h->s[midx][sidx];
	if (!sr)
		sr = h->s[midx][sidx] = calloc(1, sizeof(*sr));
	h->adds++;
	for (size_t i = 0; sr && i < n; i++) {
		struct ring *r = ring_for(sr, &pts[i], h->adds);
		if (!r)
			continue;
		r->last_add = h->adds;
		unsigned last = (r->head + SL_SERIES_HIST_POINTS - 1) % SL_SERIES_HIST_POINTS;
		if (r->n && r->p[last].ts_ns == pts[i].ts_ns)
			continue; /* the same snapshot as the previous reading */
		r->p[r->head].ts_ns = pts[i].ts_ns;
		r->p[r->head].v = pts[i].value;
		r->head = (r->head + 1) % SL_SERIES_HIST_POINTS;
		if (r->n < SL_SERIES_HIST_POINTS)
			r->n++;
	}
	pthread_mutex_unlock(&h->lock);
}

static int id_matches(const char *id, const char *want)
{
	size_t wl = strlen(want);
	return wl >= 4 ? !strncmp(id, want, wl) : !strcmp(id, want);
}

static int by_id(const void *a, const void *b)
{
	return strcmp((*(const struct ring *const *)a)->id, (*(const struct ring *const *)b)->id);
}

json_t *sl_series_hist_json(struct sl_series_hist *h, unsigned midx, unsigned sidx, const char *container,
			    int64_t mono_to_real_ns)
{
	json_t *arr = json_array();
	struct ring *copy[SL_SERIES_HIST_CONTAINERS];
	int nc = 0;

	if (!arr)
		return NULL;
	if (!h || midx >= SL_MAX_MODULES || sidx >= SL_SERIES_HIST_SERIES)
		return arr;
	pthread_mutex_lock(&h->lock);
	struct series_rings *sr = h->s[midx][sidx];
	for (int i = 0; sr && i < sr->nr; i++) {
		if (container && !id_matches(sr->r[i]->id, container))
			continue;
		struct ring *c = malloc(sizeof(*c));
		if (!c)
			break;
		memcpy(c, sr->r[i], sizeof(*c));
		copy[nc++] = c;
	}
	pthread_mutex_unlock(&h->lock);
	qsort(copy, (size_t)nc, sizeof(copy[0]), by_id);
	for (int i = 0; i < nc; i++) {
		struct ring *r = copy[i];
		json_t *pts = json_array();
		for (unsigned k = 0; pts && k < r->n; k++) {
			unsigned at = (r->head + SL_SERIES_HIST_POINTS - r->n + k) % SL_SERIES_HIST_POINTS;
			char t[SL_TIME_RFC3339_MAX];
			sl_time_format((int64_t)r->p[at].ts_ns + mono_to_real_ns, t, sizeof(t));
			json_array_append_new(pts, json_pack("{s:s,s:f}", "time", t, "value", r->p[at].v));
		}
		if (pts)
			json_array_append_new(arr, json_pack("{s:s,s:s,s:o}", "container_id", r->id, "pod_uid",
							     r->pod_uid, "points", pts));
		free(r);
	}
	return arr;
}
