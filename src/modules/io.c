/* io module, user half: declarations (config, kinds, hooks, ring buffer,
 * view), load/attach of bpf/io.bpf.c with per-tracepoint probing, slow_io
 * decoding into events, and every tick the folding of the kernel's
 * per-(blkcg, disk, op) histograms and per-cgroup page-cache figures into
 * per-container series (attribution on the poll-loop thread), with
 * /proc/diskstats read at the same tick, published as an immutable
 * snapshot (io_snap.c). Definitions of every figure: docs/IO.md. */
#include "modules/io.h"
#include "modules/io_blkcg.h"
#include "modules/io_decode.h"
#include "modules/io_internal.h"
#include "common/log2hist.h"
#include "sandlens/token_bucket.h"
#include "io.skel.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RERESOLVE_TICKS 5
#define BUCKET_IDLE_NS (10ULL * SL_NSEC_PER_SEC)
/* io_start entries older than this are dropped (a request freed unseen) */
#define START_STALE_NS (60ULL * SL_NSEC_PER_SEC)
#define DISKSTATS "/proc/diskstats"

/* ---------- declarations ---------- */

#define F(f) SL_CFG_FIELD(struct io_cfg, f)
static const struct sl_cfg_key io_keys[] = {
	{"slow_io_threshold", SL_CFG_DURATION_NS, F(slow_io_threshold_ns), "100ms", 1000ULL, 600ULL * SL_NSEC_PER_SEC,
	 "a block request whose queue + device time reaches this is a slow_io event (1us..600s)"},
	{"slow_io_rate", SL_CFG_UINT, F(slow_io_rate), "5", 0, 100000,
	 "slow_io events per second per (blkcg, disk) (token bucket; 0 = no limit)"},
	{"slow_io_burst", SL_CFG_UINT, F(slow_io_burst), "10", 1, 100000, "slow_io token bucket size per (blkcg, disk)"},
	{"max_series", SL_CFG_UINT, F(max_series), "4096", 16, 65536,
	 "kernel entries (blkcg x disk x op; task cgroup pairs) and exported series of each table"},
	{"max_inflight", SL_CFG_UINT, F(max_inflight), "16384", 256, 1048576,
	 "requests tracked between insert/issue and completion (io_start entries)"},
	{"series_idle_ticks", SL_CFG_UINT, F(series_idle_ticks), "300", 1, 1000000,
	 "a kernel entry without a new request for this many ticks is removed, and a series with none left"},
	{"ringbuf_size", SL_CFG_BYTES, F(ringbuf_bytes), "64KiB", 4096, 64ULL << 20,
	 "io_events ring buffer size (a power of two)"},
	{"missing_tracepoints", SL_CFG_STRLIST, F(missing_tracepoints), "", 0, 0,
	 "testing: tracepoints (e.g. balance_dirty_pages) to treat as absent from the kernel: the degraded path; "
	 "only the module's own"},
};
#undef F

static const struct sl_field slow_fields[] = {
	{"tid", SL_FT_UINT, 0, "thread id of the submitting task (current at insert, else at issue)"},
	{"disk", SL_FT_STR, 0, "major:minor of the disk (the request queue's gendisk)"},
	{"disk_name", SL_FT_STR, 0, "the disk's name as /proc/diskstats shows it (\"\" unknown)"},
	{"sector", SL_FT_UINT, SL_FF_OPTIONAL, "first sector (512 bytes) of the request (absent for a flush)"},
	{"bytes", SL_FT_UINT, 0, "size of the request, bytes"},
	{"op", SL_FT_STR, 0, "read | write | flush | discard | other"},
	{"queue_ns", SL_FT_UINT, 0, "block_rq_insert to block_rq_issue, ns (0: issued directly)"},
	{"device_ns", SL_FT_UINT, 0, "block_rq_issue to the final block_rq_complete, ns"},
	{"total_ns", SL_FT_UINT, 0, "queue_ns + device_ns"},
	{"queued", SL_FT_BOOL, 0, "the request went through block_rq_insert (a scheduler or a requeue)"},
	{"error", SL_FT_INT, 0, "blk_status_t of the completion (0 = ok)"},
	{"cmd_flags", SL_FT_UINT, 0, "rq->cmd_flags (REQ_* bits of this kernel)"},
	{"truncated_count", SL_FT_UINT, 0, "slow requests of this (blkcg, disk) not delivered since the last one"},
	{"blkcg", SL_FT_OBJ, 0,
	 "{cgroup_id, hierarchy_id, container_id, pod_uid, runtime}: the cgroup the request is charged to "
	 "(rq->bio->bi_blkg->blkcg), the event's container"},
	{"task", SL_FT_OBJ, 0, "{pid, comm, cgroup_id, container_id, pod_uid, runtime}: the submitting task"},
};

static const struct sl_event_kind io_kinds[] = {
	{.name = "slow_io",
	 .severity = SL_SEV_WARNING,
	 .fields = slow_fields,
	 .nfields = sizeof(slow_fields) / sizeof(slow_fields[0]),
	 .details = "{op} {bytes}B {disk_name}({disk}){?sector} sector={sector}{/} queue={queue_ns:dur} device={device_ns:dur}"
		    " by {task.pid}({task.comm}){?truncated_count} +{truncated_count} suppressed{/}",
	 .doc = "a block request took at least io.slow_io_threshold from insert (or issue) to completion"},
};
#define K_SLOW 0

