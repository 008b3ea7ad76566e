/* The event schema the CLI renders with (docs/CLI.md "events"): the kinds
 * the agent declares (GET /api/v1/schema/events, docs/API.md), each with
 * its DETAILS template (src/common/detail.h), and the common fields every
 * event carries. Fetched once per `sandlens events` run. */
#ifndef SANDLENS_CLI_SCHEMA_H
#define SANDLENS_CLI_SCHEMA_H

#include <jansson.h>
#include <stddef.h>

#include "cli/cli.h"

struct sl_detail;

#define CLI_SCHEMA_PATH "/api/v1/schema/events"
/* Longest type that widens the TYPE column (longer ones just push their row). */
#define CLI_TYPE_WIDTH_MAX 32

struct cli_kind {
	char *name;
	struct sl_detail *details; /* NULL: shown as key=value (no or a bad template) */
};

struct cli_schema {
	int loaded;            /* 1: the agent's schema; 0: none (an older agent) */
	size_t nkinds;
	struct cli_kind *kinds;
	size_t ncommon;
	char **common;         /* common field names: not shown as key=value */
	int type_width;        /* width of the TYPE column: strlen("TYPE") or the longest kind */
};

/* The schema of an agent that has none: no kinds, the common fields of
 * events before the schema existed, type_width strlen("TYPE"). */
void cli_schema_fallback(struct cli_schema *s);

/* Fills *s from a GET /api/v1/schema/events body. Returns 0, or -1 with
 * the reason in err when the body is not of that shape ("kinds" not an
 * array, a kind without a name). A kind whose template does not parse is
 * kept with details NULL and a note printed on stderr. *s is usable (the
 * fallback) after -1 too. Free with cli_schema_free. */
int cli_schema_from_json(struct cli_schema *s, const json_t *body, char *err, size_t errlen);

/* GET CLI_SCHEMA_PATH into *s. Returns CLI_OK with *s loaded, or with the
 * fallback and one line on stderr when the agent has no such route (404:
 * an older agent) or answers something else or a body not of the shape;
 * the caller goes on with key=value DETAILS. When the API cannot be
 * reached, prints it (cli_unreachable) and returns CLI_ERR. */
int cli_schema_fetch(struct cli_conn *c, struct cli_schema *s);

void cli_schema_free(struct cli_schema *s);

/* The kind called name, NULL when the schema does not list it. */
const struct cli_kind *cli_schema_kind(const struct cli_schema *s, const char *name);

/* Whether name is a common field (or one the API adds: "id", "argv_withheld"). */
int cli_schema_is_common(const struct cli_schema *s, const char *name);

/* Widens s->type_width to the types of the events in evs (a JSON array):
 * for the fallback, before the header is printed. */
void cli_schema_fit_types(struct cli_schema *s, const json_t *evs);

#endif
