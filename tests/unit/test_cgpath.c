/* Path rules (ATTR-1): every case in ../shared/cases/cgroup_path (override
 * the cases root with SL_SHARED_CASES) and tests/unit/cases/cgroup_path,
 * one cmocka test per case, plus direct tests of the caller options. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shared_cases.h"
#include <jansson.h>

#include "cgroup/attr.h"

#define SHARED_MIN_CASES 17 /* cases present when this test was written */
#define OWN_MIN_CASES 6

struct tcase {
	char dir[512];
	char id[256];
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len - 1 == 0) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (buf)
		buf[len] = '\0';
	return buf;
}

/* expected string or null: null matches "" (and "unknown" when allow_unknown) */
static int cmp_str(const char *id, const char *key, json_t *exp, const char *got, int allow_unknown)
{
	json_t *v = json_object_get(exp, key);
	if (!v || json_is_null(v)) {
		if (got[0] == '\0' || (allow_unknown && strcmp(got, "unknown") == 0))
			return 0;
		print_error("%s: %s expected null, got \"%s\"\n", id, key, got);
		return 1;
	}
	if (!json_is_string(v) || strcmp(json_string_value(v), got) != 0) {
		print_error("%s: %s expected \"%s\", got \"%s\"\n", id, key,
			    json_is_string(v) ? json_string_value(v) : "?", got);
		return 1;
	}
	return 0;
}

static void run_case(void **state)
{
	const struct tcase *tc = *state;
	char p[1024];
	snprintf(p, sizeof(p), "%s/%s.in", tc->dir, tc->id);
	char *in = slurp(p);
	assert_non_null(in);
	snprintf(p, sizeof(p), "%s/%s.expected", tc->dir, tc->id);
	json_error_t jerr;
	json_t *exp = json_load_file(p, 0, &jerr);
	assert_non_null(exp);
	snprintf(p, sizeof(p), "%s/%s.json", tc->dir, tc->id);
	json_t *meta = json_load_file(p, 0, &jerr);
	assert_non_null(meta);
	const char *fmt = json_string_value(json_object_get(meta, "input_format"));
	assert_non_null(fmt);

	struct sl_attr a;
	int rc = strncmp(fmt, "proc_pid_cgroup", 15) == 0 ? sl_cgproc_parse(in, &a)
							     : sl_cgpath_parse(in, &a);
	assert_int_equal(rc, 0);

	int bad = 0;
	json_t *ic = json_object_get(exp, "is_container");
	int want = json_is_true(ic)    ? SL_YES
		   : json_is_false(ic) ? SL_NO
		   : (json_is_string(ic) && strcmp(json_string_value(ic), "unknown") == 0)
		       ? SL_UNKNOWN
		       : 99;
	assert_int_not_equal(want, 99);
	if (a.is_container != want) {
		print_error("%s: is_container expected %d, got %d\n", tc->id, want, a.is_container);
		bad++;
	}
	bad += cmp_str(tc->id, "runtime", exp, a.runtime, 1);
	bad += cmp_str(tc->id, "container_id", exp, a.container_id, 0);
	bad += cmp_str(tc->id, "pod_uid", exp, a.pod_uid, 0);
	bad += cmp_str(tc->id, "qos", exp, a.qos, 0);
	json_decref(exp);
	json_decref(meta);
	free(in);
	assert_int_equal(bad, 0);
}

static size_t add_cases(const char *dir, struct tcase **cases, size_t *n, size_t *cap)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	size_t added = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		if (l < 4 || strcmp(e->d_name + l - 3, ".in") != 0 || l - 3 >= sizeof((*cases)->id))
			continue;
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 32;
			*cases = realloc(*cases, *cap * sizeof(**cases));
			assert_non_null(*cases);
		}
		struct tcase *tc = &(*cases)[(*n)++];
		snprintf(tc->dir, sizeof(tc->dir), "%s", dir);
		memcpy(tc->id, e->d_name, l - 3);
		tc->id[l - 3] = '\0';
		added++;
	}
	closedir(d);
	return added;
}

static void test_runc_parents(void **state)
{
	(void)state;
	struct sl_cgpath_opts o = {.n_runc_parents = 1};
	snprintf(o.runc_parents[0], sizeof(o.runc_parents[0]), "/sandlens-test/");
	struct sl_attr a;
	assert_int_equal(sl_cgpath_parse_opts("/sandlens-test/oom-1", &o, &a), 0);
	assert_int_equal(a.is_container, SL_YES);
	assert_string_equal(a.runtime, "runc");
	assert_string_equal(a.container_id, "oom-1");
	/* a child of the container stays the container */
	assert_int_equal(sl_cgpath_parse_opts("/sandlens-test/oom-1/sub", &o, &a), 0);
	assert_string_equal(a.container_id, "oom-1");
	/* without the option the same path is not a container */
	assert_int_equal(sl_cgpath_parse("/sandlens-test/oom-1", &a), 0);
	assert_int_equal(a.is_container, SL_NO);
	assert_string_equal(a.kind, "host");
	/* the parent itself is not a container; a look-alike prefix neither */
	assert_int_equal(sl_cgpath_parse_opts("/sandlens-test", &o, &a), 0);
	assert_int_equal(a.is_container, SL_NO);
	assert_int_equal(sl_cgpath_parse_opts("/sandlens-testx/a", &o, &a), 0);
	assert_int_equal(a.is_container, SL_NO);
}

