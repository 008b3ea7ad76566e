// SPDX-License-Identifier: GPL-2.0
/* Memory profile task programs (PROF-2), docs/TASKS.md "Memory profiles".
 * One object per task; user space loads only the programs of the task's
 * type (bpf_program__set_autoload). Every hook is filtered to the task's
 * target (task_filter.bpf.h) and aggregates into kprof_counts keyed by
 * (tgid, state, user stack id, -EFAULT): nothing is streamed.
 *
 *   profile_mem_virtual (virtual allocations: address space handed out)
 *     tp/syscalls/sys_enter_mmap, sys_exit_mmap    a successful mmap adds
 *         1 and its length (page aligned) to the caller's user stack;
 *         state anon / file; the mapping is remembered (kv_live) so that
 *     tp/syscalls/sys_enter_munmap, sys_exit_munmap    a successful munmap
 *         starting at a remembered mapping nets it out of the live totals
 *         (extra0 live mappings, extra1 live bytes) of the stack that made
 *         it (a head-partial munmap shrinks it)
 *     tp/syscalls/sys_enter_brk, sys_exit_brk      brk growth (new - old
 *         mm->brk) adds 1 and the bytes; shrinkage is only counted in
 *         stats (SL_KST_BRK_SHRINK_BYTES)
 *   profile_page_faults (physical allocations in a window)
 *     tp_btf/page_fault_user     every pf_period-th fault of a target
 *         task on each CPU (a per-CPU countdown: systematic sampling, as a
 *         perf sample_period) takes the user stack and adds 1 sample,
 *         pf_period faults and pf_period * page_size bytes; state = the
 *         access (read / write / exec) from the x86 error code
 *   profile_resident (resident growth)
 *     tp_btf/rss_stat            the mm's counter of a member (file, anon,
 *         shmem pages) as the tracepoint reports it (get_mm_counter():
 *         percpu_counter_read_positive, which moves when a CPU's local
 *         delta reaches percpu_counter_batch); when current->mm is that mm
 *         and current is a target, the change since the last event of that
 *         (mm, member) goes to current's user stack: growth into value,
 *         release into extra0 (bytes). Events of the mm by other tasks
 *         (reclaim, exit) move the baseline and are counted in stats.
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

#define MAX_ERRNO 4095
#define MAP_ANONYMOUS 0x20 /* include/uapi/asm-generic/mman-common.h */
#define X86_PF_WRITE (1UL << 1)
#define X86_PF_INSTR (1UL << 4)

/* Set by user space before load (src/task/task_kprof.c). */
const volatile __u64 page_size = 4096;
const volatile __u32 pf_period = 1; /* page faults: sample every pf_period-th per CPU */

enum { P_MMAP = 1, P_MUNMAP = 2, P_BRK = 3 };

/* A syscall in flight, by thread id (enter -> exit). */
struct pending {
	__u64 a;  /* mmap: length; munmap: address; brk: old mm->brk */
	__u64 b;  /* mmap: flags; munmap: length */
	__u32 what;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct pending);
} kv_pending SEC(".maps");

/* A mapping made while the task runs: (tgid, start) -> its key, length. */
struct live_key {
	__u64 addr;
	__u32 tgid;
	__u32 pad;
};
struct live_val {
	struct sl_prof_key key;
	__u64 len;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* only syscall context updates it */
	__uint(max_entries, 65536);
	__type(key, struct live_key);
	__type(value, struct live_val);
} kv_live SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} pf_countdown SEC(".maps");

struct rss_key {
	__u64 mm;
	__u32 member;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct rss_key);
	__type(value, __s64);
} rss_last SEC(".maps");

static __always_inline int is_err(long ret)
{
	return (unsigned long)ret >= (unsigned long)-MAX_ERRNO;
}

static __always_inline __u64 page_align(__u64 len)
{
	__u64 ps = page_size ? page_size : 4096;
	return (len + ps - 1) / ps * ps;
}

