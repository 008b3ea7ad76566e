/* GET /api/v1/sandboxes and /api/v1/sandboxes/{id}: sandbox identity
 * (src/cgroup/sandbox.h), scanned from the cgroup mounts and /proc at the
 * request (like `ps`: no state kept, no lock shared with the poll loop). */
#include "api/api_internal.h"
#include "agent/read.h"
#include "cgroup/sandbox.h"
#include "stats/stats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void answer(struct sl_api *api, struct reply *r, json_t *j)
{
	r->body = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!r->body) {
		sl_api_reply_error(r, 500, "INTERNAL", "out of memory");
		return;
	}
	r->len = strlen(r->body);
	r->status = 200;
	r->ctype = "application/json";
	if (r->len > api->max_body)
		sl_api_reply_error(r, 500, "INTERNAL", "sandboxes body exceeds the response size bound");
}

static int scan(struct sl_api *api, struct sl_sbx_list *l, struct reply *r)
{
	struct sl_sbx_scan_opts o = {.mounts = sl_read_cg_mounts(api->a), .proc_root = NULL};
	int rc = sl_sbx_scan(&o, l);
	if (rc) {
		char msg[128];
		snprintf(msg, sizeof(msg), "sandbox scan failed: %s", strerror(-rc));
		sl_api_reply_error(r, 500, "INTERNAL", msg);
	}
	return rc;
}

void sl_api_h_sandboxes(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r)
{
	char err[256];
	struct sl_sbx_list l;
	if (sl_api_no_params(p, n, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	if (scan(api, &l, r))
		return;
	answer(api, r, sl_sbx_list_json(&l));
	sl_sbx_list_free(&l);
}

void sl_api_h_sandbox(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r)
{
	char err[256];
	struct sl_sbx_list l;
	const char *id = r->arg;
	if (!sl_stats_id_valid(id)) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT",
				   "sandbox id: 1..79 characters of [A-Za-z0-9_.+-], not starting with '.' or '-'");
		return;
	}
	if (sl_api_no_params(p, n, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	if (scan(api, &l, r))
		return;
	const struct sl_sbx *s = sl_sbx_find(&l, id);
	if (!s) {
		snprintf(err, sizeof(err), "no sandbox '%s' on this node", id);
		sl_api_reply_error(r, 404, "NOT_FOUND", err);
	} else {
		answer(api, r, sl_sbx_json(s));
	}
	sl_sbx_list_free(&l);
}
