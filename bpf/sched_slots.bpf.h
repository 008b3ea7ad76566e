/* SPDX-License-Identifier: GPL-2.0 */
/* sched module, kernel half: the sched_tasks slots that hold each task's
 * switch-out state in the sched_info mode (tstate_get claims, tstate_put,
 * from sched_task_free in sched.bpf.c, gives back). Part of bpf/sched.bpf.c, included there
 * once, after struct tstate, struct enq, struct cpu_cur, sched_enq and
 * sched_stats; not a header of its own. Definitions: docs/SCHED.md "Cost". */
#ifndef SANDLENS_BPF_SCHED_SLOTS_H
#define SANDLENS_BPF_SCHED_SLOTS_H

/* sched_info mode: the tasks' switch-out state, in slots of a shared
 * array rather than in task storage. A task-storage lookup is a helper
 * call and a chain of three dependent loads (task->bpf_storage, the
 * storage's cache slot, the value), cold when the task ran a while: on a
 * CPU-bound load it was half the cost of the switch (bench/RESULTS.md).
 * Here the address of the task picks a pair of adjacent 64-byte slots
 * (a multiplicative hash), and a slot whose owner word is the task holds
 * its state: one line, found with no call and no dependent load.
 *
 * Ownership: a slot is claimed (compare-and-swap of the owner word from 0)
 * at a task's first switch-out that finds one of its two slots free, and
 * given back only when the task_struct is freed (tstate_put, from
 * tp_btf/sched_process_free: so its address cannot name a new task while the slot still holds the old
 * one's state). Only the CPU a task runs on touches its slot's state, and a
 * task is switched out on one CPU at a time, so the state needs no lock. A
 * task that finds both slots owned by others keeps its state in its task
 * storage (sched_enq) until a slot frees; claiming one then moves the state
 * over, and it stays there. 8192 slots (512 KiB); with random addresses
 * pairs start to fill well before 8192 live tasks (about a quarter of the
 * tasks in task storage at 8192), at the old cost and counted the same
 * (SL_SST_TASK_STORAGE counts those switch-outs). */
#define SL_TASK_SLOTS_BITS 13

struct task_slot {
	__u64 owner; /* (unsigned long) of the task_struct; 0 = free */
	struct tstate s;
};
_Static_assert(sizeof(struct task_slot) == 64, "one slot, one cache line");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	/* mmapable: the values start page-aligned, so each slot is one cache
	 * line (a plain array's values start 312 bytes into struct bpf_array,
	 * 56 bytes into a line: every slot would span two) */
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1 << SL_TASK_SLOTS_BITS);
	__type(key, __u32);
	__type(value, struct task_slot);
} sched_tasks SEC(".maps");

/* 1 once user space has attached sched_process_free (which gives slots
 * back); until then every task keeps its state in task storage. */
volatile __u32 task_slots = 0;

/* The even index of the pair of slots of the task at address a (a
 * Fibonacci hash: the top bits of a * 2^64/phi depend on every bit of a). */
static __always_inline __u32 slot_pair(__u64 a)
{
	return (__u32)((a * 0x9E3779B97F4A7C15ULL) >> (64 - SL_TASK_SLOTS_BITS)) & ~1u;
}

/* t's address as a number: the verifier allows no arithmetic on a task
 * pointer, but a number read back from a map value is a plain scalar. */
static __always_inline __u64 task_addr(struct task_struct *t, __u64 *scratch)
{
	*(volatile __u64 *)scratch = (unsigned long)t;
	return *(volatile __u64 *)scratch;
}

/* The switch-out state of t (running on this CPU, c its record): its
 * sched_tasks slot, else a slot claimed now (its task-storage state moved
 * in, or zeroed), else its task storage. NULL when none can be had. */
static __always_inline struct tstate *tstate_get(struct task_struct *t, struct cpu_cur *c)
{
	struct task_slot *a, *b, *own = NULL;
	struct enq *e;
	__u64 me;
	__u32 i, j;

	if (task_slots) {
		me = task_addr(t, &c->addr);
		i = slot_pair(me);
		j = i | 1;
		a = bpf_map_lookup_elem(&sched_tasks, &i);
		if (!a)
			return NULL;
		if (a->owner == me)
			return &a->s;
		b = bpf_map_lookup_elem(&sched_tasks, &j);
		if (!b)
			return NULL;
		if (b->owner == me)
			return &b->s;
		/* neither is t's (t owns at most one, and only this CPU, where
		 * t runs, claims for t): claim a free one */
		if (!a->owner && __sync_val_compare_and_swap(&a->owner, 0, me) == 0)
			own = a;
		else if (!b->owner && __sync_val_compare_and_swap(&b->owner, 0, me) == 0)
			own = b;
	}
	if (!own) {
		sl_stat_inc(&sched_stats, SL_SST_TASK_STORAGE);
		e = bpf_task_storage_get(&sched_enq, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		return e ? &e->s : NULL;
	}
	e = bpf_task_storage_get(&sched_enq, t, 0, 0);
	if (e)
		own->s = e->s;
	else
		__builtin_memset(&own->s, 0, sizeof(own->s));
	return &own->s;
}

/* Give back the slot of t, a task_struct about to be freed (c: this CPU's
 * record, its addr_free word as scratch), if it owns one. */
static __always_inline void tstate_put(struct task_struct *t, struct cpu_cur *c)
{
	struct task_slot *a, *b;
	__u64 me = task_addr(t, &c->addr_free);
	__u32 i = slot_pair(me), j = i | 1;

	a = bpf_map_lookup_elem(&sched_tasks, &i);
	b = bpf_map_lookup_elem(&sched_tasks, &j);
	if (a && a->owner == me)
		__sync_val_compare_and_swap(&a->owner, me, 0);
	else if (b && b->owner == me)
		__sync_val_compare_and_swap(&b->owner, me, 0);
}

#endif
