/* net module, read side: the Prometheus families and the GET /api/v1/net
 * body from the published snapshot. API threads: only the snapshot,
 * atomics and the immutable reason table. */
#include "cgroup/attr_labels.h"
#include "common/log2hist.h"
#include "modules/net_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct sl_prom_family sl_net_families[NET_NFAM] = {
	[NF_RETRANS] = {"sandlens_net_tcp_retransmits_total", SL_PROM_COUNTER,
			"TCP segments retransmitted by the container's sockets (tcp:tcp_retransmit_skb tcp_skb_pcount; kind=synack: tcp:tcp_retransmit_synack), what the netns' RetransSegs counts; docs/NET.md."},
	[NF_RESETS] = {"sandlens_net_tcp_resets_total", SL_PROM_COUNTER,
		       "TCP resets sent (tcp:tcp_send_reset) and received (tcp:tcp_receive_reset) by the container."},
	[NF_DROPS] = {"sandlens_net_drops_total", SL_PROM_COUNTER,
		      "Packets the kernel dropped (skb:kfree_skb), by drop reason (enum skb_drop_reason from BTF), attributed through the socket's cgroup, else the device's netns."},
	[NF_SOFTIRQ] = {"sandlens_net_softirq_latency_seconds", SL_PROM_HISTOGRAM,
			"NET_RX/NET_TX softirq latency per CPU: irq:softirq_raise to irq:softirq_entry."},
	[NF_NETSTAT] = {"sandlens_net_netstat_total", SL_PROM_COUNTER,
			"TCP counters of the container's network namespace, from its /proc/<pid>/net/netstat (TcpExt) and snmp (Tcp), by the kernel's name."},
	[NF_DEV_DROPPED] = {"sandlens_net_device_dropped_total", SL_PROM_COUNTER,
			    "Packets dropped as the driver/NIC counts them (/proc/<pid>/net/dev drop column of the netns), per device and direction."},
	[NF_DEV_ERRORS] = {"sandlens_net_device_errors_total", SL_PROM_COUNTER,
			   "Packet errors as the driver/NIC counts them (/proc/<pid>/net/dev errs column), per device and direction."},
	[NF_DEV_PACKETS] = {"sandlens_net_device_packets_total", SL_PROM_COUNTER,
			    "Packets per device and direction (/proc/<pid>/net/dev)."},
	[NF_SEEN] = {"sandlens_net_kernel_calls_total", SL_PROM_COUNTER,
		     "Tracepoint calls the kernel half counted, by hook (kfree_skb, kfree_skb_evented, retransmit)."},
	[NF_MAP_FULL] = {"sandlens_net_map_full_total", SL_PROM_COUNTER,
			 "Counter updates lost because a kernel map was full (net.max_keys)."},
	[NF_SIRQ_UNMATCHED] = {"sandlens_net_softirq_unmatched_total", SL_PROM_COUNTER,
			       "NET softirq entries without a raise seen (attached mid-way), not in the histograms."},
	[NF_NETNS] = {"sandlens_net_netns", SL_PROM_GAUGE, "Network namespaces other than the agent's in the netns map."},
	[NF_SERIES] = {"sandlens_net_series", SL_PROM_GAUGE, "Series (containers + host) in the net snapshot."},
};

static struct net_snap *snap_get(struct net_priv *np)
{
	return (struct net_snap *)sl_snapref_get(&np->snap);
}

