/* The agent's side of the OTLP exporter (src/export/exporter.h): its
 * metrics source is the /metrics text (the agent's and modules' families
 * through sl_agent_write_metrics_to, then the statistics snapshot's
 * families), so what a Collector receives is what Prometheus scrapes. */
#include "agent/agent.h"
#include "common/log.h"
#include "common/prom.h"
#include "export/exporter.h"
#include "stats/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MOD "export"

static int render(void *arg, char **text, size_t *len)
{
	struct sl_agent *a = arg;
	FILE *f = open_memstream(text, len);
	if (!f)
		return -1;
	struct sl_stats_prom *sp = sl_agent_stats_prom(a);
	if (sp) {
		fwrite(sp->text, 1, sp->len, f);
		sl_stats_prom_put(sp);
	}
	struct sl_prom *p = sl_prom_new(f);
	if (p) {
		sl_agent_write_metrics_to(a, p);
		sl_prom_free(p);
	}
	return fclose(f) == 0 && p ? 0 : -1;
}

int sl_agent_export_start(struct sl_agent *a, int64_t after_id, const char *version)
{
	char err[256], host[256] = "";
	if (!a->cfg.export_otlp.endpoint[0])
		return 0;
	gethostname(host, sizeof(host) - 1);
	/* the cursor next to the store (its directory is the agent's, 0700) */
	char cursor[4200];
	int keep = a->cfg.export_otlp.persist_cursor && a->store &&
		   snprintf(cursor, sizeof(cursor), "%s.otlp-cursor", a->cfg.store.path) < (int)sizeof(cursor);
	struct sl_export_params p = {
		.host_name = host,
		.version = version,
		.start_ns = (uint64_t)((int64_t)a->start_mono_ns + a->mono_to_real_ns),
		.store = a->store,
		.after_id = after_id,
		.cursor_path = keep ? cursor : NULL,
		.render = render,
		.render_arg = a,
	};
	a->export = sl_export_start(&a->cfg.export_otlp, &p, err, sizeof(err));
	if (!a->export) {
		sl_err(MOD, "OTLP export to %s not started: %s", a->cfg.export_otlp.endpoint, err);
		return -1;
	}
	return 0;
}

void sl_agent_export_stop(struct sl_agent *a)
{
	sl_export_stop(a->export);
	a->export = NULL;
}
