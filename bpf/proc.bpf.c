// SPDX-License-Identifier: GPL-2.0
/* proc module, kernel half: exec, exit, fatal signal, OOM kill, and cgroup
 * mkdir/rmdir notifications for the attribution cache.
 *
 * Hooks (all portable tracepoints; one optional kprobe):
 *   tp_btf/sched_process_exec  exec (+ token bucket per (ppid, comm))
 *   tp_btf/sched_process_exit  process exit (last thread of the group;
 *                              + token bucket per (cgroup, comm))
 *   tp_btf/signal_generate     signals whose default action terminates
 *                              (+ token bucket per target (cgroup, comm))
 *   tp_btf/mark_victim         OOM victim (6.1.y+/6.x proto: task, uid)
 *   tp/oom/mark_victim         fallback for kernels whose proto is (pid)
 *   kprobe/oom_kill_process    optional: exact OOM constraint from
 *                              oom_control->memcg; without it the
 *                              constraint is inferred from page counters
 *   tp_btf/cgroup_mkdir, tp_btf/cgroup_rmdir
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "task_id.bpf.h"
#include "task_id_btf.bpf.h"
#include "sandlens/proc.h"
#include "sandlens/token_bucket.h"

char LICENSE[] SEC("license") = "GPL";

/* Runtime rate scaling (written by user space through skel->bss, see
 * sl_proc_set_rate_shift): every proc token bucket refills at
 * rate >> rate_shift and holds burst >> rate_shift tokens (each at least 1
 * when non-zero; sl_bucket_scale). 0 = the configured rates. */
volatile __u32 rate_shift = 0;

/* Set by user space before load (see src/modules/proc.c). */
const volatile __u64 exec_rate = 50;   /* tokens per second; 0 = no limit */
const volatile __u64 exec_burst = 100; /* bucket size */
const volatile __u64 exit_rate = 50;   /* exits and fatal signals: tokens/s per key; 0 = no limit */
const volatile __u64 exit_burst = 100;
const volatile __u32 fatal_only = 1;   /* signals: require SIG_DFL disposition */
const volatile int v1_hierarchy_id = -1; /* cgroup events: v1 hierarchy to report */
/* exec and exit records: wake the reader only when this many bytes wait
 * in proc_events (user space: an eighth of the ring); 0 = wake as usual.
 * See rb_lazy_flags. */
const volatile __u64 rb_wake_bytes = 0;

/* Signals whose default action is terminate or core dump (signal(7)). */
#define FATAL_SIG_MASK                                                          \
	((((1ULL << 17) - 1) & ~1ULL) | (1ULL << 24) | (1ULL << 25) | (1ULL << 26) | \
	 (1ULL << 27) | (1ULL << 29) | (1ULL << 30) | (1ULL << 31))
#define SL_SIGKILL 9
/* OOM constraint inference without the kprobe: a memcg whose usage is within
 * this many pages of its limit when the victim is marked is the constraint. */
#define OOM_MEMCG_SLACK_PAGES 512
#define SL_PAGE_SIZE 4096ULL

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 2 << 20); /* proc.ringbuf_size */
} proc_events SEC(".maps");

/* An exec record is built here, then copied into proc_events with only the
 * argv bytes it has (bpf_ringbuf_output of offsetof(argv) + argv_len): a
 * typical command line takes a few hundred bytes of the ring, not the whole
 * SL_ARGV_BYTES. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sl_exec_event);
} exec_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SL_ST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} proc_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct sl_exec_key);
	__type(value, struct sl_exec_bucket);
} exec_buckets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384); /* proc.exec_buckets */
	__type(key, struct sl_exit_key);
	__type(value, struct sl_exec_bucket);
} exit_buckets SEC(".maps");

/* Constraint seen by kprobe/oom_kill_process for the current task. */
struct oom_ctx {
	__u32 valid;
	__u32 constraint;
	__u64 limit_pages;
	__u64 usage_pages;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct oom_ctx);
} oom_ctx_store SEC(".maps");

