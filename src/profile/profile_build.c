/* Building a symbolized profile: string pool, frame deduplication, samples. */
#include "profile/profile_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

struct pstr {
	UT_hash_handle hh;
	char s[]; /* key */
};

struct pframe {
	UT_hash_handle hh;
	uint32_t idx;
	char key[]; /* identity string */
};

struct prof_priv {
	struct pstr *strs;
	struct pframe *frames;
	size_t frames_cap;
	size_t samples_cap;
};

struct sl_profile *sl_prof_new(int kind, uint64_t start_ns, uint64_t duration_ns, uint64_t period_ns)
{
	struct sl_profile *p = calloc(1, sizeof(*p));
	struct prof_priv *pv = calloc(1, sizeof(*pv));
	if (!p || !pv) {
		free(p);
		free(pv);
		return NULL;
	}
	p->kind = kind;
	p->start_ns = start_ns;
	p->duration_ns = duration_ns;
	p->period_ns = period_ns;
	p->priv_ = pv;
	return p;
}

const char *sl_prof_intern(struct sl_profile *p, const char *s)
{
	struct prof_priv *pv = p->priv_;
	struct pstr *e;
	if (!s)
		return NULL;
	size_t len = strlen(s);
	HASH_FIND(hh, pv->strs, s, len, e);
	if (e)
		return e->s;
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return NULL;
	memcpy(e->s, s, len + 1);
	HASH_ADD_KEYPTR(hh, pv->strs, e->s, len, e);
	return e->s;
}

static int frame_key(const struct sl_frame *f, char *buf, size_t sz)
{
	if (f->flags & SL_FRAME_KERNEL)
		return snprintf(buf, sz, "K|%" PRIx64 "|%s", f->module_offset,
				(f->flags & SL_FRAME_UNKNOWN) ? "?" : (f->function ? f->function : ""));
	if (f->flags & SL_FRAME_PSEUDO)
		return snprintf(buf, sz, "P|%s", f->name);
	if (f->flags & SL_FRAME_UNKNOWN)
		return snprintf(buf, sz, "?|%s|%" PRIx64, f->name, f->address);
	if (f->flags & SL_FRAME_JIT)
		return snprintf(buf, sz, "J|%s|%" PRIx64, f->name, f->address);
	return snprintf(buf, sz, "U|%s|%s|%" PRIx64, f->build_id ? f->build_id : "",
			f->module ? f->module : "", f->module_offset);
}

int64_t sl_prof_frame(struct sl_profile *p, const struct sl_frame *f)
{
	struct prof_priv *pv = p->priv_;
	char kbuf[512];
	int kl = frame_key(f, kbuf, sizeof(kbuf));
	if (kl < 0)
		return -1;
	if ((size_t)kl >= sizeof(kbuf))
		kl = sizeof(kbuf) - 1;
	struct pframe *e;
	HASH_FIND(hh, pv->frames, kbuf, (size_t)kl, e);
	if (e)
		return e->idx;
	if (p->nframes == pv->frames_cap) {
		size_t nc = pv->frames_cap ? pv->frames_cap * 2 : 256;
		struct sl_frame *nf = realloc(p->frames, nc * sizeof(*nf));
		if (!nf)
			return -1;
		p->frames = nf;
		pv->frames_cap = nc;
	}
	struct sl_frame c = *f;
	c.name = sl_prof_intern(p, f->name ? f->name : "[unknown]");
	c.function = sl_prof_intern(p, f->function);
	c.module = sl_prof_intern(p, f->module);
	c.build_id = (f->build_id && f->build_id[0]) ? sl_prof_intern(p, f->build_id) : NULL;
	if (!c.name || (f->function && !c.function) || (f->module && !c.module))
		return -1;
	e = malloc(sizeof(*e) + (size_t)kl + 1);
	if (!e)
		return -1;
	memcpy(e->key, kbuf, (size_t)kl);
	e->key[kl] = 0;
	e->idx = (uint32_t)p->nframes;
	HASH_ADD(hh, pv->frames, key[0], (size_t)kl, e);
	p->frames[p->nframes++] = c;
	return e->idx;
}

int sl_prof_add_sample(struct sl_profile *p, const struct sl_sample *s, const uint32_t *frames,
		       uint32_t n)
{
	struct prof_priv *pv = p->priv_;
	if (p->nsamples == pv->samples_cap) {
		size_t nc = pv->samples_cap ? pv->samples_cap * 2 : 64;
		struct sl_sample *ns = realloc(p->samples, nc * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		p->samples = ns;
		pv->samples_cap = nc;
	}
	struct sl_sample c = *s;
	c.nframes = n;
	c.frames = NULL;
	if (n) {
		c.frames = malloc(n * sizeof(uint32_t));
		if (!c.frames)
			return -ENOMEM;
		memcpy(c.frames, frames, n * sizeof(uint32_t));
	}
	p->samples[p->nsamples++] = c;
	return 0;
}

void sl_profile_free(struct sl_profile *p)
{
	if (!p)
		return;
	struct prof_priv *pv = p->priv_;
	for (size_t i = 0; i < p->nsamples; i++)
		free(p->samples[i].frames);
	free(p->samples);
	free(p->frames);
	if (pv) {
		struct pstr *s, *st;
		HASH_ITER(hh, pv->strs, s, st) {
			HASH_DEL(pv->strs, s);
			free(s);
		}
		struct pframe *f, *ft;
		HASH_ITER(hh, pv->frames, f, ft) {
			HASH_DEL(pv->frames, f);
			free(f);
		}
		free(pv);
	}
	free(p);
}
