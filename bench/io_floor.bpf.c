// SPDX-License-Identifier: GPL-2.0
/* Floor program of bench/io-overhead.sh: on the io module's tracepoints,
 * only a timestamp into a map and a per-CPU count -- the least a
 * per-request latency tool must do (insert/issue: store the request's
 * timestamp; complete: look it up and delete it). Built and loaded by the
 * bench (bench/io_floor.c); not part of the agent. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u64);
} floor_ts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} floor_cnt SEC(".maps");

static __always_inline void count(void)
{
	__u32 z = 0;
	__u64 *c = bpf_map_lookup_elem(&floor_cnt, &z);
	if (c)
		(*c)++;
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(floor_rq_insert, struct request *rq)
{
	__u64 k = (__u64)rq, ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&floor_ts, &k, &ts, BPF_ANY);
	count();
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(floor_rq_issue, struct request *rq)
{
	__u64 k = (__u64)rq, ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&floor_ts, &k, &ts, BPF_ANY);
	count();
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(floor_rq_complete, struct request *rq)
{
	__u64 k = (__u64)rq, *ts = bpf_map_lookup_elem(&floor_ts, &k);
	if (ts) {
		bpf_map_delete_elem(&floor_ts, &k);
		count();
	}
	return 0;
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(floor_pagecache_add)
{
	count();
	return 0;
}
