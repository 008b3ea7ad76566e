/* libFuzzer: /proc/<pid>/maps (src/profile/symbolize_maps.c): the whole
 * file, then lookups of the first and last mapping. Seeds: symbolization
 * cases. */
#include "fuzz_util.h"

#include "profile/profile_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_map_entry *v, e;
	size_t n;
	if (!sl_maps_parse((const char *)data, size, &v, &n)) {
		if (n) {
			volatile const void *r = sl_maps_find(v, n, v[0].start);
			r = sl_maps_find(v, n, v[n - 1].end - 1);
			(void)r;
		}
		sl_maps_free(v, n);
	}
	if (!sl_maps_parse_line((const char *)data, size, &e))
		free(e.path);
	return 0;
}
