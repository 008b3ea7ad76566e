/* SIGHUP reload: re-read the configuration with the start-up loader, apply
 * what can change at run time, log what cannot (agent.h, sl_agent_reload;
 * docs/ARCHITECTURE.md "Reload"). Modules are reached through the
 * optional ops->reconfigure only. */
#include "agent/agent.h"
#include "common/log.h"
#include "stats/stats.h"
#include "store/store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MOD "reload"

static const char *level_name(int l)
{
	static const char *const n[] = {"error", "warn", "info", "debug"};
	return l >= 0 && l < 4 ? n[l] : "?";
}

struct reload_ctx {
	struct sl_agent *a;
	const struct sl_config *nc;
	int applied, restart;
	int log_level_changed; /* applied last: the reload's own lines use the old level */
};

/* api.admin_group: the socket's group and mode follow the new value (as
 * sl_api_start sets them at bind), then the gid the API threads check. */
static int apply_admin_group(struct sl_agent *a, const struct sl_config *nc)
{
	const char *sock = a->cfg.api.unix_socket;
	gid_t g = nc->api.admin_gid;
	if (sock[0]) {
		if (g == (gid_t)-1) {
			/* none: revoke first, then tighten the mode */
			__atomic_store_n(&a->cfg.api.admin_gid, g, __ATOMIC_RELAXED);
			if (chmod(sock, 0600) != 0) {
				sl_warn(MOD, "api.admin_group: chmod 0600 %s: %s", sock, strerror(errno));
				return -1;
			}
		} else if (chown(sock, (uid_t)-1, g) != 0 || chmod(sock, 0660) != 0) {
			sl_warn(MOD, "api.admin_group: %s to group %s (gid %u): %s (the agent's user must be a member of the group, or have CAP_CHOWN); keeping the running value",
				sock, nc->api.admin_group, (unsigned)g, strerror(errno));
			return -1;
		}
	}
	__atomic_store_n(&a->cfg.api.admin_gid, g, __ATOMIC_RELAXED);
	/* the name is for messages only; the API threads read the gid */
	memcpy(a->cfg.api.admin_group, nc->api.admin_group, sizeof(a->cfg.api.admin_group));
	return 0;
}

/* Applies one agent key; 0 applied, 1 needs a restart, -1 failed (logged). */
static int apply_agent_key(struct sl_agent *a, const struct sl_config *nc, const char *key)
{
	if (!strcmp(key, "store.max_age") || !strcmp(key, "store.max_rows")) {
		/* both at once (the second key of the pair then compares equal
		 * again, but the diff was taken before: apply it idempotently) */
		sl_store_set_retention(a->store, nc->store.max_age_s, nc->store.max_rows);
		__atomic_store_n(&a->cfg.store.max_age_s, nc->store.max_age_s, __ATOMIC_RELAXED);
		__atomic_store_n(&a->cfg.store.max_rows, nc->store.max_rows, __ATOMIC_RELAXED);
		return 0;
	}
	if (!strcmp(key, "stats.interval")) {
		sl_stats_set_interval(a->stats, nc->stats.interval_ns / 1000000);
		__atomic_store_n(&a->cfg.stats.interval_ns, nc->stats.interval_ns, __ATOMIC_RELAXED);
		return 0;
	}
	if (!strcmp(key, "api.admin_group"))
		return apply_admin_group(a, nc) ? -1 : 0;
	return 1;
}

/* Applies one key of module mi through its reconfigure op. */
static int apply_module_key(struct sl_agent *a, const struct sl_config *nc, int mi, const struct sl_cfg_key *mk)
{
	struct sl_module *m = NULL;
	for (int i = 0; i < a->nmodules; i++)
		if (a->modules[i].ops == nc->mods[mi])
			m = &a->modules[i];
	if (!m || !mk || !m->ops->reconfigure || !m->enabled || m->state || !m->cfg)
		return 1; /* "<m>.enabled", no hook, or not running */
	int rc = m->ops->reconfigure(m, nc->mod_store[mi], mk->name);
	if (rc == -EOPNOTSUPP)
		return 1;
	if (rc) {
		sl_warn(MOD, "%s.%s: the module refused the new value: %s; keeping the running value",
			m->ops->name, mk->name, strerror(-rc));
		return -1;
	}
	memcpy((char *)m->cfg + mk->offset, nc->mod_store[mi] + mk->offset, mk->size);
	return 0;
}

static void on_changed(void *arg, const char *key, int module, const struct sl_cfg_key *mk)
{
	struct reload_ctx *c = arg;
	if (module < 0 && !strcmp(key, "log_level")) {
		c->log_level_changed = 1;
		c->applied++;
		return;
	}
	int rc = module < 0 ? apply_agent_key(c->a, c->nc, key) : apply_module_key(c->a, c->nc, module, mk);
	if (rc == 0) {
		sl_info(MOD, "%s applied", key);
		c->applied++;
	} else if (rc > 0) {
		sl_warn(MOD, "%s changed: needs a restart; the running value is kept", key);
		c->restart++;
	}
}

int sl_agent_reload(struct sl_agent *a, const char *path)
{
	char err[512];

	if (!path) {
		sl_info(MOD, "SIGHUP: no --config file, nothing to reload");
		return 0;
	}
	struct sl_config *nc = malloc(sizeof(*nc));
	if (!nc) {
		sl_err(MOD, "SIGHUP: out of memory; keeping the running configuration");
		return -1;
	}
	sl_config_defaults_mods(nc, a->cfg.mods, a->cfg.nmods);
	if (sl_config_load(nc, path, err, sizeof(err))) {
		sl_err(MOD, "SIGHUP: invalid configuration %s: %s; keeping the running configuration", path, err);
		free(nc);
		return -1;
	}
	struct reload_ctx c = {.a = a, .nc = nc};
	int n = sl_config_diff(&a->cfg, nc, on_changed, &c);
	if (c.log_level_changed)
		sl_info(MOD, "log_level applied (%s)", level_name(nc->log_level));
	sl_info(MOD, "SIGHUP: %s reloaded: %d keys changed, %d applied, %d need a restart", path, n, c.applied,
		c.restart);
	if (c.log_level_changed) {
		sl_log_set_level(nc->log_level);
		__atomic_store_n(&a->cfg.log_level, nc->log_level, __ATOMIC_RELAXED);
	}
	free(nc);
	return c.applied;
}
