/* Merging profiles (profile_merge.h): frames by identity
 * (sl_prof_frame), samples by (pid, tid, comm, container_id,
 * off_cpu_state, frames) with counts and values added. */
#include "profile/profile_merge.h"
#include "profile/profile_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

/* A sample of the merged profile, found by its identity bytes. */
struct skey {
	UT_hash_handle hh;
	size_t idx;     /* in the merged profile's samples */
	size_t klen;
	unsigned char key[];
};

/* Identity bytes of s with frames fr[0..n) (already the merged profile's
 * indices) into buf (cap bytes); returns the length, 0 when it does not fit. */
static size_t sample_key(const struct sl_sample *s, const uint32_t *fr, uint32_t n, unsigned char *buf, size_t cap)
{
	size_t need = 4 + 4 + sizeof(s->comm) + sizeof(s->container_id) + 4 + 4 + (size_t)n * 4, o = 0;
	if (need > cap)
		return 0;
	memset(buf, 0, need);
	memcpy(buf + o, &s->pid, 4), o += 4;
	memcpy(buf + o, &s->tid, 4), o += 4;
	memcpy(buf + o, s->comm, strnlen(s->comm, sizeof(s->comm) - 1)), o += sizeof(s->comm);
	memcpy(buf + o, s->container_id, strnlen(s->container_id, sizeof(s->container_id) - 1)),
		o += sizeof(s->container_id);
	memcpy(buf + o, &s->off_cpu_state, 4), o += 4;
	memcpy(buf + o, &n, 4), o += 4;
	memcpy(buf + o, fr, (size_t)n * 4), o += (size_t)n * 4;
	return o;
}

static void skeys_free(struct skey **tab)
{
	struct skey *e, *t;
	HASH_ITER(hh, *tab, e, t) {
		HASH_DEL(*tab, e);
		free(e);
	}
}

/* Add every sample of src to dst. 0 or -ENOMEM. */
static int merge_one(struct sl_profile *dst, struct skey **tab, const struct sl_profile *src)
{
	int64_t *map = calloc(src->nframes + 1, sizeof(*map));
	size_t kcap = 4096;
	unsigned char *kb = malloc(kcap);
	uint32_t *fr = NULL;
	size_t frcap = 0;
	int rc = -ENOMEM;
	if (!map || !kb)
		goto out;
	for (size_t i = 0; i < src->nframes; i++) {
		map[i] = sl_prof_frame(dst, &src->frames[i]);
		if (map[i] < 0)
			goto out;
	}
	for (size_t si = 0; si < src->nsamples; si++) {
		const struct sl_sample *s = &src->samples[si];
		if (s->nframes > frcap) {
			uint32_t *nf = realloc(fr, s->nframes * sizeof(*nf));
			if (!nf)
				goto out;
			fr = nf;
			frcap = s->nframes;
		}
		uint32_t n = 0;
		for (uint32_t k = 0; k < s->nframes; k++)
			if (s->frames[k] < src->nframes)
				fr[n++] = (uint32_t)map[s->frames[k]];
		size_t kl = sample_key(s, fr, n, kb, kcap);
		if (!kl) {
			kcap = 256 + (size_t)n * 4 + sizeof(s->comm) + sizeof(s->container_id);
			unsigned char *nk = realloc(kb, kcap);
			if (!nk)
				goto out;
			kb = nk;
			kl = sample_key(s, fr, n, kb, kcap);
		}
		struct skey *e;
		HASH_FIND(hh, *tab, kb, kl, e);
		if (e) {
			dst->samples[e->idx].count += s->count;
			dst->samples[e->idx].value_ns += s->value_ns;
			continue;
		}
		e = malloc(sizeof(*e) + kl);
		if (!e)
			goto out;
		memcpy(e->key, kb, kl);
		e->klen = kl;
		e->idx = dst->nsamples;
		if (sl_prof_add_sample(dst, s, fr, n)) {
			free(e);
			goto out;
		}
		HASH_ADD(hh, *tab, key[0], kl, e);
	}
	rc = 0;
out:
	free(map);
	free(kb);
	free(fr);
	return rc;
}

struct sl_profile *sl_profile_merge(const struct sl_profile *const *v, size_t n, int *err)
{
	int e;
	const struct sl_profile *first = NULL;
	uint64_t start = UINT64_MAX, end = 0;
	if (!err)
		err = &e;
	for (size_t i = 0; i < n; i++) {
		if (!v[i])
			continue;
		if (!first)
			first = v[i];
		else if (v[i]->kind != first->kind) {
			*err = -EINVAL;
			return NULL;
		}
		if (v[i]->start_ns < start)
			start = v[i]->start_ns;
		if (v[i]->start_ns + v[i]->duration_ns > end)
			end = v[i]->start_ns + v[i]->duration_ns;
	}
	if (!first) {
		*err = -EINVAL;
		return NULL;
	}
	struct sl_profile *p = sl_prof_new(first->kind, start, end - start, first->period_ns);
	struct skey *tab = NULL;
	*err = -ENOMEM;
	if (!p)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (v[i] && merge_one(p, &tab, v[i])) {
			skeys_free(&tab);
			sl_profile_free(p);
			return NULL;
		}
	skeys_free(&tab);
	*err = 0;
	return p;
}
