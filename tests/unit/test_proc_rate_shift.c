/* sl_proc_set_rate_shift / sl_proc_get_rate_shift argument and state
 * checks (src/modules/proc.c); the arithmetic is in test_token_bucket. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "agent/module.h"
#include "modules/proc.h"
#include "modules/sched.h"

static void not_running(void **state)
{
	(void)state;
	struct sl_module m;
	memset(&m, 0, sizeof(m));
	assert_int_equal(sl_proc_set_rate_shift(NULL, 1), -ENODEV);
	assert_int_equal(sl_proc_set_rate_shift(NULL, 9), -EINVAL);
	m.ops = &sl_proc_module; /* not initialised: no priv */
	assert_int_equal(sl_proc_set_rate_shift(&m, 0), -ENODEV);
	m.state = -EPERM;
	assert_int_equal(sl_proc_set_rate_shift(&m, 8), -ENODEV);
	m.ops = &sl_sched_module;
	m.state = 0;
	assert_int_equal(sl_proc_set_rate_shift(&m, 2), -ENODEV);
	assert_int_equal(sl_proc_get_rate_shift(&m), 0);
	assert_int_equal(sl_proc_get_rate_shift(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(not_running),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
