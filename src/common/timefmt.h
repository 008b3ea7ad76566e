/* Wall-clock time as text: RFC 3339 with nanoseconds in UTC, and relative
 * durations ("90s", "5m", "2h", "7d", "1h30m") for the API's since/until
 * parameters and the CLI.
 *
 * All times are int64 ns since the Unix epoch (CLOCK_REALTIME), which spans
 * 1677-09-21 .. 2262-04-11. Conversions are pure arithmetic on the proleptic
 * Gregorian calendar (no time zone database, no libc state): safe from any
 * thread. Leap seconds: the POSIX clock has none, so a parsed ":60" second
 * reads as the first second of the next minute.
 */
#ifndef SANDLENS_COMMON_TIMEFMT_H
#define SANDLENS_COMMON_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

/* Buffer size that always fits sl_time_format() output incl. the NUL
 * ("-1677-09-21T00:12:43.145224192Z" is 31 bytes). */
#define SL_TIME_RFC3339_MAX 40

/* Formats ns since the epoch as "YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ": UTC,
 * always nine fraction digits, so strings of years 0000..9999 sort like
 * the times they name. Returns the length written (30 for years
 * 1970..9999), or -ENOSPC when len is too small (buf then holds "" if
 * len > 0). */
int sl_time_format(int64_t ns, char *buf, size_t len);

/* Parses an RFC 3339 date-time: "YYYY-MM-DD" 'T'|'t'|' ' "HH:MM:SS",
 * optional '.' and 1+ fraction digits (digits past the ninth are dropped,
 * i.e. truncated toward the past), then 'Z'|'z' or "+HH:MM"/"-HH:MM". A
 * space in place of the offset's '+' is read as '+', because form decoding
 * of a query string turns an unescaped '+' into a space. The whole string
 * must match. Returns 0 and *ns, -EINVAL when malformed or a field is out of
 * range (month 1-12, day valid for the month, hour 0-23, minute 0-59,
 * second 0-60, offset < 24h), -ERANGE when outside the int64 ns range. */
int sl_time_parse_rfc3339(const char *s, int64_t *ns);

/* Parses a non-negative duration: one or more <digits><unit> terms, unit
 * one of ns, us, ms, s, m, h, d (d = 86400 s), e.g. "90s", "5m", "1h30m",
 * "500ms". No sign, no spaces, no bare number. Returns 0 and *ns, -EINVAL
 * when malformed, -ERANGE when the total overflows int64 ns (~292 years). */
int sl_time_parse_duration(const char *s, int64_t *ns);

/* Parses a point in time given in any of the API's three forms:
 *   all digits        -> ns since the epoch ("1700000000000000000")
 *   a duration        -> now_ns minus the duration ("5m" = five minutes ago)
 *   an RFC 3339 time  -> that time
 * Returns 0 and *ns; -EINVAL when none fits; -ERANGE on overflow. */
int sl_time_parse_point(const char *s, int64_t now_ns, int64_t *ns);

/* CLOCK_REALTIME now, ns since the epoch. */
int64_t sl_time_now_ns(void);

#endif
