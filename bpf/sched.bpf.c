// SPDX-License-Identifier: GPL-2.0
/* sched module, kernel half: runqueue latency per cgroup (SCHED-1),
 * internal/external contention and neighbours (SCHED-2), sched_delay
 * events (SCHED-3). Definitions: docs/SCHED.md.
 *
 * Two ways to time a wait; user space loads one (sched.wait_source):
 *
 * sched_info (default where the kernel keeps it, CONFIG_SCHED_INFO): the
 *   kernel itself stamps every enqueue (task->sched_info.last_queued, in
 *   enqueue_task) and sums every queued interval into sched_info.run_delay
 *   (kernel/sched/stats.h, Documentation/scheduler/sched-stats.rst). One
 *   hook does it all, so no wakeup hook runs at all:
 *   tp_btf/sched_switch    sched_switch_si: prev's wait, counted as it
 *                          leaves the CPU = the growth of its run_delay
 *                          since its previous switch-out, when pcount moved
 *                          (the kernel added the wait at prev's switch-in,
 *                          sched_info_arrive(), after the tracepoint). Into
 *                          the histogram of prev's cgroup key, classified
 *                          by the task prev replaced here (sched_cur).
 * wakeup (the fallback, what runqlat does):
 *   tp_btf/sched_wakeup, tp_btf/sched_wakeup_new  enqueue time of the woken task
 *   tp_btf/sched_switch    prev still TASK_RUNNING => enqueue time of prev;
 *                          next: wait = now - enqueue time, likewise
 * Both:
 *   tp_btf/cgroup_rmdir    queue a removed cgroup in sched_gone (user space
 *                          drops its entries after reading them)
 * sched_info mode also:
 *   tp_btf/sched_process_free  give a freed task's sched_tasks slot back
 *
 * Hot-path rules (per-event cost is benchmarked, bench/sched-overhead.sh):
 * per-task state lives in a sched_tasks slot (sched_info mode: one line, no
 * helper call; see tstate_get) or in task storage (no pid hash), the histograms are
 * slots of a per-CPU array (no atomics, no shared cache lines, a lookup the
 * verifier inlines) whose index is cached in the task's storage with its
 * cgroup key (no hash of a 16-byte key per event; sched_slot maps a key to
 * its index once per task and cgroup move), pointers are read by direct BTF
 * loads (no bpf_probe_read calls), nothing goes to the ring buffer unless a
 * watched cgroup's wait crosses the threshold.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "task_id_btf.bpf.h"
#include "log2hist.bpf.h"
#include "sandlens/sched.h"
#include "sandlens/token_bucket.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load (src/modules/sched.c). */
const volatile __u64 delay_threshold_ns = 1000000; /* sched_delay threshold */
const volatile __u64 delay_rate = 10;              /* events/s per cgroup key; 0 = no limit */
const volatile __u64 delay_burst = 20;
const volatile int v1_hierarchy_id = -1;           /* cgroup_rmdir: v1 hierarchy of the key */
/* Written by user space at run time (sl_sched_set_rate_shift, 0..8): the
 * sched_delay bucket's rate and burst are >> rate_shift (min 1) under pressure. */
volatile __u32 rate_shift = 0;

/* task_struct.flags bit of the idle task (include/linux/sched.h PF_IDLE;
 * vmlinux.h carries no macros) */
#define SL_PF_IDLE 0x00000002u

static __always_inline __u64 shifted(__u64 v)
{
	__u32 sh = rate_shift;
	if (sh > 8)
		sh = 8;
	v >>= sh;
	return v ? v : 1;
}

/* 1 once user space has attached both cgroup-move hooks (which invalidate
 * the cached keys); until then every switch computes the key. */
volatile __u32 key_cache = 0;
/* Cgroup moves seen by the cgroup-move hooks (see struct enq). */
volatile __u64 cg_moves;

/* Advanced by user space after it adds keys to sched_watch (a task's
 * cached `watched` bit is valid while its wgen equals this). */
volatile __u32 watch_gen;

/* Tick epoch, advanced by user space (mmap'd .bss) after each read. */
volatile __u64 sched_epoch;

