/* mem module, user half: declarations (config, kinds, hooks, ring buffer,
 * view, series), load/attach of bpf/mem.bpf.c with per-tracepoint probing,
 * mem_stall decoding into events, and every tick the folding of the
 * kernel's per-cgroup histograms into per-container series (attribution on
 * the poll-loop thread) published as an immutable snapshot (mem_snap.c).
 * Definitions of every figure: docs/MEM.md. */
#include "modules/mem.h"
#include "modules/mem_decode.h"
#include "modules/mem_hist.h"
#include "modules/mem_internal.h"
#include "sandlens/token_bucket.h"
#include "mem.skel.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Keys not attributed to a container are re-resolved this often (ticks). */
#define RERESOLVE_TICKS 5
/* Stall buckets idle this long are removed (their pending counted). */
#define BUCKET_IDLE_NS (10ULL * SL_NSEC_PER_SEC)
#define GONE_BATCH 1024

/* ---------- declarations ---------- */

#define F(f) SL_CFG_FIELD(struct mem_cfg, f)
static const struct sl_cfg_key mem_keys[] = {
	{"stall_threshold", SL_CFG_DURATION_NS, F(stall_threshold_ns), "50ms", 1000ULL, 60ULL * SL_NSEC_PER_SEC,
	 "a reclaim or compaction run at least this long is a mem_stall event (1us..60s)"},
	{"stall_rate", SL_CFG_UINT, F(stall_rate), "5", 0, 100000,
	 "mem_stall events per second per cgroup pair (token bucket; 0 = no limit)"},
	{"stall_burst", SL_CFG_UINT, F(stall_burst), "10", 1, 100000, "mem_stall token bucket size per cgroup pair"},
	{"max_cgroups", SL_CFG_UINT, F(max_cgroups), "1024", 16, 65536,
	 "kernel histogram entries (cgroup pair x kind) and stall buckets"},
	{"max_containers", SL_CFG_UINT, F(max_containers), "512", 1, 65536,
	 "exported container series; the longest-idle dead series is evicted first"},
	{"series_idle_ticks", SL_CFG_UINT, F(series_idle_ticks), "300", 1, 1000000,
	 "a series whose cgroups are all gone is removed after this many ticks without a run (as sched's)"},
	{"ringbuf_size", SL_CFG_BYTES, F(ringbuf_bytes), "64KiB", 4096, 64ULL << 20,
	 "mem_events ring buffer size (a power of two)"},
	{"missing_tracepoints", SL_CFG_STRLIST, F(missing_tracepoints), "", 0, 0,
	 "testing: tracepoints (e.g. mm_vmscan_throttled) to treat as absent from the kernel: the degraded path; "
	 "only the module's own"},
};
#undef F

static const struct sl_field stall_fields[] = {
	{"tid", SL_FT_UINT, 0, "thread id of the stalled task"},
	{"kind", SL_FT_STR, 0, "direct_reclaim | memcg_reclaim | compaction"},
	{"duration_ns", SL_FT_UINT, 0, "length of the run, ns (begin to end tracepoint)"},
	{"nr_scanned", SL_FT_UINT, 0, "pages scanned in the run (lru_shrink_inactive)"},
	{"nr_reclaimed", SL_FT_UINT, 0, "pages reclaimed (the _end tracepoint); 0 for compaction"},
	{"order", SL_FT_INT, 0, "allocation order (2^order pages)"},
	{"gfp_flags", SL_FT_UINT, 0, "gfp mask of the allocation (kernel bits)"},
	{"truncated_count", SL_FT_UINT, 0, "stalls of this cgroup pair not delivered since the last one"},
	{"memcg", SL_FT_OBJ, 0,
	 "{cgroup_id, hierarchy, source, container_id, pod_uid, runtime}: the memcg reclaimed (inferred, docs/MEM.md)"},
	{"task", SL_FT_OBJ, SL_FF_OPTIONAL,
	 "{pid, comm, cgroup_id, container_id, pod_uid, runtime}: the task that ran the reclaim, when the subject is "
	 "the memcg"},
	{"compaction_status", SL_FT_STR, SL_FF_OPTIONAL, "mm_compaction_end status name (compaction only)"},
	{"compaction_status_code", SL_FT_INT, SL_FF_OPTIONAL, "its enum compact_result number"},
};

static const struct sl_event_kind mem_kinds[] = {
	{.name = "mem_stall",
	 .severity = SL_SEV_WARNING,
	 .fields = stall_fields,
	 .nfields = sizeof(stall_fields) / sizeof(stall_fields[0]),
	 .details = "{kind} {duration_ns:dur} scanned={nr_scanned} reclaimed={nr_reclaimed} "
		    "memcg={memcg.cgroup_id}({memcg.source}){?memcg.container_id} of {memcg.container_id}{/}"
		    "{?task.pid} by {task.pid}({task.comm}){/}{?truncated_count} +{truncated_count} suppressed{/}",
	 .doc = "one reclaim or compaction run took at least mem.stall_threshold"},
};
#define K_STALL 0

