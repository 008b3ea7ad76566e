/* Copies of BTF enum value names (see btf_enum.h). */
#include "agent/btf_enum.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void sl_btf_enum_free(struct sl_btf_enum *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n; i++)
		free(e->names[i]);
	free(e->names);
	free(e->vals);
	memset(e, 0, sizeof(*e));
}

int sl_btf_enum_copy(const struct btf *btf, const char *name, struct sl_btf_enum *out)
{
	memset(out, 0, sizeof(*out));
	if (!btf || !name)
		return -ENOENT;
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_ENUM);
	if (id < 0)
		id = btf__find_by_name_kind(btf, name, BTF_KIND_ENUM64);
	if (id < 0)
		return -ENOENT;
	const struct btf_type *t = btf__type_by_id(btf, (unsigned)id);
	size_t n = btf_vlen(t);
	int is64 = btf_is_enum64(t);
	int sign = btf_kflag(t); /* BTF_KIND_ENUM(64) kind_flag: values are signed */
	out->vals = calloc(n ? n : 1, sizeof(*out->vals));
	out->names = calloc(n ? n : 1, sizeof(*out->names));
	if (!out->vals || !out->names) {
		sl_btf_enum_free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const char *nm;
		if (is64) {
			const struct btf_enum64 *e = btf_enum64(t) + i;
			out->vals[i] = (int64_t)btf_enum64_value(e);
			nm = btf__name_by_offset(btf, e->name_off);
		} else {
			const struct btf_enum *e = btf_enum(t) + i;
			out->vals[i] = sign ? (int64_t)e->val : (int64_t)(uint32_t)e->val;
			nm = btf__name_by_offset(btf, e->name_off);
		}
		if (!(out->names[i] = strdup(nm ? nm : ""))) {
			out->n = i;
			sl_btf_enum_free(out);
			return -ENOMEM;
		}
		out->n = i + 1;
	}
	return 0;
}

const char *sl_btf_enum_name(const struct sl_btf_enum *e, int64_t val)
{
	if (!e)
		return NULL;
	for (size_t i = 0; i < e->n; i++)
		if (e->vals[i] == val)
			return e->names[i];
	return NULL;
}