/* Per-task state. key: the task's cgroup key, computed once and kept
 * while no task on the host has changed cgroups, so a switch does no
 * pointer chase through task->cgroups, the css_set, cgroup and kernfs node
 * (seven cache lines on a hybrid host, cold when the CPU ran something
 * else). Tasks change cgroups only through cgroup_attach_task (one event
 * per write to cgroup.procs, naming only the thread-group leader although
 * every thread moved) and cgroup_transfer_tasks; a new task has new,
 * zeroed storage. Both hooks bump the global cg_moves, and a key is valid
 * while key_tag == cg_moves + 1: a move anywhere makes every task
 * recompute its key once (moves are rare next to switches: a container
 * start makes a few). The key is computed after reading cg_moves, so a
 * move that lands meanwhile still invalidates it. A css_set replaced
 * with the same cgroups (a v2 controller enabled) keeps a right key. */
struct tstate {
	/* what a switch-out reads and writes in the sched_info mode: 56
	 * bytes, one cache line with the owner word of its sched_tasks slot */
	__u64 key_tag; /* cg_moves + 1 when key was computed; 0 = never */
	struct sl_sched_key key;
	__u32 slot;    /* key's index in sched_hist (valid with key);
	                * SL_SCHED_NO_SLOT = not looked up yet, or none free */
	__u32 pcount;  /* sched_info mode: low 32 bits of sched_info.pcount at
	                * the previous switch-out (only its change is used) */
	__u64 rd;      /* sched_info mode: sched_info.run_delay then (ns) */
	__u32 wgen;    /* watch_gen when `watched` was read; ~0 = not read */
	__u32 tid;     /* the task's pid and tgid when key was computed: the */
	__u32 tgid;    /* neighbour identity of a sched_delay record (a thread
	                * that execs from a non-leader takes the leader's pid:
	                * its old tid stays here until the next cgroup move;
	                * the record then finds no task by it and leaves comm
	                * empty) */
	__u8 si_seen;  /* sched_info mode: rd, pcount and leave are set */
	__u8 leave;    /* sched_info mode: enum sl_sched_enqueue of the task's
	                * previous switch-out (how its next wait began) */
	__u8 watched;  /* key was in sched_watch at wgen */
	__u8 pad0;
};
_Static_assert(sizeof(struct tstate) == 56, "a task's switch-out state and its slot's owner word fill one line");

/* The task storage value: the state above (the wakeup mode's, and the
 * sched_info mode's for a task with no sched_tasks slot), then the wakeup
 * mode's enqueue stamp. */
struct enq {
	struct tstate s;
	/* wakeup mode */
	__u64 ts;      /* CLOCK_MONOTONIC ns of the enqueue; 0 = not waiting */
	__u32 kind;    /* enum sl_sched_enqueue of the pending enqueue */
	__u32 pad;
};

/* sched_info mode, per CPU: the task switched in last on this CPU (the one
 * running now) and the task it replaced there, its neighbour: what ran on
 * this CPU while it waited its last moment. Written at every switch from
 * what the switch already has in hand (prev is the neighbour of next), so
 * when the runner leaves (a running task cannot leave another CPU: it
 * migrates only after a switch-out), its wait is classified with no line
 * of any other task read. */
struct cpu_cur {
	__u64 task;    /* (unsigned long) of the running task; 0 = unknown */
	struct sl_sched_key nb_key; /* the neighbour's cgroup key */
	__u32 nb_tid;  /* the neighbour's pid and tgid (init namespace) */
	__u32 nb_tgid;
	__u32 nb_idle; /* the neighbour was this CPU's idle task (pid 0) */
	__u32 pad;
	__u64 addr;    /* scratch: a task's address as a number (task_addr), */
	__u64 addr_free; /* in sched_switch_si and in sched_task_free */
};

/* sched_info mode: rq->clock of the runqueue next is switched in on (the
 * clock of sched_info.last_queued: rq_clock(), sched_clock_cpu()-based,
 * updated by __schedule() before the pick). The runqueue is reached from
 * the task (set_task_rq() points every task's se.cfs_rq at a cfs_rq of
 * its CPU, whatever its class; cfs_rq->rq with CONFIG_FAIR_GROUP_SCHED):
 * the per-CPU `runqueues` symbol needs CONFIG_KALLSYMS_ALL, which not
 * every kernel has. Pointers the pick just used: no cold loads. */
static __always_inline __u64 task_rq_clock(struct task_struct *t)
{
	struct cfs_rq *cr = t->se.cfs_rq;
	struct rq *rq = cr->rq;

	return rq->clock;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_cur);
} sched_cur SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct enq);
} sched_enq SEC(".maps");

