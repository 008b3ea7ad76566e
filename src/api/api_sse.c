/* SSE / CloudEvents framing (api_sse.h). */
#include "api/api_sse.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *sl_sse_cloudevent(json_t *ev, const char *source)
{
	json_t *id = json_object_get(ev, "id");
	const char *type = json_string_value(json_object_get(ev, "type"));
	if (!json_is_integer(id) || !type || !source)
		return NULL;
	char sid[24], ctype[96];
	snprintf(sid, sizeof(sid), "%" PRId64, (int64_t)json_integer_value(id));
	snprintf(ctype, sizeof(ctype), SL_SSE_TYPE_PREFIX "%s", type);
	const char *cid = json_string_value(json_object_get(ev, "container_id"));
	json_t *ce = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:O}", "specversion", "1.0", "id", sid,
			       "source", source, "type", ctype, "datacontenttype", "application/json",
			       "subject", cid && *cid ? cid : "host", "data", ev);
	const char *t = json_string_value(json_object_get(ev, "time"));
	if (ce && t && json_object_set_new(ce, "time", json_string(t))) {
		json_decref(ce);
		return NULL;
	}
	return ce;
}

char *sl_sse_frame(json_t *ev, const char *source, size_t *len)
{
	json_t *ce = sl_sse_cloudevent(ev, source);
	if (!ce)
		return NULL;
	char *js = json_dumps(ce, JSON_COMPACT);
	const char *sid = json_string_value(json_object_get(ce, "id"));
	char *out = NULL;
	if (js && sid) {
		size_t n = strlen("id: ") + strlen(sid) + strlen("\ndata: ") + strlen(js) + 3;
		out = malloc(n);
		if (out) {
			int w = snprintf(out, n, "id: %s\ndata: %s\n\n", sid, js);
			if (len)
				*len = (size_t)w;
		}
	}
	free(js);
	json_decref(ce);
	return out;
}

void sl_sse_source(const char *host, char *out, size_t size)
{
	size_t o = (size_t)snprintf(out, size, "/sandlens/");
	for (const char *p = host && *host ? host : "localhost"; *p && o + 1 < size; p++) {
		char c = *p;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			 c == '.' || c == '_' || c == '-';
		out[o++] = ok ? c : '_';
	}
	if (o < size)
		out[o] = 0;
}

int sl_sse_parse_last_id(const char *v, int64_t *id)
{
	if (!v)
		return -1;
	while (*v == ' ' || *v == '\t')
		v++;
	int64_t x = 0;
	const char *p = v;
	for (; *p >= '0' && *p <= '9'; p++)
		if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, *p - '0', &x))
			return -1;
	if (p == v)
		return -1;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p)
		return -1;
	*id = x;
	return 0;
}