struct io_hook {
	const char *tp, *cat, *figure;
};
static const struct io_hook io_hook_tab[] = {
	{"block_rq_insert", "block", "queue stage (insert -> issue)"},
	{"block_rq_issue", "block", "device stage, requests, bytes, slow_io"},
	{"block_rq_complete", "block", "device stage, requests, bytes, slow_io"},
	{"block_rq_merge", "block", "merged requests' entries dropped"},
	{"mm_filemap_add_to_page_cache", "filemap", "pages added to the page cache"},
	{"page_cache_sync_ra", "readahead", "synchronous readahead"},
	{"page_cache_async_ra", "readahead", "asynchronous readahead"},
	{"page_cache_ra_unbounded", "readahead", "readahead pages"},
	{"balance_dirty_pages", "writeback", "dirty-page throttling"},
};
#define NHOOKS (sizeof(io_hook_tab) / sizeof(io_hook_tab[0]))
/* indices of the pair every request figure needs */
#define H_ISSUE 1
#define H_COMPLETE 2

static const struct sl_hook_decl io_hooks[NHOOKS] = {
	{"tp_btf/block_rq_insert", "queue stage of block requests"},
	{"tp_btf/block_rq_issue", "device stage of block requests"},
	{"tp_btf/block_rq_complete", "both stages, requests, bytes, slow_io"},
	{"tp_btf/block_rq_merge", "entries of merged requests dropped"},
	{"tp_btf/mm_filemap_add_to_page_cache", "page-cache insertions per cgroup"},
	{"tp_btf/page_cache_sync_ra", "synchronous readahead per cgroup"},
	{"tp_btf/page_cache_async_ra", "asynchronous readahead per cgroup"},
	{"tp_btf/page_cache_ra_unbounded", "readahead pages per cgroup"},
	{"tp_btf/balance_dirty_pages", "dirty-page throttling per cgroup"},
};

static int io_cfg_check(const void *cfg, char *err, size_t errlen)
{
	const struct io_cfg *c = cfg;

	if (c->ringbuf_bytes & (c->ringbuf_bytes - 1)) {
		snprintf(err, errlen, "io.ringbuf_size: %llu is not a power of two", (unsigned long long)c->ringbuf_bytes);
		return -1;
	}
	for (unsigned i = 0; i < c->missing_tracepoints.n && i < SL_CFG_STRLIST_MAX; i++) {
		const char *tp = c->missing_tracepoints.v[i];
		unsigned h = 0;
		while (h < NHOOKS && strcmp(io_hook_tab[h].tp, tp))
			h++;
		if (h < NHOOKS)
			continue;
		size_t n = (size_t)snprintf(err, errlen, "io.missing_tracepoints[%u]: '%s' is not an io tracepoint (known:", i,
					    tp);
		for (h = 0; h < NHOOKS && n < errlen; h++)
			n += (size_t)snprintf(err + n, errlen - n, "%s %s", h ? "," : "", io_hook_tab[h].tp);
		if (n < errlen)
			snprintf(err + n, errlen - n, ")");
		return -1;
	}
	return 0;
}

static int on_record(void *ctx, void *data, size_t size);
static const struct sl_ringbuf_decl io_ringbufs[] = {{"io_events", on_record}};

static const struct sl_api_view io_views[] = {
	{.path = "", .admin_only = 0, .params = NULL, .nparams = 0, .get = io_view_get,
	 .doc = "per-container block I/O (queue and device latency, bytes, requests per disk and op), page cache "
		"and writeback figures, per-disk /proc/diskstats next to them (docs/IO.md)"},
};

/* ---------- identities, series and keys (poll loop) ---------- */

struct io_series {
	char hkey[SL_CONTAINER_ID_LEN + 48]; /* "<identity key>|<dev>|<op>" */
	struct io_ident who;
	uint32_t dev;
	unsigned op;
	int nkeys;
	struct sl_io_hist tot, iv;
	uint64_t last_active_tick;
	UT_hash_handle hh;
};

struct io_key {
	struct sl_io_key k;
	struct io_series *s; /* NULL: not exported (series table full) */
	struct sl_io_hist last;
	uint64_t seen_tick, resolved_tick, changed_tick;
	UT_hash_handle hh;
};

struct io_cgser {
	char hkey[SL_CONTAINER_ID_LEN];
	struct io_ident who;
	int nkeys;
	struct sl_io_cg tot, iv;
	uint64_t last_active_tick;
	UT_hash_handle hh;
};

struct io_cgkey {
	struct sl_io_cg_key k;
	struct io_cgser *s;
	struct sl_io_cg last;
	uint64_t seen_tick, resolved_tick, changed_tick;
	UT_hash_handle hh;
};

/* What the module counted on one disk since it started (every key of the
 * disk, exported or not): monotonic, unlike a sum over live kernel entries. */
struct io_diskacc {
	uint32_t dev;
	uint64_t requests[SL_IO_NOPS], bytes[SL_IO_NOPS];
	UT_hash_handle hh;
};

struct io_devname {
	uint32_t dev;
	char name[64];
	UT_hash_handle hh;
};

/* Identity of an attribution and its hash key: a container's, a pod-level
 * cgroup's ("pod/<uid>"), else the host's (""). */
static void ident_of(const struct sl_attr *at, uint64_t cgid, struct io_ident *w, char *key, size_t len)
{
	int pod = at->is_container == SL_NO && at->pod_uid[0];
	int host = at->is_container != SL_YES && !pod;

	memset(w, 0, sizeof(*w));
	w->is_host = host;
	w->is_pod = pod;
	w->cgid = cgid;
	snprintf(w->runtime, sizeof(w->runtime), "%s", host ? "host" : at->runtime);
	if (!host) {
		snprintf(w->pod_uid, sizeof(w->pod_uid), "%s", at->pod_uid);
		w->names = at->names;
	}
	if (!host && !pod)
		snprintf(w->id, sizeof(w->id), "%s", at->container_id);
	if (pod)
		snprintf(key, len, "pod/%s", at->pod_uid);
	else
		snprintf(key, len, "%s", w->id);
}

/* Resolve a kernel key's cgroup to an attribution: the blkcg through the
 * blkcg mapping (io_blkcg.h), a task pair directly. */