static __always_inline void pend(__u32 what, __u64 a, __u64 b)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct pending p = {.a = a, .b = b, .what = what};

	sl_stat_inc(&kprof_stats, SL_KST_EVENTS);
	if (!kp_current_match())
		return;
	sl_stat_inc(&kprof_stats, SL_KST_MATCHED);
	if (bpf_map_update_elem(&kv_pending, &tid, &p, BPF_ANY))
		sl_stat_inc(&kprof_stats, SL_KST_PENDING_FULL);
}

/* The pending entry of this thread for what, removed; 0 when none. */
static __always_inline int unpend(__u32 what, struct pending *out)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct pending *p = bpf_map_lookup_elem(&kv_pending, &tid);

	if (!p)
		return 0;
	*out = *p;
	bpf_map_delete_elem(&kv_pending, &tid);
	return out->what == what;
}

static __always_inline void user_key(void *ctx, struct sl_prof_key *k, __u32 state)
{
	k->tgid = bpf_get_current_pid_tgid() >> 32;
	k->state = state;
	k->user_stack_id = bpf_get_stackid(ctx, &kprof_stacks, BPF_F_USER_STACK);
	k->kernel_stack_id = -EFAULT;
	kp_check_stacks(k);
}

SEC("tp/syscalls/sys_enter_mmap")
int mmap_enter(struct trace_event_raw_sys_enter *ctx)
{
	pend(P_MMAP, ctx->args[1], ctx->args[3]);
	return 0;
}

SEC("tp/syscalls/sys_exit_mmap")
int mmap_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct pending p;
	struct sl_prof_key k = {};

	if (!unpend(P_MMAP, &p) || is_err(ctx->ret) || !p.a)
		return 0;
	__u64 len = page_align(p.a);
	user_key(ctx, &k, (p.b & MAP_ANONYMOUS) ? SL_MEMV_MMAP_ANON : SL_MEMV_MMAP_FILE);
	if (!kp_account(&k, 1, len, 1, len))
		return 0;
	struct live_key lk = {.addr = (__u64)ctx->ret, .tgid = k.tgid};
	struct live_val lv = {.key = k, .len = len};
	if (bpf_map_update_elem(&kv_live, &lk, &lv, BPF_ANY))
		sl_stat_inc(&kprof_stats, SL_KST_LIVE_FULL);
	return 0;
}

SEC("tp/syscalls/sys_enter_munmap")
int munmap_enter(struct trace_event_raw_sys_enter *ctx)
{
	pend(P_MUNMAP, ctx->args[0], ctx->args[1]);
	return 0;
}

SEC("tp/syscalls/sys_exit_munmap")
int munmap_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct pending p;

	if (!unpend(P_MUNMAP, &p) || ctx->ret != 0)
		return 0;
	__u64 len = page_align(p.b);
	struct live_key lk = {.addr = p.a, .tgid = bpf_get_current_pid_tgid() >> 32};
	struct live_val *lv = bpf_map_lookup_elem(&kv_live, &lk);
	if (!lv) {
		sl_stat_inc(&kprof_stats, SL_KST_FREE_UNMATCHED);
		sl_stat_add(&kprof_stats, SL_KST_FREE_BYTES_UNMATCHED, len);
		return 0;
	}
	struct live_val cur = *lv;
	struct sl_kprof_val *v = bpf_map_lookup_elem(&kprof_counts, &cur.key);
	if (len >= cur.len) { /* the whole mapping (or more: the rest is not ours) */
		if (v) {
			__sync_fetch_and_add(&v->extra0, -1ULL);
			__sync_fetch_and_add(&v->extra1, -cur.len);
		}
		bpf_map_delete_elem(&kv_live, &lk);
		return 0;
	}
	/* the head of the mapping: the rest lives on at addr + len */
	if (v)
		__sync_fetch_and_add(&v->extra1, -len);
	bpf_map_delete_elem(&kv_live, &lk);
	lk.addr += len;
	cur.len -= len;
	bpf_map_update_elem(&kv_live, &lk, &cur, BPF_ANY);
	return 0;
}

