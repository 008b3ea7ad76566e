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

/* sl_ksyms_lookup writes the symbol here */
static struct sl_ksym kbuf, kbuf2;

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
	const struct sl_ksym *k = sl_ksyms_lookup(a, 0xffffffff81000150ull, &kbuf);
	assert_non_null(k);
	assert_string_equal(k->name, "do_one");
	k = sl_ksyms_lookup(b, 0xffffffffc0000010ull, &kbuf);
	assert_string_equal(k->name, "ext4_thing");
	assert_string_equal(k->module, "ext4");
	sl_ksyms_shared_put(a);
	/* still there for b */
	assert_string_equal(sl_ksyms_lookup(b, 0xffffffff81000000ull, &kbuf)->name, "_stext");
	sl_ksyms_shared_put(b);

	/* freed at the last put: the next get reads the file again */
	write_file(p, "ffffffff81000000 T _stext\nffffffff81000100 t do_two\n");
	const struct sl_ksyms *c = sl_ksyms_shared_get(p, NULL);
	assert_non_null(c);
	assert_string_equal(sl_ksyms_lookup(c, 0xffffffff81000150ull, &kbuf)->name, "do_two");
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

/* "__pfx_X" followed by X (function padding symbols, ~half of a 6.x
 * kernel's text symbols) share one copy of the name; both look up to their
 * own names, a __pfx_ symbol whose next symbol is another, or in another
 * module, keeps its own. */
static void pfx_pairs(void **state)
{
	(void)state;
	static const char text[] = "ffffffff81000ff0 T __pfx_do_one\n"
				   "ffffffff81001000 T do_one\n"
				   "ffffffff81001ff0 t __pfx_lonely\n"
				   "ffffffff81002000 t other\n"
				   "ffffffffc0000ff0 t __pfx_mod_fn\t[ext4]\n"
				   "ffffffffc0001000 t mod_fn\t[ext4]\n"
				   "ffffffffc0001ff0 t __pfx_cross\t[ext4]\n"
				   "ffffffffc0002000 t cross\t[xfs]\n"
				   "ffffffffc0002ff0 t __pfx___pfx_z\t[xfs]\n"
				   "ffffffffc0003000 t __pfx_z\t[xfs]\n"
				   "ffffffffc0003010 t z\t[xfs]\n";
	static const struct {
		unsigned long long a;
		const char *name, *mod;
	} want[] = {
		{0xffffffff81000ff4ull, "__pfx_do_one", NULL}, {0xffffffff81001004ull, "do_one", NULL},
		{0xffffffff81001ff4ull, "__pfx_lonely", NULL}, {0xffffffff81002004ull, "other", NULL},
		{0xffffffffc0000ff4ull, "__pfx_mod_fn", "ext4"}, {0xffffffffc0001004ull, "mod_fn", "ext4"},
		{0xffffffffc0001ff4ull, "__pfx_cross", "ext4"}, {0xffffffffc0002004ull, "cross", "xfs"},
		{0xffffffffc0002ff4ull, "__pfx___pfx_z", "xfs"}, {0xffffffffc0003004ull, "__pfx_z", "xfs"},
		{0xffffffffc0003014ull, "z", "xfs"},
	};
	struct sl_ksyms ks;
	assert_int_equal(sl_ksyms_parse(text, sizeof(text) - 1, &ks), 0);
	assert_int_equal(ks.n, 11);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct sl_ksym *k = sl_ksyms_lookup(&ks, want[i].a, &kbuf);
		assert_non_null(k);
		assert_string_equal(k->name, want[i].name);
		if (want[i].mod)
			assert_string_equal(k->module, want[i].mod);
		else
			assert_null(k->module);
	}
	/* the pair shares its bytes: X is inside "__pfx_X" */
	assert_ptr_equal(sl_ksyms_lookup(&ks, 0xffffffff81001004ull, &kbuf)->name,
			 sl_ksyms_lookup(&ks, 0xffffffff81000ff4ull, &kbuf2)->name + 6);
	sl_ksyms_free(&ks);
}

/* The running kernel's /proc/kallsyms: every text symbol whose address no
 * other text symbol has looks up to its own name and module (the __pfx_
 * sharing loses nothing). Skipped when addresses are hidden. */
static void real_kallsyms(void **state)
{
	(void)state;
	FILE *f = fopen("/proc/kallsyms", "r");
	if (!f)
		skip();
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	assert_non_null(buf);
	size_t r;
	while ((r = fread(buf + len, 1, cap - len, f)) > 0) {
		len += r;
		if (len == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	fclose(f);
	struct sl_ksyms ks;
	assert_int_equal(sl_ksyms_parse(buf, len, &ks), 0);
	if (ks.hidden) {
		sl_ksyms_free(&ks);
		free(buf);
		skip();
	}
	size_t checked = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long long a;
		char t, name[256], mod[128] = "";
		if (sscanf(line, "%llx %c %255s [%127[^]]]", &a, &t, name, mod) < 3 || !strchr("tTwW", t))
			continue;
		const struct sl_ksym *k = sl_ksyms_lookup(&ks, a, &kbuf);
		assert_non_null(k);
		size_t i = sl_ksyms_index(&ks, a);
		if ((i > 0 && ks.ents[i - 1].addr == a) || ks.ents[i].addr != a)
			continue; /* shared address: which name wins is the sort's */
		assert_string_equal(k->name, name);
		if (mod[0])
			assert_string_equal(k->module, mod);
		checked++;
	}
	print_message("kallsyms: %zu text symbols, %zu with a unique address checked\n", ks.n, checked);
	assert_true(checked > ks.n / 2);
	sl_ksyms_free(&ks);
	free(buf);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shared),
		cmocka_unit_test(pfx_pairs),
		cmocka_unit_test(real_kallsyms),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return rc;
}