static void test_kinds_and_errors(void **state)
{
	(void)state;
	struct sl_attr a;
	assert_int_equal(sl_cgpath_parse("", &a), -EINVAL);
	assert_int_equal(a.is_container, SL_UNKNOWN);
	assert_int_equal(sl_cgpath_parse(NULL, &a), -EINVAL);
	assert_int_equal(sl_cgproc_parse("", &a), -EINVAL);
	assert_int_equal(sl_cgproc_parse("garbage without colons", &a), -EINVAL);
	assert_int_equal(sl_cgpath_parse("/system.slice/sshd.service", &a), 0);
	assert_string_equal(a.kind, "systemd");
	assert_int_equal(sl_cgpath_parse("/", &a), 0);
	assert_string_equal(a.kind, "host");
	assert_string_equal(a.runtime, "host");
	assert_int_equal(sl_cgpath_parse("/kubepods/burstable/pod5f3c2a1b-9d8e-4f7a-b6c5-0e1d2c3b4a59",
					 &a),
			 0);
	assert_int_equal(a.is_container, SL_NO);
	assert_string_equal(a.kind, "pod");
	assert_string_equal(a.qos, "burstable");
	/* a dashed uuid outside kubepods is not a pod */
	assert_int_equal(sl_cgpath_parse("/pod5f3c2a1b-9d8e-4f7a-b6c5-0e1d2c3b4a59", &a), 0);
	assert_string_equal(a.pod_uid, "");
	/* legacy capitalised Burstable, upper-case uid normalised */
	assert_int_equal(
		sl_cgpath_parse("/Burstable.slice/Burstable-pod5F3C2A1B_9D8E_4F7A_B6C5_0E1D2C3B4A59.slice", &a),
		0);
	assert_string_equal(a.pod_uid, "5f3c2a1b-9d8e-4f7a-b6c5-0e1d2c3b4a59");
	assert_string_equal(a.qos, "burstable");
	/* a kata sandbox's overhead cgroup: the sandbox's, kind overhead (not a container);
	 * the sandbox cgroup itself stays a container */
	assert_int_equal(sl_cgpath_parse("/kata_overhead/ac5be1ec5262ac9cbad8e0cb6fdda98f53128946eb63545ec246ee6a565b8b29", &a), 0);
	assert_int_equal(a.is_container, SL_YES);
	assert_string_equal(a.kind, "overhead");
	assert_string_equal(a.container_id, "ac5be1ec5262ac9cbad8e0cb6fdda98f53128946eb63545ec246ee6a565b8b29");
	assert_int_equal(sl_cgpath_parse("/kubepods/pod5f3c2a1b-9d8e-4f7a-b6c5-0e1d2c3b4a59/kata_ac5be1ec5262ac9cbad8e0cb6fdda98f53128946eb63545ec246ee6a565b8b29", &a), 0);
	assert_string_equal(a.kind, "container");
	assert_int_equal(sl_cgproc_parse("3:cpu:/x (deleted)\n", &a), 0);
	assert_string_equal(a.kind, "deleted");
	assert_int_equal(a.is_container, SL_NO);
	/* very long path does not overflow fixed fields */
	char big[8192];
	memset(big, 'a', sizeof(big) - 1);
	big[0] = '/';
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(sl_cgpath_parse(big, &a), 0);
	assert_int_equal(a.is_container, SL_NO);
}

int main(void)
{
	char shared[512];
	if (sl_shared_cases_dir("test_cgpath", "cgroup_path", shared, sizeof(shared)))
		return sl_shared_cases_fail("test_cgpath");
	struct tcase *cases = NULL;
	size_t n = 0, cap = 0;
	size_t ns = add_cases(shared, &cases, &n, &cap);
	size_t no = add_cases("tests/unit/cases/cgroup_path", &cases, &n, &cap);
	if (ns < SHARED_MIN_CASES || no < OWN_MIN_CASES) {
		fprintf(stderr, "test_cgpath: found %zu shared cases in %s (need >= %d) and %zu own (need >= %d)\n",
			ns, shared, SHARED_MIN_CASES, no, OWN_MIN_CASES);
		free(cases);
		return 1;
	}
	struct CMUnitTest *t = calloc(n + 2, sizeof(*t));
	if (!t)
		return 1;
	for (size_t i = 0; i < n; i++) {
		t[i].name = cases[i].id;
		t[i].test_func = run_case;
		t[i].initial_state = &cases[i];
	}
	t[n].name = "runc_parents";
	t[n].test_func = test_runc_parents;
	t[n + 1].name = "kinds_and_errors";
	t[n + 1].test_func = test_kinds_and_errors;
	int rc = _cmocka_run_group_tests("cgpath", t, n + 2, NULL, NULL);
	free(t);
	free(cases);
	return rc;
}
