/* SVG flame graph (after Brendan Gregg's flamegraph.pl layout): one
 * rectangle per node of the merged call tree, root at the bottom, width
 * proportional to the node's total value, a <title> per frame for hover
 * text, and below it a table of the hottest symbols by self and total
 * value. Self-contained: no script, no external font or stylesheet. */
#include "profile/profile_internal.h"
#include "common/json.h"
#include "profile/prof_kinds.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define FRAME_H 17
#define FONT_PX 12
#define CHAR_W 7.0 /* approx. width of a 12px monospace glyph */
#define PAD 10

void sl_xml_esc(const char *s, size_t max, FILE *out)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s), k = 0;
	while (k < len && k < max) {
		size_t bad, l;
		switch (u[k]) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			if (u[k] < 0x20 || u[k] == 0x7f) { /* XML 1.0 forbids most C0 */
				fputc('?', out);
				break;
			}
			l = sl_utf8_seq(u + k, len - k, &bad);
			if (!l) {
				fputs("\xef\xbf\xbd", out); /* U+FFFD */
				k += bad;
				continue;
			}
			if (k + l > max) /* never cut a character in two */
				goto cut;
			fwrite(s + k, 1, l, out);
			k += l;
			continue;
		}
		k++;
	}
cut:
	if (k < len)
		fputs("..", out);
}

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Colour by kind: user code warm (red-yellow), kernel orange, JIT green,
 * unresolved grey, pseudo frames (comm, off-CPU state) blue. */
static void color_of(const struct sl_profile *p, const struct sl_tnode *n, char *buf, size_t sz)
{
	uint32_t h = hash_str(n->name);
	unsigned v1 = h % 55, v2 = (h >> 8) % 80;
	if (n->frame >= p->nframes) {
		snprintf(buf, sz, "rgb(%u,%u,%u)", 80 + v1, 140 + v1, 210 + v1 % 40);
		return;
	}
	uint32_t fl = p->frames[n->frame].flags;
	if (fl & (SL_FRAME_UNKNOWN | SL_FRAME_NOSYM))
		snprintf(buf, sz, "rgb(%u,%u,%u)", 170 + v1, 170 + v1, 170 + v1);
	else if (fl & SL_FRAME_KERNEL)
		snprintf(buf, sz, "rgb(%u,%u,%u)", 220 + v1 % 35, 130 + v2 / 2, 40 + v1);
	else if (fl & SL_FRAME_JIT)
		snprintf(buf, sz, "rgb(%u,%u,%u)", 60 + v1, 190 + v1, 60 + v1);
	else
		snprintf(buf, sz, "rgb(%u,%u,%u)", 205 + v1, 70 + v2, 50 + v1 / 2);
}

static int depth_of(const struct sl_tnode *n)
{
	int d = 0;
	for (size_t i = 0; i < n->nchild; i++) {
		int c = depth_of(n->child[i]);
		if (c > d)
			d = c;
	}
	return d + 1;
}

struct ctx {
	const struct sl_profile *p;
	FILE *out;
	double scale; /* px per unit */
	double minw;
	int base_y;   /* y of the root row */
	const char *unit;
	uint64_t total;
};

static void draw(struct ctx *c, const struct sl_tnode *n, double x, int depth)
{
	double w = (double)n->total * c->scale;
	if (w < c->minw)
		return;
	int y = c->base_y - depth * FRAME_H;
	char col[40];
	color_of(c->p, n, col, sizeof(col));
	double pct = c->total ? 100.0 * (double)n->total / (double)c->total : 0;
	fputs("<g><title>", c->out);
	sl_xml_esc(n->name, 4096, c->out);
	if (n->frame < c->p->nframes && c->p->frames[n->frame].module) {
		fputs(" [", c->out);
		sl_xml_esc(c->p->frames[n->frame].module, 512, c->out);
		fputc(']', c->out);
	}
	fprintf(c->out, " (%" PRIu64 " %s, %.2f%%; self %" PRIu64 ")</title>", n->total, c->unit, pct, n->self);
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
		cx += (double)n->child[i]->total * c->scale;
	}
}

