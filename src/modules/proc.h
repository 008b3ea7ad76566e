/* proc module, user half: decoding of the proc ring buffer records into
 * events (exposed for unit tests). The module itself is sl_proc_module
 * (src/agent/module.h). */
#ifndef SANDLENS_MODULES_PROC_H
#define SANDLENS_MODULES_PROC_H

#include <jansson.h>
#include <stddef.h>
#include "sandlens/events.h"

/* Split the NUL-separated argument block argv[0..len) of an exec record
 * into a JSON array of strings. A final argument without its NUL (cut at
 * SL_ARGV_BYTES) is kept as it is. Invalid UTF-8 bytes are replaced by
 * U+FFFD so the array is always valid JSON. Returns a new array. */
json_t *sl_proc_argv_json(const char *argv, size_t len);

/* Exec/exit/signal/oom record -> the type-specific JSON fields (without the
 * common identity fields the pipeline adds). Returns NULL when size does
 * not match the record type. */
json_t *sl_proc_exec_fields(const struct sl_exec_event *e, size_t size);
json_t *sl_proc_exit_fields(const struct sl_exit_event *e, size_t size);

struct sl_module;

/* Pressure step 2 (docs/ARCHITECTURE.md "Pressure"): every exec token
 * bucket's rate and burst become >> shift (min 1 per second / token) from
 * the next exec on; suppressed execs are still counted in truncated_count.
 * shift 0..8 (0 = as configured); proc.exec_rate 0 (no limit) stays
 * unlimited. m is the running proc module. Returns 0, -EINVAL for a shift
 * above 8 or a module that is not running. */
int sl_proc_set_rate_shift(struct sl_module *m, unsigned shift);
/* The current shift (0 when m is not running). */
unsigned sl_proc_get_rate_shift(struct sl_module *m);

/* "memcg" | "global" */
const char *sl_oom_constraint_name(unsigned c);

#endif
