/* net module internals shared by net.c (BPF, tick, folding, events),
 * net_ns.c (the netns -> container map and the per-netns /proc files) and
 * net_snap.c (/metrics, the API view). Not a public interface. */
#ifndef SANDLENS_MODULES_NET_INTERNAL_H
#define SANDLENS_MODULES_NET_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>
#include <uthash.h>

#include "agent/module.h"
#include "cgroup/attr.h"
#include "common/snapref.h"
#include "modules/net_decode.h"
#include "sandlens/net.h"

/* The module's config section (net.*; docs/NET.md "Configuration"). */
struct net_cfg {
	uint64_t event_rate;
	uint64_t event_burst;
	int drop_events;
	int retransmit_events;
	int stacks;
	struct sl_cfg_strlist drop_event_skip;
	uint64_t max_keys;
	uint64_t max_containers;
	uint64_t ringbuf_bytes;
	int netns_files;
	uint64_t max_devices;
};

/* Counters of /proc/<pid>/net/{netstat,snmp} exported per netns (the
 * kernel's names; section "TcpExt" of netstat, "Tcp" of snmp). */
struct net_stat_field {
	const char *section, *name, *file; /* file: "netstat" | "snmp" */
};
#define NET_NFIELDS 18
extern const struct net_stat_field sl_net_stat_fields[NET_NFIELDS];

#define NET_MAX_DEVS 16
#define NET_MAX_NETNS 4  /* netns listed per container */
#define NET_SNAP_REASONS 64 /* non-zero drop reasons kept per series in a snapshot */

/* The per-netns /proc figures of one network namespace. */
struct net_nsfig {
	uint32_t netns;
	int have;                    /* the files were read this tick */
	uint64_t f[NET_NFIELDS];
	int fset[NET_NFIELDS];       /* the kernel has the field */
	int ndev;
	struct sl_net_dev dev[NET_MAX_DEVS];
};

/* netns inode -> a task of it and its attribution (net_ns.c). */
struct net_nsent {
	uint32_t ino; /* hash key */
	int pid;
	struct sl_task_id task;
	struct sl_attr at;
	int is_ct;          /* at names a container */
	uint64_t seen_tick; /* a task in it was seen at this /proc scan */
	struct net_nsfig fig;
	UT_hash_handle hh;
};

/* pid -> its netns inode as last read (net_ns.c): a pid's
 * /proc/<pid>/ns/net link is read when the pid first shows up and again
 * every NET_NS_RECHECK_SCANS scans (a process can move: runc init unshares
 * before it execs the container's process), not every scan for every
 * process. The "ticks" below count /proc scans. */
struct net_pident {
	int pid;            /* hash key */
	uint32_t ino;       /* 0: unreadable (gone, or not ours to read) */
	uint64_t seen_tick; /* in /proc at this tick */
	uint64_t first_tick; /* first seen (read again the next 2 scans: a
			      * child between clone and setns(2) is still in
			      * its parent's netns) */
	UT_hash_handle hh;
};
/* /proc is scanned every NET_NS_SCAN_TICKS ticks, and at once (at most
 * every NET_NS_MISS_SCAN_NS) when an event or key names a netns the map
 * lacks or whose task is gone (net_ns_lookup); a pid's link is read again
 * every NET_NS_RECHECK_SCANS scans. */
#define NET_NS_SCAN_TICKS 5
/* ... and on a miss at most this often (ns): a new netns' first drop event
 * finds its container; a netns no task of ours is in cannot make the agent
 * scan more than 5 times a second */
#define NET_NS_MISS_SCAN_NS 200000000ull
#define NET_NS_RECHECK_SCANS 2

/* One container's (or the host's) cumulative figures (poll loop). */
struct net_series {
	char id[SL_CONTAINER_ID_LEN]; /* hash key; "" = host */
	char pod_uid[SL_POD_UID_LEN];
	char runtime[SL_RUNTIME_LEN];
	struct sl_k8s_names names;
	int is_host;
	uint64_t retrans_segs, retrans_skbs, retrans_synack, rst_sent, rst_recv;
	uint64_t drops[SL_NET_MAX_REASONS];
	uint64_t last_tick; /* last tick with a live netns or a counter change */
	UT_hash_handle hh;
};

struct net_snap_series {
	char id[SL_CONTAINER_ID_LEN];
	char pod_uid[SL_POD_UID_LEN];
	char runtime[SL_RUNTIME_LEN];
	struct sl_k8s_names names;
	int is_host;
	uint64_t retrans_segs, retrans_skbs, retrans_synack, rst_sent, rst_recv, drops_total;
	int nreasons;
	uint32_t reason[NET_SNAP_REASONS];
	uint64_t reason_count[NET_SNAP_REASONS];
	int nns;
	struct net_nsfig ns[NET_MAX_NETNS];
};