/* The histograms: one slot per cgroup key. sched_slot names the slot of
 * each key; a slot is taken from sched_free (filled with every index by
 * user space before attach) by the first wait of a new key, and given back
 * by user space, zeroed, a tick after the key's cgroup was removed and its
 * figures read (include/sandlens/sched.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1024); /* sched.max_cgroups */
	__type(key, __u32);
	__type(value, struct sl_sched_hist);
} sched_hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024); /* sched.max_cgroups */
	__type(key, struct sl_sched_key);
	__type(value, __u32);
} sched_slot SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 1024); /* sched.max_cgroups */
	__type(value, __u32);
} sched_free SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096); /* sched.max_neighbour_pairs */
	__type(key, struct sl_sched_pair_key);
	__type(value, struct sl_sched_pair);
} sched_pairs SEC(".maps");

/* Watched cgroup keys (filled by user space from sched.watch) with their
 * sched_delay token bucket. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024); /* sched.max_cgroups */
	__type(key, struct sl_sched_key);
	__type(value, struct sl_exec_bucket);
} sched_watch SEC(".maps");

/* Cgroups removed since user space last read the maps: user space reads
 * their final figures, then deletes their entries (a container that lived
 * less than a tick keeps its waits). When this map is full, cgroup_rmdir
 * deletes the entries itself. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct sl_sched_gone);
	__type(value, __u8);
} sched_gone SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} sched_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SL_SST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} sched_stats SEC(".maps");

static __always_inline struct enq *mark_enqueue(struct task_struct *t, __u64 now, __u32 kind)
{
	struct enq *e = bpf_task_storage_get(&sched_enq, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (e) {
		e->ts = now;
		e->kind = kind;
	}
	return e;
}

/* t's cgroup key, from its state e while t has not moved, else computed
 * (direct loads) and kept there. */
static __always_inline void task_key(struct task_struct *t, struct tstate *e, struct sl_sched_key *k)
{
	if (e->key_tag != cg_moves + 1 || !key_cache) {
		/* key_cache and cg_moves are read before the loads of the chain
		 * (the compiler barrier keeps the order in the program; x86
		 * keeps load order). A key computed before the move hooks were
		 * attached gets no tag: a move then would have gone unseen. */
		__u32 on = key_cache;
		__u64 m = cg_moves;

		asm volatile("" ::: "memory");
		sl_task_cgroup_key(t, &e->key.cgroup_id, &e->key.cgroup_v1_id);
		e->tid = t->pid;
		e->tgid = t->tgid;
		e->key_tag = on ? m + 1 : 0;
		e->wgen = ~0u;
		e->slot = SL_SCHED_NO_SLOT;
	}
	*k = e->key;
}

/* Index in sched_hist of key k: its sched_slot entry, else a free slot
 * claimed for it; SL_SCHED_NO_SLOT when none is free (max_cgroups). Two
 * CPUs claiming the same new key race on BPF_NOEXIST: the loser gives its
 * slot back (untouched, still zero) and takes the winner's. */
static __always_inline __u32 key_slot(const struct sl_sched_key *k)
{
	__u32 *s = bpf_map_lookup_elem(&sched_slot, k), idx;

	if (s)
		return *s;
	if (bpf_map_pop_elem(&sched_free, &idx))
		return SL_SCHED_NO_SLOT;
	if (bpf_map_update_elem(&sched_slot, k, &idx, BPF_NOEXIST) == 0)
		return idx;
	bpf_map_push_elem(&sched_free, &idx, 0);
	s = bpf_map_lookup_elem(&sched_slot, k);
	return s ? *s : SL_SCHED_NO_SLOT;
}

/* Whether next's key (cached in e by task_key) is in sched_watch: read
 * from the map once per watch_gen, not on every long wait. */
