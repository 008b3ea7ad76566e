/* Event kinds of every module (module contract: struct sl_event_kind):
 * the global table the pipeline, /metrics, the API's type filter and GET
 * /api/v1/schema/events read. Pure (no agent state), so API tests and fuzz
 * targets can build one from any list of modules. */
#ifndef SANDLENS_AGENT_KINDS_H
#define SANDLENS_AGENT_KINDS_H

#include <jansson.h>
#include <stddef.h>

#include "agent/module.h"

struct sl_kind_ent {
	const struct sl_event_kind *k;
	const struct sl_module_ops *mod;
	unsigned module_idx; /* index of mod in the list given to sl_kinds_build */
};

struct sl_kinds {
	unsigned n;
	struct sl_kind_ent e[SL_MAX_KINDS];
};

/* The common fields the pipeline adds to every event (docs/API.md
 * "Events"): name, type, flags (SL_FF_OPTIONAL for the subject-specific
 * ones) and doc. */
extern const struct sl_field sl_common_fields[];
extern const unsigned sl_ncommon_fields;

/* Build ks from the kinds of ops[0..n) in order; kind_base[i] (may be NULL)
 * gets the global index of ops[i]->kinds[0]. Checks every declaration: kind
 * names [a-z][a-z0-9_]* and unique over all modules, field names
 * [a-z][a-z0-9_]* unique within the kind and not one of the common fields
 * the pipeline always sets, field types and severities in range, and the
 * DETAILS template (sl_detail_check against the kind's fields plus the
 * common ones). Returns 0, or -1 with "<module>: kind '<name>': <reason>"
 * in err. */
int sl_kinds_build(struct sl_kinds *ks, const struct sl_module_ops *const *ops, unsigned n, unsigned *kind_base,
		   char *err, size_t errlen);

/* Global index of kind name, or -1. */
int sl_kinds_find(const struct sl_kinds *ks, const char *name);

/* Severity of one event of kind i with module fields f (severity_of when
 * the kind has one, else the declared severity), clamped to the enum. */
int sl_kinds_severity(const struct sl_kinds *ks, unsigned i, const json_t *f);

/* "debug" | "info" | "notice" | "warning" | "error" | "critical"; "?" */
const char *sl_severity_name(int sev);
/* "task" | "cgroup" | "netns" | "device" | "cpu"; "?" */
const char *sl_subject_kind_name(int kind);
/* "int" | "uint" | "real" | "bool" | "string" | "object" | "array"; "?" */
const char *sl_field_type_name(int type);

/* GET /api/v1/schema/events body: {"kinds":[{name, module, severity, doc,
 * details, fields:[{name, type, optional, admin, doc}]}], "common_fields":
 * [...same field shape]} (new reference). */
json_t *sl_kinds_schema_json(const struct sl_kinds *ks);

/* Remove the SL_FF_ADMIN fields of each event of the JSON array events
 * (by its "type"), adding "<field>_withheld": true for each one removed.
 * Returns the number of events that lost a field. */
size_t sl_kinds_withhold(const struct sl_kinds *ks, json_t *events);

#endif
