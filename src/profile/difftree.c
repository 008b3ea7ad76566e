/* The merged call tree of two profiles behind the differential flame
 * graphs (Brendan Gregg, "Differential Flame Graphs", 2014: difffolded.pl
 * pairs the stacks of two profiles, flamegraph.pl draws the second one's
 * widths and colours each frame by the change). */
#include "profile/profile_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

static void dnode_free(struct sl_dnode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nchild; i++)
		dnode_free(n->child[i]);
	free(n->child);
	free(n);
}

static const struct sl_frame *frame_of(const struct sl_profile *p, const struct sl_tnode *n)
{
	return n && n->frame < p->nframes ? &p->frames[n->frame] : NULL;
}

/* Merge b (base, may be NULL) and c (cur, may be NULL): children of both
 * are sorted by name (tree.c), so a merge join pairs them. */
static struct sl_dnode *merge(const struct sl_profile *bp, const struct sl_tnode *b, const struct sl_profile *cp,
			      const struct sl_tnode *c)
{
	struct sl_dnode *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->name = c ? c->name : b->name;
	n->frame = c ? frame_of(cp, c) : frame_of(bp, b);
	if (c) {
		n->cur = c->total;
		n->cur_self = c->self;
	}
	if (b) {
		n->base = b->total;
		n->base_self = b->self;
	}
	size_t nb = b ? b->nchild : 0, nc = c ? c->nchild : 0;
	if (nb + nc) {
		n->child = calloc(nb + nc, sizeof(*n->child));
		if (!n->child)
			goto oom;
	}
	size_t i = 0, j = 0;
	while (i < nb || j < nc) {
		int cmp = i >= nb ? 1 : j >= nc ? -1 : strcmp(b->child[i]->name, c->child[j]->name);
		struct sl_dnode *k = merge(bp, cmp <= 0 ? b->child[i] : NULL, cp, cmp >= 0 ? c->child[j] : NULL);
		if (!k)
			goto oom;
		n->child[n->nchild++] = k;
		if (cmp <= 0)
			i++;
		if (cmp >= 0)
			j++;
	}
	return n;
oom:
	dnode_free(n);
	return NULL;
}

double sl_dnode_delta(const struct sl_dtree *t, const struct sl_dnode *n)
{
	return (double)n->cur - (double)n->base * t->scale;
}

static void max_delta(struct sl_dtree *t, const struct sl_dnode *n)
{
	double d = fabs(sl_dnode_delta(t, n));
	if (d > t->max_abs_delta)
		t->max_abs_delta = d;
	for (size_t i = 0; i < n->nchild; i++)
		max_delta(t, n->child[i]);
}

int sl_dtree_build(const struct sl_profile *base, const struct sl_profile *cur, int value, struct sl_dtree *t)
{
	memset(t, 0, sizeof(*t));
	if (!base || !cur || base->kind != cur->kind)
		return -EINVAL;
	struct sl_tnode *b = sl_tree_build(base, value), *c = sl_tree_build(cur, value);
	int rc = -ENOMEM;
	if (b && c) {
		t->root = merge(base, b, cur, c);
		if (t->root) {
			t->base_total = b->total;
			t->cur_total = c->total;
			t->scale = b->total ? (double)c->total / (double)b->total : 1.0;
			t->mode = sl_prof_value_mode(cur, value);
			max_delta(t, t->root);
			rc = 0;
		}
	}
	sl_tree_free(b);
	sl_tree_free(c);
	return rc;
}

void sl_dtree_free(struct sl_dtree *t)
{
	dnode_free(t->root);
	t->root = NULL;
}

void sl_diff_color(double d, double max_abs, char *buf, size_t sz)
{
	/* flamegraph.pl color_scale(): the changed channel at 255, the other
	 * two at 210 * (1 - |d| / max) (so a tiny change is near white). */
	if (max_abs <= 0 || d == 0) {
		snprintf(buf, sz, "rgb(250,250,250)");
		return;
	}
	double f = fabs(d) / max_abs;
	if (f > 1)
		f = 1;
	unsigned o = (unsigned)lround(210.0 * (1.0 - f));
	if (d > 0)
		snprintf(buf, sz, "rgb(255,%u,%u)", o, o);
	else
		snprintf(buf, sz, "rgb(%u,%u,255)", o, o);
}

struct hd_ent {
	UT_hash_handle hh;
	struct sl_hot_diff h;
};

static int add_side(struct hd_ent **tab, const struct sl_hot *v, int n, int is_cur)
{
	for (int i = 0; i < n; i++) {
		struct hd_ent *e;
		HASH_FIND_STR(*tab, v[i].name, e);
		if (!e) {
			e = calloc(1, sizeof(*e));
			if (!e)
				return -1;
			e->h.name = v[i].name;
			e->h.module = v[i].module;
			HASH_ADD_KEYPTR(hh, *tab, e->h.name, strlen(e->h.name), e);
		}
		if (is_cur) {
			e->h.cur_self = v[i].self;
			e->h.cur_total = v[i].total;
			if (v[i].module)
				e->h.module = v[i].module;
		} else {
			e->h.base_self = v[i].self;
			e->h.base_total = v[i].total;
		}
	}
	return 0;
}

static int cmp_hd(const void *a, const void *b)
{
	const struct sl_hot_diff *x = a, *y = b;
	double dx = fabs(x->delta_self), dy = fabs(y->delta_self);
	if (dx != dy)
		return dx > dy ? -1 : 1;
	if (x->cur_self != y->cur_self)
		return x->cur_self > y->cur_self ? -1 : 1;
	return strcmp(x->name, y->name);
}

int sl_prof_hot_diff(const struct sl_profile *base, const struct sl_profile *cur, int value, double scale,
		     size_t max, struct sl_hot_diff **out)
{
	struct sl_hot *hb = NULL, *hc = NULL;
	struct hd_ent *tab = NULL, *e, *tmp;
	int nb = sl_prof_hot(base, value, SIZE_MAX, &hb);
	int nc = nb < 0 ? -1 : sl_prof_hot(cur, value, SIZE_MAX, &hc);
	int rc = nb < 0 || nc < 0 ? -1 : 0;
	if (!rc)
		rc = add_side(&tab, hb, nb, 0);
	if (!rc)
		rc = add_side(&tab, hc, nc, 1);
	size_t n = HASH_COUNT(tab), k = 0;
	struct sl_hot_diff *v = !rc && n ? malloc(n * sizeof(*v)) : NULL;
	if (!rc && n && !v)
		rc = -1;
	HASH_ITER(hh, tab, e, tmp) {
		if (v) {
			v[k] = e->h;
			v[k].delta_self = (double)v[k].cur_self - (double)v[k].base_self * scale;
			k++;
		}
		HASH_DEL(tab, e);
		free(e);
	}
	free(hb);
	free(hc);
	if (rc) {
		free(v);
		return -1;
	}
	if (k > 1)
		qsort(v, k, sizeof(*v), cmp_hd);
	if (k > max)
		k = max;
	*out = v;
	return (int)k;
}
