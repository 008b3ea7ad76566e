/* net module, user half: declarations (config, kinds, hooks, ring buffer,
 * view), load/attach of bpf/net.bpf.c with per-tracepoint probing, drop
 * reason names from the kernel's BTF, net_drop / tcp_retransmit decoding
 * (kernel stacks symbolized from kallsyms), and every tick the folding of
 * the kernel's per-(socket cgroup, netns) counters into per-container
 * series through the netns map (net_ns.c), published as a snapshot
 * (net_snap.c). Definitions of every figure: docs/NET.md. */
#include "modules/net.h"
#include "modules/net_decode.h"
#include "modules/net_internal.h"
#include "profile/profile_internal.h"
#include "profile/symbolize_proc.h"
#include "sandlens/token_bucket.h"
#include "net.skel.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Keys attributed to the host are re-resolved this often (ticks): the
 * netns map may learn their netns later. */
#define RERESOLVE_TICKS 5
/* Series with no live netns and no change for this many ticks go. */
#define SERIES_IDLE_TICKS 300

/* ---------- declarations ---------- */

#define F(f) SL_CFG_FIELD(struct net_cfg, f)
static const struct sl_cfg_key net_keys[] = {
	{"event_rate", SL_CFG_UINT, F(event_rate), "20", 0, 100000,
	 "net_drop and tcp_retransmit events per second, each kind (token bucket; 0 = no limit)"},
	{"event_burst", SL_CFG_UINT, F(event_burst), "50", 1, 100000, "token bucket size of each event kind"},
	{"drop_events", SL_CFG_BOOL, F(drop_events), "true", 0, 0,
	 "net_drop events (drops are counted either way)"},
	{"retransmit_events", SL_CFG_BOOL, F(retransmit_events), "true", 0, 0,
	 "tcp_retransmit events (retransmits are counted either way)"},
	{"stacks", SL_CFG_BOOL, F(stacks), "true", 0, 0, "kernel stacks in events (admin-only field)"},
	{"drop_event_skip", SL_CFG_STRLIST, F(drop_event_skip), "NOT_SPECIFIED\nSKB_CONSUMED\nSOCKET_CLOSE\nUNIX_DISCONNECT", 0,
	 0, "drop reasons (enum skb_drop_reason names, prefix SKB_DROP_REASON_ optional) counted but not evented"},
	{"max_keys", SL_CFG_UINT, F(max_keys), "1024", 16, 65536,
	 "kernel counter entries (socket cgroup x netns); drop entries are 4x this"},
	{"max_containers", SL_CFG_UINT, F(max_containers), "512", 1, 65536, "exported container series"},
	{"ringbuf_size", SL_CFG_BYTES, F(ringbuf_bytes), "256KiB", 4096, 64ULL << 20,
	 "net_events ring buffer size (a power of two)"},
	{"netns_files", SL_CFG_BOOL, F(netns_files), "true", 0, 0,
	 "read each container netns' /proc/<pid>/net/{netstat,snmp,dev} every tick"},
	{"max_devices", SL_CFG_UINT, F(max_devices), "16", 1, 16, "devices reported per network namespace"},
};
#undef F

#define TUPLE_FIELDS                                                                                           \
	{"family", SL_FT_STR, 0, "ipv4 | ipv6 | \"\" (not an IP packet)"},                                        \
	{"protocol", SL_FT_STR, 0, "tcp | udp | icmp | ... (IP protocol)"},                                       \
	{"saddr", SL_FT_STR, 0, "source address"}, {"sport", SL_FT_UINT, 0, "source port"},                      \
	{"daddr", SL_FT_STR, 0, "destination address"}, {"dport", SL_FT_UINT, 0, "destination port"},            \
	{"state", SL_FT_STR, 0, "TCP state of the socket (ESTABLISHED, ...), \"\" without one"},                  \
	{"netns", SL_FT_UINT, 0, "inode of the network namespace of the socket, else of skb->dev; 0 unknown"},  \
	{"socket_cgroup_id", SL_FT_UINT, 0, "v2 cgroup of the socket (sk_cgrp_data), 0 without a socket"},       \
	{"truncated_count", SL_FT_UINT, 0, "events of this kind suppressed by the rate limit since the last one"}, \
	{"stack", SL_FT_ARRAY, SL_FF_ADMIN, "kernel stack, innermost first (kallsyms symbol+offset)"}

