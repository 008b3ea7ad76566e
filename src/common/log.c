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

static _Atomic uint64_t g_suppressed;

static void emit(int level, const char *mod, const char *msg);

void sl_log(int level, const char *mod, const char *fmt, ...)
{
	if (level > g_level || level < 0)
		return;
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	emit(level, mod, msg);
}

uint64_t sl_log_suppressed_total(void) { return atomic_load(&g_suppressed); }

int sl_log_limited(struct sl_log_limit *lim, int level, const char *mod, const char *fmt, ...)
{
	if (level > g_level || level < 0)
		return 0;
	struct timespec mono;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	uint64_t now = (uint64_t)mono.tv_sec * 1000000000ull + (uint64_t)mono.tv_nsec;
	uint64_t next = atomic_load(&lim->next_ns);
	/* one thread wins the slot; the others count themselves suppressed */
	if (now < next || !atomic_compare_exchange_strong(&lim->next_ns, &next, now + lim->interval_ns)) {
		atomic_fetch_add(&lim->suppressed, 1);
		atomic_fetch_add(&g_suppressed, 1);
		return 0;
	}
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	uint64_t sup = atomic_exchange(&lim->suppressed, 0);
	if (sup && n >= 0 && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, " (%llu similar messages suppressed)",
			 (unsigned long long)sup);
	emit(level, mod, msg);
	return 1;
}

static void emit(int level, const char *mod, const char *msg)
{
	char ts[40];
	struct timespec now;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(stderr, "%s.%03ldZ %-5s %s: %s\n", ts, now.tv_nsec / 1000000, names[level],
		mod ? mod : "-", msg);
}
