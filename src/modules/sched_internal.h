/* sched module internals shared by sched.c (BPF, tick) and sched_snap.c
 * (snapshot publication, /metrics, API JSON). Not a public interface. */
#ifndef SANDLENS_MODULES_SCHED_INTERNAL_H
#define SANDLENS_MODULES_SCHED_INTERNAL_H

/* Removed cgroups reaped per tick at most (the rest wait for the next one). */
#define SL_SCHED_GONE_BATCH 1024

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <uthash.h>

#include "cgroup/attr.h"
#include "cgroup/cgstat.h"
#include "sandlens/sched.h"
#include "modules/sched.h"

#define SCHED_TOP_NEIGHBOURS 5   /* neighbours per container in a snapshot */
#define SCHED_NEIGH_TRACK 32     /* neighbours tracked per container */
#define SCHED_MAX_CGIDS 4        /* cgroup ids listed per container */

/* One neighbour of a series: waits of the series ended by its tasks. */
struct sched_neigh {
	char id[SL_CONTAINER_ID_LEN];
	char pod_uid[SL_POD_UID_LEN];
	char runtime[SL_RUNTIME_LEN];
	int is_host;
	uint64_t wait_ns, count;       /* since first seen */
	uint64_t iv_wait_ns, iv_count; /* last interval */
};

/* Immutable per-series figures published each tick. */
struct sched_snap_series {
	char id[SL_CONTAINER_ID_LEN]; /* "" for the host series */
	char pod_uid[SL_POD_UID_LEN];
	char runtime[SL_RUNTIME_LEN];
	struct sl_k8s_names names;
	int is_host;
	int ncg;
	uint64_t cgids[SCHED_MAX_CGIDS];
	/* cumulative since the series was created */
	uint64_t slots[SL_SCHED_SLOTS];
	uint64_t sum_ns, class_ns[3];
	/* last interval */
	uint64_t iv_count, iv_sum_ns, iv_class_ns[3], iv_max_ns;
	double iv_p50_ns, iv_p90_ns, iv_p99_ns;
	int64_t iv_cpu_ns; /* CPU time used in the interval, -1 unknown */
	/* throttling (cpu.stat), has_throttle = 0 when unknown */
	int has_throttle;
	uint64_t nr_periods, nr_throttled, throttled_ns;
	uint64_t iv_nr_throttled, iv_throttled_ns;
	int nneigh;
	struct sched_neigh neigh[SCHED_TOP_NEIGHBOURS];
};

struct sched_snap {
	_Atomic int refs;
	uint64_t time_mono_ns;
	uint64_t interval_ns;
	int n;
	struct sched_snap_series s[];
};

struct sched_priv;

/* Snapshot references: get takes a reference under the publication lock
 * (held only for the pointer load and the increment), put drops it and
 * frees the snapshot with the last reference. */
struct sched_snap *sched_snap_get(struct sched_priv *sp);
void sched_snap_put(struct sched_snap *s);
/* Replace the published snapshot (poll-loop thread); the old one is freed
 * when its last reader is done. */
void sched_snap_publish(struct sched_priv *sp, struct sched_snap *s);

/* Module private state. Fields below "poll loop" are touched only by the
 * poll-loop thread (init, tick, ring buffer callback). */
struct sched_priv {
	struct sched_bpf *skel;
	struct sl_module *m;                /* the module (services) */
	int sched_info;                     /* waits timed from sched_info (sched_switch_si) */
	const struct sl_sched_cfg *cfg;     /* its config section */
	int ncpus;
	char cpu_v1[256], cpuacct_v1[256]; /* v1 cpu / cpuacct mounts ("" none) */

	pthread_mutex_t snap_lock;
	struct sched_snap *snap;

	/* self-metrics */
	_Atomic uint64_t truncated_total;    /* Σ truncated_count delivered */
	_Atomic uint64_t ratelimit_expired;  /* pending lost with removed keys */
	_Atomic uint64_t series_dropped;     /* keys not exported: max_containers reached */
	_Atomic uint64_t watch_full;         /* watched keys not inserted: map full */
	_Atomic uint64_t watch_entries;      /* entries in the kernel's sched_watch (last tick) */
	_Atomic uint64_t nkeys, npairs;      /* entries in the kernel maps, last tick */

	/* poll loop */
	uint64_t tick_no, last_tick_ns;
	struct sched_key *keys;     /* uthash by struct sl_sched_key */
	struct sched_pairst *pairs; /* uthash by struct sl_sched_pair_key */
	/* removed cgroups collected this tick (sched_gone), sorted */
	struct sl_sched_gone gone[SL_SCHED_GONE_BATCH];
	struct sched_series *series;/* uthash by id ("" = host) */
	unsigned nseries;
	struct sl_sched_hist *pcpu; /* ncpus scratch values */
	struct sl_sched_pair *pcpu_pair;
	/* read_hist's buffers, made at its first tick (sched_slot and
	 * sched_hist sizes are fixed once loaded): the keys of sched_slot,
	 * their slots, and slot -> key index */
	struct sl_sched_key *rd_keys;
	uint32_t *rd_idx;
	int32_t *rd_rev;
	/* sched_hist slots (sched_slots.c): released this tick (their key left
	 * sched_slot after its last read), and released a tick ago (given
	 * back at the next tick); each holds at most max_cgroups indices */
	uint32_t *slot_rel, *slot_back;
	size_t nslot_rel, nslot_back;
	struct sl_sched_hist *pcpu_zero; /* ncpus zero values */
};

/* sched_hist slot recycling (sched_slots.c), poll-loop thread. */
/* Fill sched_free with every slot index 0..max_cgroups-1 (before attach).
 * Returns 0, or -errno (allocation, map update). */
int sched_slots_init(struct sched_priv *sp);
/* A slot whose key left sched_slot: given back at the tick after next
 * sched_slots_tick, so a program that read the old index just before has
 * long finished. */
void sched_slot_release(struct sched_priv *sp, uint32_t slot);
/* Start of a tick: zero the slots released during the previous tick on
 * every CPU and push them to sched_free; this tick's releases wait. */
void sched_slots_tick(struct sched_priv *sp);
void sched_slots_free(struct sched_priv *sp);

#endif
