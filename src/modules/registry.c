/* The registry: the one list of modules (src/agent/module.h), in start
 * order. Adding a module is ONE line of SL_MODULES here (its ops are
 * `const struct sl_module_ops sl_<name>_module` in src/modules/<name>.c);
 * nothing else outside the module's own files names it
 * (tests/check-module-names.sh reads the M(<name>) lines below). */
#include "agent/module.h"

#define SL_MODULES(M) \
	M(proc)       \
	M(sched)      \
	M(mem)        \
	M(stall)      \
	M(io)         \
	M(net)        \
	M(hw)         \
	M(gpu)        \
	/* end of the list */

#define DECLARE(n) extern const struct sl_module_ops sl_##n##_module;
SL_MODULES(DECLARE)
#undef DECLARE

#define ENTRY(n) &sl_##n##_module,
const struct sl_module_ops *const sl_registry[] = {SL_MODULES(ENTRY)};
#undef ENTRY

const unsigned sl_registry_count = sizeof(sl_registry) / sizeof(sl_registry[0]);

_Static_assert(sizeof(sl_registry) / sizeof(sl_registry[0]) <= SL_MAX_MODULES, "SL_MAX_MODULES");
