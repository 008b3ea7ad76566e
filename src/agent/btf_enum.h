/* The names of one enum's values, copied out of a BTF (typically the
 * kernel's, /sys/kernel/btf/vmlinux): a module that names codes of a kernel
 * enum in its events keeps this small table instead of the parsed vmlinux
 * BTF (~5.5 MB of raw BTF plus libbpf's type index, for the agent's life). */
#ifndef SANDLENS_AGENT_BTF_ENUM_H
#define SANDLENS_AGENT_BTF_ENUM_H

#include <stddef.h>
#include <stdint.h>

struct btf;

struct sl_btf_enum {
	size_t n;
	int64_t *vals;  /* n values, as the BTF has them (signed per the kind flag) */
	char **names;   /* n names, owned */
};

/* Copy the values and names of the enum called name (BTF_KIND_ENUM or
 * BTF_KIND_ENUM64, include/uapi/linux/btf.h) from btf into *out (zeroed
 * first). Returns 0, -ENOENT when btf is NULL or has no such enum, -ENOMEM
 * (*out then empty). */
int sl_btf_enum_copy(const struct btf *btf, const char *name, struct sl_btf_enum *out);

/* The name of value val (of aliases, two names of one value, the first in
 * the BTF), or NULL when the enum has no such value (or the table is
 * empty). */
const char *sl_btf_enum_name(const struct sl_btf_enum *e, int64_t val);

/* Free what sl_btf_enum_copy made; *e is empty after (a zeroed or already
 * freed table is fine). */
void sl_btf_enum_free(struct sl_btf_enum *e);

#endif
