// SPDX-License-Identifier: GPL-2.0
/* trace_syscall_errors task program (docs/TASKS.md): failed system calls of
 * a pid, a thread group or a cgroup, counted in the kernel by (syscall
 * number, errno). No per-call record leaves the kernel; user space reads
 * `sce_counts` once when the task ends and names the syscalls
 * (src/task/syscall_names.c).
 *
 *   tp/raw_syscalls/sys_exit   id = syscall number, ret = return value;
 *                              -4095 <= ret < 0 is -errno (the kernel's
 *                              IS_ERR_VALUE range, include/linux/err.h)
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "task_id.bpf.h"
#include "sandlens/task_abi.h"
#include "task_filter.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define MAX_ERRNO 4095


struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct sl_sce_key);
	__type(value, struct sl_sce_val);
} sce_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SL_SCE_MAX);
	__type(key, __u32);
	__type(value, __u64);
} sce_stats SEC(".maps");

/* Is current a target? */
static __always_inline int match(void)
{
	__u64 pt = bpf_get_current_pid_tgid();
	__u64 cg1 = filter_kind == SL_TF_CGROUP
			    ? sl_task_cgroup_v1_id((struct task_struct *)bpf_get_current_task())
			    : 0;

	return sl_task_match(pt >> 32, (__u32)pt, bpf_get_current_cgroup_id(), cg1);
}

SEC("tp/raw_syscalls/sys_exit")
int sys_exit(struct trace_event_raw_sys_exit *ctx)
{
	long ret = ctx->ret;
	struct sl_sce_key k;
	struct sl_sce_val *v;

	sl_stat_inc(&sce_stats, SL_SCE_EXITS);
	if (ret >= 0 || ret < -MAX_ERRNO || ctx->id < 0)
		return 0;
	if (!match())
		return 0;
	sl_stat_inc(&sce_stats, SL_SCE_ERRORS);
	k.nr = (__u32)ctx->id;
	k.err = (__u32)-ret;
	v = bpf_map_lookup_elem(&sce_counts, &k);
	if (!v) {
		struct sl_sce_val z = {};
		z.tgid = bpf_get_current_pid_tgid() >> 32;
		bpf_get_current_comm(z.comm, sizeof(z.comm));
		bpf_map_update_elem(&sce_counts, &k, &z, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&sce_counts, &k);
		if (!v) {
			sl_stat_inc(&sce_stats, SL_SCE_FULL);
			return 0;
		}
	}
	__sync_fetch_and_add(&v->count, 1);
	return 0;
}
