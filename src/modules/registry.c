/* The registry: the one list of modules (src/agent/module.h). Adding a
 * module is one line here; nothing else outside the module's own files
 * names it (tests/check-module-names.sh). */
#include "agent/module.h"

extern const struct sl_module_ops sl_proc_module;  /* src/modules/proc.c */
extern const struct sl_module_ops sl_sched_module; /* src/modules/sched.c */

const struct sl_module_ops *const sl_registry[] = {
	&sl_proc_module,
	&sl_sched_module,
};

const unsigned sl_registry_count = sizeof(sl_registry) / sizeof(sl_registry[0]);

_Static_assert(sizeof(sl_registry) / sizeof(sl_registry[0]) <= SL_MAX_MODULES, "SL_MAX_MODULES");