#define LMAX (SL_ATTR_LABELS_MAX + 4)
/* identity labels + up to 3 extra (NULL name: none), terminated */
static void labels(struct sl_prom_label *l, struct sl_attr *a, const struct net_snap_series *s, const char *n1,
		   const char *v1, const char *n2, const char *v2, const char *n3, const char *v3)
{
	size_t n;

	memset(a, 0, sizeof(*a));
	snprintf(a->container_id, sizeof(a->container_id), "%s", s->id);
	snprintf(a->pod_uid, sizeof(a->pod_uid), "%s", s->pod_uid);
	snprintf(a->runtime, sizeof(a->runtime), "%s", s->runtime);
	a->names = s->names;
	n = sl_attr_labels(a, l);
	if (n1)
		l[n++] = (struct sl_prom_label){n1, v1};
	if (n2)
		l[n++] = (struct sl_prom_label){n2, v2};
	if (n3)
		l[n++] = (struct sl_prom_label){n3, v3};
	l[n] = (struct sl_prom_label){NULL, NULL};
}

static void write_tcp(struct sl_prom *p, const struct net_snap *snap)
{
	struct sl_prom_label l[LMAX];
	struct sl_attr a;

	if (sl_prom_declared(p, &sl_net_families[NF_RETRANS]) == 0)
		for (int i = 0; i < snap->n; i++) {
			labels(l, &a, &snap->s[i], "kind", "data", NULL, NULL, NULL, NULL);
			sl_prom_u64(p, sl_net_families[NF_RETRANS].name, l, snap->s[i].retrans_segs);
			labels(l, &a, &snap->s[i], "kind", "synack", NULL, NULL, NULL, NULL);
			sl_prom_u64(p, sl_net_families[NF_RETRANS].name, l, snap->s[i].retrans_synack);
		}
	if (sl_prom_declared(p, &sl_net_families[NF_RESETS]) == 0)
		for (int i = 0; i < snap->n; i++) {
			labels(l, &a, &snap->s[i], "direction", "sent", NULL, NULL, NULL, NULL);
			sl_prom_u64(p, sl_net_families[NF_RESETS].name, l, snap->s[i].rst_sent);
			labels(l, &a, &snap->s[i], "direction", "received", NULL, NULL, NULL, NULL);
			sl_prom_u64(p, sl_net_families[NF_RESETS].name, l, snap->s[i].rst_recv);
		}
}

static void write_drops_fam(struct sl_prom *p, const struct net_priv *np, const struct net_snap *snap)
{
	struct sl_prom_label l[LMAX];
	struct sl_attr a;
	char buf[32];

	if (sl_prom_declared(p, &sl_net_families[NF_DROPS]))
		return;
	for (int i = 0; i < snap->n; i++)
		for (int r = 0; r < snap->s[i].nreasons; r++) {
			labels(l, &a, &snap->s[i], "reason",
			       sl_net_reason_name(&np->reasons, snap->s[i].reason[r], buf, sizeof(buf)), NULL, NULL, NULL,
			       NULL);
			sl_prom_u64(p, sl_net_families[NF_DROPS].name, l, snap->s[i].reason_count[r]);
		}
}

static void write_softirq(struct sl_prom *p, const struct net_snap *snap)
{
	double le[SL_NET_FINITE_SLOTS];
	char cpu[16];
	static const char *const vec[SL_NET_NVEC] = {"NET_TX", "NET_RX"};

	if (!snap->softirq || sl_prom_declared(p, &sl_net_families[NF_SOFTIRQ]))
		return;
	sl_l2h_le_seconds(le, SL_NET_SLOTS);
	for (int c = 0; c < snap->ncpus; c++)
		for (int v = 0; v < SL_NET_NVEC; v++) {
			const struct sl_net_softirq *h = &snap->softirq[(size_t)c * SL_NET_NVEC + v];
			struct sl_prom_label l[3] = {{"cpu", cpu}, {"vector", vec[v]}, {NULL, NULL}};
			snprintf(cpu, sizeof(cpu), "%d", c);
			sl_prom_histogram(p, sl_net_families[NF_SOFTIRQ].name, l, le, (const uint64_t *)h->slots, SL_NET_FINITE_SLOTS,
					  (double)h->sum_ns / 1e9);
		}
}