static const struct sl_field drop_fields[] = {
	{"reason", SL_FT_STR, 0, "kernel drop reason (enum skb_drop_reason name, from BTF)"},
	{"reason_code", SL_FT_UINT, 0, "its value"},
	{"ifindex", SL_FT_UINT, 0, "skb->dev's ifindex (in netns_inode), 0 none"},
	{"location", SL_FT_STR, SL_FF_ADMIN, "kfree_skb caller address"},
	TUPLE_FIELDS,
};
static const struct sl_field retrans_fields[] = {
	{"kind", SL_FT_STR, 0, "data (tcp_retransmit_skb) | synack (tcp_retransmit_synack)"},
	{"segs", SL_FT_UINT, 0, "segments retransmitted (tcp_skb_pcount)"},
	{"err", SL_FT_INT, 0, "the retransmit's return value (0 sent, -errno)"},
	TUPLE_FIELDS,
};

static const struct sl_event_kind net_kinds[] = {
	{.name = "net_drop",
	 .severity = SL_SEV_NOTICE,
	 .fields = drop_fields,
	 .nfields = sizeof(drop_fields) / sizeof(drop_fields[0]),
	 .details = "{reason} {protocol} {saddr}:{sport} > {daddr}:{dport}{?state} {state}{/}"
		    "{?truncated_count} +{truncated_count} suppressed{/}",
	 .doc = "the kernel dropped a packet (skb:kfree_skb) for a reason not in net.drop_event_skip"},
	{.name = "tcp_retransmit",
	 .severity = SL_SEV_NOTICE,
	 .fields = retrans_fields,
	 .nfields = sizeof(retrans_fields) / sizeof(retrans_fields[0]),
	 .details = "{kind} segs={segs} {saddr}:{sport} > {daddr}:{dport} {state}"
		    "{?truncated_count} +{truncated_count} suppressed{/}",
	 .doc = "a TCP segment or SYN-ACK was retransmitted"},
};
#define K_DROP 0
#define K_RETRANS 1

struct net_hook {
	const char *tp, *cat;
};
static const struct net_hook net_hook_tab[] = {
	{"tcp_retransmit_skb", "tcp"}, {"tcp_retransmit_synack", "tcp"}, {"tcp_send_reset", "tcp"},
	{"tcp_receive_reset", "tcp"},  {"kfree_skb", "skb"},             {"softirq_raise", "irq"},
	{"softirq_entry", "irq"},
};
#define NHOOKS (sizeof(net_hook_tab) / sizeof(net_hook_tab[0]))
static const struct sl_hook_decl net_hooks[NHOOKS] = {
	{"tp_btf/tcp_retransmit_skb", "TCP retransmits per container, tcp_retransmit events"},
	{"tp_btf/tcp_retransmit_synack", "SYN-ACK retransmits per container"},
	{"tp_btf/tcp_send_reset", "resets sent per container"},
	{"tp_btf/tcp_receive_reset", "resets received per container"},
	{"tp_btf/kfree_skb", "drops by reason per container, net_drop events"},
	{"tp_btf/softirq_raise", "NET_RX/NET_TX softirq latency per CPU"},
	{"tp_btf/softirq_entry", "NET_RX/NET_TX softirq latency per CPU"},
};

static int on_record(void *ctx, void *data, size_t size);
static const struct sl_ringbuf_decl net_ringbufs[] = {{"net_events", on_record}};

static const struct sl_api_view net_views[] = {
	{.path = "", .admin_only = 0, .params = NULL, .nparams = 0, .get = net_view_get,
	 .doc = "per-container retransmits, resets, drops by reason, netns TCP counters and devices; softirq "
		"latency per CPU (docs/NET.md)"},
};