static uint64_t resolve_blkcg(struct io_priv *ip, const struct sl_io_key *k, struct sl_attr *at, int *hier)
{
	uint64_t v2 = 0, v1 = 0;

	memset(at, 0, sizeof(*at));
	if (hier)
		*hier = -1;
	if (!io_blkcg_pair(ip->blkcg, k->blkcg_hid, k->blkcg_id, sl_mono_ns(), &v2, &v1, NULL, 0)) {
		/* id 0 (no blkg) or unknown: the host */
		at->is_container = SL_NO;
		snprintf(at->runtime, sizeof(at->runtime), "host");
		return 0;
	}
	return sl_module_resolve_cgroup(ip->m, v2, v1, at, hier);
}

static struct io_series *series_get(struct io_priv *ip, const struct sl_attr *at, uint64_t cgid, uint32_t dev,
				    unsigned op)
{
	const struct io_cfg *c = sl_module_cfg(ip->m);
	struct io_ident w;
	char ik[SL_CONTAINER_ID_LEN], hk[SL_CONTAINER_ID_LEN + 48];
	struct io_series *s;

	ident_of(at, cgid, &w, ik, sizeof(ik));
	snprintf(hk, sizeof(hk), "%s|%u|%u", ik, dev, op);
	HASH_FIND_STR(ip->series, hk, s);
	if (s) {
		if (!w.is_host && !s->who.names.pod[0] && w.names.pod[0])
			s->who.names = w.names;
		return s;
	}
	if (ip->nseries >= c->max_series || !(s = calloc(1, sizeof(*s))))
		return NULL;
	snprintf(s->hkey, sizeof(s->hkey), "%s", hk);
	s->who = w;
	s->dev = dev;
	s->op = op;
	s->last_active_tick = ip->tick_no;
	HASH_ADD_STR(ip->series, hkey, s);
	ip->nseries++;
	return s;
}

static struct io_cgser *cgser_get(struct io_priv *ip, const struct sl_attr *at, uint64_t cgid)
{
	const struct io_cfg *c = sl_module_cfg(ip->m);
	struct io_ident w;
	char ik[SL_CONTAINER_ID_LEN];
	struct io_cgser *s;

	ident_of(at, cgid, &w, ik, sizeof(ik));
	HASH_FIND_STR(ip->cgseries, ik, s);
	if (s) {
		if (!w.is_host && !s->who.names.pod[0] && w.names.pod[0])
			s->who.names = w.names;
		return s;
	}
	if (ip->ncgseries >= c->max_series || !(s = calloc(1, sizeof(*s))))
		return NULL;
	snprintf(s->hkey, sizeof(s->hkey), "%s", ik);
	s->who = w;
	s->last_active_tick = ip->tick_no;
	HASH_ADD_STR(ip->cgseries, hkey, s);
	ip->ncgseries++;
	return s;
}

static void key_resolve(struct io_priv *ip, struct io_key *ks)
{
	struct sl_attr at;
	uint64_t id = resolve_blkcg(ip, &ks->k, &at, NULL);
	struct io_series *s = series_get(ip, &at, id, ks->k.dev, ks->k.op);

	ks->resolved_tick = ip->tick_no;
	if (s == ks->s)
		return;
	if (ks->s)
		ks->s->nkeys--;
	if ((ks->s = s))
		s->nkeys++;
}

static void cgkey_resolve(struct io_priv *ip, struct io_cgkey *ks)
{
	struct sl_attr at;
	uint64_t id;
	struct io_cgser *s;

	memset(&at, 0, sizeof(at));
	id = sl_module_resolve_cgroup(ip->m, ks->k.cgroup_id, ks->k.cgroup_v1_id, &at, NULL);
	s = cgser_get(ip, &at, id);
	ks->resolved_tick = ip->tick_no;
	if (s == ks->s)
		return;
	if (ks->s)
		ks->s->nkeys--;
	if ((ks->s = s))
		s->nkeys++;
}

/* ---------- figures ---------- */

/* acc[k] += add[k] over the slots (the ABI's __u64 slots) */
static void slots_add(__u64 *acc, const __u64 *add, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		acc[k] += add[k];
}

static void hist_fold(const struct sl_io_hist *pc, int ncpus, struct sl_io_hist *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (int c = 0; c < ncpus; c++) {
		const struct sl_io_hist *h = &pc[c];
		slots_add(sum->queue, h->queue, SL_IO_SLOTS);
		slots_add(sum->device, h->device, SL_IO_SLOTS);
		sum->queue_sum_ns += h->queue_sum_ns;
		sum->device_sum_ns += h->device_sum_ns;
		sum->requests += h->requests;
		sum->direct += h->direct;
		sum->bytes += h->bytes;
		sum->errors += h->errors;
		if (h->queue_max_ns > sum->queue_max_ns)
			sum->queue_max_ns = h->queue_max_ns;
		if (h->device_max_ns > sum->device_max_ns)
			sum->device_max_ns = h->device_max_ns;
	}
}

/* d = cur - last; a reset (any figure went down: the entry was remade)
 * gives d = cur. Returns 1 when anything was counted. */
static int hist_delta(const struct sl_io_hist *cur, const struct sl_io_hist *last, struct sl_io_hist *d)
{
	int reset = cur->requests < last->requests || cur->bytes < last->bytes || cur->direct < last->direct ||
		    cur->errors < last->errors || cur->queue_sum_ns < last->queue_sum_ns ||
		    cur->device_sum_ns < last->device_sum_ns;
	uint64_t a[SL_IO_SLOTS], b[SL_IO_SLOTS];

	reset |= sl_l2h_delta((const uint64_t *)cur->queue, (const uint64_t *)last->queue, a, SL_IO_SLOTS);
	reset |= sl_l2h_delta((const uint64_t *)cur->device, (const uint64_t *)last->device, b, SL_IO_SLOTS);
	if (reset) {
		*d = *cur;
		return d->requests != 0;
	}
	memcpy(d->queue, a, sizeof(a));
	memcpy(d->device, b, sizeof(b));
	d->queue_sum_ns = cur->queue_sum_ns - last->queue_sum_ns;
	d->device_sum_ns = cur->device_sum_ns - last->device_sum_ns;
	d->requests = cur->requests - last->requests;
	d->direct = cur->direct - last->direct;
	d->bytes = cur->bytes - last->bytes;
	d->errors = cur->errors - last->errors;
	d->queue_max_ns = cur->queue_max_ns;
	d->device_max_ns = cur->device_max_ns;
	return d->requests != 0;
}

