/* The one Prometheus text writer (src/common/prom.h). Exposition format
 * 0.0.4: https://prometheus.io/docs/instrumenting/exposition_formats/ */
#include "common/prom.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Families started in one exposition: a small open-addressing set of
 * name hashes with the names kept for the equality check. */
#define SEEN_INIT 64

struct sl_prom {
	FILE *out;
	char **seen;      /* names of families whose HELP/TYPE was written */
	size_t nseen, cap;
	const struct sl_prom_family *allowed;
	size_t nallowed;
	int restricted;
	int cur_ok;       /* the current family was accepted */
	char cur[128];    /* the current family's name */
	int cur_type;
	unsigned refused;
};

struct sl_prom *sl_prom_new(FILE *out)
{
	struct sl_prom *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->out = out;
	return p;
}

void sl_prom_free(struct sl_prom *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nseen; i++)
		free(p->seen[i]);
	free(p->seen);
	free(p);
}

FILE *sl_prom_stream(struct sl_prom *p)
{
	return p->out;
}

static int name_ok(const char *s, int colon)
{
	if (!s || !*s)
		return 0;
	for (const char *c = s; *c; c++) {
		int alpha = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' ||
			    (colon && *c == ':');
		if (!alpha && !(c > s && *c >= '0' && *c <= '9'))
			return 0;
	}
	return 1;
}

static int seen(const struct sl_prom *p, const char *name)
{
	for (size_t i = 0; i < p->nseen; i++)
		if (!strcmp(p->seen[i], name))
			return 1;
	return 0;
}

static int allowed(const struct sl_prom *p, const char *name)
{
	if (!p->restricted)
		return 1;
	for (size_t i = 0; i < p->nallowed; i++)
		if (p->allowed[i].name && !strcmp(p->allowed[i].name, name))
			return 1;
	return 0;
}

/* Length of the well-formed UTF-8 sequence at s (1..4; RFC 3629, Unicode
 * table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF), 0
 * when s does not start one. s is NUL-terminated. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

/* s as UTF-8 text with \\ and \n escaped, and \" when quote: runs of plain
 * text in one fwrite (a stats pass writes every cgroup path ~35 times).
 * Control characters (C0 other than \n, DEL, C1 U+0080..U+009F) are
 * written as U+FFFD like invalid UTF-8: valid exposition either way, but
 * `curl /metrics` in a terminal would obey them. */
static void put_text(FILE *f, const char *s, int quote)
{
	const unsigned char *u = (const unsigned char *)s, *run = u;

	if (!s)
		return;
	while (*u) {
		size_t n = utf8_len(u), skip = 1;
		const char *rep = NULL;
		if (*u == '\\')
			rep = "\\\\";
		else if (*u == '\n')
			rep = "\\n";
		else if (*u == '"' && quote)
			rep = "\\\"";
		else if (!n || *u < 0x20 || *u == 0x7f)
			rep = "\xef\xbf\xbd"; /* U+FFFD for this byte */
		else if (n == 2 && u[0] == 0xc2 && u[1] <= 0x9f)
			rep = "\xef\xbf\xbd", skip = 2; /* U+FFFD for this C1 control */
		if (!rep) {
			u += n;
			continue;
		}
		fwrite(run, 1, (size_t)(u - run), f);
		fputs(rep, f);
		u += skip;
		run = u;
	}
	fwrite(run, 1, (size_t)(u - run), f);
}

