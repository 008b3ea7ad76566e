#include "common/json.h"

#include <stdlib.h>

/* A JSON string of bytes s[0..n): as is when valid UTF-8, else with every
 * byte >= 0x80 replaced by U+FFFD. */
json_t *sl_json_str_lossy(const char *s, size_t n)
{
	json_t *j = json_stringn(s, n);
	if (j)
		return j;
	char *buf = malloc(n * 3 + 1);
	size_t o = 0;
	if (!buf)
		return json_string("");
	for (size_t k = 0; k < n; k++) {
		unsigned char c = (unsigned char)s[k];
		if (c < 0x80 && c != 0) {
			buf[o++] = (char)c;
		} else {
			buf[o++] = (char)0xEF;
			buf[o++] = (char)0xBF;
			buf[o++] = (char)0xBD;
		}
	}
	j = json_stringn(buf, o);
	free(buf);
	return j ? j : json_string("");
}

