/* Prometheus text -> families (prom_parse.h). */
#include "export/prom_parse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static char *dupn(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

static void free_labels(struct sl_pm_label *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(l[i].name);
		free(l[i].value);
	}
	free(l);
}

static void free_series(struct sl_pm_series *s)
{
	free_labels(s->labels, s->nlabels);
	free(s->le);
	free(s->cum);
}

void sl_pm_free(struct sl_pm *pm)
{
	for (size_t i = 0; i < pm->nfam; i++) {
		struct sl_pm_family *f = &pm->fam[i];
		for (size_t j = 0; j < f->nseries; j++)
			free_series(&f->series[j]);
		free(f->series);
		free(f->name);
		free(f->help);
	}
	free(pm->fam);
	memset(pm, 0, sizeof(*pm));
}

static struct sl_pm_family *add_family(struct sl_pm *pm, const char *name, size_t nl, int type)
{
	struct sl_pm_family *nf = realloc(pm->fam, (pm->nfam + 1) * sizeof(*nf));
	if (!nf)
		return NULL;
	pm->fam = nf;
	struct sl_pm_family *f = &pm->fam[pm->nfam];
	memset(f, 0, sizeof(*f));
	f->name = dupn(name, nl);
	f->help = dupn("", 0);
	f->type = type;
	if (!f->name || !f->help) {
		free(f->name);
		free(f->help);
		return NULL;
	}
	pm->nfam++;
	return f;
}

static int is_name_char(char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
	       (!first && c >= '0' && c <= '9');
}

/* Labels of "{a="x",b="y"}" at *pp (after the name); *pp moves past '}'.
 * 0, -EINVAL (malformed), -ENOMEM. */
static int parse_labels(const char **pp, const char *end, struct sl_pm_label **out, size_t *nout)
{
	const char *p = *pp;
	struct sl_pm_label *l = NULL;
	size_t n = 0;
	int rc = -EINVAL;
	if (p >= end || *p != '{') {
		*out = NULL;
		*nout = 0;
		return 0;
	}
	p++;
	while (p < end && *p != '}') {
		const char *ns = p;
		while (p < end && is_name_char(*p, p == ns))
			p++;
		if (p == ns || p + 1 >= end || p[0] != '=' || p[1] != '"')
			goto out;
		size_t nl = (size_t)(p - ns);
		p += 2;
		char *v = malloc((size_t)(end - p) + 1);
		size_t vl = 0;
		if (!v) {
			rc = -ENOMEM;
			goto out;
		}
		while (p < end && *p != '"') {
			if (*p == '\\' && p + 1 < end) {
				p++;
				v[vl++] = *p == 'n' ? '\n' : *p;
			} else {
				v[vl++] = *p;
			}
			p++;
		}
		v[vl] = 0;
		struct sl_pm_label *nlb = p < end ? realloc(l, (n + 1) * sizeof(*l)) : NULL;
		char *name = nlb ? dupn(ns, nl) : NULL;
		if (!name) {
			free(v);
			if (nlb)
				l = nlb;
			rc = p < end ? -ENOMEM : -EINVAL;
			goto out;
		}
		l = nlb;
		l[n].name = name;
		l[n].value = v;
		n++;
		p++; /* closing quote */
		if (p < end && *p == ',')
			p++;
	}
	if (p >= end)
		goto out;
	*pp = p + 1;
	*out = l;
	*nout = n;
	return 0;
out:
	free_labels(l, n);
	return rc;
}

static int labels_equal(const struct sl_pm_label *a, size_t na, const struct sl_pm_label *b, size_t nb)
{
	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (strcmp(a[i].name, b[i].name) || strcmp(a[i].value, b[i].value))
			return 0;
	return 1;
}

static int suffix_of(const char *name, size_t nl, const char *fam, const char *suf)
{
	size_t fl = strlen(fam), sl = strlen(suf);
	return nl == fl + sl && !strncmp(name, fam, fl) && !strncmp(name + fl, suf, sl);
}

/* The series of f with these labels (histograms: the last one that has
 * them, else a new one taking the labels); NULL on ENOMEM. */
static struct sl_pm_series *series_for(struct sl_pm_family *f, struct sl_pm_label **l, size_t *n, int reuse)
{
	if (reuse)
		for (size_t i = f->nseries; i-- > 0;)
			if (labels_equal(f->series[i].labels, f->series[i].nlabels, *l, *n)) {
				free_labels(*l, *n);
				*l = NULL;
				*n = 0;
				return &f->series[i];
			}
	struct sl_pm_series *ns = realloc(f->series, (f->nseries + 1) * sizeof(*ns));
	if (!ns)
		return NULL;
	f->series = ns;
	struct sl_pm_series *s = &f->series[f->nseries++];
	memset(s, 0, sizeof(*s));
	s->labels = *l;
	s->nlabels = *n;
	*l = NULL;
	*n = 0;
	return s;
}

static int parse_value(const char *p, const char *end, double *v)
{
	char buf[64];
	while (p < end && *p == ' ')
		p++;
	size_t n = 0;
	while (p + n < end && p[n] != ' ' && n < sizeof(buf) - 1)
		n++;
	if (!n)
		return -EINVAL;
	memcpy(buf, p, n);
	buf[n] = 0;
	char *e;
	*v = strtod(buf, &e);
	return *e ? -EINVAL : 0;
}

