/* Task targets shared by the on-demand task programs (profile, syscall
 * errors): which tasks a task's BPF object counts. Filled by user space
 * (src/task/) before the programs run: filter_kind (enum sl_task_filter in
 * include/sandlens/task_abi.h) and the matching map. Include after
 * task_id.bpf.h and sandlens/task_abi.h. */
#ifndef SANDLENS_BPF_TASK_FILTER_H
#define SANDLENS_BPF_TASK_FILTER_H

const volatile __u32 filter_kind = SL_TF_ALL; /* enum sl_task_filter */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} filter_pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u8);
} filter_cg2 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u8);
} filter_cg1 SEC(".maps");

/* 1 when a task with (tgid, tid, v2 cgroup id, v1 cgroup id) is a target. */
static __always_inline int sl_task_match(__u32 tgid, __u32 tid, __u64 cg2, __u64 cg1)
{
	switch (filter_kind) {
	case SL_TF_TGID:
		return bpf_map_lookup_elem(&filter_pids, &tgid) != 0;
	case SL_TF_TID:
		return bpf_map_lookup_elem(&filter_pids, &tid) != 0;
	case SL_TF_CGROUP:
		if (bpf_map_lookup_elem(&filter_cg2, &cg2))
			return 1;
		return cg1 && bpf_map_lookup_elem(&filter_cg1, &cg1) != 0;
	default:
		return 1;
	}
}

#endif