static void write_ns(struct sl_prom *p, const struct net_snap *snap)
{
	struct sl_prom_label l[LMAX];
	struct sl_attr a;
	char ns[16];

	if (sl_prom_declared(p, &sl_net_families[NF_NETSTAT]) == 0)
		for (int i = 0; i < snap->n; i++)
			for (int j = 0; j < snap->s[i].nns; j++) {
				const struct net_nsfig *f = &snap->s[i].ns[j];
				if (!f->have)
					continue;
				snprintf(ns, sizeof(ns), "%u", f->netns);
				for (unsigned k = 0; k < NET_NFIELDS; k++) {
					if (!f->fset[k])
						continue;
					labels(l, &a, &snap->s[i], "netns", ns, "counter", sl_net_stat_fields[k].name,
					       NULL, NULL);
					sl_prom_u64(p, sl_net_families[NF_NETSTAT].name, l, f->f[k]);
				}
			}
	for (unsigned fam = NF_DEV_DROPPED; fam <= NF_DEV_PACKETS; fam++) {
		if (sl_prom_declared(p, &sl_net_families[fam]))
			continue;
		for (int i = 0; i < snap->n; i++)
			for (int j = 0; j < snap->s[i].nns; j++) {
				const struct net_nsfig *f = &snap->s[i].ns[j];
				if (!f->have)
					continue;
				snprintf(ns, sizeof(ns), "%u", f->netns);
				for (int d = 0; d < f->ndev; d++) {
					const struct sl_net_dev *dv = &f->dev[d];
					uint64_t rx = fam == NF_DEV_DROPPED  ? dv->rx_dropped
						      : fam == NF_DEV_ERRORS ? dv->rx_errors
									     : dv->rx_packets;
					uint64_t tx = fam == NF_DEV_DROPPED  ? dv->tx_dropped
						      : fam == NF_DEV_ERRORS ? dv->tx_errors
									     : dv->tx_packets;
					labels(l, &a, &snap->s[i], "netns", ns, "device", dv->name, "direction", "rx");
					sl_prom_u64(p, sl_net_families[fam].name, l, rx);
					labels(l, &a, &snap->s[i], "netns", ns, "device", dv->name, "direction", "tx");
					sl_prom_u64(p, sl_net_families[fam].name, l, tx);
				}
			}
	}
}

void net_write_metrics(struct sl_module *m, struct sl_prom *p)
{
	struct net_priv *np = m->priv;
	struct net_snap *snap;

	if (!np || !(snap = snap_get(np)))
		return;
	write_tcp(p, snap);
	write_drops_fam(p, np, snap);
	write_softirq(p, snap);
	write_ns(p, snap);
	if (sl_prom_declared(p, &sl_net_families[NF_SEEN]) == 0) {
		struct sl_prom_label l[2] = {{"hook", "kfree_skb"}, {NULL, NULL}};
		sl_prom_u64(p, sl_net_families[NF_SEEN].name, l, snap->stats[SL_NST_DROPS]);
		l[0].value = "kfree_skb_evented";
		sl_prom_u64(p, sl_net_families[NF_SEEN].name, l, snap->stats[SL_NST_DROP_EVENTS]);
		l[0].value = "retransmit";
		sl_prom_u64(p, sl_net_families[NF_SEEN].name, l, snap->stats[SL_NST_RETRANS]);
	}
	if (sl_prom_declared(p, &sl_net_families[NF_MAP_FULL]) == 0)
		sl_prom_u64(p, sl_net_families[NF_MAP_FULL].name, NULL, snap->stats[SL_NST_MAP_FULL]);
	if (sl_prom_declared(p, &sl_net_families[NF_SIRQ_UNMATCHED]) == 0)
		sl_prom_u64(p, sl_net_families[NF_SIRQ_UNMATCHED].name, NULL, snap->stats[SL_NST_SOFTIRQ_NO_RAISE]);
	if (sl_prom_declared(p, &sl_net_families[NF_NETNS]) == 0)
		sl_prom_u64(p, sl_net_families[NF_NETNS].name, NULL, snap->nnetns);
	if (sl_prom_declared(p, &sl_net_families[NF_SERIES]) == 0)
		sl_prom_u64(p, sl_net_families[NF_SERIES].name, NULL, (uint64_t)snap->n);
	sl_snap_put(&snap->hdr);
}

