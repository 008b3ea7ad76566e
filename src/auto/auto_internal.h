/* Internals of the AutoTracing engine (auto.c, captures.c, status.c). */
#ifndef SANDLENS_AUTO_INTERNAL_H
#define SANDLENS_AUTO_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <uthash.h>

#include "agent/module.h"
#include "auto/auto.h"
#include "auto/capture_store.h"
#include "auto/cooldown.h"
#include "auto/detect.h"
#include "auto/psi_trigger.h"
#include "cgroup/attr.h"
#include "cgroup/cgstat.h"

#define SL_AUTO_SERIES_MAX 4096

/* Input names of the detectors ("" for series inputs: the series name). */
extern const char *const sl_auto_det_inputs[SL_AUTO_NDET];

/* One container's figures copied out of a stats snapshot. */
struct sl_auto_cin {
	char id[SL_CONTAINER_ID_LEN];
	char pod[SL_POD_UID_LEN];
	char path[512];
	uint64_t ident, ino_v2;
	struct sl_cgstat_cpu cpu;
	uint32_t mem_known;
	uint64_t ws;
	struct sl_cgstat_psi psi_cpu, psi_mem;
	struct sl_cgstat_spec spec;
	unsigned dstate;
};

/* Per-container detector state. */
struct sl_auto_ctr {
	char id[SL_CONTAINER_ID_LEN];
	uint64_t ident, gen, slot;
	size_t cin_idx;
	int have_prev;
	int64_t prev_obs;
	struct sl_auto_cin prev;
	struct sl_det_state det[SL_AUTO_NDET];
	double last[SL_AUTO_NDET];
	double last_user, last_sys, allowed;
	char norm_basis[16];
	int psi_fd[2]; /* memory, cpu */
	int psi_tried[2];
	char psi_reason[2][96];
	UT_hash_handle hh;
};

struct sl_auto_series {
	char name[96];
	struct sl_module *m;
	unsigned idx;
	size_t npts;
	char why[160];
};

/* Why a capture was started. */
struct sl_auto_reason {
	int det;
	double reading;
	struct sl_det_verdict v;
	const char *source; /* "polling" | "psi_trigger" */
	json_t *extra;      /* borrowed */
};

struct sl_auto_pending {
	char id[32];
	struct sl_auto_pending *next;
};

struct sl_auto {
	struct sl_agent *a;
	struct sl_stats *stats;
	struct sl_tasks *tasks;
	struct sl_cg_mounts mounts;
	char cpuset_v1[256];
	char proc_root[64];
	pthread_t thread;
	int started;
	atomic_int stop;
	int ep, wake[2];
	pthread_mutex_t mu; /* ctrs, pending, baseline provider; the auto thread holds it for a pass */

	int det_on[SL_AUTO_NDET];
	struct sl_det_params params[SL_AUTO_NDET];
	struct sl_auto_series series[SL_AUTO_NDET];
	int psi_on[2], psi_priv, psi_widened[2];
	struct sl_psi_trigger psi_trig[2];
	int psi_armed;

	/* the last snapshot's containers */
	uint64_t snap_seq;
	int64_t snap_observed_ns;
	uint64_t machine_cpus;
	int snap_new;
	struct sl_auto_cin *cin;
	size_t ncin, cin_cap;
	struct sl_series_point pts[SL_AUTO_SERIES_MAX];

	struct sl_auto_ctr *ctrs;
	uint64_t gen, next_slot;
	struct sl_cooldown *cooldown;

	/* captures */
	struct sl_capture_store *store;
	struct sl_auto_pending *pending;
	sl_auto_baseline_fn baseline_fn;
	void *baseline_ctx;
	uint64_t capture_seq;

	/* counters (read by API threads) */
	_Atomic uint64_t fired[SL_AUTO_NDET], suppressed[SL_AUTO_NDET], captures[SL_AUTO_NDET];
	_Atomic uint64_t refused, psi_events, passes, evals, eval_ns, last_pass_ns, capture_errors;
};

/* One pass over the copied snapshot (auto thread, under mu). */
void sl_auto_evaluate(struct sl_auto *au);
/* Number of CPUs of a cpuset list ("0-3,8"); 0 when malformed. */
unsigned sl_auto_cpulist_count(const char *s);

/* 1 when container id is watched: list (auto.containers) empty, or one of
 * its comma-separated prefixes begins id. */
int sl_auto_watched(const char *list, const char *id);

/* captures.c */
int sl_auto_captures_init(struct sl_auto *au, char *err, size_t errlen);
void sl_auto_captures_fini(struct sl_auto *au);
void sl_auto_capture_start(struct sl_auto *au, const struct sl_auto_cin *c, const struct sl_auto_reason *r);
/* Finish captures whose tasks ended (profile summary, baseline diff). */
void sl_auto_captures_poll(struct sl_auto *au);

#endif