/* Hooks: tracepoint name, category, the figure it feeds; pairs share a figure. */
struct mem_hook {
	const char *tp, *cat, *figure;
	int pair; /* index of the other half of a begin/end pair, -1 none */
};
static const struct mem_hook mem_hook_tab[] = {
	{"mm_vmscan_direct_reclaim_begin", "vmscan", "direct reclaim latency", 1},
	{"mm_vmscan_direct_reclaim_end", "vmscan", "direct reclaim latency", 0},
	{"mm_vmscan_memcg_reclaim_begin", "vmscan", "memcg reclaim latency", 3},
	{"mm_vmscan_memcg_reclaim_end", "vmscan", "memcg reclaim latency", 2},
	{"mm_vmscan_lru_shrink_inactive", "vmscan", "pages scanned per run", -1},
	{"mm_compaction_try_to_compact_pages", "compaction", "direct compaction latency", -1},
	{"mm_compaction_begin", "compaction", "direct compaction latency", 7},
	{"mm_compaction_end", "compaction", "direct compaction latency", 6},
	{"mm_vmscan_kswapd_wake", "vmscan", "kswapd wake-ups per node", -1},
	{"mm_vmscan_wakeup_kswapd", "vmscan", "kswapd wake-up requests per node", -1},
	{"mm_vmscan_throttled", "vmscan", "reclaim throttling", -1},
	{"cgroup_rmdir", "cgroup", "removed cgroups' entries reaped", -1},
};
#define NHOOKS (sizeof(mem_hook_tab) / sizeof(mem_hook_tab[0]))

static int mem_cfg_check(const void *cfg, char *err, size_t errlen)
{
	const struct mem_cfg *c = cfg;

	if (c->ringbuf_bytes & (c->ringbuf_bytes - 1)) {
		snprintf(err, errlen, "mem.ringbuf_size: %llu is not a power of two",
			 (unsigned long long)c->ringbuf_bytes);
		return -1;
	}
	/* only tracepoints the module hooks: a typo would test nothing */
	for (unsigned i = 0; i < c->missing_tracepoints.n && i < SL_CFG_STRLIST_MAX; i++) {
		const char *tp = c->missing_tracepoints.v[i];
		unsigned h = 0;
		while (h < NHOOKS && strcmp(mem_hook_tab[h].tp, tp))
			h++;
		if (h < NHOOKS)
			continue;
		size_t n = (size_t)snprintf(err, errlen, "mem.missing_tracepoints[%u]: '%s' is not a mem tracepoint (known:",
					    i, tp);
		for (h = 0; h < NHOOKS && n < errlen; h++)
			n += (size_t)snprintf(err + n, errlen - n, "%s %s", h ? "," : "", mem_hook_tab[h].tp);
		if (n < errlen)
			snprintf(err + n, errlen - n, ")");
		return -1;
	}
	return 0;
}

static const struct sl_hook_decl mem_hooks[NHOOKS] = {
	{"tp_btf/mm_vmscan_direct_reclaim_begin", "direct reclaim latency per cgroup"},
	{"tp_btf/mm_vmscan_direct_reclaim_end", "direct reclaim latency per cgroup"},
	{"tp_btf/mm_vmscan_memcg_reclaim_begin", "memcg reclaim latency per memcg"},
	{"tp_btf/mm_vmscan_memcg_reclaim_end", "memcg reclaim latency per memcg"},
	{"tp_btf/mm_vmscan_lru_shrink_inactive", "pages scanned per reclaim run"},
	{"tp_btf/mm_compaction_try_to_compact_pages", "direct compaction (arms the task)"},
	{"tp_btf/mm_compaction_begin", "direct compaction latency per cgroup"},
	{"tp_btf/mm_compaction_end", "direct compaction latency per cgroup"},
	{"tp_btf/mm_vmscan_kswapd_wake", "kswapd wake-ups per node"},
	{"tp_btf/mm_vmscan_wakeup_kswapd", "kswapd wake-up requests per node"},
	{"tp_btf/mm_vmscan_throttled", "reclaim throttling per cgroup and node"},
	{"tp_btf/cgroup_rmdir", "removed cgroups' entries reaped"},
};

static int on_record(void *ctx, void *data, size_t size);
static const struct sl_ringbuf_decl mem_ringbufs[] = {{"mem_events", on_record}};

static const struct sl_api_view mem_views[] = {
	{.path = "", .admin_only = 0, .params = NULL, .nparams = 0, .get = mem_view_get,
	 .doc = "per-container reclaim, compaction and throttling figures, per-node kswapd (docs/MEM.md)"},
};

