/* stall module pure parts: the kernel-log decoders (src/modules/
 * stall_kmsg.c) against the kernel's own printk formats, one test per
 * decoder, with look-alike lines that must not match; and the blocking-
 * episode bookkeeping of the hung-task scan (src/modules/stall_hung.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "modules/stall_hung.h"
#include "modules/stall_kmsg.h"

/* kernel/watchdog.c watchdog_timer_fn():
 * pr_emerg("BUG: soft lockup - CPU#%d stuck for %us! [%s:%d]\n", ...) with
 * pr_fmt "watchdog: " */
static void test_soft_lockup(void **state)
{
	struct sl_stall_klog k;
	(void)state;
	assert_int_equal(sl_stall_klog_decode("watchdog: BUG: soft lockup - CPU#3 stuck for 23s! [kworker/3:1:123]", &k),
			 SL_KLOG_SOFT_LOCKUP);
	assert_int_equal(k.cpu, 3);
	assert_int_equal(k.stuck_s, 23);
	assert_string_equal(k.comm, "kworker/3:1");
	assert_int_equal(k.pid, 123);
	/* without the prefix (older kernels printed it bare), a comm with spaces */
	assert_int_equal(sl_stall_klog_decode("BUG: soft lockup - CPU#0 stuck for 4100s! [my prog:4242]", &k),
			 SL_KLOG_SOFT_LOCKUP);
	assert_int_equal(k.cpu, 0);
	assert_int_equal(k.stuck_s, 4100);
	assert_string_equal(k.comm, "my prog");
	assert_int_equal(k.pid, 4242);
	/* task part malformed: the lockup still counts, no task */
	assert_int_equal(sl_stall_klog_decode("watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [swapper]", &k),
			 SL_KLOG_SOFT_LOCKUP);
	assert_int_equal(k.pid, -1);
	assert_string_equal(k.comm, "");
	/* look-alikes */
	assert_int_equal(sl_stall_klog_decode("watchdog: BUG: soft lockup - CPU#x stuck for 22s!", &k), SL_KLOG_NONE);
	assert_int_equal(sl_stall_klog_decode("user says BUG: soft lockup - CPU#1 stuck for 22s! [a:1]", &k), SL_KLOG_NONE);
	assert_int_equal(sl_stall_klog_decode("watchdog: BUG: soft lockup - CPU#-1 stuck for 22s! [a:1]", &k), SL_KLOG_NONE);
}

/* kernel/watchdog.c watchdog_hardlockup_check() (6.5+): "Watchdog detected
 * hard LOCKUP on cpu %u", prefixed "CPU%u: " by the buddy detector; older
 * kernel/watchdog_hld.c: pr_fmt "NMI watchdog: " */
static void test_hard_lockup(void **state)
{
	struct sl_stall_klog k;
	(void)state;
	assert_int_equal(sl_stall_klog_decode("watchdog: Watchdog detected hard LOCKUP on cpu 5", &k), SL_KLOG_HARD_LOCKUP);
	assert_int_equal(k.cpu, 5);
	assert_int_equal(sl_stall_klog_decode("watchdog: CPU2: Watchdog detected hard LOCKUP on cpu 3", &k),
			 SL_KLOG_HARD_LOCKUP);
	assert_int_equal(k.cpu, 3);
	assert_int_equal(sl_stall_klog_decode("NMI watchdog: Watchdog detected hard LOCKUP on cpu 0", &k),
			 SL_KLOG_HARD_LOCKUP);
	assert_int_equal(k.cpu, 0);
	assert_int_equal(sl_stall_klog_decode("echo Watchdog detected hard LOCKUP on cpu 0", &k), SL_KLOG_NONE);
	assert_int_equal(sl_stall_klog_decode("watchdog: Watchdog detected hard LOCKUP on cpu x", &k), SL_KLOG_NONE);
}

/* kernel/rcu/tree_stall.h print_cpu_stall(): "INFO: %s self-detected stall
 * on CPU"; print_other_cpu_stall(): "INFO: %s detected stalls on
 * CPUs/tasks:"; tree_exp.h: "INFO: %s detected expedited stalls on
 * CPUs/tasks: {"; pr_fmt "rcu: "; CPU lines from print_cpu_stall_info():
 * "\t%d-%c%c%c%c: (%lu %s) idle=..." */
