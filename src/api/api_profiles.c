/* Continuous profiling routes (api_profiles.h). */
#include "api/api_profiles.h"
#include "api/api_internal.h"
#include "agent/read.h"
#include "common/prof_format.h"
#include "common/timefmt.h"
#include "cprof/cprof.h"
#include "profile/profile.h"
#include "profile/profile_merge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Rows of the per-function delta table a diff returns at most. */
#define DIFF_MAX_FUNCTIONS 500

struct sel {
	int scope;          /* enum sl_cprof_scope */
	const char *id;
	int64_t since, until, base_since, base_until;
	int has_base;
	int fmt;            /* enum sl_prof_format */
	long limit;
};

/* Parse the parameters of the three routes; allowed: a NULL-terminated
 * list of the names this route takes besides the selection. 0, or -1 with
 * the reason in err (a 400). */
static int parse(const struct sl_api_param *p, size_t n, const char *const *allowed, struct sel *s, char *err,
		 size_t errlen)
{
	int64_t now = sl_time_now_ns();
	int nsel = 0;
	memset(s, 0, sizeof(*s));
	s->fmt = SL_FMT_JSON;
	for (size_t i = 0; i < n; i++) {
		const char *k = p[i].key, *v = p[i].value;
		int ok = 0;
		for (size_t j = 0; allowed[j]; j++)
			ok |= !strcmp(allowed[j], k);
		if (!ok && strcmp(k, "container") && strcmp(k, "pod") && strcmp(k, "host")) {
			snprintf(err, errlen, "%.64s: unknown parameter", k);
			return -1;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(p[j].key, k)) {
				snprintf(err, errlen, "%.64s: given twice", k);
				return -1;
			}
		if (!v || !*v) {
			snprintf(err, errlen, "%.64s: empty value", k);
			return -1;
		}
		if (!strcmp(k, "container") || !strcmp(k, "pod")) {
			nsel++;
			s->scope = !strcmp(k, "pod") ? SL_CPROF_POD : SL_CPROF_CONTAINER;
			s->id = v;
			if (strlen(v) > 255) {
				snprintf(err, errlen, "%s: longer than 255 bytes", k);
				return -1;
			}
		} else if (!strcmp(k, "host")) {
			if (strcmp(v, "true") && strcmp(v, "1")) {
				snprintf(err, errlen, "host: '%.32s' is not true or 1 (the only values: host=true selects the host's windows)", v);
				return -1;
			}
			nsel++;
			s->scope = SL_CPROF_HOST;
		} else if (!strcmp(k, "format")) {
			s->fmt = sl_prof_format_from_name(v);
			if (s->fmt < 0) {
				snprintf(err, errlen, "format: '%.32s' is not pprof, folded, svg, json or html", v);
				return -1;
			}
		} else if (!strcmp(k, "limit")) {
			char *end;
			s->limit = strtol(v, &end, 10);
			if (*end || s->limit < 1 || s->limit > 10000) {
				snprintf(err, errlen, "limit: '%.32s' is not 1..10000", v);
				return -1;
			}
		} else {
			int64_t *t = !strcmp(k, "since")        ? &s->since
				     : !strcmp(k, "until")      ? &s->until
				     : !strcmp(k, "base_since") ? &s->base_since
								: &s->base_until;
			int prc = sl_time_parse_point(v, now, t);
			if (prc == -ERANGE || (!prc && *t <= 0)) {
				snprintf(err, errlen, "%s: '%.64s' is out of range (before or at the epoch, or too far)", k, v);
				return -1;
			}
			if (prc) {
				snprintf(err, errlen, "%s: '%.64s' is not an RFC 3339 time, a duration ago (90s, 5m, 2h) or ns since the epoch", k, v);
				return -1;
			}
			if (t == &s->base_since)
				s->has_base = 1;
		}
	}
	if (nsel != 1) {
		snprintf(err, errlen, "give exactly one of container=ID, pod=UID, host=true");
		return -1;
	}
	if (s->since && s->until && s->since >= s->until) {
		snprintf(err, errlen, "since must be before until");
		return -1;
	}
	if (s->base_since && s->base_until && s->base_since >= s->base_until) {
		snprintf(err, errlen, "base_since must be before base_until");
		return -1;
	}
	return 0;
}

static void reply_error_rc(struct reply *r, int rc, const char *err)
{
	if (rc == -ENOENT)
		sl_api_reply_error(r, 404, "NOT_FOUND", err);
	else if (rc == -EINVAL)
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
	else
		sl_api_reply_error(r, 500, "INTERNAL", err[0] ? err : strerror(-rc));
}

/* r's body from what fn writes to a memory stream; 500 when it fails. */
static void reply_stream(struct reply *r, char *buf, size_t len, int rc, const char *ctype)
{
	if (rc) {
		free(buf);
		sl_api_reply_error(r, 500, "INTERNAL", rc == -ENOMEM ? "out of memory" : "rendering the profile failed");
		return;
	}
	r->body = buf;
	r->len = len;
	r->status = 200;
	r->ctype = ctype;
}

static int kaddrs(const struct reply *r) { return sl_kaddrs_visible(NULL, r->cap_syslog); }

/* Title metadata of a flame graph of selection s over [from, to) ns
 * (0 = the profile's own range); host: a buffer for the node name. */
