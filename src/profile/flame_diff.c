/* Differential flame graphs (sl_profile_write_diff, profile.h): the folded
 * two-column form difffolded.pl writes and flamegraph.pl reads, and the SVG
 * with flamegraph.pl's red/blue colouring. The HTML form is in
 * flame_html.c. */
#include "profile/profile_internal.h"
#include "profile/prof_kinds.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FRAME_H 17
#define CHAR_W 7.0
#define PAD 10

/* ---- folded: "stack BASE CUR" ---- */

struct fpath {
	const struct sl_dnode *v[2 * SL_PROF_MAX_DEPTH + 8];
	size_t n;
};

static void put_name(const char *s, FILE *out)
{
	for (; *s; s++)
		fputc(*s == ';' || *s == '\n' || *s == '\r' ? '_' : *s, out);
}

static void walk_folded(const struct sl_dtree *t, const struct sl_dnode *n, struct fpath *pa, int raw, FILE *out)
{
	if (pa->n >= sizeof(pa->v) / sizeof(pa->v[0]))
		return;
	pa->v[pa->n++] = n;
	uint64_t b = raw ? n->base_self : (uint64_t)llround((double)n->base_self * t->scale);
	if (pa->n > 1 && (b || n->cur_self)) {
		for (size_t i = 1; i < pa->n; i++) { /* skip the "all" root */
			if (i > 1)
				fputc(';', out);
			put_name(pa->v[i]->name, out);
		}
		fprintf(out, " %" PRIu64 " %" PRIu64 "\n", b, n->cur_self);
	}
	for (size_t i = 0; i < n->nchild; i++)
		walk_folded(t, n->child[i], pa, raw, out);
	pa->n--;
}

static int write_folded(const struct sl_dtree *t, int raw, FILE *out)
{
	struct fpath *pa = malloc(sizeof(*pa));
	if (!pa)
		return -ENOMEM;
	pa->n = 0;
	walk_folded(t, t->root, pa, raw, out);
	free(pa);
	return ferror(out) ? -EIO : 0;
}

/* ---- SVG ---- */

struct sctx {
	const struct sl_dtree *t;
	FILE *out;
	double scale; /* px per unit */
	double minw;
	int base_y;
	const char *unit;
};

static int ddepth(const struct sl_dnode *n)
{
	int d = 0;
	for (size_t i = 0; i < n->nchild; i++) {
		int c = ddepth(n->child[i]);
		if (c > d)
			d = c;
	}
	return d + 1;
}

static void draw(struct sctx *c, const struct sl_dnode *n, double x, int depth)
{
	double w = (double)n->cur * c->scale;
	if (w < c->minw)
		return;
	int y = c->base_y - depth * FRAME_H;
	double d = sl_dnode_delta(c->t, n);
	char col[40];
	sl_diff_color(d, c->t->max_abs_delta, col, sizeof(col));
	fputs("<g><title>", c->out);
	sl_xml_esc(n->name, 4096, c->out);
	if (n->frame && n->frame->module) {
		fputs(" [", c->out);
		sl_xml_esc(n->frame->module, 512, c->out);
		fputc(']', c->out);
	}
	double pct = c->t->cur_total ? 100.0 * d / (double)c->t->cur_total : 0;
	fprintf(c->out, " (base %" PRIu64 " %s (normalized %.1f), cur %" PRIu64 ", delta %+.1f, %+.2f%%)</title>",
		n->base, c->unit, (double)n->base * c->t->scale, n->cur, d, pct);
	fprintf(c->out, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>", x, y, w,
		FRAME_H - 1, col);
	size_t fit = w > 3 * CHAR_W ? (size_t)((w - 6) / CHAR_W) : 0;
	if (fit >= 3) {
		size_t len = strlen(n->name);
		fprintf(c->out, "<text x=\"%.1f\" y=\"%d\">", x + 3, y + FRAME_H - 5);
		sl_xml_esc(n->name, len > fit ? fit - 2 : len, c->out);
		fputs("</text>", c->out);
	}
	fputs("</g>\n", c->out);
	double cx = x;
	for (size_t i = 0; i < n->nchild; i++) {
		draw(c, n->child[i], cx, depth + 1);
		cx += (double)n->child[i]->cur * c->scale;
	}
}

