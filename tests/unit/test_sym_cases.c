/* Shared symbolization cases (../shared/cases/symbolization, or
 * $SL_SHARED_CASES/symbolization), read in place: /proc/<pid>/maps parsing
 * and classification, /proc/kallsyms parsing, address lookups, each as the
 * case's .expected says. Plus a kernel-frame check through the symbolizer
 * with a hidden (kptr_restrict) kallsyms. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "shared_cases.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_internal.h"
#include "profile/symbolize_proc.h"

/* sl_ksyms_lookup writes the symbol here */
static struct sl_ksym kbuf;

static char dir[512];

static uint64_t hexs(const char *s)
{
	return strtoull(s, NULL, 16);
}

static int exists(const char *p)
{
	FILE *f = fopen(p, "r");
	if (f)
		fclose(f);
	return f != NULL;
}

/* Map an expected "class" explanation onto sandlens' classification. */
static void check_class(const char *cls, const struct sl_map_entry *e)
{
	const char *w = sl_map_class_word(e->cls);
	if (!strncmp(cls, "file", 4))
		assert_string_equal(w, "file");
	else if (!strncmp(cls, "special", 7))
		assert_string_equal(w, "special");
	else if (!strncmp(cls, "anonymous", 9))
		assert_string_equal(w, "anonymous");
	else
		fail_msg("unknown expected class '%s'", cls);
	if (strstr(cls, "shared"))
		assert_int_equal(e->perms[3], 's');
	if (strstr(cls, "writable+exec")) {
		assert_int_equal(e->perms[1], 'w');
		assert_int_equal(e->perms[2], 'x');
	}
	if (strstr(cls, "(executable)"))
		assert_int_equal(e->perms[2], 'x');
	if (strstr(cls, "process_vm_readv"))
		assert_int_equal(e->cls, SL_MAP_VVAR);
	if (strstr(cls, "in-memory ELF"))
		assert_int_equal(e->cls, SL_MAP_VDSO);
	if (strstr(cls, "kernel-half")) {
		assert_int_equal(e->cls, SL_MAP_VSYSCALL);
		assert_true(e->start >= 0xffff800000000000ull);
	}
}

