/* mem module internals shared by mem.c (BPF, tick, folding) and
 * mem_snap.c (snapshot publication, /metrics, API view, series). Not a
 * public interface. */
#ifndef SANDLENS_MODULES_MEM_INTERNAL_H
#define SANDLENS_MODULES_MEM_INTERNAL_H

#include "common/snapref.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <uthash.h>

#include "agent/module.h"
#include "cgroup/attr.h"
#include "sandlens/mem.h"

#define MEM_MAX_CGIDS 4 /* cgroup ids listed per container */

/* The module's config section (mem.*; docs/MEM.md "Configuration"). */
struct mem_cfg {
	uint64_t stall_threshold_ns;
	uint64_t stall_rate;
	uint64_t stall_burst;
	uint64_t max_cgroups;
	uint64_t max_containers;
	uint64_t series_idle_ticks;
	uint64_t ringbuf_bytes;
	struct sl_cfg_strlist missing_tracepoints;
};

/* Figures of one kind (enum sl_mem_hist_kind) of one series. */
struct mem_fig {
	uint64_t slots[SL_MEM_SLOTS];
	uint64_t sum_ns, max_ns, nr_scanned, nr_reclaimed;
};

/* Immutable per-series figures published each tick. */
struct mem_snap_series {
	char id[SL_CONTAINER_ID_LEN]; /* "" for a pod-level series and the host series */
	char pod_uid[SL_POD_UID_LEN];
	char runtime[SL_RUNTIME_LEN];
	struct sl_k8s_names names;
	int is_host, is_pod; /* is_pod: the pod-level series of pod_uid */
	int live;            /* it has a live cgroup (a key in mem_hist) */
	int ncg;
	uint64_t cgids[MEM_MAX_CGIDS];
	struct mem_fig tot[SL_MEM_H_KINDS]; /* since the series was created */
	struct mem_fig iv[SL_MEM_H_KINDS];  /* last interval */
	double iv_p99_ns[SL_MEM_H_KINDS];
	double p50_ns[SL_MEM_H_KINDS], p99_ns[SL_MEM_H_KINDS];
};

struct mem_snap {
	struct sl_snap h; /* first: published through mp->snap (common/snapref.h) */
	uint64_t time_mono_ns, interval_ns;
	/* kernel counters read at the same tick (mem_stats) */
	uint64_t stats[SL_MST_MAX];
	uint64_t nodes_n;
	struct sl_mem_node nodes[SL_MEM_MAX_NODES];
	int n;
	struct mem_snap_series s[];
};

/* Module private state. Fields below "poll loop" are touched only by the
 * poll-loop thread (init, tick, ring buffer callback). */
struct mem_priv {
	struct mem_bpf *skel;
	struct sl_module *m;
	int ncpus;

	struct sl_snapref snap; /* the published struct mem_snap */

	/* self-metrics (atomics: read by API threads) */
	_Atomic uint64_t truncated_total;     /* Σ truncated_count delivered */
	_Atomic uint64_t ratelimit_expired;   /* pending lost with idle buckets */
	_Atomic uint64_t ringbuf_expired;     /* of those, lost to a full ring buffer */
	_Atomic uint64_t not_counted[SL_MEM_H_KINDS][2]; /* [kind][0 series_full, 1 evicted] */
	_Atomic uint64_t expired[SL_MEM_H_KINDS];        /* runs of expired series (exported before) */
	_Atomic uint64_t nkeys, nseries_pub;

	/* poll loop */
	uint64_t tick_no, last_tick_ns, last_sweep_ns;
	struct mem_key *keys;       /* uthash by struct sl_mem_key */
	struct mem_series *series;  /* uthash by id ("" = host) */
	unsigned nseries;           /* container series (host not counted) */
	struct sl_mem_hist *pcpu;   /* ncpus scratch values */
};

/* Snapshot references (common/snapref.h): get takes a reference (NULL
 * before the first tick); put drops it and the last one frees. */
struct mem_snap *mem_snap_get(struct mem_priv *mp);
void mem_snap_put(struct mem_snap *s);
/* Replace the published snapshot (poll-loop thread). */
void mem_snap_publish(struct mem_priv *mp, struct mem_snap *s);

/* API-thread entry points (mem_snap.c), referenced by the ops in mem.c. */
void mem_write_metrics(struct sl_module *m, struct sl_prom *p);
void mem_write_drops(struct sl_module *m, struct sl_prom *p);
json_t *mem_view_get(struct sl_module *m, const struct sl_view_param *p, size_t n, unsigned *status,
		     char *err, size_t errlen);
int mem_read_series(struct sl_module *m, unsigned idx, struct sl_series_point *out, size_t max);

/* Declared Prometheus families (mem_snap.c), by index. */
enum mem_fam {
	MF_DIRECT = 0, /* histograms: one per enum sl_mem_hist_kind, in its order */
	MF_MEMCG,
	MF_COMPACT,
	MF_THROTTLE,
	MF_SCANNED,
	MF_RECLAIMED,
	MF_KSWAPD_WAKE,
	MF_KSWAPD_REQ,
	MF_THROTTLED,
	MF_THROTTLED_S,
	MF_RUNS,
	MF_NOT_COUNTED,
	MF_EXPIRED,
	MF_CGROUPS,
	MF_SERIES,
	MF_MEMCG_GUESS,
	MF_STALL_SEEN,
	MF_STALL_RL,
	MF_STALL_TRUNC,
	MF_RB_FAIL,
	MEM_NFAM,
};
extern const struct sl_prom_family sl_mem_families[MEM_NFAM];

#endif