static const struct sl_series_decl mem_series[] = {
	{"mem_memcg_reclaim_p99_seconds", "seconds", "p99 of memcg reclaim runs of the container's memcg, last interval"},
	{"mem_stall_seconds", "seconds",
	 "time the container's tasks spent in direct reclaim, memcg reclaim and direct compaction, last interval"},
};

/* ---------- decoding ---------- */

static int on_record(void *ctx, void *data, size_t size)
{
	struct sl_module *m = ctx;
	struct mem_priv *mp = m->priv;
	const struct sl_mem_stall_event *e = data;
	const struct sl_cg_mounts *cm = sl_module_mounts(m);
	struct sl_subject subj;
	struct sl_attr at;
	json_t *o, *mc;
	int known;

	if (!(o = sl_mem_stall_fields(e, size))) {
		sl_module_decode_error(m);
		return 0;
	}
	/* The memcg is known when its id is on a hierarchy the attribution
	 * indexes: v2, or the v1 hierarchy of attribution.v1_controller
	 * (memory by default). Its container: the hybrid rule on the pair as
	 * the histograms key it ({id, 0} or {0, v1 id}). */
	known = e->memcg_id && (e->memcg_hierarchy_id == 0 ||
				(cm && cm->v1_hierarchy_id > 0 && (int)e->memcg_hierarchy_id == cm->v1_hierarchy_id));
	mc = json_object_get(o, "memcg");
	memset(&at, 0, sizeof(at));
	if (known) {
		if (e->memcg_v1)
			sl_module_resolve_cgroup(m, 0, e->memcg_id, &at, NULL);
		else
			sl_module_resolve_cgroup(m, e->memcg_id, 0, &at, NULL);
	}
	/* a container's memcg, a pod's (a pod-level cgroup or another
	 * non-container cgroup under a pod: its pod uid, no container id),
	 * else the host's */
	int in_pod = at.is_container == SL_YES || (at.is_container == SL_NO && at.pod_uid[0]);
	json_object_set_new(mc, "container_id", json_string(at.is_container == SL_YES ? at.container_id : ""));
	json_object_set_new(mc, "pod_uid", json_string(in_pod ? at.pod_uid : ""));
	json_object_set_new(mc, "runtime", json_string(in_pod ? at.runtime : known ? "host" : "unknown"));
	atomic_fetch_add(&mp->truncated_total, e->truncated_count);
	memset(&subj, 0, sizeof(subj));
	if (e->kind == SL_MEM_STALL_MEMCG_RECLAIM && known) {
		/* the subject is the memcg being reclaimed (SYS-1), the task
		 * that ran the reclaim is a field */
		subj.kind = SL_SUBJ_CGROUP;
		subj.cgroup_id = e->memcg_id;
		subj.cgroup_hier = e->memcg_v1 ? SL_CG_V1 : SL_CG_V2;
		json_object_set_new(o, "task", sl_module_task_json(m, &e->task));
	} else {
		subj.kind = SL_SUBJ_TASK;
		subj.task = &e->task;
	}
	sl_module_emit(m, K_STALL, e->hdr.ts_ns, &subj, o, 1 + e->truncated_count);
	return 0;
}

/* ---------- series and keys (poll loop) ---------- */

struct mem_series {
	char key[SL_CONTAINER_ID_LEN]; /* hash key: container id, "pod/<uid>", "" = host */
	char id[SL_CONTAINER_ID_LEN]; /* container id; "" for a pod-level series and the host */
	char pod_uid[SL_POD_UID_LEN];
	char runtime[SL_RUNTIME_LEN];
	struct sl_k8s_names names; /* Kubernetes names ("" until found) */
	int is_host, is_pod;
	int ncg, nkeys;
	uint64_t cgids[MEM_MAX_CGIDS];
	struct mem_fig tot[SL_MEM_H_KINDS], iv[SL_MEM_H_KINDS];
	uint64_t last_active_tick;
	UT_hash_handle hh;
};

struct mem_key {
	struct sl_mem_key k; /* hash key */
	struct mem_series *s; /* NULL: not exported (series table full) */
	struct sl_mem_hist last;
	uint64_t seen_tick, resolved_tick;
	UT_hash_handle hh;
};

static void fig_add(struct mem_fig *f, const struct sl_mem_hist *d)
{
	for (unsigned k = 0; k < SL_MEM_SLOTS; k++)
		f->slots[k] += d->slots[k];
	f->sum_ns += d->sum_ns;
	f->nr_scanned += d->nr_scanned;
	f->nr_reclaimed += d->nr_reclaimed;
	if (d->max_ns > f->max_ns)
		f->max_ns = d->max_ns;
}

/* Remove a series (no key points to it: nkeys <= 0). */
static void series_free(struct mem_priv *mp, struct mem_series *s)
{
	HASH_DEL(mp->series, s);
	if (!s->is_host)
		mp->nseries--;
	free(s);
}

