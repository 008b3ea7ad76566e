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

#define sl_err(mod, ...) sl_log(SL_LOG_ERROR, mod, __VA_ARGS__)
#define sl_warn(mod, ...) sl_log(SL_LOG_WARN, mod, __VA_ARGS__)
#define sl_info(mod, ...) sl_log(SL_LOG_INFO, mod, __VA_ARGS__)
#define sl_debug(mod, ...) sl_log(SL_LOG_DEBUG, mod, __VA_ARGS__)

#endif
