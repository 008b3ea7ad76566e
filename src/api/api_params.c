/* Query parameter parsing for the API (pure functions). */
#include "api/api.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/timefmt.h"

#define SL_API_LIMIT_MAX 10000

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int sl_api_no_params(const struct sl_api_param *p, size_t n, char *err, size_t errlen)
{
	if (n == 0)
		return 0;
	return fail(err, errlen, "unknown parameter '%s'", p[0].key);
}

/* name as printable text for a message: NUL and other control bytes as
 * %XX, cut at the buffer's size. */
static void show_bytes(char *out, size_t outlen, const char *b, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; i < len && o + 4 < outlen; i++) {
		unsigned char ch = (unsigned char)b[i];
		if (ch < 0x20 || ch >= 0x7f || ch == '%')
			o += (size_t)snprintf(out + o, outlen - o, "%%%02X", ch);
		else
			out[o++] = (char)ch;
	}
	if (outlen)
		out[o < outlen ? o : outlen - 1] = '\0';
}

/* Valid UTF-8 (jansson's own validator: what a JSON body could hold). */
static bool utf8_ok(const char *s, size_t n)
{
	json_t *j = json_stringn(s, n);
	json_decref(j);
	return j != NULL;
}

int sl_api_params_add(struct sl_api_params *ps, const char *key, size_t key_size,
		      const char *value, size_t value_size)
{
	if (!key) {
		key = "";
		key_size = 0;
	}
	int bad = memchr(key, 0, key_size) ? 1 : value && memchr(value, 0, value_size) ? 2 : 0;
	if (bad) {
		ps->nul = bad;
		show_bytes(ps->nul_name, sizeof(ps->nul_name), key, key_size);
		return -EINVAL;
	}
	bad = !utf8_ok(key, key_size) ? 1 : value && !utf8_ok(value, value_size) ? 2 : 0;
	if (bad) {
		ps->bad_utf8 = bad;
		show_bytes(ps->nul_name, sizeof(ps->nul_name), key, key_size);
		return -EINVAL;
	}
	if (ps->n == SL_API_MAX_PARAMS) {
		ps->overflow = 1;
		return -EINVAL;
	}
	ps->p[ps->n].key = key;
	ps->p[ps->n].value = value;
	ps->n++;
	return 0;
}

int sl_api_params_check(const struct sl_api_params *ps, char *err, size_t errlen)
{
	if (ps->nul == 1)
		return fail(err, errlen, "parameter '%s': name contains a NUL byte (%%00)",
			    ps->nul_name);
	if (ps->nul)
		return fail(err, errlen, "%s: value contains a NUL byte (%%00)", ps->nul_name);
	if (ps->bad_utf8 == 1)
		return fail(err, errlen, "parameter '%s': name is not valid UTF-8", ps->nul_name);
	if (ps->bad_utf8)
		return fail(err, errlen, "%s: value is not valid UTF-8", ps->nul_name);
	if (ps->overflow)
		return fail(err, errlen, "more than %d query parameters", SL_API_MAX_PARAMS);
	return 0;
}

int sl_api_params_only(const struct sl_api_param *p, size_t n, const char *const *names,
		       size_t nnames, const char **vals, char *err, size_t errlen)
{
	for (size_t j = 0; j < nnames; j++)
		vals[j] = NULL;
	for (size_t i = 0; i < n; i++) {
		size_t j;
		for (j = 0; j < nnames; j++)
			if (!strcmp(p[i].key, names[j]))
				break;
		if (j == nnames)
			return fail(err, errlen, "unknown parameter '%s'", p[i].key);
		if (vals[j])
			return fail(err, errlen, "%s: given more than once", p[i].key);
		if (!p[i].value || !*p[i].value)
			return fail(err, errlen, "%s: empty value", p[i].key);
		vals[j] = p[i].value;
	}
	return 0;
}

/* Container ids and pod UIDs: short ASCII tokens, no wildcards or quotes. */
static bool token_ok(const char *v, size_t maxlen)
{
	size_t n = strlen(v);
	if (n == 0 || n > maxlen)
		return false;
	for (const char *c = v; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.'))
			return false;
	return true;
}

/* Decimal integer without sign or junk, in [lo, hi]. */
static bool uint_ok(const char *v, int64_t lo, int64_t hi, int64_t *out)
{
	int64_t x = 0;
	if (!*v)
		return false;
	for (const char *c = v; *c; c++) {
		if (*c < '0' || *c > '9')
			return false;
		if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, *c - '0', &x))
			return false;
	}
	if (x < lo || x > hi)
		return false;
	*out = x;
	return true;
}

