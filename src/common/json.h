/* Small jansson helpers. */
#ifndef SANDLENS_COMMON_JSON_H
#define SANDLENS_COMMON_JSON_H

#include <jansson.h>
#include <stddef.h>

/* New JSON string of the bytes s[0..n): as is when they are valid UTF-8,
 * else every byte >= 0x80 (and NUL) is replaced by U+FFFD, so kernel
 * strings (comm, argv, paths) always serialise. Never returns NULL. */
json_t *sl_json_str_lossy(const char *s, size_t n);

#endif
