/* GET /api/v1/sched (docs/API.md, docs/SCHED.md): the sched module's last
 * per-container snapshot. Runs on API threads; reads only the module's
 * reference-counted snapshot (sl_sched_json). */
#include "api/api.h"
#include "modules/sched.h"

#include <stdlib.h>
#include <string.h>

char *sl_api_sched_body(struct sl_agent *a, const struct sl_api_param *p, size_t n, size_t max,
			unsigned *status, size_t *len)
{
	char err[256];
	const char *why = "";
	json_t *j;
	char *body;

	if (sl_api_no_params(p, n, err, sizeof(err))) {
		*status = 400;
		return sl_api_error_body("INVALID_ARGUMENT", err, len);
	}
	j = sl_sched_json(a, &why);
	if (!j) {
		*status = 503;
		return sl_api_error_body("UNAVAILABLE", why, len);
	}
	body = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!body) {
		*status = 500;
		return sl_api_error_body("INTERNAL", "out of memory", len);
	}
	*len = strlen(body);
	if (*len > max) {
		free(body);
		*status = 500;
		return sl_api_error_body("INTERNAL", "sched body exceeds the response size bound", len);
	}
	*status = 200;
	return body;
}