static int run_maps(const char *id, json_t *exp)
{
	char path[1024], *buf;
	size_t len, n;
	struct sl_map_entry *v;
	int checks = 0;
	snprintf(path, sizeof(path), "%s/%s.in.maps", dir, id);
	assert_int_equal(sl_read_small_file(path, 1 << 20, &buf, &len), 0);
	assert_int_equal(sl_maps_parse(buf, len, &v, &n), 0);
	/* every non-empty input line must parse */
	size_t lines = 0;
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\n' || (i == len - 1))
			lines++;
	assert_int_equal(n, lines);

	json_t *ents = json_object_get(exp, "entries");
	if (ents) {
		assert_int_equal(json_array_size(ents), n);
		for (size_t i = 0; i < n; i++) {
			json_t *x = json_array_get(ents, i);
			char dev[16];
			assert_int_equal(v[i].start, hexs(json_string_value(json_object_get(x, "start"))));
			assert_int_equal(v[i].end, hexs(json_string_value(json_object_get(x, "end"))));
			assert_string_equal(v[i].perms, json_string_value(json_object_get(x, "perms")));
			assert_int_equal(v[i].offset, hexs(json_string_value(json_object_get(x, "offset"))));
			snprintf(dev, sizeof(dev), "%02x:%02x", v[i].dev_major, v[i].dev_minor);
			assert_string_equal(dev, json_string_value(json_object_get(x, "dev")));
			assert_int_equal(v[i].inode, json_integer_value(json_object_get(x, "inode")));
			assert_string_equal(v[i].path, json_string_value(json_object_get(x, "path")));
			check_class(json_string_value(json_object_get(x, "class")), &v[i]);
		}
		checks++;
	}
	json_t *xm = json_object_get(exp, "executable_file_mappings");
	if (json_is_array(xm)) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			if (v[i].perms[2] != 'x' || v[i].cls != SL_MAP_FILE)
				continue;
			char s[600];
			snprintf(s, sizeof(s), "%s (%s @0x%" PRIx64 ")", v[i].path, v[i].perms, v[i].offset);
			assert_true(k < json_array_size(xm));
			/* the fixture lists only the unusual ones: match by content */
			int found = 0;
			for (size_t j = 0; j < json_array_size(xm); j++)
				found |= !strcmp(s, json_string_value(json_array_get(xm, j)));
			if (found)
				k++;
		}
		assert_int_equal(k, json_array_size(xm));
		checks++;
	} else if (json_is_object(xm)) {
		const char *key;
		json_t *val;
		size_t nx = 0;
		for (size_t i = 0; i < n; i++)
			if (v[i].perms[2] == 'x' && v[i].cls == SL_MAP_FILE)
				nx++;
		assert_int_equal(nx, json_object_size(xm));
		json_object_foreach(xm, key, val) {
			int found = 0;
			for (size_t i = 0; i < n; i++) {
				if (v[i].perms[2] != 'x' || strcmp(v[i].path, key))
					continue;
				char s[200];
				snprintf(s, sizeof(s), "0x%" PRIx64 "-0x%" PRIx64 " off 0x%" PRIx64, v[i].start, v[i].end,
					 v[i].offset);
				assert_string_equal(s, json_string_value(val));
				found = 1;
			}
			assert_true(found);
		}
		checks++;
	}
	json_t *sp = json_object_get(exp, "special_mappings");
	if (sp) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			if (strcmp(sl_map_class_word(v[i].cls), "special"))
				continue;
			assert_true(k < json_array_size(sp));
			assert_string_equal(v[i].path, json_string_value(json_array_get(sp, k)));
			k++;
		}
		assert_int_equal(k, json_array_size(sp));
		checks++;
	}
	json_t *tr = json_object_get(exp, "anonymous_lines_with_trailing_space");
	if (tr) {
		size_t k = 0, li = 0;
		const char *p = buf, *end = buf + len;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			const char *le = nl ? nl : end;
			if (le > p && le[-1] == ' ') {
				assert_true(li < n);
				assert_int_equal(v[li].cls, SL_MAP_ANON);
				assert_string_equal(v[li].path, "");
				k++;
			}
			li++;
			p = nl ? nl + 1 : end;
		}
		assert_int_equal(k, json_integer_value(tr));
		checks++;
	}
	json_t *sh = json_object_get(exp, "shared_file_mappings");
	if (sh) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			if (v[i].perms[3] != 's' || v[i].cls != SL_MAP_FILE)
				continue;
			char s[600];
			snprintf(s, sizeof(s), "%s (%s)", v[i].path, v[i].perms);
			assert_true(k < json_array_size(sh));
			assert_string_equal(s, json_string_value(json_array_get(sh, k)));
			k++;
		}
		assert_int_equal(k, json_array_size(sh));
		checks++;
	}
	json_t *lk = json_object_get(exp, "example_lookup");
	if (lk) {
		uint64_t a = hexs(json_string_value(json_object_get(lk, "address")));
		const struct sl_map_entry *e = sl_maps_find(v, n, a);
		assert_non_null(e);
		assert_string_equal(e->path, json_string_value(json_object_get(lk, "module")));
		assert_int_equal(a - e->start + e->offset, hexs(json_string_value(json_object_get(lk, "file_offset"))));
		checks++;
	}
	sl_maps_free(v, n);
	free(buf);
	return checks;
}