static void hist_acc(struct sl_io_hist *acc, const struct sl_io_hist *d)
{
	slots_add(acc->queue, d->queue, SL_IO_SLOTS);
	slots_add(acc->device, d->device, SL_IO_SLOTS);
	acc->queue_sum_ns += d->queue_sum_ns;
	acc->device_sum_ns += d->device_sum_ns;
	acc->requests += d->requests;
	acc->direct += d->direct;
	acc->bytes += d->bytes;
	acc->errors += d->errors;
	if (d->queue_max_ns > acc->queue_max_ns)
		acc->queue_max_ns = d->queue_max_ns;
	if (d->device_max_ns > acc->device_max_ns)
		acc->device_max_ns = d->device_max_ns;
}

#define CG_NF 6
static void cg_fold(const struct sl_io_cg *pc, int ncpus, struct sl_io_cg *sum)
{
	uint64_t *o = (uint64_t *)sum;

	memset(sum, 0, sizeof(*sum));
	for (int c = 0; c < ncpus; c++) {
		const uint64_t *v = (const uint64_t *)&pc[c];
		for (int i = 0; i < CG_NF; i++)
			o[i] += v[i];
	}
}

static int cg_delta(const struct sl_io_cg *cur, const struct sl_io_cg *last, struct sl_io_cg *d)
{
	const uint64_t *c = (const uint64_t *)cur, *l = (const uint64_t *)last;
	uint64_t *o = (uint64_t *)d;
	int reset = 0, any = 0;

	for (int i = 0; i < CG_NF; i++)
		reset |= c[i] < l[i];
	for (int i = 0; i < CG_NF; i++) {
		o[i] = reset ? c[i] : c[i] - l[i];
		any |= o[i] != 0;
	}
	return any;
}

static void cg_acc(struct sl_io_cg *acc, const struct sl_io_cg *d)
{
	uint64_t *a = (uint64_t *)acc;
	const uint64_t *v = (const uint64_t *)d;

	for (int i = 0; i < CG_NF; i++)
		a[i] += v[i];
}

_Static_assert(sizeof(struct sl_io_cg) == CG_NF * sizeof(uint64_t), "sl_io_cg is CG_NF counters");

/* ---------- tick ---------- */

static void disk_count(struct io_priv *ip, const struct sl_io_key *k, const struct sl_io_hist *d)
{
	struct io_diskacc *a;

	if (k->op >= SL_IO_NOPS)
		return;
	HASH_FIND(hh, ip->disks, &k->dev, sizeof(k->dev), a);
	if (!a) {
		if (HASH_COUNT(ip->disks) >= 4096 || !(a = calloc(1, sizeof(*a))))
			return;
		a->dev = k->dev;
		HASH_ADD(hh, ip->disks, dev, sizeof(a->dev), a);
	}
	a->requests[k->op] += d->requests;
	a->bytes[k->op] += d->bytes;
}

static void read_hist(struct io_priv *ip)
{
	const struct io_cfg *c = sl_module_cfg(ip->m);
	int fd = bpf_map__fd(ip->skel->maps.io_hist);
	struct sl_io_key key, next, *prev = NULL;
	struct io_key *ks, *tmp;
	uint64_t n = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct sl_io_hist sum, d;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, ip->pcpu))
			continue;
		n++;
		hist_fold(ip->pcpu, ip->ncpus, &sum);
		HASH_FIND(hh, ip->keys, &key, sizeof(key), ks);
		if (!ks) {
			if (!(ks = calloc(1, sizeof(*ks))))
				continue;
			ks->k = key;
			ks->changed_tick = ip->tick_no;
			HASH_ADD(hh, ip->keys, k, sizeof(ks->k), ks);
			key_resolve(ip, ks);
		}
		ks->seen_tick = ip->tick_no;
		if ((!ks->s || ks->s->who.is_host || (!ks->s->who.is_pod && !ks->s->who.names.pod[0])) &&
		    ks->resolved_tick + RERESOLVE_TICKS <= ip->tick_no && ks->k.blkcg_id)
			key_resolve(ip, ks);
		if (!hist_delta(&sum, &ks->last, &d)) {
			ks->last = sum;
			continue;
		}
		ks->last = sum;
		ks->changed_tick = ip->tick_no;
		disk_count(ip, &ks->k, &d);
		if (!ks->s) {
			atomic_fetch_add(&ip->not_exported, d.requests);
			continue;
		}
		hist_acc(&ks->s->tot, &d);
		hist_acc(&ks->s->iv, &d);
		ks->s->last_active_tick = ip->tick_no;
	}
	atomic_store(&ip->nkeys, n);
	/* idle kernel entries are removed (their final figures folded: the
	 * delete returns them), keys gone from the map forgotten */
	HASH_ITER(hh, ip->keys, ks, tmp) {
		if (ks->seen_tick == ip->tick_no && ip->tick_no - ks->changed_tick > c->series_idle_ticks) {
			struct sl_io_hist sum, d;
			if (bpf_map_lookup_and_delete_elem(fd, &ks->k, ip->pcpu) == 0) {
				hist_fold(ip->pcpu, ip->ncpus, &sum);
				if (hist_delta(&sum, &ks->last, &d)) {
					disk_count(ip, &ks->k, &d);
					if (ks->s) {
						hist_acc(&ks->s->tot, &d);
						hist_acc(&ks->s->iv, &d);
					} else {
						atomic_fetch_add(&ip->not_exported, d.requests);
					}
				}
			}
			ks->seen_tick = 0;
		}
		if (ks->seen_tick != ip->tick_no) {
			if (ks->s)
				ks->s->nkeys--;
			HASH_DEL(ip->keys, ks);
			free(ks);
		}
	}
}