struct net_snap {
	struct sl_snap hdr;
	uint64_t time_mono_ns, interval_ns;
	uint64_t stats[SL_NST_MAX];
	int ncpus;
	struct sl_net_softirq *softirq; /* [ncpus][SL_NET_NVEC] */
	uint64_t nnetns;
	int n;
	struct net_snap_series s[];
};

struct net_key {
	struct sl_net_key k; /* hash key */
	struct net_series *s;
	struct sl_net_tcp last_tcp;
	uint64_t last_drop;
	uint64_t seen_tick, resolved_tick;
	/* attributed through its netns' entry (no container socket cgroup):
	 * resolved again when the netns map changed since (ns_gen), since a
	 * netns inode number is reused once the netns is gone */
	int via_ns;
	uint64_t ns_gen;
	UT_hash_handle hh;
};

struct sl_ksyms;

/* Module private state. Below "poll loop": the poll-loop thread only. */
struct net_priv {
	struct net_bpf *skel;
	struct sl_module *m;
	int ncpus;
	struct sl_snapref snap;
	struct sl_net_reasons reasons; /* immutable after init */
	uint32_t host_netns;           /* the agent's own */

	_Atomic uint64_t truncated_total[2]; /* Σ truncated_count delivered [drop, retrans] */
	_Atomic uint64_t not_exported;       /* counts of keys with no series (series table full) */

	/* poll loop */
	uint64_t tick_no, last_tick_ns;
	uint64_t ns_scans, ns_scan_tick; /* /proc scans done, tick of the last (net_ns.c) */
	uint64_t ns_scan_ns;             /* CLOCK_MONOTONIC of the last scan */
	uint64_t ns_gen; /* bumped when a netns entry is dropped or points at another task */
	struct net_key *tcp_keys, *drop_keys;
	struct net_series *series;
	unsigned nseries;
	struct net_nsent *ns;
	struct net_pident *pids;
	struct sl_net_tcp *pcpu_tcp;
	uint64_t *pcpu_u64;
	struct sl_net_softirq *pcpu_sirq;
	const struct sl_ksyms *ksyms; /* shared (sl_ksyms_shared_get), got at the first event with a stack */
	int ksyms_tried;
};

/* net_ns.c (poll loop), each tick: every NET_NS_SCAN_TICKS ticks walk
 * /proc, map every non-host netns to a task of it (preferring one whose
 * cgroup is a container's), drop netns no task is in any more; with
 * read_files, read each mapped container netns' netstat, snmp and dev
 * files into its fig (every tick). A pid's netns link is read when it is
 * new and every NET_NS_RECHECK_SCANS scans (struct net_pident). */
void net_ns_refresh(struct net_priv *np, int read_files, unsigned max_devs);
/* The entry of netns ino, or NULL. */
struct net_nsent *net_ns_find(struct net_priv *np, uint32_t ino);
/* net_ns_find, and when the netns is unknown (not the host's) or the task
 * its entry names is gone (the netns may have died and its inode number
 * been given to a new one), one /proc scan first if none ran in the last
 * NET_NS_MISS_SCAN_NS: a new container's first events find it. NULL when
 * no task of ours is in it. */
struct net_nsent *net_ns_lookup(struct net_priv *np, uint32_t ino);
void net_ns_free_all(struct net_priv *np);
/* Read the files of netns through /proc/<pid>/net into fig (0, -errno). */
int net_ns_read_files(int pid, uint32_t ino, struct net_nsfig *fig, unsigned max_devs);

/* net_snap.c (API threads). */
void net_write_metrics(struct sl_module *m, struct sl_prom *p);
void net_write_drops(struct sl_module *m, struct sl_prom *p);
json_t *net_view_get(struct sl_module *m, const struct sl_view_param *p, size_t n, unsigned *status, char *err,
		     size_t errlen);

enum net_fam {
	NF_RETRANS = 0,
	NF_RESETS,
	NF_DROPS,
	NF_SOFTIRQ,
	NF_NETSTAT,
	NF_DEV_DROPPED,
	NF_DEV_ERRORS,
	NF_DEV_PACKETS,
	NF_SEEN,
	NF_MAP_FULL,
	NF_SIRQ_UNMATCHED,
	NF_NETNS,
	NF_SERIES,
	NET_NFAM,
};
extern const struct sl_prom_family sl_net_families[NET_NFAM];

#endif
