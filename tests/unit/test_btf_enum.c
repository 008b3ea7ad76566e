/* sl_btf_enum_copy: the names of an enum's values copied out of a BTF
 * survive the BTF (built here with libbpf's writer API: a signed 32-bit
 * enum, an unsigned one, a 64-bit one), a missing enum is -ENOENT, and on
 * the running kernel's BTF the hw module's enum mf_action_page_type names
 * match what btf__find_by_name_kind reads from it directly. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <bpf/btf.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "agent/btf_enum.h"

static void constructed(void **state)
{
	(void)state;
	struct btf *b = btf__new_empty();
	assert_non_null(b);
	assert_true(btf__add_enum(b, "colour", 4) > 0);
	assert_int_equal(btf__add_enum_value(b, "RED", 0), 0);
	assert_int_equal(btf__add_enum_value(b, "GREEN", 7), 0);
	assert_int_equal(btf__add_enum_value(b, "BLACK", -3), 0); /* makes the enum signed */
	assert_true(btf__add_enum64(b, "wide", 8, false) > 0);
	assert_int_equal(btf__add_enum64_value(b, "BIG", 1ull << 40), 0);

	struct sl_btf_enum e, w, none;
	assert_int_equal(sl_btf_enum_copy(b, "colour", &e), 0);
	assert_int_equal(sl_btf_enum_copy(b, "wide", &w), 0);
	assert_int_equal(sl_btf_enum_copy(b, "nosuch", &none), -ENOENT);
	assert_int_equal(none.n, 0);
	btf__free(b); /* the copies outlive the BTF */

	assert_int_equal(e.n, 3);
	assert_string_equal(sl_btf_enum_name(&e, 0), "RED");
	assert_string_equal(sl_btf_enum_name(&e, 7), "GREEN");
	assert_string_equal(sl_btf_enum_name(&e, -3), "BLACK");
	assert_null(sl_btf_enum_name(&e, 1));
	assert_string_equal(sl_btf_enum_name(&w, (int64_t)(1ull << 40)), "BIG");
	assert_null(sl_btf_enum_name(&none, 0));
	sl_btf_enum_free(&e);
	sl_btf_enum_free(&w);
	sl_btf_enum_free(&e); /* twice is fine */
	assert_int_equal(sl_btf_enum_copy(NULL, "colour", &e), -ENOENT);
}

/* the names of enum name on the running kernel's BTF, as read from it
 * directly; 0 compared, -1 when the kernel has no such enum */
static int compare_kernel_enum(struct btf *b, const char *name)
{
	int id = btf__find_by_name_kind(b, name, BTF_KIND_ENUM);
	struct sl_btf_enum e;
	int rc = sl_btf_enum_copy(b, name, &e);
	if (id < 0) {
		assert_int_equal(rc, -ENOENT);
		return -1;
	}
	assert_int_equal(rc, 0);
	const struct btf_type *t = btf__type_by_id(b, (unsigned)id);
	assert_int_equal(e.n, btf_vlen(t));
	for (unsigned i = 0; i < btf_vlen(t); i++) {
		const struct btf_enum *v = btf_enum(t) + i;
		unsigned first = 0; /* aliases (two names, one value): the first is the name */
		while (btf_enum(t)[first].val != v->val)
			first++;
		assert_string_equal(sl_btf_enum_name(&e, btf_kflag(t) ? (int64_t)v->val : (int64_t)(uint32_t)v->val),
				    btf__name_by_offset(b, btf_enum(t)[first].name_off));
	}
	sl_btf_enum_free(&e);
	return 0;
}

static void vmlinux(void **state)
{
	(void)state;
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		skip();
	struct btf *b = btf__load_vmlinux_btf();
	assert_non_null(b);
	/* always there with BPF; its values are uapi (include/uapi/linux/bpf.h) */
	assert_int_equal(compare_kernel_enum(b, "bpf_map_type"), 0);
	struct sl_btf_enum e;
	assert_int_equal(sl_btf_enum_copy(b, "bpf_map_type", &e), 0);
	btf__free(b);
	assert_string_equal(sl_btf_enum_name(&e, 27), "BPF_MAP_TYPE_RINGBUF");
	sl_btf_enum_free(&e);
	/* the hw module's (CONFIG_MEMORY_FAILURE kernels only) */
	b = btf__load_vmlinux_btf();
	assert_non_null(b);
	compare_kernel_enum(b, "mf_action_page_type");
	btf__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(constructed),
		cmocka_unit_test(vmlinux),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