/* Series whose cgroups are all gone (no live key) and that had no run for
 * mem.series_idle_ticks ticks are removed, as sched's (docs/SCHED.md):
 * their runs were exported while they lived and stay accounted as
 * expired, not as not counted. */
static void series_expire(struct mem_priv *mp)
{
	const struct mem_cfg *c = sl_module_cfg(mp->m);
	struct mem_series *s, *tmp;

	HASH_ITER(hh, mp->series, s, tmp) {
		if (s->nkeys > 0 || mp->tick_no - s->last_active_tick <= c->series_idle_ticks)
			continue;
		for (unsigned k = 0; k < SL_MEM_H_KINDS; k++)
			atomic_fetch_add(&mp->expired[k], sl_mem_count(s->tot[k].slots));
		series_free(mp, s);
	}
}

/* Evict the container series idle longest among those with no live key;
 * its runs are counted as not exported (evicted). Returns 1 if one went. */
static int series_evict(struct mem_priv *mp)
{
	struct mem_series *s, *tmp, *best = NULL;

	HASH_ITER(hh, mp->series, s, tmp)
		if (!s->is_host && s->nkeys <= 0 && (!best || s->last_active_tick < best->last_active_tick))
			best = s;
	if (!best)
		return 0;
	for (unsigned k = 0; k < SL_MEM_H_KINDS; k++)
		atomic_fetch_add(&mp->not_counted[k][1], sl_mem_count(best->tot[k].slots));
	series_free(mp, best);
	return 1;
}

/* The series of an attribution: its container's; a pod-level series for a
 * cgroup of a pod that is not a container (the pod's own cgroup, whose
 * limit a pod-level memcg reclaim hits; docs/MEM.md "Series"); else the
 * host's. */
static struct mem_series *series_get(struct mem_priv *mp, const struct sl_attr *at)
{
	const struct mem_cfg *c = sl_module_cfg(mp->m);
	struct mem_series *s;
	int pod = at->is_container == SL_NO && at->pod_uid[0];
	int host = at->is_container != SL_YES && !pod;
	const char *id = host || pod ? "" : at->container_id;
	char key[SL_CONTAINER_ID_LEN];

	if (pod) /* '/' is in no container id (a directory name) */
		snprintf(key, sizeof(key), "pod/%s", at->pod_uid);
	else
		snprintf(key, sizeof(key), "%s", id);
	HASH_FIND_STR(mp->series, key, s);
	if (s) {
		if (!host && !s->names.pod[0] && at->names.pod[0])
			s->names = at->names; /* found after the series was made */
		return s;
	}
	if (!host && mp->nseries >= c->max_containers && !series_evict(mp))
		return NULL;
	if (!(s = calloc(1, sizeof(*s))))
		return NULL;
	snprintf(s->key, sizeof(s->key), "%s", key);
	snprintf(s->id, sizeof(s->id), "%s", id);
	s->is_host = host;
	s->is_pod = pod;
	snprintf(s->runtime, sizeof(s->runtime), "%s", host ? "host" : at->runtime);
	if (!host) {
		snprintf(s->pod_uid, sizeof(s->pod_uid), "%s", at->pod_uid);
		s->names = at->names;
	}
	s->last_active_tick = mp->tick_no;
	HASH_ADD_STR(mp->series, key, s);
	if (!host)
		mp->nseries++;
	return s;
}

static void key_resolve(struct mem_priv *mp, struct mem_key *ks)
{
	struct sl_attr at;
	struct mem_series *s;
	int hier = -1;
	uint64_t id;

	memset(&at, 0, sizeof(at));
	id = sl_module_resolve_cgroup(mp->m, ks->k.cgroup_id, ks->k.cgroup_v1_id, &at, &hier);
	ks->resolved_tick = mp->tick_no;
	s = series_get(mp, &at);
	if (s == ks->s)
		return;
	if (ks->s)
		ks->s->nkeys--;
	ks->s = s;
	if (!s)
		return;
	s->nkeys++;
	if (s->ncg < MEM_MAX_CGIDS && id) {
		int dup = 0;
		for (int i = 0; i < s->ncg; i++)
			dup |= s->cgids[i] == id;
		if (!dup)
			s->cgids[s->ncg++] = id;
	}
}

static struct mem_key *key_get(struct mem_priv *mp, const struct sl_mem_key *k)
{
	struct mem_key *ks;

	HASH_FIND(hh, mp->keys, k, sizeof(*k), ks);
	if (ks)
		return ks;
	if (!(ks = calloc(1, sizeof(*ks))))
		return NULL;
	ks->k = *k;
	HASH_ADD(hh, mp->keys, k, sizeof(ks->k), ks);
	key_resolve(mp, ks);
	return ks;
}

