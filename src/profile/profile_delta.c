/* Comparing two profiles (profile_merge.h): per-function deltas as JSON,
 * and one pprof with the base subtracted (what `go tool pprof -diff_base`
 * builds). */
#include "profile/profile_merge.h"
#include "common/json.h"
#include "profile/profile_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

struct fdelta {
	UT_hash_handle hh;
	const char *name;   /* key */
	const char *module;
	uint64_t bself, btotal, nself, ntotal;
};

struct drow {
	const struct fdelta *d;
	double dpct;
	int64_t dtotal;
};

static int cmp_rows(const void *a, const void *b)
{
	const struct drow *x = a, *y = b;
	double ax = fabs(x->dpct), ay = fabs(y->dpct);
	if (ax != ay)
		return ax < ay ? 1 : -1;
	uint64_t tx = (uint64_t)llabs(x->dtotal), ty = (uint64_t)llabs(y->dtotal);
	if (tx != ty)
		return tx < ty ? 1 : -1;
	return strcmp(x->d->name, y->d->name);
}

/* Add p's per-symbol self/total into *tab (is_new: the cur side). */
static int collect(struct fdelta **tab, const struct sl_profile *p, int is_new)
{
	struct sl_hot *hot = NULL;
	int n = sl_prof_hot(p, SL_VALUE_DEFAULT, SIZE_MAX, &hot);
	if (n < 0)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		struct fdelta *e;
		HASH_FIND_STR(*tab, hot[i].name, e);
		if (!e) {
			e = calloc(1, sizeof(*e));
			if (!e) {
				free(hot);
				return -ENOMEM;
			}
			e->name = hot[i].name;
			e->module = hot[i].module;
			HASH_ADD_KEYPTR(hh, *tab, e->name, strlen(e->name), e);
		}
		if (is_new) {
			e->nself += hot[i].self;
			e->ntotal += hot[i].total;
		} else {
			e->bself += hot[i].self;
			e->btotal += hot[i].total;
		}
	}
	free(hot);
	return 0;
}

static uint64_t total_of(const struct sl_profile *p)
{
	uint64_t t = 0;
	for (size_t i = 0; i < p->nsamples; i++)
		t += sl_prof_value_of(p, &p->samples[i], SL_VALUE_DEFAULT);
	return t;
}

static double pct(uint64_t v, uint64_t total) { return total ? 100.0 * (double)v / (double)total : 0.0; }

json_t *sl_profile_delta_json(const struct sl_profile *base, const struct sl_profile *cur, size_t max)
{
	struct fdelta *tab = NULL, *e, *t;
	json_t *out = NULL;
	if (!base || !cur || base->kind != cur->kind)
		return NULL;
	if (collect(&tab, base, 0) || collect(&tab, cur, 1))
		goto done;
	uint64_t bt = total_of(base), nt = total_of(cur);
	size_t n = HASH_COUNT(tab), k = 0;
	struct drow *rows = calloc(n + 1, sizeof(*rows));
	if (!rows)
		goto done;
	HASH_ITER(hh, tab, e, t) {
		rows[k].d = e;
		rows[k].dpct = pct(e->nself, nt) - pct(e->bself, bt);
		rows[k].dtotal = (int64_t)e->ntotal - (int64_t)e->btotal;
		k++;
	}
	qsort(rows, n, sizeof(*rows), cmp_rows);
	json_t *fa = json_array();
	for (size_t i = 0; fa && i < n && i < max; i++) {
		const struct fdelta *d = rows[i].d;
		json_t *o = json_pack("{s:o, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f}", "function",
				      sl_json_strz(d->name), "module", sl_json_strz(d->module), "base_self", (json_int_t)d->bself, "new_self",
				      (json_int_t)d->nself, "delta_self", (json_int_t)d->nself - (json_int_t)d->bself,
				      "base_total", (json_int_t)d->btotal, "new_total", (json_int_t)d->ntotal,
				      "delta_total", (json_int_t)rows[i].dtotal, "base_self_pct", pct(d->bself, bt),
				      "new_self_pct", pct(d->nself, nt), "delta_self_pct", rows[i].dpct);
		if (!o || json_array_append_new(fa, o)) {
			json_decref(fa);
			fa = NULL;
		}
	}
	free(rows);
	if (!fa)
		goto done;
	const char *unit = sl_prof_value_unit(sl_prof_value_mode(cur, SL_VALUE_DEFAULT));
	out = json_pack("{s:s, s:s, s:{s:I, s:I, s:I}, s:{s:I, s:I, s:I}, s:o}", "kind",
			cur->kind == SL_PROF_OFF_CPU ? "off_cpu" : "on_cpu", "unit", unit, "base", "start_ns",
			(json_int_t)base->start_ns, "duration_ns", (json_int_t)base->duration_ns, "total",
			(json_int_t)bt, "new", "start_ns", (json_int_t)cur->start_ns, "duration_ns",
			(json_int_t)cur->duration_ns, "total", (json_int_t)nt, "functions", fa);
done:
	HASH_ITER(hh, tab, e, t) {
		HASH_DEL(tab, e);
		free(e);
	}
	return out;
}

/* Append every sample of src to dst with values multiplied by sign (no
 * merging: a base sample and a new sample of the same stack stay two, which
 * pprof adds up). */
static int append_signed(struct sl_profile *dst, const struct sl_profile *src, int negate)
{
	int64_t *map = calloc(src->nframes + 1, sizeof(*map));
	uint32_t fr[2 * SL_PROF_MAX_DEPTH + 8];
	if (!map)
		return -ENOMEM;
	for (size_t i = 0; i < src->nframes; i++)
		if ((map[i] = sl_prof_frame(dst, &src->frames[i])) < 0) {
			free(map);
			return -ENOMEM;
		}
	for (size_t si = 0; si < src->nsamples; si++) {
		struct sl_sample s = src->samples[si];
		uint32_t n = 0;
		for (uint32_t k = 0; k < s.nframes && n < sizeof(fr) / sizeof(fr[0]); k++)
			if (s.frames[k] < src->nframes)
				fr[n++] = (uint32_t)map[s.frames[k]];
		if (negate) { /* two's complement: the writer's int64_t cast gives -count */
			s.count = (uint64_t)0 - s.count;
			s.value_ns = (uint64_t)0 - s.value_ns;
		}
		if (sl_prof_add_sample(dst, &s, fr, n)) {
			free(map);
			return -ENOMEM;
		}
	}
	free(map);
	return 0;
}

int sl_profile_write_pprof_diff(const struct sl_profile *base, const struct sl_profile *cur, int kaddrs_visible,
				FILE *out)
{
	if (!base || !cur || base->kind != cur->kind)
		return -EINVAL;
	struct sl_profile *d = sl_prof_new(cur->kind, cur->start_ns, cur->duration_ns, cur->period_ns);
	int rc = -ENOMEM;
	if (d && !append_signed(d, cur, 0) && !append_signed(d, base, 1))
		rc = sl_profile_write_pprof(d, kaddrs_visible, out);
	sl_profile_free(d);
	return rc;
}
