/* net module, pure parts; see net_decode.h. */
#include "modules/net_decode.h"

#include <arpa/inet.h>
#include <bpf/btf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX "SKB_DROP_REASON_"

int sl_net_reasons_from_btf(const struct btf *btf, struct sl_net_reasons *r)
{
	const struct btf_type *t;
	const struct btf_enum *en;
	int id, nnamed = 0;

	memset(r, 0, sizeof(*r));
	if (!btf)
		return -ENOENT;
	id = btf__find_by_name_kind(btf, "skb_drop_reason", BTF_KIND_ENUM);
	if (id < 0)
		return -ENOENT;
	t = btf__type_by_id(btf, (unsigned)id);
	if (!t)
		return -ENOENT;
	en = btf_enum(t);
	for (unsigned i = 0; i < btf_vlen(t); i++) {
		const char *nm = btf__name_by_offset(btf, en[i].name_off);
		unsigned v = (unsigned)en[i].val;
		if (!nm || v >= SL_NET_MAX_REASONS || !strcmp(nm, PREFIX "MAX"))
			continue;
		if (!strncmp(nm, PREFIX, strlen(PREFIX)))
			nm += strlen(PREFIX);
		snprintf(r->name[v], sizeof(r->name[v]), "%s", nm);
		if (v + 1 > r->n)
			r->n = v + 1;
		nnamed++;
	}
	return nnamed;
}

const char *sl_net_reason_name(const struct sl_net_reasons *r, unsigned v, char *buf, size_t len)
{
	if (r && v < SL_NET_MAX_REASONS && r->name[v][0])
		return r->name[v];
	snprintf(buf, len, "UNKNOWN_%u", v);
	return buf;
}

int sl_net_reason_value(const struct sl_net_reasons *r, const char *name)
{
	if (!r || !name)
		return -1;
	if (!strncmp(name, PREFIX, strlen(PREFIX)))
		name += strlen(PREFIX);
	for (unsigned v = 0; v < r->n && v < SL_NET_MAX_REASONS; v++)
		if (r->name[v][0] && !strcmp(r->name[v], name))
			return (int)v;
	return -1;
}

const char *sl_net_tcp_state_name(unsigned st)
{
	static const char *const n[] = {"",          "ESTABLISHED", "SYN_SENT",   "SYN_RECV", "FIN_WAIT1",
					"FIN_WAIT2", "TIME_WAIT",   "CLOSE",      "CLOSE_WAIT", "LAST_ACK",
					"LISTEN",    "CLOSING",     "NEW_SYN_RECV"};
	return st < sizeof(n) / sizeof(n[0]) ? n[st] : "UNKNOWN";
}

static const char *proto_name(unsigned p, char *buf, size_t len)
{
	switch (p) {
	case 0: return "";
	case 1: return "icmp";
	case 6: return "tcp";
	case 17: return "udp";
	case 58: return "icmpv6";
	case 132: return "sctp";
	default: snprintf(buf, len, "%u", p); return buf;
	}
}

/* tuple, state, netns, truncation and the stack as hex strings */
static void common_fields(json_t *o, const struct sl_net_event *e)
{
	char a[INET6_ADDRSTRLEN], b[16];
	json_t *st = json_array();
	unsigned n = e->nstack < SL_NET_STACK_MAX ? e->nstack : SL_NET_STACK_MAX;

	json_object_set_new(o, "family", json_string(e->family == 2 ? "ipv4" : e->family == 10 ? "ipv6" : ""));
	json_object_set_new(o, "protocol", json_string(proto_name(e->protocol, b, sizeof(b))));
	a[0] = 0;
	if (e->family == 2 || e->family == 10)
		inet_ntop(e->family == 2 ? AF_INET : AF_INET6, e->saddr, a, sizeof(a));
	json_object_set_new(o, "saddr", json_string(a));
	a[0] = 0;
	if (e->family == 2 || e->family == 10)
		inet_ntop(e->family == 2 ? AF_INET : AF_INET6, e->daddr, a, sizeof(a));
	json_object_set_new(o, "daddr", json_string(a));
	json_object_set_new(o, "sport", json_integer(e->sport));
	json_object_set_new(o, "dport", json_integer(e->dport));
	json_object_set_new(o, "state", json_string(e->protocol == 6 ? sl_net_tcp_state_name(e->state) : ""));
	json_object_set_new(o, "netns", json_integer(e->netns));
	json_object_set_new(o, "socket_cgroup_id", json_integer((json_int_t)e->cgroup_id));
	json_object_set_new(o, "truncated_count", json_integer((json_int_t)e->truncated_count));
	for (unsigned i = 0; i < n; i++) {
		char h[24];
		snprintf(h, sizeof(h), "0x%" PRIx64, (uint64_t)e->stack[i]);
		json_array_append_new(st, json_string(h));
	}
	json_object_set_new(o, "stack", st);
}