void net_write_drops(struct sl_module *m, struct sl_prom *p)
{
	struct net_priv *np = m->priv;
	const struct net_cfg *c = sl_module_cfg(m);
	struct net_snap *snap;
	struct sl_prom_label l[3] = {{"reason", "ringbuf_full"}, {"type", "net_drop"}, {NULL, NULL}};
	int lost;

	if (!np || !(snap = snap_get(np)))
		return;
	/* With a rate limit, an event the rate or a full ring buffer kept back
	 * is carried by the next delivered one of its kind (truncated_count,
	 * in the event's weight): none is lost. Without one (net.event_rate 0)
	 * a failed reservation is a lost event. */
	lost = c->event_rate == 0;
	sl_prom_u64(p, "sandlens_events_dropped_total", l, lost ? snap->stats[SL_NST_RB_FAIL] : 0);
	l[1].value = "tcp_retransmit";
	sl_prom_u64(p, "sandlens_events_dropped_total", l, lost ? snap->stats[SL_NST_RB_FAIL_RETRANS] : 0);
	sl_snap_put(&snap->hdr);
}

/* ---------- GET /api/v1/net ---------- */

static json_t *ns_json(const struct net_nsfig *f)
{
	json_t *o = json_object(), *c = json_object(), *devs = json_array();

	json_object_set_new(o, "netns_inode", json_integer(f->netns));
	json_object_set_new(o, "read", json_boolean(f->have));
	for (unsigned k = 0; f->have && k < NET_NFIELDS; k++)
		if (f->fset[k])
			json_object_set_new(c, sl_net_stat_fields[k].name, json_integer((json_int_t)f->f[k]));
	json_object_set_new(o, "counters", c);
	for (int d = 0; f->have && d < f->ndev; d++) {
		const struct sl_net_dev *v = &f->dev[d];
		json_array_append_new(devs, json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "device", v->name,
						      "rx_packets", (json_int_t)v->rx_packets, "rx_dropped",
						      (json_int_t)v->rx_dropped, "rx_errors", (json_int_t)v->rx_errors,
						      "rx_fifo", (json_int_t)v->rx_fifo, "tx_packets",
						      (json_int_t)v->tx_packets, "tx_dropped", (json_int_t)v->tx_dropped,
						      "tx_errors", (json_int_t)v->tx_errors, "tx_fifo",
						      (json_int_t)v->tx_fifo));
	}
	json_object_set_new(o, "devices", devs);
	return o;
}

static json_t *softirq_json(const struct net_snap *snap)
{
	json_t *arr = json_array();
	static const char *const vec[SL_NET_NVEC] = {"NET_TX", "NET_RX"};

	for (int c = 0; snap->softirq && c < snap->ncpus; c++)
		for (int v = 0; v < SL_NET_NVEC; v++) {
			const struct sl_net_softirq *h = &snap->softirq[(size_t)c * SL_NET_NVEC + v];
			uint64_t n = sl_l2h_count((const uint64_t *)h->slots, SL_NET_SLOTS);
			json_array_append_new(
				arr, json_pack("{s:i,s:s,s:I,s:f,s:f,s:f,s:f}", "cpu", c, "vector", vec[v], "count",
					       (json_int_t)n, "p50_seconds",
					       sl_l2h_quantile((const uint64_t *)h->slots, SL_NET_SLOTS, 0.5, h->max_ns) / 1e9, "p99_seconds",
					       sl_l2h_quantile((const uint64_t *)h->slots, SL_NET_SLOTS, 0.99, h->max_ns) / 1e9,
					       "max_seconds", (double)h->max_ns / 1e9, "sum_seconds",
					       (double)h->sum_ns / 1e9));
		}
	return arr;
}

