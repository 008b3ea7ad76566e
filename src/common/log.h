/* Levelled logging to stderr: "<RFC3339 time> <LEVEL> <module>: message". */
#ifndef SANDLENS_COMMON_LOG_H
#define SANDLENS_COMMON_LOG_H

enum sl_log_level { SL_LOG_ERROR = 0, SL_LOG_WARN, SL_LOG_INFO, SL_LOG_DEBUG };

/* Messages above this level are dropped. Default SL_LOG_INFO. */
void sl_log_set_level(int level);
int sl_log_get_level(void);
/* Parses "error"|"warn"|"info"|"debug"; returns the level or -1. */
int sl_log_level_parse(const char *s);

void sl_log(int level, const char *mod, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Rate-limited logging: at most one line per `interval_ns` per limiter, so a
 * failure that repeats (a full disk, a flood of malformed requests) cannot
 * flood the log. Lines not printed are counted: the next printed line ends
 * with "(N similar messages suppressed)" and every suppressed line is added
 * to sl_log_suppressed_total() (exported as sandlens_log_suppressed_total).
 * A limiter is a static object, safe to share between threads:
 *
 *     static struct sl_log_limit lim = SL_LOG_LIMIT_INIT(10);
 *     sl_log_limited(&lim, SL_LOG_WARN, MOD, "batch failed: %s", msg);
 */
#include <stdatomic.h>
#include <stdint.h>
struct sl_log_limit {
	_Atomic uint64_t next_ns;    /* CLOCK_MONOTONIC ns before which lines are suppressed */
	_Atomic uint64_t suppressed; /* suppressed since the last printed line */
	uint64_t interval_ns;
};
#define SL_LOG_LIMIT_INIT(interval_s) {0, 0, (uint64_t)(interval_s) * 1000000000ull}

/* Returns 1 when the line was printed, 0 when it was suppressed (or filtered by level). */
int sl_log_limited(struct sl_log_limit *lim, int level, const char *mod, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Lines suppressed by every limiter since start (monotonic counter). */
uint64_t sl_log_suppressed_total(void);

#define sl_err(mod, ...) sl_log(SL_LOG_ERROR, mod, __VA_ARGS__)
#define sl_warn(mod, ...) sl_log(SL_LOG_WARN, mod, __VA_ARGS__)
#define sl_info(mod, ...) sl_log(SL_LOG_INFO, mod, __VA_ARGS__)
#define sl_debug(mod, ...) sl_log(SL_LOG_DEBUG, mod, __VA_ARGS__)

#endif
