// SPDX-License-Identifier: GPL-2.0
/* Lock profile task programs (PROF-2), docs/TASKS.md "Lock profiles". One
 * object per task; user space loads only the programs of the task's type.
 * Filtered to the task's target; aggregated in kprof_counts (count = waits,
 * value = ns waited); nothing is streamed.
 *
 *   profile_lock_kernel
 *     tp_btf/contention_begin    a target thread starts waiting for a
 *         kernel lock: time, lock address and flags (LCB_F_*) kept by
 *         thread id. A second begin while one is in flight (the mutex
 *         slow path re-announces itself after spinning; a lock taken in an
 *         interrupt) is ignored, as perf lock contention does: the wait
 *         runs from the first begin.
 *     tp_btf/contention_end      the same lock acquired (or the wait
 *         given up): 1 wait and the time since begin go to (tgid, flags,
 *         user stack, kernel stack).
 *   profile_futex (user-space lock waits)
 *     tp/syscalls/sys_enter_futex   op & FUTEX_CMD_MASK one of WAIT,
 *         WAIT_BITSET, LOCK_PI, LOCK_PI2, WAIT_REQUEUE_PI: time kept by
 *         thread id
 *     tp/syscalls/sys_exit_futex    1 wait and the time in the system call
 *         go to (tgid, op, user stack).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "task_id.bpf.h"
#include "sandlens/task_abi.h"
#include "task_filter.bpf.h"
#include "kprof_common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Frames of the tracing path at the top of a tp_btf kernel stack
 * (bpf_prog_*, bpf_trace_run2, __traceiter_contention_end). */
#define LOCK_KSKIP 3

#define FUTEX_CMD_MASK 0x7f /* ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME) */
#define FUTEX_WAIT 0
#define FUTEX_LOCK_PI 6
#define FUTEX_WAIT_BITSET 9
#define FUTEX_WAIT_REQUEUE_PI 11
#define FUTEX_LOCK_PI2 13

struct wait {
	__u64 ts;
	__u64 lock; /* kernel: lock address; futex: uaddr */
	__u32 flags; /* kernel: LCB_F_*; futex: op */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct wait);
} lk_pending SEC(".maps");

SEC("tp_btf/contention_begin")
int BPF_PROG(lock_begin, void *lock, unsigned int flags)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct wait w = {};

	sl_stat_inc(&kprof_stats, SL_KST_EVENTS);
	if (!kp_current_match())
		return 0;
	if (bpf_map_lookup_elem(&lk_pending, &tid)) {
		sl_stat_inc(&kprof_stats, SL_KST_NESTED);
		return 0;
	}
	sl_stat_inc(&kprof_stats, SL_KST_MATCHED);
	w.ts = bpf_ktime_get_ns();
	w.lock = (__u64)lock;
	w.flags = flags;
	if (bpf_map_update_elem(&lk_pending, &tid, &w, BPF_NOEXIST))
		sl_stat_inc(&kprof_stats, SL_KST_PENDING_FULL);
	return 0;
}

SEC("tp_btf/contention_end")
int BPF_PROG(lock_end, void *lock, int ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct wait *w = bpf_map_lookup_elem(&lk_pending, &tid);
	struct sl_prof_key k = {};
	__u64 d;

	if (!w || w->lock != (__u64)lock)
		return 0;
	d = bpf_ktime_get_ns() - w->ts;
	k.state = w->flags;
	bpf_map_delete_elem(&lk_pending, &tid);
	k.tgid = bpf_get_current_pid_tgid() >> 32;
	k.user_stack_id = bpf_get_stackid(ctx, &kprof_stacks, BPF_F_USER_STACK);
	k.kernel_stack_id = bpf_get_stackid(ctx, &kprof_stacks, LOCK_KSKIP);
	kp_check_stacks(&k);
	kp_account(&k, 1, d, 0, 0);
	return 0;
}

static __always_inline int futex_waits(__u32 cmd)
{
	return cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET || cmd == FUTEX_LOCK_PI ||
	       cmd == FUTEX_LOCK_PI2 || cmd == FUTEX_WAIT_REQUEUE_PI;
}

SEC("tp/syscalls/sys_enter_futex")
int futex_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u32 cmd = (__u32)ctx->args[1] & FUTEX_CMD_MASK;
	struct wait w = {};

	sl_stat_inc(&kprof_stats, SL_KST_EVENTS);
	if (!futex_waits(cmd) || !kp_current_match())
		return 0;
	sl_stat_inc(&kprof_stats, SL_KST_MATCHED);
	w.ts = bpf_ktime_get_ns();
	w.lock = ctx->args[0];
	w.flags = cmd;
	if (bpf_map_update_elem(&lk_pending, &tid, &w, BPF_ANY))
		sl_stat_inc(&kprof_stats, SL_KST_PENDING_FULL);
	return 0;
}

SEC("tp/syscalls/sys_exit_futex")
int futex_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct wait *w = bpf_map_lookup_elem(&lk_pending, &tid);
	struct sl_prof_key k = {};
	__u64 d;

	if (!w)
		return 0;
	d = bpf_ktime_get_ns() - w->ts;
	k.state = w->flags;
	bpf_map_delete_elem(&lk_pending, &tid);
	k.tgid = bpf_get_current_pid_tgid() >> 32;
	k.user_stack_id = bpf_get_stackid(ctx, &kprof_stacks, BPF_F_USER_STACK);
	k.kernel_stack_id = -EFAULT;
	kp_check_stacks(&k);
	kp_account(&k, 1, d, 0, 0);
	return 0;
}
