/* The one Prometheus text writer (exposition format 0.0.4,
 * https://prometheus.io/docs/instrumenting/exposition_formats/): every
 * family of /metrics is written through it, the agent's, each module's and
 * the statistics snapshot's.
 *
 *   - # HELP and # TYPE are written once per family, before its first
 *     sample, however many callers write samples of it; a family started
 *     twice in one exposition is not repeated (its samples go on under the
 *     first header: callers must not interleave two families' samples).
 *   - label values are escaped (\\, \" and \n); label names and family names
 *     are checked against [a-zA-Z_:][a-zA-Z0-9_:]* and refused otherwise.
 *   - invalid UTF-8: the format requires label values (and HELP text) to be
 *     UTF-8, and Prometheus refuses a whole scrape that is not. A byte that
 *     does not start a well-formed UTF-8 sequence (stray continuation byte,
 *     overlong form, surrogate, above U+10FFFF, truncated sequence) is
 *     written as U+FFFD (EF BF BD), one per such byte; the sample is kept.
 *     Values that differ only in their invalid bytes can so become one
 *     series.
 *   - control characters: C0 controls other than \n (\t and \r too), DEL
 *     and C1 controls (U+0080..U+009F) in label values and HELP are written
 *     as U+FFFD as well, one per character: the exposition would be valid
 *     with them, but `curl /metrics` in a terminal would obey an ESC[2J or
 *     an OSC from a cgroup path a container chose.
 *   - histograms: cumulative _bucket{le} samples, +Inf, _sum and _count.
 *   - a sample must belong to the family started last (its name, or for a
 *     histogram its _bucket/_sum/_count); anything else is -EINVAL.
 *   - an optional allow-list (sl_prom_restrict) refuses families a module
 *     did not declare: the module contract (src/agent/module.h) sets it
 *     while a module writes.
 *
 * Not thread-safe: one writer per exposition (per scrape, or per stats pass).
 */
#ifndef SANDLENS_COMMON_PROM_H
#define SANDLENS_COMMON_PROM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum sl_prom_type {
	SL_PROM_COUNTER = 0,
	SL_PROM_GAUGE,
	SL_PROM_HISTOGRAM,
};

/* A label: name and value (value need not be escaped by the caller). A
 * label set is an array ended by {NULL, NULL}, or NULL for none. A label
 * whose value is NULL is left out. */
struct sl_prom_label {
	const char *name;
	const char *value;
};

/* A family as declared (module contract: struct sl_module_ops.families). */
struct sl_prom_family {
	const char *name; /* full name, e.g. "sandlens_mem_reclaim_seconds" */
	int type;         /* enum sl_prom_type */
	const char *help; /* one line, no newline */
};

struct sl_prom;

/* A writer on out (not owned). NULL on ENOMEM. */
struct sl_prom *sl_prom_new(FILE *out);
/* Frees the writer (not out). */
void sl_prom_free(struct sl_prom *p);
/* The stream samples go to (for callers that copy pre-rendered text). */
FILE *sl_prom_stream(struct sl_prom *p);

/* Start family name (writes HELP/TYPE if not written yet in this
 * exposition). Returns 0, -EINVAL (bad name or type), -EPERM (not in the
 * allow-list set by sl_prom_restrict; nothing is written). */
int sl_prom_family(struct sl_prom *p, const char *name, int type, const char *help);
/* sl_prom_family() from a declaration. */
int sl_prom_declared(struct sl_prom *p, const struct sl_prom_family *f);

/* One sample of the current family: name is the family name (or, for a
 * counter, the family name; the _total suffix is the caller's). Values:
 * integers exactly, doubles with %.9g (NaN, +Inf, -Inf spelled as the format
 * says). Returns 0, -EINVAL (bad label name), -EPERM (family refused). */
int sl_prom_u64(struct sl_prom *p, const char *name, const struct sl_prom_label *labels, uint64_t v);
int sl_prom_i64(struct sl_prom *p, const char *name, const struct sl_prom_label *labels, int64_t v);
int sl_prom_f64(struct sl_prom *p, const char *name, const struct sl_prom_label *labels, double v);
/* A family with a single sample and no labels: sl_prom_family, then
 * sl_prom_u64 / sl_prom_f64. Returns what the first failing call did. */
int sl_prom_one_u64(struct sl_prom *p, const char *name, int type, const char *help, uint64_t v);
int sl_prom_one_f64(struct sl_prom *p, const char *name, int type, const char *help, double v);
/* v / 10^digits written exactly, with digits (0..19) fractional digits:
 * (12345678, 6) -> "12.345678", (5, 3) -> "0.005". For counts of small
 * units written in the family's unit (microseconds as seconds) without the
 * rounding of a double. digits > 19: -EINVAL. */
int sl_prom_decimal(struct sl_prom *p, const char *name, const struct sl_prom_label *labels, uint64_t v,
		    unsigned digits);

/* A histogram of family name: nb finite buckets with upper bounds le[]
 * (ascending, in the family's unit, e.g. seconds), counts[] per bucket
 * (NOT cumulative; counts[nb] is the overflow above le[nb-1]), sum in the
 * family's unit. Writes _bucket{...,le="x"} cumulatively, le="+Inf",
 * _sum and _count (= sum of counts[0..nb]). */
int sl_prom_histogram(struct sl_prom *p, const char *name, const struct sl_prom_label *labels,
		      const double *le, const uint64_t *counts, size_t nb, double sum);

/* Allow only these families (n entries; NULL/0 = none) until
 * sl_prom_unrestrict(); a family outside gets -EPERM, its samples are not
 * written, and the refusal is counted (sl_prom_refused). Both end the
 * current family: start it again under the new rule. */
void sl_prom_restrict(struct sl_prom *p, const struct sl_prom_family *allowed, size_t n);
void sl_prom_unrestrict(struct sl_prom *p);
/* Families refused since sl_prom_new (a module writing what it did not
 * declare: a bug the tests look for). */
unsigned sl_prom_refused(const struct sl_prom *p);

/* Write s escaped as a label value (\\, \", \n; invalid UTF-8 and control
 * characters as U+FFFD, see above) to out. */
void sl_prom_escape(FILE *out, const char *s);

#endif