static void key_free(struct mem_priv *mp, struct mem_key *ks)
{
	if (ks->s)
		ks->s->nkeys--;
	HASH_DEL(mp->keys, ks);
	free(ks);
}

/* ---------- tick ---------- */

static int gone_cmp(const void *a, const void *b)
{
	const struct sl_mem_gone *x = a, *y = b;
	if (x->v1 != y->v1)
		return x->v1 < y->v1 ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int key_gone(const struct sl_mem_gone *g, size_t n, const struct sl_mem_key *k)
{
	struct sl_mem_gone a = {.id = k->cgroup_id, .v1 = 0}, b = {.id = k->cgroup_v1_id, .v1 = 1};
	return (k->cgroup_id && bsearch(&a, g, n, sizeof(a), gone_cmp)) ||
	       (k->cgroup_v1_id && bsearch(&b, g, n, sizeof(b), gone_cmp));
}

static void read_hist(struct mem_priv *mp)
{
	int fd = bpf_map__fd(mp->skel->maps.mem_hist);
	struct sl_mem_key key, next, *prev = NULL;
	uint64_t n = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct sl_mem_hist sum, d;
		struct mem_key *ks;
		uint64_t cnt;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, mp->pcpu))
			continue;
		n++;
		sl_mem_fold_cpus(mp->pcpu, mp->ncpus, &sum);
		if (!(ks = key_get(mp, &key)))
			continue;
		ks->seen_tick = mp->tick_no;
		sl_mem_delta(&sum, &ks->last, &d);
		ks->last = sum;
		if ((!ks->s || ks->s->is_host || !ks->s->names.pod[0]) && ks->resolved_tick + RERESOLVE_TICKS <= mp->tick_no)
			key_resolve(mp, ks);
		cnt = 0;
		for (unsigned k = 0; k < SL_MEM_SLOTS; k++)
			cnt += d.slots[k];
		if (key.kind >= SL_MEM_H_KINDS)
			continue;
		if (!ks->s) {
			atomic_fetch_add(&mp->not_counted[key.kind][0], cnt);
			continue;
		}
		fig_add(&ks->s->tot[key.kind], &d);
		fig_add(&ks->s->iv[key.kind], &d);
		if (cnt)
			ks->s->last_active_tick = mp->tick_no;
	}
	atomic_store(&mp->nkeys, n);
}

/* Removed cgroups: collect before the read, delete their entries after it
 * (their figures are final), then forget keys no longer in the map. */
static void reap(struct mem_priv *mp, struct sl_mem_gone *g, size_t ng)
{
	int hfd = bpf_map__fd(mp->skel->maps.mem_hist), gfd = bpf_map__fd(mp->skel->maps.mem_gone);
	int bfd = bpf_map__fd(mp->skel->maps.mem_buckets);
	struct mem_key *ks, *tmp;
	struct sl_exec_bucket b;

	if (ng) {
		HASH_ITER(hh, mp->keys, ks, tmp)
			if (key_gone(g, ng, &ks->k)) {
				bpf_map_delete_elem(hfd, &ks->k);
				ks->seen_tick = 0;
			}
		/* stall buckets are keyed by the task pair with kind 0 */
		struct sl_mem_key k, nk, *pk = NULL;
		while (bpf_map_get_next_key(bfd, pk, &nk) == 0) {
			k = nk;
			pk = &k;
			if (key_gone(g, ng, &k) && bpf_map_lookup_and_delete_elem(bfd, &k, &b) == 0) {
				uint64_t rb = sl_bucket_pending_rb(&b);
				atomic_fetch_add(&mp->ringbuf_expired, rb);
				atomic_fetch_add(&mp->ratelimit_expired, b.pending - rb);
				pk = NULL; /* restart after a delete */
			}
		}
		for (size_t i = 0; i < ng; i++)
			bpf_map_delete_elem(gfd, &g[i]);
	}
	HASH_ITER(hh, mp->keys, ks, tmp)
		if (ks->seen_tick != mp->tick_no)
			key_free(mp, ks);
}

/* Idle stall buckets (no stall for BUCKET_IDLE_NS): removed, what they
 * held counted as dropped (collected first, deleted after the walk). */
static void sweep_buckets(struct mem_priv *mp, uint64_t now)
{
	int fd = bpf_map__fd(mp->skel->maps.mem_buckets);
	struct sl_mem_key k, nk, *pk = NULL, *idle = NULL;
	struct sl_exec_bucket b;
	size_t n = 0, cap = 0;

	while (bpf_map_get_next_key(fd, pk, &nk) == 0) {
		k = nk;
		pk = &k;
		if (bpf_map_lookup_elem(fd, &k, &b) || b.last_ns + BUCKET_IDLE_NS > now)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct sl_mem_key *ni = realloc(idle, nc * sizeof(*ni));
			if (!ni)
				break;
			idle = ni;
			cap = nc;
		}
		idle[n++] = k;
	}
	for (size_t i = 0; i < n; i++)
		if (bpf_map_lookup_and_delete_elem(fd, &idle[i], &b) == 0) {
			uint64_t rb = sl_bucket_pending_rb(&b);
			atomic_fetch_add(&mp->ringbuf_expired, rb);
			atomic_fetch_add(&mp->ratelimit_expired, b.pending - rb);
		}
	free(idle);
}