SEC("tp/syscalls/sys_enter_brk")
int brk_enter(struct trace_event_raw_sys_enter *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct mm_struct *mm = t->mm;

	(void)ctx;
	if (!mm)
		return 0;
	pend(P_BRK, mm->brk, 0);
	return 0;
}

SEC("tp/syscalls/sys_exit_brk")
int brk_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct pending p;
	struct sl_prof_key k = {};
	__u64 nb = (__u64)ctx->ret;

	if (!unpend(P_BRK, &p) || is_err(ctx->ret) || nb == p.a)
		return 0;
	if (nb < p.a) {
		sl_stat_add(&kprof_stats, SL_KST_BRK_SHRINK_BYTES, p.a - nb);
		return 0;
	}
	user_key(ctx, &k, SL_MEMV_BRK);
	kp_account(&k, 1, nb - p.a, 0, 0);
	return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(pf_user, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	struct sl_prof_key k = {};
	__u32 zero = 0, *cd;

	sl_stat_inc(&kprof_stats, SL_KST_EVENTS);
	if (!kp_current_match())
		return 0;
	sl_stat_inc(&kprof_stats, SL_KST_MATCHED);
	cd = bpf_map_lookup_elem(&pf_countdown, &zero);
	if (!cd)
		return 0;
	if (*cd > 1) {
		(*cd)--;
		return 0;
	}
	*cd = pf_period;
	user_key(ctx, &k, (error_code & X86_PF_INSTR) ? SL_PF_EXEC
			  : (error_code & X86_PF_WRITE) ? SL_PF_WRITE
							  : SL_PF_READ);
	kp_account(&k, 1, (__u64)pf_period * page_size, pf_period, 0);
	return 0;
}

/* mm's counter of member in pages, as the tracepoint reports it
 * (percpu_counter_read_positive(&mm->rss_stat[member])). */
static __always_inline __s64 rss_count(struct mm_struct *mm, int member)
{
	__s64 c;

	switch (member) {
	case 0: c = mm->rss_stat[0].count; break;
	case 1: c = mm->rss_stat[1].count; break;
	case 3: c = mm->rss_stat[3].count; break;
	default: return -1;
	}
	return c < 0 ? 0 : c;
}

SEC("tp_btf/rss_stat")
int BPF_PROG(rss_stat, struct mm_struct *mm, int member)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct rss_key rk = {.mm = (__u64)mm, .member = (__u32)member};
	__s64 now, *last, d;

	sl_stat_inc(&kprof_stats, SL_KST_EVENTS);
	now = rss_count(mm, member);
	if (now < 0) /* MM_SWAPENTS: not resident */
		return 0;
	if (t->mm != mm) {
		last = bpf_map_lookup_elem(&rss_last, &rk);
		if (last && *last != now) {
			sl_stat_inc(&kprof_stats, SL_KST_NOT_CURRENT);
			*last = now;
		}
		return 0;
	}
	if (!kp_current_match())
		return 0;
	sl_stat_inc(&kprof_stats, SL_KST_MATCHED);
	last = bpf_map_lookup_elem(&rss_last, &rk);
	if (!last) {
		bpf_map_update_elem(&rss_last, &rk, &now, BPF_ANY);
		sl_stat_inc(&kprof_stats, SL_KST_FIRST_SEEN);
		return 0;
	}
	d = now - *last;
	if (!d)
		return 0;
	*last = now;
	struct sl_prof_key k = {};
	user_key(ctx, &k, (__u32)member);
	if (d > 0)
		kp_account(&k, 1, (__u64)d * page_size, 0, 0);
	else
		kp_account(&k, 1, 0, (__u64)(-d) * page_size, 0);
	return 0;
}
