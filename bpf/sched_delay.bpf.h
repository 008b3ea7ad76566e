/* SPDX-License-Identifier: GPL-2.0 */
/* sched module, kernel half: the sched_delay record (fill_nb_id,
 * emit_delay; task identities by sl_fill_task_id_btf, task_id_btf.bpf.h).
 * Part of bpf/sched.bpf.c, included there once, after the maps, struct
 * cpu_cur and the rate globals it uses; not a header of its own.
 * Definitions: docs/SCHED.md. */
#ifndef SANDLENS_BPF_SCHED_DELAY_H
#define SANDLENS_BPF_SCHED_DELAY_H

/* The neighbour of a sched_info-mode wait, from this CPU's record c: its
 * pid, tid and cgroup key as recorded at the switch; its comm and parent
 * from the task found again by its tid (bpf_task_from_pid) while it still
 * exists with the same tgid, else empty. The idle task: pid 0,
 * "swapper/<cpu>", no cgroup (as its task reads in the wakeup mode, but
 * for the root cgroup ids). */
static __always_inline void fill_nb_id(struct sl_task_id *id, const struct cpu_cur *c, __u32 cpu)
{
	__builtin_memset(id, 0, sizeof(*id));
	if (c->nb_idle) {
		__u64 arg = cpu;

		bpf_snprintf(id->comm, sizeof(id->comm), "swapper/%u", &arg, sizeof(arg));
		return;
	}
	id->pid = c->nb_tgid;
	id->tid = c->nb_tid;
	id->cgroup_id = c->nb_key.cgroup_id;
	id->cgroup_v1_id = c->nb_key.cgroup_v1_id;
	if (bpf_ksym_exists(bpf_task_from_pid) && bpf_ksym_exists(bpf_task_release)) {
		struct task_struct *t = bpf_task_from_pid((s32)c->nb_tid);

		if (t) {
			if ((__u32)t->tgid == c->nb_tgid) {
				id->ppid = BPF_CORE_READ(t, real_parent, tgid);
				bpf_probe_read_kernel_str(id->comm, sizeof(id->comm), t->comm);
			}
			bpf_task_release(t);
		}
	}
}

/* A sched_delay record: `victim` waited `wait` ns (enqueued as `kind`,
 * contention class cls), ending at CLOCK_MONOTONIC end_mono on this CPU.
 * The neighbour is nb_task (wakeup mode: prev at the switch-in) or, when
 * NULL, this CPU's record c (sched_info mode). */
static __always_inline void emit_delay(struct task_struct *victim, struct task_struct *nb_task,
				       const struct cpu_cur *c, const struct sl_sched_key *key,
				       __u64 end_mono, __u64 wait, __u32 cls, __u32 kind)
{
	struct sl_exec_bucket *b = bpf_map_lookup_elem(&sched_watch, key);
	struct sl_sched_delay_event *e;
	__u64 carried = 0, now = bpf_ktime_get_ns();
	__u32 cpu;

	if (!b)
		return;
	sl_stat_inc(&sched_stats, SL_SST_DELAY_SEEN);
	if (delay_rate && !sl_bucket_take(b, now, shifted(delay_rate), shifted(delay_burst), &carried)) {
		sl_stat_inc(&sched_stats, SL_SST_DELAY_RATE_LIMITED);
		return;
	}
	e = bpf_ringbuf_reserve(&sched_events, sizeof(*e), 0);
	if (!e) {
		sl_stat_inc(&sched_stats, SL_SST_DELAY_RB_FAIL);
		if (delay_rate)
			sl_bucket_undeliver(b, carried);
		return;
	}
	cpu = bpf_get_smp_processor_id();
	e->hdr.type = SL_EV_SCHED_DELAY;
	e->hdr.cpu = cpu;
	if (!end_mono) {
		/* sched_info mode, at the victim's switch-out: the wait ended
		 * when it was switched in here, sched_info.last_arrival on this
		 * runqueue's clock; its run since then is taken off now */
		__u64 rq_now = task_rq_clock(victim), arr = victim->sched_info.last_arrival;

		end_mono = rq_now > arr && now > rq_now - arr ? now - (rq_now - arr) : now;
	}
	e->hdr.ts_ns = end_mono;
	sl_fill_task_id_btf(&e->task, victim);
	if (nb_task)
		sl_fill_task_id_btf(&e->neighbour, nb_task);
	else if (cls != SL_SCHED_CLS_UNKNOWN)
		fill_nb_id(&e->neighbour, c, cpu);
	else
		__builtin_memset(&e->neighbour, 0, sizeof(e->neighbour));
	e->wait_ns = wait;
	e->truncated_count = carried;
	e->contention = cls;
	e->enqueue = kind;
	bpf_ringbuf_submit(e, 0);
}

#endif
