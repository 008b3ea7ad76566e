/* Argv redaction (src/modules/proc_redact.c, proc.redact_args): every case
 * in tests/unit/cases/redact/ (one .json per case: {"argv": [...], "patterns": [...]
 * (absent = the default set of sl_config_defaults), "expect": [...],
 * "redacted": bool}), plus the exec-record path and pattern validation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
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
#include "modules/proc.h"
#include "modules/proc_redact.h"

#define CASES "tests/unit/cases/redact"

static size_t block(json_t *argv, char *buf, size_t cap)
{
	size_t n = 0, i;
	json_t *v;
	json_array_foreach(argv, i, v) {
		const char *s = json_string_value(v);
		size_t l = strlen(s) + 1;
		assert_true(n + l <= cap);
		memcpy(buf + n, s, l);
		n += l;
	}
	return n;
}

static void run_case(const char *path, const struct sl_config *defaults)
{
	json_error_t je;
	json_t *c = json_load_file(path, 0, &je), *pats, *got, *v;
	char blk[4096], (*pat)[64] = NULL;
	unsigned npat;
	int redacted = -1;
	size_t i;

	if (!c)
		fail_msg("%s: %s", path, je.text);
	pats = json_object_get(c, "patterns");
	if (pats) {
		npat = (unsigned)json_array_size(pats);
		pat = calloc(npat ? npat : 1, sizeof(*pat));
		json_array_foreach(pats, i, v)
			snprintf(pat[i], sizeof(pat[i]), "%s", json_string_value(v));
	} else {
		const struct sl_proc_cfg *pc = PROC((struct sl_config *)defaults);
		npat = pc->redact_args.n;
		pat = calloc(npat, sizeof(*pat));
		memcpy(pat, pc->redact_args.v, npat * sizeof(*pat));
	}
	size_t n = block(json_object_get(c, "argv"), blk, sizeof(blk));
	got = sl_proc_argv_json_redact(blk, n, (const char (*)[64])pat, npat, &redacted);
	assert_non_null(got);
	if (!json_equal(got, json_object_get(c, "expect"))) {
		char *g = json_dumps(got, 0);
		fail_msg("%s: got %s", path, g);
	}
	if (redacted != json_is_true(json_object_get(c, "redacted")))
		fail_msg("%s: redacted=%d", path, redacted);
	/* with no patterns the result is the plain split */
	json_t *plain = sl_proc_argv_json(blk, n), *none = sl_proc_argv_json_redact(blk, n, NULL, 0, &redacted);
	assert_true(json_equal(plain, none));
	assert_int_equal(redacted, 0);
	json_decref(plain);
	json_decref(none);
	json_decref(got);
	json_decref(c);
	free(pat);
}

static void cases(void **state)
{
	(void)state;
	struct sl_config d;
	DIR *dir = opendir(CASES);
	struct dirent *e;
	int n = 0;
	char path[512];

	sl_config_defaults(&d);
	assert_non_null(dir);
	while ((e = readdir(dir))) {
		size_t l = strlen(e->d_name);
		if (l < 6 || strcmp(e->d_name + l - 5, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", CASES, e->d_name);
		print_message("case %s\n", e->d_name);
		run_case(path, &d);
		n++;
	}
	closedir(dir);
	assert_true(n >= 11);
}

/* The exec record path: argv redacted, args_redacted set only then. */
static void exec_fields_redacted(void **state)
{
	(void)state;
	static struct sl_exec_event e;
	static const char blk[] = "app\0--token\0abc\0";
	struct sl_config d;
	json_t *o;

	sl_config_defaults(&d);
	memset(&e, 0, sizeof(e));
	e.hdr.type = SL_EV_EXEC;
	memcpy(e.argv, blk, sizeof(blk) - 1);
	e.argv_len = sizeof(blk) - 1;
	o = sl_proc_exec_fields_redact(&e, sizeof(e), (const char (*)[64])PROC(&d)->redact_args.v, PROC(&d)->redact_args.n);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_array_get(json_object_get(o, "argv"), 2)), "***");
	assert_true(json_is_true(json_object_get(o, "args_redacted")));
	json_decref(o);
	o = sl_proc_exec_fields(&e, sizeof(e)); /* no patterns */
	assert_string_equal(json_string_value(json_array_get(json_object_get(o, "argv"), 2)), "abc");
	assert_null(json_object_get(o, "args_redacted"));
	json_decref(o);
}

static void pattern_check(void **state)
{
	(void)state;
	const char *why = NULL;
	assert_int_equal(sl_redact_pattern_check("--password=", &why), 0);
	assert_int_equal(sl_redact_pattern_check("-p*", &why), 0);
	assert_int_equal(sl_redact_pattern_check("", &why), -1);
	assert_int_equal(sl_redact_pattern_check("=", &why), -1);
	assert_int_equal(sl_redact_pattern_check("a b=", &why), -1);
	assert_non_null(why);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cases),
		cmocka_unit_test(exec_fields_redacted),
		cmocka_unit_test(pattern_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
