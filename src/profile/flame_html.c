/* The self-contained HTML flame graph (sl_profile_write_html and the HTML
 * form of sl_profile_write_diff, profile.h; docs/PROFILING.md "HTML"):
 * static markup, the profile as JSON in a data block, and the page's own
 * script and style (flame_page.js/.css, embedded with their CSP hashes). */
#include "profile/profile_internal.h"
#include "common/json.h"
#include "profile/flame_page.h"
#include "profile/prof_kinds.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

const char *sl_flame_html_csp(void)
{
	return sl_flame_page_csp_header;
}

/* A JSON string of s; invalid UTF-8 (symbol names are bytes) becomes
 * U+FFFD (sl_json_strz). NULL s -> JSON null. */
static json_t *jstr(const char *s)
{
	return sl_json_strz(s);
}

static int set(json_t *o, const char *k, json_t *v)
{
	return v ? json_object_set_new(o, k, v) : -1;
}

static json_t *jint(uint64_t v)
{
	return json_integer((json_int_t)v);
}

static char kind_str(const struct sl_frame *f, char out[2])
{
	out[0] = sl_flame_kind(f);
	out[1] = 0;
	return out[0];
}

/* {"n","m"?,"k","v","s","c"?} of a call tree node */
static json_t *tnode_json(const struct sl_profile *p, const struct sl_tnode *n)
{
	json_t *o = json_object();
	const struct sl_frame *f = n->frame < p->nframes ? &p->frames[n->frame] : NULL;
	char k[2];
	kind_str(f, k);
	if (!o || set(o, "n", jstr(n->name)) || set(o, "k", json_string(k)) || set(o, "v", jint(n->total)) ||
	    set(o, "s", jint(n->self)) || (f && f->module && set(o, "m", jstr(f->module))))
		goto err;
	if (n->nchild) {
		json_t *c = json_array();
		if (set(o, "c", c))
			goto err;
		for (size_t i = 0; i < n->nchild; i++)
			if (json_array_append_new(c, tnode_json(p, n->child[i])))
				goto err;
	}
	return o;
err:
	json_decref(o);
	return NULL;
}

/* the same for a diff node, plus "b" and "bs" (base total and self, raw) */
static json_t *dnode_json(const struct sl_dnode *n)
{
	json_t *o = json_object();
	char k[2];
	kind_str(n->frame, k);
	if (!o || set(o, "n", jstr(n->name)) || set(o, "k", json_string(k)) || set(o, "v", jint(n->cur)) ||
	    set(o, "s", jint(n->cur_self)) || set(o, "b", jint(n->base)) || set(o, "bs", jint(n->base_self)) ||
	    (n->frame && n->frame->module && set(o, "m", jstr(n->frame->module))))
		goto err;
	if (n->nchild) {
		json_t *c = json_array();
		if (set(o, "c", c))
			goto err;
		for (size_t i = 0; i < n->nchild; i++)
			if (json_array_append_new(c, dnode_json(n->child[i])))
				goto err;
	}
	return o;
err:
	json_decref(o);
	return NULL;
}

/* {"container","pod","host","start_ns","end_ns","samples","stacks"} */
static json_t *meta_json(const struct sl_profile *p, const struct sl_flame_opts *o, int with_opts)
{
	json_t *m = json_object();
	if (!m)
		return NULL;
	uint64_t start = with_opts && o && o->start_ns ? o->start_ns : p->start_ns;
	uint64_t end = with_opts && o && o->end_ns ? o->end_ns : p->start_ns + p->duration_ns;
	if ((with_opts && o && o->container && o->container[0] && set(m, "container", jstr(o->container))) ||
	    (with_opts && o && o->pod && o->pod[0] && set(m, "pod", jstr(o->pod))) ||
	    (with_opts && o && o->host && o->host[0] && set(m, "host", jstr(o->host))) ||
	    set(m, "start_ns", jint(start)) || set(m, "end_ns", jint(end)) ||
	    set(m, "samples", jint(sl_profile_total_count(p))) || set(m, "stacks", jint(p->nsamples))) {
		json_decref(m);
		return NULL;
	}
	return m;
}

static json_t *payload_head(const struct sl_profile *p, const struct sl_flame_opts *o, int mode, int diff)
{
	const struct sl_prof_kind_info *ki = sl_prof_kind_info(p->kind);
	char dbuf[160];
	const char *title = o && o->title ? o->title : diff ? sl_flame_diff_title(p->kind, dbuf, sizeof(dbuf)) : ki->title;
	json_t *d = json_object();
	if (!d || set(d, "version", json_integer(1)) || set(d, "diff", json_boolean(diff)) ||
	    set(d, "title", jstr(title)) ||
	    set(d, "kind", json_string(ki->name)) ||
	    set(d, "unit", json_string(sl_prof_value_unit(mode))) ||
	    set(d, "sample_type", jstr(sl_flame_sample_type(p, o, mode))) || set(d, "meta", meta_json(p, o, 1))) {
		json_decref(d);
		return NULL;
	}
	return d;
}

/* HTML text escape (titles); the JSON goes through write_json_block */
static void html_esc(const char *s, FILE *out)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fputc((unsigned char)*s < 0x20 ? '?' : *s, out);
		}
	}
}

/* The JSON inside <script type="application/json">: ASCII only (U+2028,
 * U+2029 and every other non-ASCII character \u-escaped by jansson), and
 * '<', '>', '&' \u-escaped too, so neither "</script" nor "<!--" can
 * appear (HTML "script data" states); valid JSON, as those characters
 * only occur inside strings. */