static __always_inline int key_watched(struct tstate *e, const struct sl_sched_key *k)
{
	__u32 g = watch_gen;

	if (e->wgen != g) {
		e->watched = bpf_map_lookup_elem(&sched_watch, k) != NULL;
		e->wgen = g;
	}
	return e->watched;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup, struct task_struct *p)
{
	mark_enqueue(p, bpf_ktime_get_ns(), SL_SCHED_ENQ_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new, struct task_struct *p)
{
	mark_enqueue(p, bpf_ktime_get_ns(), SL_SCHED_ENQ_WAKEUP_NEW);
	return 0;
}

#include "sched_delay.bpf.h"

static __always_inline int key_eq(const struct sl_sched_key *a, const struct sl_sched_key *b)
{
	return a->cgroup_id == b->cgroup_id && a->cgroup_v1_id == b->cgroup_v1_id;
}

/* Account an external wait in the victim's in-value neighbour slots.
 * Returns 0 when every slot is taken by other neighbours. */
static __always_inline int nb_add(struct sl_sched_hist *h, const struct sl_sched_key *n, __u64 wait)
{
#pragma unroll
	for (int i = 0; i < SL_SCHED_NB_SLOTS; i++) {
		struct sl_sched_nb *s = &h->nb[i];
		if (s->count == 0) { /* claim: key first, then count (readers take count 0 as free) */
			s->key = *n;
			s->wait_ns = wait;
			asm volatile("" ::: "memory");
			s->count = 1;
			return 1;
		}
		if (key_eq(&s->key, n)) {
			s->wait_ns += wait;
			s->count++;
			return 1;
		}
	}
	return 0;
}

static __always_inline __u32 key_class(const struct sl_sched_key *a, const struct sl_sched_key *b)
{
	return key_eq(a, b) ? SL_SCHED_INTERNAL : SL_SCHED_EXTERNAL;
}

/* Account the wait of `wait` ns (enqueued as `kind`) of task `victim`
 * (storage e, cgroup key *key) with contention class cls against the
 * neighbour key *nkey (read when cls is SL_SCHED_EXTERNAL): histogram of
 * the victim's key, class split, neighbours, per-tick max, sched_delay
 * (neighbour nb_task, or this CPU's record c when NULL; the wait ended at
 * CLOCK_MONOTONIC end_mono, 0 = now). */
static __always_inline void account_wait(struct task_struct *victim, struct tstate *e,
					 const struct sl_sched_key *key, __u32 cls,
					 const struct sl_sched_key *nkey, struct task_struct *nb_task,
					 const struct cpu_cur *c, __u64 wait, __u32 kind, __u64 end_mono)
{
	struct sl_sched_hist *h;
	__u64 epoch;
	__u32 slot, idx, ei;

	/* the slot is cached with the key: looked up again only after the
	 * task moved (or while no slot was free) */
	idx = e->slot;
	if (idx == SL_SCHED_NO_SLOT) {
		idx = key_slot(key);
		if (idx == SL_SCHED_NO_SLOT) {
			sl_stat_inc(&sched_stats, SL_SST_HIST_FULL);
			return;
		}
		e->slot = idx;
	}
	h = bpf_map_lookup_elem(&sched_hist, &idx);
	if (!h)
		return;
	slot = sl_l2h_slot_bpf(wait, SL_SCHED_SLOTS);
	if (slot < SL_SCHED_SLOTS)
		h->slots[slot]++;
	h->sum_ns += wait;
	if (cls < 3)
		h->class_ns[cls] += wait;
	epoch = sched_epoch;
	ei = epoch & 1;
	if (h->max_epoch[ei] != epoch) {
		h->max_epoch[ei] = epoch;
		h->max_ns[ei] = wait;
	} else if (wait > h->max_ns[ei]) {
		h->max_ns[ei] = wait;
	}

	if (cls == SL_SCHED_EXTERNAL && !nb_add(h, nkey, wait)) {
		struct sl_sched_pair_key pk = {.victim = *key, .neighbour = *nkey};
		struct sl_sched_pair *p = bpf_map_lookup_elem(&sched_pairs, &pk);
		if (!p) {
			struct sl_sched_pair np = {.wait_ns = wait, .count = 1};
			if (bpf_map_update_elem(&sched_pairs, &pk, &np, BPF_NOEXIST))
				sl_stat_inc(&sched_stats, SL_SST_PAIR_FULL);
		} else {
			p->wait_ns += wait;
			p->count++;
		}
	}

	if (wait >= delay_threshold_ns && key_watched(e, key))
		emit_delay(victim, nb_task, c, key, end_mono, wait, cls, kind);
}

/* wakeup mode (the fallback where the kernel keeps no sched_info): the
 * wait of next, from its enqueue stamp, ends now; prev is its neighbour. */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct enq *e, *pe = NULL;
	struct sl_sched_key key, pkey;
	__u64 now = bpf_ktime_get_ns(), wait;
	__u32 kind, cls;

	/* Switched out while runnable: back on the runqueue now. The state is
	 * read from the task (not the tracepoint's prev_state): __schedule()
	 * resets it to TASK_RUNNING when a signal is pending and keeps the task
	 * queued. */
	if (prev->pid && sl_task_state(prev) == 0)
		pe = mark_enqueue(prev, now, SL_SCHED_ENQ_PREEMPT);
	if (!next->pid)
		return 0;
	e = bpf_task_storage_get(&sched_enq, next, 0, 0);
	if (!e || !e->ts)
		return 0;
	wait = now - e->ts;
	kind = e->kind;
	e->ts = 0;
	task_key(next, &e->s, &key);
	if (!prev->pid) {
		cls = SL_SCHED_IDLE;
	} else if (!pe && prev->cgroups == next->cgroups) {
		/* a sleeping prev (no storage fetched): the same css_set means
		 * the same cgroup on every hierarchy; two loads instead of a
		 * storage lookup */
		cls = SL_SCHED_INTERNAL;
		pkey = key;
	} else {
		/* prev's key from its cache (a sleeping prev without storage, a
		 * task that ran since before the agent, gets an entry now) */
		if (!pe)
			pe = bpf_task_storage_get(&sched_enq, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (pe)
			task_key(prev, &pe->s, &pkey);
		else
			sl_task_cgroup_key(prev, &pkey.cgroup_id, &pkey.cgroup_v1_id);
		cls = key_class(&pkey, &key);
	}
	account_wait(next, &e->s, &key, cls, &pkey, prev, NULL, wait, kind, now);
	return 0;
}

#include "sched_slots.bpf.h"

/* sched_info mode: the kernel's own accounting, no wakeup hook. A wait is
 * counted when its task next leaves a CPU, from what the kernel already
 * recorded: sched_info_arrive() (context_switch(), after this tracepoint)
 * adds each wait to sched_info.run_delay and counts it in pcount as the
 * task is switched in, and sched_info_dequeue() adds the intervals that a
 * migration while queued closed. So at prev's switch-out, the growth of
 * run_delay since its previous switch-out is the whole wait that ended as
 * it was switched in, and pcount tells whether the kernel counted one (a
 * switch-in with no last_queued it does not). prev just ran here: its
 * lines are warm; next's are not read at all (no clock read either).
 *
 * The wait is counted one run late (when prev leaves, not when it began
 * to run: a task that runs without a switch for a long time shows its
 * wait then; every task that exits has its last switch-out). The wait
 * that ended before the agent first saw the task leave is not counted
 * (one wait per task alive at the agent's start, docs/SCHED.md),
 * except the first wait of a task's life (pcount 1: sched_fork() zeroed
 * sched_info, so run_delay holds exactly that wait).
 *
 * The enqueue kind is how prev left a CPU before that wait, recorded at
 * that switch-out from its state: still runnable (TASK_RUNNING, also a
 * sleep cut short by a pending signal: __schedule() resets the state and
 * keeps it queued) = preempted, else woken. The neighbour is the task prev
 * replaced on this CPU, recorded in sched_cur at that switch-in. */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_si, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct cpu_cur *c;
	struct tstate *pe;
	struct sl_sched_key key;
	__u64 rd, pcount, wait = 0;
	__u32 zero = 0, kind = 0, leave, cls;
	int count = 0;

	c = bpf_map_lookup_elem(&sched_cur, &zero);
	if (!c)
		return 0;
	/* the idle task leaves: it is next's neighbour. By PF_IDLE: the flags
	 * share prev's first line with __state, read below anyway (pid is on
	 * a line of its own); PF_IDLE is also set on an idle-injection thread
	 * while it injects (play_idle_precise()), which is idle time too. */
	if (prev->flags & SL_PF_IDLE) {
		c->task = (unsigned long)next;
		c->nb_idle = 1;
		return 0;
	}
	pe = tstate_get(prev, c);
	if (!pe) {
		c->task = 0;
		return 0;
	}
	task_key(prev, pe, &key);
	rd = prev->sched_info.run_delay;
	pcount = prev->sched_info.pcount;
	leave = sl_task_state(prev) == 0 ? SL_SCHED_ENQ_PREEMPT : SL_SCHED_ENQ_WAKEUP;
	if (pe->si_seen) {
		if ((__u32)pcount != pe->pcount) {
			count = 1;
			/* run_delay only grows (reset only at fork, which gives
			 * new storage); the check keeps a wrapped difference out */
			wait = rd >= pe->rd ? rd - pe->rd : 0;
			kind = pe->leave;
		}
	} else if (pcount == 1) {
		count = 1;
		wait = rd;
		kind = SL_SCHED_ENQ_WAKEUP_NEW;
	}
	pe->rd = rd;
	pe->pcount = (__u32)pcount;
	pe->leave = leave;
	pe->si_seen = 1;
	/* the record is prev's when its switch-in was seen here: then its
	 * neighbour is known. Else (the kernel switched prev in without the
	 * tracepoint showing it: schedstat's pcount then runs a few ahead of
	 * the tracepoint's count) the wait is counted in no class. */
	if (count) {
		if (c->task == (unsigned long)prev)
			cls = c->nb_idle ? SL_SCHED_IDLE : key_class(&c->nb_key, &key);
		else
			cls = SL_SCHED_CLS_UNKNOWN;
		account_wait(prev, pe, &key, cls, &c->nb_key, NULL, c, wait, kind, 0);
	}
	c->task = (unsigned long)next;
	c->nb_idle = 0;
	c->nb_key = key;
	c->nb_tid = pe->tid;
	c->nb_tgid = pe->tgid;
	return 0;
}

