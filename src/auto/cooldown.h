/* Per-(container, detector) rate limit of captures (AUTO-2, docs/AUTO.md
 * "Cooldown"): after a capture of (container, detector), another one of the
 * same pair is refused for `cooldown_ns` (counted as suppressed). At most
 * `max_keys` pairs are remembered; when full, pairs whose cooldown has run
 * out are forgotten first, then the oldest one (its next capture is then
 * allowed early: counted in `evicted`). Not thread-safe: one owner thread.
 */
#ifndef SANDLENS_AUTO_COOLDOWN_H
#define SANDLENS_AUTO_COOLDOWN_H

#include <stddef.h>
#include <stdint.h>

struct sl_cooldown;

struct sl_cooldown_stats {
	uint64_t allowed, suppressed, evicted;
	size_t keys;
};

/* New table; max_keys 0 = 65536. NULL on ENOMEM. */
struct sl_cooldown *sl_cooldown_new(uint64_t cooldown_ns, size_t max_keys);
void sl_cooldown_free(struct sl_cooldown *c);

/* May (container, detector) capture at now_ns (CLOCK_MONOTONIC)? 1: yes,
 * and the pair's cooldown starts now; 0: no (within the cooldown of its
 * last capture; *remaining_ns, when non-NULL, gets what is left). -ENOMEM
 * never refuses: a pair that cannot be remembered is allowed (returns 1). */
int sl_cooldown_try(struct sl_cooldown *c, const char *container, unsigned detector, uint64_t now_ns,
		    uint64_t *remaining_ns);

void sl_cooldown_stats(const struct sl_cooldown *c, struct sl_cooldown_stats *out);

#endif
