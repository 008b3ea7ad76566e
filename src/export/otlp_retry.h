/* Retry policy of the OTLP exporter (docs/EXPORT.md "Retry"): which
 * answers are retried (OTLP/HTTP: 429, 502, 503, 504 and transport errors;
 * any other 4xx/5xx is final), and the delay before the next attempt:
 * exponential backoff with jitter, or the server's Retry-After. Pure. */
#ifndef SANDLENS_EXPORT_OTLP_RETRY_H
#define SANDLENS_EXPORT_OTLP_RETRY_H

#include <stdint.h>

/* 1 when an attempt that ended with HTTP status (0 = no answer: connect
 * error, timeout) should be retried. */
int sl_otlp_retryable(long status);

/* Delay (ns) before retry number attempt (1 = the first retry):
 * initial * 2^(attempt-1), capped at max, times a jitter factor in
 * [0.5, 1.5) taken from rnd (uniform in [0, 1)), never above max * 1.5.
 * retry_after_ns > 0 (a Retry-After header) replaces it. */
uint64_t sl_otlp_backoff_ns(unsigned attempt, uint64_t initial_ns, uint64_t max_ns, double rnd,
			    uint64_t retry_after_ns);

/* Retry-After (RFC 9110 10.2.3): delay-seconds or an HTTP-date (then
 * relative to now_s, Unix seconds; curl_getdate parses it). Returns ns, 0
 * when absent or malformed (or in the past). */
uint64_t sl_otlp_retry_after_ns(const char *v, int64_t now_s);

#endif
