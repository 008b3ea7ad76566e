// SPDX-License-Identifier: GPL-2.0
/* net module, kernel half: TCP retransmits and resets, packet drops by drop
 * reason, per (socket cgroup, network namespace); NET_RX/NET_TX softirq
 * raise-to-entry latency per CPU; rate-limited net_drop / tcp_retransmit
 * records with a kernel stack. Definitions: docs/NET.md; ABI:
 * include/sandlens/net.h.
 *
 * Hooks (tp_btf; each loaded only when its tracepoint is in the kernel's
 * BTF, src/modules/net.c):
 *   tcp:tcp_retransmit_skb, tcp:tcp_retransmit_synack   retransmits
 *   tcp:tcp_send_reset, tcp:tcp_receive_reset           resets
 *   skb:kfree_skb                                       drops by reason
 *   irq:softirq_raise, irq:softirq_entry                softirq latency
 *
 * kfree_skb fires for every freed-not-consumed packet on the host: its
 * program reads the reason, the socket (or device) and bumps one per-CPU
 * hash counter; only a reason not in skip_mask (net.drop_event_skip) goes
 * on to the token bucket and the ring buffer.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "task_id.bpf.h"
#include "log2hist.bpf.h"
#include "sandlens/net.h"
#include "sandlens/token_bucket.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load (src/modules/net.c). */
const volatile __u64 event_rate = 20;   /* net.event_rate per kind; 0 = no limit */
const volatile __u64 event_burst = 50;  /* net.event_burst */
const volatile __u32 drop_events = 1;   /* net.drop_events */
const volatile __u32 retrans_events = 1; /* net.retransmit_events */
const volatile __u32 want_stack = 1;    /* net.stacks */
/* drop reasons counted but not evented (net.drop_event_skip), bit per value */
const volatile __u64 skip_mask[SL_NET_MAX_REASONS / 64] = {};
/* Degradation step 2 (set_rate_shift op). */
volatile __u32 rate_shift = 0;

#define EBUSY_ 16
#define TCP_TIME_WAIT_ 6
#define TCP_NEW_SYN_RECV_ 12
#define ETH_P_IP_BE 0x0008   /* htons(0x0800) on little endian */
#define ETH_P_IPV6_BE 0xDD86 /* htons(0x86DD) */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024); /* net.max_keys */
	__type(key, struct sl_net_key);
	__type(value, struct sl_net_tcp);
} net_tcp SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096); /* net.max_keys * 4 */
	__type(key, struct sl_net_key);
	__type(value, __u64);
} net_drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SL_NET_NVEC);
	__type(key, __u32);
	__type(value, struct sl_net_softirq);
} net_softirq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SL_NET_NVEC);
	__type(key, __u32);
	__type(value, __u64);
} net_raise SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SL_NST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} net_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SL_NET_NB);
	__type(key, __u32);
	__type(value, struct sl_exec_bucket);
} net_buckets SEC(".maps");

/* Per-CPU fast path of the rate limit: after the shared bucket refused an
 * event, this CPU suppresses its kind for the rest of that jiffy without
 * reading the clock or touching the bucket's shared cache line (quiet_j:
 * the jiffy of the refusal), counting what it suppressed in pending; its
 * next delivered event carries them. At most HZ bucket attempts per CPU
 * and second remain. */
struct net_rl {
	__u64 quiet_j[SL_NET_NB];
	__u64 pending[SL_NET_NB];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct net_rl);
} net_rl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024); /* net.ringbuf_size */
} net_events SEC(".maps");

static __always_inline __u64 shifted(__u64 v)
{
	return sl_bucket_scale(v, rate_shift);
}

/* Attribution key of a socket and/or packet: the socket's netns and, for
 * a full socket (not a request or time-wait mini socket, whose struct
 * sock tail does not exist), its v2 cgroup; without a socket the netns of
 * skb->dev. */
static __always_inline void key_of(const struct sock *sk, const struct sk_buff *skb, struct sl_net_key *k)
{
	k->cgroup_id = 0;
	k->netns = 0;
	if (sk) {
		unsigned char st = sk->__sk_common.skc_state;
		k->netns = sk->__sk_common.skc_net.net->ns.inum;
		if (st != TCP_TIME_WAIT_ && st != TCP_NEW_SYN_RECV_) {
			struct cgroup *cg = sk->sk_cgrp_data.cgroup;
			if (cg)
				k->cgroup_id = cg->kn->id;
		}
	}
	if (!k->netns && skb) {
		struct net_device *dev = skb->dev;
		if (dev)
			k->netns = dev->nd_net.net->ns.inum;
	}
}