static struct sl_flame_opts flame_opts(const struct sel *s, int64_t from, int64_t to, char *host, size_t hostlen)
{
	struct sl_flame_opts o = {0};
	if (gethostname(host, hostlen) == 0) {
		host[hostlen - 1] = 0;
		o.host = host;
	}
	if (s->scope == SL_CPROF_CONTAINER)
		o.container = s->id;
	else if (s->scope == SL_CPROF_POD)
		o.pod = s->id;
	else
		o.container = "(every process of the host)";
	o.start_ns = from > 0 ? (uint64_t)from : 0;
	o.end_ns = to > 0 ? (uint64_t)to : 0;
	return o;
}

void sl_api_h_profiles(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r)
{
	static const char *const allowed[] = {"since", "until", "format", NULL};
	char err[300] = "";
	struct sel s;
	struct sl_cprof *cp = sl_read_cprof(api->a);
	if (parse(p, n, allowed, &s, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	if (!cp) {
		sl_api_reply_error(r, 503, "UNAVAILABLE", "continuous profiling is off (profiling.continuous.enabled) or failed to start: see /healthz");
		return;
	}
	struct sl_profile *prof = NULL;
	int rc = sl_cprof_query(cp, s.scope, s.id, s.since, s.until, &prof, NULL, err, sizeof(err));
	if (rc) {
		reply_error_rc(r, rc, err);
		return;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	char host[256];
	struct sl_flame_opts o = flame_opts(&s, s.since, s.until, host, sizeof(host));
	rc = f ? sl_profile_write_opts(prof, s.fmt, kaddrs(r), &o, f) : -ENOMEM;
	if (f && fclose(f) && !rc)
		rc = -EIO;
	sl_profile_free(prof);
	reply_stream(r, buf, len, rc, sl_prof_format_mime(s.fmt));
}

/* The differential flame graph (svg, html, folded "stack base cur") of
 * the two ranges: sl_profile_write_diff (docs/PROFILING.md "Differential
 * flame graphs"). */
static int write_diff_flame(const struct sel *s, const struct sl_profile *base, const struct sl_profile *cur,
			    FILE *out)
{
	char host[256];
	struct sl_flame_opts o = flame_opts(s, s->since, s->until, host, sizeof(host));
	return sl_profile_write_diff(base, cur, s->fmt, &o, out);
}

void sl_api_h_profiles_diff(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r)
{
	static const char *const allowed[] = {"since", "until", "base_since", "base_until", "format", NULL};
	char err[300] = "";
	struct sel s;
	struct sl_cprof *cp = sl_read_cprof(api->a);
	if (parse(p, n, allowed, &s, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	if (!s.has_base) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", "base_since: required (the start of the base range)");
		return;
	}
	if (!cp) {
		sl_api_reply_error(r, 503, "UNAVAILABLE", "continuous profiling is off (profiling.continuous.enabled) or failed to start: see /healthz");
		return;
	}
	struct sl_profile *base = NULL, *cur = NULL;
	int rc = sl_cprof_query(cp, s.scope, s.id, s.base_since, s.base_until, &base, NULL, err, sizeof(err));
	if (rc) {
		char e2[360];
		snprintf(e2, sizeof(e2), "base range: %s", err);
		reply_error_rc(r, rc, e2);
		return;
	}
	rc = sl_cprof_query(cp, s.scope, s.id, s.since, s.until, &cur, NULL, err, sizeof(err));
	if (rc) {
		char e2[360];
		snprintf(e2, sizeof(e2), "new range: %s", err);
		sl_profile_free(base);
		reply_error_rc(r, rc, e2);
		return;
	}
	if (s.fmt == SL_FMT_JSON) {
		json_t *j = sl_profile_delta_json(base, cur, DIFF_MAX_FUNCTIONS);
		sl_profile_free(base);
		sl_profile_free(cur);
		char *body = j ? json_dumps(j, JSON_COMPACT) : NULL;
		json_decref(j);
		reply_stream(r, body, body ? strlen(body) : 0, body ? 0 : -ENOMEM, "application/json");
		return;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		rc = -ENOMEM;
	else if (s.fmt == SL_FMT_PPROF)
		rc = sl_profile_write_pprof_diff(base, cur, kaddrs(r), f);
	else
		rc = write_diff_flame(&s, base, cur, f);
	if (f && fclose(f) && !rc)
		rc = -EIO;
	sl_profile_free(base);
	sl_profile_free(cur);
	if (rc == -EINVAL) {
		free(buf);
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT",
				   "a diff is served as json, pprof, svg, html or folded, of two ranges of one profile kind");
		return;
	}
	reply_stream(r, buf, len, rc, sl_prof_format_mime(s.fmt));
}

void sl_api_h_profiles_windows(struct sl_api *api, const struct sl_api_param *p, size_t n, struct reply *r)
{
	static const char *const allowed[] = {"since", "until", "limit", NULL};
	char err[300] = "";
	struct sel s;
	unsigned status = 200;
	struct sl_cprof *cp = sl_read_cprof(api->a);
	if (parse(p, n, allowed, &s, err, sizeof(err))) {
		sl_api_reply_error(r, 400, "INVALID_ARGUMENT", err);
		return;
	}
	if (!cp) {
		sl_api_reply_error(r, 503, "UNAVAILABLE", "continuous profiling is off (profiling.continuous.enabled) or failed to start: see /healthz");
		return;
	}
	json_t *j = sl_cprof_windows_json(cp, s.scope, s.id, s.since, s.until, (size_t)s.limit, &status, err,
					  sizeof(err));
	if (!j) {
		sl_api_reply_error(r, status, status == 400 ? "INVALID_ARGUMENT" : "INTERNAL", err);
		return;
	}
	char *body = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	reply_stream(r, body, body ? strlen(body) : 0, body ? 0 : -ENOMEM, "application/json");
}
