#include "common/timefmt.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define NS_PER_S 1000000000LL
#define S_PER_DAY 86400LL

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant,
 * "chrono-Compatible Low-Level Date Algorithms"). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

int sl_time_format(int64_t ns, char *buf, size_t len)
{
	/* floor division: -1 ns is 1969-12-31T23:59:59.999999999Z */
	int64_t secs = ns / NS_PER_S, frac = ns % NS_PER_S;
	if (frac < 0) {
		frac += NS_PER_S;
		secs--;
	}
	int64_t days = secs / S_PER_DAY, sod = secs % S_PER_DAY;
	if (sod < 0) {
		sod += S_PER_DAY;
		days--;
	}
	int64_t y;
	unsigned m, d;
	civil_from_days(days, &y, &m, &d);
	int n = snprintf(buf, len, "%04lld-%02u-%02uT%02u:%02u:%02u.%09lldZ", (long long)y, m, d,
			 (unsigned)(sod / 3600), (unsigned)(sod / 60 % 60), (unsigned)(sod % 60),
			 (long long)frac);
	if (n < 0 || (size_t)n >= len) {
		if (len)
			buf[0] = '\0';
		return -ENOSPC;
	}
	return n;
}

/* Reads exactly n digits at *p. */
static bool digits(const char **p, int n, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*p)[i];
		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (unsigned)(c - '0');
	}
	*p += n;
	*out = v;
	return true;
}

static bool expect(const char **p, const char *set)
{
	if (**p && strchr(set, **p)) {
		(*p)++;
		return true;
	}
	return false;
}

static bool leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

static unsigned mdays(int64_t y, unsigned m)
{
	static const unsigned t[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	return m == 2 && leap(y) ? 29 : t[m - 1];
}

int sl_time_parse_rfc3339(const char *s, int64_t *ns)
{
	const char *p = s;
	unsigned y, mo, d, h, mi, se, frac = 0, oh = 0, om = 0;
	int sign = 0;

	if (!s)
		return -EINVAL;
	if (!digits(&p, 4, &y) || !expect(&p, "-") || !digits(&p, 2, &mo) || !expect(&p, "-") ||
	    !digits(&p, 2, &d) || !expect(&p, "Tt ") || !digits(&p, 2, &h) || !expect(&p, ":") ||
	    !digits(&p, 2, &mi) || !expect(&p, ":") || !digits(&p, 2, &se))
		return -EINVAL;
	if (*p == '.') {
		p++;
		int nd = 0;
		while (*p >= '0' && *p <= '9') {
			if (nd < 9)
				frac = frac * 10 + (unsigned)(*p - '0');
			nd++;
			p++;
		}
		if (nd == 0)
			return -EINVAL;
		for (; nd < 9; nd++)
			frac *= 10;
	}
	if (expect(&p, "Zz")) {
		sign = 0;
	} else if (*p == '+' || *p == ' ' || *p == '-') {
		sign = *p == '-' ? -1 : 1;
		p++;
		if (!digits(&p, 2, &oh) || !expect(&p, ":") || !digits(&p, 2, &om))
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays(y, mo) || h > 23 || mi > 59 || se > 60 ||
	    oh > 23 || om > 59)
		return -EINVAL;

	int64_t secs = days_from_civil(y, mo, d) * S_PER_DAY + h * 3600LL + mi * 60LL + se;
	secs -= sign * (oh * 3600LL + om * 60LL);
	int64_t out, f = frac;
	if (secs < 0 && f > 0) { /* keep the intermediate in range near INT64_MIN */
		secs++;
		f -= NS_PER_S;
	}
	if (__builtin_mul_overflow(secs, NS_PER_S, &out) || __builtin_add_overflow(out, f, &out))
		return -ERANGE;
	*ns = out;
	return 0;
}

int sl_time_parse_duration(const char *s, int64_t *ns)
{
	static const struct {
		const char *name;
		int64_t mul;
	} units[] = {
		/* two-letter units first so "ms" is not read as "m" + junk */
		{"ns", 1},
		{"us", 1000},
		{"ms", 1000000},
		{"s", NS_PER_S},
		{"m", 60 * NS_PER_S},
		{"h", 3600 * NS_PER_S},
		{"d", S_PER_DAY * NS_PER_S},
	};
	const char *p = s;
	int64_t total = 0;

	if (!s || !*s)
		return -EINVAL;
	while (*p) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		int64_t v = 0;
		bool range = false;
		while (*p >= '0' && *p <= '9') {
			if (__builtin_mul_overflow(v, 10, &v) ||
			    __builtin_add_overflow(v, *p - '0', &v))
				range = true;
			p++;
		}
		size_t i;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t n = strlen(units[i].name);
			if (strncmp(p, units[i].name, n) == 0)
				break;
		}
		if (i == sizeof(units) / sizeof(units[0]))
			return -EINVAL;
		p += strlen(units[i].name);
		if (range || __builtin_mul_overflow(v, units[i].mul, &v) ||
		    __builtin_add_overflow(total, v, &total)) {
			/* keep scanning for syntax errors: malformed wins over overflow */
			for (; *p; p++)
				if (!strchr("0123456789nsumhd", *p))
					return -EINVAL;
			return -ERANGE;
		}
	}
	*ns = total;
	return 0;
}

int sl_time_parse_point(const char *s, int64_t now_ns, int64_t *ns)
{
	if (!s || !*s)
		return -EINVAL;
	if (strspn(s, "0123456789") == strlen(s)) {
		int64_t v = 0;
		for (const char *p = s; *p; p++)
			if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *p - '0', &v))
				return -ERANGE;
		*ns = v;
		return 0;
	}
	int64_t d;
	int rc = sl_time_parse_duration(s, &d);
	if (rc == 0) {
		if (__builtin_sub_overflow(now_ns, d, ns))
			return -ERANGE;
		return 0;
	}
	if (rc == -ERANGE)
		return rc;
	return sl_time_parse_rfc3339(s, ns);
}

int64_t sl_time_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}
