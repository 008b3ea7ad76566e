/* libFuzzer: /tmp/perf-<pid>.map JIT symbol files (src/profile/symbolize.c
 * sl_perfmap_parse): parse and lookups. */
#include "fuzz_util.h"

#include "profile/symbolize_proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_jit_sym *v;
	size_t n;
	if (sl_perfmap_parse((const char *)data, size, &v, &n))
		return 0;
	volatile const void *r = sl_perfmap_lookup(v, n, 0x7f0000000050ull);
	r = sl_perfmap_lookup(v, n, 0);
	(void)r;
	sl_perfmap_free(v, n);
	return 0;
}