static int run_kallsyms(const char *id, json_t *exp)
{
	char path[1024], *buf;
	size_t len;
	struct sl_ksyms ks;
	int checks = 0;
	snprintf(path, sizeof(path), "%s/%s.in.kallsyms", dir, id);
	assert_int_equal(sl_read_small_file(path, 1 << 20, &buf, &len), 0);
	assert_int_equal(sl_ksyms_parse(buf, len, &ks), 0);
	json_t *av = json_object_get(exp, "addresses_available");
	if (av) {
		assert_int_equal(!ks.hidden, json_is_true(av));
		checks++;
	}
	json_t *syms = json_object_get(exp, "symbols");
	if (syms) {
		assert_int_equal(ks.n, json_array_size(syms));
		for (size_t i = 0; i < ks.n; i++) {
			json_t *x = json_array_get(syms, i);
			assert_string_equal(sl_ksyms_at(&ks, i, &kbuf)->name, json_string_value(json_object_get(x, "name")));
			assert_int_equal(sl_ksyms_at(&ks, i, &kbuf)->type, json_string_value(json_object_get(x, "type"))[0]);
		}
		checks++;
	}
	json_t *pre = json_object_get(exp, "syscall_prefix");
	if (pre) {
		/* the prefix is detectable by name although addresses are zero */
		char pfx[32];
		sscanf(json_string_value(pre), "%31s", pfx);
		int found = 0;
		for (size_t i = 0; i < ks.n; i++)
			found |= !strncmp(sl_ksyms_at(&ks, i, &kbuf)->name, pfx, strlen(pfx));
		assert_true(found);
		checks++;
	}
	if (json_object_get(exp, "lookup_any_address")) {
		assert_true(ks.hidden);
		assert_null(sl_ksyms_lookup(&ks, 0, &kbuf));
		assert_null(sl_ksyms_lookup(&ks, 0xffffffff81000000ull, &kbuf));
		assert_null(sl_ksyms_lookup(&ks, UINT64_MAX, &kbuf));
		/* through the symbolizer: a placeholder, flagged unknown */
		struct sl_sym_config cfg = { .kallsyms_path = path };
		struct sl_symbolizer *s = sl_symbolizer_new(&cfg);
		struct sl_raw_profile *rp = sl_raw_profile_new(SL_PROF_ON_CPU, 0, 0, 0);
		uint64_t k[2] = { 0xffffffff81000010ull, 0xffffffff81234567ull };
		struct sl_raw_stack st = { .pid = 0, .comm = "x", .kernel_ips = k, .n_kernel = 2, .count = 1 };
		assert_int_equal(sl_raw_profile_add(rp, &st), 0);
		struct sl_profile *p = sl_symbolize(s, rp);
		assert_non_null(p);
		assert_int_equal(p->samples[0].nframes, 2);
		for (uint32_t i = 0; i < 2; i++) {
			const struct sl_frame *f = &p->frames[p->samples[0].frames[i]];
			assert_string_equal(f->name, "[kernel]");
			assert_true(f->flags & SL_FRAME_KERNEL);
			assert_true(f->flags & SL_FRAME_UNKNOWN);
			assert_null(f->function);
		}
		struct sl_sym_stats stt;
		sl_symbolizer_stats(s, &stt);
		assert_int_equal(stt.kallsyms_state, -1);
		sl_profile_free(p);
		sl_raw_profile_free(rp);
		sl_symbolizer_free(s);
		checks++;
	}
	json_t *n2a = json_object_get(exp, "name_to_address");
	if (n2a) {
		const char *key;
		json_t *val;
		json_object_foreach(n2a, key, val) {
			uint64_t a[16];
			size_t n = sl_ksyms_addrs(&ks, key, a, 16);
			assert_int_equal(n, json_array_size(val));
			for (size_t i = 0; i < n; i++)
				assert_int_equal(a[i], hexs(json_string_value(json_array_get(val, i))));
		}
		checks++;
	}
	json_t *lks = json_object_get(exp, "lookups");
	if (lks) {
		for (size_t i = 0; i < json_array_size(lks); i++) {
			json_t *x = json_array_get(lks, i);
			uint64_t a = hexs(json_string_value(json_object_get(x, "address")));
			const char *want = json_string_value(json_object_get(x, "symbol"));
			const struct sl_ksym *k = sl_ksyms_lookup(&ks, a, &kbuf);
			assert_non_null(k);
			assert_string_equal(k->name, want);
			assert_int_equal(a - k->addr, hexs(json_string_value(json_object_get(x, "offset"))));
			json_int_t inst = json_integer_value(json_object_get(x, "instance"));
			if (inst > 0) {
				uint64_t addrs[16];
				size_t n = sl_ksyms_addrs(&ks, want, addrs, 16);
				assert_true((size_t)inst <= n);
				assert_int_equal(k->addr, addrs[inst - 1]);
			}
		}
		checks++;
	}
	sl_ksyms_free(&ks);
	free(buf);
	return checks;
}

static void test_shared_cases(void **state)
{
	(void)state;
	DIR *d = opendir(dir);
	if (!d) {
		fail_msg("cannot open %s (run from the project root or set SL_SHARED_CASES)", dir);
		return;
	}
	struct dirent *de;
	int cases = 0;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 10 || strcmp(de->d_name + l - 9, ".expected"))
			continue;
		char id[256], path[1024];
		snprintf(id, sizeof(id), "%.*s", (int)(l - 9), de->d_name);
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		json_error_t err;
		json_t *exp = json_load_file(path, 0, &err);
		if (!exp)
			fail_msg("%s: %s", path, err.text);
		int checks = 0;
		char in[1024];
		snprintf(in, sizeof(in), "%s/%s.in.maps", dir, id);
		if (exists(in))
			checks = run_maps(id, exp);
		snprintf(in, sizeof(in), "%s/%s.in.kallsyms", dir, id);
		if (exists(in))
			checks = run_kallsyms(id, exp);
		if (!checks)
			fail_msg("case %s: no known input or expected key (test must learn it)", id);
		printf("case %s: %d checks\n", id, checks);
		json_decref(exp);
		cases++;
	}
	closedir(d);
	assert_true(cases >= 5);
}

/* Own cases: lines the shared ones do not cover. */
static void parse_ok(const char *l, struct sl_map_entry *e)
{
	assert_int_equal(sl_maps_parse_line(l, strlen(l), e), 0);
}

