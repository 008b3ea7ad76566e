/* sl_config_defaults over the registry: apart from config.c so that the
 * loader links without the modules (the fuzz target passes its own list). */
#include "agent/config.h"
#include "agent/module.h"

void sl_config_defaults(struct sl_config *c)
{
	sl_config_defaults_mods(c, sl_registry, sl_registry_count);
}