/* Set on a task whose exec event was not delivered (rate limit, table
 * full): its clean exit is counted instead of sent. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} exec_suppressed SEC(".maps");

/* Commit flags of an exec or exit record. A wake-up is an irq_work queued
 * in the exec'ing or exiting task (kernel/bpf/ringbuf.c
 * bpf_ringbuf_commit: a self-IPI, a VM exit on a guest, then the reader's
 * wake-up): at a few hundred records a second it was most of the cost of a
 * delivered record. The agent reads every ring at least every
 * SL_RB_POLL_MS (100 ms, src/agent/module.h) without being woken, so these
 * records are committed without a wake-up (BPF_RB_NO_WAKEUP) until
 * rb_wake_bytes wait unread, then with one (BPF_RB_FORCE_WAKEUP: a burst is
 * read before the ring fills). The record's time is taken in the program:
 * the delay changes when it is read, not what it says. Signal, OOM and
 * cgroup records keep the default (wake when the reader is idle). */
static __always_inline __u64 rb_lazy_flags(void)
{
	if (!rb_wake_bytes)
		return 0;
	return bpf_ringbuf_query(&proc_events, BPF_RB_AVAIL_DATA) >= rb_wake_bytes ? BPF_RB_FORCE_WAKEUP
										   : BPF_RB_NO_WAKEUP;
}

static __always_inline void fill_hdr(struct sl_hdr *h, __u32 type)
{
	h->type = type;
	h->cpu = bpf_get_smp_processor_id();
	h->ts_ns = bpf_ktime_get_ns();
}

/* Bucket of key k in map, created full (burst tokens) when absent. NULL
 * when the table is full. */
static __always_inline struct sl_exec_bucket *bucket_get(void *map, void *k, __u64 now, __u64 burst)
{
	struct sl_exec_bucket *b = bpf_map_lookup_elem(map, k);

	if (!b) {
		struct sl_exec_bucket nb;
		sl_bucket_init(&nb, now, burst);
		bpf_map_update_elem(map, k, &nb, BPF_NOEXIST);
		b = bpf_map_lookup_elem(map, k);
	}
	return b;
}

/* The exit_buckets key of task t for event kind (t trusted: direct loads). */
static __always_inline void exit_key(struct sl_exit_key *k, struct task_struct *t, __u32 kind)
{
	sl_task_cgroup_key(t, &k->cgroup_id, &k->cgroup_v1_id);
	sl_task_comm_btf(k->comm, t); /* zero-padded: the bytes after the NUL are part of the key */
	k->kind = kind;
	k->pad = 0;
}