static void test_maps_edge_lines(void **state)
{
	(void)state;
	struct sl_map_entry e;
	parse_ok("7f00-7f10 r-xp 00001000 00:01 123 /memfd:jit-code (deleted)", &e);
	assert_int_equal(e.cls, SL_MAP_MEMFD);
	assert_int_equal(e.offset, 0x1000);
	free(e.path);
	parse_ok("7f00-7f10 r-xp 00000000 08:01 99                         /opt/my app/bin (deleted)\n", &e);
	assert_int_equal(e.cls, SL_MAP_DELETED);
	assert_string_equal(e.path, "/opt/my app/bin (deleted)");
	free(e.path);
	parse_ok("7ffd0000-7ffd1000 rw-p 00000000 00:00 0   [stack:4242]", &e);
	assert_int_equal(e.cls, SL_MAP_STACK);
	free(e.path);
	parse_ok("1000-2000 rw-p 00000000 00:0e 11 anon_inode:[perf_event]", &e);
	assert_int_equal(e.cls, SL_MAP_OTHER_PSEUDO);
	free(e.path);
	parse_ok("1000-2000 r-xp 00000000 00:00 0 [uprobes]", &e);
	assert_int_equal(e.cls, SL_MAP_SPECIAL);
	free(e.path);
	/* malformed: rejected, nothing allocated */
	const char *bad[] = { "", "zz-10 r-xp 0 00:00 0", "10-20", "10-20 r-xp 00000000 0000 0 /x",
			      "20-10 r-xp 00000000 00:00 0", "10-20 r-xp 00000000 00:00 12x /x",
			      "11111111111111111-20 r-xp 0 00:00 0" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(sl_maps_parse_line(bad[i], strlen(bad[i]), &e), -EINVAL);
	/* whole-file parse skips bad lines, keeps good ones; lookup bounds */
	const char *txt = "1000-2000 r-xp 00000000 00:00 0\ngarbage\n3000-4000 r-xp 00000000 00:00 0 [vdso]";
	struct sl_map_entry *v;
	size_t n;
	assert_int_equal(sl_maps_parse(txt, strlen(txt), &v, &n), 0);
	assert_int_equal(n, 2);
	assert_null(sl_maps_find(v, n, 0xfff));
	assert_ptr_equal(sl_maps_find(v, n, 0x1000), &v[0]);
	assert_null(sl_maps_find(v, n, 0x2000));
	assert_ptr_equal(sl_maps_find(v, n, 0x3fff), &v[1]);
	assert_null(sl_maps_find(v, n, 0x4000));
	sl_maps_free(v, n);
}

static void test_kallsyms_modules_and_types(void **state)
{
	(void)state;
	const char *txt = "ffffffff81000000 T _stext\n"
			  "ffffffff81000100 D some_data\n"
			  "ffffffff81000200 t helper\n"
			  "ffffffffc0000000 t ext4_fn\t[ext4]\n"
			  "bogus line\n";
	struct sl_ksyms ks;
	assert_int_equal(sl_ksyms_parse(txt, strlen(txt), &ks), 0);
	assert_false(ks.hidden);
	assert_int_equal(ks.n, 3); /* data symbol dropped */
	const struct sl_ksym *k = sl_ksyms_lookup(&ks, 0xffffffff81000150ull, &kbuf);
	assert_string_equal(k->name, "_stext"); /* data is not a text boundary */
	k = sl_ksyms_lookup(&ks, 0xffffffffc0000010ull, &kbuf);
	assert_string_equal(k->name, "ext4_fn");
	assert_string_equal(k->module, "ext4");
	assert_null(sl_ksyms_lookup(&ks, 0xffffffff80000000ull, &kbuf));
	sl_ksyms_free(&ks);
}

static void test_perfmap(void **state)
{
	(void)state;
	const char *txt = "7f0000001000 40 LazyCompile:*foo app.js:1\n"
			  "0x7f0000000000 100 stub\n"
			  "nonsense\n"
			  "7f0000002000 0 zero_size\n";
	struct sl_jit_sym *v;
	size_t n;
	assert_int_equal(sl_perfmap_parse(txt, strlen(txt), &v, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(sl_perfmap_lookup(v, n, 0x7f0000000050ull)->name, "stub");
	assert_string_equal(sl_perfmap_lookup(v, n, 0x7f000000103full)->name, "LazyCompile:*foo app.js:1");
	assert_null(sl_perfmap_lookup(v, n, 0x7f0000001040ull));
	assert_null(sl_perfmap_lookup(v, n, 0x7f0000000100ull));
	sl_perfmap_free(v, n);
}

int main(void)
{
	if (sl_shared_cases_dir("test_sym_cases", "symbolization", dir, sizeof(dir)))
		return sl_shared_cases_fail("test_sym_cases");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_cases),
		cmocka_unit_test(test_maps_edge_lines),
		cmocka_unit_test(test_kallsyms_modules_and_types),
		cmocka_unit_test(test_perfmap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