int sl_prom_family(struct sl_prom *p, const char *name, int type, const char *help)
{
	static const char *const tn[] = {"counter", "gauge", "histogram"};

	p->cur_ok = 0;
	if (!name_ok(name, 1) || type < SL_PROM_COUNTER || type > SL_PROM_HISTOGRAM ||
	    strlen(name) >= sizeof(p->cur))
		return -EINVAL;
	if (!allowed(p, name)) {
		p->refused++;
		return -EPERM;
	}
	snprintf(p->cur, sizeof(p->cur), "%s", name);
	p->cur_type = type;
	p->cur_ok = 1;
	if (seen(p, name))
		return 0;
	if (p->nseen == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : SEEN_INIT;
		char **ns = realloc(p->seen, nc * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		p->seen = ns;
		p->cap = nc;
	}
	char *dup = strdup(name);
	if (!dup)
		return -ENOMEM;
	p->seen[p->nseen++] = dup;
	fprintf(p->out, "# HELP %s ", name);
	put_text(p->out, help, 0); /* HELP escapes \\ and newline, not quotes */
	fprintf(p->out, "\n# TYPE %s %s\n", name, tn[type]);
	return 0;
}

int sl_prom_declared(struct sl_prom *p, const struct sl_prom_family *f)
{
	return sl_prom_family(p, f->name, f->type, f->help);
}

void sl_prom_escape(FILE *out, const char *s)
{
	put_text(out, s, 1);
}

/* A sample's name must belong to the current family: the family name
 * itself, or (histograms) one of its _bucket/_sum/_count series. */
static int sample_ok(struct sl_prom *p, const char *name)
{
	if (!p->cur_ok)
		return -EPERM;
	if (!strcmp(name, p->cur))
		return 0;
	size_t n = strlen(p->cur);
	if (p->cur_type == SL_PROM_HISTOGRAM && !strncmp(name, p->cur, n) &&
	    (!strcmp(name + n, "_bucket") || !strcmp(name + n, "_sum") || !strcmp(name + n, "_count")))
		return 0;
	return -EINVAL;
}

static int labels_ok(const struct sl_prom_label *l)
{
	for (; l && l->name; l++)
		if (!name_ok(l->name, 0) || !strncmp(l->name, "__", 2))
			return 0;
	return 1;
}

/* name{labels[,extra="v"]} */
static void put_series(FILE *f, const char *name, const struct sl_prom_label *l, const char *extra_name,
		       const char *extra_val)
{
	int first = 1;

	fputs(name, f);
	for (; l && l->name; l++) {
		if (!l->value)
			continue;
		fputs(first ? "{" : ",", f);
		first = 0;
		fprintf(f, "%s=\"", l->name);
		sl_prom_escape(f, l->value);
		fputc('"', f);
	}
	if (extra_name) {
		fputs(first ? "{" : ",", f);
		first = 0;
		fprintf(f, "%s=\"%s\"", extra_name, extra_val);
	}
	if (!first)
		fputc('}', f);
}

static void put_double(FILE *f, double v)
{
	if (isnan(v))
		fputs("NaN", f);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	else
		fprintf(f, "%.9g", v);
}

static int begin(struct sl_prom *p, const char *name, const struct sl_prom_label *labels)
{
	int rc = sample_ok(p, name);
	if (rc)
		return rc;
	if (!labels_ok(labels))
		return -EINVAL;
	put_series(p->out, name, labels, NULL, NULL);
	fputc(' ', p->out);
	return 0;
}

int sl_prom_u64(struct sl_prom *p, const char *name, const struct sl_prom_label *labels, uint64_t v)
{
	int rc = begin(p, name, labels);
	if (!rc)
		fprintf(p->out, "%" PRIu64 "\n", v);
	return rc;
}

int sl_prom_i64(struct sl_prom *p, const char *name, const struct sl_prom_label *labels, int64_t v)
{
	int rc = begin(p, name, labels);
	if (!rc)
		fprintf(p->out, "%" PRId64 "\n", v);
	return rc;
}

int sl_prom_f64(struct sl_prom *p, const char *name, const struct sl_prom_label *labels, double v)
{
	int rc = begin(p, name, labels);
	if (!rc) {
		put_double(p->out, v);
		fputc('\n', p->out);
	}
	return rc;
}

int sl_prom_one_u64(struct sl_prom *p, const char *name, int type, const char *help, uint64_t v)
{
	int rc = sl_prom_family(p, name, type, help);
	return rc ? rc : sl_prom_u64(p, name, NULL, v);
}

int sl_prom_one_f64(struct sl_prom *p, const char *name, int type, const char *help, double v)
{
	int rc = sl_prom_family(p, name, type, help);
	return rc ? rc : sl_prom_f64(p, name, NULL, v);
}

int sl_prom_decimal(struct sl_prom *p, const char *name, const struct sl_prom_label *labels, uint64_t v,
		    unsigned digits)
{
	uint64_t scale = 1;

	if (digits > 19)
		return -EINVAL;
	for (unsigned i = 0; i < digits; i++)
		scale *= 10;
	int rc = begin(p, name, labels);
	if (rc)
		return rc;
	if (digits)
		fprintf(p->out, "%" PRIu64 ".%0*" PRIu64 "\n", v / scale, (int)digits, v % scale);
	else
		fprintf(p->out, "%" PRIu64 "\n", v);
	return 0;
}

int sl_prom_histogram(struct sl_prom *p, const char *name, const struct sl_prom_label *labels,
		      const double *le, const uint64_t *counts, size_t nb, double sum)
{
	char bname[160], lebuf[40];
	uint64_t cum = 0;

	if (!p->cur_ok || strcmp(name, p->cur) || p->cur_type != SL_PROM_HISTOGRAM)
		return p->cur_ok ? -EINVAL : -EPERM;
	if (!labels_ok(labels))
		return -EINVAL;
	for (const struct sl_prom_label *l = labels; l && l->name; l++)
		if (!strcmp(l->name, "le"))
			return -EINVAL;
	for (size_t i = 1; i < nb; i++)
		if (!(le[i] > le[i - 1]))
			return -EINVAL;
	snprintf(bname, sizeof(bname), "%s_bucket", name);
	for (size_t i = 0; i < nb; i++) {
		cum += counts[i];
		snprintf(lebuf, sizeof(lebuf), "%.9g", le[i]);
		put_series(p->out, bname, labels, "le", lebuf);
		fprintf(p->out, " %" PRIu64 "\n", cum);
	}
	cum += counts[nb];
	put_series(p->out, bname, labels, "le", "+Inf");
	fprintf(p->out, " %" PRIu64 "\n", cum);
	snprintf(bname, sizeof(bname), "%s_sum", name);
	put_series(p->out, bname, labels, NULL, NULL);
	fputc(' ', p->out);
	put_double(p->out, sum);
	fputc('\n', p->out);
	snprintf(bname, sizeof(bname), "%s_count", name);
	put_series(p->out, bname, labels, NULL, NULL);
	fprintf(p->out, " %" PRIu64 "\n", cum);
	return 0;
}

void sl_prom_restrict(struct sl_prom *p, const struct sl_prom_family *allowed_f, size_t n)
{
	p->allowed = allowed_f;
	p->nallowed = allowed_f ? n : 0;
	p->restricted = 1;
	p->cur_ok = 0; /* a family must be (re)started under the new rule */
}

void sl_prom_unrestrict(struct sl_prom *p)
{
	p->allowed = NULL;
	p->nallowed = 0;
	p->restricted = 0;
	p->cur_ok = 0;
}

unsigned sl_prom_refused(const struct sl_prom *p)
{
	return p->refused;
}