/* sched_info mode: a task_struct is about to be freed (its last switch-out
 * is long done; delayed_put_task_struct(), an RCU callback): give its
 * sched_tasks slot back before the address can name another task. */
SEC("tp_btf/sched_process_free")
int BPF_PROG(sched_task_free, struct task_struct *t)
{
	__u32 zero = 0;
	struct cpu_cur *c = bpf_map_lookup_elem(&sched_cur, &zero);

	if (c)
		tstate_put(t, c);
	return 0;
}

/* A task (or a whole thread group) moved to another cgroup: every cached
 * key is recomputed at its next use. */
static __always_inline void forget_keys(void)
{
	__sync_fetch_and_add(&cg_moves, 1);
}

SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(sched_cgroup_attach, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	forget_keys();
	return 0;
}

/* v1 cgroup_transfer_tasks() (cpuset hotplug) moves tasks without
 * cgroup_attach_task. */
SEC("tp_btf/cgroup_transfer_tasks")
int BPF_PROG(sched_cgroup_transfer, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	forget_keys();
	return 0;
}

/* cgroup_rmdir: queue the removed cgroup; when the queue is full, remove
 * every entry whose key holds it at once. */
struct rmdir_ctx {
	__u64 id;
	int v1; /* the id is a v1 cgroup id */
};