static int write_svg(const struct sl_profile *base, const struct sl_profile *cur, const struct sl_dtree *t,
		     const struct sl_flame_opts *o, FILE *out)
{
	int width = o && o->width > 200 ? o->width : 1200;
	int top_n = o && o->top_n > 0 ? o->top_n : 20;
	double minw = o && o->min_width_px > 0 ? o->min_width_px : 0.1;
	char dbuf[160];
	const char *title = o && o->title ? o->title : sl_flame_diff_title(cur->kind, dbuf, sizeof(dbuf));
	const char *unit = sl_prof_value_unit(t->mode);
	struct sl_hot_diff *hot = NULL;
	int nh = sl_prof_hot_diff(base, cur, o ? o->value : SL_VALUE_DEFAULT, t->scale, (size_t)top_n, &hot);
	if (nh < 0)
		return -ENOMEM;
	char meta[600];
	sl_flame_meta_line(cur, o, meta, sizeof(meta));
	int depth = ddepth(t->root);
	int graph_top = 92, graph_h = depth * FRAME_H;
	int table_top = graph_top + graph_h + 40;
	int height = table_top + (nh + 2) * FRAME_H + 20;
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		     "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		     "xmlns=\"http://www.w3.org/2000/svg\">\n",
		width, height, width, height);
	fputs("<style>text{font-family:monospace;font-size:12px;fill:#000}"
	      ".h{font-size:17px;font-weight:bold}.s{fill:#555}.th{font-weight:bold}"
	      "g:hover rect{stroke:#000;stroke-width:0.5}</style>\n", out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f0\"/>\n", width, height);
	fprintf(out, "<text class=\"h\" x=\"%d\" y=\"24\" text-anchor=\"middle\">", width / 2);
	sl_xml_esc(title, 200, out);
	fputs("</text>\n", out);
	fprintf(out, "<text class=\"s\" x=\"%d\" y=\"44\">width = current (%" PRIu64 " %s); base %" PRIu64
		     " %s, normalized to the current total (x%.4f); red = grew, blue = shrank</text>\n",
		PAD, t->cur_total, unit, t->base_total, unit, t->scale);
	fprintf(out, "<text class=\"s\" x=\"%d\" y=\"60\">current: ", PAD);
	sl_xml_esc(meta, sizeof(meta), out);
	fputs("</text>\n", out);
	sl_flame_meta_line(base, &(struct sl_flame_opts){.value = o ? o->value : 0}, meta, sizeof(meta));
	fprintf(out, "<text class=\"s\" x=\"%d\" y=\"76\">base: ", PAD);
	sl_xml_esc(meta, sizeof(meta), out);
	fputs("</text>\n", out);
	struct sctx c = {.t = t, .out = out, .minw = minw, .unit = unit, .base_y = graph_top + graph_h - FRAME_H};
	c.scale = t->cur_total ? (double)(width - 2 * PAD) / (double)t->cur_total : 0;
	if (t->cur_total)
		draw(&c, t->root, PAD, 0);
	else
		fprintf(out, "<text x=\"%d\" y=\"%d\">no samples in the current profile</text>\n", PAD,
			graph_top + FRAME_H);
	int y = table_top;
	fprintf(out, "<text class=\"h\" x=\"%d\" y=\"%d\">Largest changes (self, base normalized)</text>\n", PAD, y);
	y += FRAME_H + 4;
	fprintf(out, "<text class=\"th\" x=\"%d\" y=\"%d\" xml:space=\"preserve\">%10s %10s %11s %8s  %s</text>\n", PAD,
		y, "base self", "cur self", "delta", "delta%", "symbol [module]");
	for (int i = 0; i < nh; i++) {
		y += FRAME_H;
		double dp = t->cur_total ? 100.0 * hot[i].delta_self / (double)t->cur_total : 0;
		fprintf(out, "<text x=\"%d\" y=\"%d\" xml:space=\"preserve\">%10" PRIu64 " %10" PRIu64 " %+11.1f %+7.2f%%  ",
			PAD, y, hot[i].base_self, hot[i].cur_self, hot[i].delta_self, dp);
		sl_xml_esc(hot[i].name, 90, out);
		if (hot[i].module) {
			fputs(" [", out);
			sl_xml_esc(hot[i].module, 60, out);
			fputc(']', out);
		}
		fputs("</text>\n", out);
	}
	fputs("</svg>\n", out);
	free(hot);
	return ferror(out) ? -EIO : 0;
}

int sl_profile_write_diff(const struct sl_profile *base, const struct sl_profile *cur, int fmt,
			  const struct sl_flame_opts *opts, FILE *out)
{
	if (fmt != SL_FMT_HTML && fmt != SL_FMT_SVG && fmt != SL_FMT_FOLDED)
		return -EINVAL;
	struct sl_dtree t;
	int rc = sl_dtree_build(base, cur, opts ? opts->value : SL_VALUE_DEFAULT, &t);
	if (rc)
		return rc;
	switch (fmt) {
	case SL_FMT_FOLDED: rc = write_folded(&t, opts && opts->diff_raw, out); break;
	case SL_FMT_SVG: rc = write_svg(base, cur, &t, opts, out); break;
	default: rc = sl_flame_html_diff(base, cur, &t, opts, out); break;
	}
	sl_dtree_free(&t);
	return rc;
}
