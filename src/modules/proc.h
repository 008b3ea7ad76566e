/* proc module, user half: its declarations (proc_decl.c: config section,
 * event kinds, families, hooks) and the decoding of the proc ring buffer
 * records into events (exposed for unit tests). The module itself is
 * sl_proc_module (src/modules/proc.c, listed in src/modules/registry.c). */
#ifndef SANDLENS_MODULES_PROC_H
#define SANDLENS_MODULES_PROC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include "agent/module.h"
#include "sandlens/proc.h"

extern const struct sl_module_ops sl_proc_module;

/* The section "proc:" of the config file (docs/CONFIG.md). */
struct sl_proc_cfg {
	uint64_t exec_rate;     /* events/s per (ppid, comm), 0 = no limit */
	uint64_t exec_burst;    /* bucket size */
	uint64_t exec_buckets;  /* max (ppid, comm) keys (also the exit table) */
	uint64_t ringbuf_size;  /* bytes, power of two */
	int fatal_signals_only;
	uint64_t exit_rate;     /* exit and fatal-signal events/s per (cgroup, comm), 0 = no limit */
	uint64_t exit_burst;
	struct sl_cfg_strlist redact_args; /* argv redaction patterns (proc_redact.h) */
};

/* Declarations (proc_decl.c), sizes fixed so the ops can count them. */
#define SL_PROC_NCFG 8
#define SL_PROC_NKINDS 4
#define SL_PROC_NFAMILIES 21
#define SL_PROC_NHOOKS 8
extern const struct sl_cfg_key sl_proc_cfg_keys[SL_PROC_NCFG];
/* Cross-key check: ringbuf_size a power of two, every redact_args pattern
 * valid (sl_redact_pattern_check). 0 or -1 with "proc.<key>: <reason>". */
int sl_proc_cfg_check(const void *cfg, char *err, size_t errlen);
/* Kinds in this order: exec, exit, signal, oom. */
enum { SL_PROC_K_EXEC, SL_PROC_K_EXIT, SL_PROC_K_SIGNAL, SL_PROC_K_OOM };
extern const struct sl_event_kind sl_proc_kinds[SL_PROC_NKINDS];
extern const struct sl_prom_family sl_proc_families[SL_PROC_NFAMILIES];
extern const struct sl_hook_decl sl_proc_hooks[SL_PROC_NHOOKS];
/* exit severity: info for a clean exit, notice for a non-zero code,
 * warning for a signal. */
int sl_proc_exit_severity(const json_t *fields);
/* The flight-recorder trigger (ops.kind_freezes, docs/FLIGHT.md): an OOM
 * kill; an exit or fatal signal with a crash signal (default action core:
 * SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGXCPU,
 * SIGXFSZ, SIGSYS) or SIGKILL. A polite stop (SIGTERM, SIGINT, ...) is not. */
int sl_proc_kind_freezes(unsigned kind, const json_t *fields);

/* Split the NUL-separated argument block argv[0..len) of an exec record
 * into a JSON array of strings. A final argument without its NUL (cut at
 * SL_ARGV_BYTES) is kept as it is. Invalid UTF-8 bytes are replaced by
 * U+FFFD so the array is always valid JSON. Returns a new array. */
json_t *sl_proc_argv_json(const char *argv, size_t len);

/* Exec/exit/signal/oom record -> the type-specific JSON fields (without the
 * common identity fields the pipeline adds). Returns NULL when size does
 * not match the record type. An exec record is variable length: it ends
 * after its argv_len argv bytes (offsetof(argv) + argv_len <= size, and
 * argv_len <= SL_ARGV_BYTES, else NULL). */
json_t *sl_proc_exec_fields(const struct sl_exec_event *e, size_t size);
json_t *sl_proc_exit_fields(const struct sl_exit_event *e, size_t size);

/* As sl_proc_exec_fields, with argv redacted by the npat patterns pat[]
 * (src/modules/proc_redact.h); adds "args_redacted": true when some
 * argument was changed. NULL on a size mismatch or out of memory. */
json_t *sl_proc_exec_fields_redact(const struct sl_exec_event *e, size_t size, const char (*pat)[64],
				   unsigned npat);


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

/* Signal / OOM record -> fields; the sender, actor and victim objects are
 * attributed through m's agent ({pid, comm, cgroup_id, container_id,
 * pod_uid, runtime}), or carry pid, comm, cgroup_id only when m is NULL or
 * has no agent (unit tests). NULL when size is short. */
json_t *sl_proc_signal_fields(struct sl_module *m, const struct sl_signal_event *e, size_t size);
json_t *sl_proc_oom_fields(struct sl_module *m, const struct sl_oom_event *e, size_t size);

/* "memcg" | "global" */
const char *sl_oom_constraint_name(unsigned c);

#endif
