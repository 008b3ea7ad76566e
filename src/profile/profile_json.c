/* JSON writer (jansson): totals, the hottest symbols and the merged call
 * tree. Shape in docs/PROFILING.md "JSON". */
#include "profile/profile_internal.h"
#include "common/json.h"
#include "profile/prof_kinds.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>

static json_t *tree_json(const struct sl_profile *p, const struct sl_tnode *n)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "name", sl_json_strz(n->name));
	if (n->frame < p->nframes) {
		const struct sl_frame *f = &p->frames[n->frame];
		if (f->module)
			json_object_set_new(o, "module", sl_json_strz(f->module));
		if (f->flags & SL_FRAME_KERNEL)
			json_object_set_new(o, "kernel", json_true());
	}
	json_object_set_new(o, "value", json_integer((json_int_t)n->total));
	json_object_set_new(o, "self", json_integer((json_int_t)n->self));
	if (n->nchild) {
		json_t *c = json_array();
		for (size_t i = 0; i < n->nchild; i++) {
			json_t *cj = tree_json(p, n->child[i]);
			if (!cj) {
				json_decref(c);
				json_decref(o);
				return NULL;
			}
			json_array_append_new(c, cj);
		}
		json_object_set_new(o, "children", c);
	}
	return o;
}

int sl_profile_write_json(const struct sl_profile *p, FILE *out)
{
	int mode = sl_prof_value_mode(p, SL_VALUE_DEFAULT);
	struct sl_tnode *root = sl_tree_build(p, SL_VALUE_DEFAULT);
	if (!root)
		return -ENOMEM;
	struct sl_hot *hot = NULL;
	int nh = sl_prof_hot(p, SL_VALUE_DEFAULT, 50, &hot);
	json_t *o = json_object();
	json_t *tree = tree_json(p, root);
	int rc = -ENOMEM;
	if (nh < 0 || !o || !tree)
		goto out;
	json_object_set_new(o, "kind", json_string(sl_prof_kind_info(p->kind)->name));
	json_object_set_new(o, "start_ns", json_integer((json_int_t)p->start_ns));
	json_object_set_new(o, "duration_ns", json_integer((json_int_t)p->duration_ns));
	json_object_set_new(o, "period_ns", json_integer((json_int_t)p->period_ns));
	json_object_set_new(o, "total_count", json_integer((json_int_t)sl_profile_total_count(p)));
	json_object_set_new(o, "total_ns", json_integer((json_int_t)sl_profile_total_ns(p)));
	json_object_set_new(o, "unit", json_string(sl_prof_value_unit(mode)));
	json_object_set_new(o, "total", json_integer((json_int_t)root->total));
	json_t *top = json_array();
	for (int i = 0; i < nh; i++) {
		json_t *h = json_object();
		json_object_set_new(h, "function", sl_json_strz(hot[i].name));
		json_object_set_new(h, "module", sl_json_strz(hot[i].module));
		json_object_set_new(h, "self", json_integer((json_int_t)hot[i].self));
		json_object_set_new(h, "total", json_integer((json_int_t)hot[i].total));
		json_array_append_new(top, h);
	}
	json_object_set_new(o, "top", top);
	json_object_set_new(o, "tree", tree);
	tree = NULL;
	rc = json_dumpf(o, out, JSON_COMPACT) ? -EIO : 0;
	if (!rc && (fputc('\n', out) == EOF || ferror(out)))
		rc = -EIO;
out:
	json_decref(tree);
	json_decref(o);
	free(hot);
	sl_tree_free(root);
	return rc;
}
