// SPDX-License-Identifier: GPL-2.0
/* The floor of bench/net-overhead.sh: on every tracepoint the net module
 * hooks, the least a program can do — add 1 to a per-CPU array slot. The
 * net module's per-run cost is compared against these. Built and loaded by
 * the benchmark only (bench/net_floor_load.c). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} floor_cnt SEC(".maps");

static __always_inline void bump(__u32 i)
{
	__u64 *v = bpf_map_lookup_elem(&floor_cnt, &i);
	if (v)
		*v += 1;
}

SEC("tp_btf/tcp_retransmit_skb") int BPF_PROG(floor_tcp_retransmit) { bump(0); return 0; }
SEC("tp_btf/tcp_retransmit_synack") int BPF_PROG(floor_tcp_retransmit_synack) { bump(1); return 0; }
SEC("tp_btf/tcp_send_reset") int BPF_PROG(floor_tcp_send_reset) { bump(2); return 0; }
SEC("tp_btf/tcp_receive_reset") int BPF_PROG(floor_tcp_receive_reset) { bump(3); return 0; }
SEC("tp_btf/kfree_skb") int BPF_PROG(floor_kfree_skb) { bump(4); return 0; }
SEC("tp_btf/softirq_raise") int BPF_PROG(floor_softirq_raise) { bump(5); return 0; }
SEC("tp_btf/softirq_entry") int BPF_PROG(floor_softirq_entry) { bump(6); return 0; }