static __always_inline struct sl_net_tcp *tcp_val(const struct sl_net_key *k)
{
	struct sl_net_tcp *v = bpf_map_lookup_elem(&net_tcp, k);
	if (v)
		return v;
	struct sl_net_tcp z = {};
	if (bpf_map_update_elem(&net_tcp, k, &z, BPF_NOEXIST) && !(v = bpf_map_lookup_elem(&net_tcp, k))) {
		sl_stat_inc(&net_stats, SL_NST_MAP_FULL);
		return NULL;
	}
	return v ? v : bpf_map_lookup_elem(&net_tcp, k);
}

/* Token bucket of an event kind; 1 = deliver (*carried = suppressed ones:
 * the bucket's and this CPU's). */
static __always_inline int take(__u32 b, __u64 *now, __u64 *carried, struct sl_exec_bucket **bp)
{
	struct sl_exec_bucket *bk;
	struct net_rl *rl;
	__u32 zero = 0;
	__u64 j;

	*carried = 0;
	*bp = NULL;
	if (!event_rate) {
		*now = bpf_ktime_get_ns();
		return 1;
	}
	if (b >= SL_NET_NB || !(rl = bpf_map_lookup_elem(&net_rl, &zero)))
		return 0;
	j = bpf_jiffies64();
	if (j == rl->quiet_j[b]) {
		rl->pending[b]++;
		sl_stat_inc(&net_stats, SL_NST_RATE_LIMITED);
		return 0;
	}
	bk = bpf_map_lookup_elem(&net_buckets, &b);
	if (!bk)
		return 0;
	*bp = bk;
	*now = bpf_ktime_get_ns();
	if (!sl_bucket_take(bk, *now, shifted(event_rate), shifted(event_burst), carried)) {
		rl->quiet_j[b] = j;
		sl_stat_inc(&net_stats, SL_NST_RATE_LIMITED);
		return 0;
	}
	*carried += rl->pending[b];
	rl->pending[b] = 0;
	return 1;
}

static __always_inline void tuple_from_sk(struct sl_net_event *e, const struct sock *sk)
{
	e->family = sk->__sk_common.skc_family;
	e->state = sk->__sk_common.skc_state;
	e->sport = sk->__sk_common.skc_num;
	e->dport = __builtin_bswap16(sk->__sk_common.skc_dport);
	e->protocol = sk->sk_protocol;
	if (e->family == 2) {
		__builtin_memcpy(e->saddr, &sk->__sk_common.skc_rcv_saddr, 4);
		__builtin_memcpy(e->daddr, &sk->__sk_common.skc_daddr, 4);
	} else if (e->family == 10) {
		bpf_probe_read_kernel(e->saddr, 16, &sk->__sk_common.skc_v6_rcv_saddr);
		bpf_probe_read_kernel(e->daddr, 16, &sk->__sk_common.skc_v6_daddr);
	}
}

/* The packet's own addresses and ports from its IP header (IPv4/IPv6, no
 * extension headers); 0 when the network header is not an IP one. */
static __always_inline int tuple_from_skb(struct sl_net_event *e, const struct sk_buff *skb)
{
	unsigned char *head = skb->head;
	__u16 nh = skb->network_header, proto = skb->protocol;
	__u16 ports[2] = {};
	__u32 l4;

	if (proto == ETH_P_IP_BE) {
		struct iphdr ip;
		if (bpf_probe_read_kernel(&ip, sizeof(ip), head + nh))
			return 0;
		e->family = 2;
		e->protocol = ip.protocol;
		__builtin_memcpy(e->saddr, &ip.saddr, 4);
		__builtin_memcpy(e->daddr, &ip.daddr, 4);
		l4 = nh + (ip.ihl & 0xf) * 4;
	} else if (proto == ETH_P_IPV6_BE) {
		struct ipv6hdr ip6;
		if (bpf_probe_read_kernel(&ip6, sizeof(ip6), head + nh))
			return 0;
		e->family = 10;
		e->protocol = ip6.nexthdr;
		__builtin_memcpy(e->saddr, &ip6.saddr, 16);
		__builtin_memcpy(e->daddr, &ip6.daddr, 16);
		l4 = nh + sizeof(ip6);
	} else {
		return 0;
	}
	if (e->protocol == 6 || e->protocol == 17) {
		bpf_probe_read_kernel(ports, sizeof(ports), head + l4);
		e->sport = __builtin_bswap16(ports[0]);
		e->dport = __builtin_bswap16(ports[1]);
	}
	return 1;
}