json_t *sl_net_drop_fields(const struct sl_net_event *e, size_t size, const struct sl_net_reasons *reasons)
{
	char buf[32], loc[24];
	json_t *o;

	if (!e || size < sizeof(*e) || e->hdr.type != SL_EV_NET_DROP || !(o = json_object()))
		return NULL;
	json_object_set_new(o, "reason", json_string(sl_net_reason_name(reasons, e->reason, buf, sizeof(buf))));
	json_object_set_new(o, "reason_code", json_integer(e->reason));
	json_object_set_new(o, "ifindex", json_integer(e->ifindex));
	snprintf(loc, sizeof(loc), "0x%" PRIx64, (uint64_t)e->location);
	json_object_set_new(o, "location", json_string(loc));
	common_fields(o, e);
	return o;
}

json_t *sl_net_retrans_fields(const struct sl_net_event *e, size_t size)
{
	json_t *o;

	if (!e || size < sizeof(*e) || e->hdr.type != SL_EV_NET_RETRANS || !(o = json_object()))
		return NULL;
	json_object_set_new(o, "kind", json_string(e->kind == 1 ? "synack" : "data"));
	json_object_set_new(o, "segs", json_integer(e->segs));
	json_object_set_new(o, "err", json_integer(e->err));
	common_fields(o, e);
	return o;
}

/* the next line of text after p, or NULL */
static const char *next_line(const char *p)
{
	p = strchr(p, '\n');
	return p ? p + 1 : NULL;
}

int sl_net_proc_field(const char *text, const char *section, const char *field, uint64_t *out)
{
	size_t sl = strlen(section), fl = strlen(field);
	const char *p = text;

	while (p && *p) {
		const char *vals = next_line(p);
		if (!vals)
			return -ENOENT;
		if (!strncmp(p, section, sl) && p[sl] == ':' && !strncmp(vals, section, sl) && vals[sl] == ':') {
			/* walk names and values in step */
			const char *n = p + sl + 1, *v = vals + sl + 1;
			for (;;) {
				while (*n == ' ')
					n++;
				while (*v == ' ')
					v++;
				if (*n == '\n' || !*n || *v == '\n' || !*v)
					break;
				size_t nl = strcspn(n, " \n");
				if (nl == fl && !strncmp(n, field, fl)) {
					char *end;
					unsigned long long x = strtoull(v, &end, 10);
					if (end == v)
						return -ENOENT;
					*out = x;
					return 0;
				}
				n += nl;
				v += strcspn(v, " \n");
			}
			return -ENOENT;
		}
		p = vals;
	}
	return -ENOENT;
}

int sl_net_parse_dev(const char *text, struct sl_net_dev *out, int max)
{
	const char *p = text;
	int n = 0;

	for (; p && *p && n < max; p = next_line(p)) {
		const char *colon = strchr(p, ':'), *eol = strchr(p, '\n');
		unsigned long long v[16];
		struct sl_net_dev *d = &out[n];
		size_t nl;
		const char *s = p;

		if (!colon || (eol && colon > eol))
			continue;
		while (*s == ' ')
			s++;
		nl = (size_t)(colon - s);
		if (!nl || nl >= SL_NET_IFNAME_LEN || memchr(s, '|', nl))
			continue;
		if (sscanf(colon + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11],
			   &v[12], &v[13], &v[14], &v[15]) != 16)
			continue;
		memset(d, 0, sizeof(*d));
		memcpy(d->name, s, nl);
		d->rx_packets = v[1];
		d->rx_errors = v[2];
		d->rx_dropped = v[3];
		d->rx_fifo = v[4];
		d->rx_frame = v[5];
		d->tx_packets = v[9];
		d->tx_errors = v[10];
		d->tx_dropped = v[11];
		d->tx_fifo = v[12];
		d->tx_carrier = v[14];
		n++;
	}
	return n;
}
