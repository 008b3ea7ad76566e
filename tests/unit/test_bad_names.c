/* Names that are not valid UTF-8 (a comm set with PR_SET_NAME, a symbol
 * renamed with objcopy, an open file's path: all bytes from the world) in
 * every profile output and in a capture's snapshot (break-it finding): the
 * JSON writers keep the entry with U+FFFD (the diff JSON used to answer 500
 * "out of memory", captures dropped the process), the SVG and HTML flame
 * graphs stay well-formed UTF-8 XML, the folded lines keep one stack per
 * line with control bytes as '?'. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auto/prof_diff.h"
#include "auto/snapshot.h"
#include "common/json.h"
#include "profile/profile_merge.h"
#pragma GCC diagnostic ignored "-Wunused-function" /* the fixture's fx_profile */
#include "profile_fixture.h"

#define R "\xef\xbf\xbd" /* U+FFFD */
#define BAD_COMM "\xff\xfe\xc0" "bad"
#define BAD_SYM "hot\xff\xfe\x01" "fn"
#define BAD_MOD "/tmp/\xff\xfe\x01" "name"

static struct sl_profile *bad_profile(uint64_t n)
{
	struct sl_profile *p = sl_prof_new(SL_PROF_ON_CPU, 1700000000000000000ull, 1000000000ull, 10000000ull);
	uint32_t fr[] = { fx_frame(p, "main", "/bin/app", 0x1000, 0), fx_frame(p, BAD_SYM, BAD_MOD, 0x2000, 0) };
	fx_add(p, 1, BAD_COMM, "", 0, fr, 2, n);
	return p;
}

static char *render(struct sl_profile *p, int fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	int rc = fmt == SL_FMT_FOLDED ? sl_profile_write_folded(p, SL_VALUE_COUNT, f) : sl_profile_write(p, fmt, 1, f);
	fclose(f);
	assert_int_equal(rc, 0);
	return buf;
}

/* the whole text is valid UTF-8 and holds no C0 control but \t \n \r */
static void assert_clean_text(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), bad;
	for (size_t k = 0; k < n;) {
		if (u[k] < 0x20 && u[k] != '\n' && u[k] != '\t' && u[k] != '\r')
			fail_msg("control byte 0x%02x at %zu", u[k], k);
		size_t l = sl_utf8_seq(u + k, n - k, &bad);
		if (!l)
			fail_msg("invalid UTF-8 at %zu: %.20s", k, s + k);
		k += l;
	}
}

static char *xml_esc(const char *s, size_t max)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	sl_xml_esc(s, max, f);
	fclose(f);
	return buf;
}

static void test_xml_esc(void **state)
{
	(void)state;
	char *s = xml_esc(BAD_SYM "<&>\x7f", 4096);
	assert_string_equal(s, "hot" R R "?fn&lt;&amp;&gt;?");
	free(s);
	/* valid multibyte kept; a cut never splits a character */
	s = xml_esc("caf\xc3\xa9\xe6\x97\xa5", 4096);
	assert_string_equal(s, "caf\xc3\xa9\xe6\x97\xa5");
	free(s);
	s = xml_esc("caf\xc3\xa9\xe6\x97\xa5", 6);
	assert_string_equal(s, "caf\xc3\xa9..");
	free(s);
	s = xml_esc("caf\xc3\xa9", 4);
	assert_string_equal(s, "caf..");
	free(s);
	/* overlong, surrogate, truncated lead */
	s = xml_esc("\xc0\xaf|\xed\xa0\x80|\xe6\x97", 4096);
	assert_string_equal(s, R R "|" R R R "|" R);
	free(s);
}

/* Parses as XML with an independent reader (Python's expat) when present. */
static void assert_xml_parses(const char *doc)
{
	if (system("python3 -c 'import xml.dom.minidom' >/dev/null 2>&1") != 0) {
		print_message("python3 absent: XML parse check skipped\n");
		return;
	}
	char path[] = "/tmp/sl-test-bad-names-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	size_t n = strlen(doc);
	assert_int_equal(write(fd, doc, n), (ssize_t)n);
	close(fd);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "python3 -c 'import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])' %s",
		 path);
	int rc = system(cmd);
	unlink(path);
	assert_int_equal(rc, 0);
}

static void test_svg_html_folded(void **state)
{
	(void)state;
	struct sl_profile *p = bad_profile(10);
	char *s = render(p, SL_FMT_SVG);
	assert_clean_text(s);
	assert_non_null(strstr(s, "hot" R R "?fn"));
	assert_non_null(strstr(s, R R R "bad"));
	assert_xml_parses(s);
	free(s);
	s = render(p, SL_FMT_HTML);
	assert_clean_text(s);
	free(s);
	s = render(p, SL_FMT_FOLDED);
	assert_string_equal(s, R R R "bad;main;hot" R R "?fn 10\n");
	free(s);
	sl_profile_free(p);
}

static void test_tree_json(void **state)
{
	(void)state;
	struct sl_profile *p = bad_profile(10);
	char *s = render(p, SL_FMT_JSON);
	json_error_t err;
	json_t *o = json_loads(s, 0, &err);
	assert_non_null(o);
	json_t *top = json_array_get(json_object_get(o, "top"), 0);
	assert_string_equal(json_string_value(json_object_get(top, "function")), "hot" R R "\x01" "fn");
	assert_string_equal(json_string_value(json_object_get(top, "module")), "/tmp/" R R "\x01" "name");
	json_t *comm = json_array_get(json_object_get(json_object_get(o, "tree"), "children"), 0);
	assert_string_equal(json_string_value(json_object_get(comm, "name")), R R R "bad");
	json_decref(o);
	free(s);
	sl_profile_free(p);
}

