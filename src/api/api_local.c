/* In-process API requests (sl_api_local, api_internal.h): what the MCP
 * route's tools use, with the same rules as a request over HTTP. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/read.h"
#include "api/api_internal.h"
#include "api/api_tasks.h"

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Decodes %XX and '+' in place; returns the length (may hold NUL bytes). */
static size_t unescape(char *s)
{
	size_t o = 0;
	for (size_t i = 0; s[i]; i++) {
		if (s[i] == '%' && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
			s[o++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		} else {
			s[o++] = s[i] == '+' ? ' ' : s[i];
		}
	}
	s[o] = 0;
	return o;
}

/* Splits query q (modified in place) into ps as microhttpd would. 0 or
 * -EINVAL with the reason in err. */
static int collect(char *q, struct sl_api_params *ps, char *err, size_t errlen)
{
	memset(ps, 0, sizeof(*ps));
	for (char *save = NULL, *kv = strtok_r(q, "&", &save); kv; kv = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(kv, '=');
		if (eq)
			*eq = 0;
		size_t kl = unescape(kv), vl = eq ? unescape(eq + 1) : 0;
		if (sl_api_params_add(ps, kv, kl, eq ? eq + 1 : NULL, vl))
			break;
	}
	return sl_api_params_check(ps, err, errlen);
}

static int finish(struct reply *r, unsigned *status, char **out)
{
	if (!r->body)
		return -ENOMEM;
	*status = r->status;
	*out = r->body;
	return 0;
}

int sl_api_local(struct sl_api *api, const struct sl_api_caller *caller, const char *method, const char *target,
		 const char *body, unsigned *status, char **out)
{
	struct reply r = {0};
	struct sl_api_params ps;
	char err[256];
	size_t tl = strlen(target);
	char *path = malloc(tl + 1);
	*out = NULL;
	if (!path)
		return -ENOMEM;
	memcpy(path, target, tl + 1);
	char *q = strchr(path, '?');
	if (q)
		*q++ = 0;
	r.api = api;
	int admin = sl_api_caller_is_admin(caller);
	enum sl_api_access need = sl_api_route_access(method, path);
	struct sl_module *vm;
	const struct sl_api_view *view = NULL;
	static const char v1[] = "/api/v1/";
	if (!strncmp(path, v1, sizeof(v1) - 1) && !sl_read_view_find(api->a, path + sizeof(v1) - 1, &vm, &view) &&
	    view->admin_only)
		need = SL_ACCESS_ADMIN;
	if (!strcmp(path, SL_API_MCP_PATH)) {
		sl_api_reply_error(&r, 404, "NOT_FOUND", "no route for /mcp in process");
	} else if (need == SL_ACCESS_ADMIN && !admin) {
		atomic_fetch_add(&sl_api_counters.denied, 1);
		sl_api_reply_error(&r, 403, "PERMISSION_DENIED",
				   "this route is for admins: connect to the unix socket as root or as a member of api.admin_group, or send 'Authorization: Bearer <token>' with the token of api.token_file");
	} else if (q && collect(q, &ps, err, sizeof(err))) {
		sl_api_reply_error(&r, 400, "INVALID_ARGUMENT", err);
	} else {
		if (!q)
			memset(&ps, 0, sizeof(ps));
		if (sl_api_tasks_match(path))
			sl_api_tasks_local(api->a, method, path, ps.p, ps.n, body, sl_api_caller_cap_syslog(caller), &r);
		else if (strcmp(method, "GET"))
			sl_api_reply_error(&r, 405, "METHOD_NOT_ALLOWED", "in process: GET only on this route");
		else
			sl_api_route_local(api, path, ps.p, ps.n, need == SL_ACCESS_REDACTED && !admin, &r);
	}
	free(path);
	return finish(&r, status, out);
}