static void read_cg(struct io_priv *ip)
{
	const struct io_cfg *c = sl_module_cfg(ip->m);
	int fd = bpf_map__fd(ip->skel->maps.io_cg);
	struct sl_io_cg_key key, next, *prev = NULL;
	struct io_cgkey *ks, *tmp;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct sl_io_cg sum, d;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, ip->pcpu_cg))
			continue;
		cg_fold(ip->pcpu_cg, ip->ncpus, &sum);
		HASH_FIND(hh, ip->cgkeys, &key, sizeof(key), ks);
		if (!ks) {
			if (!(ks = calloc(1, sizeof(*ks))))
				continue;
			ks->k = key;
			ks->changed_tick = ip->tick_no;
			HASH_ADD(hh, ip->cgkeys, k, sizeof(ks->k), ks);
			cgkey_resolve(ip, ks);
		}
		ks->seen_tick = ip->tick_no;
		if ((!ks->s || ks->s->who.is_host || (!ks->s->who.is_pod && !ks->s->who.names.pod[0])) &&
		    ks->resolved_tick + RERESOLVE_TICKS <= ip->tick_no)
			cgkey_resolve(ip, ks);
		if (!cg_delta(&sum, &ks->last, &d)) {
			ks->last = sum;
			continue;
		}
		ks->last = sum;
		ks->changed_tick = ip->tick_no;
		if (!ks->s)
			continue;
		cg_acc(&ks->s->tot, &d);
		cg_acc(&ks->s->iv, &d);
		ks->s->last_active_tick = ip->tick_no;
	}
	HASH_ITER(hh, ip->cgkeys, ks, tmp) {
		if (ks->seen_tick == ip->tick_no && ip->tick_no - ks->changed_tick > c->series_idle_ticks) {
			struct sl_io_cg sum, d;
			if (bpf_map_lookup_and_delete_elem(fd, &ks->k, ip->pcpu_cg) == 0) {
				cg_fold(ip->pcpu_cg, ip->ncpus, &sum);
				if (cg_delta(&sum, &ks->last, &d) && ks->s) {
					cg_acc(&ks->s->tot, &d);
					cg_acc(&ks->s->iv, &d);
				}
			}
			ks->seen_tick = 0;
		}
		if (ks->seen_tick != ip->tick_no) {
			if (ks->s)
				ks->s->nkeys--;
			HASH_DEL(ip->cgkeys, ks);
			free(ks);
		}
	}
}

/* Series with no kernel entry left and no request for series_idle_ticks
 * are removed; their requests were exported while they lived (expired). */
static void series_expire(struct io_priv *ip)
{
	const struct io_cfg *c = sl_module_cfg(ip->m);
	struct io_series *s, *t;
	struct io_cgser *g, *gt;

	HASH_ITER(hh, ip->series, s, t) {
		if (s->nkeys > 0 || ip->tick_no - s->last_active_tick <= c->series_idle_ticks)
			continue;
		atomic_fetch_add(&ip->expired, s->tot.requests);
		HASH_DEL(ip->series, s);
		ip->nseries--;
		free(s);
	}
	HASH_ITER(hh, ip->cgseries, g, gt) {
		if (g->nkeys > 0 || ip->tick_no - g->last_active_tick <= c->series_idle_ticks)
			continue;
		HASH_DEL(ip->cgseries, g);
		ip->ncgseries--;
		free(g);
	}
}

