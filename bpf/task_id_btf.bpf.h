/* Task identity (struct sl_task_id) from a trusted task pointer by direct
 * BTF loads: no helper calls. The verifier turns each load through a
 * PTR_TO_BTF_ID into an inline load with an exception-table entry (a fault
 * reads 0), where BPF_CORE_READ costs a bpf_probe_read_kernel() call per
 * pointer hop (kernel/bpf/verifier.c: PROBE_MEM; Documentation/bpf/
 * verifier.rst). For the hot paths of the proc module (exec, exit,
 * signal). t must be trusted: a tp_btf argument or
 * bpf_get_current_task_btf(). Include after task_id.bpf.h. */
#ifndef SANDLENS_BPF_TASK_ID_BTF_H
#define SANDLENS_BPF_TASK_ID_BTF_H

#include "task_id.bpf.h"

/* w (8 bytes of a C string, little-endian) with every byte from the first
 * NUL on set to 0; *ended = 1 when w holds a NUL. The lowest set bit of
 * (w - 0x01..01) & ~w & 0x80..80 marks the first zero byte exactly (bits
 * above it can be set by the borrow; they are masked away with it). */
static __always_inline __u64 sl_str8_cut(__u64 w, int *ended)
{
	__u64 z = (w - 0x0101010101010101ULL) & ~w & 0x8080808080808080ULL;

	if (!z)
		return w;
	*ended = 1;
	z &= -z;                 /* 0x80 << 8*i, i = the first zero byte */
	return w & ((z >> 7) - 1); /* the bytes below i */
}

/* dst = t->comm as two 8-byte loads, zero-padded after the NUL (the
 * padding matters: comm bytes are part of hash keys). What
 * bpf_probe_read_kernel_str() into a zeroed buffer gives, with no call. */
static __always_inline void sl_task_comm_btf(char *dst, struct task_struct *t)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && SL_COMM_LEN == 16
	__u64 *d = (__u64 *)dst;
	int ended = 0;

	d[0] = sl_str8_cut(*(__u64 *)&t->comm[0], &ended);
	d[1] = ended ? 0 : sl_str8_cut(*(__u64 *)&t->comm[8], &ended);
	/* comm is always NUL-terminated within 16 bytes (__set_task_comm) */
	((char *)dst)[SL_COMM_LEN - 1] = 0;
#else
	__builtin_memset(dst, 0, SL_COMM_LEN);
	bpf_probe_read_kernel_str(dst, SL_COMM_LEN, t->comm);
#endif
}

/* id from a trusted task pointer: the same fields as sl_fill_task_id(). */
static __always_inline void sl_fill_task_id_btf(struct sl_task_id *id, struct task_struct *t)
{
	id->pid = t->tgid;
	id->tid = t->pid;
	id->ppid = t->real_parent->tgid;
	id->pad0 = 0;
	sl_task_cgroup_key(t, &id->cgroup_id, &id->cgroup_v1_id);
	sl_task_comm_btf(id->comm, t);
}

#endif
