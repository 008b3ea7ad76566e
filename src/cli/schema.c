/* The event schema of the CLI (src/cli/schema.h). */
#include "cli/schema.h"
#include "common/detail.h"

#include <stdlib.h>
#include <string.h>

/* Common fields of events from an agent without the schema route, plus
 * the ones the module contract adds (src/agent/module.h). */
static const char *const fallback_common[] = {
	"time",	     "type",	 "severity",	     "subject_kind", "pid",	 "ppid",
	"tid",	     "comm",	 "cgroup_id",	     "cgroup_v1_id", "cgroup_hierarchy", "container_id",
	"pod_uid",   "runtime", "qos",
};

/* Fields the API adds to every event it serves (docs/API.md). */
static const char *const api_fields[] = {"id", "argv_withheld"};

#define N(a) (sizeof(a) / sizeof((a)[0]))

void cli_schema_free(struct cli_schema *s)
{
	for (size_t i = 0; i < s->nkinds; i++) {
		free(s->kinds[i].name);
		sl_detail_free(s->kinds[i].details);
	}
	free(s->kinds);
	for (size_t i = 0; i < s->ncommon; i++)
		free(s->common[i]);
	free(s->common);
	memset(s, 0, sizeof(*s));
	s->type_width = (int)strlen("TYPE");
}

static int add_common(struct cli_schema *s, const char *name)
{
	char **c = realloc(s->common, (s->ncommon + 1) * sizeof(*c));
	if (!c)
		return -1;
	s->common = c;
	if (!(c[s->ncommon] = strdup(name)))
		return -1;
	s->ncommon++;
	return 0;
}

void cli_schema_fallback(struct cli_schema *s)
{
	memset(s, 0, sizeof(*s));
	s->type_width = (int)strlen("TYPE");
	for (size_t i = 0; i < N(fallback_common); i++)
		if (add_common(s, fallback_common[i]))
			break; /* out of memory: fewer fields hidden */
}

/* A field list entry: a name string or an object with "name". */
static const char *entry_name(const json_t *e)
{
	return json_is_string(e) ? json_string_value(e) : json_string_value(json_object_get(e, "name"));
}

int cli_schema_from_json(struct cli_schema *s, const json_t *body, char *err, size_t errlen)
{
	const json_t *kinds = json_object_get(body, "kinds"), *common = json_object_get(body, "common_fields");
	size_t i;
	const json_t *k;

	memset(s, 0, sizeof(*s));
	s->type_width = (int)strlen("TYPE");
	if (!json_is_array(kinds) || (common && !json_is_array(common))) {
		snprintf(err, errlen, "%s", !json_is_array(kinds) ? "no \"kinds\" array" : "\"common_fields\" is not an array");
		goto bad;
	}
	s->kinds = calloc(json_array_size(kinds) + 1, sizeof(*s->kinds));
	if (!s->kinds) {
		snprintf(err, errlen, "out of memory");
		goto bad;
	}
	json_array_foreach(kinds, i, k)
	{
		const char *name = json_string_value(json_object_get(k, "name"));
		const char *tmpl = json_string_value(json_object_get(k, "details"));
		char why[160];
		if (!name || !*name) {
			snprintf(err, errlen, "kind %zu has no name", i);
			goto bad;
		}
		struct cli_kind *ck = &s->kinds[s->nkinds];
		if (!(ck->name = strdup(name))) {
			snprintf(err, errlen, "out of memory");
			goto bad;
		}
		s->nkinds++;
		if (strlen(name) > (size_t)s->type_width && strlen(name) <= CLI_TYPE_WIDTH_MAX)
			s->type_width = (int)strlen(name);
		if (!tmpl || !*tmpl)
			continue;
		if (sl_detail_parse(tmpl, &ck->details, why, sizeof(why))) {
			char ename[128];
			sl_term_escape(name, strlen(name), ename, sizeof(ename));
			fprintf(stderr, "sandlens: event kind '%s': DETAILS template: %s; shown as key=value\n", ename,
				cli_esc(why));
		}
	}
	if (common) {
		json_array_foreach(common, i, k)
		{
			if (entry_name(k) && add_common(s, entry_name(k))) {
				snprintf(err, errlen, "out of memory");
				goto bad;
			}
		}
	} else {
		for (i = 0; i < N(fallback_common); i++)
			if (add_common(s, fallback_common[i])) {
				snprintf(err, errlen, "out of memory");
				goto bad;
			}
	}
	s->loaded = 1;
	return 0;
bad:
	cli_schema_free(s);
	cli_schema_fallback(s);
	return -1;
}

int cli_schema_fetch(struct cli_conn *c, struct cli_schema *s)
{
	struct cli_resp r;
	char err[200];
	json_error_t je;

	cli_schema_fallback(s);
	if (cli_http_get(c, CLI_SCHEMA_PATH, &r))
		return cli_unreachable(c, &r);
	if (r.status == 404) {
		fprintf(stderr, "sandlens: this agent does not serve " CLI_SCHEMA_PATH
				" (older than this CLI): DETAILS shown as key=value\n");
	} else if (r.status != 200) {
		fprintf(stderr, "sandlens: " CLI_SCHEMA_PATH ": HTTP %ld: DETAILS shown as key=value\n", r.status);
	} else {
		json_t *body = r.body ? json_loads(r.body, 0, &je) : NULL;
		cli_schema_free(s);
		if (!body) {
			cli_schema_fallback(s);
			fprintf(stderr, "sandlens: " CLI_SCHEMA_PATH ": the API returned invalid JSON: DETAILS shown as key=value\n");
		} else if (cli_schema_from_json(s, body, err, sizeof(err))) {
			fprintf(stderr, "sandlens: " CLI_SCHEMA_PATH ": %s: DETAILS shown as key=value\n", cli_esc(err));
		}
		json_decref(body);
	}
	cli_resp_free(&r);
	return CLI_OK;
}

const struct cli_kind *cli_schema_kind(const struct cli_schema *s, const char *name)
{
	for (size_t i = 0; name && i < s->nkinds; i++)
		if (!strcmp(s->kinds[i].name, name))
			return &s->kinds[i];
	return NULL;
}

int cli_schema_is_common(const struct cli_schema *s, const char *name)
{
	for (size_t i = 0; i < N(api_fields); i++)
		if (!strcmp(api_fields[i], name))
			return 1;
	for (size_t i = 0; i < s->ncommon; i++)
		if (!strcmp(s->common[i], name))
			return 1;
	return 0;
}

void cli_schema_fit_types(struct cli_schema *s, const json_t *evs)
{
	size_t i;
	const json_t *e;
	json_array_foreach(evs, i, e)
	{
		const char *t = json_string_value(json_object_get(e, "type"));
		/* as the table shows it (escaped) */
		size_t w = t ? strlen(cli_esc(t)) : 0;
		if (w > (size_t)s->type_width && w <= CLI_TYPE_WIDTH_MAX)
			s->type_width = (int)w;
	}
}
