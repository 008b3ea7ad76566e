/* Checks of the auto.* configuration keys (docs/CONFIG.md "auto"). */
#ifndef SANDLENS_AUTO_CONFIG_H
#define SANDLENS_AUTO_CONFIG_H

#include <stddef.h>

#include "agent/config.h"

/* The detectors, in the order of cfg.autotr.det[] (docs/AUTO.md). */
#define SL_AUTO_NDET 8
enum sl_auto_det_id {
	SL_AD_CPU = 0,   /* CPU usage / allowed CPUs (quota, else cpuset, else host CPUs) */
	SL_AD_THROTTLE,  /* CFS periods throttled / periods elapsed */
	SL_AD_RUNQUEUE,  /* a declared series: runqueue latency p99, seconds */
	SL_AD_DSTATE,    /* tasks in D state (uninterruptible sleep) */
	SL_AD_MEMGROWTH, /* working-set growth, bytes/s */
	SL_AD_MEMPSI,    /* memory pressure "some": stall share (PSI trigger or sampled) */
	SL_AD_CPUPSI,    /* cpu pressure "some": stall share */
	SL_AD_IOLAT,     /* a declared series: I/O latency, seconds */
};

/* Detector names ("cpu", "throttle", ...: the auto.<name>.* keys). */
extern const char *const sl_auto_det_names[SL_AUTO_NDET];

/* Check every auto.* key that the loader's types do not (method names,
 * windows, PSI trigger texts). 0, or -1 with "<key>: <reason>" in err. */
int sl_auto_config_check(const struct sl_config *c, char *err, size_t errlen);

#endif