static int net_cfg_check(const void *cfg, char *err, size_t errlen)
{
	const struct net_cfg *c = cfg;
	struct sl_net_reasons *r;
	struct btf *btf;

	if (c->ringbuf_bytes & (c->ringbuf_bytes - 1)) {
		snprintf(err, errlen, "net.ringbuf_size: %llu is not a power of two",
			 (unsigned long long)c->ringbuf_bytes);
		return -1;
	}
	if (!c->drop_event_skip.n)
		return 0;
	/* the names must be this kernel's (a typo would event what it meant to skip) */
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return 0; /* no BTF: the module cannot run anyway, init says so */
	r = calloc(1, sizeof(*r));
	int rc = 0;
	if (r && sl_net_reasons_from_btf(btf, r) > 0)
		for (unsigned i = 0; i < c->drop_event_skip.n && i < SL_CFG_STRLIST_MAX; i++)
			if (sl_net_reason_value(r, c->drop_event_skip.v[i]) < 0) {
				snprintf(err, errlen,
					 "net.drop_event_skip[%u]: '%s' is not a drop reason of this kernel (enum "
					 "skb_drop_reason)",
					 i, c->drop_event_skip.v[i]);
				rc = -1;
				break;
			}
	free(r);
	btf__free(btf);
	return rc;
}

/* ---------- decoding ---------- */

/* kernel frames "0x..." -> "sym+0xoff [mod]" when kallsyms has addresses */
static void symbolize(struct net_priv *np, json_t *o)
{
	json_t *st = json_object_get(o, "stack"), *v;
	size_t i;

	if (!np->ksyms_tried) {
		np->ksyms_tried = 1;
		np->ksyms = sl_ksyms_shared_get("/proc/kallsyms", NULL);
	}
	if (!np->ksyms || !json_is_array(st))
		return;
	json_t *out = json_array();
	int lead = 1; /* the BPF program and the tracepoint trampoline come first: left out */
	json_array_foreach(st, i, v) {
		uint64_t a = strtoull(json_string_value(v) ? json_string_value(v) : "0", NULL, 16);
		struct sl_ksym kb;
		const struct sl_ksym *s = sl_ksyms_lookup(np->ksyms, a, &kb);
		char b[160];
		if (!s) {
			lead = 0;
			json_array_append(out, v);
			continue;
		}
		if (lead && (!strncmp(s->name, "bpf_prog_", 9) || !strncmp(s->name, "bpf_trace_run", 13) ||
			     !strncmp(s->name, "__bpf_trace_", 12)))
			continue;
		lead = 0;
		if (s->module)
			snprintf(b, sizeof(b), "%s+0x%llx [%s]", s->name, (unsigned long long)(a - s->addr), s->module);
		else
			snprintf(b, sizeof(b), "%s+0x%llx", s->name, (unsigned long long)(a - s->addr));
		json_array_append_new(out, json_string(b));
	}
	json_object_set_new(o, "stack", out);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct sl_module *m = ctx;
	struct net_priv *np = m->priv;
	const struct sl_net_event *e = data;
	struct sl_subject subj;
	struct sl_attr at;
	struct net_nsent *ns;
	json_t *o;
	int drop;

	if (size < sizeof(struct sl_hdr)) {
		sl_module_decode_error(m);
		return 0;
	}
	drop = e->hdr.type == SL_EV_NET_DROP;
	o = drop ? sl_net_drop_fields(e, size, &np->reasons) : sl_net_retrans_fields(e, size);
	if (!o) {
		sl_module_decode_error(m);
		return 0;
	}
	symbolize(np, o);
	atomic_fetch_add(&np->truncated_total[drop ? 0 : 1], e->truncated_count);
	/* subject: the socket's cgroup when it is a container's; else the
	 * netns, through a task of it when the netns map knows one */
	memset(&subj, 0, sizeof(subj));
	memset(&at, 0, sizeof(at));
	if (e->cgroup_id)
		sl_module_resolve_cgroup(m, e->cgroup_id, 0, &at, NULL);
	if (at.is_container == SL_YES) {
		subj.kind = SL_SUBJ_CGROUP;
		subj.cgroup_id = e->cgroup_id;
		subj.cgroup_hier = SL_CG_V2;
	} else {
		subj.kind = SL_SUBJ_NETNS;
		subj.netns_inode = e->netns;
		ns = e->netns ? net_ns_lookup(np, e->netns) : NULL;
		if (ns && ns->is_ct)
			subj.task = &ns->task;
	}
	sl_module_emit(m, drop ? K_DROP : K_RETRANS, e->hdr.ts_ns, &subj, o, 1 + e->truncated_count);
	return 0;
}

