#include "agent/probe.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct btf *vmlinux(void)
{
	struct btf *b = btf__load_vmlinux_btf();
	return libbpf_get_error(b) ? NULL : b;
}

int sl_btf_enum_value(const char *enum_name, const char *name, long *out)
{
	struct btf *b = vmlinux();
	int rc = -ENOENT;

	if (!b)
		return -errno ? -errno : -ENOENT;
	int id = btf__find_by_name_kind(b, enum_name, BTF_KIND_ENUM);
	if (id > 0) {
		const struct btf_type *t = btf__type_by_id(b, id);
		const struct btf_enum *e = btf_enum(t);
		for (int i = 0; i < btf_vlen(t); i++, e++) {
			if (!strcmp(btf__name_by_offset(b, e->name_off), name)) {
				*out = e->val;
				rc = 0;
				break;
			}
		}
	}
	btf__free(b);
	return rc;
}

int sl_btf_tp_arg_is_ptr(const char *tp, int idx)
{
	char tname[128];
	struct btf *b = vmlinux();
	int rc = -ENOENT;

	if (!b)
		return -ENOENT;
	snprintf(tname, sizeof(tname), "btf_trace_%s", tp);
	int id = btf__find_by_name_kind(b, tname, BTF_KIND_TYPEDEF);
	if (id > 0) {
		const struct btf_type *t = btf__type_by_id(b, id);
		t = btf__type_by_id(b, t->type); /* PTR */
		if (t && btf_is_ptr(t))
			t = btf__type_by_id(b, t->type); /* FUNC_PROTO */
		if (t && btf_is_func_proto(t) && idx + 1 < btf_vlen(t)) {
			const struct btf_param *p = btf_params(t) + idx + 1;
			int aid = btf__resolve_type(b, p->type);
			const struct btf_type *at = aid > 0 ? btf__type_by_id(b, aid) : NULL;
			rc = at && btf_is_ptr(at) ? 1 : 0;
		}
	}
	btf__free(b);
	return rc;
}

int sl_kprobes_available(void)
{
	return access("/sys/bus/event_source/devices/kprobe/type", R_OK) == 0;
}
