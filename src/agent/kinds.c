/* The global table of event kinds (kinds.h): build and check it from the
 * modules' declarations, answer the schema route, withhold admin fields. */
#include "agent/kinds.h"
#include "common/detail.h"

#include <stdio.h>
#include <string.h>

const struct sl_field sl_common_fields[] = {
	{"id", SL_FT_UINT, SL_FF_OPTIONAL, "store row id (API answers; not in follow-free raw events)"},
	{"time", SL_FT_STR, 0, "RFC 3339 UTC with ns: when the kernel saw it"},
	{"type", SL_FT_STR, 0, "the kind's name"},
	{"severity", SL_FT_STR, 0, "debug | info | notice | warning | error | critical"},
	{"subject_kind", SL_FT_STR, 0, "task | cgroup | netns | device | cpu: what the event is about"},
	{"pid", SL_FT_UINT, SL_FF_OPTIONAL, "task subject: process id (tgid)"},
	{"ppid", SL_FT_UINT, SL_FF_OPTIONAL, "task subject: parent's process id"},
	{"comm", SL_FT_STR, SL_FF_OPTIONAL, "task subject: command name"},
	{"netns_inode", SL_FT_UINT, SL_FF_OPTIONAL, "netns subject: inode of the network namespace"},
	{"device", SL_FT_STR, SL_FF_OPTIONAL, "device subject: disk:M:m, nic:NAME, pci:BDF or gpu:N"},
	{"cpu", SL_FT_UINT, SL_FF_OPTIONAL, "cpu subject: the CPU (a module field of the same name wins)"},
	{"cgroup_id", SL_FT_UINT, 0, "cgroup id used for attribution (0 when none)"},
	{"cgroup_hierarchy", SL_FT_STR, 0, "v2 | v1: the hierarchy cgroup_id belongs to"},
	{"container_id", SL_FT_STR, 0, "container id, \"\" for the host"},
	{"pod_uid", SL_FT_STR, 0, "pod UID, \"\" when none"},
	{"runtime", SL_FT_STR, 0, "container runtime, \"host\" for the host, \"\" when unknown"},
	{"qos", SL_FT_STR, 0, "Kubernetes QoS class, \"\" when none"},
	{"namespace", SL_FT_STR, 0, "Kubernetes namespace from the runtime's state on the node, \"\" when not found"},
	{"pod", SL_FT_STR, 0, "Kubernetes pod name, \"\" when not found"},
	{"container", SL_FT_STR, 0, "container name in the pod spec, \"\" when not found or a sandbox"},
	{"flight_recording_id", SL_FT_UINT, SL_FF_OPTIONAL,
	 "the container's flight recording this event froze or joined (docs/FLIGHT.md); absent when none"},
};
const unsigned sl_ncommon_fields = sizeof(sl_common_fields) / sizeof(sl_common_fields[0]);

/* Common names a module field may not reuse (the pipeline sets them on
 * every event it stores; the subject-specific ones it sets only when the
 * module did not). */
static int reserved(const char *n)
{
	static const char *const r[] = {"id", "time", "type", "severity", "subject_kind", "pid", "ppid",
					"cgroup_id", "cgroup_hierarchy", "container_id", "pod_uid", "runtime",
					"qos", "namespace", "pod", "container", "flight_recording_id"};
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (!strcmp(n, r[i]))
			return 1;
	return 0;
}

static int name_ok(const char *s, int underscore)
{
	if (!s || !(*s >= 'a' && *s <= 'z'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || (underscore && *s == '_')))
			return 0;
	return 1;
}

static int check_kind(const struct sl_module_ops *mod, const struct sl_event_kind *k, char *err, size_t errlen)
{
	const char *names[96];
	size_t nn = 0;

	if (!name_ok(k->name, 1)) {
		snprintf(err, errlen, "%s: kind '%s': name is not [a-z][a-z0-9_]*", mod->name, k->name ? k->name : "");
		return -1;
	}
	if (k->severity < SL_SEV_DEBUG || k->severity > SL_SEV_CRITICAL) {
		snprintf(err, errlen, "%s: kind '%s': severity %d out of range", mod->name, k->name, k->severity);
		return -1;
	}
	if (k->nfields + sl_ncommon_fields > sizeof(names) / sizeof(names[0])) {
		snprintf(err, errlen, "%s: kind '%s': too many fields", mod->name, k->name);
		return -1;
	}
	for (unsigned i = 0; i < k->nfields; i++) {
		const struct sl_field *f = &k->fields[i];
		if (!name_ok(f->name, 1) || f->type < SL_FT_INT || f->type > SL_FT_ARRAY ||
		    (f->flags & ~(unsigned)(SL_FF_OPTIONAL | SL_FF_ADMIN)) || !f->doc) {
			snprintf(err, errlen, "%s: kind '%s': field '%s' is malformed (name, type, flags, doc)", mod->name,
				 k->name, f->name ? f->name : "");
			return -1;
		}
		if (reserved(f->name)) {
			snprintf(err, errlen, "%s: kind '%s': field '%s' is a common field the pipeline sets", mod->name,
				 k->name, f->name);
			return -1;
		}
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(k->fields[j].name, f->name)) {
				snprintf(err, errlen, "%s: kind '%s': field '%s' declared twice", mod->name, k->name,
					 f->name);
				return -1;
			}
		names[nn++] = f->name;
	}
	for (unsigned i = 0; i < sl_ncommon_fields; i++)
		names[nn++] = sl_common_fields[i].name;
	if (!k->details || !k->doc) {
		snprintf(err, errlen, "%s: kind '%s': no DETAILS template or doc", mod->name, k->name);
		return -1;
	}
	char why[160];
	if (sl_detail_check(k->details, names, nn, why, sizeof(why))) {
		snprintf(err, errlen, "%s: kind '%s': DETAILS template: %s", mod->name, k->name, why);
		return -1;
	}
	return 0;
}

