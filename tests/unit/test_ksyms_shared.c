/* sl_ksyms_shared_get/put: one table per kallsyms path in the process
 * (the symbolizers, the net and stall modules share it), freed at the last
 * put and read again at the next get; hidden (kptr_restrict) and unreadable
 * files give no table and their states; lookups through the shared table
 * find what the file lists. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/profile_internal.h"

static char dir[] = "/tmp/sl-ksyms-XXXXXX";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void shared(void **state)
{
	(void)state;
	char p[256], hidden[256], missing[256];
	snprintf(p, sizeof(p), "%s/kallsyms", dir);
	snprintf(hidden, sizeof(hidden), "%s/hidden", dir);
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	write_file(p, "ffffffff81000000 T _stext\nffffffff81000100 t do_one\nffffffff81000200 D data_x\n"
		      "ffffffffc0000000 t ext4_thing\t[ext4]\n");
	write_file(hidden, "0000000000000000 T _stext\n0000000000000000 t do_one\n");

	const struct sl_ksyms *a = sl_ksyms_shared_get(p, NULL);
	const struct sl_ksyms *b = sl_ksyms_shared_get(p, NULL);
	assert_non_null(a);
	assert_ptr_equal(a, b); /* one table for both users */
	assert_int_equal(a->n, 3); /* text symbols only */
	const struct sl_ksym *k = sl_ksyms_lookup(a, 0xffffffff81000150ull);
	assert_non_null(k);
	assert_string_equal(k->name, "do_one");
	k = sl_ksyms_lookup(b, 0xffffffffc0000010ull);
	assert_string_equal(k->name, "ext4_thing");
	assert_string_equal(k->module, "ext4");
	sl_ksyms_shared_put(a);
	/* still there for b */
	assert_string_equal(sl_ksyms_lookup(b, 0xffffffff81000000ull)->name, "_stext");
	sl_ksyms_shared_put(b);

	/* freed at the last put: the next get reads the file again */
	write_file(p, "ffffffff81000000 T _stext\nffffffff81000100 t do_two\n");
	const struct sl_ksyms *c = sl_ksyms_shared_get(p, NULL);
	assert_non_null(c);
	assert_string_equal(sl_ksyms_lookup(c, 0xffffffff81000150ull)->name, "do_two");
	sl_ksyms_shared_put(c);

	int st = 0;
	assert_null(sl_ksyms_shared_get(hidden, &st));
	assert_int_equal(st, -1);
	st = 0;
	assert_null(sl_ksyms_shared_get(missing, &st));
	assert_int_equal(st, -2);
	st = 0;
	assert_null(sl_ksyms_shared_get("", &st));
	assert_int_equal(st, -2);
	sl_ksyms_shared_put(NULL);
	unlink(p);
	unlink(hidden);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shared),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return rc;
}
