/* hw module: the early warning. For each key (a DIMM, csrow or PCI device)
 * the corrected-error counter is sampled every pass; the errors over the
 * last window (counter now minus the counter at the newest sample at least
 * a window old, else the first sample seen: errors before the agent
 * started are not counted) at or above the threshold is a crossing. A key
 * reports once per crossing: it re-arms when its windowed count falls
 * below the threshold again. A counter that goes down (driver reload,
 * EDAC reset_counters) restarts the key's history. Poll-loop thread only. */
#ifndef SANDLENS_MODULES_HW_RATE_H
#define SANDLENS_MODULES_HW_RATE_H

#include <stddef.h>
#include <stdint.h>

#define HW_RATE_KEY 96
#define HW_RATE_SAMPLES 80 /* samples kept per key: one per window / 64 at most */

struct hw_rate;

struct hw_rate *hw_rate_new(void);
void hw_rate_free(struct hw_rate *r);

/* Feed count (cumulative corrected errors) of key at now_ns. Returns 1
 * when the key crosses threshold (errors in window >= threshold, and it
 * was below before), else 0; *in_window gets the windowed count, *total
 * the counter. -ENOMEM when a new key cannot be made. */
int hw_rate_update(struct hw_rate *r, const char *key, uint64_t now_ns, uint64_t count, uint64_t window_ns,
		   uint64_t threshold, uint64_t *in_window);

/* Forget keys not updated since before now_ns (devices gone). Returns how
 * many were removed. */
size_t hw_rate_expire(struct hw_rate *r, uint64_t older_than_ns);
/* Keys held. */
size_t hw_rate_count(const struct hw_rate *r);

#endif