static void test_rcu(void **state)
{
	struct sl_stall_klog k;
	(void)state;
	assert_int_equal(sl_stall_klog_decode("rcu: INFO: rcu_sched self-detected stall on CPU", &k), SL_KLOG_RCU_STALL);
	assert_string_equal(k.flavor, "rcu_sched");
	assert_string_equal(k.how, "self_detected");
	assert_int_equal(k.cpu, -1);
	assert_int_equal(sl_stall_klog_decode("rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:", &k),
			 SL_KLOG_RCU_STALL);
	assert_string_equal(k.flavor, "rcu_preempt");
	assert_string_equal(k.how, "other_cpus");
	assert_int_equal(sl_stall_klog_decode("rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: { 1-.... } 21 jiffies s: 81 root: 0x2/.", &k),
			 SL_KLOG_RCU_STALL);
	assert_string_equal(k.how, "expedited");
	assert_int_equal(sl_stall_klog_decode("rcu: \t1-....: (5249 ticks this GP) idle=3b4/1/0x4000000000000000 softirq=1/1 fqs=2623",
					      &k),
			 SL_KLOG_RCU_CPU);
	assert_int_equal(k.cpu, 1);
	assert_int_equal(k.ticks, 5249);
	assert_int_equal(sl_stall_klog_decode("rcu: \t12-...0: (1 GPs behind) idle=", &k), SL_KLOG_RCU_CPU);
	assert_int_equal(k.cpu, 12);
	assert_int_equal(sl_stall_klog_decode("rcu: INFO: foo self-detected stall on CPU", &k), SL_KLOG_NONE);
	assert_int_equal(sl_stall_klog_decode("rcu: INFO: rcu_sched detected something else", &k), SL_KLOG_NONE);
	assert_int_equal(sl_stall_klog_decode("rcu: \t(detected by 0, t=5252 jiffies, g=1, q=2)", &k), SL_KLOG_NONE);
	assert_int_equal(sl_stall_klog_decode("1-....: (5249 ticks this GP)", &k), SL_KLOG_NONE); /* not indented */
	assert_int_equal(sl_stall_klog_decode(NULL, &k), SL_KLOG_NONE);
	assert_string_equal(sl_stall_klog_kind_name(SL_KLOG_RCU_STALL), "rcu_stall");
}

/* One episode = scans that find the task with the same switch count; one
 * report when it reaches the threshold; a new count or a missed scan starts
 * a new episode; an unseen task is forgotten at the end of the scan. */
static void test_hung_episodes(void **state)
{
	struct sl_hung h;
	uint64_t b, s = 1000000000ull, thr = 3 * s;
	int over;
	(void)state;
	memset(&h, 0, sizeof(h));
	for (int i = 0; i <= 5; i++) {
		sl_hung_begin(&h);
		int rc = sl_hung_observe(&h, 42, 7, (uint64_t)i * s, thr, &b, &over);
		assert_int_equal(b, (uint64_t)i * s);
		assert_int_equal(over, i >= 3);
		assert_int_equal(rc, i == 3); /* reported once, at the threshold */
		assert_int_equal(sl_hung_end(&h), 0);
	}
	/* it ran: switch count changed -> a new episode, reported again later */
	sl_hung_begin(&h);
	assert_int_equal(sl_hung_observe(&h, 42, 8, 6 * s, thr, &b, &over), 0);
	assert_int_equal(b, 0);
	assert_int_equal(over, 0);
	sl_hung_end(&h);
	for (int i = 7; i <= 9; i++) {
		sl_hung_begin(&h);
		int rc = sl_hung_observe(&h, 42, 8, (uint64_t)i * s, thr, &b, &over);
		assert_int_equal(rc, i == 9);
		sl_hung_end(&h);
	}
	/* not seen by a scan: forgotten; seen again later: a fresh episode */
	sl_hung_begin(&h);
	assert_int_equal(sl_hung_end(&h), 1);
	assert_int_equal(h.n, 0);
	sl_hung_begin(&h);
	assert_int_equal(sl_hung_observe(&h, 42, 8, 20 * s, thr, &b, &over), 0);
	assert_int_equal(b, 0);
	/* two tasks at once */
	assert_int_equal(sl_hung_observe(&h, 43, 1, 20 * s, thr, &b, &over), 0);
	assert_int_equal(h.n, 2);
	sl_hung_end(&h);
	/* a zero threshold (the kernel's reports): the first sight is the report,
	 * repeats inside the same or the next generation are not */
	struct sl_hung k;
	memset(&k, 0, sizeof(k));
	assert_int_equal(sl_hung_observe(&k, 9, 5, 1, 0, &b, &over), 1);
	assert_int_equal(sl_hung_observe(&k, 9, 5, 2, 0, &b, &over), 0);
	sl_hung_begin(&k);
	assert_int_equal(sl_hung_observe(&k, 9, 5, 3, 0, &b, &over), 0);
	assert_int_equal(sl_hung_observe(&k, 9, 6, 4, 0, &b, &over), 1); /* it ran in between */
	sl_hung_free(&k);
	sl_hung_free(&h);
	assert_int_equal(h.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soft_lockup),
		cmocka_unit_test(test_hard_lockup),
		cmocka_unit_test(test_rcu),
		cmocka_unit_test(test_hung_episodes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
