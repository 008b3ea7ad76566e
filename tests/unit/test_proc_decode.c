/* Decoding of proc ring buffer records (src/modules/proc.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "modules/proc.h"

static void argv_split(void **state)
{
	(void)state;
	const char blk[] = "sh\0-c\0echo hi\0";
	json_t *a = sl_proc_argv_json(blk, sizeof(blk) - 1);
	assert_int_equal(json_array_size(a), 3);
	assert_string_equal(json_string_value(json_array_get(a, 0)), "sh");
	assert_string_equal(json_string_value(json_array_get(a, 2)), "echo hi");
	json_decref(a);
}

static void argv_cut_and_empty_args(void **state)
{
	(void)state;
	/* "a", "", then a cut argument without its NUL */
	const char blk[] = {'a', 0, 0, 'x', 'y'};
	json_t *a = sl_proc_argv_json(blk, sizeof(blk));
	assert_int_equal(json_array_size(a), 3);
	assert_string_equal(json_string_value(json_array_get(a, 1)), "");
	assert_string_equal(json_string_value(json_array_get(a, 2)), "xy");
	json_decref(a);
	a = sl_proc_argv_json(blk, 0);
	assert_int_equal(json_array_size(a), 0);
	json_decref(a);
}

static void argv_invalid_utf8(void **state)
{
	(void)state;
	const char blk[] = {'o', 'k', 0, (char)0xff, 'z', 0};
	json_t *a = sl_proc_argv_json(blk, sizeof(blk));
	assert_int_equal(json_array_size(a), 2);
	assert_string_equal(json_string_value(json_array_get(a, 1)), "\xEF\xBF\xBDz");
	char *dump = json_dumps(a, 0);
	assert_non_null(dump);
	free(dump);
	json_decref(a);
}

static void exec_fields(void **state)
{
	(void)state;
	static struct sl_exec_event e;
	memset(&e, 0, sizeof(e));
	e.hdr.type = SL_EV_EXEC;
	e.task.ppid = 42;
	e.truncated_count = 17;
	e.args_truncated = 1;
	strcpy(e.filename, "/bin/true");
	memcpy(e.argv, "true\0x\0", 7);
	e.argv_len = 7;
	json_t *o = sl_proc_exec_fields(&e, sizeof(e));
	assert_non_null(o);
	assert_null(json_object_get(o, "ppid")); /* added by the pipeline from the task id */
	assert_int_equal(json_integer_value(json_object_get(o, "truncated_count")), 17);
	assert_true(json_is_true(json_object_get(o, "args_truncated")));
	assert_string_equal(json_string_value(json_object_get(o, "filename")), "/bin/true");
	assert_int_equal(json_array_size(json_object_get(o, "argv")), 2);
	json_decref(o);
	/* variable length: the record ends after its argv bytes */
	size_t head = offsetof(struct sl_exec_event, argv);
	o = sl_proc_exec_fields(&e, head + 7);
	assert_non_null(o);
	assert_int_equal(json_array_size(json_object_get(o, "argv")), 2);
	assert_string_equal(json_string_value(json_array_get(json_object_get(o, "argv"), 1)), "x");
	json_decref(o);
	/* shorter than its header, or than the argv it claims: refused */
	assert_null(sl_proc_exec_fields(&e, head - 1));
	assert_null(sl_proc_exec_fields(&e, head + 6));
	/* no argv at all: a record of the header alone */
	e.argv_len = 0;
	o = sl_proc_exec_fields(&e, head);
	assert_non_null(o);
	assert_int_equal(json_array_size(json_object_get(o, "argv")), 0);
	json_decref(o);
	/* an argv_len past SL_ARGV_BYTES is malformed, not read past */
	e.argv_len = 100000;
	assert_null(sl_proc_exec_fields(&e, sizeof(e)));
	e.argv_len = SL_ARGV_BYTES;
	o = sl_proc_exec_fields(&e, sizeof(e));
	assert_non_null(o);
	json_decref(o);
}

static void exit_fields(void **state)
{
	(void)state;
	struct sl_exit_event e;
	memset(&e, 0, sizeof(e));
	e.exit_code = 3;
	e.signal = 0;
	e.lifetime_ns = 123456789;
	json_t *o = sl_proc_exit_fields(&e, sizeof(e));
	assert_int_equal(json_integer_value(json_object_get(o, "exit_code")), 3);
	assert_int_equal(json_integer_value(json_object_get(o, "signal")), 0);
	assert_true(json_is_false(json_object_get(o, "core_dumped")));
	assert_int_equal(json_integer_value(json_object_get(o, "lifetime_ns")), 123456789);
	json_decref(o);
	assert_null(sl_proc_exit_fields(&e, 8));
	assert_string_equal(sl_oom_constraint_name(SL_OOM_MEMCG), "memcg");
	assert_string_equal(sl_oom_constraint_name(SL_OOM_GLOBAL), "global");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(argv_split),
		cmocka_unit_test(argv_cut_and_empty_args),
		cmocka_unit_test(argv_invalid_utf8),
		cmocka_unit_test(exec_fields),
		cmocka_unit_test(exit_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
