/* net module ABI (bpf/net.bpf.c, src/modules/net*.c, docs/NET.md): TCP
 * retransmits and resets, packet drops by kernel drop reason, per
 * container (socket cgroup, else the network namespace), NET_RX/NET_TX
 * softirq latency per CPU, net_drop and tcp_retransmit events.
 * Record types 64..79 (include/sandlens/common.h: 16 per module). */
#ifndef SANDLENS_NET_H
#define SANDLENS_NET_H

#include "sandlens/common.h"

enum sl_net_event_type {
	SL_EV_NET_DROP = 64,
	SL_EV_NET_RETRANS = 65,
};

/* Softirq latency histograms: log2 slots with a 1 us base
 * (src/common/log2hist.h): slot 0 <= 1 us ... slot 20 > 2^19 us (0.52 s). */
#define SL_NET_SLOTS 21
#define SL_NET_FINITE_SLOTS 20

/* Vectors measured (index of map net_softirq's value array). The kernel's
 * enum numbers: NET_TX_SOFTIRQ = 2, NET_RX_SOFTIRQ = 3
 * (include/linux/interrupt.h). */
enum sl_net_vec {
	SL_NET_VEC_TX = 0,
	SL_NET_VEC_RX = 1,
	SL_NET_NVEC = 2,
};
#define SL_NET_KVEC_TX 2
#define SL_NET_KVEC_RX 3

/* Attribution key of every counter: the v2 cgroup id of the socket
 * (sk->sk_cgrp_data.cgroup->kn->id; 0 = no socket, e.g. a drop before the
 * socket lookup) and the inode number of the network namespace (of the
 * socket, else of skb->dev; 0 = unknown). User space maps the pair to a
 * container: the socket's cgroup when it is a container's, else the
 * container whose tasks are in that netns (docs/NET.md "Attribution"). */
struct sl_net_key {
	__u64 cgroup_id;
	__u32 netns;
	__u32 reason; /* map net_drops: enum skb_drop_reason value; 0 in net_tcp */
};

/* Value of map net_tcp (PERCPU_HASH by struct sl_net_key, reason 0). */
struct sl_net_tcp {
	__u64 retrans_segs;   /* tcp:tcp_retransmit_skb, err != -EBUSY: tcp_skb_pcount(skb)
	                       * segments (what TCP_MIB_RETRANSSEGS adds, net/ipv4/tcp_output.c) */
	__u64 retrans_skbs;   /* the same, one per call */
	__u64 retrans_synack; /* tcp:tcp_retransmit_synack (also one RetransSegs each) */
	__u64 rst_sent;       /* tcp:tcp_send_reset */
	__u64 rst_recv;       /* tcp:tcp_receive_reset */
};

/* Value of map net_softirq (PERCPU_ARRAY, index enum sl_net_vec): raise
 * (irq:softirq_raise) to entry (irq:softirq_entry) on the CPU, per CPU. */
struct sl_net_softirq {
	__u64 slots[SL_NET_SLOTS];
	__u64 sum_ns;
	__u64 max_ns;
};

#define SL_NET_STACK_MAX 24 /* kernel frames in an event */
#define SL_NET_MAX_REASONS 512 /* drop reason values user space tracks */

/* Ring buffer record (map net_events): a drop or a retransmit. */
struct sl_net_event {
	struct sl_hdr hdr;      /* type SL_EV_NET_DROP | SL_EV_NET_RETRANS */
	struct sl_task_id task; /* current task (often a softirq's: the interrupted one) */
	__u64 cgroup_id;        /* socket's v2 cgroup, 0 none */
	__u64 location;         /* net_drop: kfree_skb caller address (admin only) */
	__u64 truncated_count;  /* events of this kind suppressed since the last one */
	__u32 netns;
	__u32 reason;           /* net_drop: enum skb_drop_reason */
	__u32 ifindex;          /* skb->dev, 0 none */
	__s32 err;              /* tcp_retransmit: its err (0 sent) */
	__u32 segs;             /* tcp_retransmit: segments (tcp_skb_pcount) */
	__u32 kind;             /* tcp_retransmit: 0 data, 1 synack */
	__u16 family;           /* AF_INET 2, AF_INET6 10, 0 unknown */
	__u16 sport, dport;     /* host byte order */
	__u8 protocol;          /* IPPROTO_*, 0 unknown */
	__u8 state;             /* TCP state of the socket (include/net/tcp_states.h), 0 none */
	__u8 saddr[16], daddr[16]; /* IPv4 in the first 4 bytes */
	__u32 nstack;           /* frames in stack */
	__u32 pad;
	__u64 stack[SL_NET_STACK_MAX];
};

/* Per-CPU counters, map net_stats (PERCPU_ARRAY). */
enum sl_net_stat {
	SL_NST_DROPS = 0,         /* kfree_skb calls seen (every reason) */
	SL_NST_DROP_EVENTS,       /* of those, of an evented reason */
	SL_NST_RETRANS,           /* retransmit calls seen (data + synack) */
	SL_NST_RATE_LIMITED,      /* events suppressed by the token bucket */
	SL_NST_RB_FAIL,           /* net_drop ring buffer reservation failed */
	SL_NST_RB_FAIL_RETRANS,   /* tcp_retransmit ring buffer reservation failed */
	SL_NST_MAP_FULL,          /* counter entries not created: map full */
	SL_NST_SOFTIRQ_NO_RAISE,  /* softirq_entry without a raise seen */
	SL_NST_MAX,
};

/* Token buckets (map net_buckets, ARRAY): one per event kind. */
enum sl_net_bucket {
	SL_NET_B_DROP = 0,
	SL_NET_B_RETRANS = 1,
	SL_NET_NB = 2,
};

#endif
