/* The one directory walker (src/common/dir_trust.c) with and without
 * SL_DIR_STICKY_OK: a root 0700 / 0755 directory and a missing one under
 * it are fine; group/other-writable is refused unless sticky and allowed;
 * another user's directory (as root: uid 65534) and symlink are refused;
 * the stores' wrapper keeps refusing a sticky directory. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <unistd.h>

#include "common/dir_trust.h"
#include "store/sqlite_private.h"
#include "tmp_root.h"

static char root[64];

static const char *at(const char *rel)
{
	static char p[4][300];
	static int i;
	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", root, rel);
	return p[i];
}

static void mk(const char *rel, mode_t mode)
{
	assert_int_equal(mkdir(at(rel), mode), 0);
	assert_int_equal(chmod(at(rel), mode), 0);
}

static void test_modes(void **state)
{
	(void)state;
	mk("own", 0755);
	assert_null(sl_dir_refusal(at("own/api.sock"), 0, NULL));
	assert_null(sl_dir_refusal(at("own/missing/api.sock"), SL_DIR_STICKY_OK, NULL));
	mk("ww", 0777);
	const char *why = sl_dir_refusal(at("ww/f"), SL_DIR_STICKY_OK, "risk text");
	assert_non_null(why);
	assert_string_equal(why, "is writable by group or others (risk text)");
	assert_string_equal(sl_dir_refusal(at("ww/f"), 0, NULL), "is writable by group or others");
	why = sl_dir_refusal(at("ww/sub/f"), 0, NULL);
	assert_non_null(why);
	assert_non_null(strstr(why, "would be made in "));
	mk("gw", 0770);
	assert_non_null(sl_dir_refusal(at("gw/f"), SL_DIR_STICKY_OK, NULL));
	mk("sticky", 01777);
	assert_null(sl_dir_refusal(at("sticky/f"), SL_DIR_STICKY_OK, NULL));
	assert_non_null(sl_dir_refusal(at("sticky/f"), 0, NULL));
	/* the stores: sticky is no excuse, and their reason is kept */
	why = sl_store_dir_refusal(at("sticky/events.db"));
	assert_non_null(why);
	assert_non_null(strstr(why, "is writable by group or others (others could plant the database's side files"));
	FILE *f = fopen(at("own/file"), "w");
	assert_non_null(f);
	fclose(f);
	assert_string_equal(sl_dir_refusal(at("own/file/x"), 0, NULL), "is not a directory");
}

static void test_other_user(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	mk("nb", 0755);
	assert_int_equal(chown(at("nb"), 65534, 65534), 0);
	assert_string_equal(sl_dir_refusal(at("nb/api.sock"), SL_DIR_STICKY_OK, NULL), "is owned by another user");
	const char *why = sl_dir_refusal(at("nb/run/api.sock"), SL_DIR_STICKY_OK, NULL);
	assert_non_null(why);
	assert_non_null(strstr(why, ", owned by another user"));
	/* a directory above the socket's, owned by another user or open to
	 * all without the sticky bit: the rest of the path could be renamed
	 * away and replaced (a sticky one, as /tmp, is fine) */
	mk("nb/sub", 0755);
	why = sl_dir_refusal(at("nb/sub/api.sock"), SL_DIR_STICKY_OK, NULL);
	assert_non_null(why);
	assert_non_null(strstr(why, "nb on its path, a directory owned by uid 65534"));
	mk("ww2", 0777);
	mk("ww2/sub", 0755);
	why = sl_dir_refusal(at("ww2/sub/api.sock"), SL_DIR_STICKY_OK, NULL);
	assert_non_null(why);
	assert_non_null(strstr(why, "ww2 on its path, a directory writable by group or others (not sticky)"));
	mk("st2", 01777);
	mk("st2/sub", 0700);
	assert_null(sl_dir_refusal(at("st2/sub/api.sock"), 0, NULL));
	mk("o", 0755);
	assert_int_equal(symlink("/run", at("o/l")), 0);
	assert_int_equal(lchown(at("o/l"), 65534, 65534), 0);
	why = sl_dir_refusal(at("o/l/x/api.sock"), SL_DIR_STICKY_OK, NULL);
	assert_non_null(why);
	assert_non_null(strstr(why, "a symbolic link owned by uid 65534"));
}

/* sl_mkdir_mode: the mode asked for whatever the umask (the agent's is
 * 077: a socket directory api.admin_group must enter was made 0700); an
 * existing directory keeps its own */
static void test_mkdir_mode(void **state)
{
	(void)state;
	char d[300], l[300];
	struct stat st;
	mode_t old = umask(077);
	snprintf(d, sizeof(d), "%s/made", root);
	assert_int_equal(sl_mkdir_mode(d, 0755), 1);
	assert_int_equal(stat(d, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(chmod(d, 0700), 0);
	assert_int_equal(sl_mkdir_mode(d, 0755), 0);
	assert_int_equal(stat(d, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	/* a symlink in its place exists: not followed, not changed */
	snprintf(l, sizeof(l), "%s/link", root);
	assert_int_equal(symlink(d, l), 0);
	assert_int_equal(sl_mkdir_mode(l, 0755), 0);
	assert_int_equal(stat(d, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	snprintf(d, sizeof(d), "%s/missing/sub", root);
	assert_int_equal(sl_mkdir_mode(d, 0755), -ENOENT);
	umask(old);
}

int main(void)
{
	if (sl_test_mk_root(root, sizeof(root), "sl-dirtrust"))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_other_user),
		cmocka_unit_test(test_mkdir_mode),
	};
	return sl_test_rm_root(root, cmocka_run_group_tests(tests, NULL, NULL));
}
