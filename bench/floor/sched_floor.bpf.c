// SPDX-License-Identifier: GPL-2.0
/* Floor for bench/sched-overhead.sh: the least any runqueue-latency tool
 * does on the three scheduler hooks the sched module uses (the same
 * attach type, tp_btf): read the clock and write the task's storage at the
 * enqueue; at the switch-in read it back, take the difference and clear it.
 * No histogram, no cgroup, no classification. The wait is stored beside
 * the enqueue time so the compiler cannot drop the subtraction. The
 * programs carry the module's names (sched_wakeup, ...) so the bench
 * matches them the same way. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct floor_enq {
	__u64 ts;   /* enqueue time, ns; 0 = not waiting */
	__u64 wait; /* last wait, ns */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct floor_enq);
} floor_enq SEC(".maps");

static __always_inline void enq(struct task_struct *t, __u64 now)
{
	struct floor_enq *e = bpf_task_storage_get(&floor_enq, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (e)
		e->ts = now;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup, struct task_struct *p)
{
	enq(p, bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new, struct task_struct *p)
{
	enq(p, bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	struct floor_enq *e;

	if (prev->pid && prev->__state == 0)
		enq(prev, now);
	if (!next->pid)
		return 0;
	e = bpf_task_storage_get(&floor_enq, next, 0, 0);
	if (e && e->ts) {
		e->wait = now - e->ts;
		e->ts = 0;
	}
	return 0;
}
