/* libFuzzer: POST /api/v1/tasks bodies (src/task/spec.c,
 * sl_task_spec_parse), loaded as the API loads them (jansson,
 * JSON_REJECT_DUPLICATES). */
#include "fuzz_util.h"

#include "task/task.h"

#include <jansson.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *body = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
	if (!body)
		return 0;
	const struct sl_task_limits lim = {
		.max_duration_ns = 300000000000ull,
		.default_duration_ns = 10000000000ull,
		.default_hz = 99,
		.max_hz = 1000,
		.default_min_off_cpu_ns = 1000000ull,
	};
	struct sl_task_spec spec;
	char err[256];
	sl_task_spec_parse(body, &lim, &spec, err, sizeof(err));
	json_decref(body);
	return 0;
}
