// SPDX-License-Identifier: GPL-2.0
/* Profiling task programs (PROF-1, PROF-2, SCHED-4), docs/TASKS.md and
 * docs/PROFILING.md. One object per task, created when the task starts and
 * destroyed by the task reaper; user space loads only the programs of the
 * task's type (bpf_program__set_autoload).
 *
 *   perf_event            on_cpu: one perf event per CPU (hardware cycles,
 *                         or software cpu-clock without a PMU) at `hz`;
 *                         the interrupted task's kernel and user stacks
 *   tp_btf/sched_switch   off_cpu_switch: prev switched out -> its stacks
 *                         and the time into task storage; prev still
 *                         TASK_RUNNING = preempted = runqueue wait, else
 *                         blocked. next switched in -> its off-CPU
 *                         interval ends
 *   tp_btf/sched_wakeup   off_cpu_wakeup: a blocked task becomes runnable:
 *                         the blocked part ends, the runqueue part begins
 *                         (same stack)
 *
 *   tp_btf/sched_process_exec  prof_exec: a target task exec'd a file:
 *                         its identity and path into `prof_execs`, so user
 *                         space can index the file by build-id even when
 *                         the process is gone before anyone looks
 *
 * Aggregation in the kernel only: kernel stacks in `prof_stacks`, user
 * stacks in `prof_ustacks` as (build-id, file offset) frames
 * (BPF_F_STACK_BUILD_ID, kernel/bpf/stackmap.c: a frame whose build-id
 * cannot be read without faulting - no file, page not in the page cache,
 * mmap lock busy - keeps its ip, status BPF_STACK_BUILD_ID_IP), totals in
 * `prof_counts` keyed by (tgid, state, user stack id, kernel stack id). No
 * sample leaves the kernel. docs/PROFILING.md "Frames of exited processes".
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "task_id.bpf.h"
#include "sandlens/task_abi.h"
#include "task_filter.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define EFAULT 14
/* Frames of the tracing path at the top of a tp_btf/sched_switch kernel
 * stack (bpf_prog_*, bpf_trace_run4, __traceiter_sched_switch). */
#define OFFCPU_KSKIP 3

/* Set by user space before load (src/task/task_profile.c). */
const volatile __u64 off_min_ns = 0;          /* shorter off-CPU intervals are not counted */

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 8192); /* tasks.stack_entries */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 127 * sizeof(__u64)); /* PERF_MAX_STACK_DEPTH */
} prof_stacks SEC(".maps");

/* User stacks: struct bpf_stack_build_id[127] per entry (32 bytes a frame,
 * 4 KiB an entry); user space sizes it at a quarter of prof_stacks. */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(map_flags, BPF_F_STACK_BUILD_ID);
	__uint(max_entries, 2048);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 127 * sizeof(struct bpf_stack_build_id));
} prof_ustacks SEC(".maps");

/* Files exec'd by target tasks, by (s_dev, i_ino) of the exec'd file. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct sl_prof_exec_key);
	__type(value, struct sl_prof_exec_val);
} prof_execs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384); /* tasks.count_entries */
	__type(key, struct sl_prof_key);
	__type(value, struct sl_prof_val);
} prof_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SL_PST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} prof_stats SEC(".maps");

/* Off-CPU interval in progress, per task. */
struct offcpu {
	__u64 ts;        /* start of the current part; 0 = none */
	__s32 ustack, kstack;
	__u32 state;     /* enum sl_task_offcpu_state of the current part */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu);
} prof_offcpu SEC(".maps");

/* Add (count, ns) to key; the value is created with t's identity. */
static __always_inline void account(struct sl_prof_key *k, struct task_struct *t, __u64 count,
				    __u64 ns, __u64 cg2, __u64 cg1)
{
	struct sl_prof_val *v = bpf_map_lookup_elem(&prof_counts, k);

	if (!v) {
		struct sl_prof_val z = {};

		z.cgroup_id = cg2;
		z.cgroup_v1_id = cg1;
		z.tid = BPF_CORE_READ(t, pid);
		bpf_probe_read_kernel_str(z.comm, sizeof(z.comm), &t->comm);
		bpf_map_update_elem(&prof_counts, k, &z, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&prof_counts, k);
		if (!v) {
			sl_stat_inc(&prof_stats, SL_PST_COUNTS_FULL);
			return;
		}
	}
	__sync_fetch_and_add(&v->count, count);
	if (ns)
		__sync_fetch_and_add(&v->value_ns, ns);
}

static __always_inline void check_stacks(struct sl_prof_key *k)
{
	if (k->user_stack_id < 0 && k->user_stack_id != -EFAULT)
		sl_stat_inc(&prof_stats, SL_PST_USTACK_LOST);
	if (k->kernel_stack_id < 0 && k->kernel_stack_id != -EFAULT)
		sl_stat_inc(&prof_stats, SL_PST_KSTACK_LOST);
}