/* ---------- series and keys (poll loop) ---------- */

static struct net_series *series_get(struct net_priv *np, const struct sl_attr *at)
{
	const struct net_cfg *c = sl_module_cfg(np->m);
	int host = !at || at->is_container != SL_YES;
	const char *id = host ? "" : at->container_id;
	struct net_series *s;

	HASH_FIND_STR(np->series, id, s);
	if (s) {
		if (!host && !s->names.pod[0] && at->names.pod[0])
			s->names = at->names;
		return s;
	}
	if (!host && np->nseries >= c->max_containers)
		return NULL;
	if (!(s = calloc(1, sizeof(*s))))
		return NULL;
	snprintf(s->id, sizeof(s->id), "%s", id);
	s->is_host = host;
	snprintf(s->runtime, sizeof(s->runtime), "%s", host ? "host" : at->runtime);
	if (!host) {
		snprintf(s->pod_uid, sizeof(s->pod_uid), "%s", at->pod_uid);
		s->names = at->names;
		np->nseries++;
	}
	s->last_tick = np->tick_no;
	HASH_ADD_STR(np->series, id, s);
	return s;
}

/* socket cgroup if a container's, else the netns' container, else host */
static void key_resolve(struct net_priv *np, struct net_key *ks)
{
	struct sl_attr at;
	struct net_nsent *ns;

	memset(&at, 0, sizeof(at));
	if (ks->k.cgroup_id)
		sl_module_resolve_cgroup(np->m, ks->k.cgroup_id, 0, &at, NULL);
	ks->via_ns = at.is_container != SL_YES && ks->k.netns;
	if (ks->via_ns && (ns = net_ns_lookup(np, ks->k.netns)) && ns->is_ct)
		at = ns->at;
	ks->ns_gen = np->ns_gen;
	ks->s = series_get(np, &at);
	ks->resolved_tick = np->tick_no;
}

/* Before a key's new counts are added: a key attributed through its netns
 * whose netns entry changed (dropped, or now another task's: the inode
 * number was given to a new netns) is resolved again, and one whose entry's
 * task is gone has the map checked first (net_ns_lookup), so that counts of
 * a new netns that reuses a dead one's inode are not added to the dead
 * one's container. */
static void key_fresh(struct net_priv *np, struct net_key *ks)
{
	if (!ks->via_ns)
		return;
	if (ks->ns_gen == np->ns_gen)
		net_ns_lookup(np, ks->k.netns); /* rescans when the entry's task is gone */
	if (ks->ns_gen != np->ns_gen)
		key_resolve(np, ks);
}

static struct net_key *key_get(struct net_priv *np, struct net_key **tab, const struct sl_net_key *k)
{
	struct net_key *ks;

	HASH_FIND(hh, *tab, k, sizeof(*k), ks);
	if (ks) {
		if ((!ks->s || ks->s->is_host) && ks->resolved_tick + RERESOLVE_TICKS <= np->tick_no)
			key_resolve(np, ks);
		return ks;
	}
	if (!(ks = calloc(1, sizeof(*ks))))
		return NULL;
	ks->k = *k;
	HASH_ADD(hh, *tab, k, sizeof(ks->k), ks);
	key_resolve(np, ks);
	return ks;
}

static uint64_t dsub(uint64_t cur, uint64_t last)
{
	return cur >= last ? cur - last : cur; /* entry recreated: a reset */
}

