/* AutoTracing routes of the local API (docs/API.md "Captures", docs/AUTO.md):
 *
 *   GET /api/v1/auto                          detector status (public)
 *   GET /api/v1/captures?container=&detector=&limit=
 *                                             capture records, newest first
 *                                             (argv and kernel stacks withheld
 *                                             from non-admins)
 *   GET /api/v1/captures/{id}                 one record
 *   GET /api/v1/captures/{id}/profile?kind=on_cpu|off_cpu&format=pprof|folded|svg|json
 *                                             the capture's profile (admin:
 *                                             stacks), from its task's result
 */
#ifndef SANDLENS_API_CAPTURES_H
#define SANDLENS_API_CAPTURES_H

#include <microhttpd.h>

struct sl_agent;

/* 1 when url is one of the routes above. */
int sl_api_captures_match(const char *url);
/* cb(method, path) per route (sl_api_routes). */
void sl_api_captures_routes(void (*cb)(const char *method, const char *path, void *ctx), void *ctx);
/* Answer a request on one of the routes; admin: the caller is an admin. */
enum MHD_Result sl_api_captures_request(struct sl_agent *a, struct MHD_Connection *c, const char *url,
					const char *method, int admin);

#endif
