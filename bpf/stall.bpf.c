// SPDX-License-Identifier: GPL-2.0
/* stall module, kernel half: softirq latency and duration per CPU and
 * vector, hardirq duration per IRQ, CPU stalls (gaps between cpu-clock
 * samples), sched:sched_process_hang, and the D-state task iterator of the
 * hung-task scan. Definitions: docs/STALL.md; ABI: include/sandlens/stall.h.
 *
 * Hooks (each program is loaded only when its hook exists,
 * src/modules/stall.c):
 *   tp_btf/softirq_raise, softirq_entry, softirq_exit   per-CPU arrays
 *   tp_btf/irq_handler_entry, irq_handler_exit          per-CPU arrays
 *   perf_event cpu-clock (one per CPU, fixed period)    stall_tick
 *   tp_btf/sched_process_hang                           ring buffer
 *   iter/task                                           read each tick
 * The irq/softirq paths touch only per-CPU array slots: no hash, no lock,
 * no atomics (the slot is this CPU's and these run with interrupts or
 * bottom halves off on it).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "log2hist.bpf.h"
#include "task_id.bpf.h"
#include "sandlens/stall.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile __u64 cpu_stall_threshold_ns = 10000000; /* stall.cpu_stall_threshold */
const volatile __u64 cpu_stall_period_ns = 1000000;     /* stall.cpu_stall_period */
/* a candidate gap is decided this long after it ended, so that the
 * kernel's steal accounting (at the tick) has caught up */
const volatile __u64 steal_settle_ns = 12000000;


struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SL_STALL_NR_SOFTIRQS);
	__type(key, __u32);
	__type(value, struct sl_stall_softirq);
} stall_softirq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SL_STALL_MAX_IRQS);
	__type(key, __u32);
	__type(value, struct sl_stall_hist);
} stall_hardirq SEC(".maps");

/* The IRQs whose histogram is not empty: bit irq % 64 of word irq / 64, set
 * at the first handler run and never cleared (the histograms are
 * cumulative). User space reads only those entries of stall_hardirq
 * (mmapped .bss: no syscall), not all SL_STALL_MAX_IRQS x CPUs. */
__u64 irq_seen[SL_STALL_MAX_IRQS / 64];

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SL_STST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stall_stats SEC(".maps");

/* This CPU's in-flight timestamps. */
struct stall_pcpu {
	__u64 raise_ns[SL_STALL_NR_SOFTIRQS];
	__u64 entry_ns[SL_STALL_NR_SOFTIRQS];
	__u64 irq_ns;
	__s32 irq;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stall_pcpu);
} stall_pcpu SEC(".maps");

/* cpu-clock sampler state of this CPU, with a pending candidate gap. */
struct stall_tick {
	__u64 last_ns;
	__u64 last_steal;     /* steal ns at the last sample */
	__u64 cand_ts;        /* 0: no candidate */
	__u64 cand_steal0;    /* steal ns at the sample before the gap */
	struct sl_stall_cpu_event cand;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stall_tick);
} stall_ticks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} stall_events SEC(".maps");

static __always_inline void hist_add(struct sl_stall_hist *h, __u64 d)
{
	__u32 s = sl_l2h_slot_bpf(d, SL_STALL_SLOTS);

	if (s < SL_STALL_SLOTS)
		h->slots[s]++;
	h->sum_ns += d;
}

static __always_inline struct stall_pcpu *pcpu(void)
{
	__u32 k = 0;
	return bpf_map_lookup_elem(&stall_pcpu, &k);
}

/* ---------- softirqs ---------- */

