/* Maps and helpers shared by the memory and lock profile programs
 * (bpf/memprof.bpf.c, bpf/lockprof.bpf.c; docs/TASKS.md). Each object has
 * its own copy: a stack map, a counts hash keyed by struct sl_prof_key
 * (tgid, state, user stack id, kernel stack id) with struct sl_kprof_val
 * totals, and per-CPU stats (enum sl_kprof_stat). Aggregation only: no
 * record per event leaves the kernel. Include after task_filter.bpf.h. */
#ifndef SANDLENS_BPF_KPROF_COMMON_H
#define SANDLENS_BPF_KPROF_COMMON_H

#define EFAULT 14

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 8192); /* tasks.stack_entries */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 127 * sizeof(__u64)); /* PERF_MAX_STACK_DEPTH */
} kprof_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384); /* tasks.count_entries */
	__type(key, struct sl_prof_key);
	__type(value, struct sl_kprof_val);
} kprof_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SL_KST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} kprof_stats SEC(".maps");

/* 1 when current is a target. Cgroup ids are read only for cgroup
 * filters (pid/tid filters need none). */
static __always_inline int kp_current_match(void)
{
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 tgid = pt >> 32, tid = (__u32)pt;
	__u64 cg2 = 0, cg1 = 0;

	if (!tid) /* idle */
		return 0;
	if (filter_kind == SL_TF_CGROUP || filter_kind == SL_TF_ALL) {
		cg2 = bpf_get_current_cgroup_id();
		cg1 = sl_task_cgroup_v1_id((struct task_struct *)bpf_get_current_task());
	}
	return sl_task_match(tgid, tid, cg2, cg1);
}

/* Count lost stack ids (not -EFAULT: "no such part"). */
static __always_inline void kp_check_stacks(const struct sl_prof_key *k)
{
	if (k->user_stack_id < 0 && k->user_stack_id != -EFAULT)
		sl_stat_inc(&kprof_stats, SL_KST_USTACK_LOST);
	if (k->kernel_stack_id < 0 && k->kernel_stack_id != -EFAULT)
		sl_stat_inc(&kprof_stats, SL_KST_KSTACK_LOST);
}

/* The totals of key k, created with current's identity when new; NULL
 * (counted in SL_KST_COUNTS_FULL) when the map is full. */
static __always_inline struct sl_kprof_val *kp_val(const struct sl_prof_key *k)
{
	struct sl_kprof_val *v = bpf_map_lookup_elem(&kprof_counts, k);

	if (v)
		return v;
	struct sl_kprof_val z = {};
	z.cgroup_id = bpf_get_current_cgroup_id();
	z.cgroup_v1_id = sl_task_cgroup_v1_id((struct task_struct *)bpf_get_current_task());
	z.tid = (__u32)bpf_get_current_pid_tgid();
	bpf_get_current_comm(z.comm, sizeof(z.comm));
	bpf_map_update_elem(&kprof_counts, k, &z, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&kprof_counts, k);
	if (!v)
		sl_stat_inc(&kprof_stats, SL_KST_COUNTS_FULL);
	return v;
}

/* Add (count, value, extra0, extra1) to key k. */
static __always_inline struct sl_kprof_val *kp_account(const struct sl_prof_key *k, __u64 count,
						       __u64 value, __u64 extra0, __u64 extra1)
{
	struct sl_kprof_val *v = kp_val(k);

	if (!v)
		return 0;
	__sync_fetch_and_add(&v->count, count);
	if (value)
		__sync_fetch_and_add(&v->value, value);
	if (extra0)
		__sync_fetch_and_add(&v->extra0, extra0);
	if (extra1)
		__sync_fetch_and_add(&v->extra1, extra1);
	return v;
}

#endif
