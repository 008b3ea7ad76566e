/* PSI file parser (see cgstat.h, docs/STATS.md "Pressure"). */
#include "cgroup/cgstat.h"

#include <string.h>

/* "<int>[.<frac>]" -> double, locale-free. The value is computed as
 * mantissa / 10^digits, which is correctly rounded (so "1.71" parses to
 * the same double as the literal 1.71) while mantissa < 2^53. */
static bool parse_avg(const char **pp, double *out)
{
	const char *p = *pp;
	uint64_t ip, mant;
	double scale = 1.0;

	if (!sl_cgparse_dec(&p, &ip))
		return false;
	mant = ip;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return false;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (scale >= 1e15 || mant > (UINT64_MAX - 9) / 10)
				return false; /* more precision than the kernel ever prints */
			mant = mant * 10 + (uint64_t)(*p - '0');
			scale *= 10.0;
		}
	}
	*out = (double)mant / scale;
	*pp = p;
	return true;
}

static bool lit(const char **pp, const char *s)
{
	size_t n = strlen(s);
	if (strncmp(*pp, s, n) != 0)
		return false;
	*pp += n;
	return true;
}

/* One line body after "some"/"full": " avg10=X avg60=X avg300=X total=N". */
static bool parse_line(const char *p, const char *end, struct sl_psi_line *l)
{
	if (!lit(&p, " avg10=") || !parse_avg(&p, &l->avg10) || !lit(&p, " avg60=") ||
	    !parse_avg(&p, &l->avg60) || !lit(&p, " avg300=") || !parse_avg(&p, &l->avg300) ||
	    !lit(&p, " total=") || !sl_cgparse_dec(&p, &l->total_usec))
		return false;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++;
	return p == end;
}

int sl_cgparse_psi(const char *text, struct sl_cgstat_psi *out)
{
	const char *p = text;
	int bad = 0;

	memset(out, 0, sizeof(*out));
	if (!p)
		return 0;
	while (*p) {
		const char *eol = strchr(p, '\n');
		const char *end = eol ? eol : p + strlen(p);
		const char *q = p, *start;
		struct sl_psi_line l = {0};
		bool ok = false;

		while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q == end)
			goto next;
		start = q;
		if (lit(&q, "some") && parse_line(q, end, &l)) {
			out->some = l;
			out->has_some = true;
			ok = true;
		} else if ((q = start, lit(&q, "full")) && parse_line(q, end, &l)) {
			out->full = l;
			out->has_full = true;
			ok = true;
		}
		if (!ok)
			bad++;
next:
		p = eol ? eol + 1 : end;
	}
	return bad;
}
