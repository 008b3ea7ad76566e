/* proc module, user half: decoding of the proc ring buffer records into
 * events (exposed for unit tests). The module itself is sl_proc_module
 * (src/agent/module.h). */
#ifndef SANDLENS_MODULES_PROC_H
#define SANDLENS_MODULES_PROC_H

#include <jansson.h>
#include <stddef.h>
#include "sandlens/proc.h"

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

/* As sl_proc_exec_fields, with argv redacted by the npat patterns pat[]
 * (src/modules/proc_redact.h); adds "args_redacted": true when some
 * argument was changed. NULL on a size mismatch or out of memory. */
json_t *sl_proc_exec_fields_redact(const struct sl_exec_event *e, size_t size, const char (*pat)[64],
				   unsigned npat);

struct sl_module;
struct sl_agent;

/* Runtime rate scaling (the degradation step "raise the event drop rate"):
 * every proc token bucket (exec, exit, signal) then refills at
 * rate >> shift and holds burst >> shift tokens, each at least 1 when the
 * configured value is not 0 (sl_bucket_scale, include/sandlens/token_bucket.h).
 * shift 0..SL_RATE_SHIFT_MAX (8); takes effect at the next event. Returns 0,
 * -EINVAL for a shift above 8, -ENODEV when m is not the running proc
 * module (NULL, another module, failed or not started). Any thread. */
int sl_proc_set_rate_shift(struct sl_module *m, unsigned shift);

/* The current shift (0 when m is not the running proc module). */
unsigned sl_proc_get_rate_shift(struct sl_module *m);

/* The proc module among a's modules (running or not), or NULL. */
struct sl_module *sl_proc_find(struct sl_agent *a);

/* "memcg" | "global" */
const char *sl_oom_constraint_name(unsigned c);

#endif
