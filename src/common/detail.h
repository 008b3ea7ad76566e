/* DETAILS templates (module contract: struct sl_event_kind.details): how
 * the CLI's DETAILS column shows one event of a kind. Shared by the agent
 * (which checks every declared template at start) and the CLI (which gets
 * the templates from GET /api/v1/schema/events and renders events with them).
 *
 * Syntax:
 *   text          printed as is ("{{" and "}}" print a brace)
 *   {field}       the event's field (a JSON scalar: strings as they are,
 *                 integers, reals, true/false; an array or object as compact
 *                 JSON); {a.b} reads field b of object field a; an absent
 *                 or null field prints "-"
 *   {?field}...{/} the part between is printed only when field is truthy:
 *                 present and not 0, false, "", null or an empty array
 *   {!field}...{/} only when field is not truthy (the else of {?field})
 *   {+field}...{/} only when field is present and not null (0 included)
 *                 Conditions nest up to SL_DETAIL_MAX_DEPTH deep.
 *   {field:dur}   an integer of nanoseconds as the CLI shows durations:
 *                 whole microseconds below 1 ms ("250us"), then "4.6ms",
 *                 "1.50s", "2.5m", "1.2h" (negative as "0us")
 *   {field:bytes} an integer of bytes as "64.0MiB"
 *   {field:sig}   a signal number as its name: "SIGSEGV", "SIG42" unnamed
 *   {field:id}    the first SL_DETAIL_ID_LEN characters of a string (a
 *                 container id as the CONTAINER column shows it)
 *   {field:join}  an array's elements separated by single spaces (argv)
 *   A value of another type than its format expects prints as {field}.
 * Field names: [A-Za-z0-9_.]+, at most 64 bytes.
 *
 * Rendered text is for a terminal: control characters (C0, DEL, C1), bidi
 * overrides, line separators, invisible characters (U+200B..U+200D, U+2060,
 * U+FEFF, U+00AD, tags U+E0000..U+E007F) and invalid UTF-8 in values AND in
 * the template's own text are
 * escaped as \xNN or \u{XXXX}, a backslash as "\\" so an escaped byte cannot
 * be forged.
 */
#ifndef SANDLENS_COMMON_DETAIL_H
#define SANDLENS_COMMON_DETAIL_H

#include <jansson.h>
#include <stddef.h>

struct sl_detail;

/* Deepest nesting of {?}/{!}/{+} conditions. */
#define SL_DETAIL_MAX_DEPTH 4
/* Characters {field:id} keeps. */
#define SL_DETAIL_ID_LEN 12

/* Parse tmpl. Returns 0 and *out (free with sl_detail_free), or -1 with the
 * reason and the byte offset in err ("offset 12: unterminated '{'"). */
int sl_detail_parse(const char *tmpl, struct sl_detail **out, char *err, size_t errlen);
void sl_detail_free(struct sl_detail *d);

/* Number of field references in d, and the i-th one's name (the whole
 * dotted path, e.g. "actor.pid"). */
size_t sl_detail_nrefs(const struct sl_detail *d);
const char *sl_detail_ref(const struct sl_detail *d, size_t i);

/* Parse tmpl and check that the first component of every reference is one
 * of names[0..n) (the kind's declared fields plus the common ones).
 * Returns 0, or -1 with "<reason>" in err (parse error, or "unknown field
 * 'x'"). */
int sl_detail_check(const char *tmpl, const char *const *names, size_t n, char *err, size_t errlen);

/* Render d for event ev (a JSON object) into buf (always NUL-terminated
 * when len > 0). Returns the length the whole text needs (like snprintf),
 * so a return >= len means it was cut. */
size_t sl_detail_render(const struct sl_detail *d, const json_t *ev, char *buf, size_t len);

/* Escape s (n bytes) for a terminal as described above, into buf (NUL-
 * terminated when len > 0); returns the length the whole text needs. */
size_t sl_term_escape(const char *s, size_t n, char *buf, size_t len);

#endif
