/* Server-Sent Events framing of stored events as CloudEvents 1.0 (JSON
 * event format, structured mode) for GET /api/v1/events/watch (docs/API.md
 * "GET /api/v1/events/watch"). Pure functions: no I/O, any thread. */
#ifndef SANDLENS_API_SSE_H
#define SANDLENS_API_SSE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Prefix of every CloudEvents `type`: "io.sandlens.event.<kind>". */
#define SL_SSE_TYPE_PREFIX "io.sandlens.event."

/* The CloudEvent of one stored event ev (an object as /api/v1/events
 * returns it: "id" integer row id, "type", "time", "container_id", ...):
 * {"specversion":"1.0","id":"<row id>","source":source,
 *  "type":"io.sandlens.event.<type>","time":ev.time,
 *  "datacontenttype":"application/json",
 *  "subject":ev.container_id, or "host" when it has none,
 *  "data":ev}. New reference; NULL when ev has no integer id, no string
 * type, or out of memory. ev is referenced, not copied. */
json_t *sl_sse_cloudevent(json_t *ev, const char *source);

/* One SSE event: "id: <row id>\ndata: <CloudEvent, compact JSON>\n\n"
 * (compact JSON has no raw newline, so it is one data line). malloc'd,
 * NUL-terminated, *len its length; NULL as sl_sse_cloudevent. */
char *sl_sse_frame(json_t *ev, const char *source, size_t *len);

/* A CloudEvents source for this host: "/sandlens/<host>" with host's
 * bytes outside [A-Za-z0-9._-] as '_' (a URI-reference). */
void sl_sse_source(const char *host, char *out, size_t size);

/* The resume cursor of a Last-Event-ID header value: decimal 0..INT64_MAX,
 * surrounding spaces allowed. 0 and *id, or -1 when it is not that. */
int sl_sse_parse_last_id(const char *v, int64_t *id);

#endif