json_t *net_view_get(struct sl_module *m, const struct sl_view_param *p, size_t n, unsigned *status, char *err,
		     size_t errlen)
{
	struct net_priv *np = m->priv;
	struct net_snap *snap;
	json_t *root, *arr;
	char buf[32];

	(void)p;
	(void)n;
	if (!np) {
		*status = 503;
		snprintf(err, errlen, "the net module is not running");
		return NULL;
	}
	snap = snap_get(np);
	root = json_object();
	arr = json_array();
	json_object_set_new(root, "time_ns", snap ? json_integer((json_int_t)(snap->time_mono_ns +
						(uint64_t)sl_module_mono_to_real_ns(m))) : json_null());
	json_object_set_new(root, "interval_seconds", json_real(snap ? (double)snap->interval_ns / 1e9 : 0));
	for (int i = 0; snap && i < snap->n; i++) {
		const struct net_snap_series *s = &snap->s[i];
		json_t *o = json_object(), *dr = json_object(), *nss = json_array();
		json_object_set_new(o, "container_id", json_string(s->id));
		json_object_set_new(o, "pod_uid", json_string(s->pod_uid));
		json_object_set_new(o, "runtime", json_string(s->runtime));
		json_object_set_new(o, "host", json_boolean(s->is_host));
		if (s->names.pod[0]) {
			json_object_set_new(o, "namespace", json_string(s->names.ns));
			json_object_set_new(o, "pod", json_string(s->names.pod));
			json_object_set_new(o, "container", json_string(s->names.container));
		}
		json_object_set_new(o, "tcp_retransmit_segs", json_integer((json_int_t)s->retrans_segs));
		json_object_set_new(o, "tcp_retransmit_calls", json_integer((json_int_t)s->retrans_skbs));
		json_object_set_new(o, "tcp_synack_retransmits", json_integer((json_int_t)s->retrans_synack));
		json_object_set_new(o, "tcp_resets_sent", json_integer((json_int_t)s->rst_sent));
		json_object_set_new(o, "tcp_resets_received", json_integer((json_int_t)s->rst_recv));
		json_object_set_new(o, "drops_total", json_integer((json_int_t)s->drops_total));
		for (int r = 0; r < s->nreasons; r++)
			json_object_set_new(dr, sl_net_reason_name(&np->reasons, s->reason[r], buf, sizeof(buf)),
					    json_integer((json_int_t)s->reason_count[r]));
		json_object_set_new(o, "drops", dr);
		for (int j = 0; j < s->nns; j++)
			json_array_append_new(nss, ns_json(&s->ns[j]));
		json_object_set_new(o, "netns", nss);
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "containers", arr);
	json_object_set_new(root, "softirq", snap ? softirq_json(snap) : json_array());
	if (snap) {
		json_object_set_new(root, "kernel",
				    json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "kfree_skb_calls",
					      (json_int_t)snap->stats[SL_NST_DROPS], "kfree_skb_evented",
					      (json_int_t)snap->stats[SL_NST_DROP_EVENTS], "retransmit_calls",
					      (json_int_t)snap->stats[SL_NST_RETRANS], "events_rate_limited",
					      (json_int_t)snap->stats[SL_NST_RATE_LIMITED], "ringbuf_failures",
					      (json_int_t)(snap->stats[SL_NST_RB_FAIL] + snap->stats[SL_NST_RB_FAIL_RETRANS]), "map_full",
					      (json_int_t)snap->stats[SL_NST_MAP_FULL], "softirq_unmatched",
					      (json_int_t)snap->stats[SL_NST_SOFTIRQ_NO_RAISE], "netns_mapped",
					      (json_int_t)snap->nnetns));
		json_object_set_new(root, "not_exported", json_integer((json_int_t)atomic_load(&np->not_exported)));
	}
	sl_snap_put(snap ? &snap->hdr : NULL);
	return root;
}