static __always_inline void mark_exec_suppressed(struct task_struct *p)
{
	__u32 *f = bpf_task_storage_get(&exec_suppressed, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (f)
		*f = 1;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct sl_exec_bucket *b = NULL;
	struct sl_exec_key key;
	struct sl_exec_event *e;
	__u64 now, carried = 0, carried_rb = 0;
	__u64 rate = sl_bucket_scale(exec_rate, rate_shift), burst = sl_bucket_scale(exec_burst, rate_shift);
	unsigned long arg_start, arg_end, len;
	struct mm_struct *mm;
	int r;

	sl_stat_inc(&proc_stats, SL_ST_EXEC_SEEN);
	now = bpf_ktime_get_ns();
	/* The rate decision comes first and reads only the key: a suppressed
	 * exec (most of a storm) costs the key, one hash lookup, the bucket
	 * and the mark; identity, filename and argv are read for a delivered
	 * one only. Direct BTF loads, no probe-read calls (task_id_btf.bpf.h). */
	key.ppid = p->real_parent->tgid;
	key.pad = 0;
	sl_task_comm_btf(key.comm, p);

	if (rate) {
		b = bucket_get(&exec_buckets, &key, now, burst);
		if (!b) {
			/* the table is full: delivered without a limit, not
			 * hidden (the keys are (ppid, comm): a local user
			 * exec'ing under thousands of names could fill it and
			 * blind the agent to everyone else's execs); counted */
			sl_stat_inc(&proc_stats, SL_ST_EXEC_KEY_TABLE_FULL);
		} else if (!sl_bucket_take(b, now, rate, burst, &carried)) {
			sl_stat_inc(&proc_stats, SL_ST_EXEC_RATE_LIMITED);
			mark_exec_suppressed(p);
			return 0;
		} else {
			carried_rb = sl_bucket_take_sub(&b->pending_rb);
		}
	}

	{
		__u32 zero = 0;
		e = bpf_map_lookup_elem(&exec_scratch, &zero);
	}
	if (!e)
		return 0;
	e->hdr.type = SL_EV_EXEC;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts_ns = now;
	e->task.pid = p->tgid;
	e->task.tid = p->pid;
	e->task.ppid = key.ppid;
	e->task.pad0 = 0;
	sl_task_cgroup_key(p, &e->task.cgroup_id, &e->task.cgroup_v1_id);
	__builtin_memcpy(e->task.comm, key.comm, sizeof(e->task.comm));
	e->truncated_count = carried;
	e->args_truncated = 0;
	e->pad = 0;
	r = bpf_probe_read_kernel_str(e->filename, sizeof(e->filename), bprm->filename);
	e->filename_len = r > 0 ? r : 0;

	mm = p->mm;
	arg_start = mm->arg_start;
	arg_end = mm->arg_end;
	len = arg_end > arg_start ? arg_end - arg_start : 0;
	if (len > SL_ARGV_BYTES) {
		len = SL_ARGV_BYTES;
		e->args_truncated = 1;
	}
	if (len > 0 && bpf_probe_read_user(e->argv, len, (void *)arg_start) != 0)
		len = 0;
	e->argv_len = len;
	if (bpf_ringbuf_output(&proc_events, e, offsetof(struct sl_exec_event, argv) + len, rb_lazy_flags())) {
		sl_stat_inc(&proc_stats, SL_ST_EXEC_RB_FAIL);
		if (b) /* carry this one and what it carried to the next delivery */
			sl_bucket_undeliver_rb(b, carried, carried_rb);
		else
			sl_stat_inc(&proc_stats, SL_ST_EXEC_RB_LOST);
		mark_exec_suppressed(p);
		return 0;
	}
	{ /* a task that execs again and is delivered sends its exit again */
		__u32 *f = bpf_task_storage_get(&exec_suppressed, p, 0, 0);
		if (f)
			*f = 0;
	}
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *p)
{
	struct sl_exec_bucket *b = NULL;
	struct sl_exit_event *e;
	struct sl_exit_key key;
	__u64 now, carried = 0, carried_rb = 0, carried_abn = 0;
	__u64 rate, burst;
	int code;

	/* One event per process: the last thread of the group (signal->live is
	 * decremented in do_exit() before this tracepoint fires). */
	if (p->signal->live.counter != 0)
		return 0;
	if (p->flags & 0x00200000 /* PF_KTHREAD */)
		return 0;
	sl_stat_inc(&proc_stats, SL_ST_EXIT_SEEN);
	code = p->exit_code;
	if (code == 0) {
		__u32 *f = bpf_task_storage_get(&exec_suppressed, p, 0, 0);
		if (f && *f) {
			sl_stat_inc(&proc_stats, SL_ST_EXIT_SUPPRESSED);
			return 0;
		}
	}
	now = bpf_ktime_get_ns();
	rate = sl_bucket_scale(exit_rate, rate_shift);
	if (rate) {
		burst = sl_bucket_scale(exit_burst, rate_shift);
		exit_key(&key, p, SL_EXK_EXIT);
		b = bucket_get(&exit_buckets, &key, now, burst);
		if (!b) {
			/* full: delivered without a limit (as for execs) */
			sl_stat_inc(&proc_stats, SL_ST_EXIT_KEY_TABLE_FULL);
		} else if (!sl_bucket_take(b, now, rate, burst, &carried)) {
			sl_stat_inc(&proc_stats, SL_ST_EXIT_RATE_LIMITED);
			if (code) {
				sl_stat_inc(&proc_stats, SL_ST_EXIT_ABN_RATE_LIMITED);
				__sync_fetch_and_add(&b->pending_abn, 1);
			}
			return 0;
		} else {
			carried_rb = sl_bucket_take_sub(&b->pending_rb);
			carried_abn = sl_bucket_take_sub(&b->pending_abn);
		}
	}
	e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);
	if (!e) {
		sl_stat_inc(&proc_stats, SL_ST_EXIT_RB_FAIL);
		if (b) {
			__sync_fetch_and_add(&b->pending_abn, carried_abn + (code ? 1 : 0));
			sl_bucket_undeliver_rb(b, carried, carried_rb);
		} else {
			sl_stat_inc(&proc_stats, SL_ST_EXIT_RB_LOST);
		}
		return 0;
	}
	e->hdr.type = SL_EV_EXIT;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts_ns = now;
	sl_fill_task_id_btf(&e->task, p);
	e->pad = 0;
	e->exit_code = (code >> 8) & 0xff;
	e->signal = code & 0x7f;
	e->core_dumped = (code & 0x80) ? 1 : 0;
	e->lifetime_ns = now - p->group_leader->start_time;
	e->truncated_count = carried;
	e->truncated_abnormal = carried_abn;
	bpf_ringbuf_submit(e, rb_lazy_flags());
	return 0;
}