SEC("tp_btf/softirq_raise")
int BPF_PROG(stall_softirq_raise, unsigned int vec_nr)
{
	__u32 vec = vec_nr;
	struct stall_pcpu *p = pcpu();

	barrier_var(vec);
	if (!p || vec >= SL_STALL_NR_SOFTIRQS)
		return 0;
	barrier_var(vec);
	if (!p->raise_ns[vec]) /* the first raise while not yet run */
		p->raise_ns[vec] = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(stall_softirq_entry, unsigned int vec_nr)
{
	__u32 vec = vec_nr;
	struct stall_pcpu *p = pcpu();
	struct sl_stall_softirq *h;
	__u64 now = bpf_ktime_get_ns(), r;

	barrier_var(vec);
	if (!p || vec >= SL_STALL_NR_SOFTIRQS)
		return 0;
	barrier_var(vec);
	p->entry_ns[vec] = now;
	r = p->raise_ns[vec];
	p->raise_ns[vec] = 0;
	if (!r || r > now) {
		sl_stat_inc(&stall_stats, SL_STST_NO_RAISE);
		return 0;
	}
	h = bpf_map_lookup_elem(&stall_softirq, &vec);
	if (h)
		hist_add(&h->lat, now - r);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(stall_softirq_exit, unsigned int vec_nr)
{
	__u32 vec = vec_nr;
	struct stall_pcpu *p = pcpu();
	struct sl_stall_softirq *h;
	__u64 now = bpf_ktime_get_ns(), e;

	barrier_var(vec);
	if (!p || vec >= SL_STALL_NR_SOFTIRQS)
		return 0;
	barrier_var(vec);
	e = p->entry_ns[vec];
	p->entry_ns[vec] = 0;
	if (!e || e > now)
		return 0;
	h = bpf_map_lookup_elem(&stall_softirq, &vec);
	if (h)
		hist_add(&h->dur, now - e);
	return 0;
}

/* ---------- hardirqs ---------- */

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(stall_irq_entry, int irq, struct irqaction *action)
{
	struct stall_pcpu *p = pcpu();

	if (!p)
		return 0;
	p->irq_ns = bpf_ktime_get_ns();
	p->irq = irq;
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(stall_irq_exit, int irq, struct irqaction *action, int ret)
{
	struct stall_pcpu *p = pcpu();
	struct sl_stall_hist *h;
	__u64 now = bpf_ktime_get_ns(), e;
	__u32 k;

	if (!p)
		return 0;
	e = p->irq_ns;
	p->irq_ns = 0;
	if (!e || e > now || p->irq != irq)
		return 0;
	if (irq < 0 || irq >= SL_STALL_MAX_IRQS) {
		sl_stat_inc(&stall_stats, SL_STST_IRQ_RANGE);
		return 0;
	}
	k = (__u32)irq;
	h = bpf_map_lookup_elem(&stall_hardirq, &k);
	if (h) {
		__u32 w = (k >> 6) & (SL_STALL_MAX_IRQS / 64 - 1); /* k < SL_STALL_MAX_IRQS: a no-op the verifier needs */
		__u64 bit = 1ull << (k & 63);
		hist_add(h, now - e);
		if (!(irq_seen[w] & bit)) /* once per IRQ: no atomic after that */
			__sync_fetch_and_or(&irq_seen[w], bit);
	}
	return 0;
}

/* ---------- CPU stalls: gaps between cpu-clock samples ---------- */

/* Steal time of this CPU's runqueue, ns: rq->prev_steal_time_rq, the
 * paravirt steal clock as update_rq_clock_task() (kernel/sched/core.c)
 * last took it (every tick and schedule()). The rq is reached through the
 * current task (se.cfs_rq->rq): per-CPU symbols are not in kallsyms on
 * every kernel, so no __ksym. 0 without CONFIG_PARAVIRT_TIME_ACCOUNTING. */
static __always_inline __u64 steal_now(struct task_struct *cur)
{
	struct rq *rq;

	if (!bpf_core_field_exists(struct rq, prev_steal_time_rq))
		return 0;
	rq = BPF_CORE_READ(cur, se.cfs_rq, rq);
	if (!rq)
		return 0;
	return BPF_CORE_READ(rq, prev_steal_time_rq);
}

/* Decide a pending candidate once the steal accounting has settled: a
 * lateness that is still above the threshold after the steal time the
 * kernel accounted over it is a stall. */
static __always_inline void settle(struct stall_tick *t, __u64 steal)
{
	__u64 stolen = steal > t->cand_steal0 ? steal - t->cand_steal0 : 0;
	__u64 late = t->cand.late_ns;
	struct sl_stall_cpu_event *e;

	t->cand_ts = 0;
	if (late <= stolen || late - stolen <= cpu_stall_threshold_ns) {
		sl_stat_inc(&stall_stats, SL_STST_GAP_STEAL);
		return;
	}
	sl_stat_inc(&stall_stats, SL_STST_STALLS);
	t->cand.steal_ns = stolen;
	e = bpf_ringbuf_reserve(&stall_events, sizeof(*e), 0);
	if (!e) {
		sl_stat_inc(&stall_stats, SL_STST_RB_FAIL);
		return;
	}
	__builtin_memcpy(e, &t->cand, sizeof(*e));
	bpf_ringbuf_submit(e, 0);
}

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;

/* The cpu-clock event's hrtimer (kernel/events/core.c
 * perf_swevent_hrtimer()) runs this program from its expiry callback and
 * forwards the timer only afterwards, so hw.hrtimer.node.expires is the
 * expiry being served: now - expires is how late the timer interrupt was
 * taken, i.e. how long this CPU had interrupts off (or was not running:
 * hypervisor steal, taken off below). A late timer, not a gap between
 * samples, is the measure: a program run skipped for another reason (the
 * BPF recursion guard while a BPF syscall runs on the CPU, the event
 * scheduled out) leaves a gap but no lateness. */
SEC("perf_event")
int stall_tick(struct bpf_perf_event_data *ctx)
{
	__u32 k = 0;
	struct stall_tick *t = bpf_map_lookup_elem(&stall_ticks, &k);
	struct bpf_perf_event_data_kern *kc = bpf_cast_to_kern_ctx(ctx);
	struct task_struct *cur = bpf_get_current_task_btf();
	__u64 now = bpf_ktime_get_ns(), last, steal, exp, late;

	if (!t)
		return 0;
	sl_stat_inc(&stall_stats, SL_STST_SAMPLES);
	steal = steal_now(cur);
	last = t->last_ns;
	t->last_ns = now;
	if (t->cand_ts && now - t->cand_ts >= steal_settle_ns)
		settle(t, steal);
	exp = (__u64)BPF_CORE_READ(kc->event, hw.hrtimer.node.expires);
	late = now > exp ? now - exp : 0;
	if (exp && late > cpu_stall_threshold_ns) {
		sl_stat_inc(&stall_stats, SL_STST_GAPS);
		if (cur->pid == 0) { /* the idle task: no irq-off code ran */
			sl_stat_inc(&stall_stats, SL_STST_GAP_IDLE);
		} else if (!t->cand_ts) {
			struct sl_stall_cpu_event *c = &t->cand;
			c->hdr.type = SL_EV_STALL_CPU;
			c->hdr.cpu = bpf_get_smp_processor_id();
			c->hdr.ts_ns = now;
			sl_fill_task_id(&c->task, cur);
			c->late_ns = late;
			c->gap_ns = last && now > last ? now - last : 0;
			c->prev_ns = last;
			c->period_ns = cpu_stall_period_ns;
			c->steal_ns = 0;
			c->kstack_bytes = bpf_get_stack(ctx, c->kstack, sizeof(c->kstack), 0);
			t->cand_steal0 = t->last_steal;
			t->cand_ts = now;
		}
	}
	t->last_steal = steal;
	return 0;
}

/* ---------- hung tasks ---------- */

SEC("tp_btf/sched_process_hang")
int BPF_PROG(stall_hang, struct task_struct *p)
{
	struct sl_stall_hang_event *e;

	sl_stat_inc(&stall_stats, SL_STST_HANG_TP);
	e = bpf_ringbuf_reserve(&stall_events, sizeof(*e), 0);
	if (!e) {
		sl_stat_inc(&stall_stats, SL_STST_RB_FAIL);
		return 0;
	}
	e->hdr.type = SL_EV_STALL_HANG;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts_ns = bpf_ktime_get_ns();
	sl_fill_task_id(&e->task, p);
	e->state = (__u32)sl_task_state(p);
	e->switches = p->nvcsw + p->nivcsw;
	e->kstack_bytes = bpf_get_task_stack(p, e->kstack, sizeof(e->kstack), 0);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* One record per task in uninterruptible sleep (not TASK_NOLOAD), read by
 * the tick (src/modules/stall_hung.c). */
SEC("iter/task")
int stall_dtasks(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct sl_stall_dtask r;
	long st;

	if (!t)
		return 0;
	st = sl_task_state(t);
	if (!(st & SL_TASK_UNINTERRUPTIBLE) || (st & SL_TASK_NOLOAD))
		return 0;
	__builtin_memset(&r, 0, sizeof(r));
	sl_fill_task_id(&r.task, t);
	r.state = (__u32)st;
	r.switches = t->nvcsw + t->nivcsw;
	r.flags = t->flags;
	r.kstack_bytes = bpf_get_task_stack(t, r.kstack, sizeof(r.kstack), 0);
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}