static long rm_key(struct bpf_map *map, const struct sl_sched_key *k, const void *kk,
		   struct rmdir_ctx *c)
{
	if ((c->v1 ? k->cgroup_v1_id : k->cgroup_id) == c->id)
		bpf_map_delete_elem(map, kk);
	return 0;
}

static long rm_hist(struct bpf_map *map, const void *key, void *val, void *ctx)
{
	return rm_key(map, key, key, ctx);
}

static long rm_pair(struct bpf_map *map, const void *key, void *val, void *ctx)
{
	const struct sl_sched_pair_key *pk = key;
	struct rmdir_ctx *c = ctx;
	__u64 a = c->v1 ? pk->victim.cgroup_v1_id : pk->victim.cgroup_id;
	__u64 b = c->v1 ? pk->neighbour.cgroup_v1_id : pk->neighbour.cgroup_id;

	if (a == c->id || b == c->id)
		bpf_map_delete_elem(map, key);
	return 0;
}

SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(sched_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	struct rmdir_ctx c;
	int hid = cgrp->root->hierarchy_id;

	if (hid != 0 && hid != v1_hierarchy_id)
		return 0;
	c.id = cgrp->kn->id;
	c.v1 = hid != 0;
	struct sl_sched_gone g = {.id = c.id, .v1 = c.v1};
	__u8 one = 1;
	if (bpf_map_update_elem(&sched_gone, &g, &one, BPF_ANY) == 0)
		return 0; /* user space deletes the entries after its next read */
	bpf_for_each_map_elem(&sched_slot, rm_hist, &c, 0); /* user space reclaims the slots */
	bpf_for_each_map_elem(&sched_watch, rm_hist, &c, 0);
	bpf_for_each_map_elem(&sched_pairs, rm_pair, &c, 0);
	return 0;
}
