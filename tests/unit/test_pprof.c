/* pprof writer: decode what was written (gunzip + protobuf-c unpack) and
 * check sample types, period, string table, deduplicated functions,
 * locations and mappings, values and labels; then, when `go` is
 * installed, `go tool pprof -top` must read the file and rank hot_fn first. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "profile/profile.pb-c.h"
#include "profile_fixture.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static char tdir[64];

static Perftools__Profiles__Profile *write_and_read_k(struct sl_profile *p, const char *path, int kaddrs)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(sl_profile_write_pprof(p, kaddrs, f), 0);
	fclose(f);
	gzFile gz = gzopen(path, "rb");
	assert_non_null(gz);
	size_t cap = 1 << 20, n = 0;
	uint8_t *buf = malloc(cap);
	int r;
	while ((r = gzread(gz, buf + n, (unsigned)(cap - n))) > 0) {
		n += (size_t)r;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	assert_int_equal(gzclose(gz), Z_OK);
	Perftools__Profiles__Profile *pr = perftools__profiles__profile__unpack(NULL, n, buf);
	free(buf);
	assert_non_null(pr);
	return pr;
}

static Perftools__Profiles__Profile *write_and_read(struct sl_profile *p, const char *path)
{
	return write_and_read_k(p, path, 1);
}

static const char *S(const Perftools__Profiles__Profile *pr, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < pr->n_string_table);
	return pr->string_table[i];
}

static const char *label_str(const Perftools__Profiles__Profile *pr, const Perftools__Profiles__Sample *s,
			     const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (!strcmp(S(pr, s->label[i]->key), key))
			return S(pr, s->label[i]->str);
	return NULL;
}

static int64_t label_num(const Perftools__Profiles__Profile *pr, const Perftools__Profiles__Sample *s,
			 const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (!strcmp(S(pr, s->label[i]->key), key))
			return s->label[i]->num;
	return -1;
}

static const char *leaf_fn(const Perftools__Profiles__Profile *pr, const Perftools__Profiles__Sample *s,
			   size_t depth)
{
	assert_true(depth < s->n_location_id);
	uint64_t lid = s->location_id[depth];
	for (size_t i = 0; i < pr->n_location; i++) {
		if (pr->location[i]->id != lid)
			continue;
		assert_int_equal(pr->location[i]->n_line, 1);
		uint64_t fid = pr->location[i]->line[0]->function_id;
		for (size_t j = 0; j < pr->n_function; j++)
			if (pr->function[j]->id == fid)
				return S(pr, pr->function[j]->name);
	}
	fail_msg("location %llu not found", (unsigned long long)lid);
	return NULL;
}

static void test_on_cpu(void **state)
{
	(void)state;
	char path[128];
	snprintf(path, sizeof(path), "%s/on.pb.gz", tdir);
	struct sl_profile *p = fx_profile(SL_PROF_ON_CPU);
	Perftools__Profiles__Profile *pr = write_and_read(p, path);
	assert_true(pr->n_string_table > 0);
	assert_string_equal(pr->string_table[0], "");
	assert_int_equal(pr->n_sample_type, 2);
	assert_string_equal(S(pr, pr->sample_type[0]->type), "samples");
	assert_string_equal(S(pr, pr->sample_type[0]->unit), "count");
	assert_string_equal(S(pr, pr->sample_type[1]->type), "cpu");
	assert_string_equal(S(pr, pr->sample_type[1]->unit), "nanoseconds");
	assert_non_null(pr->period_type);
	assert_string_equal(S(pr, pr->period_type->type), "cpu");
	assert_int_equal(pr->period, 10000000);
	assert_int_equal(pr->duration_nanos, 5000000000ll);
	assert_int_equal(pr->time_nanos, 1700000000000000000ll);
	assert_int_equal(pr->n_sample, 5);
	int64_t cnt = 0, ns = 0;
	for (size_t i = 0; i < pr->n_sample; i++) {
		assert_int_equal(pr->sample[i]->n_value, 2);
		cnt += pr->sample[i]->value[0];
		ns += pr->sample[i]->value[1];
	}
	assert_int_equal(cnt, 55);
	assert_int_equal(ns, 550000000ll);
	/* leaf first */
	assert_string_equal(leaf_fn(pr, pr->sample[0], 0), "hot_fn");
	assert_string_equal(leaf_fn(pr, pr->sample[0], 2), "main");
	assert_string_equal(leaf_fn(pr, pr->sample[2], 0), "__schedule");
	/* functions and mappings deduplicated, ids unique and nonzero */
	assert_int_equal(pr->n_function, 5);
	assert_int_equal(pr->n_location, 5);
	for (size_t i = 0; i < pr->n_function; i++)
		for (size_t j = i + 1; j < pr->n_function; j++)
			assert_string_not_equal(S(pr, pr->function[i]->name), S(pr, pr->function[j]->name));
	assert_int_equal(pr->n_mapping, 3); /* /bin/app, [kernel.kallsyms], /lib/libx.so */
	int app = 0;
	for (size_t i = 0; i < pr->n_mapping; i++) {
		assert_true(pr->mapping[i]->id != 0);
		assert_true(pr->mapping[i]->has_functions);
		if (!strcmp(S(pr, pr->mapping[i]->filename), "/bin/app")) {
			app++;
			assert_string_equal(S(pr, pr->mapping[i]->build_id), "abcdef0123");
			assert_true(pr->mapping[i]->memory_limit > 0x3000);
		}
	}
	assert_int_equal(app, 1);
	/* labels */
	assert_int_equal(label_num(pr, pr->sample[0], "pid"), 100);
	assert_string_equal(label_str(pr, pr->sample[0], "comm"), "app");
	assert_null(label_str(pr, pr->sample[0], "container_id"));
	assert_string_equal(label_str(pr, pr->sample[4], "container_id"), "c0ffee");
	assert_null(label_str(pr, pr->sample[0], "off_cpu_state"));
	perftools__profiles__profile__free_unpacked(pr, NULL);
	sl_profile_free(p);
}

