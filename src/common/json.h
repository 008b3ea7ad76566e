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

#endif