static void read_tcp(struct net_priv *np)
{
	int fd = bpf_map__fd(np->skel->maps.net_tcp);
	struct sl_net_key key, next, *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct sl_net_tcp sum = {0};
		struct net_key *ks;
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, np->pcpu_tcp))
			continue;
		for (int c = 0; c < np->ncpus; c++) {
			sum.retrans_segs += np->pcpu_tcp[c].retrans_segs;
			sum.retrans_skbs += np->pcpu_tcp[c].retrans_skbs;
			sum.retrans_synack += np->pcpu_tcp[c].retrans_synack;
			sum.rst_sent += np->pcpu_tcp[c].rst_sent;
			sum.rst_recv += np->pcpu_tcp[c].rst_recv;
		}
		if (!(ks = key_get(np, &np->tcp_keys, &key)))
			continue;
		ks->seen_tick = np->tick_no;
		struct sl_net_tcp d = {
			.retrans_segs = dsub(sum.retrans_segs, ks->last_tcp.retrans_segs),
			.retrans_skbs = dsub(sum.retrans_skbs, ks->last_tcp.retrans_skbs),
			.retrans_synack = dsub(sum.retrans_synack, ks->last_tcp.retrans_synack),
			.rst_sent = dsub(sum.rst_sent, ks->last_tcp.rst_sent),
			.rst_recv = dsub(sum.rst_recv, ks->last_tcp.rst_recv),
		};
		ks->last_tcp = sum;
		if (d.retrans_segs || d.retrans_skbs || d.retrans_synack || d.rst_sent || d.rst_recv)
			key_fresh(np, ks);
		if (!ks->s) {
			atomic_fetch_add(&np->not_exported,
					 d.retrans_segs + d.retrans_synack + d.rst_sent + d.rst_recv);
			continue;
		}
		ks->s->retrans_segs += d.retrans_segs;
		ks->s->retrans_skbs += d.retrans_skbs;
		ks->s->retrans_synack += d.retrans_synack;
		ks->s->rst_sent += d.rst_sent;
		ks->s->rst_recv += d.rst_recv;
		if (d.retrans_segs || d.retrans_synack || d.rst_sent || d.rst_recv)
			ks->s->last_tick = np->tick_no;
	}
}

static void read_drops(struct net_priv *np)
{
	int fd = bpf_map__fd(np->skel->maps.net_drops);
	struct sl_net_key key, next, *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		uint64_t sum = 0, d;
		struct net_key *ks;
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, np->pcpu_u64))
			continue;
		for (int c = 0; c < np->ncpus; c++)
			sum += np->pcpu_u64[c];
		if (!(ks = key_get(np, &np->drop_keys, &key)))
			continue;
		ks->seen_tick = np->tick_no;
		d = dsub(sum, ks->last_drop);
		ks->last_drop = sum;
		if (d)
			key_fresh(np, ks);
		if (!ks->s) {
			atomic_fetch_add(&np->not_exported, d);
			continue;
		}
		if (key.reason < SL_NET_MAX_REASONS)
			ks->s->drops[key.reason] += d;
		if (d)
			ks->s->last_tick = np->tick_no;
	}
}

/* every container netns gets its series (an idle container shows zeros) */
static void ns_series(struct net_priv *np)
{
	struct net_nsent *e, *tmp;

	HASH_ITER(hh, np->ns, e, tmp) {
		struct net_series *s;
		if (e->is_ct && (s = series_get(np, &e->at)))
			s->last_tick = np->tick_no;
	}
}

static void series_expire(struct net_priv *np)
{
	struct net_series *s, *tmp;
	struct net_key *ks, *kt;

	HASH_ITER(hh, np->series, s, tmp) {
		if (s->is_host || np->tick_no - s->last_tick <= SERIES_IDLE_TICKS)
			continue;
		HASH_ITER(hh, np->tcp_keys, ks, kt)
			if (ks->s == s)
				ks->s = NULL, ks->resolved_tick = 0;
		HASH_ITER(hh, np->drop_keys, ks, kt)
			if (ks->s == s)
				ks->s = NULL, ks->resolved_tick = 0;
		HASH_DEL(np->series, s);
		np->nseries--;
		free(s);
	}
}

