/* Flight-recorder routes (api_flight.h). */
#include "api/api_flight.h"
#include "api/api.h"
#include "api/api_internal.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/read.h"
#include "store/store.h"

int sl_api_flight_parse_id(const char *s, const char *suffix, int64_t *id)
{
	uint64_t v = 0;
	size_t i = 0;
	if (!s)
		return -1;
	for (; s[i] >= '0' && s[i] <= '9'; i++) {
		if (i >= 19 || (i == 0 && s[i] == '0'))
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (!i || v > INT64_MAX || strcmp(s + i, suffix ? suffix : ""))
		return -1;
	*id = (int64_t)v;
	return 0;
}

static const char *code_of(unsigned status)
{
	return status == 404 ? "NOT_FOUND" : status == 400 ? "INVALID_ARGUMENT" : status == 503 ? "UNAVAILABLE" : "INTERNAL";
}

static void reply(struct sl_api *api, struct reply *r, json_t *j)
{
	r->body = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!r->body) {
		sl_api_reply_error(r, 500, "INTERNAL", "out of memory");
		return;
	}
	r->len = strlen(r->body);
	r->status = 200;
	r->ctype = "application/json";
	if (r->len > api->max_body)
		sl_api_reply_error(r, 500, "INTERNAL", "flight recording body exceeds the response size bound");
}

static void recording(struct sl_api *api, struct reply *r, int64_t id)
{
	char err[256] = "";
	unsigned status = 500;
	json_t *j = sl_read_flight(api->a, id, r->redact, &status, err, sizeof(err));
	if (!j) {
		sl_api_reply_error(r, status, code_of(status), err[0] ? err : "flight recording unavailable");
		return;
	}
	size_t w = (size_t)json_integer_value(json_object_get(j, "events_withheld_fields"));
	if (w)
		atomic_fetch_add(&sl_api_counters.argv_withheld, w);
	reply(api, r, j);
}

void sl_api_h_flight_list(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r)
{
	static const char *const names[] = {"container", "limit"};
	const char *vals[2];
	char err[256] = "";
	unsigned status = 500;
	int64_t limit = 100;
	if (sl_api_params_only(p, n, names, 2, vals, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	if (vals[1] && (sl_api_flight_parse_id(vals[1], NULL, &limit) || limit > 1000)) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", "limit: expected an integer 1..1000");
		return;
	}
	if (vals[0] && (strlen(vals[0]) >= 80 ||
			strspn(vals[0], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") !=
				strlen(vals[0]))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", "container: expected 1-79 characters of [A-Za-z0-9._-]");
		return;
	}
	json_t *j = sl_read_flight_list(api->a, vals[0], (unsigned)limit, &status, err, sizeof(err));
	if (!j) {
		sl_api_reply_error(r, status, code_of(status), err[0] ? err : "flight recordings unavailable");
		return;
	}
	reply(api, r, j);
}

void sl_api_h_flight_get(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r)
{
	char err[256];
	int64_t id;
	if (sl_api_flight_parse_id(r->arg, NULL, &id)) {
		snprintf(err, sizeof(err), "no route for /api/v1/flight/%.60s: use /api/v1/flight/{id} (a positive integer)",
			 r->arg ? r->arg : "");
		sl_api_reply_error(r, 404, "NOT_FOUND", err);
		return;
	}
	if (sl_api_no_params(p, n, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	recording(api, r, id);
}

void sl_api_h_event_flight(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r)
{
	char err[256] = "";
	int64_t id;
	if (sl_api_flight_parse_id(r->arg, "/flight", &id)) {
		snprintf(err, sizeof(err), "no route for /api/v1/events/%.60s (use /api/v1/events/{id}/flight)",
			 r->arg ? r->arg : "");
		sl_api_reply_error(r, 404, "NOT_FOUND", err);
		return;
	}
	if (sl_api_no_params(p, n, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	struct sl_store *s = sl_read_store(api->a);
	if (!s) {
		sl_api_reply_error(r, 500, "INTERNAL", "event store is not open");
		return;
	}
	/* the row with this id: the first after id - 1 */
	struct sl_event_filter f = {.after_id = id - 1, .limit = 1, .ascending = 1};
	json_t *ev = sl_store_query_events(s, &f, err, sizeof(err));
	if (!ev) {
		sl_api_reply_error(r, 500, "INTERNAL", err[0] ? err : "store query failed");
		return;
	}
	json_t *e = json_array_get(ev, 0);
	if (!e || json_integer_value(json_object_get(e, "id")) != id) {
		json_decref(ev);
		snprintf(err, sizeof(err), "no event %" PRId64 " (never stored, or removed by retention)", id);
		sl_api_reply_error(r, 404, "NOT_FOUND", err);
		return;
	}
	json_t *rid = json_object_get(e, "flight_recording_id");
	int64_t rec = json_is_integer(rid) ? json_integer_value(rid) : 0;
	json_decref(ev);
	if (rec <= 0) {
		snprintf(err, sizeof(err),
			 "event %" PRId64 " has no flight recording (not a container's death or hang, or rate-limited: docs/FLIGHT.md)",
			 id);
		sl_api_reply_error(r, 404, "NOT_FOUND", err);
		return;
	}
	recording(api, r, rec);
}