/* /proc/diskstats into rows (NULL-terminated array of n rows, caller frees). */
static struct io_diskstat *read_diskstats(size_t *n)
{
	FILE *f;
	char line[512];
	struct io_diskstat *rows = NULL, d;
	size_t cap = 0;
	int fd = open(DISKSTATS, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	*n = 0;
	if (fd < 0 || !(f = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while (fgets(line, sizeof(line), f)) {
		if (io_diskstat_parse(line, &d))
			continue;
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct io_diskstat *r = realloc(rows, nc * sizeof(*r));
			if (!r)
				break;
			rows = r;
			cap = nc;
		}
		rows[(*n)++] = d;
	}
	fclose(f);
	return rows;
}

static void names_update(struct io_priv *ip, const struct io_diskstat *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t dev = (rows[i].major << 20) | rows[i].minor;
		struct io_devname *d;
		HASH_FIND(hh, ip->names, &dev, sizeof(dev), d);
		if (!d) {
			if (HASH_COUNT(ip->names) >= 65536 || !(d = calloc(1, sizeof(*d))))
				continue;
			d->dev = dev;
			HASH_ADD(hh, ip->names, dev, sizeof(d->dev), d);
		}
		snprintf(d->name, sizeof(d->name), "%s", rows[i].name);
	}
}

/* Name of a disk: from the last /proc/diskstats read; a miss re-reads it
 * (at most once a second). NULL when unknown. */
static const char *dev_name(struct io_priv *ip, uint32_t dev)
{
	struct io_devname *d;

	HASH_FIND(hh, ip->names, &dev, sizeof(dev), d);
	if (!d && sl_mono_ns() - ip->names_read_ns >= SL_NSEC_PER_SEC) {
		size_t n;
		struct io_diskstat *rows = read_diskstats(&n);
		names_update(ip, rows, n);
		free(rows);
		ip->names_read_ns = sl_mono_ns();
		HASH_FIND(hh, ip->names, &dev, sizeof(dev), d);
	}
	return d ? d->name : NULL;
}

void io_snap_free(struct sl_snap *b)
{
	struct io_snap *s = (struct io_snap *)b;

	free(s->s);
	free(s->cg);
	free(s->d);
	free(s);
}

static struct io_snap *build_snap(struct io_priv *ip, uint64_t now, uint64_t interval, struct io_diskstat *rows,
				  size_t nrows)
{
	struct io_snap *snap = calloc(1, sizeof(*snap));
	unsigned n = HASH_COUNT(ip->series), ncg = HASH_COUNT(ip->cgseries), i = 0;
	struct io_series *s, *t;
	struct io_cgser *g, *gt;
	struct io_diskacc *da, *dt;
	int sfd = bpf_map__fd(ip->skel->maps.io_stats);

	if (!snap)
		return NULL;
	sl_snap_init(&snap->base, io_snap_free);
	snap->time_mono_ns = now;
	snap->interval_ns = interval;
	snap->s = calloc(n ? n : 1, sizeof(*snap->s));
	snap->cg = calloc(ncg ? ncg : 1, sizeof(*snap->cg));
	snap->d = calloc(HASH_COUNT(ip->disks) + 1, sizeof(*snap->d));
	if (!snap->s || !snap->cg || !snap->d) {
		io_snap_free(&snap->base);
		return NULL;
	}
	sl_percpu_sums(sfd, SL_IOST_MAX, ip->ncpus, snap->stats); /* one bpf() call */
	HASH_ITER(hh, ip->series, s, t) {
		struct io_snap_series *o = &snap->s[i++];
		const char *nm = dev_name(ip, s->dev);
		o->who = s->who;
		o->dev = s->dev;
		o->op = s->op;
		snprintf(o->disk, sizeof(o->disk), "%s", nm ? nm : "");
		o->tot = s->tot;
		o->iv_requests = s->iv.requests;
		o->iv_bytes = s->iv.bytes;
		o->iv_device_ns = s->iv.device_sum_ns;
		o->q_p50_ns = sl_l2h_quantile((const uint64_t *)s->tot.queue, SL_IO_SLOTS, 0.5, s->tot.queue_max_ns);
		o->q_p99_ns = sl_l2h_quantile((const uint64_t *)s->tot.queue, SL_IO_SLOTS, 0.99, s->tot.queue_max_ns);
		o->d_p50_ns = sl_l2h_quantile((const uint64_t *)s->tot.device, SL_IO_SLOTS, 0.5, s->tot.device_max_ns);
		o->d_p99_ns = sl_l2h_quantile((const uint64_t *)s->tot.device, SL_IO_SLOTS, 0.99, s->tot.device_max_ns);
		o->iv_d_p99_ns = sl_l2h_quantile((const uint64_t *)s->iv.device, SL_IO_SLOTS, 0.99, s->tot.device_max_ns);
	}
	snap->n = (int)i;
	i = 0;
	HASH_ITER(hh, ip->cgseries, g, gt) {
		struct io_snap_cg *o = &snap->cg[i++];
		o->who = g->who;
		o->tot = g->tot;
		o->iv = g->iv;
	}
	snap->ncg = (int)i;
	/* disks: every disk the module counted on, with its diskstats row */
	HASH_ITER(hh, ip->disks, da, dt) {
		struct io_snap_disk *o = &snap->d[snap->ndisk++];
		o->dev = da->dev;
		memcpy(o->requests, da->requests, sizeof(o->requests));
		memcpy(o->bytes, da->bytes, sizeof(o->bytes));
		for (size_t r = 0; r < nrows; r++)
			if (rows[r].major == io_dev_major(da->dev) && rows[r].minor == io_dev_minor(da->dev)) {
				o->st = rows[r];
				o->have_stat = 1;
				break;
			}
	}
	return snap;
}

/* Slow-io buckets idle for BUCKET_IDLE_NS and io_start entries older than
 * START_STALE_NS are removed (collected first, deleted after the walk). */
static void sweep(struct io_priv *ip, uint64_t now)
{
	int bfd = bpf_map__fd(ip->skel->maps.io_buckets), sfd = bpf_map__fd(ip->skel->maps.io_start);
	struct sl_io_key k, nk, *pk = NULL;
	struct sl_exec_bucket b;
	__u64 rk, rn, *rp = NULL;
	struct {
		__u64 insert_ns, issue_ns, pid_tgid; /* struct io_rq of bpf/io.bpf.c */
	} r;
	void *idle = NULL;
	size_t n = 0, cap = 0;

	while (bpf_map_get_next_key(bfd, pk, &nk) == 0) {
		k = nk;
		pk = &k;
		if (bpf_map_lookup_elem(bfd, &k, &b) || b.last_ns + BUCKET_IDLE_NS > now)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			void *ni = realloc(idle, nc * sizeof(k));
			if (!ni)
				break;
			idle = ni;
			cap = nc;
		}
		((struct sl_io_key *)idle)[n++] = k;
	}
	for (size_t i = 0; i < n; i++)
		if (bpf_map_lookup_and_delete_elem(bfd, &((struct sl_io_key *)idle)[i], &b) == 0) {
			uint64_t rb = sl_bucket_pending_rb(&b);
			atomic_fetch_add(&ip->ringbuf_expired, rb);
			atomic_fetch_add(&ip->ratelimit_expired, b.pending - rb);
		}
	free(idle);
	idle = NULL;
	n = cap = 0;
	while (bpf_map_get_next_key(sfd, rp, &rn) == 0) {
		rk = rn;
		rp = &rk;
		if (bpf_map_lookup_elem(sfd, &rk, &r))
			continue;
		uint64_t ts = r.issue_ns ? r.issue_ns : r.insert_ns;
		if (ts + START_STALE_NS > now)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			void *ni = realloc(idle, nc * sizeof(rk));
			if (!ni)
				break;
			idle = ni;
			cap = nc;
		}
		((__u64 *)idle)[n++] = rk;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(sfd, &((__u64 *)idle)[i]);
	free(idle);
}