struct nodes_read {
	struct mem_snap *snap;
	int ncpus;
};

/* One NUMA node's per-CPU counters (sl_percpu_array_each), summed. */
static int node_one(void *ctx, uint32_t i, const void *vals)
{
	struct nodes_read *r = ctx;
	const struct sl_mem_node *pc = vals;
	struct sl_mem_node *o = &r->snap->nodes[i];

	for (int c = 0; c < r->ncpus; c++) {
		o->kswapd_wake += pc[c].kswapd_wake;
		o->wakeup_kswapd += pc[c].wakeup_kswapd;
		o->throttled += pc[c].throttled;
		o->throttled_us += pc[c].throttled_us;
	}
	if (o->kswapd_wake || o->wakeup_kswapd || o->throttled)
		r->snap->nodes_n = i + 1;
	return 0;
}

/* The counters and the per-node array, each in one batch read per tick
 * (they were SL_MST_MAX + SL_MEM_MAX_NODES bpf() calls a tick). */
static void read_counters(struct mem_priv *mp, struct mem_snap *snap)
{
	int sfd = bpf_map__fd(mp->skel->maps.mem_stats), nfd = bpf_map__fd(mp->skel->maps.mem_nodes);
	struct nodes_read r = {.snap = snap, .ncpus = mp->ncpus};

	_Static_assert(sizeof(struct sl_mem_node) % 8 == 0, "per-CPU values are 8-byte aligned");
	sl_percpu_sums(sfd, SL_MST_MAX, mp->ncpus, snap->stats);
	memset(snap->nodes, 0, sizeof(snap->nodes));
	snap->nodes_n = 0;
	sl_percpu_array_each(nfd, SL_MEM_MAX_NODES, sizeof(struct sl_mem_node), mp->ncpus, SL_MEM_MAX_NODES, node_one,
			     &r);
}

static struct mem_snap *build_snap(struct mem_priv *mp, uint64_t now, uint64_t interval_ns)
{
	struct mem_series *s, *tmp;
	unsigned n = HASH_COUNT(mp->series), i = 0;
	struct mem_snap *snap = calloc(1, sizeof(*snap) + n * sizeof(snap->s[0]));

	if (!snap)
		return NULL;
	sl_snap_init(&snap->h, NULL);
	snap->time_mono_ns = now;
	snap->interval_ns = interval_ns;
	HASH_ITER(hh, mp->series, s, tmp) {
		struct mem_snap_series *o = &snap->s[i++];
		snprintf(o->id, sizeof(o->id), "%s", s->id);
		snprintf(o->pod_uid, sizeof(o->pod_uid), "%s", s->pod_uid);
		snprintf(o->runtime, sizeof(o->runtime), "%s", s->runtime);
		o->names = s->names;
		o->is_host = s->is_host;
		o->is_pod = s->is_pod;
		o->live = s->nkeys > 0;
		o->ncg = s->ncg;
		memcpy(o->cgids, s->cgids, sizeof(o->cgids));
		memcpy(o->tot, s->tot, sizeof(o->tot));
		memcpy(o->iv, s->iv, sizeof(o->iv));
		for (unsigned k = 0; k < SL_MEM_H_KINDS; k++) {
			o->iv_p99_ns[k] = sl_mem_quantile(s->iv[k].slots, 0.99, s->iv[k].max_ns);
			o->p50_ns[k] = sl_mem_quantile(s->tot[k].slots, 0.50, s->tot[k].max_ns);
			o->p99_ns[k] = sl_mem_quantile(s->tot[k].slots, 0.99, s->tot[k].max_ns);
		}
	}
	snap->n = (int)i;
	return snap;
}