static void test_off_cpu(void **state)
{
	(void)state;
	char path[128];
	snprintf(path, sizeof(path), "%s/off.pb.gz", tdir);
	struct sl_profile *p = fx_profile(SL_PROF_OFF_CPU);
	Perftools__Profiles__Profile *pr = write_and_read(p, path);
	assert_string_equal(S(pr, pr->sample_type[1]->type), "off_cpu");
	assert_string_equal(S(pr, pr->sample_type[1]->unit), "nanoseconds");
	assert_string_equal(S(pr, pr->default_sample_type), "off_cpu");
	assert_string_equal(label_str(pr, pr->sample[0], "off_cpu_state"), "blocked");
	assert_string_equal(label_str(pr, pr->sample[2], "off_cpu_state"), "runqueue");
	perftools__profiles__profile__free_unpacked(pr, NULL);
	sl_profile_free(p);
}

/* The kernel location of __schedule (fixture: 0xffffffff81001000). */
static const Perftools__Profiles__Location *kernel_loc(const Perftools__Profiles__Profile *pr,
							const Perftools__Profiles__Mapping **map)
{
	const Perftools__Profiles__Location *kl = NULL;
	for (size_t i = 0; i < pr->n_location; i++) {
		const Perftools__Profiles__Location *L = pr->location[i];
		for (size_t m = 0; m < pr->n_mapping; m++)
			if (pr->mapping[m]->id == L->mapping_id &&
			    !strcmp(S(pr, pr->mapping[m]->filename), "[kernel.kallsyms]")) {
				kl = L;
				*map = pr->mapping[m];
			}
	}
	assert_non_null(kl);
	return kl;
}

/* kaddrs_visible = 0 (issue 8: no kernel address to a caller who could
 * not read /proc/kallsyms): the kernel location and mapping carry 0, the
 * rest is unchanged; = 1: the kernel address. */
static void test_kernel_addresses(void **state)
{
	(void)state;
	char path[128];
	const Perftools__Profiles__Mapping *km = NULL;
	snprintf(path, sizeof(path), "%s/kaddr.pb.gz", tdir);
	struct sl_profile *p = fx_profile(SL_PROF_ON_CPU);

	Perftools__Profiles__Profile *pr = write_and_read_k(p, path, 1);
	const Perftools__Profiles__Location *kl = kernel_loc(pr, &km);
	assert_int_equal(kl->address, 0xffffffff81001000ull);
	assert_int_equal(km->memory_start, 0xffffffff81001000ull);
	perftools__profiles__profile__free_unpacked(pr, NULL);

	pr = write_and_read_k(p, path, 0);
	kl = kernel_loc(pr, &km);
	assert_int_equal(kl->address, 0);
	assert_int_equal(km->memory_start, 0);
	assert_true(km->memory_limit <= 1);
	for (size_t i = 0; i < pr->n_location; i++)
		assert_true(pr->location[i]->address < 0xffff000000000000ull);
	for (size_t i = 0; i < pr->n_mapping; i++)
		assert_true(pr->mapping[i]->memory_limit < 0xffff000000000000ull);
	assert_int_equal(pr->n_location, 5);  /* nothing merged or lost */
	assert_int_equal(pr->n_sample, 5);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	sl_profile_free(p);
}

static void test_empty(void **state)
{
	(void)state;
	char path[128];
	snprintf(path, sizeof(path), "%s/empty.pb.gz", tdir);
	struct sl_profile *p = sl_prof_new(SL_PROF_ON_CPU, 0, 0, 0);
	Perftools__Profiles__Profile *pr = write_and_read(p, path);
	assert_int_equal(pr->n_sample, 0);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	sl_profile_free(p);
}

static void test_go_tool_pprof(void **state)
{
	(void)state;
	if (system("command -v go >/dev/null 2>&1")) {
		printf("SKIP reason: go not installed (Debian golang-go; scripts/install-deps.sh installs it)\n");
		skip();
		return;
	}
	char path[128], cmd[512];
	snprintf(path, sizeof(path), "%s/go.pb.gz", tdir);
	struct sl_profile *p = fx_profile(SL_PROF_ON_CPU);
	FILE *f = fopen(path, "wb");
	assert_int_equal(sl_profile_write_pprof(p, 1, f), 0);
	fclose(f);
	sl_profile_free(p);
	snprintf(cmd, sizeof(cmd), "HOME=%s GOCACHE=%s/gocache go tool pprof -top %s 2>&1", tdir, tdir, path);
	FILE *o = popen(cmd, "r");
	assert_non_null(o);
	char line[512], first[512] = "";
	int header = 0, rows = 0;
	while (fgets(line, sizeof(line), o)) {
		fputs(line, stdout);
		if (strstr(line, "flat%") && strstr(line, "cum%")) {
			header = 1;
			continue;
		}
		if (header && !rows++)
			snprintf(first, sizeof(first), "%s", line);
	}
	int rc = pclose(o);
	assert_int_equal(rc, 0);
	assert_true(header);
	/* hot_fn: 36 of 55 samples flat, the most */
	assert_non_null(strstr(first, "hot_fn"));
	assert_non_null(strstr(first, "360ms"));
	assert_int_equal(rows, 5);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tdir, sizeof(tdir), "/tmp/sl_pprof.XXXXXX");
	return mkdtemp(tdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tdir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_on_cpu),
		cmocka_unit_test(test_off_cpu),
		cmocka_unit_test(test_kernel_addresses),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_go_tool_pprof),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
