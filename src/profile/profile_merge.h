/* Reading pprof back, merging profiles and comparing two of them: what
 * continuous profiling (docs/PROFILING.md "Continuous profiling") needs to
 * serve a time range from the windows it stored as pprof.
 *
 * sl_profile_read_pprof() is the inverse of sl_profile_write_pprof() for
 * everything pprof carries; sl_profile_merge() adds profiles of the same
 * kind; sl_profile_delta_json() and sl_profile_write_pprof_diff() compare a
 * base with a newer profile.
 */
#ifndef SANDLENS_PROFILE_MERGE_H
#define SANDLENS_PROFILE_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#include "profile/profile.h"

/* Largest decompressed pprof sl_profile_read_pprof() accepts (bytes). */
#define SL_PPROF_READ_MAX (256u << 20)

/* Decode a pprof profile (gzip'd as sl_profile_write_pprof writes it, or
 * plain protobuf) from buf[len] into a new profile. Frames are rebuilt from
 * Location/Function/Mapping as the writer laid them out (docs/PROFILING.md
 * "pprof"): name = Function.name, module = Mapping.filename, build_id =
 * Mapping.build_id, module_offset = Location.address; the flags are derived:
 * a mapping "[vdso]", "[anon]", "[jit]" is user space (JIT for "[jit]"),
 * any other "[...]" mapping is kernel text (KERNEL; "[kernel]" also
 * UNKNOWN); no mapping is an unresolved frame (UNKNOWN; a "[lost ...]"
 * name also PSEUDO, KERNEL when it names the kernel stack); a name
 * "<basename>+0x<module_offset>" or "[anon]" is NOSYM; every other frame
 * has function = name. Not carried by pprof and so 0 after a read:
 * sym_offset, sym_addr, and the runtime address of a resolved user frame
 * (address = module_offset there). Samples: values [count, value_ns],
 * labels pid, tid, comm, container_id, off_cpu_state; kind from the second
 * sample type ("off_cpu" = off-CPU). Returns the profile or NULL with
 * *err = -EINVAL (not gzip/protobuf, no sample types, an index out of
 * range), -EFBIG (over SL_PPROF_READ_MAX), -ENOMEM. */
struct sl_profile *sl_profile_read_pprof(const void *buf, size_t len, int *err);

/* Merge v[0..n) (n >= 1, all of one kind) into a new profile: frames equal
 * by sl_frame identity (profile.h) are one frame; samples with the same
 * pid, tid, comm, container_id, off_cpu_state and frame sequence are one
 * sample whose count and value_ns are the sums. start_ns = the earliest
 * start, duration_ns = up to the latest end, period_ns = v[0]'s (each
 * sample's value_ns is kept as it was measured, so CPU time stays right
 * when windows were taken at different rates). NULL entries are skipped.
 * Returns the profile or NULL with *err = -EINVAL (no profile, mixed kinds)
 * or -ENOMEM. */
struct sl_profile *sl_profile_merge(const struct sl_profile *const *v, size_t n, int *err);

/* Per-function comparison of base with cur as JSON (new reference):
 * {"kind","unit":"samples"|"us","base":{"start_ns","duration_ns","total"},
 *  "new":{...},"functions":[{"function","module","base_self","new_self",
 *  "delta_self","base_total","new_total","delta_total","base_self_pct",
 *  "new_self_pct","delta_self_pct"}...]} with every function of either
 * profile (at most max, largest |delta_self_pct| first, then
 * |delta_total|). Values as the folded default (on-CPU samples, off-CPU
 * microseconds); pct = percent of that profile's total, so ranges of
 * different lengths compare by share; delta = new - base (positive: grew).
 * NULL on ENOMEM or mixed kinds. */
json_t *sl_profile_delta_json(const struct sl_profile *base, const struct sl_profile *cur, size_t max);

/* One pprof holding cur with base subtracted, the form `go tool pprof
 * -diff_base base cur` builds in memory: cur's samples as they are, base's
 * with both values negated and the label pprof::base=true. `go tool pprof
 * -top diff.pb.gz` then lists the change per function. kaddrs_visible as
 * sl_profile_write_pprof. 0 / -EINVAL (mixed kinds) / -EIO / -ENOMEM. */
int sl_profile_write_pprof_diff(const struct sl_profile *base, const struct sl_profile *cur, int kaddrs_visible,
				FILE *out);

#endif