static void snap_free(struct sl_snap *h)
{
	struct net_snap *s = (struct net_snap *)h;
	free(s->softirq);
	free(s);
}

static void snap_series(struct net_priv *np, const struct net_series *s, struct net_snap_series *o)
{
	struct net_nsent *e, *tmp;

	snprintf(o->id, sizeof(o->id), "%s", s->id);
	snprintf(o->pod_uid, sizeof(o->pod_uid), "%s", s->pod_uid);
	snprintf(o->runtime, sizeof(o->runtime), "%s", s->runtime);
	o->names = s->names;
	o->is_host = s->is_host;
	o->retrans_segs = s->retrans_segs;
	o->retrans_skbs = s->retrans_skbs;
	o->retrans_synack = s->retrans_synack;
	o->rst_sent = s->rst_sent;
	o->rst_recv = s->rst_recv;
	for (unsigned r = 0; r < SL_NET_MAX_REASONS; r++) {
		if (!s->drops[r])
			continue;
		o->drops_total += s->drops[r];
		if (o->nreasons < NET_SNAP_REASONS) {
			o->reason[o->nreasons] = r;
			o->reason_count[o->nreasons++] = s->drops[r];
		}
	}
	if (s->is_host)
		return;
	HASH_ITER(hh, np->ns, e, tmp)
		if (e->is_ct && o->nns < NET_MAX_NETNS && !strcmp(e->at.container_id, s->id)) {
			o->ns[o->nns] = e->fig;
			o->ns[o->nns++].netns = e->ino;
		}
}

static void net_tick(struct sl_module *m, uint64_t now_ns)
{
	struct net_priv *np = m->priv;
	const struct net_cfg *c = sl_module_cfg(m);
	struct net_series *s, *tmp;
	struct net_snap *snap;
	struct net_key *ks, *kt;
	unsigned n, i = 0;
	int sfd;

	if (!np || !np->skel)
		return;
	np->tick_no++;
	net_ns_refresh(np, c->netns_files, (unsigned)c->max_devices);
	ns_series(np);
	read_tcp(np);
	read_drops(np);
	HASH_ITER(hh, np->tcp_keys, ks, kt)
		if (ks->seen_tick != np->tick_no) {
			HASH_DEL(np->tcp_keys, ks);
			free(ks);
		}
	HASH_ITER(hh, np->drop_keys, ks, kt)
		if (ks->seen_tick != np->tick_no) {
			HASH_DEL(np->drop_keys, ks);
			free(ks);
		}
	series_expire(np);

	n = HASH_COUNT(np->series);
	snap = calloc(1, sizeof(*snap) + n * sizeof(snap->s[0]));
	if (!snap)
		return;
	sl_snap_init(&snap->hdr, snap_free);
	snap->time_mono_ns = now_ns;
	snap->interval_ns = np->last_tick_ns && now_ns > np->last_tick_ns ? now_ns - np->last_tick_ns : 0;
	np->last_tick_ns = now_ns;
	sfd = bpf_map__fd(np->skel->maps.net_stats);
	sl_percpu_sums(sfd, SL_NST_MAX, np->ncpus, snap->stats); /* one bpf() call */
	snap->ncpus = np->ncpus;
	snap->softirq = calloc((size_t)np->ncpus * SL_NET_NVEC, sizeof(*snap->softirq));
	if (snap->softirq) {
		int hfd = bpf_map__fd(np->skel->maps.net_softirq);
		for (uint32_t v = 0; v < SL_NET_NVEC; v++)
			if (bpf_map_lookup_elem(hfd, &v, np->pcpu_sirq) == 0)
				for (int cpu = 0; cpu < np->ncpus; cpu++)
					snap->softirq[(size_t)cpu * SL_NET_NVEC + v] = np->pcpu_sirq[cpu];
	}
	snap->nnetns = HASH_COUNT(np->ns);
	HASH_ITER(hh, np->series, s, tmp)
		snap_series(np, s, &snap->s[i++]);
	snap->n = (int)i;
	sl_snapref_publish(&np->snap, &snap->hdr);
}

/* ---------- lifecycle ---------- */