static void io_tick(struct sl_module *m, uint64_t now_ns)
{
	struct io_priv *ip = m->priv;
	struct io_series *s, *t;
	struct io_cgser *g, *gt;
	struct io_diskstat *rows;
	struct io_snap *snap;
	uint64_t interval;
	size_t nrows;

	if (!ip || !ip->skel)
		return;
	ip->tick_no++;
	HASH_ITER(hh, ip->series, s, t)
		memset(&s->iv, 0, sizeof(s->iv));
	HASH_ITER(hh, ip->cgseries, g, gt)
		memset(&g->iv, 0, sizeof(g->iv));
	interval = ip->last_tick_ns && now_ns > ip->last_tick_ns ? now_ns - ip->last_tick_ns : 0;
	ip->last_tick_ns = now_ns;
	read_hist(ip);
	rows = read_diskstats(&nrows); /* right after the kernel entries: the two side by side */
	names_update(ip, rows, nrows);
	ip->names_read_ns = now_ns;
	read_cg(ip);
	if (now_ns - ip->last_sweep_ns >= SL_NSEC_PER_SEC) {
		sweep(ip, now_ns);
		ip->last_sweep_ns = now_ns;
	}
	series_expire(ip);
	snap = build_snap(ip, now_ns, interval, rows, nrows);
	free(rows);
	if (!snap)
		return;
	atomic_store(&ip->nseries_pub, (uint64_t)(snap->n + snap->ncg));
	sl_snapref_publish(&ip->snap, &snap->base);
}

/* ---------- records ---------- */

static int on_record(void *ctx, void *data, size_t size)
{
	struct sl_module *m = ctx;
	struct io_priv *ip = m->priv;
	const struct sl_io_slow_event *e = data;
	struct sl_subject subj;
	struct sl_attr at;
	json_t *o, *b;
	uint64_t id;
	int in_pod, hier = -1;

	if (size < sizeof(*e) || e->hdr.type != SL_EV_IO_SLOW) {
		sl_module_decode_error(m);
		return 0;
	}
	if (!(o = io_slow_fields(e, size, dev_name(ip, e->key.dev)))) {
		sl_module_decode_error(m);
		return 0;
	}
	/* the event is the blkcg's: its container, the submitter a field */
	id = resolve_blkcg(ip, &e->key, &at, &hier);
	in_pod = at.is_container == SL_YES || (at.is_container == SL_NO && at.pod_uid[0]);
	b = json_object_get(o, "blkcg");
	json_object_set_new(b, "container_id", json_string(at.is_container == SL_YES ? at.container_id : ""));
	json_object_set_new(b, "pod_uid", json_string(in_pod ? at.pod_uid : ""));
	json_object_set_new(b, "runtime", json_string(in_pod ? at.runtime : "host"));
	json_object_set_new(o, "task", sl_module_task_json(m, &e->task));
	atomic_fetch_add(&ip->truncated_total, e->truncated_count);
	memset(&subj, 0, sizeof(subj));
	if (id && hier >= 0) {
		subj.kind = SL_SUBJ_CGROUP;
		subj.cgroup_id = id;
		subj.cgroup_hier = hier;
	} else {
		/* no blkcg known (no bio, or not found): the submitting task */
		subj.kind = SL_SUBJ_TASK;
		subj.task = &e->task;
	}
	sl_module_emit(m, K_SLOW, e->hdr.ts_ns, &subj, o, 1 + e->truncated_count);
	return 0;
}

/* ---------- lifecycle ---------- */

static int listed(const struct sl_cfg_strlist *l, const char *tp)
{
	for (unsigned i = 0; i < l->n && i < SL_CFG_STRLIST_MAX; i++)
		if (!strcmp(l->v[i], tp))
			return 1;
	return 0;
}

