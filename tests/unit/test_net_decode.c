/* net module pure parts (src/modules/net_decode.c): drop reason names from
 * the running kernel's BTF (enum skb_drop_reason), record decoding, and the
 * /proc/net/{netstat,snmp,dev} parsers against real texts of this format
 * (net/ipv4/proc.c, net/core/net-procfs.c). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/btf.h>

#include "modules/net_decode.h"

static void test_reasons_btf(void **state)
{
	(void)state;
	struct btf *btf = btf__load_vmlinux_btf();
	struct sl_net_reasons *r = calloc(1, sizeof(*r));
	char buf[32];

	assert_non_null(r);
	assert_int_equal(sl_net_reasons_from_btf(NULL, r), -ENOENT);
	if (!btf) {
		free(r);
		skip(); /* no kernel BTF on this machine */
	}
	int n = sl_net_reasons_from_btf(btf, r);
	assert_true(n > 10);
	/* names as the kernel spells them, by the kernel's values */
	int nf = sl_net_reason_value(r, "NETFILTER_DROP");
	assert_true(nf > 0);
	assert_int_equal(sl_net_reason_value(r, "SKB_DROP_REASON_NETFILTER_DROP"), nf);
	assert_string_equal(sl_net_reason_name(r, (unsigned)nf, buf, sizeof(buf)), "NETFILTER_DROP");
	int ns = sl_net_reason_value(r, "NOT_SPECIFIED");
	assert_true(ns >= 0);
	assert_true(sl_net_reason_value(r, "SKB_CONSUMED") >= 0);
	assert_int_equal(sl_net_reason_value(r, "MAX"), -1); /* the bound is no reason */
	assert_int_equal(sl_net_reason_value(r, "NO_SUCH_REASON"), -1);
	assert_string_equal(sl_net_reason_name(r, SL_NET_MAX_REASONS - 1, buf, sizeof(buf)), "UNKNOWN_511");
	/* every named value agrees with BTF's own enum */
	int id = btf__find_by_name_kind(btf, "skb_drop_reason", BTF_KIND_ENUM);
	const struct btf_type *t = btf__type_by_id(btf, (unsigned)id);
	const struct btf_enum *en = btf_enum(t);
	for (unsigned i = 0; i < btf_vlen(t); i++) {
		const char *nm = btf__name_by_offset(btf, en[i].name_off);
		unsigned v = (unsigned)en[i].val; /* the subsystem mask is negative as an int */
		if (strcmp(nm, "SKB_DROP_REASON_MAX") && v < SL_NET_MAX_REASONS)
			assert_int_equal(sl_net_reason_value(r, nm), v);
	}
	btf__free(btf);
	free(r);
}

static void test_decode(void **state)
{
	(void)state;
	struct sl_net_reasons *r = calloc(1, sizeof(*r));
	struct sl_net_event e;
	json_t *o;

	assert_non_null(r);
	snprintf(r->name[12], sizeof(r->name[12]), "NETFILTER_DROP");
	r->n = 13;
	memset(&e, 0, sizeof(e));
	e.hdr.type = SL_EV_NET_DROP;
	e.reason = 12;
	e.family = 2;
	e.protocol = 6;
	e.state = 1;
	e.saddr[0] = 10, e.saddr[3] = 1;
	e.daddr[0] = 10, e.daddr[3] = 2;
	e.sport = 1234;
	e.dport = 80;
	e.nstack = 1;
	e.stack[0] = 0xffffffff81234567ull;
	o = sl_net_drop_fields(&e, sizeof(e), r);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "reason")), "NETFILTER_DROP");
	assert_string_equal(json_string_value(json_object_get(o, "saddr")), "10.0.0.1");
	assert_string_equal(json_string_value(json_object_get(o, "daddr")), "10.0.0.2");
	assert_string_equal(json_string_value(json_object_get(o, "protocol")), "tcp");
	assert_string_equal(json_string_value(json_object_get(o, "state")), "ESTABLISHED");
	assert_int_equal(json_integer_value(json_object_get(o, "dport")), 80);
	assert_string_equal(json_string_value(json_array_get(json_object_get(o, "stack"), 0)), "0xffffffff81234567");
	json_decref(o);
	e.reason = 300; /* not named: UNKNOWN_<n>, never a guess */
	o = sl_net_drop_fields(&e, sizeof(e), r);
	assert_string_equal(json_string_value(json_object_get(o, "reason")), "UNKNOWN_300");
	json_decref(o);
	/* wrong type or short record: a decode error */
	assert_null(sl_net_drop_fields(&e, sizeof(e) - 1, r));
	assert_null(sl_net_retrans_fields(&e, sizeof(e)));
	e.hdr.type = SL_EV_NET_RETRANS;
	e.kind = 1;
	e.nstack = 1000; /* clamped */
	o = sl_net_retrans_fields(&e, sizeof(e));
	assert_string_equal(json_string_value(json_object_get(o, "kind")), "synack");
	assert_int_equal(json_array_size(json_object_get(o, "stack")), SL_NET_STACK_MAX);
	json_decref(o);
	assert_string_equal(sl_net_tcp_state_name(12), "NEW_SYN_RECV");
	assert_string_equal(sl_net_tcp_state_name(99), "UNKNOWN");
	free(r);
}