static int net_init(struct sl_module *m)
{
	const struct net_cfg *c = sl_module_cfg(m);
	struct net_priv *np = calloc(1, sizeof(*np));
	struct net_bpf *s;
	int absent[NHOOKS] = {0}, err, nattached = 0;
	struct btf *vmlinux;
	struct stat st;

	if (!np)
		return -ENOMEM;
	m->priv = np;
	np->m = m;
	sl_snapref_init(&np->snap);
	np->ncpus = libbpf_num_possible_cpus();
	if (np->ncpus <= 0) {
		snprintf(m->error, sizeof(m->error), "cannot count possible CPUs");
		return -EINVAL;
	}
	np->pcpu_tcp = calloc((size_t)np->ncpus, sizeof(*np->pcpu_tcp));
	np->pcpu_u64 = calloc((size_t)np->ncpus, sizeof(*np->pcpu_u64));
	np->pcpu_sirq = calloc((size_t)np->ncpus, sizeof(*np->pcpu_sirq));
	if (!np->pcpu_tcp || !np->pcpu_u64 || !np->pcpu_sirq)
		return -ENOMEM;
	if (stat("/proc/self/ns/net", &st) == 0)
		np->host_netns = (uint32_t)st.st_ino;

	s = np->skel = net_bpf__open();
	if (!s) {
		err = -errno;
		snprintf(m->error, sizeof(m->error), "open BPF object: %s", strerror(-err));
		return err;
	}
	struct bpf_program *progs[NHOOKS] = {
		s->progs.net_tcp_retransmit, s->progs.net_tcp_retransmit_synack, s->progs.net_tcp_send_reset,
		s->progs.net_tcp_receive_reset, s->progs.net_kfree_skb, s->progs.net_softirq_raise,
		s->progs.net_softirq_entry};
	struct bpf_link **links[NHOOKS] = {
		&s->links.net_tcp_retransmit, &s->links.net_tcp_retransmit_synack, &s->links.net_tcp_send_reset,
		&s->links.net_tcp_receive_reset, &s->links.net_kfree_skb, &s->links.net_softirq_raise,
		&s->links.net_softirq_entry};

	vmlinux = btf__load_vmlinux_btf();
	/* no enum: every reason is UNKNOWN_<n> (docs/NET.md) */
	sl_net_reasons_from_btf(vmlinux, &np->reasons);
	char why[NHOOKS][160];
	for (unsigned i = 0; i < NHOOKS; i++) {
		char tn[128];
		snprintf(tn, sizeof(tn), "btf_trace_%s", net_hook_tab[i].tp);
		if (!vmlinux || btf__find_by_name_kind(vmlinux, tn, BTF_KIND_TYPEDEF) < 0) {
			absent[i] = 1;
			snprintf(why[i], sizeof(why[i]), "tracepoint %s:%s not in kernel BTF", net_hook_tab[i].cat,
				 net_hook_tab[i].tp);
		}
	}
	btf__free(vmlinux);
	/* raise and entry are a pair */
	if (absent[5] != absent[6]) {
		absent[5] = absent[6] = 1;
		snprintf(why[5], sizeof(why[5]), "softirq_raise and softirq_entry are a pair: one is absent");
		snprintf(why[6], sizeof(why[6]), "softirq_raise and softirq_entry are a pair: one is absent");
	}
	for (unsigned i = 0; i < NHOOKS; i++)
		if (absent[i])
			bpf_program__set_autoload(progs[i], false);

	s->rodata->event_rate = c->event_rate;
	s->rodata->event_burst = c->event_burst;
	s->rodata->drop_events = (__u32)c->drop_events;
	s->rodata->retrans_events = (__u32)c->retransmit_events;
	s->rodata->want_stack = (__u32)c->stacks;
	s->rodata->sl_v1_subsys_id = sl_module_v1_subsys_id(m);
	for (unsigned i = 0; i < c->drop_event_skip.n && i < SL_CFG_STRLIST_MAX; i++) {
		int v = sl_net_reason_value(&np->reasons, c->drop_event_skip.v[i]);
		if (v >= 0 && v < SL_NET_MAX_REASONS)
			s->rodata->skip_mask[v >> 6] |= 1ULL << (v & 63);
	}
	bpf_map__set_max_entries(s->maps.net_tcp, (__u32)c->max_keys);
	bpf_map__set_max_entries(s->maps.net_drops, (__u32)c->max_keys * 4);
	bpf_map__set_max_entries(s->maps.net_events, (__u32)c->ringbuf_bytes);
	err = net_bpf__load(s);
	if (err) {
		snprintf(m->error, sizeof(m->error), "load BPF object: %s", strerror(-err));
		return err;
	}
	/* full buckets before the first event */
	for (uint32_t b = 0; b < SL_NET_NB; b++) {
		struct sl_exec_bucket bk;
		sl_bucket_init(&bk, sl_mono_ns(), c->event_burst);
		bpf_map_update_elem(bpf_map__fd(s->maps.net_buckets), &b, &bk, BPF_ANY);
	}
	for (unsigned i = 0; i < NHOOKS; i++) {
		if (absent[i]) {
			sl_module_hook(m, net_hooks[i].name, SL_HOOK_DEGRADED, why[i]);
			continue;
		}
		sl_module_attach(m, progs[i], links[i], net_hooks[i].name);
		nattached += *links[i] != NULL;
	}
	if (!nattached) {
		snprintf(m->error, sizeof(m->error), "no net tracepoint could be attached");
		return -ENOTSUP;
	}
	err = sl_module_ringbuf(m, "net_events", bpf_map__fd(s->maps.net_events));
	if (err) {
		snprintf(m->error, sizeof(m->error), "ring buffer registration: %s", strerror(-err));
		return err;
	}
	np->last_tick_ns = sl_mono_ns();
	return 0;
}

