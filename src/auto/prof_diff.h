/* Baseline diff of a capture's profile (issue 15 item 3, docs/AUTO.md
 * "Baseline diff"): which frames take a larger share of the capture than of
 * the container's healthy baseline.
 *
 * Shares are normalized by each profile's own total (sum of sample counts:
 * on-CPU samples, off-CPU switch-outs), so profiles of different length or
 * rate compare. A frame is identified across profiles by its function name
 * (the display name when unresolved), since frame tables and addresses
 * differ between profiles. self share = counts of stacks whose leaf is the
 * frame / total; total share = counts of stacks that contain the frame
 * (once per stack, however often it recurses) / total.
 */
#ifndef SANDLENS_AUTO_PROF_DIFF_H
#define SANDLENS_AUTO_PROF_DIFF_H

#include <jansson.h>
#include <stddef.h>

#include "profile/profile.h"

#define SL_DIFF_NAME_LEN 160

struct sl_prof_diff_frame {
	char name[SL_DIFF_NAME_LEN];
	char module[SL_DIFF_NAME_LEN]; /* "" when unknown */
	double self_capture, self_baseline, self_delta;    /* shares 0..1, delta = capture - baseline */
	double total_capture, total_baseline, total_delta;
};

/* Top regressed frames of capture against baseline: frames whose self or
 * total share grew, sorted by self_delta (descending), then total_delta,
 * then name; at most top entries into *out (malloc'd, free()). baseline
 * may be empty (total 0): every share of it is 0. Returns the count (>= 0),
 * -EINVAL when capture is NULL or has no samples (nothing to compare),
 * -ENOMEM. */
int sl_prof_diff(const struct sl_profile *capture, const struct sl_profile *baseline, size_t top,
		 struct sl_prof_diff_frame **out);

/* JSON array of n diff frames: [{function, module?, self_share, baseline_self_share,
 * self_delta, total_share, baseline_total_share, total_delta}] (shares rounded
 * to 1e-4). New reference. */
json_t *sl_prof_diff_json(const struct sl_prof_diff_frame *f, size_t n);

/* A profile from folded text (one "comm;frame;...;leaf COUNT" per line, as
 * sl_profile_write_folded with SL_VALUE_COUNT writes it): the first frame is
 * the sample's comm, the others become frames by name. Lines that are not
 * "<stack> <count>" are skipped. kind: enum sl_prof_kind. NULL on ENOMEM. */
struct sl_profile *sl_prof_from_folded(const char *text, size_t len, int kind);

#endif