static void test_delta_json(void **state)
{
	(void)state;
	struct sl_profile *base = bad_profile(10), *cur = bad_profile(30);
	json_t *j = sl_profile_delta_json(base, cur, 10);
	assert_non_null(j); /* was NULL: the API's 500 "out of memory" */
	json_t *f;
	size_t i;
	int seen = 0;
	json_array_foreach(json_object_get(j, "functions"), i, f) {
		if (!strcmp(json_string_value(json_object_get(f, "function")), "hot" R R "\x01" "fn")) {
			assert_string_equal(json_string_value(json_object_get(f, "module")), "/tmp/" R R "\x01" "name");
			assert_int_equal(json_integer_value(json_object_get(f, "delta_self")), 20);
			seen = 1;
		}
	}
	assert_true(seen);
	json_decref(j);
	/* the capture's baseline diff (top_regressions) */
	struct sl_profile *idle = sl_prof_new(SL_PROF_ON_CPU, 0, 1000000000ull, 10000000ull);
	uint32_t m = fx_frame(idle, "main", "/bin/app", 0x1000, 0);
	fx_add(idle, 1, "app", "", 0, &m, 1, 10);
	struct sl_prof_diff_frame *d = NULL;
	int n = sl_prof_diff(cur, idle, 10, &d);
	assert_true(n >= 1);
	j = sl_prof_diff_json(d, (size_t)n);
	assert_int_equal(json_array_size(j), (size_t)n);
	assert_string_equal(json_string_value(json_object_get(json_array_get(j, 0), "function")), "hot" R R "\x01" "fn");
	json_decref(j);
	free(d);
	sl_profile_free(idle);
	sl_profile_free(base);
	sl_profile_free(cur);
}

static void put(const char *dir, const char *name, const char *text, size_t n)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, n, f), n);
	fclose(f);
}

#define PUT(dir, name, lit) put(dir, name, lit, sizeof(lit) - 1)

/* A fake /proc: pid 7 with a bad comm, a bad argv and an fd on a bad path;
 * its task 7 in D state. */
static void test_snapshot(void **state)
{
	(void)state;
	char root[] = "/tmp/sl-test-snap-XXXXXX", d[600];
	assert_non_null(mkdtemp(root));
	snprintf(d, sizeof(d), "%s/7", root);
	assert_int_equal(mkdir(d, 0700), 0);
	PUT(d, "stat", "7 (" BAD_COMM ") S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 0 0 0\n");
	PUT(d, "statm", "100 20 0 0 0 0 0\n");
	PUT(d, "cmdline", BAD_COMM "\0--x=\xff\x01\0");
	snprintf(d, sizeof(d), "%s/7/fd", root);
	assert_int_equal(mkdir(d, 0700), 0);
	snprintf(d, sizeof(d), "%s/7/fd/3", root);
	assert_int_equal(symlink(BAD_MOD, d), 0);
	snprintf(d, sizeof(d), "%s/7/task", root);
	assert_int_equal(mkdir(d, 0700), 0);
	snprintf(d, sizeof(d), "%s/7/task/7", root);
	assert_int_equal(mkdir(d, 0700), 0);
	PUT(d, "stat", "7 (" BAD_COMM ") D 1 7 7 0\n");
	PUT(d, "wchan", "wait\xff");
	PUT(d, "stack", "[<0>] io_schedule+0x1/0x2\n[<0>] bad\xfe" "fn+0x3/0x4\n");
	PUT(root, "cgroup.procs", "7\n");
	char procs[600];
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", root);
	struct sl_snapshot_opts o = { .proc_root = root, .max_procs = 10, .top_files = 10, .stacks = 1 };
	json_t *s = sl_snapshot_take(procs, &o);
	assert_non_null(s);
	assert_int_equal(json_integer_value(json_object_get(s, "processes_total")), 1);
	json_t *p = json_array_get(json_object_get(s, "processes"), 0);
	assert_non_null(p); /* was dropped: "processes":[] */
	assert_string_equal(json_string_value(json_object_get(p, "comm")), R R R "bad");
	json_t *argv = json_object_get(p, "cmdline");
	assert_int_equal(json_array_size(argv), 2);
	assert_string_equal(json_string_value(json_array_get(argv, 1)), "--x=" R "\x01");
	json_t *f = json_array_get(json_object_get(s, "open_files"), 0);
	assert_non_null(f); /* was missing */
	assert_string_equal(json_string_value(json_object_get(f, "path")), "/tmp/" R R "\x01" "name");
	json_t *t = json_array_get(json_object_get(s, "dstate_tasks"), 0);
	assert_non_null(t);
	assert_string_equal(json_string_value(json_object_get(t, "comm")), R R R "bad");
	assert_string_equal(json_string_value(json_object_get(t, "wchan")), "wait" R);
	assert_string_equal(json_string_value(json_array_get(json_object_get(t, "stack"), 1)), "bad" R "fn+0x3/0x4");
	/* the whole snapshot serialises */
	char *txt = json_dumps(s, 0);
	assert_non_null(txt);
	free(txt);
	json_decref(s);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xml_esc),
		cmocka_unit_test(test_svg_html_folded),
		cmocka_unit_test(test_tree_json),
		cmocka_unit_test(test_delta_json),
		cmocka_unit_test(test_snapshot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