int sl_kinds_build(struct sl_kinds *ks, const struct sl_module_ops *const *ops, unsigned n, unsigned *kind_base,
		   char *err, size_t errlen)
{
	memset(ks, 0, sizeof(*ks));
	for (unsigned m = 0; m < n; m++) {
		if (!name_ok(ops[m]->name, 0)) {
			snprintf(err, errlen, "module '%s': name is not [a-z][a-z0-9]*", ops[m]->name ? ops[m]->name : "");
			return -1;
		}
		for (unsigned j = 0; j < m; j++)
			if (!strcmp(ops[j]->name, ops[m]->name)) {
				snprintf(err, errlen, "module '%s': listed twice in the registry", ops[m]->name);
				return -1;
			}
		if (kind_base)
			kind_base[m] = ks->n;
		for (unsigned i = 0; i < ops[m]->nkinds; i++) {
			const struct sl_event_kind *k = &ops[m]->kinds[i];
			if (check_kind(ops[m], k, err, errlen))
				return -1;
			int other = sl_kinds_find(ks, k->name);
			if (other >= 0) {
				snprintf(err, errlen, "%s: kind '%s': name already used by module %s", ops[m]->name, k->name,
					 ks->e[other].mod->name);
				return -1;
			}
			if (ks->n >= SL_MAX_KINDS) {
				snprintf(err, errlen, "%s: more than SL_MAX_KINDS (%d) kinds in all", ops[m]->name,
					 SL_MAX_KINDS);
				return -1;
			}
			ks->e[ks->n++] = (struct sl_kind_ent){k, ops[m], m};
		}
	}
	return 0;
}

int sl_kinds_find(const struct sl_kinds *ks, const char *name)
{
	for (unsigned i = 0; name && i < ks->n; i++)
		if (!strcmp(ks->e[i].k->name, name))
			return (int)i;
	return -1;
}

int sl_kinds_severity(const struct sl_kinds *ks, unsigned i, const json_t *f)
{
	if (i >= ks->n)
		return SL_SEV_INFO;
	const struct sl_event_kind *k = ks->e[i].k;
	int s = k->severity_of ? k->severity_of(f) : k->severity;
	return s < SL_SEV_DEBUG ? SL_SEV_DEBUG : s > SL_SEV_CRITICAL ? SL_SEV_CRITICAL : s;
}

const char *sl_severity_name(int sev)
{
	static const char *const n[] = {"debug", "info", "notice", "warning", "error", "critical"};
	return sev >= SL_SEV_DEBUG && sev <= SL_SEV_CRITICAL ? n[sev] : "?";
}

const char *sl_subject_kind_name(int kind)
{
	static const char *const n[] = {"task", "cgroup", "netns", "device", "cpu"};
	return kind >= SL_SUBJ_TASK && kind <= SL_SUBJ_CPU ? n[kind] : "?";
}

const char *sl_field_type_name(int type)
{
	static const char *const n[] = {"int", "uint", "real", "bool", "string", "object", "array"};
	return type >= SL_FT_INT && type <= SL_FT_ARRAY ? n[type] : "?";
}

static json_t *fields_json(const struct sl_field *f, unsigned n)
{
	json_t *a = json_array();
	for (unsigned i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:s,s:s,s:b,s:b,s:s}", "name", f[i].name, "type",
						   sl_field_type_name(f[i].type), "optional",
						   (f[i].flags & SL_FF_OPTIONAL) != 0, "admin",
						   (f[i].flags & SL_FF_ADMIN) != 0, "doc", f[i].doc));
	return a;
}

json_t *sl_kinds_schema_json(const struct sl_kinds *ks)
{
	json_t *kinds = json_array();
	for (unsigned i = 0; i < ks->n; i++) {
		const struct sl_event_kind *k = ks->e[i].k;
		json_array_append_new(kinds, json_pack("{s:s,s:s,s:s,s:s,s:s,s:o}", "name", k->name, "module",
						       ks->e[i].mod->name, "severity", sl_severity_name(k->severity),
						       "doc", k->doc, "details", k->details, "fields",
						       fields_json(k->fields, k->nfields)));
	}
	return json_pack("{s:o,s:o}", "kinds", kinds, "common_fields",
			 fields_json(sl_common_fields, sl_ncommon_fields));
}

size_t sl_kinds_withhold(const struct sl_kinds *ks, json_t *events)
{
	size_t i, n = 0;
	json_t *ev;

	json_array_foreach(events, i, ev)
	{
		int ki = sl_kinds_find(ks, json_string_value(json_object_get(ev, "type")));
		int cut = 0;
		if (ki < 0 || !json_is_object(ev))
			continue;
		const struct sl_event_kind *k = ks->e[ki].k;
		for (unsigned f = 0; f < k->nfields; f++) {
			char wn[96];
			if (!(k->fields[f].flags & SL_FF_ADMIN) || !json_object_get(ev, k->fields[f].name))
				continue;
			json_object_del(ev, k->fields[f].name);
			snprintf(wn, sizeof(wn), "%s_withheld", k->fields[f].name);
			json_object_set_new(ev, wn, json_true());
			cut = 1;
		}
		n += (size_t)cut;
	}
	return n;
}