static int sample(struct sl_pm *pm, struct sl_pm_family **cur, const char *p, const char *end)
{
	const char *ns = p;
	while (p < end && is_name_char(*p, p == ns))
		p++;
	size_t nl = (size_t)(p - ns);
	if (!nl)
		return -EINVAL;
	struct sl_pm_label *l = NULL;
	size_t n = 0;
	double v;
	int rc = parse_labels(&p, end, &l, &n);
	if (rc)
		return rc;
	if (parse_value(p, end, &v)) {
		free_labels(l, n);
		return -EINVAL;
	}
	struct sl_pm_family *f = *cur;
	if (f && f->type == SL_PM_HISTOGRAM) {
		int bucket = suffix_of(ns, nl, f->name, "_bucket"), sum = suffix_of(ns, nl, f->name, "_sum"),
		    count = suffix_of(ns, nl, f->name, "_count");
		if (bucket || sum || count) {
			char *le = NULL;
			if (bucket) {
				for (size_t i = 0; i < n; i++)
					if (!strcmp(l[i].name, "le")) {
						le = l[i].value;
						free(l[i].name);
						memmove(&l[i], &l[i + 1], (n - i - 1) * sizeof(*l));
						n--;
						break;
					}
				if (!le) {
					free_labels(l, n);
					return -EINVAL;
				}
			}
			struct sl_pm_series *s = series_for(f, &l, &n, 1);
			if (!s) {
				free(le);
				free_labels(l, n);
				return -ENOMEM;
			}
			if (bucket) {
				char *e;
				double b = strtod(le, &e);
				int bad = *e != 0;
				free(le);
				if (bad)
					return -EINVAL;
				if (isinf(b) && b > 0) {
					s->inf = v;
					s->has_inf = 1;
					return 0;
				}
				double *nle = realloc(s->le, (s->nb + 1) * sizeof(double));
				if (nle)
					s->le = nle;
				double *ncum = nle ? realloc(s->cum, (s->nb + 1) * sizeof(double)) : NULL;
				if (!ncum)
					return -ENOMEM;
				s->cum = ncum;
				s->le[s->nb] = b;
				s->cum[s->nb] = v;
				s->nb++;
			} else if (sum) {
				s->sum = v;
			} else {
				s->count = v;
			}
			return 0;
		}
	}
	if (!f || nl != strlen(f->name) || strncmp(ns, f->name, nl)) {
		/* a sample of no declared family (or of another one): its own gauge */
		f = add_family(pm, ns, nl, SL_PM_GAUGE);
		if (!f) {
			free_labels(l, n);
			return -ENOMEM;
		}
		*cur = f;
	}
	struct sl_pm_series *s = series_for(f, &l, &n, 0);
	if (!s) {
		free_labels(l, n);
		return -ENOMEM;
	}
	s->value = v;
	return 0;
}

/* "# TYPE name type" / "# HELP name text". */
static int comment(struct sl_pm *pm, struct sl_pm_family **cur, const char *p, const char *end)
{
	int help;
	if (end - p > 7 && !strncmp(p, "# TYPE ", 7))
		help = 0;
	else if (end - p > 7 && !strncmp(p, "# HELP ", 7))
		help = 1;
	else
		return 0;
	p += 7;
	const char *ns = p;
	while (p < end && *p != ' ')
		p++;
	size_t nl = (size_t)(p - ns);
	if (p < end)
		p++;
	struct sl_pm_family *f = *cur;
	if (!f || strlen(f->name) != nl || strncmp(f->name, ns, nl)) {
		f = add_family(pm, ns, nl, SL_PM_GAUGE);
		if (!f)
			return -ENOMEM;
		*cur = f;
	}
	if (help) {
		char *h = dupn(p, (size_t)(end - p));
		if (!h)
			return -ENOMEM;
		free(f->help);
		f->help = h;
		return 0;
	}
	size_t tl = (size_t)(end - p);
	if (tl == 7 && !strncmp(p, "counter", 7))
		f->type = SL_PM_COUNTER;
	else if (tl == 9 && !strncmp(p, "histogram", 9))
		f->type = SL_PM_HISTOGRAM;
	else if (tl == 7 && !strncmp(p, "summary", 7))
		f->type = -1; /* skipped: never written by sandlens */
	else
		f->type = SL_PM_GAUGE;
	return 0;
}

int sl_pm_parse(struct sl_pm *pm, const char *text, size_t len)
{
	struct sl_pm_family *cur = NULL;
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		int rc = 0;
		if (le > p && *p == '#')
			rc = comment(pm, &cur, p, le);
		else if (le > p)
			rc = cur && cur->type < 0 ? 0 : sample(pm, &cur, p, le);
		if (rc == -ENOMEM)
			return rc;
		if (rc)
			pm->bad_lines++;
		p = le + (nl != NULL);
	}
	/* drop skipped (summary) families */
	size_t w = 0;
	for (size_t i = 0; i < pm->nfam; i++) {
		if (pm->fam[i].type < 0) {
			for (size_t j = 0; j < pm->fam[i].nseries; j++)
				free_series(&pm->fam[i].series[j]);
			free(pm->fam[i].series);
			free(pm->fam[i].name);
			free(pm->fam[i].help);
			continue;
		}
		pm->fam[w++] = pm->fam[i];
	}
	pm->nfam = w;
	return 0;
}
