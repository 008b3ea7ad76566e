/* stall module, read side: the published snapshot and the Prometheus
 * families. Runs on API threads: reads only the snapshot and atomics. */
#include "cgroup/attr_labels.h"
#include "common/log2hist.h"
#include "modules/stall_internal.h"

#include <stdlib.h>
#include <string.h>

const struct sl_prom_family sl_stall_families[STALL_NFAM] = {
	[SF_SOFTIRQ_LAT] = {"sandlens_stall_softirq_latency_seconds", SL_PROM_HISTOGRAM,
			    "Softirq latency per CPU and vector: irq:softirq_raise (first raise) to irq:softirq_entry; docs/STALL.md."},
	[SF_SOFTIRQ_DUR] = {"sandlens_stall_softirq_seconds", SL_PROM_HISTOGRAM,
			    "Softirq handler runs per CPU and vector: irq:softirq_entry to irq:softirq_exit."},
	[SF_HARDIRQ] = {"sandlens_stall_hardirq_seconds", SL_PROM_HISTOGRAM,
			"Hardirq handler runs per IRQ (all CPUs): irq:irq_handler_entry to irq:irq_handler_exit."},
	[SF_HUNG] = {"sandlens_stall_hung_tasks", SL_PROM_GAUGE,
		     "Tasks in uninterruptible sleep without running for at least stall.hung_threshold, last scan."},
	[SF_HUNG_EVENTS] = {"sandlens_stall_hung_task_events_total", SL_PROM_COUNTER,
			    "hung_task events (one per blocking episode), by source: sandlens (own scan) or kernel (sched:sched_process_hang)."},
	[SF_CPU_STALLS] = {"sandlens_stall_cpu_stalls_total", SL_PROM_COUNTER,
			   "cpu_stall events per CPU: cpu-clock timer interrupts late by more than stall.cpu_stall_threshold after steal time."},
	[SF_CPU_GAPS] = {"sandlens_stall_cpu_late_timers_total", SL_PROM_COUNTER,
			 "cpu-clock timer interrupts late by more than the threshold per CPU, by verdict: stall, steal (hypervisor), idle (taken in the idle task)."},
	[SF_CPU_SAMPLES] = {"sandlens_stall_cpu_samples_total", SL_PROM_COUNTER, "cpu-clock samples taken per CPU."},
	[SF_KLOG] = {"sandlens_stall_kernel_log_events_total", SL_PROM_COUNTER,
		     "Kernel-log events by kind (soft_lockup, hard_lockup, rcu_stall)."},
	[SF_KLOG_LOST] = {"sandlens_stall_kernel_log_lost_total", SL_PROM_COUNTER,
			  "Kernel-log records overwritten before the module read them (/dev/kmsg EPIPE)."},
	[SF_SCAN_SECONDS] = {"sandlens_stall_scan_seconds", SL_PROM_GAUGE,
			     "Wall time of the last hung-task scan (task iterator read and bookkeeping)."},
	[SF_SCAN_TASKS] = {"sandlens_stall_scan_tasks", SL_PROM_GAUGE,
			   "Tasks in uninterruptible sleep (D, not TASK_NOLOAD) the last scan found."},
	[SF_NO_RAISE] = {"sandlens_stall_softirq_no_raise_total", SL_PROM_COUNTER,
			 "Softirq entries whose raise was not seen (no latency sample)."},
	[SF_IRQ_RANGE] = {"sandlens_stall_hardirq_out_of_range_total", SL_PROM_COUNTER,
			  "Hardirq runs of IRQ numbers >= 1024 (not in the histogram)."},
	[SF_RB_FAIL] = {"sandlens_stall_ringbuf_reserve_failures_total", SL_PROM_COUNTER,
			"cpu_stall / kernel hung_task records lost to a full ring buffer."},
};

void stall_snap_free(struct sl_snap *b)
{
	struct stall_snap *s = (struct stall_snap *)b;

	free(s->softirq);
	free(s->stats);
	free(s->irqs);
	free(s->series);
	free(s);
}

