/* sandlensd wiring of continuous profiling (cprof_agent.h). */
#include "cprof/cprof_agent.h"
#include "agent/agent.h"
#include "common/log.h"
#include "common/path_resolve.h"
#include "task/task_agent.h"
#include "profile/profile.h"

#include <errno.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MOD "cprof"

void sl_cprof_db_path(const struct sl_config *cfg, char *out, size_t len)
{
	if (cfg->cprof.store_path[0]) {
		snprintf(out, len, "%s", cfg->cprof.store_path);
		return;
	}
	const char *sp = cfg->store.path, *sl = strrchr(sp, '/');
	if (sl)
		snprintf(out, len, "%.*s/profiles.db", (int)(sl - sp), sp);
	else
		snprintf(out, len, "profiles.db");
}

/* Same file: same string, or one canonical path (existing or not:
 * "dir/../dir/x.db" and "dir//x.db" are "dir/x.db"). */
static int same_file(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];
	if (!strcmp(a, b))
		return 1;
	return sl_path_resolve(a, ra, sizeof(ra)) && sl_path_resolve(b, rb, sizeof(rb)) && !strcmp(ra, rb);
}

int sl_cprof_check_paths(const struct sl_config *cfg, char *err, size_t errlen)
{
	char p[sizeof(cfg->cprof.store_path) + 64], t[sizeof(cfg->tasks.store_path) + 64];
	if (!cfg->cprof.enabled)
		return 0;
	sl_cprof_db_path(cfg, p, sizeof(p));
	if (same_file(p, cfg->store.path)) {
		snprintf(err, errlen, "profiling.continuous.store_path: '%s' is the event store (store.path); the profile windows need their own file", p);
		return -1;
	}
	sl_tasks_db_path(cfg, t, sizeof(t));
	if (cfg->tasks.enabled && same_file(p, t)) {
		snprintf(err, errlen, "profiling.continuous.store_path: '%s' is the task store; the profile windows need their own file", p);
		return -1;
	}
	return 0;
}

struct sl_cprof *sl_cprof_start_agent(struct sl_agent *a)
{
	const __typeof__(a->cfg.cprof) *c = &a->cfg.cprof;
	struct sl_cprof_config cc = {
		.hz = (uint32_t)c->hz,
		.window_ns = c->window_s * 1000000000ull,
		.max_age_ns = c->max_age_s * 1000000000ull,
		.max_bytes = c->max_bytes,
		.stack_entries = (uint32_t)c->stack_entries,
		.count_entries = (uint32_t)c->count_entries,
		.mounts = a->mounts,
		.v1_subsys_id = a->v1_subsys_id,
		.runc = a->cfg.attribution.enabled ? a->runc : NULL,
		.attribution = a->cfg.attribution.enabled,
		.attr_cache_size = a->cfg.attribution.cache_size,
		.mono_to_real_ns = a->mono_to_real_ns,
	};
	char err[512];
	sl_cprof_db_path(&a->cfg, cc.db_path, sizeof(cc.db_path));
	struct sl_cprof *cp = sl_cprof_new(&cc, err, sizeof(err));
	if (!cp) {
		snprintf(a->cprof_error, sizeof(a->cprof_error), "%.250s", err);
		sl_err(MOD, "continuous profiling not started: %s", err);
	} else {
		a->cprof_error[0] = 0;
		sl_info(MOD, "continuous profiling: %u Hz per CPU, %llu s windows, store %s", cc.hz,
			(unsigned long long)c->window_s, cc.db_path);
	}
	return cp;
}

struct sl_profile *sl_cprof_baseline(void *ctx, const char *container_id, int kind, int64_t from_real_ns,
				     int64_t to_real_ns, char *why, size_t whylen)
{
	struct sl_profile *p = NULL;
	if (kind != SL_PROF_ON_CPU) {
		snprintf(why, whylen, "continuous profiling keeps on-CPU windows only");
		return NULL;
	}
	if (from_real_ns < 0 || to_real_ns <= from_real_ns) {
		snprintf(why, whylen, "empty baseline range");
		return NULL;
	}
	int rc = sl_cprof_range(ctx, container_id, (uint64_t)from_real_ns, (uint64_t)to_real_ns, &p);
	if (rc == -ENOENT)
		snprintf(why, whylen, "no continuous-profiling window of the container in the range");
	else if (rc)
		snprintf(why, whylen, "reading the continuous-profiling windows failed: %s", strerror(-rc));
	return rc ? NULL : p;
}
