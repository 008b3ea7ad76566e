/* Response bodies for the API: errors, size-bounded lists, cut text. */
#include "api/api.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *sl_api_error_body(const char *code, const char *msg, size_t *len)
{
	char safe[1024];
	json_t *m = json_string(msg ? msg : "");
	if (!m) { /* not UTF-8 (or out of memory): bytes >= 0x80 as \xNN */
		size_t o = 0;
		for (const unsigned char *p = (const unsigned char *)msg; p && *p && o + 5 < sizeof(safe); p++)
			o += *p < 0x80 ? (safe[o] = (char)*p, 1)
				       : (size_t)snprintf(safe + o, sizeof(safe) - o, "\\x%02X", *p);
		safe[o] = 0;
		m = json_string(safe);
		if (!m)
			return NULL;
	}
	json_t *o = json_pack("{s:{s:s,s:o}}", "error", "code", code, "message", m);
	if (!o)
		return NULL;
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (s && len)
		*len = strlen(s);
	return s;
}

struct buf {
	char *p;
	size_t len, cap;
	int oom;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (b->len + n + 1 > cap)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void puts_(struct buf *b, const char *s) { put(b, s, strlen(s)); }

/* Longest tail: `],"next_after_id":-9223372036854775808,"truncated":true}` */
#define TAIL_RESERVE 64

char *sl_api_list_body(const char *key, json_t *items, size_t max, int64_t *cursor, size_t *count,
		       size_t *len)
{
	struct buf b = {0};
	size_t n = 0, total = json_is_array(items) ? json_array_size(items) : 0;
	int64_t next = cursor ? *cursor : 0;
	int truncated = 0;

	puts_(&b, "{");
	json_t *ks = json_string(key);
	char *k = ks ? json_dumps(ks, JSON_ENCODE_ANY) : NULL; /* quoted, escaped */
	json_decref(ks);
	if (!k) {
		free(b.p);
		return NULL;
	}
	puts_(&b, k);
	free(k);
	puts_(&b, ":[");
	for (size_t i = 0; i < total; i++) {
		json_t *it = json_array_get(items, i);
		char *s = json_dumps(it, JSON_COMPACT | JSON_ENCODE_ANY);
		if (!s) {
			b.oom = 1;
			break;
		}
		size_t sl = strlen(s);
		if (b.len + (n ? 1 : 0) + sl + TAIL_RESERVE > max) {
			free(s);
			truncated = 1;
			break;
		}
		if (n)
			puts_(&b, ",");
		put(&b, s, sl);
		free(s);
		n++;
		json_t *id = json_is_object(it) ? json_object_get(it, "id") : NULL;
		if (json_is_integer(id) && json_integer_value(id) > next)
			next = json_integer_value(id);
	}
	puts_(&b, "]");
	if (cursor) {
		char tmp[48];
		snprintf(tmp, sizeof(tmp), ",\"next_after_id\":%" PRId64, next);
		puts_(&b, tmp);
		*cursor = next;
	}
	if (truncated)
		puts_(&b, ",\"truncated\":true");
	puts_(&b, "}");
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	if (count)
		*count = n;
	if (len)
		*len = b.len;
	return b.p;
}

size_t sl_api_truncate_text(char *buf, size_t len, size_t max)
{
	static const char marker[] = "# ...[truncated]\n";
	if (len <= max)
		return len;
	size_t keep = max - (sizeof(marker) - 1);
	/* end on a complete line */
	while (keep > 0 && buf[keep - 1] != '\n')
		keep--;
	memcpy(buf + keep, marker, sizeof(marker) - 1);
	return keep + sizeof(marker) - 1;
}
