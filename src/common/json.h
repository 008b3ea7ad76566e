/* Small jansson helpers. */
#ifndef SANDLENS_COMMON_JSON_H
#define SANDLENS_COMMON_JSON_H

#include <jansson.h>
#include <stddef.h>

/* New JSON string of the bytes s[0..n): as is when they are valid UTF-8,
 * else each invalid sequence (and NUL) is replaced by one U+FFFD (one per
 * maximal subpart: a stray byte, or a lead byte with the continuation bytes
 * that could still have completed it) and every valid sequence is kept, so
 * kernel strings (comm, argv, paths) always serialise and lose only what was
 * not UTF-8. Never returns NULL. */
json_t *sl_json_str_lossy(const char *s, size_t n);

/* sl_json_str_lossy() of the NUL-terminated s; NULL s -> JSON null. For
 * every name from the outside world (comm, symbol/module names, paths,
 * argv, cgroup paths): jansson's json_string() returns NULL on invalid
 * UTF-8, which callers took for ENOMEM or silently dropped the entry.
 * Control characters stay (JSON writes them as \uXXXX escapes). Returns
 * NULL only when out of memory. Use json_pack "s:o" with it. */
json_t *sl_json_strz(const char *s);

/* Valid UTF-8 copy of the NUL-terminated s for use as an object key (keys
 * must be UTF-8 too: json_object_set() refuses others): each invalid
 * sequence -> U+FFFD as above. Caller frees; NULL when out of memory. */
char *sl_utf8_dup(const char *s);

/* Length of the valid UTF-8 sequence at s (n > 0 bytes left; RFC 3629), or
 * 0 when there is none (a stray continuation byte, overlong form, surrogate,
 * > U+10FFFF, cut short, NUL); *bad is then how many bytes the invalid
 * sequence spans: its lead and the continuation bytes that could still have
 * belonged to it (the "maximal subpart", Unicode 15 ch. 3.9 U+FFFD
 * substitution: one U+FFFD each). *bad is always set (1 on success). */
size_t sl_utf8_seq(const unsigned char *s, size_t n, size_t *bad);

#endif
