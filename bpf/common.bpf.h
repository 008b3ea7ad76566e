/* BPF helpers shared by every bpf/<module>.bpf.c: per-CPU stat counters,
 * the task state (CO-RE: __state since 5.14, state before), and the
 * task's cgroup key (v2 id + the v1 id of the configured controller).
 * Include after vmlinux.h, bpf_helpers.h and bpf_core_read.h. */
#ifndef SANDLENS_BPF_COMMON_H
#define SANDLENS_BPF_COMMON_H

/* Index into css_set->subsys[] of the v1 controller whose hierarchy gives
 * the v1 cgroup id (enum cgroup_subsys_id value, read from BTF by user
 * space: attribution.v1_controller); -1 = no v1 hierarchy for it (pure v2
 * host). Set before load. */
const volatile int sl_v1_subsys_id = -1;

/* Add n to counter idx of map, a BPF_MAP_TYPE_PERCPU_ARRAY of __u64 (no
 * atomics needed: the slot is this CPU's). An idx out of range is ignored. */
static __always_inline void sl_stat_add(void *map, __u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(map, &idx);
	if (v)
		*v += n;
}

static __always_inline void sl_stat_inc(void *map, __u32 idx)
{
	sl_stat_add(map, idx, 1);
}

/* Find a task again by its pid (init namespace) and drop the reference
 * (kfuncs, 6.2+; weak: a program checks bpf_ksym_exists() and does
 * without on an older kernel). */
#ifndef bpf_ksym_exists /* libbpf < 1.2 */
#define bpf_ksym_exists(sym) (!!(sym))
#endif
extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

/* task_struct before 5.14 (commit 2f064a59a11f "sched: Change
 * task_struct::state"): the field was named state. */
struct task_struct___o {
	volatile long state;
} __attribute__((preserve_access_index));

/* t's scheduler state (0 = TASK_RUNNING), on either side of the rename.
 * A direct load when __state exists: t must be trusted (as above). */
static __always_inline long sl_task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return t->__state;
	return BPF_CORE_READ((struct task_struct___o *)t, state);
}

/* Cgroup key of t by direct BTF loads (no probe-read calls: the hot paths
 * of sched and the profilers). t must be a trusted pointer: a tp_btf
 * argument or bpf_get_current_task_btf(). *cg2 = the v2 (default
 * hierarchy) cgroup id, *cg1 = the id in the v1 hierarchy of
 * sl_v1_subsys_id (0 when none). */
static __always_inline void sl_task_cgroup_key(struct task_struct *t, __u64 *cg2, __u64 *cg1)
{
	struct css_set *cset = t->cgroups;

	*cg2 = cset->dfl_cgrp->kn->id;
	*cg1 = 0;
	if (sl_v1_subsys_id >= 0 && sl_v1_subsys_id < CGROUP_SUBSYS_COUNT) {
		struct cgroup_subsys_state *css = cset->subsys[sl_v1_subsys_id];
		if (css)
			*cg1 = css->cgroup->kn->id;
	}
}

/* The same two ids through CO-RE probe reads, for any task pointer (a
 * kprobe argument, bpf_get_current_task()). v2: t->cgroups->dfl_cgrp->kn->id,
 * the value bpf_get_current_cgroup_id() returns for current. */
static __always_inline __u64 sl_task_cgroup_id(struct task_struct *t)
{
	return BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
}

/* v1: t's cgroup in the hierarchy of sl_v1_subsys_id, 0 when none. */
static __always_inline __u64 sl_task_cgroup_v1_id(struct task_struct *t)
{
	int idx = sl_v1_subsys_id;
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cset;

	/* user space takes idx from the running kernel's BTF; 32 bounds it
	 * without tying the object to this build host's CGROUP_SUBSYS_COUNT */
	if (idx < 0 || idx >= 32)
		return 0;
	cset = BPF_CORE_READ(t, cgroups);
	if (!cset)
		return 0;
	if (bpf_core_read(&css, sizeof(css), &cset->subsys[idx]) || !css)
		return 0;
	return BPF_CORE_READ(css, cgroup, kn, id);
}

#endif
