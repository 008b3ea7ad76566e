/* Argv redaction (see proc_redact.h). */
#include "modules/proc_redact.h"
#include "common/json.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MASK "***"

enum form { F_VALUE, F_GLUED, F_FLAG };

static enum form form_of(const char *p, size_t pl)
{
	if (p[pl - 1] == '=' || p[pl - 1] == ':')
		return F_VALUE;
	if (p[pl - 1] == '*')
		return F_GLUED;
	return F_FLAG;
}

static int alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Offset in a[0..n) just past the first match of value pattern p, or 0.
 * The first byte is compared inline before strncasecmp (every delivered
 * exec runs this for every argument and pattern: the call per position was
 * the agent's largest cost per exec). */
static size_t value_match(const char *a, size_t n, const char *p, size_t pl)
{
	char c0 = lower(p[0]);

	for (size_t i = 0; i + pl <= n; i++)
		if (lower(a[i]) == c0 && (i == 0 || !alnum(a[i - 1])) && !strncasecmp(a + i, p, pl))
			return i + pl;
	return 0;
}

/* Where the mask starts in argument a[0..n) (n = keep the whole argument),
 * and whether a flag pattern asks to mask the next one. */
static size_t arg_mask_at(const char *a, size_t n, const char (*pat)[64], unsigned npat, int *flag)
{
	size_t at = n;

	*flag = 0;
	for (unsigned k = 0; k < npat; k++) {
		const char *p = pat[k];
		size_t pl = strnlen(p, 64), m;
		if (!pl || pl >= 64)
			continue;
		switch (form_of(p, pl)) {
		case F_VALUE:
			m = value_match(a, n, p, pl);
			if (m && m < at)
				at = m;
			break;
		case F_GLUED:
			if (pl > 1 && n > pl - 1 && !memcmp(a, p, pl - 1) && pl - 1 < at)
				at = pl - 1;
			break;
		case F_FLAG:
			if (n == pl && !strncasecmp(a, p, pl))
				*flag = 1;
			break;
		}
	}
	return at;
}

json_t *sl_proc_argv_json_redact(const char *argv, size_t len, const char (*pat)[64], unsigned npat,
				 int *redacted)
{
	json_t *arr = json_array();
	int mask_next = 0, any = 0;
	size_t i = 0;

	if (!arr)
		return NULL;
	while (i < len) {
		const char *a = argv + i;
		size_t n = strnlen(a, len - i), at = n;
		int flag = 0;
		json_t *s;

		if (npat)
			at = arg_mask_at(a, n, pat, npat, &flag);
		if (mask_next) {
			s = json_string(MASK);
			any = 1;
		} else if (at < n) {
			char *buf = malloc(at + sizeof(MASK));
			if (!buf) {
				json_decref(arr);
				return NULL;
			}
			memcpy(buf, a, at);
			memcpy(buf + at, MASK, sizeof(MASK));
			s = sl_json_str_lossy(buf, at + sizeof(MASK) - 1);
			free(buf);
			any = 1;
		} else {
			s = sl_json_str_lossy(a, n);
		}
		if (!s || json_array_append_new(arr, s)) {
			json_decref(arr);
			return NULL;
		}
		mask_next = flag;
		i += n + 1;
	}
	if (redacted)
		*redacted = any;
	return arr;
}

int sl_redact_pattern_check(const char *p, const char **why)
{
	size_t pl = strlen(p);

	if (!pl) {
		*why = "empty pattern";
		return -1;
	}
	if (pl == 1 && strchr("=:*", p[0])) {
		*why = "a pattern needs a name before '=', ':' or '*'";
		return -1;
	}
	for (size_t i = 0; i < pl; i++)
		if ((unsigned char)p[i] < 0x21 || (unsigned char)p[i] > 0x7e) {
			*why = "only printable ASCII without spaces is allowed";
			return -1;
		}
	return 0;
}
