/* Flight-recorder routes (docs/API.md "Flight recordings", docs/FLIGHT.md):
 *
 *   GET /api/v1/flight[?container=ID&limit=N]   recordings, newest first
 *   GET /api/v1/flight/{id}                     one recording
 *   GET /api/v1/events/{id}/flight              the recording event {id} froze or joined
 *
 * Readers get the recordings' events without their admin-only fields
 * (SL_FF_ADMIN: argv, stacks), as GET /api/v1/events (api_auth.c rules).
 * Handlers of the router in api.c (MHD threads). */
#ifndef SANDLENS_API_API_FLIGHT_H
#define SANDLENS_API_API_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

struct sl_api;
struct sl_api_param;
struct reply;

void sl_api_h_flight_list(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r);
/* r->arg: "{id}" */
void sl_api_h_flight_get(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r);
/* r->arg: "{id}/flight" (anything else under /api/v1/events/ is a 404) */
void sl_api_h_event_flight(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r);

/* Pure: a decimal id in 1..INT64_MAX with nothing after it (or, with
 * suffix, followed by exactly suffix). 0 and *id, or -1. */
int sl_api_flight_parse_id(const char *s, const char *suffix, int64_t *id);

#endif
