/* Folded stacks (the input format of Brendan Gregg's flamegraph.pl, as
 * written by stackcollapse-*.pl): "root;caller;...;leaf VALUE\n", one line
 * per distinct stack. Frame names never contain ';' or a line break here:
 * those characters are replaced by '_' so the format stays parseable; other
 * control bytes (< 0x20, 0x7f) by '?', and invalid UTF-8 (the output is
 * served as UTF-8 text) by U+FFFD, one per maximal subpart. */
#include "profile/profile_internal.h"
#include "common/json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void put_name(const char *s, FILE *out)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s);
	for (size_t k = 0; k < len;) {
		unsigned char c = u[k];
		size_t bad, l;
		if (c == ';' || c == '\n' || c == '\r')
			fputc('_', out), k++;
		else if (c < 0x20 || c == 0x7f)
			fputc('?', out), k++;
		else if ((l = sl_utf8_seq(u + k, len - k, &bad)))
			fwrite(s + k, 1, l, out), k += l;
		else
			fputs("\xef\xbf\xbd", out), k += bad; /* U+FFFD */
	}
}

struct path {
	const struct sl_tnode *v[2 * SL_PROF_MAX_DEPTH + 8];
	size_t n;
};

static void walk(const struct sl_tnode *n, struct path *pa, FILE *out)
{
	if (pa->n >= sizeof(pa->v) / sizeof(pa->v[0]))
		return;
	pa->v[pa->n++] = n;
	if (n->self) {
		for (size_t i = 1; i < pa->n; i++) { /* skip the "all" root */
			if (i > 1)
				fputc(';', out);
			put_name(pa->v[i]->name, out);
		}
		fprintf(out, " %" PRIu64 "\n", n->self);
	}
	for (size_t i = 0; i < n->nchild; i++)
		walk(n->child[i], pa, out);
	pa->n--;
}

int sl_profile_write_folded(const struct sl_profile *p, int value, FILE *out)
{
	struct sl_tnode *root = sl_tree_build(p, value);
	if (!root)
		return -ENOMEM;
	struct path *pa = malloc(sizeof(*pa));
	if (!pa) {
		sl_tree_free(root);
		return -ENOMEM;
	}
	pa->n = 0;
	walk(root, pa, out);
	free(pa);
	sl_tree_free(root);
	return ferror(out) ? -EIO : 0;
}