SEC("tp_btf/signal_generate")
int BPF_PROG(handle_signal, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	struct sl_exec_bucket *b = NULL;
	struct sl_signal_event *e;
	struct task_struct *cur;
	struct sl_exit_key key;
	__u64 now, carried = 0, carried_rb = 0;
	__u64 rate, burst;

	/* every signal of the host passes here: the filters come first */
	if (sig <= 0 || sig >= 64 || !((FATAL_SIG_MASK >> sig) & 1))
		return 0;
	if (result != 0 /* TRACE_SIGNAL_DELIVERED */ && result != 4 /* LOSE_INFO */)
		return 0;
	if (fatal_only && sig != SL_SIGKILL) {
		void *handler = BPF_CORE_READ(task, sighand, action[sig - 1].sa.sa_handler);
		if (handler != (void *)0 /* SIG_DFL */)
			return 0;
	}
	sl_stat_inc(&proc_stats, SL_ST_SIGNAL_SEEN);
	now = bpf_ktime_get_ns();
	rate = sl_bucket_scale(exit_rate, rate_shift);
	if (rate) {
		burst = sl_bucket_scale(exit_burst, rate_shift);
		exit_key(&key, task, SL_EXK_SIGNAL);
		b = bucket_get(&exit_buckets, &key, now, burst);
		if (!b) {
			/* full: delivered without a limit (as for execs) */
			sl_stat_inc(&proc_stats, SL_ST_SIGNAL_KEY_TABLE_FULL);
		} else if (!sl_bucket_take(b, now, rate, burst, &carried)) {
			sl_stat_inc(&proc_stats, SL_ST_SIGNAL_RATE_LIMITED);
			return 0;
		} else {
			carried_rb = sl_bucket_take_sub(&b->pending_rb);
		}
	}
	e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);
	if (!e) {
		sl_stat_inc(&proc_stats, SL_ST_SIGNAL_RB_FAIL);
		if (b)
			sl_bucket_undeliver_rb(b, carried, carried_rb);
		else
			sl_stat_inc(&proc_stats, SL_ST_SIGNAL_RB_LOST);
		return 0;
	}
	e->hdr.type = SL_EV_SIGNAL;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts_ns = now;
	e->truncated_count = carried;
	cur = bpf_get_current_task_btf();
	sl_fill_task_id_btf(&e->sender, cur);
	sl_fill_task_id_btf(&e->target, task);
	e->signal = sig;
	if ((unsigned long)info == 0) /* SEND_SIG_NOINFO: from user space */
		e->si_code = 0;
	else if ((unsigned long)info == 1) /* SEND_SIG_PRIV: from the kernel */
		e->si_code = 0x80;
	else
		e->si_code = BPF_CORE_READ(info, si_code);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* Infer the constraint from the victim's memcg chain: the first ancestor
 * (below the root) whose usage is within OOM_MEMCG_SLACK_PAGES of its
 * max. Used when kprobe/oom_kill_process is not available. */
static __always_inline void oom_infer(struct task_struct *victim, struct sl_oom_event *e)
{
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cset = BPF_CORE_READ(victim, cgroups);
	int idx;

	e->constraint = SL_OOM_GLOBAL;
	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id) || !cset)
		return;
	idx = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	if (idx < 0 || idx >= 32 || bpf_core_read(&css, sizeof(css), &cset->subsys[idx]))
		return;
	for (int i = 0; i < 8 && css; i++) {
		struct mem_cgroup *memcg = (struct mem_cgroup *)css; /* css is the first member */
		struct cgroup_subsys_state *parent = BPF_CORE_READ(css, parent);
		__u64 usage, max;

		if (!parent) /* the root memcg has no limit */
			break;
		usage = BPF_CORE_READ(memcg, memory.usage.counter);
		max = BPF_CORE_READ(memcg, memory.max);
		if (usage + OOM_MEMCG_SLACK_PAGES >= max) {
			e->constraint = SL_OOM_MEMCG;
			e->memcg_limit_bytes = max * SL_PAGE_SIZE;
			e->memcg_usage_bytes = usage * SL_PAGE_SIZE;
			return;
		}
		css = parent;
	}
}