static void mem_tick(struct sl_module *m, uint64_t now_ns)
{
	struct mem_priv *mp = m->priv;
	struct mem_series *s, *tmp;
	struct sl_mem_gone g[GONE_BATCH];
	struct sl_mem_gone gk, gn, *gp = NULL;
	size_t ng = 0;
	uint64_t interval;
	struct mem_snap *snap, cnt;
	int gfd;

	if (!mp || !mp->skel)
		return;
	mp->tick_no++;
	HASH_ITER(hh, mp->series, s, tmp)
		memset(s->iv, 0, sizeof(s->iv));
	gfd = bpf_map__fd(mp->skel->maps.mem_gone);
	while (ng < GONE_BATCH && bpf_map_get_next_key(gfd, gp, &gn) == 0) {
		g[ng++] = gn;
		gk = gn;
		gp = &gk;
	}
	qsort(g, ng, sizeof(g[0]), gone_cmp);
	interval = mp->last_tick_ns && now_ns > mp->last_tick_ns ? now_ns - mp->last_tick_ns : 0;
	mp->last_tick_ns = now_ns;
	/* counters first, then the histograms: at rest Σ counts + not counted == runs */
	memset(&cnt, 0, sizeof(cnt));
	read_counters(mp, &cnt);
	read_hist(mp);
	reap(mp, g, ng);
	if (now_ns - mp->last_sweep_ns >= SL_NSEC_PER_SEC) {
		sweep_buckets(mp, now_ns);
		mp->last_sweep_ns = now_ns;
	}
	/* dead series stay (their counters monotonic) for
	 * mem.series_idle_ticks, or until a new series needs the room:
	 * series_evict() */
	series_expire(mp);
	snap = build_snap(mp, now_ns, interval);
	if (!snap)
		return;
	memcpy(snap->stats, cnt.stats, sizeof(snap->stats));
	memcpy(snap->nodes, cnt.nodes, sizeof(snap->nodes));
	snap->nodes_n = cnt.nodes_n;
	atomic_store(&mp->nseries_pub, (uint64_t)snap->n);
	mem_snap_publish(mp, snap);
}

/* ---------- lifecycle ---------- */

static int listed(const struct sl_cfg_strlist *l, const char *tp)
{
	for (unsigned i = 0; i < l->n && i < SL_CFG_STRLIST_MAX; i++)
		if (!strcmp(l->v[i], tp))
			return 1;
	return 0;
}

static int mem_init(struct sl_module *m)
{
	const struct mem_cfg *c = sl_module_cfg(m);
	struct mem_priv *mp = calloc(1, sizeof(*mp));
	struct mem_bpf *s;
	struct bpf_program *progs[NHOOKS];
	struct bpf_link **links[NHOOKS];
	char why[NHOOKS][160];
	int absent[NHOOKS] = {0}, err, nattached = 0;
	const struct sl_cg_mounts *cm = sl_module_mounts(m);
	struct btf *vmlinux;

	if (!mp)
		return -ENOMEM;
	m->priv = mp;
	mp->m = m;
	sl_snapref_init(&mp->snap);
	mp->ncpus = libbpf_num_possible_cpus();
	if (mp->ncpus <= 0) {
		snprintf(m->error, sizeof(m->error), "cannot count possible CPUs");
		return -EINVAL;
	}
	mp->pcpu = calloc((size_t)mp->ncpus, sizeof(*mp->pcpu));
	if (!mp->pcpu)
		return -ENOMEM;

	s = mp->skel = mem_bpf__open();
	if (!s) {
		err = -errno;
		snprintf(m->error, sizeof(m->error), "open BPF object: %s", strerror(-err));
		return err;
	}
	struct bpf_program *p[NHOOKS] = {
		s->progs.mem_direct_begin, s->progs.mem_direct_end, s->progs.mem_memcg_begin, s->progs.mem_memcg_end,
		s->progs.mem_shrink_inactive, s->progs.mem_compact_try, s->progs.mem_compact_begin,
		s->progs.mem_compact_end, s->progs.mem_kswapd_wake, s->progs.mem_wakeup_kswapd,
		s->progs.mem_throttled, s->progs.mem_cgroup_rmdir};
	struct bpf_link **l[NHOOKS] = {
		&s->links.mem_direct_begin, &s->links.mem_direct_end, &s->links.mem_memcg_begin,
		&s->links.mem_memcg_end, &s->links.mem_shrink_inactive, &s->links.mem_compact_try,
		&s->links.mem_compact_begin, &s->links.mem_compact_end, &s->links.mem_kswapd_wake,
		&s->links.mem_wakeup_kswapd, &s->links.mem_throttled, &s->links.mem_cgroup_rmdir};
	memcpy(progs, p, sizeof(progs));
	memcpy(links, l, sizeof(links));

	/* Probe: a tp_btf program needs btf_trace_<tp> in the kernel's BTF; a
	 * missing one is not loaded (the object would not load at all). */
	vmlinux = btf__load_vmlinux_btf();
	for (unsigned i = 0; i < NHOOKS; i++) {
		char tn[128];
		snprintf(tn, sizeof(tn), "btf_trace_%s", mem_hook_tab[i].tp);
		if (listed(&c->missing_tracepoints, mem_hook_tab[i].tp)) {
			absent[i] = 1;
			snprintf(why[i], sizeof(why[i]), "tracepoint %s:%s treated as absent (mem.missing_tracepoints): %s absent",
				 mem_hook_tab[i].cat, mem_hook_tab[i].tp, mem_hook_tab[i].figure);
		} else if (!vmlinux || btf__find_by_name_kind(vmlinux, tn, BTF_KIND_TYPEDEF) < 0) {
			absent[i] = 1;
			snprintf(why[i], sizeof(why[i]), "tracepoint %s:%s not in kernel BTF: %s absent",
				 mem_hook_tab[i].cat, mem_hook_tab[i].tp, mem_hook_tab[i].figure);
		}
	}
	btf__free(vmlinux);
	for (unsigned i = 0; i < NHOOKS; i++) { /* half a pair measures nothing */
		int o = mem_hook_tab[i].pair;
		if (o >= 0 && absent[o] && !absent[i]) {
			absent[i] = 2;
			snprintf(why[i], sizeof(why[i]), "its pair %s:%s is absent: %s absent", mem_hook_tab[o].cat,
				 mem_hook_tab[o].tp, mem_hook_tab[i].figure);
		}
	}
	for (unsigned i = 0; i < NHOOKS; i++)
		if (absent[i])
			bpf_program__set_autoload(progs[i], false);

	s->rodata->stall_threshold_ns = c->stall_threshold_ns;
	s->rodata->stall_rate = c->stall_rate;
	s->rodata->stall_burst = c->stall_burst;
	s->rodata->sl_v1_subsys_id = sl_module_v1_subsys_id(m);
	s->rodata->v1_hierarchy_id = cm ? cm->v1_hierarchy_id : -1;
	bpf_map__set_max_entries(s->maps.mem_hist, (__u32)c->max_cgroups);
	bpf_map__set_max_entries(s->maps.mem_buckets, (__u32)c->max_cgroups);
	bpf_map__set_max_entries(s->maps.mem_events, (__u32)c->ringbuf_bytes);
	err = mem_bpf__load(s);
	if (err) {
		snprintf(m->error, sizeof(m->error), "load BPF object: %s", strerror(-err));
		return err;
	}
	for (unsigned i = 0; i < NHOOKS; i++) {
		if (absent[i]) {
			sl_module_hook(m, mem_hooks[i].name, SL_HOOK_DEGRADED, why[i]);
			continue;
		}
		sl_module_attach(m, progs[i], links[i], mem_hooks[i].name);
		nattached += *links[i] != NULL;
	}
	if (!nattached) {
		snprintf(m->error, sizeof(m->error), "no mem tracepoint could be attached");
		return -ENOTSUP;
	}
	err = sl_module_ringbuf(m, "mem_events", bpf_map__fd(s->maps.mem_events));
	if (err) {
		snprintf(m->error, sizeof(m->error), "ring buffer registration: %s", strerror(-err));
		return err;
	}
	mp->last_tick_ns = sl_mono_ns();
	return 0;
}

