/* libFuzzer: the mount table parser (src/cgroup/mounts.c,
 * sl_cg_mounts_parse: /proc/self/mountinfo lines, octal escapes, optional
 * fields), for a v1 controller and for none. */
#include "fuzz_util.h"

#include "cgroup/attr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_cg_mounts m;
	sl_cg_mounts_parse((const char *)data, size, "memory", &m);
	sl_cg_mounts_parse((const char *)data, size, NULL, &m);
	return 0;
}
