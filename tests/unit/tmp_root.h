/* A unit test's private directory under /tmp: made (mkdtemp, mode 0700)
 * before its tests run, removed with everything in it after. */
#ifndef SL_TEST_TMP_ROOT_H
#define SL_TEST_TMP_ROOT_H

#include <stdio.h>
#include <stdlib.h>

/* root (len bytes) = /tmp/NAME-XXXXXX, created. 0, or -1 when it cannot be made. */
static inline int sl_test_mk_root(char *root, size_t len, const char *name)
{
	snprintf(root, len, "/tmp/%s-XXXXXX", name);
	return mkdtemp(root) ? 0 : -1;
}

/* Remove root and all it holds; returns rc (the tests' result), or 1 when
 * the tests passed but root could not be removed. */
static inline int sl_test_rm_root(const char *root, int rc)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		rc = rc ? rc : 1;
	return rc;
}

#endif
