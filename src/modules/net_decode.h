/* net module, pure parts (no agent state; unit-tested in
 * tests/unit/test_net_decode.c): drop reason names from the kernel's BTF
 * (enum skb_drop_reason, never a built-in table), the module fields of
 * net_drop and tcp_retransmit records (include/sandlens/net.h), and the
 * parsers of a network namespace's /proc/<pid>/net/{netstat,snmp,dev}. */
#ifndef SANDLENS_MODULES_NET_DECODE_H
#define SANDLENS_MODULES_NET_DECODE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include "sandlens/net.h"

struct btf;

#define SL_NET_REASON_LEN 48
/* Drop reason names by value (enum skb_drop_reason of the running kernel,
 * include/net/dropreason-core.h), "SKB_DROP_REASON_" stripped
 * ("NETFILTER_DROP", "NOT_SPECIFIED"; "SKB_CONSUMED" kept whole). */
struct sl_net_reasons {
	unsigned n; /* values named (largest value + 1, at most SL_NET_MAX_REASONS) */
	char name[SL_NET_MAX_REASONS][SL_NET_REASON_LEN]; /* "" = no name */
};

/* Fill r from btf's enum skb_drop_reason (SKB_DROP_REASON_MAX and values
 * >= SL_NET_MAX_REASONS are left out). Returns the number of names, or
 * -ENOENT when btf is NULL or has no such enum. */
int sl_net_reasons_from_btf(const struct btf *btf, struct sl_net_reasons *r);
/* Name of value v: the table's, else "UNKNOWN_<v>" (a value the BTF did
 * not name, e.g. a subsystem's reason: its high 16 bits are the subsystem)
 * written into buf. Returns a pointer to the name (r's or buf). */
const char *sl_net_reason_name(const struct sl_net_reasons *r, unsigned v, char *buf, size_t len);
/* Value of a name as above (case-sensitive, with or without the
 * SKB_DROP_REASON_ prefix), or -1. */
int sl_net_reason_value(const struct sl_net_reasons *r, const char *name);

/* TCP state name (include/net/tcp_states.h: 1 ESTABLISHED .. 12
 * NEW_SYN_RECV), "" for 0, "UNKNOWN" outside. */
const char *sl_net_tcp_state_name(unsigned st);

/* Module fields of a net_drop record (reason, reason_code, family,
 * protocol, saddr, sport, daddr, dport, state, ifindex, netns (inode),
 * truncated_count, location (admin), stack (admin: kernel frames as hex
 * addresses; the caller symbolizes them with sl_net_stack_symbols)) or a
 * tcp_retransmit record (kind, segs, err, the tuple, state, netns,
 * truncated_count, stack). NULL when size is short or the type is wrong
 * (a decode error). reasons may be NULL (every reason is UNKNOWN_<v>). */
json_t *sl_net_drop_fields(const struct sl_net_event *e, size_t size, const struct sl_net_reasons *reasons);
json_t *sl_net_retrans_fields(const struct sl_net_event *e, size_t size);

/* Value of field `field` of section `section` ("TcpExt", "Tcp", "IpExt",
 * ...) in a /proc/net/netstat or /proc/net/snmp text: pairs of lines
 * "<Section>: name name ..." / "<Section>: value value ...". Returns 0
 * with *out set, or -ENOENT. */
int sl_net_proc_field(const char *text, const char *section, const char *field, uint64_t *out);

/* One device of /proc/net/dev (net/core/net-procfs.c dev_seq_printf_stats:
 * rx_dropped is rx_dropped + rx_missed_errors, rx_frame the sum of the
 * length, over, crc and frame errors; the driver's and the NIC's counters
 * from dev_get_stats, not the kernel's kfree_skb drops). */
#define SL_NET_IFNAME_LEN 16
struct sl_net_dev {
	char name[SL_NET_IFNAME_LEN];
	uint64_t rx_packets, rx_errors, rx_dropped, rx_fifo, rx_frame;
	uint64_t tx_packets, tx_errors, tx_dropped, tx_fifo, tx_carrier;
};
/* Parse a /proc/net/dev text into out[0..max). Returns devices parsed
 * (lines that do not parse are skipped), at most max. */
int sl_net_parse_dev(const char *text, struct sl_net_dev *out, int max);

#endif