static int parse_time(const char *key, const char *v, int64_t now_ns, int64_t *out, char *err,
		      size_t errlen)
{
	int rc = sl_time_parse_point(v, now_ns, out);
	if (rc == -ERANGE)
		return fail(err, errlen, "%s: '%s' is out of range", key, v);
	if (rc)
		return fail(err, errlen,
			    "%s: '%s' is not an RFC 3339 time, a duration like 5m, or ns since the epoch",
			    key, v);
	if (*out <= 0)
		return fail(err, errlen, "%s: '%s' is not after the epoch", key, v);
	return 0;
}

int sl_api_parse_event_params(const struct sl_api_param *p, size_t n, int64_t now_ns,
			      const char *const *types, size_t ntypes, struct sl_event_filter *f, char *err,
			      size_t errlen)
{
	static const char *const known[] = {"type", "container", "pod",      "since",
					    "until", "limit",    "after_id", "order"};
	enum { K_TYPE, K_CONTAINER, K_POD, K_SINCE, K_UNTIL, K_LIMIT, K_AFTER, K_ORDER, K_N };
	bool seen[K_N] = {false};

	memset(f, 0, sizeof(*f));
	f->limit = 100;
	for (size_t i = 0; i < n; i++) {
		const char *k = p[i].key, *v = p[i].value;
		int ki;
		for (ki = 0; ki < K_N; ki++)
			if (strcmp(k, known[ki]) == 0)
				break;
		if (ki == K_N)
			return fail(err, errlen, "unknown parameter '%s'", k);
		if (seen[ki])
			return fail(err, errlen, "%s: given more than once", k);
		seen[ki] = true;
		if (!v || !*v)
			return fail(err, errlen, "%s: empty value", k);

		int64_t x;
		switch (ki) {
		case K_TYPE: {
			int known = 0;
			char want[512];
			size_t wl = 0;
			want[0] = 0;
			/* whole names only, as many as the caller's message holds;
			 * the rest said to be in the schema route */
			size_t room = errlen > strlen(k) + strlen(v) + 100 ? errlen - strlen(k) - strlen(v) - 100 : 0;
			int cut = 0;
			if (room > sizeof(want))
				room = sizeof(want);
			for (size_t t = 0; t < ntypes; t++) {
				known |= !strcmp(v, types[t]);
				if (!cut && wl + strlen(types[t]) + 2 < room)
					wl += (size_t)snprintf(want + wl, sizeof(want) - wl, "%s%s", t ? "|" : "",
							       types[t]);
				else
					cut = 1;
			}
			if (!known)
				return fail(err, errlen, "%s: unknown event type '%.64s' (want %s%s)", k, v, want,
					    cut ? "|...; GET /api/v1/schema/events lists all" : "");
			f->type = v;
			break;
		}
		case K_CONTAINER:
			if (!token_ok(v, 79))
				return fail(err, errlen,
					    "%s: '%s' is not a container id (1-79 of [A-Za-z0-9._-])",
					    k, v);
			f->container_id = v;
			break;
		case K_POD:
			if (!token_ok(v, 39))
				return fail(err, errlen,
					    "%s: '%s' is not a pod UID (1-39 of [A-Za-z0-9._-])", k,
					    v);
			f->pod_uid = v;
			break;
		case K_SINCE:
			if (parse_time(k, v, now_ns, &f->since_ns, err, errlen))
				return -EINVAL;
			break;
		case K_UNTIL:
			if (parse_time(k, v, now_ns, &f->until_ns, err, errlen))
				return -EINVAL;
			break;
		case K_LIMIT:
			if (!uint_ok(v, 1, SL_API_LIMIT_MAX, &x))
				return fail(err, errlen, "%s: '%s' is not an integer in 1..10000", k,
					    v);
			f->limit = (uint32_t)x;
			break;
		case K_AFTER:
			if (!uint_ok(v, 0, INT64_MAX, &x))
				return fail(err, errlen, "%s: '%s' is not an integer >= 0", k, v);
			f->after_id = x;
			break;
		case K_ORDER:
			if (strcmp(v, "asc") == 0)
				f->ascending = 1;
			else if (strcmp(v, "desc") == 0)
				f->ascending = 0;
			else
				return fail(err, errlen, "%s: '%s' is not asc or desc", k, v);
			break;
		}
	}
	if (f->since_ns && f->until_ns && f->until_ns < f->since_ns)
		return fail(err, errlen, "until: before since");
	return 0;
}