static const char snmp_txt[] =
	"Ip: Forwarding DefaultTTL InReceives\n"
	"Ip: 1 64 12345\n"
	"Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs "
	"OutSegs RetransSegs InErrs OutRsts InCsumErrors\n"
	"Tcp: 1 200 120000 -1 10 5 2 1 3 1000 2000 178 0 7 0\n"
	"Udp: InDatagrams NoPorts\n"
	"Udp: 4 5\n";
static const char netstat_txt[] =
	"TcpExt: SyncookiesSent SyncookiesRecv PruneCalled RcvPruned ListenOverflows ListenDrops\n"
	"TcpExt: 0 0 3 1 42 43\n"
	"IpExt: InNoRoutes InTruncatedPkts\n"
	"IpExt: 0 0\n";

static void test_proc_fields(void **state)
{
	(void)state;
	uint64_t v = 0;

	assert_int_equal(sl_net_proc_field(snmp_txt, "Tcp", "RetransSegs", &v), 0);
	assert_int_equal(v, 178);
	assert_int_equal(sl_net_proc_field(snmp_txt, "Tcp", "OutRsts", &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(sl_net_proc_field(snmp_txt, "Udp", "NoPorts", &v), 0);
	assert_int_equal(v, 5);
	assert_int_equal(sl_net_proc_field(snmp_txt, "Tcp", "Nope", &v), -ENOENT);
	assert_int_equal(sl_net_proc_field(snmp_txt, "Tc", "RtoMin", &v), -ENOENT); /* a prefix is not a section */
	assert_int_equal(sl_net_proc_field(netstat_txt, "TcpExt", "ListenOverflows", &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(sl_net_proc_field(netstat_txt, "TcpExt", "ListenDrops", &v), 0);
	assert_int_equal(v, 43);
	assert_int_equal(sl_net_proc_field("TcpExt: A B\n", "TcpExt", "A", &v), -ENOENT); /* no values line */
	assert_int_equal(sl_net_proc_field("", "Tcp", "A", &v), -ENOENT);
}

static void test_dev(void **state)
{
	(void)state;
	static const char dev[] =
		"Inter-|   Receive                                                |  Transmit\n"
		" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls "
		"carrier compressed\n"
		"    lo:   12345      100    0    0    0     0          0         0    12345      100    0    0    0     0 "
		"      0          0\n"
		"slc123: 3000000     2000    1    7    2     3          0         0   500000     1500    4    5    6     0 "
		"      8          0\n"
		"garbage line\n";
	struct sl_net_dev d[4];

	assert_int_equal(sl_net_parse_dev(dev, d, 4), 2);
	assert_string_equal(d[0].name, "lo");
	assert_int_equal(d[0].rx_packets, 100);
	assert_string_equal(d[1].name, "slc123");
	assert_int_equal(d[1].rx_packets, 2000);
	assert_int_equal(d[1].rx_errors, 1);
	assert_int_equal(d[1].rx_dropped, 7);
	assert_int_equal(d[1].rx_fifo, 2);
	assert_int_equal(d[1].rx_frame, 3);
	assert_int_equal(d[1].tx_packets, 1500);
	assert_int_equal(d[1].tx_errors, 4);
	assert_int_equal(d[1].tx_dropped, 5);
	assert_int_equal(d[1].tx_fifo, 6);
	assert_int_equal(d[1].tx_carrier, 8);
	assert_int_equal(sl_net_parse_dev(dev, d, 1), 1); /* bounded by max */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reasons_btf),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_proc_fields),
		cmocka_unit_test(test_dev),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