static struct stall_snap *snap_get(struct stall_priv *sp)
{
	return (struct stall_snap *)sl_snapref_get(&sp->ref);
}

static uint64_t stat_cpu(const struct stall_snap *s, int cpu, unsigned i)
{
	return s->stats[(size_t)cpu * SL_STST_MAX + i];
}

static uint64_t stat_sum(const struct stall_snap *s, unsigned i)
{
	uint64_t n = 0;
	for (int c = 0; c < s->ncpus; c++)
		n += stat_cpu(s, c, i);
	return n;
}

static void write_softirq(struct sl_prom *p, const struct stall_snap *s, int dur)
{
	const struct sl_prom_family *f = &sl_stall_families[dur ? SF_SOFTIRQ_DUR : SF_SOFTIRQ_LAT];
	double le[SL_STALL_FINITE_SLOTS];
	char cpu[16];

	sl_l2h_le_seconds(le, SL_STALL_SLOTS);
	if (sl_prom_declared(p, f))
		return;
	for (int c = 0; c < s->ncpus; c++)
		for (unsigned v = 0; v < SL_STALL_NR_SOFTIRQS; v++) {
			const struct sl_stall_softirq *q = &s->softirq[(size_t)c * SL_STALL_NR_SOFTIRQS + v];
			const struct sl_stall_hist *h = dur ? &q->dur : &q->lat;
			if (!sl_l2h_count((const uint64_t *)h->slots, SL_STALL_SLOTS))
				continue;
			snprintf(cpu, sizeof(cpu), "%d", c);
			struct sl_prom_label l[3] = {{"cpu", cpu}, {"vector", sl_stall_softirq_names[v]}, {NULL, NULL}};
			sl_prom_histogram(p, f->name, l, le, (const uint64_t *)h->slots, SL_STALL_FINITE_SLOTS, (double)h->sum_ns / 1e9);
		}
}

static void write_hardirq(struct sl_prom *p, const struct stall_snap *s)
{
	const struct sl_prom_family *f = &sl_stall_families[SF_HARDIRQ];
	double le[SL_STALL_FINITE_SLOTS];
	char irq[16];

	sl_l2h_le_seconds(le, SL_STALL_SLOTS);
	if (sl_prom_declared(p, f))
		return;
	for (unsigned i = 0; i < s->nirq; i++) {
		snprintf(irq, sizeof(irq), "%u", s->irqs[i].irq);
		struct sl_prom_label l[3] = {{"irq", irq}, {"name", s->irqs[i].name}, {NULL, NULL}};
		sl_prom_histogram(p, f->name, l, le, (const uint64_t *)s->irqs[i].h.slots, SL_STALL_FINITE_SLOTS,
				  (double)s->irqs[i].h.sum_ns / 1e9);
	}
}

static void write_hung(struct sl_prom *p, const struct stall_snap *s, int events)
{
	const struct sl_prom_family *f = &sl_stall_families[events ? SF_HUNG_EVENTS : SF_HUNG];
	struct sl_prom_label l[SL_ATTR_LABELS_MAX + 2];
	static const char *const src[2] = {"sandlens", "kernel"};

	if (sl_prom_declared(p, f))
		return;
	for (unsigned i = 0; i < s->nseries; i++) {
		size_t n = sl_attr_labels(&s->series[i].at, l);
		if (!events) {
			l[n] = (struct sl_prom_label){NULL, NULL};
			sl_prom_u64(p, f->name, l, s->series[i].hung_now);
			continue;
		}
		for (int k = 0; k < 2; k++) {
			l[n] = (struct sl_prom_label){"source", src[k]};
			l[n + 1] = (struct sl_prom_label){NULL, NULL};
			sl_prom_u64(p, f->name, l, s->series[i].events[k]);
		}
	}
}