static __always_inline int emit_oom(struct task_struct *victim)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct sl_oom_event *e;
	struct oom_ctx *ctx;

	e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);
	if (!e) {
		sl_stat_inc(&proc_stats, SL_ST_OOM_RB_FAIL);
		return 0;
	}
	fill_hdr(&e->hdr, SL_EV_OOM);
	sl_fill_task_id(&e->actor, cur);
	e->constraint_source = SL_OOM_SRC_INFERRED;
	e->memcg_limit_bytes = 0;
	e->memcg_usage_bytes = 0;
	sl_fill_task_id(&e->victim, victim);
	oom_infer(victim, e);
	ctx = bpf_task_storage_get(&oom_ctx_store, cur, 0, 0);
	if (ctx && ctx->valid) {
		e->constraint = ctx->constraint;
		e->constraint_source = SL_OOM_SRC_KPROBE;
		if (ctx->constraint == SL_OOM_MEMCG) {
			e->memcg_limit_bytes = ctx->limit_pages * SL_PAGE_SIZE;
			e->memcg_usage_bytes = ctx->usage_pages * SL_PAGE_SIZE;
		}
		ctx->valid = 0;
	}
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/mark_victim")
int BPF_PROG(handle_mark_victim, struct task_struct *victim)
{
	return emit_oom(victim);
}

/* Fallback for kernels whose oom:mark_victim carries only a pid: the
 * victim's identity is then the pid alone (comm/cgroup from a pid lookup
 * are not possible here); user space fills what /proc still has. */
SEC("tp/oom/mark_victim")
int handle_mark_victim_tp(struct trace_event_raw_mark_victim *ctx)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct sl_oom_event *e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);

	if (!e) {
		sl_stat_inc(&proc_stats, SL_ST_OOM_RB_FAIL);
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	fill_hdr(&e->hdr, SL_EV_OOM);
	sl_fill_task_id(&e->actor, cur);
	e->victim.pid = BPF_CORE_READ(ctx, pid);
	e->constraint = SL_OOM_GLOBAL;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* Optional (needs CONFIG_KPROBES): oom_kill_process(struct oom_control *oc,
 * const char *message) runs in the actor's context just before the victim
 * is marked; oc->memcg is set for a memcg OOM. */
SEC("kprobe/oom_kill_process")
int BPF_KPROBE(handle_oom_kill_process, struct oom_control *oc)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct mem_cgroup *memcg = BPF_CORE_READ(oc, memcg);
	struct oom_ctx *oc_ctx = bpf_task_storage_get(&oom_ctx_store, cur, 0,
						      BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!oc_ctx)
		return 0;
	oc_ctx->valid = 1;
	oc_ctx->constraint = memcg ? SL_OOM_MEMCG : SL_OOM_GLOBAL;
	oc_ctx->limit_pages = memcg ? BPF_CORE_READ(memcg, memory.max) : 0;
	oc_ctx->usage_pages = memcg ? BPF_CORE_READ(memcg, memory.usage.counter) : 0;
	return 0;
}

static __always_inline int emit_cgroup(struct cgroup *cgrp, const char *path, __u32 type)
{
	struct sl_cgroup_event *e;
	int hid = BPF_CORE_READ(cgrp, root, hierarchy_id);

	if (hid != 0 && hid != v1_hierarchy_id)
		return 0;
	e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);
	if (!e) {
		sl_stat_inc(&proc_stats, SL_ST_CGROUP_RB_FAIL);
		return 0;
	}
	fill_hdr(&e->hdr, type);
	e->cgroup_id = BPF_CORE_READ(cgrp, kn, id);
	e->hierarchy_id = hid;
	e->level = BPF_CORE_READ(cgrp, level);
	if (bpf_probe_read_kernel_str(e->path, sizeof(e->path), path) < 0)
		e->path[0] = 0;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(handle_cgroup_mkdir, struct cgroup *cgrp, const char *path)
{
	return emit_cgroup(cgrp, path, SL_EV_CGROUP_MKDIR);
}

SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(handle_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	return emit_cgroup(cgrp, path, SL_EV_CGROUP_RMDIR);
}
