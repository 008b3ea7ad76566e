/* Who may write the --config file (src/agent/config.c, break-it item 12d):
 * a file writable by group or others, one owned by another non-root user
 * (as root: uid 65534), or one in a directory others may write (not sticky)
 * or own is refused naming the file and why; root's 0644 file in a root
 * 0700 directory and in a sticky 1777 one load. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/config.h"
#include "tmp_root.h"

static char root[64];

static const char *put(const char *rel, mode_t mode)
{
	static char p[300];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs("log_level: info\n", f);
	fclose(f);
	assert_int_equal(chmod(p, mode), 0);
	return p;
}

static int load(const char *p, char *err, size_t len)
{
	struct sl_config *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	sl_config_defaults(c);
	err[0] = 0;
	int rc = sl_config_load(c, p, err, len);
	free(c);
	return rc;
}

static void test_modes(void **state)
{
	(void)state;
	char err[600], d[300];
	assert_int_equal(load(put("ok.yaml", 0644), err, sizeof(err)), 0);
	const char *p = put("ww.yaml", 0666);
	assert_int_equal(load(p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, p));
	assert_non_null(strstr(err, "refusing it: writable by group or others"));
	assert_non_null(strstr(err, "mode 0666"));
	assert_int_equal(load(put("gw.yaml", 0664), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "writable by group or others"));
	/* a directory others may write: refused unless sticky */
	snprintf(d, sizeof(d), "%s/ww", root);
	assert_int_equal(mkdir(d, 0777), 0);
	assert_int_equal(chmod(d, 0777), 0);
	p = put("ww/c.yaml", 0644);
	assert_int_equal(load(p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "refusing its directory: it is writable by group or others"));
	assert_int_equal(chmod(d, 01777), 0);
	assert_int_equal(load(p, err, sizeof(err)), 0);
	/* through a symlink: the directory of the file it reaches counts (a
	 * root link in a good directory to a file in a 0777 one) */
	char l[300], t[300];
	snprintf(d, sizeof(d), "%s/ww3", root);
	assert_int_equal(mkdir(d, 0777), 0);
	assert_int_equal(chmod(d, 0777), 0);
	snprintf(t, sizeof(t), "%s", put("ww3/c.yaml", 0644));
	snprintf(l, sizeof(l), "%s/via.yaml", root);
	assert_int_equal(symlink(t, l), 0);
	assert_int_equal(load(l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "refusing the directory of "));
	assert_non_null(strstr(err, "the file it reaches: it is writable by group or others"));
	/* and a root link to a good file loads (a ConfigMap's ..data links) */
	snprintf(l, sizeof(l), "%s/via-ok.yaml", root);
	assert_int_equal(symlink(put("ok2.yaml", 0644), l), 0);
	assert_int_equal(load(l, err, sizeof(err)), 0);
}

static void test_other_owner(void **state)
{
	(void)state;
	char err[600], d[300];
	if (geteuid() != 0)
		skip();
	/* another user's symlink to a good file: it could be re-pointed */
	char l[300];
	snprintf(l, sizeof(l), "%s/nb-link.yaml", root);
	assert_int_equal(symlink(put("ok3.yaml", 0644), l), 0);
	assert_int_equal(lchown(l, 65534, 65534), 0);
	assert_int_equal(load(l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "refusing it: a symbolic link owned by uid 65534"));
	const char *p = put("nb.yaml", 0644);
	assert_int_equal(chown(p, 65534, 65534), 0);
	assert_int_equal(load(p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "refusing it: owned by another user (uid 65534"));
	snprintf(d, sizeof(d), "%s/nbdir", root);
	assert_int_equal(mkdir(d, 0755), 0);
	p = put("nbdir/c.yaml", 0644);
	assert_int_equal(chown(d, 65534, 65534), 0);
	assert_int_equal(load(p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "refusing its directory: it is owned by another user"));
}

int main(void)
{
	if (sl_test_mk_root(root, sizeof(root), "sl-cfgtrust"))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_other_owner),
	};
	return sl_test_rm_root(root, cmocka_run_group_tests(tests, NULL, NULL));
}