static __always_inline struct sl_net_event *reserve(__u32 b, __u64 *now, __u64 *carried,
						    struct sl_exec_bucket **bk)
{
	struct sl_net_event *e;

	if (!take(b, now, carried, bk))
		return NULL;
	e = bpf_ringbuf_reserve(&net_events, sizeof(*e), 0);
	if (!e) {
		sl_stat_inc(&net_stats, b == SL_NET_B_DROP ? SL_NST_RB_FAIL : SL_NST_RB_FAIL_RETRANS);
		if (*bk)
			sl_bucket_undeliver_rb(*bk, *carried, sl_bucket_take_sub(&(*bk)->pending_rb));
		return NULL;
	}
	if (*bk)
		sl_bucket_take_sub(&(*bk)->pending_rb);
	__builtin_memset(e, 0, sizeof(*e));
	return e;
}

static __always_inline void finish(void *ctx, struct sl_net_event *e, __u32 type, __u64 now,
				   const struct sl_net_key *k, __u64 carried, const struct sk_buff *skb)
{
	long n;

	e->hdr.type = type;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts_ns = now;
	sl_fill_task_id(&e->task, bpf_get_current_task_btf());
	e->cgroup_id = k->cgroup_id;
	e->netns = k->netns;
	e->truncated_count = carried;
	if (skb) {
		struct net_device *dev = skb->dev;
		if (dev)
			e->ifindex = dev->ifindex;
	}
	if (want_stack) {
		n = bpf_get_stack(ctx, e->stack, sizeof(e->stack), 0);
		e->nstack = n > 0 ? (__u32)((__u64)n >> 3) : 0;
	}
	bpf_ringbuf_submit(e, 0);
}

static __always_inline void retrans_event(void *ctx, const struct sock *sk, const struct sl_net_key *k,
					  __u32 kind, __u32 segs, int err)
{
	struct sl_exec_bucket *bk;
	struct sl_net_event *e;
	__u64 carried, now;

	if (!retrans_events)
		return;
	if (!(e = reserve(SL_NET_B_RETRANS, &now, &carried, &bk)))
		return;
	tuple_from_sk(e, sk);
	e->kind = kind;
	e->segs = segs;
	e->err = err;
	finish(ctx, e, SL_EV_NET_RETRANS, now, k, carried, NULL);
}

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(net_tcp_retransmit, const struct sock *sk, const struct sk_buff *skb, int err)
{
	struct sl_net_key k;
	struct sl_net_tcp *v;
	__u16 segs = 0;

	if (err == -EBUSY_) /* still in the host queue: not sent, not counted (RetransSegs neither) */
		return 0;
	sl_stat_inc(&net_stats, SL_NST_RETRANS);
	key_of(sk, NULL, &k);
	k.reason = 0;
	/* tcp_skb_pcount(): TCP_SKB_CB(skb)->tcp_gso_segs, offset 8 of skb->cb */
	bpf_probe_read_kernel(&segs, sizeof(segs), (const char *)skb->cb + 8);
	if (!segs)
		segs = 1;
	if ((v = tcp_val(&k))) {
		v->retrans_segs += segs;
		v->retrans_skbs++;
	}
	retrans_event(ctx, sk, &k, 0, segs, err);
	return 0;
}

SEC("tp_btf/tcp_retransmit_synack")
int BPF_PROG(net_tcp_retransmit_synack, const struct sock *sk, const struct request_sock *req)
{
	struct sl_net_key k;
	struct sl_net_tcp *v;

	sl_stat_inc(&net_stats, SL_NST_RETRANS);
	key_of(sk, NULL, &k);
	k.reason = 0;
	if ((v = tcp_val(&k)))
		v->retrans_synack++;
	retrans_event(ctx, sk, &k, 1, 1, 0);
	return 0;
}

