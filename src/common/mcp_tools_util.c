/* Helpers of the tools: text output, REST API requests, argument reading,
 * view entries of a container, the event-kind schema. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mcp_tools.h"

static void vappend(struct tool_out *o, const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	if (o->len + (size_t)n + 1 > o->cap) {
		size_t cap = (o->cap ? o->cap * 2 : 1024) + (size_t)n;
		char *t = realloc(o->text, cap);
		if (!t)
			return;
		o->text = t;
		o->cap = cap;
	}
	vsnprintf(o->text + o->len, o->cap - o->len, fmt, ap);
	o->len += (size_t)n;
}

void tool_printf(struct tool_out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vappend(o, fmt, ap);
	va_end(ap);
}

void tool_fail(struct tool_out *o, const char *fmt, ...)
{
	va_list ap;
	o->len = 0;
	if (o->text)
		o->text[0] = 0;
	va_start(ap, fmt);
	vappend(o, fmt, ap);
	va_end(ap);
	o->is_error = 1;
}

static int api_call(const struct sl_mcp_backend *be, const char *method, const char *path, const char *body,
		    json_t **out, long *status, char *err, size_t errlen, struct tool_out *o)
{
	char *resp = NULL;
	*out = NULL;
	*status = 0;
	if (be->request(be->ctx, method, path, body, status, &resp, err, errlen)) {
		free(resp);
		*status = 0;
		return -1;
	}
	json_t *j = resp ? json_loads(resp, 0, NULL) : NULL;
	free(resp);
	if (*status >= 200 && *status < 300 && j) {
		*out = j;
		return 0;
	}
	const char *m = json_string_value(json_object_get(json_object_get(j, "error"), "message"));
	if (m)
		snprintf(err, errlen, "%s %s: HTTP %ld: %s", method, path, *status, m);
	else
		snprintf(err, errlen, "%s %s: HTTP %ld%s", method, path, *status, j ? "" : " (no JSON body)");
	if (*status == 403 && o) {
		o->forbidden = 1;
		snprintf(o->errmsg, sizeof(o->errmsg), "%s", m ? m : "the API answered 403");
	}
	json_decref(j);
	return -1;
}

int api_get(const struct sl_mcp_backend *be, const char *path, json_t **out, long *status, char *err,
	    size_t errlen, struct tool_out *o)
{
	return api_call(be, "GET", path, NULL, out, status, err, errlen, o);
}

int api_post(const struct sl_mcp_backend *be, const char *path, const char *body, json_t **out, long *status,
	     char *err, size_t errlen, struct tool_out *o)
{
	return api_call(be, "POST", path, body, out, status, err, errlen, o);
}

int query_add(char *buf, size_t size, const char *k, const char *v)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(buf);
	int w = snprintf(buf + n, size - n, "%c%s=", strchr(buf, '?') ? '&' : '?', k);
	if (w < 0 || (size_t)w >= size - n)
		return -1;
	n += (size_t)w;
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		int plain = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
			    strchr("-._~:", *p);
		if (n + (plain ? 1 : 3) >= size)
			return -1;
		if (plain) {
			buf[n++] = (char)*p;
		} else {
			buf[n++] = '%';
			buf[n++] = hex[*p >> 4];
			buf[n++] = hex[*p & 15];
		}
	}
	buf[n] = 0;
	return 0;
}

const char *arg_str(json_t *args, const char *k, const char *dflt)
{
	const char *s = json_string_value(json_object_get(args, k));
	return s ? s : dflt;
}

long long arg_int(json_t *args, const char *k, long long dflt)
{
	json_t *v = json_object_get(args, k);
	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

static int id_matches(const char *cid, const char *id)
{
	size_t n = strlen(id);
	return cid && n && (!strcmp(cid, id) || (n >= 4 && !strncmp(cid, id, n)));
}

static void collect(json_t *v, const char *id, json_t *out, int depth)
{
	size_t i;
	const char *k;
	json_t *e;
	if (depth > 2)
		return;
	if (json_is_array(v)) {
		json_array_foreach(v, i, e)
		{
			if (json_is_object(e) && id_matches(json_string_value(json_object_get(e, "container_id")), id))
				json_array_append(out, e);
			else
				collect(e, id, out, depth + 1);
		}
	} else if (json_is_object(v)) {
		json_object_foreach(v, k, e) collect(e, id, out, depth + 1);
	}
}

json_t *view_entries_of(json_t *body, const char *id)
{
	json_t *out = json_array();
	if (out)
		collect(body, id, out, 0);
	return out;
}

json_t *kinds_get(const struct sl_mcp_backend *be, char *err, size_t errlen, struct tool_out *o)
{
	json_t *j;
	long st;
	if (api_get(be, "/api/v1/schema/events", &j, &st, err, errlen, o))
		return NULL;
	json_t *k = json_incref(json_object_get(j, "kinds"));
	json_decref(j);
	if (!json_is_array(k)) {
		json_decref(k);
		snprintf(err, errlen, "GET /api/v1/schema/events: no \"kinds\" array");
		return NULL;
	}
	return k;
}

int severity_rank(const char *s)
{
	static const char *const names[] = {"debug", "info", "notice", "warning", "error", "critical"};
	for (int i = 0; s && i < 6; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}
