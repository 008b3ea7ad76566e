/* stall module: decoders of the kernel-log lines that report lockups and
 * RCU stalls (pure functions, tests/unit/test_stall_kmsg.c). The formats
 * are the kernel's own printk strings, after their pr_fmt prefix:
 *   kernel/watchdog.c watchdog_timer_fn():
 *     "watchdog: BUG: soft lockup - CPU#%d stuck for %us! [%s:%d]"
 *   kernel/watchdog.c watchdog_hardlockup_check() (6.5+; before:
 *   kernel/watchdog_hld.c watchdog_overflow_callback()):
 *     "watchdog: Watchdog detected hard LOCKUP on cpu %u", on 6.5+ prefixed
 *     "CPU%u: " when another CPU's buddy detected it; older kernels print
 *     "NMI watchdog: Watchdog detected hard LOCKUP on cpu %d"
 *   kernel/rcu/tree_stall.h print_cpu_stall() / print_other_cpu_stall():
 *     "rcu: INFO: %s self-detected stall on CPU"
 *     "rcu: INFO: %s detected stalls on CPUs/tasks:"
 *   kernel/rcu/tree_exp.h synchronize_rcu_expedited_wait():
 *     "rcu: INFO: %s detected expedited stalls on CPUs/tasks: {"
 *   kernel/rcu/tree_stall.h print_cpu_stall_info() (the CPU lines after a
 *   header): "rcu: \t%d-%c%c%c%c: (%lu %s) ..."
 */
#ifndef SANDLENS_MODULES_STALL_KMSG_H
#define SANDLENS_MODULES_STALL_KMSG_H

enum sl_stall_klog_kind {
	SL_KLOG_NONE = 0,
	SL_KLOG_SOFT_LOCKUP,
	SL_KLOG_HARD_LOCKUP,
	SL_KLOG_RCU_STALL,
	SL_KLOG_RCU_CPU, /* a CPU line following an RCU stall header */
};

struct sl_stall_klog {
	int kind;          /* enum sl_stall_klog_kind */
	int cpu;           /* -1 when the line names none */
	unsigned stuck_s;  /* soft lockup: seconds stuck */
	int pid;           /* soft lockup: the task on the CPU; -1 none */
	char comm[64];     /* soft lockup: its comm ("" none) */
	char flavor[32];   /* RCU: rcu_sched, rcu_preempt, rcu_bh, ... */
	char how[24];      /* RCU: "self_detected", "other_cpus", "expedited" */
	unsigned long ticks; /* RCU CPU line: ticks of the grace period */
};

/* Decode one kernel-log message (no record header, no newline). Returns
 * the kind (SL_KLOG_NONE for any other line) and fills *o. Lines with the
 * pr_fmt prefix ("watchdog: ", "NMI watchdog: ", "rcu: ") or without it
 * are accepted; anything after the parsed part is ignored. */
int sl_stall_klog_decode(const char *msg, struct sl_stall_klog *o);

/* Name of a kind: "soft_lockup", "hard_lockup", "rcu_stall", "rcu_cpu",
 * "none". */
const char *sl_stall_klog_kind_name(int kind);

#endif
