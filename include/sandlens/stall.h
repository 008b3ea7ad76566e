/* stall module ABI (bpf/stall.bpf.c, src/modules/stall*.c, docs/STALL.md):
 * softirq raise->entry latency and entry->exit duration per CPU and
 * vector, hardirq handler duration per IRQ, CPU stalls from gaps between
 * per-CPU cpu-clock samples, the kernel's sched:sched_process_hang, and
 * the task-iterator records of the hung-task scan.
 * Record types 112..127 (include/sandlens/common.h: 16 per module). */
#ifndef SANDLENS_STALL_H
#define SANDLENS_STALL_H

#include "sandlens/common.h"

enum sl_stall_event_type {
	SL_EV_STALL_CPU = 112,  /* struct sl_stall_cpu_event */
	SL_EV_STALL_HANG = 113, /* struct sl_stall_hang_event */
};

/* Histogram slots (src/common/log2hist.h, 1 us base): slot 0 = d <= 1 us,
 * slot k in 1..20 = 2^(k-1) us < d <= 2^k us (slot 20 ends at 2^20 us =
 * 1.048576 s), slot 21 = longer. Softirq and hardirq runs are us..ms; a
 * softirq deferred to ksoftirqd under load waits for ms. */
#define SL_STALL_SLOTS 22
#define SL_STALL_FINITE_SLOTS 21

/* Softirq vectors (include/linux/interrupt.h enum: HI_SOFTIRQ = 0 ..
 * RCU_SOFTIRQ = 9; names as /proc/softirqs prints them, kernel/softirq.c
 * softirq_to_name). */
#define SL_STALL_NR_SOFTIRQS 10
/* IRQ numbers counted (map stall_hardirq entries); higher ones are counted
 * in SL_STST_IRQ_RANGE only. */
#define SL_STALL_MAX_IRQS 1024
/* Kernel stack frames kept per record. */
#define SL_STALL_STACK_DEPTH 32

/* One log2 histogram with its sum. */
struct sl_stall_hist {
	__u64 slots[SL_STALL_SLOTS];
	__u64 sum_ns;
};

/* Value of map `stall_softirq` (BPF_MAP_TYPE_PERCPU_ARRAY, key = vector):
 * this CPU's figures of the vector, cumulative since load.
 *   lat: irq:softirq_raise (the first raise while the vector was not
 *        pending on this CPU) -> irq:softirq_entry of the vector;
 *   dur: irq:softirq_entry -> irq:softirq_exit (one handler run). */
struct sl_stall_softirq {
	struct sl_stall_hist lat;
	struct sl_stall_hist dur;
};

/* Value of map `stall_hardirq` (BPF_MAP_TYPE_PERCPU_ARRAY, key = IRQ
 * number < SL_STALL_MAX_IRQS): irq:irq_handler_entry -> irq_handler_exit
 * (one action's handler run; a shared IRQ's actions are counted each). */

/* Per-CPU counters of map `stall_stats` (BPF_MAP_TYPE_PERCPU_ARRAY); user
 * space reads each CPU's value (cpu label) or sums them. */
enum sl_stall_stat {
	SL_STST_SAMPLES = 0,    /* cpu-clock samples taken */
	SL_STST_GAPS,           /* samples whose timer was late by more than the threshold (raw) */
	SL_STST_GAP_STEAL,      /* of those: below the threshold once hypervisor steal time is taken off */
	SL_STST_GAP_IDLE,       /* of those: taken in the idle task (no irq-off code ran) */
	SL_STST_STALLS,         /* cpu_stall events: gaps still above the threshold */
	SL_STST_RB_FAIL,        /* ring buffer reservations that failed (events lost) */
	SL_STST_IRQ_RANGE,      /* hardirq runs of IRQs >= SL_STALL_MAX_IRQS (not in stall_hardirq) */
	SL_STST_NO_RAISE,       /* softirq entries whose raise was not seen (no latency sample) */
	SL_STST_HANG_TP,        /* sched:sched_process_hang calls */
	SL_STST_MAX,
};

/* cpu_stall record: how late the cpu-clock hrtimer interrupt was taken
 * (late_ns), the gap since the sample before (prev_ns), the steal time the
 * kernel accounted on this CPU around it, the kernel stack of the late
 * sample (where interrupts came back on) and the task that was running. */
struct sl_stall_cpu_event {
	struct sl_hdr hdr;
	struct sl_task_id task;
	__u64 late_ns;  /* now - the hrtimer expiry being served: interrupts were off this long */
	__u64 gap_ns;   /* now - the previous sample of this CPU (0: none) */
	__u64 steal_ns;
	__u64 prev_ns;
	__u64 period_ns;
	__s32 kstack_bytes; /* bytes of kstack filled, or -errno of bpf_get_stack */
	__u32 pad;
	__u64 kstack[SL_STALL_STACK_DEPTH];
};

/* sched:sched_process_hang record (khungtaskd found the task blocked for
 * kernel.hung_task_timeout_secs). */
struct sl_stall_hang_event {
	struct sl_hdr hdr;
	struct sl_task_id task;
	__u32 state;        /* task->__state */
	__s32 kstack_bytes; /* bytes of kstack, or -errno of bpf_get_task_stack */
	__u64 switches;     /* nvcsw + nivcsw */
	__u64 kstack[SL_STALL_STACK_DEPTH];
};

/* Task-iterator record (iter/task program stall_dtasks): one per task in
 * uninterruptible sleep (__state has TASK_UNINTERRUPTIBLE, not TASK_NOLOAD:
 * the tasks counted in the load average, the "D" of /proc/<pid>/stat). */
struct sl_stall_dtask {
	struct sl_task_id task;
	__u32 state;        /* task->__state */
	__s32 kstack_bytes; /* bytes of kstack, or -errno */
	__u64 switches;     /* nvcsw + nivcsw: unchanged = not run since */
	__u32 flags;        /* task->flags (PF_KTHREAD 0x00200000) */
	__u32 pad;
	__u64 kstack[SL_STALL_STACK_DEPTH];
};

/* Kernel task state bits (include/linux/sched.h). */
#define SL_TASK_UNINTERRUPTIBLE 0x0002
#define SL_TASK_WAKEKILL 0x0100
#define SL_TASK_NOLOAD 0x0400

#endif
