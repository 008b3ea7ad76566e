/* Prometheus text exposition (format 0.0.4, as src/common/prom.c writes it)
 * parsed back into families: the OTLP exporter reads the very text /metrics
 * serves, so the exported metrics have one source of truth
 * (docs/EXPORT.md). Pure: no I/O, no globals. */
#ifndef SANDLENS_EXPORT_PROM_PARSE_H
#define SANDLENS_EXPORT_PROM_PARSE_H

#include <stddef.h>

enum sl_pm_type { SL_PM_COUNTER = 0, SL_PM_GAUGE, SL_PM_HISTOGRAM };

struct sl_pm_label {
	char *name, *value; /* value unescaped */
};

/* One series of a family: its labels (for a histogram without "le"), and
 * for counters/gauges value; for histograms nb finite bucket bounds le[]
 * (ascending as written) with their cumulative counts cum[], inf = the
 * +Inf bucket, sum and count. */
struct sl_pm_series {
	struct sl_pm_label *labels;
	size_t nlabels;
	double value;
	double *le, *cum;
	size_t nb;
	double inf, sum, count;
	int has_inf;
};

struct sl_pm_family {
	char *name; /* as in # TYPE (counters keep _total) */
	char *help; /* "" when none */
	int type;   /* enum sl_pm_type; untyped is a gauge, summaries are skipped */
	struct sl_pm_series *series;
	size_t nseries;
};

struct sl_pm {
	struct sl_pm_family *fam;
	size_t nfam;
	size_t bad_lines; /* lines that did not parse (skipped) */
};

/* Parse len bytes of text into out (zero it before the first call; more
 * calls append their families). Samples before any # TYPE
 * form a gauge family of their own name. A line that does not parse is
 * skipped and counted. 0, or -ENOMEM (out holds what was parsed so far). */
int sl_pm_parse(struct sl_pm *out, const char *text, size_t len);
/* Free everything of pm (not pm itself). */
void sl_pm_free(struct sl_pm *pm);

#endif
