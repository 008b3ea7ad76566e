#include "common/json.h"

#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (n > 0 bytes left), or 0 when
 * there is none (a stray continuation byte, overlong form, surrogate,
 * > U+10FFFF, cut short, NUL); *bad is then how many bytes the invalid
 * sequence spans: its lead and the continuation bytes that could still have
 * belonged to it (the "maximal subpart", one U+FFFD each). */
static size_t utf8_valid(const unsigned char *s, size_t n, size_t *bad)
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
		size_t bad, l = utf8_valid(u + k, n - k, &bad);
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
