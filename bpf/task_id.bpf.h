/* Shared BPF helpers: task identity (pid, comm, cgroup ids) for events.
 * Include after vmlinux.h and bpf helpers. */
#ifndef SANDLENS_BPF_TASK_ID_H
#define SANDLENS_BPF_TASK_ID_H

#include "sandlens/common.h"

/* Index into css_set->subsys[] of the v1 controller whose hierarchy gives
 * cgroup_v1_id (enum cgroup_subsys_id value, read from BTF by user space);
 * -1 = no v1 hierarchy for it (pure v2 host). Set before load. */
const volatile int sl_v1_subsys_id = -1;

/* v2 (default hierarchy) cgroup id of task t: t->cgroups->dfl_cgrp->kn->id,
 * the same value bpf_get_current_cgroup_id() returns for current. */
static __always_inline __u64 sl_task_cgroup_id(struct task_struct *t)
{
	return BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
}

/* Id of t's cgroup in the v1 hierarchy of controller sl_v1_subsys_id. */
static __always_inline __u64 sl_task_cgroup_v1_id(struct task_struct *t)
{
	int idx = sl_v1_subsys_id;
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cset;

	if (idx < 0 || idx >= 32)
		return 0;
	cset = BPF_CORE_READ(t, cgroups);
	if (!cset)
		return 0;
	if (bpf_core_read(&css, sizeof(css), &cset->subsys[idx]) || !css)
		return 0;
	return BPF_CORE_READ(css, cgroup, kn, id);
}

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