static void write_per_cpu(struct sl_prom *p, const struct stall_snap *s, unsigned fam, unsigned stat)
{
	const struct sl_prom_family *f = &sl_stall_families[fam];
	char cpu[16];

	if (sl_prom_declared(p, f))
		return;
	for (int c = 0; c < s->ncpus; c++) {
		snprintf(cpu, sizeof(cpu), "%d", c);
		struct sl_prom_label l[2] = {{"cpu", cpu}, {NULL, NULL}};
		sl_prom_u64(p, f->name, l, stat_cpu(s, c, stat));
	}
}

static void write_gaps(struct sl_prom *p, const struct stall_snap *s)
{
	const struct sl_prom_family *f = &sl_stall_families[SF_CPU_GAPS];
	char cpu[16];

	if (sl_prom_declared(p, f))
		return;
	for (int c = 0; c < s->ncpus; c++) {
		snprintf(cpu, sizeof(cpu), "%d", c);
		struct sl_prom_label l[3] = {{"cpu", cpu}, {"verdict", "stall"}, {NULL, NULL}};
		sl_prom_u64(p, f->name, l, stat_cpu(s, c, SL_STST_STALLS));
		l[1].value = "steal";
		sl_prom_u64(p, f->name, l, stat_cpu(s, c, SL_STST_GAP_STEAL));
		l[1].value = "idle";
		sl_prom_u64(p, f->name, l, stat_cpu(s, c, SL_STST_GAP_IDLE));
	}
}

static void one(struct sl_prom *p, unsigned fam, uint64_t v)
{
	if (sl_prom_declared(p, &sl_stall_families[fam]) == 0)
		sl_prom_u64(p, sl_stall_families[fam].name, NULL, v);
}

void stall_write_metrics(struct sl_module *m, struct sl_prom *p)
{
	struct stall_priv *sp = m->priv;
	struct stall_snap *s;
	static const char *const kn[3] = {"soft_lockup", "hard_lockup", "rcu_stall"};

	if (!sp || !(s = snap_get(sp)))
		return;
	write_softirq(p, s, 0);
	write_softirq(p, s, 1);
	write_hardirq(p, s);
	write_hung(p, s, 0);
	write_hung(p, s, 1);
	write_per_cpu(p, s, SF_CPU_STALLS, SL_STST_STALLS);
	write_gaps(p, s);
	write_per_cpu(p, s, SF_CPU_SAMPLES, SL_STST_SAMPLES);
	if (sl_prom_declared(p, &sl_stall_families[SF_KLOG]) == 0)
		for (int k = 0; k < 3; k++) {
			struct sl_prom_label l[2] = {{"kind", kn[k]}, {NULL, NULL}};
			sl_prom_u64(p, sl_stall_families[SF_KLOG].name, l, s->klog[k]);
		}
	one(p, SF_KLOG_LOST, s->klog_lost);
	if (sl_prom_declared(p, &sl_stall_families[SF_SCAN_SECONDS]) == 0)
		sl_prom_f64(p, sl_stall_families[SF_SCAN_SECONDS].name, NULL, (double)s->scan_ns / 1e9);
	one(p, SF_SCAN_TASKS, s->scan_tasks);
	one(p, SF_NO_RAISE, stat_sum(s, SL_STST_NO_RAISE));
	one(p, SF_IRQ_RANGE, stat_sum(s, SL_STST_IRQ_RANGE));
	one(p, SF_RB_FAIL, stat_sum(s, SL_STST_RB_FAIL));
	sl_snap_put(&s->base);
}

void stall_write_drops(struct sl_module *m, struct sl_prom *p)
{
	struct stall_priv *sp = m->priv;
	struct stall_snap *s;
	struct sl_prom_label l[3] = {{"reason", "ringbuf_full"}, {"type", "cpu_stall"}, {NULL, NULL}};

	if (!sp || !(s = snap_get(sp)))
		return;
	/* one counter for both record kinds of the ring buffer */
	sl_prom_u64(p, "sandlens_events_dropped_total", l, stat_sum(s, SL_STST_RB_FAIL));
	sl_snap_put(&s->base);
}
