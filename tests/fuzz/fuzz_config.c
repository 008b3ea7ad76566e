/* libFuzzer: the YAML config loader (src/agent/config.c,
 * sl_config_load_buf: depth and size limits, libyaml, the key table,
 * value parsers, validation). Seeds: deploy/sandlensd.yaml. */
#include "fuzz_util.h"

#include "agent/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sl_config c;
	char err[512];
	sl_config_defaults(&c);
	sl_config_load_buf(&c, "fuzz.yaml", (const char *)data, size, err, sizeof(err));
	return 0;
}
