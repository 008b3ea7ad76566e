#include "common/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static _Atomic int g_level = SL_LOG_INFO;
static const char *const names[] = {"ERROR", "WARN", "INFO", "DEBUG"};

void sl_log_set_level(int level) { g_level = level; }
int sl_log_get_level(void) { return g_level; }

int sl_log_level_parse(const char *s)
{
	static const char *const lc[] = {"error", "warn", "info", "debug"};
	for (int i = 0; i < 4; i++)
		if (s && strcmp(s, lc[i]) == 0)
			return i;
	return -1;
}

void sl_log(int level, const char *mod, const char *fmt, ...)
{
	if (level > g_level || level < 0)
		return;
	char msg[1024], ts[40];
	struct timespec now;
	struct tm tm;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(stderr, "%s.%03ldZ %-5s %s: %s\n", ts, now.tv_nsec / 1000000, names[level],
		mod ? mod : "-", msg);
}