int sl_profile_write_svg(const struct sl_profile *p, const struct sl_flame_opts *o, FILE *out)
{
	int value = o ? o->value : SL_VALUE_DEFAULT;
	int width = o && o->width > 200 ? o->width : 1200;
	int top_n = o && o->top_n > 0 ? o->top_n : 20;
	double minw = o && o->min_width_px > 0 ? o->min_width_px : 0.1;
	const char *title = o && o->title ? o->title : sl_prof_kind_info(p->kind)->title;
	int mode = sl_prof_value_mode(p, value);
	const char *unit = sl_prof_value_unit(mode);
	struct sl_tnode *root = sl_tree_build(p, value);
	if (!root)
		return -ENOMEM;
	struct sl_hot *hot = NULL;
	int nh = sl_prof_hot(p, value, (size_t)top_n, &hot);
	if (nh < 0) {
		sl_tree_free(root);
		return -ENOMEM;
	}
	int depth = depth_of(root);
	char meta[600];
	int graph_top = sl_flame_meta_line(p, o, meta, sizeof(meta)) ? 76 : 60;
	int graph_h = depth * FRAME_H;
	int table_top = graph_top + graph_h + 40;
	int height = table_top + (nh + 2) * FRAME_H + 20;
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		     "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		     "xmlns=\"http://www.w3.org/2000/svg\">\n",
		width, height, width, height);
	fprintf(out, "<style>text{font-family:monospace;font-size:%dpx;fill:#000}"
		     ".h{font-size:17px;font-weight:bold}.s{fill:#555}.th{font-weight:bold}"
		     "g:hover rect{stroke:#000;stroke-width:0.5}</style>\n", FONT_PX);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f0\"/>\n", width, height);
	fprintf(out, "<text class=\"h\" x=\"%d\" y=\"24\" text-anchor=\"middle\">", width / 2);
	sl_xml_esc(title, 200, out);
	fputs("</text>\n", out);
	fprintf(out, "<text class=\"s\" x=\"%d\" y=\"44\">total %" PRIu64 " %s; %" PRIu64
		     " samples; %zu stacks; duration %.3f s; width = %s</text>\n",
		PAD, root->total, unit, sl_profile_total_count(p), p->nsamples, (double)p->duration_ns / 1e9,
		sl_prof_width_text(p->kind, mode));
	if (graph_top > 60) { /* container, pod, host, time range, sample type */
		fprintf(out, "<text class=\"s\" x=\"%d\" y=\"60\">", PAD);
		sl_xml_esc(meta, sizeof(meta), out);
		fputs("</text>\n", out);
	}
	struct ctx c = { .p = p, .out = out, .minw = minw, .unit = unit, .total = root->total,
			 .base_y = graph_top + graph_h - FRAME_H };
	c.scale = root->total ? (double)(width - 2 * PAD) / (double)root->total : 0;
	if (root->total)
		draw(&c, root, PAD, 0);
	else
		fprintf(out, "<text x=\"%d\" y=\"%d\">no samples</text>\n", PAD, graph_top + FRAME_H);
	/* Hottest symbols table. */
	int y = table_top;
	fprintf(out, "<text class=\"h\" x=\"%d\" y=\"%d\">Hottest symbols (by self)</text>\n", PAD, y);
	y += FRAME_H + 4;
	fprintf(out, "<text class=\"th\" x=\"%d\" y=\"%d\" xml:space=\"preserve\">%8s %7s %12s %7s  %s</text>\n",
		PAD, y, "self", "self%", "total", "total%", "symbol [module]");
	for (int i = 0; i < nh; i++) {
		y += FRAME_H;
		double sp = root->total ? 100.0 * (double)hot[i].self / (double)root->total : 0;
		double tp = root->total ? 100.0 * (double)hot[i].total / (double)root->total : 0;
		fprintf(out, "<text x=\"%d\" y=\"%d\" xml:space=\"preserve\">%8" PRIu64 " %6.2f%% %12" PRIu64
			     " %6.2f%%  ",
			PAD, y, hot[i].self, sp, hot[i].total, tp);
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
	sl_tree_free(root);
	return ferror(out) ? -EIO : 0;
}
