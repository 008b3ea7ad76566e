/* stall module: the JSON fields of its event kinds (hung_task, cpu_stall,
 * soft_lockup, hard_lockup, rcu_stall) from decoded records; pure
 * functions (tests/unit/test_kind_schema.c checks them against the
 * declared schema). Field meanings: the kinds in src/modules/stall.c and
 * docs/STALL.md. */
#ifndef SANDLENS_MODULES_STALL_DECODE_H
#define SANDLENS_MODULES_STALL_DECODE_H

#include <jansson.h>
#include <stdint.h>

#include "modules/stall_kmsg.h"
#include "sandlens/stall.h"

struct sl_ksyms;

/* Kernel stack frames as strings, innermost first: "symbol+0xoff" or
 * "symbol+0xoff [module]" when ks resolves the address, else "0x<addr>".
 * bytes: what bpf_get_stack / bpf_get_task_stack returned (bytes filled or
 * -errno). ks NULL: addresses only. *err = why the array is empty (NULL
 * when it is not). Returns a new array (NULL on ENOMEM). */
json_t *sl_stall_stack_json(const struct sl_ksyms *ks, const uint64_t *ips, int bytes, const char **err);

/* hung_task fields; stack is stolen (an array), stack_err may be NULL.
 * have_flags: flags (task->flags) is known (kthread). */
json_t *sl_stall_hung_fields(const char *source, uint32_t tid, uint64_t blocked_ns, uint64_t threshold_ns,
			     uint32_t state, uint32_t flags, int have_flags, uint64_t switches, json_t *stack,
			     const char *stack_err);

/* cpu_stall fields of record e (size bytes; NULL when short); task and
 * stack are stolen. */
json_t *sl_stall_cpu_fields(const struct sl_stall_cpu_event *e, size_t size, uint64_t threshold_ns, json_t *task,
			    json_t *stack, const char *stack_err);

/* soft_lockup / hard_lockup / rcu_stall fields of a decoded line (rcu:
 * "cpus" starts empty; the module appends the CPU lines). NULL for other
 * kinds. */
json_t *sl_stall_klog_fields(const struct sl_stall_klog *k, const char *msg);

#endif
