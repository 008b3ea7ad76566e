/* DETAILS templates (src/common/detail.h): parse, check, render, and the
 * terminal escaping the CLI applies to every value it prints. */
#include "common/detail.h"

#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAME 64
#define MAX_PARTS 64
#define MAX_DEPTH SL_DETAIL_MAX_DEPTH

/* P_IF {?f}: f truthy; P_IFNOT {!f}: not truthy; P_IFHAS {+f}: present */
enum part_kind { P_TEXT, P_FIELD, P_IF, P_IFNOT, P_IFHAS, P_END };
enum fmt { F_PLAIN, F_DUR, F_BYTES, F_SIG, F_ID, F_JOIN };

static const struct {
	const char *name;
	int fmt;
} formats[] = {{"dur", F_DUR}, {"bytes", F_BYTES}, {"sig", F_SIG}, {"id", F_ID}, {"join", F_JOIN}};

struct part {
	int kind;
	int fmt;
	char *text; /* P_TEXT: literal; P_FIELD and the conditions: the field path */
};

struct sl_detail {
	size_t n;
	struct part p[MAX_PARTS];
	size_t nrefs;
	const char *refs[MAX_PARTS];
};

void sl_detail_free(struct sl_detail *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		free(d->p[i].text);
	free(d);
}

static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '.';
}

static int add(struct sl_detail *d, int kind, int fmt, const char *s, size_t n, char *err, size_t errlen,
	       size_t off)
{
	if (d->n >= MAX_PARTS) {
		snprintf(err, errlen, "offset %zu: more than %d parts", off, MAX_PARTS);
		return -1;
	}
	struct part *p = &d->p[d->n];
	p->kind = kind;
	p->fmt = fmt;
	p->text = NULL;
	if (s) {
		p->text = malloc(n + 1);
		if (!p->text) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		memcpy(p->text, s, n);
		p->text[n] = 0;
	}
	d->n++;
	if (kind != P_TEXT && kind != P_END)
		d->refs[d->nrefs++] = p->text;
	return 0;
}

int sl_detail_parse(const char *tmpl, struct sl_detail **out, char *err, size_t errlen)
{
	struct sl_detail *d = calloc(1, sizeof(*d));
	char lit[1024];
	size_t nl = 0, i = 0;
	int depth = 0; /* open conditions */

	*out = NULL;
	if (!d || !tmpl) {
		snprintf(err, errlen, d ? "no template" : "out of memory");
		free(d);
		return -1;
	}
#define FLUSH()                                                                     \
	do {                                                                        \
		if (nl && add(d, P_TEXT, 0, lit, nl, err, errlen, i))               \
			goto fail;                                                  \
		nl = 0;                                                             \
	} while (0)
	while (tmpl[i]) {
		char c = tmpl[i];
		if ((c == '{' && tmpl[i + 1] == '{') || (c == '}' && tmpl[i + 1] == '}')) {
			if (nl + 1 >= sizeof(lit))
				FLUSH();
			lit[nl++] = c;
			i += 2;
			continue;
		}
		if (c == '}') {
			snprintf(err, errlen, "offset %zu: '}' without '{' (write '}}' for a brace)", i);
			goto fail;
		}
		if (c != '{') {
			if (nl + 1 >= sizeof(lit))
				FLUSH();
			lit[nl++] = c;
			i++;
			continue;
		}
		FLUSH();
		size_t start = i++;
		int kind = P_FIELD, fmt = F_PLAIN;
		if (tmpl[i] == '/') {
			if (tmpl[i + 1] != '}') {
				snprintf(err, errlen, "offset %zu: '{/' must be '{/}'", start);
				goto fail;
			}
			if (!depth) {
				snprintf(err, errlen, "offset %zu: '{/}' without '{?field}'", start);
				goto fail;
			}
			depth--;
			if (add(d, P_END, 0, NULL, 0, err, errlen, start))
				goto fail;
			i += 2;
			continue;
		}
		if (tmpl[i] == '?' || tmpl[i] == '!' || tmpl[i] == '+') {
			if (depth >= MAX_DEPTH) {
				snprintf(err, errlen, "offset %zu: conditions nested more than %d deep", start,
					 MAX_DEPTH);
				goto fail;
			}
			kind = tmpl[i] == '?' ? P_IF : tmpl[i] == '!' ? P_IFNOT : P_IFHAS;
			depth++;
			i++;
		}
		size_t ns = i;
		while (name_char(tmpl[i]))
			i++;
		size_t nn = i - ns;
		if (!nn || nn > MAX_NAME || tmpl[ns] == '.' || tmpl[i - 1] == '.') {
			snprintf(err, errlen, "offset %zu: expected a field name ([A-Za-z0-9_.], at most %d bytes)",
				 start, MAX_NAME);
			goto fail;
		}
		if (tmpl[i] == ':' && kind == P_FIELD) {
			size_t k = 0, fl = strcspn(tmpl + i + 1, "}");
			while (k < sizeof(formats) / sizeof(formats[0]) &&
			       (strlen(formats[k].name) != fl || strncmp(formats[k].name, tmpl + i + 1, fl)))
				k++;
			if (k == sizeof(formats) / sizeof(formats[0]) || !tmpl[i + 1 + fl]) {
				snprintf(err, errlen, "offset %zu: unknown format (dur|bytes|sig|id|join)", i);
				goto fail;
			}
			fmt = formats[k].fmt;
			i += 1 + fl;
		}
		if (tmpl[i] != '}') {
			snprintf(err, errlen, "offset %zu: unterminated '{'", start);
			goto fail;
		}
		if (add(d, kind, fmt, tmpl + ns, nn, err, errlen, start))
			goto fail;
		i++;
	}
	FLUSH();
#undef FLUSH
	if (depth) {
		snprintf(err, errlen, "offset %zu: '{?field}' without '{/}'", i);
		goto fail;
	}
	*out = d;
	return 0;
fail:
	sl_detail_free(d);
	return -1;
}

