/* proc section keys added for issue 8 (src/agent/config.c): proc.exit_rate,
 * proc.exit_burst, proc.redact_args (a list; [] = none). Errors name the
 * dotted key (and the list index). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/config.h"
#include "modules/proc.h"
#include "modules/sched.h"

/* the modules' sections (tests may name modules) */
static inline struct sl_proc_cfg *PROC(struct sl_config *c)
{
	return sl_config_module_by_name(c, "proc", NULL);
}
static inline struct sl_sched_cfg *SCHED(struct sl_config *c)
{
	return sl_config_module_by_name(c, "sched", NULL);
}

static int load(const char *yaml, struct sl_config *c, char *err, size_t len)
{
	char path[64] = "/tmp/sl-config-proc-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
	close(fd);
	sl_config_defaults(c);
	err[0] = 0;
	int rc = sl_config_load(c, path, err, len);
	unlink(path);
	return rc;
}

static void defaults(void **state)
{
	(void)state;
	struct sl_config c;
	sl_config_defaults(&c);
	assert_int_equal(PROC(&c)->exit_rate, 50);
	assert_int_equal(PROC(&c)->exit_burst, 100);
	assert_true(PROC(&c)->redact_args.n >= 10);
	int pw = 0, flag = 0;
	for (unsigned i = 0; i < PROC(&c)->redact_args.n; i++) {
		pw |= !strcmp(PROC(&c)->redact_args.v[i], "password=");
		flag |= !strcmp(PROC(&c)->redact_args.v[i], "--password");
	}
	assert_true(pw && flag);
}

static void values(void **state)
{
	(void)state;
	struct sl_config c;
	char err[256];
	assert_int_equal(load("proc:\n  exit_rate: 0\n  exit_burst: 7\n  redact_args: [\"-p*\", \"--pin\", \"key=\"]\n",
			      &c, err, sizeof(err)),
			 0);
	assert_int_equal(PROC(&c)->exit_rate, 0);
	assert_int_equal(PROC(&c)->exit_burst, 7);
	assert_int_equal(PROC(&c)->redact_args.n, 3);
	assert_string_equal(PROC(&c)->redact_args.v[0], "-p*");
	assert_string_equal(PROC(&c)->redact_args.v[2], "key=");
	assert_int_equal(load("proc:\n  redact_args: []\n", &c, err, sizeof(err)), 0);
	assert_int_equal(PROC(&c)->redact_args.n, 0);
	assert_int_equal(load("proc:\n  redact_args:\n    - token=\n", &c, err, sizeof(err)), 0);
	assert_int_equal(PROC(&c)->redact_args.n, 1);
}

static void errors(void **state)
{
	(void)state;
	struct sl_config c;
	char err[256];
	static const struct {
		const char *yaml, *want;
	} t[] = {
		{"proc:\n  exit_rate: -1\n", "proc.exit_rate:"},
		{"proc:\n  exit_rate: 2000000\n", "proc.exit_rate: 2000000 out of range"},
		{"proc:\n  exit_burst: 0\n", "proc.exit_burst: 0 out of range"},
		{"proc:\n  redact_args: password=\n", "proc.redact_args: expected a list of strings"},
		{"proc:\n  redact_args: [\"ok=\", \"\"]\n", "proc.redact_args[1]: '': empty pattern"},
		{"proc:\n  redact_args: [\"a b=\"]\n", "proc.redact_args[0]: 'a b=': only printable ASCII"},
		{"proc:\n  redact_args: [[\"x\"]]\n", "proc.redact_args[0]: expected a string (got a sequence)"},
		{"proc:\n  redact_args: [~]\n", "proc.redact_args[0]: expected a string (got null)"},
		{"proc:\n  redact_args: [\"=\"]\n", "proc.redact_args[0]: '=': a pattern needs a name"},
		{"proc:\n  redact_args: [\"0123456789012345678901234567890123456789012345678901234567890123456789=\"]\n",
		 "proc.redact_args[0]: longer than 63 bytes"},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_not_equal(load(t[i].yaml, &c, err, sizeof(err)), 0);
		if (strncmp(err, t[i].want, strlen(t[i].want)))
			fail_msg("case %zu: got '%s', want '%s...'", i, err, t[i].want);
	}
	/* more than SL_CFG_STRLIST_MAX patterns */
	char y[4096] = "proc:\n  redact_args:\n";
	for (int i = 0; i <= SL_CFG_STRLIST_MAX; i++)
		snprintf(y + strlen(y), sizeof(y) - strlen(y), "    - k%d=\n", i);
	assert_int_not_equal(load(y, &c, err, sizeof(err)), 0);
	assert_string_equal(err, "proc.redact_args: more than 32 items");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(values),
		cmocka_unit_test(errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
