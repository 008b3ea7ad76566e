/* libFuzzer: the YAML config loader (src/agent/config.c,
 * sl_config_load_buf: depth and size limits, libyaml, the key table, the
 * modules' declared sections, value parsers, validation, message escaping).
 * Seeds: deploy/sandlensd.yaml. Takes every module of the registry
 * (src/modules/registry.c), as the agent does: the Makefile links the module
 * objects whole, with stubs for the agent services they call (never called
 * here: the loader reads only the ops' name and config declaration). */
#include "fuzz_util.h"

#include "agent/config.h"
#include "agent/module.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sl_config c;
	char err[512];
	sl_config_defaults_mods(&c, sl_registry, sl_registry_count);
	sl_config_load_buf(&c, "fuzz.yaml", (const char *)data, size, err, sizeof(err));
	return 0;
}
