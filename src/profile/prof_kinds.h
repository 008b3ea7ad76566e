/* Profile kinds: the one table that says, for each enum sl_prof_kind, what
 * its numbers are. Every writer (pprof, folded, SVG, JSON, HTML) asks this
 * table instead of testing the kind: pprof sample types and units, the
 * default number of the folded/flame-graph outputs, the label and pseudo
 * frame of a sample's state, titles. docs/PROFILING.md "Profile kinds".
 *
 * A sample (struct sl_sample / sl_raw_stack) carries four numbers: count,
 * value_ns (named for the time kinds; for memory kinds it holds bytes) and
 * extra[0], extra[1]; enum sl_prof_field names them. */
#ifndef SANDLENS_PROF_KINDS_H
#define SANDLENS_PROF_KINDS_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* Which number of a sample a sample type reads. */
enum sl_prof_field {
	SL_PF_COUNT = 0,  /* sl_sample.count */
	SL_PF_VALUE = 1,  /* sl_sample.value_ns */
	SL_PF_EXTRA0 = 2, /* sl_sample.extra[0] */
	SL_PF_EXTRA1 = 3, /* sl_sample.extra[1] */
};

#define SL_PROF_MAX_TYPES 4

/* One pprof sample type: ValueType {type, unit} and where its number is. */
struct sl_prof_stype {
	const char *type; /* "samples", "cpu", "alloc_space", "delay", ... */
	const char *unit; /* "count", "nanoseconds", "bytes" */
	int field;        /* enum sl_prof_field */
};

struct sl_prof_kind_info {
	int kind;                 /* enum sl_prof_kind */
	const char *name;         /* "on_cpu", "mem_virtual", ... (JSON "kind") */
	const char *title;        /* default flame graph title */
	size_t ntypes;
	struct sl_prof_stype types[SL_PROF_MAX_TYPES]; /* pprof sample_type, in order */
	int default_type;         /* index: pprof default_sample_type */
	int period_type;          /* index: pprof period_type (period = profile period_ns) */
	int value_default;        /* enum sl_prof_value of SL_VALUE_DEFAULT (folded, SVG, JSON) */
	const char *count_text;   /* what count is, for humans: "samples", "switch-outs", ... */
	const char *value_text;   /* what the value is: "CPU time", "bytes mapped", ... */
	const char *state_label;  /* pprof label key of the sample's state; NULL: none */
	int state_frame;          /* 1: folded/SVG/JSON put "[state]" right under the comm */
	/* name of a state value (a static string; "other" for values the
	 * kind does not define); NULL function: the kind has no states */
	const char *(*state_name)(uint32_t state);
};

/* The entry of kind; an unknown kind gets the on-CPU entry (never NULL). */
const struct sl_prof_kind_info *sl_prof_kind_info(int kind);
/* Kind by name ("on_cpu", ...); -1 unknown. */
int sl_prof_kind_parse(const char *name);
/* Number of kinds in the table (= SL_PROF_NKINDS). */
size_t sl_prof_kind_count(void);

/* The number field of sample s. */
uint64_t sl_prof_field_of(const struct sl_sample *s, int field);

/* Name of a sample's state for kind (a static string, no brackets:
 * "blocked", "mmap", "rwsem:W", ...); NULL when the kind has no states. */
const char *sl_prof_state_name(int kind, uint32_t state);
/* The same as a pseudo frame name: "[blocked]", "[mmap]", ... (static);
 * NULL when the kind has no states. */
const char *sl_prof_state_frame(int kind, uint32_t state);

/* Human text of what a value mode measures for kind, for a graph's
 * legend: "sample count", "time off CPU", "bytes mapped", ... */
const char *sl_prof_width_text(int kind, int mode);

/* Lock flags (LCB_F_*, include/trace/events/lock.h) as perf lock names
 * them: "spinlock", "mutex", "rwsem:W", "rwlock:R", "pcpu-sem:W",
 * "rt-mutex", "semaphore" (no flag), ..., "mutex-spin" (optimistic
 * spinning on a mutex); other combinations "other". Static string. */
const char *sl_prof_lock_type(uint32_t flags);

/* Scaling of a sampled page-fault profile: pf_period sampled faults of
 * page_size bytes each. faults = samples * period; bytes = faults *
 * page_size (saturating at UINT64_MAX). */
uint64_t sl_prof_pf_faults(uint64_t samples, uint64_t period);
uint64_t sl_prof_pf_bytes(uint64_t samples, uint64_t period, uint64_t page_size);

#endif
