/* Continuous profiling routes (docs/API.md "Continuous profiles"): admin
 * only (profiles reveal stacks; api_auth.c), served from the stored
 * windows (src/cprof/cprof.h). Handlers of api.c's route table. */
#ifndef SANDLENS_API_API_PROFILES_H
#define SANDLENS_API_API_PROFILES_H

#include <stddef.h>

struct sl_api;
struct sl_api_param;
struct reply;

/* GET /api/v1/profiles?container=ID|pod=UID|host=true[&since=T][&until=T][&format=F]:
 * the merged profile of the windows overlapping [since, until) in format
 * pprof | folded | svg | json (default json). */
void sl_api_h_profiles(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r);
/* GET /api/v1/profiles/diff?<selection>&base_since=T[&base_until=T][&since=T][&until=T][&format=F]:
 * base = the windows of [base_since, base_until), new = those of [since,
 * until); format json (per-function deltas) or pprof (new with base
 * subtracted). */
void sl_api_h_profiles_diff(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r);
/* GET /api/v1/profiles/windows?<selection>[&since=T][&until=T][&limit=N]:
 * the stored windows, oldest first. */
void sl_api_h_profiles_windows(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r);

#endif
