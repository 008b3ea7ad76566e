/* The merged call tree and the hottest-symbols table behind the folded,
 * SVG and JSON writers. */
#include "profile/profile_internal.h"
#include "profile/prof_kinds.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

int sl_prof_value_mode(const struct sl_profile *p, int v)
{
	if (v == SL_VALUE_DEFAULT)
		return sl_prof_kind_info(p->kind)->value_default;
	return v;
}

const char *sl_prof_value_unit(int mode)
{
	switch (mode) {
	case SL_VALUE_NS: return "ns";
	case SL_VALUE_US: return "us";
	case SL_VALUE_BYTES: return "bytes";
	default: return "samples";
	}
}

uint64_t sl_prof_value_of(const struct sl_profile *p, const struct sl_sample *s, int v)
{
	switch (sl_prof_value_mode(p, v)) {
	case SL_VALUE_NS:
	case SL_VALUE_BYTES: return s->value_ns;
	case SL_VALUE_US: return s->value_ns / 1000;
	default: return s->count;
	}
}

static struct sl_tnode *tnode_new(const char *name, uint32_t frame)
{
	struct sl_tnode *n = calloc(1, sizeof(*n));
	if (n) {
		n->name = name;
		n->frame = frame;
	}
	return n;
}

/* Child named name (names are compared by content; interned strings from
 * different pools may differ in pointer). Binary search, insert sorted. */
static struct sl_tnode *child_get(struct sl_tnode *n, const char *name, uint32_t frame)
{
	size_t lo = 0, hi = n->nchild;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(n->child[mid]->name, name);
		if (!c)
			return n->child[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (n->nchild == n->cap_) {
		size_t nc = n->cap_ ? n->cap_ * 2 : 4;
		struct sl_tnode **v = realloc(n->child, nc * sizeof(*v));
		if (!v)
			return NULL;
		n->child = v;
		n->cap_ = nc;
	}
	struct sl_tnode *c = tnode_new(name, frame);
	if (!c)
		return NULL;
	memmove(&n->child[lo + 1], &n->child[lo], (n->nchild - lo) * sizeof(*n->child));
	n->child[lo] = c;
	n->nchild++;
	return c;
}

struct sl_tnode *sl_tree_build(const struct sl_profile *p, int value)
{
	struct sl_tnode *root = tnode_new("all", UINT32_MAX);
	if (!root)
		return NULL;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sl_sample *s = &p->samples[i];
		uint64_t v = sl_prof_value_of(p, s, value);
		if (!v)
			continue;
		root->total += v;
		struct sl_tnode *n = child_get(root, s->comm[0] ? s->comm : "[unknown comm]", UINT32_MAX);
		if (!n)
			goto oom;
		n->total += v;
		if (sl_prof_kind_info(p->kind)->state_frame) {
			const char *st = sl_prof_state_frame(p->kind, (uint32_t)s->off_cpu_state);
			n = child_get(n, st, UINT32_MAX);
			if (!n)
				goto oom;
			n->total += v;
		}
		for (uint32_t k = 0; k < s->nframes; k++) {
			uint32_t fi = s->frames[k];
			if (fi >= p->nframes)
				continue;
			n = child_get(n, p->frames[fi].name, fi);
			if (!n)
				goto oom;
			n->total += v;
		}
		n->self += v;
	}
	return root;
oom:
	sl_tree_free(root);
	return NULL;
}

void sl_tree_free(struct sl_tnode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nchild; i++)
		sl_tree_free(n->child[i]);
	free(n->child);
	free(n);
}

struct hot_ent {
	UT_hash_handle hh;
	struct sl_hot h;
	size_t seen; /* last sample index counted for total */
};

static int cmp_hot(const void *a, const void *b)
{
	const struct sl_hot *x = a, *y = b;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

int sl_prof_hot(const struct sl_profile *p, int value, size_t max, struct sl_hot **out)
{
	struct hot_ent *tab = NULL, *e, *tmp;
	size_t n = 0;
	int rc = 0;
	for (size_t i = 0; i < p->nsamples && !rc; i++) {
		const struct sl_sample *s = &p->samples[i];
		uint64_t v = sl_prof_value_of(p, s, value);
		if (!v)
			continue;
		for (uint32_t k = 0; k < s->nframes; k++) {
			uint32_t fi = s->frames[k];
			if (fi >= p->nframes)
				continue;
			const char *name = p->frames[fi].name;
			HASH_FIND_STR(tab, name, e);
			if (!e) {
				e = calloc(1, sizeof(*e));
				if (!e) {
					rc = -1;
					break;
				}
				e->h.name = name;
				e->h.module = p->frames[fi].module;
				e->seen = SIZE_MAX;
				HASH_ADD_KEYPTR(hh, tab, e->h.name, strlen(e->h.name), e);
				n++;
			}
			if (e->seen != i) { /* recursion: count total once per stack */
				e->h.total += v;
				e->seen = i;
			}
			if (k == s->nframes - 1)
				e->h.self += v;
		}
	}
	struct sl_hot *v = NULL;
	if (!rc && n) {
		v = malloc(n * sizeof(*v));
		if (!v)
			rc = -1;
	}
	size_t k = 0;
	HASH_ITER(hh, tab, e, tmp) {
		if (v)
			v[k++] = e->h;
		HASH_DEL(tab, e);
		free(e);
	}
	if (rc) {
		free(v);
		return -1;
	}
	if (k > 1)
		qsort(v, k, sizeof(*v), cmp_hot);
	if (k > max)
		k = max;
	*out = v;
	return (int)k;
}