SEC("perf_event")
int on_cpu(struct bpf_perf_event_data *ctx)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 tgid = pt >> 32, tid = (__u32)pt;
	__u64 cg2, cg1;
	struct sl_prof_key k = {};

	sl_stat_inc(&prof_stats, SL_PST_EVENTS);
	if (!tid) /* idle */
		return 0;
	cg2 = bpf_get_current_cgroup_id();
	cg1 = filter_kind == SL_TF_CGROUP || filter_kind == SL_TF_ALL ? sl_task_cgroup_v1_id(t) : 0;
	if (!sl_task_match(tgid, tid, cg2, cg1))
		return 0;
	sl_stat_inc(&prof_stats, SL_PST_MATCHED);
	k.tgid = tgid;
	k.tid = filter_kind == SL_TF_TGID || filter_kind == SL_TF_TID ? tid : 0;
	k.state = SL_TOS_ON_CPU;
	k.user_stack_id = bpf_get_stackid(ctx, &prof_ustacks, BPF_F_USER_STACK);
	k.kernel_stack_id = bpf_get_stackid(ctx, &prof_stacks, 0);
	check_stacks(&k);
	account(&k, t, 1, 0, cg2, cg1);
	return 0;
}

/* The part of t's off-CPU interval in o ends at now: count it. */
static __always_inline void end_part(struct task_struct *t, struct offcpu *o, __u64 now)
{
	struct sl_prof_key k = {};
	__u64 d = now - o->ts, cg2, cg1;

	if (d < off_min_ns) {
		sl_stat_inc(&prof_stats, SL_PST_SHORT);
		return;
	}
	sl_task_cgroup_key(t, &cg2, &cg1);
	k.tgid = t->tgid;
	k.tid = filter_kind == SL_TF_TGID || filter_kind == SL_TF_TID ? (__u32)t->pid : 0;
	k.state = o->state;
	k.user_stack_id = o->ustack;
	k.kernel_stack_id = o->kstack;
	account(&k, t, 1, d, cg2, cg1);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(off_cpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns(), cg2, cg1;
	struct offcpu *o;

	sl_stat_inc(&prof_stats, SL_PST_EVENTS);
	if (prev->pid) {
		int want = filter_kind == SL_TF_TGID || filter_kind == SL_TF_TID;
		if (filter_kind == SL_TF_CGROUP) {
			sl_task_cgroup_key(prev, &cg2, &cg1);
			want = sl_task_match(prev->tgid, prev->pid, cg2, cg1);
		} else if (want) {
			want = sl_task_match(prev->tgid, prev->pid, 0, 0);
		} else {
			want = 1;
		}
		if (want) {
			sl_stat_inc(&prof_stats, SL_PST_MATCHED);
			o = bpf_task_storage_get(&prof_offcpu, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
			if (o) {
				struct sl_prof_key k;
				/* current is still prev here: its stacks. The kernel
				 * stack skips this program's own frames (the BPF
				 * program, bpf_trace_run4, __traceiter_sched_switch):
				 * it starts at __schedule. */
				k.user_stack_id = bpf_get_stackid(ctx, &prof_ustacks, BPF_F_USER_STACK);
				k.kernel_stack_id = bpf_get_stackid(ctx, &prof_stacks, OFFCPU_KSKIP);
				check_stacks(&k);
				o->ts = now;
				o->ustack = k.user_stack_id;
				o->kstack = k.kernel_stack_id;
				o->state = sl_task_state(prev) == 0 ? SL_TOS_RUNQUEUE : SL_TOS_BLOCKED;
			} else {
				sl_stat_inc(&prof_stats, SL_PST_STORAGE_FAIL);
			}
		}
	}
	if (!next->pid)
		return 0;
	o = bpf_task_storage_get(&prof_offcpu, next, 0, 0);
	if (!o || !o->ts)
		return 0;
	end_part(next, o, now);
	o->ts = 0;
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(off_cpu_wakeup, struct task_struct *p)
{
	struct offcpu *o = bpf_task_storage_get(&prof_offcpu, p, 0, 0);
	__u64 now;

	if (!o || !o->ts || o->state != SL_TOS_BLOCKED)
		return 0;
	now = bpf_ktime_get_ns();
	end_part(p, o, now);
	o->ts = now;
	o->state = SL_TOS_RUNQUEUE;
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(prof_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct sl_prof_exec_key k = {};
	struct sl_prof_exec_val v = {};
	struct inode *ino;
	__u64 cg2, cg1;

	(void)old_pid;
	sl_task_cgroup_key(p, &cg2, &cg1);
	if (!sl_task_match(p->tgid, p->pid, cg2, cg1))
		return 0;
	ino = BPF_CORE_READ(bprm, file, f_inode);
	if (!ino)
		return 0;
	k.dev = BPF_CORE_READ(ino, i_sb, s_dev);
	k.ino = BPF_CORE_READ(ino, i_ino);
	if (bpf_map_lookup_elem(&prof_execs, &k))
		return 0;
	v.tgid = p->tgid;
	v.ppid = BPF_CORE_READ(p, real_parent, tgid);
	/* bprm->interp: the file that runs (the interpreter of a #! script) */
	bpf_probe_read_kernel_str(v.path, sizeof(v.path), BPF_CORE_READ(bprm, interp));
	bpf_map_update_elem(&prof_execs, &k, &v, BPF_NOEXIST);
	return 0;
}
