/* mem module record decoding: pure functions from a ring buffer record
 * (include/sandlens/mem.h) to the event's module fields (docs/MEM.md
 * "mem_stall"). No agent state: unit-tested in tests/unit/test_mem_decode.c.
 * The pipeline adds the common fields (time, pid, comm, the task's
 * container, ...) from the subject; the memcg object gets its container
 * fields from the module (sl_mem_memcg_attr) on the poll-loop thread. */
#ifndef SANDLENS_MODULES_MEM_DECODE_H
#define SANDLENS_MODULES_MEM_DECODE_H

#include <jansson.h>
#include <stddef.h>
#include "sandlens/mem.h"

/* "direct_reclaim" | "memcg_reclaim" | "compaction" | "unknown". */
const char *sl_mem_stall_kind_name(unsigned kind);
/* enum sl_mem_memcg_src: "at_max" | "over_high" | "guess"; 0 (not a memcg
 * reclaim: the task's own memcg) = "task"; else "unknown". */
const char *sl_mem_memcg_src_name(unsigned src);
/* mm_compaction_end status as this kernel's tracepoint prints it (enum
 * compact_result, include/linux/compaction.h of 6.x: 0 not_suitable_zone,
 * 1 skipped, 2 deferred, 3 no_suitable_page, 4 continue, 5 complete,
 * 6 partial_skipped, 7 contended, 8 success); "unknown" outside. The
 * numbers are the kernel's enum and have changed between versions: the
 * event carries the number too. */
const char *sl_mem_compact_status_name(int status);
/* Name of a histogram kind (enum sl_mem_hist_kind): "direct_reclaim",
 * "memcg_reclaim", "compaction", "throttle"; "unknown" outside. */
const char *sl_mem_hist_kind_name(unsigned kind);

/* Module fields of a mem_stall record of size bytes: tid, kind,
 * duration_ns, nr_scanned, nr_reclaimed (pages), order, gfp_flags,
 * truncated_count, memcg {cgroup_id, hierarchy "v1"|"v2", source}, and for
 * compaction compaction_status (name) + compaction_status_code. Returns a
 * new object, or NULL when size is short or the type is not
 * SL_EV_MEM_STALL (a decode error). */
json_t *sl_mem_stall_fields(const struct sl_mem_stall_event *e, size_t size);

#endif
