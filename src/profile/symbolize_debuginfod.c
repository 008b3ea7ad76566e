/* debuginfod client of the symbolizer (symbolize_proc.h): debuginfo or
 * executable files by build-id through libdebuginfod (elfutils,
 * debuginfod-client(3)). Off unless configured (sl_sym_config
 * debuginfod_urls). A query runs in the calling task's thread with no
 * symbolizer lock held, and is aborted by its progress callback when it
 * has taken longer than the configured timeout, so a slow server delays
 * only the task that needs the file. */
#include "profile/symbolize_proc.h"

#include <elfutils/debuginfod.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct sl_dbgd {
	unsigned timeout_s;
};

struct deadline {
	struct timespec end;
};

static int past(const struct timespec *end)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > end->tv_sec || (now.tv_sec == end->tv_sec && now.tv_nsec >= end->tv_nsec);
}

/* libdebuginfod calls this while it downloads; nonzero aborts the query. */
static int progress(debuginfod_client *c, long a, long b)
{
	(void)a;
	(void)b;
	const struct deadline *d = debuginfod_get_user_data(c);
	return d && past(&d->end);
}

struct sl_dbgd *sl_dbgd_new(const char *urls, const char *cache, unsigned timeout_s)
{
	struct sl_dbgd *d = calloc(1, sizeof(*d));
	char tbuf[32];
	if (!d)
		return NULL;
	d->timeout_s = timeout_s ? timeout_s : 10;
	/* libdebuginfod reads its settings from the environment at each
	 * query: set once here, at start-up */
	setenv("DEBUGINFOD_URLS", urls, 1);
	if (cache && *cache)
		setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	/* no-progress timeout of one transfer (libdebuginfod's own) */
	snprintf(tbuf, sizeof(tbuf), "%u", d->timeout_s);
	setenv("DEBUGINFOD_TIMEOUT", tbuf, 1);
	return d;
}

void sl_dbgd_free(struct sl_dbgd *d)
{
	free(d);
}

int sl_dbgd_fetch(struct sl_dbgd *d, const uint8_t *id, size_t len, int what, char **path)
{
	if (!d || !id || !len)
		return -EINVAL;
	debuginfod_client *c = debuginfod_begin();
	if (!c)
		return -ENOMEM;
	struct deadline dl;
	clock_gettime(CLOCK_MONOTONIC, &dl.end);
	dl.end.tv_sec += (time_t)d->timeout_s;
	debuginfod_set_user_data(c, &dl);
	debuginfod_set_progressfn(c, progress);
	*path = NULL;
	int fd = what ? debuginfod_find_executable(c, id, (int)len, path)
		      : debuginfod_find_debuginfo(c, id, (int)len, path);
	int timed_out = past(&dl.end);
	debuginfod_end(c);
	if (fd < 0) {
		free(*path);
		*path = NULL;
		return timed_out ? -ETIME : fd;
	}
	return fd;
}
