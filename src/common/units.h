/* Durations and byte sizes written by people: the configuration file's
 * values (src/agent/config.c) and the CLI's options (--duration). Pure
 * functions, any thread.
 *
 * The text is "<digits><unit>" with no sign, no space and no fraction; the
 * unit is matched exactly (case-sensitive). A result that does not fit in
 * a uint64_t is an error. On error *out is left unchanged.
 */
#ifndef SANDLENS_COMMON_UNITS_H
#define SANDLENS_COMMON_UNITS_H

#include <stdint.h>

/* Seconds: "90s", "5m", "2h", "7d"; a plain number is seconds. Returns 0,
 * or -1 when s is NULL, empty, malformed or too large. */
int sl_parse_duration_s(const char *s, uint64_t *out);

/* Nanoseconds: "150ns", "500us", "1ms", "2s", "1m", "1h", "7d"; a plain number
 * is ns. Returns 0 or -1 (as above). */
int sl_parse_duration_ns(const char *s, uint64_t *out);

/* Bytes: "4MiB", "512KiB", "1GiB" (also "K", "M", "G" = KiB, MiB, GiB),
 * "100B", a plain number of bytes. Returns 0 or -1 (as above). */
int sl_parse_bytes(const char *s, uint64_t *out);

#endif