static int write_json_block(json_t *d, FILE *out)
{
	char *s = json_dumps(d, JSON_COMPACT | JSON_ENSURE_ASCII);
	if (!s)
		return -ENOMEM;
	for (const char *c = s; *c; c++) {
		switch (*c) {
		case '<': fputs("\\u003c", out); break;
		case '>': fputs("\\u003e", out); break;
		case '&': fputs("\\u0026", out); break;
		default: fputc(*c, out);
		}
	}
	free(s);
	return 0;
}

static int write_page(json_t *d, FILE *out)
{
	const char *title = json_string_value(json_object_get(d, "title"));
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n", out);
	fprintf(out, "<meta http-equiv=\"Content-Security-Policy\" content=\"%s\">\n", sl_flame_page_csp_meta);
	fputs("<meta name=\"referrer\" content=\"no-referrer\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>", out);
	html_esc(title ? title : "", out);
	fputs("</title>\n<style>", out);
	fwrite(sl_flame_page_css, 1, sl_flame_page_css_len, out);
	fputs("</style>\n</head>\n<body>\n<header><h1 id=\"title\">", out);
	html_esc(title ? title : "", out);
	fputs("</h1><div id=\"meta\"></div></header>\n"
	      "<div id=\"bar\"><input id=\"search\" type=\"search\" placeholder=\"search frames: text or /regex/\" "
	      "autocomplete=\"off\" spellcheck=\"false\"> <button id=\"reset\" type=\"button\">Reset zoom</button> "
	      "<span id=\"matched\"></span></div>\n"
	      "<div id=\"details\">&#160;</div>\n<div id=\"flame\"></div>\n<div id=\"legend\"></div>\n"
	      "<h2 id=\"hot-h\">Hottest symbols</h2>\n<table id=\"hot\"><thead></thead><tbody></tbody></table>\n"
	      "<noscript>This flame graph is drawn by its inline script; the SVG and folded formats need none."
	      "</noscript>\n<script type=\"application/json\" id=\"sl-data\">", out);
	int rc = write_json_block(d, out);
	if (rc)
		return rc;
	fputs("</script>\n<script>", out);
	fwrite(sl_flame_page_js, 1, sl_flame_page_js_len, out);
	fputs("</script>\n</body></html>\n", out);
	return ferror(out) ? -EIO : 0;
}

int sl_profile_write_html(const struct sl_profile *p, const struct sl_flame_opts *o, FILE *out)
{
	int value = o ? o->value : SL_VALUE_DEFAULT;
	int mode = sl_prof_value_mode(p, value);
	int top_n = o && o->top_n > 0 ? o->top_n : 50;
	struct sl_tnode *root = sl_tree_build(p, value);
	struct sl_hot *hot = NULL;
	int nh = root ? sl_prof_hot(p, value, (size_t)top_n, &hot) : -1;
	json_t *d = nh >= 0 ? payload_head(p, o, mode, 0) : NULL;
	json_t *arr = json_array();
	int rc = -ENOMEM;
	if (!d || !arr || set(d, "total", jint(root->total)) || set(d, "tree", tnode_json(p, root)))
		goto out;
	for (int i = 0; i < nh; i++) {
		json_t *h = json_object();
		if (json_array_append_new(arr, h) || set(h, "n", jstr(hot[i].name)) ||
		    (hot[i].module && set(h, "m", jstr(hot[i].module))) || set(h, "s", jint(hot[i].self)) ||
		    set(h, "t", jint(hot[i].total)))
			goto out;
	}
	if (set(d, "hot", arr))
		goto out;
	arr = NULL;
	rc = write_page(d, out);
out:
	json_decref(arr);
	json_decref(d);
	free(hot);
	sl_tree_free(root);
	return rc;
}

int sl_flame_html_diff(const struct sl_profile *base, const struct sl_profile *cur, const struct sl_dtree *t,
		       const struct sl_flame_opts *o, FILE *out)
{
	int top_n = o && o->top_n > 0 ? o->top_n : 50;
	struct sl_hot_diff *hot = NULL;
	int nh = sl_prof_hot_diff(base, cur, o ? o->value : SL_VALUE_DEFAULT, t->scale, (size_t)top_n, &hot);
	json_t *d = nh >= 0 ? payload_head(cur, o, t->mode, 1) : NULL;
	json_t *arr = json_array();
	int rc = -ENOMEM;
	if (!d || !arr || set(d, "total", jint(t->cur_total)) || set(d, "base_total", jint(t->base_total)) ||
	    set(d, "scale", json_real(t->scale)) || set(d, "base_meta", meta_json(base, o, 0)) ||
	    set(d, "tree", dnode_json(t->root)))
		goto out;
	for (int i = 0; i < nh; i++) {
		json_t *h = json_object();
		if (json_array_append_new(arr, h) || set(h, "n", jstr(hot[i].name)) ||
		    (hot[i].module && set(h, "m", jstr(hot[i].module))) || set(h, "bs", jint(hot[i].base_self)) ||
		    set(h, "bt", jint(hot[i].base_total)) || set(h, "s", jint(hot[i].cur_self)) ||
		    set(h, "t", jint(hot[i].cur_total)) || set(h, "d", json_real(hot[i].delta_self)))
			goto out;
	}
	if (set(d, "hot", arr))
		goto out;
	arr = NULL;
	rc = write_page(d, out);
out:
	json_decref(arr);
	json_decref(d);
	free(hot);
	return rc;
}
