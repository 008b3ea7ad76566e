/* io module internals shared by io.c (BPF, tick, folding, records) and
 * io_snap.c (the read side: /metrics, the API view). Not a public
 * interface. */
#ifndef SANDLENS_MODULES_IO_INTERNAL_H
#define SANDLENS_MODULES_IO_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>
#include <uthash.h>

#include "agent/module.h"
#include "cgroup/attr.h"
#include "common/snapref.h"
#include "modules/io_decode.h"
#include "sandlens/io.h"

/* The module's config section (io.*; docs/IO.md "Configuration"). */
struct io_cfg {
	uint64_t slow_io_threshold_ns;
	uint64_t slow_io_rate;
	uint64_t slow_io_burst;
	uint64_t max_series;
	uint64_t max_inflight;
	uint64_t series_idle_ticks;
	uint64_t ringbuf_bytes;
	struct sl_cfg_strlist missing_tracepoints;
};

/* Who a series belongs to: a container, a pod-level cgroup or the host. */
struct io_ident {
	char id[SL_CONTAINER_ID_LEN]; /* "" for a pod-level series and the host */
	char pod_uid[SL_POD_UID_LEN];
	char runtime[SL_RUNTIME_LEN];
	struct sl_k8s_names names;
	int is_host, is_pod;
	uint64_t cgid; /* a cgroup id of it (the first resolved) */
};

/* One (identity, disk, op) series, immutable in a snapshot. */
struct io_snap_series {
	struct io_ident who;
	uint32_t dev;
	unsigned op;
	char disk[64];            /* disk name ("" unknown) */
	struct sl_io_hist tot;    /* since the series was made */
	uint64_t iv_requests, iv_bytes, iv_device_ns;
	double q_p50_ns, q_p99_ns, d_p50_ns, d_p99_ns, iv_d_p99_ns;
};

/* Page cache and writeback figures of one identity. */
struct io_snap_cg {
	struct io_ident who;
	struct sl_io_cg tot, iv;
};

/* One disk: /proc/diskstats next to what the module counted on it. */
struct io_snap_disk {
	uint32_t dev;
	int have_stat;            /* 0: not in /proc/diskstats at the tick */
	struct io_diskstat st;
	uint64_t requests[SL_IO_NOPS], bytes[SL_IO_NOPS]; /* counted on the disk since the module started */
};

struct io_snap {
	struct sl_snap base;
	uint64_t time_mono_ns, interval_ns;
	uint64_t stats[SL_IOST_MAX];
	int n, ncg, ndisk;
	struct io_snap_series *s;
	struct io_snap_cg *cg;
	struct io_snap_disk *d;
};

/* Module private state; fields below "poll loop" belong to that thread. */
struct io_priv {
	struct io_bpf *skel;
	struct sl_module *m;
	int ncpus;
	struct sl_snapref snap;

	_Atomic uint64_t truncated_total, ratelimit_expired, ringbuf_expired;
	_Atomic uint64_t not_exported, expired; /* requests: series_full, of removed series */
	_Atomic uint64_t nkeys, nseries_pub;

	/* poll loop */
	uint64_t tick_no, last_tick_ns, last_sweep_ns;
	struct io_series *series;   /* uthash by hkey */
	struct io_key *keys;        /* uthash by struct sl_io_key */
	struct io_cgser *cgseries;  /* uthash by identity key */
	struct io_cgkey *cgkeys;    /* uthash by struct sl_io_cg_key */
	unsigned nseries, ncgseries;
	struct sl_io_hist *pcpu;
	struct sl_io_cg *pcpu_cg;
	struct io_blkcg_cache *blkcg;
	struct io_devname *names;   /* uthash dev -> name, from /proc/diskstats */
	struct io_diskacc *disks;   /* uthash dev -> requests/bytes counted on it */
	uint64_t names_read_ns;
};

void io_snap_free(struct sl_snap *s);

/* API-thread entry points (io_snap.c). */
void io_write_metrics(struct sl_module *m, struct sl_prom *p);
void io_write_drops(struct sl_module *m, struct sl_prom *p);
json_t *io_view_get(struct sl_module *m, const struct sl_view_param *p, size_t n, unsigned *status, char *err,
		    size_t errlen);

enum io_fam {
	IF_QUEUE = 0,
	IF_DEVICE,
	IF_BYTES,
	IF_REQUESTS,
	IF_ERRORS,
	IF_PC_ADDED,
	IF_RA,
	IF_RA_PAGES,
	IF_DIRTY,
	IF_DIRTY_S,
	IF_DISK_INFLIGHT,
	IF_DISK_IOTICKS,
	IF_DISK_QUEUE_TIME,
	IF_DISK_COMPLETED,
	IF_DISK_REQUESTS,
	IF_KERNEL,
	IF_NOT_EXPORTED,
	IF_SERIES,
	IF_SLOW_TRUNC,
	IO_NFAM,
};
extern const struct sl_prom_family io_families[IO_NFAM];

#endif