size_t sl_detail_nrefs(const struct sl_detail *d)
{
	return d->nrefs;
}

const char *sl_detail_ref(const struct sl_detail *d, size_t i)
{
	return i < d->nrefs ? d->refs[i] : NULL;
}

int sl_detail_check(const char *tmpl, const char *const *names, size_t n, char *err, size_t errlen)
{
	struct sl_detail *d;
	if (sl_detail_parse(tmpl, &d, err, errlen))
		return -1;
	for (size_t r = 0; r < d->nrefs; r++) {
		const char *ref = d->refs[r];
		size_t len = strcspn(ref, ".");
		int found = 0;
		for (size_t k = 0; k < n && !found; k++)
			found = names[k] && strlen(names[k]) == len && !strncmp(names[k], ref, len);
		if (!found) {
			snprintf(err, errlen, "unknown field '%.*s'", (int)len, ref);
			sl_detail_free(d);
			return -1;
		}
	}
	sl_detail_free(d);
	return 0;
}

/* ---- rendering ---- */

struct buf {
	char *b;
	size_t len, need;
};

static void put(struct buf *o, const char *s, size_t n)
{
	if (o->len && o->need < o->len - 1) {
		size_t room = o->len - 1 - o->need;
		memcpy(o->b + o->need, s, n < room ? n : room);
	}
	o->need += n;
}

static void puts_(struct buf *o, const char *s)
{
	put(o, s, strlen(s));
}

/* Length of the UTF-8 sequence at s (n bytes left) and its code point, or 0
 * when it is not valid (overlong, surrogate, > U+10FFFF, cut). */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len;
	uint32_t v, min;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0)
		len = 2, v = s[0] & 0x1f, min = 0x80;
	else if ((s[0] & 0xf0) == 0xe0)
		len = 3, v = s[0] & 0x0f, min = 0x800;
	else if ((s[0] & 0xf8) == 0xf0)
		len = 4, v = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

/* Code points that change how a terminal shows what follows: C1 controls,
 * bidi embeddings/overrides/isolates, line/paragraph separators; and the
 * invisible ones that make two different strings look the same (a spoofed
 * argv or name): zero width space, non-joiner, joiner, word joiner, BOM /
 * zero width no-break space, soft hyphen, tag characters. */
static int unsafe_cp(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f || cp == 0x061c ||
	       cp == 0x2028 || cp == 0x2029 || (cp >= 0x200b && cp <= 0x200d) || cp == 0x2060 ||
	       cp == 0xfeff || cp == 0x00ad || (cp >= 0xe0000 && cp <= 0xe007f);
}

static void put_escaped(struct buf *o, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	char tmp[16];
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t l = utf8_seq(u + i, n - i, &cp);
		if (!l) {
			snprintf(tmp, sizeof(tmp), "\\x%02x", u[i]);
			puts_(o, tmp);
			i++;
			continue;
		}
		if (cp == '\\')
			puts_(o, "\\\\");
		else if (cp < 0x20 || cp == 0x7f) {
			snprintf(tmp, sizeof(tmp), "\\x%02x", (unsigned)cp);
			puts_(o, tmp);
		} else if (unsafe_cp(cp)) {
			snprintf(tmp, sizeof(tmp), "\\u{%04" PRIx32 "}", cp);
			puts_(o, tmp);
		} else
			put(o, s + i, l);
		i += l;
	}
}

size_t sl_term_escape(const char *s, size_t n, char *buf, size_t len)
{
	struct buf o = {buf, len, 0};
	put_escaped(&o, s, n);
	if (len)
		buf[o.need < len ? o.need : len - 1] = 0;
	return o.need;
}

static const json_t *lookup(const json_t *ev, const char *path)
{
	char seg[MAX_NAME + 1];
	const json_t *v = ev;
	while (v && *path) {
		size_t l = strcspn(path, ".");
		if (l > MAX_NAME || !json_is_object(v))
			return NULL;
		memcpy(seg, path, l);
		seg[l] = 0;
		v = json_object_get(v, seg);
		path += l;
		if (*path == '.')
			path++;
	}
	return v;
}

