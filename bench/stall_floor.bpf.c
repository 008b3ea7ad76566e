// SPDX-License-Identifier: GPL-2.0
/* Floor programs for bench/stall-overhead.sh: the stall module's hooks
 * with bodies that do nothing but one per-CPU array add (the least a
 * counting program does), so Δrun_time/Δrun_cnt of these is the cost of
 * being called at all on each hook. Built and loaded by the bench. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} floor_cnt SEC(".maps");

static __always_inline int bump(void)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&floor_cnt, &k);
	if (v)
		*v += 1;
	return 0;
}

SEC("tp_btf/softirq_raise") int BPF_PROG(floor_softirq_raise, unsigned int v) { return bump(); }
SEC("tp_btf/softirq_entry") int BPF_PROG(floor_softirq_entry, unsigned int v) { return bump(); }
SEC("tp_btf/softirq_exit") int BPF_PROG(floor_softirq_exit, unsigned int v) { return bump(); }
SEC("tp_btf/irq_handler_entry") int BPF_PROG(floor_irq_entry, int irq, struct irqaction *a) { return bump(); }
SEC("tp_btf/irq_handler_exit") int BPF_PROG(floor_irq_exit, int irq, struct irqaction *a, int r) { return bump(); }
SEC("perf_event") int floor_tick(struct bpf_perf_event_data *ctx) { return bump(); }