static int io_init(struct sl_module *m)
{
	const struct io_cfg *c = sl_module_cfg(m);
	struct io_priv *ip = calloc(1, sizeof(*ip));
	struct io_bpf *s;
	char why[NHOOKS][160];
	int absent[NHOOKS] = {0}, err, nattached = 0;
	struct btf *vmlinux;

	if (!ip)
		return -ENOMEM;
	m->priv = ip;
	ip->m = m;
	sl_snapref_init(&ip->snap);
	ip->ncpus = libbpf_num_possible_cpus();
	if (ip->ncpus <= 0) {
		snprintf(m->error, sizeof(m->error), "cannot count possible CPUs");
		return -EINVAL;
	}
	ip->pcpu = calloc((size_t)ip->ncpus, sizeof(*ip->pcpu));
	ip->pcpu_cg = calloc((size_t)ip->ncpus, sizeof(*ip->pcpu_cg));
	ip->blkcg = io_blkcg_new(sl_module_mounts(m), 4096, 5ULL * SL_NSEC_PER_SEC);
	if (!ip->pcpu || !ip->pcpu_cg || !ip->blkcg)
		return -ENOMEM;
	s = ip->skel = io_bpf__open();
	if (!s) {
		err = -errno;
		snprintf(m->error, sizeof(m->error), "open BPF object: %s", strerror(-err));
		return err;
	}
	struct bpf_program *progs[NHOOKS] = {
		s->progs.io_rq_insert, s->progs.io_rq_issue, s->progs.io_rq_complete,
		s->progs.io_rq_merge, s->progs.io_pagecache_add, s->progs.io_ra_sync,
		s->progs.io_ra_async, s->progs.io_ra_unbounded, s->progs.io_dirty_throttle};
	struct bpf_link **links[NHOOKS] = {
		&s->links.io_rq_insert, &s->links.io_rq_issue, &s->links.io_rq_complete,
		&s->links.io_rq_merge, &s->links.io_pagecache_add, &s->links.io_ra_sync,
		&s->links.io_ra_async, &s->links.io_ra_unbounded, &s->links.io_dirty_throttle};

	vmlinux = btf__load_vmlinux_btf();
	for (unsigned i = 0; i < NHOOKS; i++) {
		char tn[128];
		snprintf(tn, sizeof(tn), "btf_trace_%s", io_hook_tab[i].tp);
		if (listed(&c->missing_tracepoints, io_hook_tab[i].tp)) {
			absent[i] = 1;
			snprintf(why[i], sizeof(why[i]), "tracepoint %s:%s treated as absent (io.missing_tracepoints): %s absent",
				 io_hook_tab[i].cat, io_hook_tab[i].tp, io_hook_tab[i].figure);
		} else if (!vmlinux || btf__find_by_name_kind(vmlinux, tn, BTF_KIND_TYPEDEF) < 0) {
			absent[i] = 1;
			snprintf(why[i], sizeof(why[i]), "tracepoint %s:%s not in kernel BTF: %s absent", io_hook_tab[i].cat,
				 io_hook_tab[i].tp, io_hook_tab[i].figure);
		}
	}
	btf__free(vmlinux);
	/* issue and complete measure together: half of the pair measures nothing */
	for (int i = H_ISSUE; i <= H_COMPLETE; i++) {
		int o = i == H_ISSUE ? H_COMPLETE : H_ISSUE;
		if (absent[o] && !absent[i]) {
			absent[i] = 2;
			snprintf(why[i], sizeof(why[i]), "its pair %s:%s is absent: %s absent", io_hook_tab[o].cat,
				 io_hook_tab[o].tp, io_hook_tab[i].figure);
		}
	}
	for (unsigned i = 0; i < NHOOKS; i++)
		if (absent[i])
			bpf_program__set_autoload(progs[i], false);
	s->rodata->slow_threshold_ns = c->slow_io_threshold_ns;
	s->rodata->slow_rate = c->slow_io_rate;
	s->rodata->slow_burst = c->slow_io_burst;
	s->rodata->sl_v1_subsys_id = sl_module_v1_subsys_id(m);
	bpf_map__set_max_entries(s->maps.io_start, (__u32)c->max_inflight);
	bpf_map__set_max_entries(s->maps.io_hist, (__u32)c->max_series);
	bpf_map__set_max_entries(s->maps.io_cg, (__u32)c->max_series);
	bpf_map__set_max_entries(s->maps.io_buckets, (__u32)c->max_series);
	bpf_map__set_max_entries(s->maps.io_events, (__u32)c->ringbuf_bytes);
	err = io_bpf__load(s);
	if (err) {
		snprintf(m->error, sizeof(m->error), "load BPF object: %s", strerror(-err));
		return err;
	}
	for (unsigned i = 0; i < NHOOKS; i++) {
		if (absent[i]) {
			sl_module_hook(m, io_hooks[i].name, SL_HOOK_DEGRADED, why[i]);
			continue;
		}
		sl_module_attach(m, progs[i], links[i], io_hooks[i].name);
		nattached += *links[i] != NULL;
	}
	if (!nattached) {
		snprintf(m->error, sizeof(m->error), "no io tracepoint could be attached");
		return -ENOTSUP;
	}
	err = sl_module_ringbuf(m, "io_events", bpf_map__fd(s->maps.io_events));
	if (err) {
		snprintf(m->error, sizeof(m->error), "ring buffer registration: %s", strerror(-err));
		return err;
	}
	ip->last_tick_ns = sl_mono_ns();
	return 0;
}

static int io_set_rate_shift(struct sl_module *m, unsigned shift)
{
	struct io_priv *ip = m ? m->priv : NULL;

	if (shift > SL_RATE_SHIFT_MAX)
		return -EINVAL;
	if (!ip || !ip->skel || !ip->skel->bss)
		return -ENODEV;
	__atomic_store_n(&ip->skel->bss->rate_shift, shift, __ATOMIC_RELAXED);
	return 0;
}

static void io_destroy(struct sl_module *m)
{
	struct io_priv *ip = m->priv;
	struct io_series *s, *st;
	struct io_key *k, *kt;
	struct io_cgser *g, *gt;
	struct io_cgkey *c, *ct;
	struct io_devname *d, *dt;

	if (!ip)
		return;
	io_bpf__destroy(ip->skel);
	HASH_ITER(hh, ip->keys, k, kt) {
		HASH_DEL(ip->keys, k);
		free(k);
	}
	HASH_ITER(hh, ip->series, s, st) {
		HASH_DEL(ip->series, s);
		free(s);
	}
	HASH_ITER(hh, ip->cgkeys, c, ct) {
		HASH_DEL(ip->cgkeys, c);
		free(c);
	}
	HASH_ITER(hh, ip->cgseries, g, gt) {
		HASH_DEL(ip->cgseries, g);
		free(g);
	}
	HASH_ITER(hh, ip->names, d, dt) {
		HASH_DEL(ip->names, d);
		free(d);
	}
	struct io_diskacc *a, *at;
	HASH_ITER(hh, ip->disks, a, at) {
		HASH_DEL(ip->disks, a);
		free(a);
	}
	sl_snapref_destroy(&ip->snap);
	io_blkcg_free(ip->blkcg);
	free(ip->pcpu);
	free(ip->pcpu_cg);
	free(ip);
	m->priv = NULL;
}

const struct sl_module_ops sl_io_module = {
	.name = "io",
	.doc = "docs/IO.md",
	.config = {.size = sizeof(struct io_cfg),
		   .keys = io_keys,
		   .nkeys = sizeof(io_keys) / sizeof(io_keys[0]),
		   .check = io_cfg_check},
	.kinds = io_kinds,
	.nkinds = sizeof(io_kinds) / sizeof(io_kinds[0]),
	.families = io_families,
	.nfamilies = IO_NFAM,
	.hooks = io_hooks,
	.nhooks = NHOOKS,
	.ringbufs = io_ringbufs,
	.nringbufs = 1,
	.views = io_views,
	.nviews = 1,
	.init = io_init,
	.tick = io_tick,
	.write_metrics = io_write_metrics,
	.write_drops = io_write_drops,
	.set_rate_shift = io_set_rate_shift,
	.destroy = io_destroy,
};