static int mem_set_rate_shift(struct sl_module *m, unsigned shift)
{
	struct mem_priv *mp = m ? m->priv : NULL;

	if (shift > SL_RATE_SHIFT_MAX)
		return -EINVAL;
	if (!mp || !mp->skel || !mp->skel->bss)
		return -ENODEV;
	__atomic_store_n(&mp->skel->bss->rate_shift, shift, __ATOMIC_RELAXED);
	return 0;
}

static void mem_destroy(struct sl_module *m)
{
	struct mem_priv *mp = m->priv;
	struct mem_key *ks, *kt;
	struct mem_series *s, *st;

	if (!mp)
		return;
	mem_bpf__destroy(mp->skel); /* detaches every link */
	HASH_ITER(hh, mp->keys, ks, kt) {
		HASH_DEL(mp->keys, ks);
		free(ks);
	}
	HASH_ITER(hh, mp->series, s, st) {
		HASH_DEL(mp->series, s);
		free(s);
	}
	sl_snapref_destroy(&mp->snap);
	free(mp->pcpu);
	free(mp);
	m->priv = NULL;
}

const struct sl_module_ops sl_mem_module = {
	.name = "mem",
	.doc = "docs/MEM.md",
	.config = {.size = sizeof(struct mem_cfg),
		   .keys = mem_keys,
		   .nkeys = sizeof(mem_keys) / sizeof(mem_keys[0]),
		   .check = mem_cfg_check},
	.kinds = mem_kinds,
	.nkinds = sizeof(mem_kinds) / sizeof(mem_kinds[0]),
	.families = sl_mem_families,
	.nfamilies = MEM_NFAM,
	.hooks = mem_hooks,
	.nhooks = NHOOKS,
	.ringbufs = mem_ringbufs,
	.nringbufs = 1,
	.views = mem_views,
	.nviews = 1,
	.series = mem_series,
	.nseries = sizeof(mem_series) / sizeof(mem_series[0]),
	.init = mem_init,
	.tick = mem_tick,
	.write_metrics = mem_write_metrics,
	.write_drops = mem_write_drops,
	.read_series = mem_read_series,
	.set_rate_shift = mem_set_rate_shift,
	.destroy = mem_destroy,
};