static int truthy(const json_t *v)
{
	if (!v || json_is_null(v) || json_is_false(v))
		return 0;
	if (json_is_integer(v))
		return json_integer_value(v) != 0;
	if (json_is_real(v))
		return json_real_value(v) != 0;
	if (json_is_string(v))
		return json_string_length(v) != 0;
	if (json_is_array(v))
		return json_array_size(v) != 0;
	return 1;
}

/* The CLI's durations: whole microseconds below 1 ms ("250us"), then
 * "4.6ms", "1.50s", "2.5m", "1.2h"; negative as 0. */
static void fmt_dur(char *t, size_t n, double ns)
{
	if (ns < 1e6)
		snprintf(t, n, "%.0fus", (ns > 0 ? ns : 0) / 1e3);
	else if (ns >= 3.6e12)
		snprintf(t, n, "%.1fh", ns / 3.6e12);
	else if (ns >= 6e10)
		snprintf(t, n, "%.1fm", ns / 6e10);
	else if (ns >= 1e9)
		snprintf(t, n, "%.2fs", ns / 1e9);
	else
		snprintf(t, n, "%.1fms", ns / 1e6);
}

/* "SIGSEGV" for 11, "SIG42" when the number has no name. */
static void fmt_sig(char *t, size_t n, json_int_t sig)
{
	const char *name = sig > 0 && sig < 1024 ? sigabbrev_np((int)sig) : NULL;
	if (name)
		snprintf(t, n, "SIG%s", name);
	else
		snprintf(t, n, "SIG%" JSON_INTEGER_FORMAT, sig);
}

static void fmt_bytes(char *t, size_t n, double b)
{
	static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int i = 0;
	while (b >= 1024 && i < 4)
		b /= 1024, i++;
	if (i == 0)
		snprintf(t, n, "%.0fB", b);
	else
		snprintf(t, n, "%.1f%s", b, u[i]);
}

static void put_value(struct buf *o, const json_t *v, int fmt);

/* The elements of an array separated by one space, each as {field} prints
 * it (an absent or null element as "-"). */
static void put_joined(struct buf *o, const json_t *a)
{
	size_t i;
	const json_t *x;
	json_array_foreach(a, i, x)
	{
		if (i)
			puts_(o, " ");
		put_value(o, x, F_PLAIN);
	}
}

static void put_value(struct buf *o, const json_t *v, int fmt)
{
	char t[64];
	if (!v || json_is_null(v)) {
		puts_(o, "-");
		return;
	}
	if ((fmt == F_DUR || fmt == F_BYTES) && json_is_number(v)) {
		double x = json_number_value(v);
		if (fmt == F_DUR)
			fmt_dur(t, sizeof(t), x);
		else
			fmt_bytes(t, sizeof(t), x);
		puts_(o, t);
		return;
	}
	if (fmt == F_SIG && json_is_integer(v)) {
		fmt_sig(t, sizeof(t), json_integer_value(v));
		puts_(o, t);
		return;
	}
	if (fmt == F_ID && json_is_string(v)) {
		size_t l = json_string_length(v);
		put_escaped(o, json_string_value(v), l < SL_DETAIL_ID_LEN ? l : SL_DETAIL_ID_LEN);
		return;
	}
	if (fmt == F_JOIN && json_is_array(v)) {
		put_joined(o, v);
		return;
	}
	if (json_is_string(v)) {
		put_escaped(o, json_string_value(v), json_string_length(v));
	} else if (json_is_integer(v)) {
		snprintf(t, sizeof(t), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		puts_(o, t);
	} else if (json_is_real(v)) {
		snprintf(t, sizeof(t), "%g", json_real_value(v));
		puts_(o, t);
	} else if (json_is_boolean(v)) {
		puts_(o, json_is_true(v) ? "true" : "false");
	} else {
		char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		if (s) {
			put_escaped(o, s, strlen(s));
			free(s);
		}
	}
}

size_t sl_detail_render(const struct sl_detail *d, const json_t *ev, char *buf, size_t len)
{
	struct buf o = {buf, len, 0};
	int depth = 0, skip = 0; /* skip: the depth of the false condition being skipped, 0 none */
	for (size_t i = 0; i < d->n; i++) {
		const struct part *p = &d->p[i];
		const json_t *v;
		switch (p->kind) {
		case P_END:
			if (skip == depth)
				skip = 0;
			depth--;
			break;
		case P_IF:
		case P_IFNOT:
		case P_IFHAS:
			depth++;
			if (skip)
				break;
			v = lookup(ev, p->text);
			if (p->kind == P_IF ? !truthy(v) : p->kind == P_IFNOT ? truthy(v) : !v || json_is_null(v))
				skip = depth;
			break;
		case P_TEXT:
			if (!skip)
				put_escaped(&o, p->text, strlen(p->text));
			break;
		case P_FIELD:
			if (!skip)
				put_value(&o, lookup(ev, p->text), p->fmt);
			break;
		}
	}
	if (len)
		buf[o.need < len ? o.need : len - 1] = 0;
	return o.need;
}
