/* libFuzzer: runc state.json (src/cgroup/runc_state.c,
 * sl_runc_index_add_state: "id" and "cgroup_paths" into the index), the
 * input given twice (a second state listing the same directories). */
#include "fuzz_util.h"

#include "cgroup/runc_state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_runc_index *ix = sl_runc_index_new("/nonexistent/sl-fuzz-runc");
	if (!ix)
		return 0;
	sl_runc_index_add_state(ix, (const char *)data, size);
	sl_runc_index_add_state(ix, (const char *)data, size);
	volatile size_t n = sl_runc_index_size(ix);
	(void)n;
	sl_runc_index_free(ix);
	return 0;
}
