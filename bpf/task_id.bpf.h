/* Task identity of an event (pid, tid, ppid, comm, cgroup ids: struct
 * sl_task_id). Include after vmlinux.h and bpf helpers. */
#ifndef SANDLENS_BPF_TASK_ID_H
#define SANDLENS_BPF_TASK_ID_H

#include "sandlens/common.h"
#include "common.bpf.h"

/* id from any task pointer (CO-RE probe reads). */
static __always_inline void sl_fill_task_id(struct sl_task_id *id, struct task_struct *t)
{
	id->pid = BPF_CORE_READ(t, tgid);
	id->tid = BPF_CORE_READ(t, pid);
	id->ppid = BPF_CORE_READ(t, real_parent, tgid);
	id->pad0 = 0;
	id->cgroup_id = sl_task_cgroup_id(t);
	id->cgroup_v1_id = sl_task_cgroup_v1_id(t);
	bpf_probe_read_kernel_str(id->comm, sizeof(id->comm), &t->comm);
}

#endif
