/* sandlens raw event ABI, the part every module shares: the record header
 * and the task identity BPF programs write into ring buffers. Each module's
 * own records and map layouts are in include/sandlens/<module>.h, which
 * includes this one.
 *
 * Conventions
 *   - times: ns of CLOCK_MONOTONIC (bpf_ktime_get_ns); user space converts
 *     to wall-clock with one offset taken at start.
 *   - cgroup ids: kernfs node id of the cgroup directory == st_ino of the
 *     directory in the cgroup mount (64-bit kernels). See
 *     docs/ARCHITECTURE.md "Identity" for which hierarchy an id belongs to.
 *   - pid/ppid are thread-group ids (what userland calls PID).
 *   - record types (struct sl_hdr.type) are unique per ring buffer; every
 *     module numbers its own in its header, from a range no other module
 *     uses (16 values each).
 */
#ifndef SANDLENS_COMMON_H
#define SANDLENS_COMMON_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define SL_COMM_LEN 16
/* cgroup paths carried in records: bytes relative to the cgroup mount. */
#define SL_CGPATH_BYTES 512

/* Which hierarchy a cgroup id was read from. */
enum sl_cg_hier {
	SL_CG_V2 = 0, /* default (unified) hierarchy */
	SL_CG_V1 = 1, /* the v1 hierarchy of the configured controller */
};

/* Identity of a task as the kernel saw it when the event fired.
 * cgroup_id is the v2 (default hierarchy) cgroup id; cgroup_v1_id is the
 * id of the task's cgroup in the v1 hierarchy chosen by the agent
 * (attribution.v1_controller; 0 when there is none). User space picks one
 * by the rule in docs/ARCHITECTURE.md ("Identity"). */
struct sl_task_id {
	__u32 pid;  /* tgid */
	__u32 tid;
	__u32 ppid; /* real_parent->tgid */
	__u32 pad0;
	__u64 cgroup_id;
	__u64 cgroup_v1_id;
	char comm[SL_COMM_LEN];
};

struct sl_hdr {
	__u32 type;    /* enum sl_event_type */
	__u32 cpu;
	__u64 ts_ns;   /* CLOCK_MONOTONIC ns */
};

/* Token bucket state per key (event flood control,
 * include/sandlens/token_bucket.h). */
struct sl_exec_bucket {
	__u64 tokens_nano; /* tokens * 1e9 */
	__u64 last_ns;     /* last refill, CLOCK_MONOTONIC */
	__u64 pending;     /* suppressed since the last delivered event */
	__u64 pending_rb;  /* of pending: lost to a full ring buffer */
	__u64 pending_abn; /* of pending (exit keys): abnormal exits */
};

#endif
