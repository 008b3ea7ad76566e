#include "common/json.h"

#include <stdlib.h>
#include <string.h>

size_t sl_utf8_seq(const unsigned char *s, size_t n, size_t *bad)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */
	*bad = 1;
	if (c && c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	for (size_t i = 1; i < len; i++) {
		if (i >= n || s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xbf)) {
			*bad = i;
			return 0;
		}
	}
	return len;
}

/* A JSON string of bytes s[0..n): as is when valid UTF-8, else with each
 * invalid sequence (and NUL) replaced by U+FFFD; valid sequences are kept. */
json_t *sl_json_str_lossy(const char *s, size_t n)
{
	json_t *j = json_stringn(s, n);
	if (j)
		return j;
	char *buf = malloc(n * 3 + 1);
	size_t o = 0;
	if (!buf)
		return json_string("");
	const unsigned char *u = (const unsigned char *)s;
	for (size_t k = 0; k < n;) {
		size_t bad, l = sl_utf8_seq(u + k, n - k, &bad);
		if (l) {
			memcpy(buf + o, s + k, l);
			o += l;
			k += l;
		} else {
			buf[o++] = (char)0xEF;
			buf[o++] = (char)0xBF;
			buf[o++] = (char)0xBD;
			k += bad;
		}
	}
	j = json_stringn(buf, o);
	free(buf);
	return j ? j : json_string("");
}

json_t *sl_json_strz(const char *s)
{
	return s ? sl_json_str_lossy(s, strlen(s)) : json_null();
}

char *sl_utf8_dup(const char *s)
{
	json_t *j = sl_json_str_lossy(s, strlen(s));
	char *c = j ? strdup(json_string_value(j)) : NULL;
	json_decref(j);
	return c;
}