static int net_set_rate_shift(struct sl_module *m, unsigned shift)
{
	struct net_priv *np = m ? m->priv : NULL;

	if (shift > SL_RATE_SHIFT_MAX)
		return -EINVAL;
	if (!np || !np->skel || !np->skel->bss)
		return -ENODEV;
	__atomic_store_n(&np->skel->bss->rate_shift, shift, __ATOMIC_RELAXED);
	return 0;
}

static void net_destroy(struct sl_module *m)
{
	struct net_priv *np = m->priv;
	struct net_key *ks, *kt;
	struct net_series *s, *st;

	if (!np)
		return;
	net_bpf__destroy(np->skel);
	HASH_ITER(hh, np->tcp_keys, ks, kt) {
		HASH_DEL(np->tcp_keys, ks);
		free(ks);
	}
	HASH_ITER(hh, np->drop_keys, ks, kt) {
		HASH_DEL(np->drop_keys, ks);
		free(ks);
	}
	HASH_ITER(hh, np->series, s, st) {
		HASH_DEL(np->series, s);
		free(s);
	}
	net_ns_free_all(np);
	sl_snapref_destroy(&np->snap);
	sl_ksyms_shared_put(np->ksyms);
	free(np->pcpu_tcp);
	free(np->pcpu_u64);
	free(np->pcpu_sirq);
	free(np);
	m->priv = NULL;
}

const struct sl_module_ops sl_net_module = {
	.name = "net",
	.doc = "docs/NET.md",
	.config = {.size = sizeof(struct net_cfg),
		   .keys = net_keys,
		   .nkeys = sizeof(net_keys) / sizeof(net_keys[0]),
		   .check = net_cfg_check},
	.kinds = net_kinds,
	.nkinds = sizeof(net_kinds) / sizeof(net_kinds[0]),
	.families = sl_net_families,
	.nfamilies = NET_NFAM,
	.hooks = net_hooks,
	.nhooks = NHOOKS,
	.ringbufs = net_ringbufs,
	.nringbufs = 1,
	.views = net_views,
	.nviews = 1,
	.init = net_init,
	.tick = net_tick,
	.tick_is_metrics = 0,
	.write_metrics = net_write_metrics,
	.write_drops = net_write_drops,
	.set_rate_shift = net_set_rate_shift,
	.destroy = net_destroy,
};
