/* Duration and byte-size parsers (src/common/units.h). */
#include "common/units.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* "<digits><suffix>" with suffix from a table of (suffix, multiplier). */
struct unit {
	const char *sfx;
	uint64_t mul;
};

static int parse_scaled(const char *s, const struct unit *u, size_t n, uint64_t *out)
{
	char *rest;
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &rest, 10);
	if (errno)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(rest, u[i].sfx)) {
			if (v > UINT64_MAX / u[i].mul)
				return -1;
			*out = (uint64_t)v * u[i].mul;
			return 0;
		}
	}
	return -1;
}

#define NUNITS(a) (sizeof(a) / sizeof((a)[0]))

int sl_parse_duration_s(const char *s, uint64_t *out)
{
	static const struct unit u[] = {{"", 1}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}};
	return parse_scaled(s, u, NUNITS(u), out);
}

int sl_parse_duration_ns(const char *s, uint64_t *out)
{
	static const struct unit u[] = {{"", 1},	       {"ns", 1},	     {"us", 1000},
					{"ms", 1000000},      {"s", 1000000000ull}, {"m", 60000000000ull},
					{"h", 3600000000000ull}, {"d", 86400000000000ull}};
	return parse_scaled(s, u, NUNITS(u), out);
}

int sl_parse_bytes(const char *s, uint64_t *out)
{
	static const struct unit u[] = {{"", 1},	      {"B", 1},		    {"KiB", 1ull << 10},
					{"MiB", 1ull << 20}, {"GiB", 1ull << 30}, {"K", 1ull << 10},
					{"M", 1ull << 20},   {"G", 1ull << 30}};
	return parse_scaled(s, u, NUNITS(u), out);
}