SEC("tp_btf/tcp_send_reset")
int BPF_PROG(net_tcp_send_reset, const struct sock *sk, const struct sk_buff *skb)
{
	struct sl_net_key k;
	struct sl_net_tcp *v;

	key_of(sk, skb, &k);
	k.reason = 0;
	if ((v = tcp_val(&k)))
		v->rst_sent++;
	return 0;
}

SEC("tp_btf/tcp_receive_reset")
int BPF_PROG(net_tcp_receive_reset, struct sock *sk)
{
	struct sl_net_key k;
	struct sl_net_tcp *v;

	key_of(sk, NULL, &k);
	k.reason = 0;
	if ((v = tcp_val(&k)))
		v->rst_recv++;
	return 0;
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(net_kfree_skb, struct sk_buff *skb, void *location, enum skb_drop_reason reason, struct sock *rx_sk)
{
	struct sl_net_key k;
	struct sock *sk = rx_sk ? rx_sk : skb->sk;
	struct sl_exec_bucket *bk;
	struct sl_net_event *e;
	__u64 *c, carried, now;
	__u32 r = (__u32)reason;

	sl_stat_inc(&net_stats, SL_NST_DROPS);
	key_of(sk, skb, &k);
	k.reason = r < SL_NET_MAX_REASONS ? r : SL_NET_MAX_REASONS - 1;
	c = bpf_map_lookup_elem(&net_drops, &k);
	if (c) {
		*c += 1;
	} else {
		__u64 one = 1;
		if (bpf_map_update_elem(&net_drops, &k, &one, BPF_NOEXIST)) {
			/* another CPU made it meanwhile, or the map is full */
			if ((c = bpf_map_lookup_elem(&net_drops, &k)))
				*c += 1;
			else
				sl_stat_inc(&net_stats, SL_NST_MAP_FULL);
		}
	}
	if (!drop_events || (skip_mask[(k.reason >> 6) & 7] & (1ULL << (k.reason & 63))))
		return 0;
	sl_stat_inc(&net_stats, SL_NST_DROP_EVENTS);
	if (!(e = reserve(SL_NET_B_DROP, &now, &carried, &bk)))
		return 0;
	e->reason = r;
	e->location = (__u64)location;
	if (!tuple_from_skb(e, skb) && sk)
		tuple_from_sk(e, sk);
	if (sk)
		e->state = sk->__sk_common.skc_state;
	finish(ctx, e, SL_EV_NET_DROP, now, &k, carried, skb);
	return 0;
}

SEC("tp_btf/softirq_raise")
int BPF_PROG(net_softirq_raise, unsigned int vec)
{
	__u32 i;
	__u64 *ts;

	if (vec != SL_NET_KVEC_TX && vec != SL_NET_KVEC_RX)
		return 0;
	i = vec == SL_NET_KVEC_RX ? SL_NET_VEC_RX : SL_NET_VEC_TX;
	ts = bpf_map_lookup_elem(&net_raise, &i);
	if (ts && !*ts) /* already pending: the first raise is when the wait began */
		*ts = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(net_softirq_entry, unsigned int vec)
{
	struct sl_net_softirq *h;
	__u64 *ts, d;
	__u32 i, slot;

	if (vec != SL_NET_KVEC_TX && vec != SL_NET_KVEC_RX)
		return 0;
	i = vec == SL_NET_KVEC_RX ? SL_NET_VEC_RX : SL_NET_VEC_TX;
	ts = bpf_map_lookup_elem(&net_raise, &i);
	if (!ts)
		return 0;
	if (!*ts) {
		sl_stat_inc(&net_stats, SL_NST_SOFTIRQ_NO_RAISE);
		return 0;
	}
	d = bpf_ktime_get_ns() - *ts;
	*ts = 0;
	h = bpf_map_lookup_elem(&net_softirq, &i);
	if (!h)
		return 0;
	slot = sl_l2h_slot_bpf(d, SL_NET_SLOTS);
	asm volatile("" : "+r"(slot)); /* keep the bound check below for the verifier */
	if (slot >= SL_NET_SLOTS)
		slot = SL_NET_SLOTS - 1;
	h->slots[slot]++;
	h->sum_ns += d;
	if (d > h->max_ns)
		h->max_ns = d;
	return 0;
}
