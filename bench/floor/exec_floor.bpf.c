// SPDX-License-Identifier: GPL-2.0
/* Floor for bench/exec-storm.sh: the least an exec/exit event tool does on
 * the three hooks the proc module's exec path uses (the same attach type,
 * tp_btf): at an exec, read the clock and put a minimal record (time, pid)
 * into a ring buffer; at an exit, the same for the last thread of a
 * process (one event per process, as any process-exit tool needs); at a
 * signal, the test that drops everything but fatal signals (the same
 * signal(7) mask), a record for those. No identity, no cgroup, no
 * argv/filename, no rate limit. The records are committed without a
 * wake-up (BPF_RB_NO_WAKEUP: a wake-up is an irq_work in the exec'ing
 * task, a self-IPI, expensive on a VM); the reader polls the ring on a
 * timer (bench/floor/exec_floor.c), as the least costly reader does. The programs carry the proc module's names
 * (handle_exec, ...) so the bench matches them the same way. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct floor_rec {
	__u64 ts;  /* CLOCK_MONOTONIC ns */
	__u32 pid; /* tgid */
	__u32 kind; /* 1 exec, 2 exit, 3 signal */
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} floor_events SEC(".maps");

/* signal(7): default action terminate or core dump (as bpf/proc.bpf.c) */
#define FLOOR_FATAL_MASK                                                        \
	((((1ULL << 17) - 1) & ~1ULL) | (1ULL << 24) | (1ULL << 25) | (1ULL << 26) | \
	 (1ULL << 27) | (1ULL << 29) | (1ULL << 30) | (1ULL << 31))

static __always_inline void emit(__u32 pid, __u32 kind)
{
	__u64 now = bpf_ktime_get_ns();
	struct floor_rec *r = bpf_ringbuf_reserve(&floor_events, sizeof(*r), 0);

	if (!r)
		return;
	r->ts = now;
	r->pid = pid;
	r->kind = kind;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *p)
{
	emit(p->tgid, 1);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *p)
{
	if (p->signal->live.counter != 0)
		return 0;
	emit(p->tgid, 2);
	return 0;
}

SEC("tp_btf/signal_generate")
int BPF_PROG(handle_signal, int sig, struct kernel_siginfo *info, struct task_struct *task)
{
	if (sig <= 0 || sig >= 64 || !((FLOOR_FATAL_MASK >> sig) & 1))
		return 0;
	emit(task->tgid, 3);
	return 0;
}
