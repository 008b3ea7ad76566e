/* sched module, user half: load/attach bpf/sched.bpf.c, decode sched_delay
 * records, and every tick fold the kernel's per-cgroup histograms into
 * per-container series (attribution on the poll-loop thread), read CFS
 * throttling from cpu.stat, keep the watch map filled, and publish an
 * immutable snapshot for /metrics and the API (sched_snap.c).
 * Definitions of every figure: docs/SCHED.md. */
#include "modules/sched.h"
#include "modules/sched_hist.h"
#include "modules/sched_internal.h"
#include "common/json.h"
#include "common/log.h"
#include "sched.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MOD "sched"
/* A series with no live cgroup key is dropped after this many ticks. */
#define SERIES_IDLE_TICKS 300
/* Keys not attributed to a container are re-resolved this often (ticks):
 * a plain runc container's state may appear after its first wait. */
#define RERESOLVE_TICKS 5

struct sched_series {
	char id[SL_CONTAINER_ID_LEN]; /* hash key; "" = host */
	char pod_uid[SL_POD_UID_LEN];
	char runtime[SL_RUNTIME_LEN];
	struct sl_k8s_names names; /* Kubernetes names ("" until found) */
	int is_host;
	int watched;
	uint64_t slots[SL_SCHED_SLOTS], sum_ns, class_ns[3];
	uint64_t iv_slots[SL_SCHED_SLOTS], iv_sum_ns, iv_class_ns[3], iv_max_ns;
	/* cgroup directory for cpu.stat: the shortest path among its keys */
	char relpath[SL_CGPATH_BYTES];
	int hier;
	int ncg;
	uint64_t cgids[SCHED_MAX_CGIDS];
	int nkeys;
	uint64_t last_active_tick;
	int cpu_ok, prev_cpu_ok;
	struct sl_cgstat_cpu cpu, prev_cpu;
	int nneigh;
	struct sched_neigh neigh[SCHED_NEIGH_TRACK];
	UT_hash_handle hh;
};

struct sched_key {
	struct sl_sched_key k; /* hash key */
	struct sched_series *s; /* NULL: not exported (max_containers) */
	struct sl_sched_hist last;
	uint64_t seen_tick, resolved_tick;
	uint64_t hist_tick; /* last tick the key was read from sched_hist (seen_tick
	                     * also counts sightings as a neighbour in a pair) */
	int in_hist;  /* present in sched_hist (has a `last`) */
	uint32_t slot1; /* its sched_hist slot + 1 when last read; 0 = none */
	int watched;  /* inserted into sched_watch */
	uint64_t pending;
	UT_hash_handle hh;
};

/* Totals of one (victim, neighbour) cgroup-key pair: the in-value slots of
 * every CPU plus the sched_pairs spill map. */
struct sched_pairst {
	struct sl_sched_pair_key k;
	uint64_t wait_ns, count;      /* totals at the previous tick */
	uint64_t cur_wait, cur_count; /* being summed this tick */
	uint64_t seen_tick;
	UT_hash_handle hh;
};

/* ---------- names and decoding ---------- */

const char *sl_sched_contention_name(unsigned c)
{
	static const char *const n[] = {"idle", "internal", "external"};
	return c < 3 ? n[c] : "unknown";
}

const char *sl_sched_enqueue_name(unsigned e)
{
	static const char *const n[] = {"unknown", "wakeup", "wakeup_new", "preempted"};
	return e < 4 ? n[e] : "unknown";
}

int sl_sched_watch_match(const char *watch, const char *container_id, const char *pod_uid)
{
	const char *p = watch;

	if (!container_id || !container_id[0])
		return 0;
	if (!strcmp(watch, "all"))
		return 1;
	if (!strcmp(watch, "none"))
		return 0;
	while (*p) {
		while (*p == ',' || *p == ' ')
			p++;
		size_t n = strcspn(p, ", ");
		if (n && (!strncmp(container_id, p, n) || (pod_uid && pod_uid[0] && !strncmp(pod_uid, p, n))))
			return 1;
		p += n;
	}
	return 0;
}

static json_t *task_json_plain(const struct sl_task_id *t)
{
	char comm[SL_COMM_LEN + 1];
	json_t *o = json_object();
	memcpy(comm, t->comm, SL_COMM_LEN);
	comm[SL_COMM_LEN] = 0;
	json_object_set_new(o, "pid", json_integer(t->pid));
	json_object_set_new(o, "comm", sl_json_str_lossy(comm, strlen(comm)));
	json_object_set_new(o, "cgroup_id", json_integer((json_int_t)t->cgroup_id));
	json_object_set_new(o, "cgroup_v1_id", json_integer((json_int_t)t->cgroup_v1_id));
	return o;
}

json_t *sl_sched_delay_fields(struct sl_module *m, const struct sl_sched_delay_event *e, size_t size)
{
	json_t *o, *n;

	if (size < sizeof(*e))
		return NULL;
	o = json_object();
	json_object_set_new(o, "tid", json_integer(e->task.tid));
	json_object_set_new(o, "wait_ns", json_integer((json_int_t)e->wait_ns));
	json_object_set_new(o, "cpu", json_integer(e->hdr.cpu));
	json_object_set_new(o, "contention", json_string(sl_sched_contention_name(e->contention)));
	json_object_set_new(o, "enqueue", json_string(sl_sched_enqueue_name(e->enqueue)));
	json_object_set_new(o, "truncated_count", json_integer((json_int_t)e->truncated_count));
	if (m && m->agent)
		n = sl_module_task_json(m, &e->neighbour);
	else
		n = task_json_plain(&e->neighbour);
	json_object_set_new(n, "tid", json_integer(e->neighbour.tid));
	json_object_set_new(o, "neighbour", n);
	return o;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct sl_module *m = ctx;
	struct sched_priv *sp = m->priv;
	const struct sl_hdr *h = data;
	json_t *o;

	if (size >= sizeof(*h) && h->type == SL_EV_SCHED_DELAY) {
		const struct sl_sched_delay_event *e = data;
		if ((o = sl_sched_delay_fields(m, e, size))) {
			struct sl_subject subj = {.kind = SL_SUBJ_TASK, .task = &e->task};
			atomic_fetch_add(&sp->truncated_total, e->truncated_count);
			sl_module_emit(m, 0, h->ts_ns, &subj, o, 1 + e->truncated_count);
			return 0;
		}
	}
	sl_module_decode_error(m);
	return 0;
}

/* ---------- series and keys (poll loop) ---------- */

static struct sched_series *series_get(struct sched_priv *sp, const struct sl_attr *at)
{
	struct sched_series *s;
	int host = at->is_container != SL_YES;
	const char *id = host ? "" : at->container_id;

	HASH_FIND_STR(sp->series, id, s);
	if (s) {
		if (!host && !s->names.pod[0] && at->names.pod[0])
			s->names = at->names; /* found after the series was made */
		return s;
	}
	if (!host && sp->nseries >= sp->cfg->max_containers) {
		atomic_fetch_add(&sp->series_dropped, 1);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	snprintf(s->id, sizeof(s->id), "%s", id);
	s->is_host = host;
	snprintf(s->runtime, sizeof(s->runtime), "%s", host ? "host" : at->runtime);
	if (!host) {
		snprintf(s->pod_uid, sizeof(s->pod_uid), "%s", at->pod_uid);
		s->names = at->names;
	}
	s->watched = !host && sl_sched_watch_match(sp->cfg->watch, at->container_id, at->pod_uid);
	s->hier = -1;
	s->last_active_tick = sp->tick_no;
	HASH_ADD_STR(sp->series, id, s);
	if (!host)
		sp->nseries++;
	return s;
}

static void series_attach_key(struct sched_series *s, const struct sl_sched_key *k, const char *path,
			      int hier)
{
	s->nkeys++;
	if (s->ncg < SCHED_MAX_CGIDS) {
		uint64_t id = hier == SL_CG_V1 ? k->cgroup_v1_id : k->cgroup_id;
		int dup = 0;
		for (int i = 0; i < s->ncg; i++)
			dup |= s->cgids[i] == id;
		if (!dup)
			s->cgids[s->ncg++] = id;
	}
	if (!s->is_host && path && path[0] && (!s->relpath[0] || strlen(path) < strlen(s->relpath))) {
		snprintf(s->relpath, sizeof(s->relpath), "%s", path);
		s->hier = hier;
	}
}

/* Resolve a cgroup key to its series (hybrid rule, as for events). */
static void key_resolve(struct sched_priv *sp, struct sched_key *ks)
{
	struct sl_attr at;
	char path[SL_CGPATH_BYTES] = "";
	int hier = -1;
	struct sched_series *s;

	sl_module_resolve_cgroup(sp->m, ks->k.cgroup_id, ks->k.cgroup_v1_id, &at, NULL);
	if (sl_module_cgroup_path(sp->m, ks->k.cgroup_id, ks->k.cgroup_v1_id, path, sizeof(path), &hier))
		path[0] = 0;
	ks->resolved_tick = sp->tick_no;
	s = series_get(sp, &at);
	if (s == ks->s)
		return;
	if (ks->s)
		ks->s->nkeys--;
	ks->s = s;
	if (s)
		series_attach_key(s, &ks->k, path, hier);
}

static struct sched_key *key_get(struct sched_priv *sp, const struct sl_sched_key *k)
{
	struct sched_key *ks;

	HASH_FIND(hh, sp->keys, k, sizeof(*k), ks);
	if (ks)
		return ks;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return NULL;
	ks->k = *k;
	HASH_ADD(hh, sp->keys, k, sizeof(ks->k), ks);
	key_resolve(sp, ks);
	return ks;
}

static void key_free(struct sched_priv *sp, struct sched_key *ks)
{
	if (ks->s)
		ks->s->nkeys--;
	HASH_DEL(sp->keys, ks);
	free(ks);
}

/* Add a neighbour's interval contribution to victim series v. */
static void neigh_add(struct sched_series *v, const struct sched_series *n, uint64_t wait_ns, uint64_t count)
{
	struct sched_neigh *e = NULL;

	for (int i = 0; i < v->nneigh; i++)
		if (v->neigh[i].is_host == n->is_host && !strcmp(v->neigh[i].id, n->id))
			e = &v->neigh[i];
	if (!e) {
		if (v->nneigh < SCHED_NEIGH_TRACK) {
			e = &v->neigh[v->nneigh++];
		} else { /* replace the smallest */
			e = &v->neigh[0];
			for (int i = 1; i < v->nneigh; i++)
				if (v->neigh[i].wait_ns < e->wait_ns)
					e = &v->neigh[i];
		}
		memset(e, 0, sizeof(*e));
		snprintf(e->id, sizeof(e->id), "%s", n->id);
		snprintf(e->pod_uid, sizeof(e->pod_uid), "%s", n->pod_uid);
		snprintf(e->runtime, sizeof(e->runtime), "%s", n->runtime);
		e->is_host = n->is_host;
	}
	e->wait_ns += wait_ns;
	e->count += count;
	e->iv_wait_ns += wait_ns;
	e->iv_count += count;
}

/* ---------- cpu.stat (throttling) ---------- */

static int read_text(const char *dir, const char *rel, const char *file, char *buf, size_t len)
{
	char p[1024];
	int fd;
	ssize_t n;

	if (snprintf(p, sizeof(p), "%s%s/%s", dir, rel, file) >= (int)sizeof(p))
		return -1;
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

/* cpu.stat of a container series: the v2 directory first; when it has no
 * bandwidth figures (hybrid host: the cpu controller is on v1), the v1 cpu
 * and cpuacct directories at the same relative path. */
static void series_read_cpu(struct sched_priv *sp, struct sched_series *s)
{
	const struct sl_cg_mounts *mounts = sl_module_mounts(sp->m);
	char t1[2048], t2[256], t3[512];
	struct sl_cgstat_cpu c;

	s->prev_cpu = s->cpu;
	s->prev_cpu_ok = s->cpu_ok;
	s->cpu_ok = 0;
	if (!s->relpath[0] || !strcmp(s->relpath, "/"))
		return;
	memset(&c, 0, sizeof(c));
	if (mounts->v2[0] && !read_text(mounts->v2, s->relpath, "cpu.stat", t1, sizeof(t1)))
		sl_cgstat_cpu_v2_text(t1, &c);
	if (!(c.known & SL_CPU_NR_PERIODS) && sp->cpu_v1[0]) {
		struct sl_cgcpu_v1_text v1 = {0};
		struct sl_cgstat_cpu c1;
		if (!read_text(sp->cpu_v1, s->relpath, "cpu.stat", t1, sizeof(t1)))
			v1.cpu_stat = t1;
		if (sp->cpuacct_v1[0] && !read_text(sp->cpuacct_v1, s->relpath, "cpuacct.usage", t2, sizeof(t2)))
			v1.cpuacct_usage = t2;
		if (sp->cpuacct_v1[0] && !read_text(sp->cpuacct_v1, s->relpath, "cpuacct.stat", t3, sizeof(t3)))
			v1.cpuacct_stat = t3;
		sl_cgstat_cpu_v1_text(&v1, 0, &c1);
		if (c1.known & SL_CPU_NR_PERIODS) {
			c.nr_periods = c1.nr_periods;
			c.nr_throttled = c1.nr_throttled;
			c.throttled_usec = c1.throttled_usec;
			c.known |= c1.known & (SL_CPU_NR_PERIODS | SL_CPU_NR_THROTTLED | SL_CPU_THROTTLED);
		}
		if (!(c.known & SL_CPU_USAGE) && (c1.known & SL_CPU_USAGE)) {
			c.usage_usec = c1.usage_usec;
			c.known |= SL_CPU_USAGE;
		}
	}
	if (c.known) {
		s->cpu = c;
		s->cpu_ok = 1;
	}
}

/* ---------- tick ---------- */

/* Add one source's totals of a (victim, neighbour) pair for this tick. */
static void pair_accum(struct sched_priv *sp, const struct sl_sched_key *victim,
		       const struct sl_sched_key *neigh, uint64_t wait_ns, uint64_t count)
{
	struct sl_sched_pair_key k;
	struct sched_pairst *ps;

	memset(&k, 0, sizeof(k));
	k.victim = *victim;
	k.neighbour = *neigh;
	HASH_FIND(hh, sp->pairs, &k, sizeof(k), ps);
	if (!ps) {
		if (!(ps = calloc(1, sizeof(*ps))))
			return;
		ps->k = k;
		HASH_ADD(hh, sp->pairs, k, sizeof(ps->k), ps);
	}
	if (ps->seen_tick != sp->tick_no) {
		ps->seen_tick = sp->tick_no;
		ps->cur_wait = ps->cur_count = 0;
	}
	ps->cur_wait += wait_ns;
	ps->cur_count += count;
}

/* Keys read from sched_slot before whose entry is gone without a reap
 * here (the kernel half's cgroup_rmdir removed it when sched_gone was
 * full): their slots are given back. */
static void slots_vanished(struct sched_priv *sp)
{
	int sfd = bpf_map__fd(sp->skel->maps.sched_slot);
	struct sched_key *ks, *tmp;
	uint32_t idx;

	HASH_ITER(hh, sp->keys, ks, tmp) {
		if (!ks->slot1 || ks->hist_tick == sp->tick_no)
			continue;
		if (bpf_map_lookup_elem(sfd, &ks->k, &idx) == 0 && idx == ks->slot1 - 1)
			continue; /* still there (not read this tick) */
		sched_slot_release(sp, ks->slot1 - 1);
		ks->slot1 = 0;
	}
}

/* One cgroup key's sched_hist slot idx, its per-CPU values in sp->pcpu:
 * neighbours, deltas into its series. */
static void hist_one(struct sched_priv *sp, const struct sl_sched_key *kp, uint32_t idx, uint64_t epoch)
{
	struct sl_sched_hist sum;
	uint64_t mx, d[SL_SCHED_SLOTS];
	struct sched_key *ks;
	struct sl_sched_key key = *kp;

	for (int c = 0; c < sp->ncpus; c++)
		for (int i = 0; i < SL_SCHED_NB_SLOTS; i++) {
			const struct sl_sched_nb *nb = &sp->pcpu[c].nb[i];
			if (nb->count)
				pair_accum(sp, &key, &nb->key, nb->wait_ns, nb->count);
		}
	sl_sched_fold_cpus(sp->pcpu, sp->ncpus, epoch, &sum, &mx);
	if (!(ks = key_get(sp, &key)))
		return;
	if (ks->slot1 && ks->slot1 != idx + 1)
		sched_slot_release(sp, ks->slot1 - 1); /* re-created under a new slot */
	ks->slot1 = idx + 1;
	ks->seen_tick = sp->tick_no;
	ks->hist_tick = sp->tick_no;
	if (!ks->in_hist)
		memset(&ks->last, 0, sizeof(ks->last));
	uint64_t cur[SL_SCHED_SLOTS], last[SL_SCHED_SLOTS];
	for (unsigned k = 0; k < SL_SCHED_SLOTS; k++) {
		cur[k] = sum.slots[k];
		last[k] = ks->last.slots[k];
	}
	int reset = sl_sched_delta(cur, last, d);
	uint64_t dsum = reset || sum.sum_ns < ks->last.sum_ns ? sum.sum_ns : sum.sum_ns - ks->last.sum_ns;
	uint64_t dcls[3];
	for (int i = 0; i < 3; i++)
		dcls[i] = reset || sum.class_ns[i] < ks->last.class_ns[i] ? sum.class_ns[i]
								: sum.class_ns[i] - ks->last.class_ns[i];
	ks->last = sum;
	ks->in_hist = 1;
	if (!ks->s && ks->resolved_tick + RERESOLVE_TICKS <= sp->tick_no)
		key_resolve(sp, ks);
	else if (ks->s && (ks->s->is_host || !ks->s->names.pod[0]) &&
		 ks->resolved_tick + RERESOLVE_TICKS <= sp->tick_no)
		key_resolve(sp, ks); /* the host's, or a container without names yet */
	struct sched_series *s = ks->s;
	if (!s)
		return;
	uint64_t cnt = sl_sched_count(d);
	for (unsigned k = 0; k < SL_SCHED_SLOTS; k++) {
		s->slots[k] += d[k];
		s->iv_slots[k] += d[k];
	}
	s->sum_ns += dsum;
	s->iv_sum_ns += dsum;
	for (int i = 0; i < 3; i++) {
		s->class_ns[i] += dcls[i];
		s->iv_class_ns[i] += dcls[i];
	}
	if (cnt && mx > s->iv_max_ns)
		s->iv_max_ns = mx;
	if (cnt)
		s->last_active_tick = sp->tick_no;
}

struct hist_read {
	struct sched_priv *sp;
	uint64_t epoch;
	const struct sl_sched_key *keys;
	const int32_t *rev; /* slot -> index in keys, -1 none */
	uint64_t n;
};

static int hist_slot(void *ctx, uint32_t idx, const void *vals)
{
	struct hist_read *r = ctx;
	int32_t at = r->rev[idx];
	if (at < 0)
		return 0;
	memcpy(r->sp->pcpu, vals, sizeof(*r->sp->pcpu) * (size_t)r->sp->ncpus);
	r->n++;
	hist_one(r->sp, &r->keys[at], idx, r->epoch);
	return 0;
}

/* sched_slot (cgroup key -> slot) read whole: BPF_MAP_LOOKUP_BATCH, or
 * one get_next_key + lookup per key where the kernel has no batch
 * operations. Returns the number of pairs in keys/idx (at most max). */
static size_t read_slot_map(int sfd, struct sl_sched_key *keys, uint32_t *idx, size_t max)
{
	uint32_t token = 0, count;
	size_t n = 0;
	int first = 1;

	while (n < max) {
		LIBBPF_OPTS(bpf_map_batch_opts, o);
		count = (uint32_t)(max - n);
		int e = bpf_map_lookup_batch(sfd, first ? NULL : &token, &token, keys + n, idx + n, &count, &o);
		if (e && errno != ENOENT) {
			if (first && errno != ENOSPC)
				goto one_by_one;
			break;
		}
		first = 0;
		n += count;
		if (e) /* ENOENT: every bucket read */
			break;
	}
	return n;
one_by_one:
	n = 0;
	struct sl_sched_key key, next, *prev = NULL;
	while (n < max && bpf_map_get_next_key(sfd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(sfd, &key, &idx[n]))
			continue;
		keys[n++] = key;
	}
	return n;
}

/* Every cgroup key with a sched_hist slot: sched_slot read whole, then the
 * slots in use read in batches (sl_percpu_array_each): a few bpf() calls a
 * tick instead of three per cgroup. */
static void read_hist(struct sched_priv *sp, uint64_t epoch)
{
	int fd = bpf_map__fd(sp->skel->maps.sched_hist), sfd = bpf_map__fd(sp->skel->maps.sched_slot);
	size_t max = bpf_map__max_entries(sp->skel->maps.sched_slot);
	uint32_t nslots = bpf_map__max_entries(sp->skel->maps.sched_hist);
	if (!sp->rd_keys) {
		sp->rd_keys = calloc(max ? max : 1, sizeof(*sp->rd_keys));
		sp->rd_idx = calloc(max ? max : 1, sizeof(*sp->rd_idx));
		sp->rd_rev = calloc(nslots ? nslots : 1, sizeof(*sp->rd_rev));
	}
	struct sl_sched_key *keys = sp->rd_keys;
	uint32_t *idx = sp->rd_idx;
	int32_t *rev = sp->rd_rev;
	struct hist_read r = { .sp = sp, .epoch = epoch };

	if (keys && idx && rev) {
		size_t n = read_slot_map(sfd, keys, idx, max);
		uint32_t top = 0;
		for (uint32_t i = 0; i < nslots; i++)
			rev[i] = -1;
		for (size_t i = 0; i < n; i++)
			if (idx[i] < nslots) {
				rev[idx[i]] = (int32_t)i;
				if (idx[i] + 1 > top)
					top = idx[i] + 1;
			}
		r.keys = keys;
		r.rev = rev;
		/* about 1 MiB of values a batch, whatever the CPU count */
		size_t per = sizeof(*sp->pcpu) * (size_t)sp->ncpus;
		uint32_t chunk = (uint32_t)(per >= (1u << 20) ? 1 : (1u << 20) / per);
		if (top)
			sl_percpu_array_each(fd, top, sizeof(*sp->pcpu), sp->ncpus, chunk, hist_slot, &r);
	}
	atomic_store(&sp->nkeys, r.n);
	slots_vanished(sp);
}

static void read_pairs(struct sched_priv *sp)
{
	int fd = bpf_map__fd(sp->skel->maps.sched_pairs);
	struct sl_sched_pair_key key, next, *prev = NULL;
	struct sched_pairst *ps, *tmp;
	uint64_t n = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		uint64_t w = 0, c = 0;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, sp->pcpu_pair))
			continue;
		n++;
		for (int i = 0; i < sp->ncpus; i++) {
			w += sp->pcpu_pair[i].wait_ns;
			c += sp->pcpu_pair[i].count;
		}
		pair_accum(sp, &key.victim, &key.neighbour, w, c);
	}
	atomic_store(&sp->npairs, n);
	HASH_ITER(hh, sp->pairs, ps, tmp) {
		if (ps->seen_tick != sp->tick_no) { /* gone with a removed cgroup */
			HASH_DEL(sp->pairs, ps);
			free(ps);
			continue;
		}
		uint64_t dw = ps->cur_wait >= ps->wait_ns ? ps->cur_wait - ps->wait_ns : ps->cur_wait;
		uint64_t dc = ps->cur_count >= ps->count ? ps->cur_count - ps->count : ps->cur_count;
		ps->wait_ns = ps->cur_wait;
		ps->count = ps->cur_count;
		struct sched_key *vk = key_get(sp, &ps->k.victim), *nk = key_get(sp, &ps->k.neighbour);
		if (!vk || !nk)
			continue;
		nk->seen_tick = sp->tick_no;
		vk->seen_tick = sp->tick_no;
		if ((dc || dw) && vk->s && nk->s && vk->s != nk->s)
			neigh_add(vk->s, nk->s, dw, dc);
	}
}

/* Keep sched_watch in step with the series' watch flags; read pending
 * counts so that what a removed key still held is counted as dropped.
 * Only a key read from sched_hist this tick is watched: a key seen only as
 * the neighbour of a pair (a removed cgroup that still names a slot of a
 * live victim's per-CPU neighbour table) is not a cgroup that can wait any
 * more, and watching it left stale sched_watch entries behind after
 * container churn (issue 8, finding 9). Also publishes the kernel map's
 * entry count. */
static void sync_watch(struct sched_priv *sp)
{
	int fd = bpf_map__fd(sp->skel->maps.sched_watch);
	struct sched_key *ks, *tmp;
	struct sl_exec_bucket b;
	struct sl_sched_key k, next, *prev = NULL;
	uint64_t n = 0;
	int changed = 0;

	HASH_ITER(hh, sp->keys, ks, tmp) {
		if (ks->seen_tick != sp->tick_no) { /* gone from the kernel maps */
			if (ks->watched && bpf_map_lookup_and_delete_elem(fd, &ks->k, &b) == 0)
				ks->pending = b.pending;
			atomic_fetch_add(&sp->ratelimit_expired, ks->pending);
			key_free(sp, ks);
			continue;
		}
		int want = ks->s && ks->s->watched && ks->hist_tick == sp->tick_no;
		if (want && !ks->watched) {
			memset(&b, 0, sizeof(b));
			b.tokens_nano = sp->cfg->delay_burst * 1000000000ull;
			b.last_ns = sl_mono_ns();
			if (bpf_map_update_elem(fd, &ks->k, &b, BPF_NOEXIST) == 0 || errno == EEXIST)
				ks->watched = changed = 1;
			else
				atomic_fetch_add(&sp->watch_full, 1);
		} else if (!want && ks->watched) {
			if (bpf_map_lookup_and_delete_elem(fd, &ks->k, &b) == 0)
				atomic_fetch_add(&sp->ratelimit_expired, b.pending);
			ks->watched = 0;
		} else if (ks->watched && bpf_map_lookup_elem(fd, &ks->k, &b) == 0) {
			ks->pending = b.pending;
		}
	}
	/* The kernel half caches "is this key watched" per task, tagged with
	 * watch_gen: a new watched key takes effect once the generation moves.
	 * (A deleted key needs none: the emit path looks the key up anyway.) */
	if (changed)
		__atomic_fetch_add(&sp->skel->bss->watch_gen, 1, __ATOMIC_RELEASE);
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		n++;
	}
	atomic_store(&sp->watch_entries, n);
}

/* Removed cgroups queued by the kernel half (sched_gone), at most
 * SL_SCHED_GONE_BATCH per tick: collected (and sorted) before the maps are
 * read, reaped after. */
static int gone_cmp(const void *a, const void *b)
{
	const struct sl_sched_gone *x = a, *y = b;
	if (x->v1 != y->v1)
		return x->v1 < y->v1 ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static size_t gone_collect(struct sched_priv *sp)
{
	int fd = bpf_map__fd(sp->skel->maps.sched_gone);
	struct sl_sched_gone key, next, *prev = NULL;
	size_t n = 0;

	while (n < SL_SCHED_GONE_BATCH && bpf_map_get_next_key(fd, prev, &next) == 0) {
		sp->gone[n++] = next;
		key = next;
		prev = &key;
	}
	qsort(sp->gone, n, sizeof(sp->gone[0]), gone_cmp);
	return n;
}

/* 1 when either cgroup id of k is among the n collected removed cgroups. */
static int key_gone(const struct sched_priv *sp, size_t n, const struct sl_sched_key *k)
{
	struct sl_sched_gone a = {.id = k->cgroup_id, .v1 = 0}, b = {.id = k->cgroup_v1_id, .v1 = 1};
	return bsearch(&a, sp->gone, n, sizeof(a), gone_cmp) ||
	       (k->cgroup_v1_id && bsearch(&b, sp->gone, n, sizeof(b), gone_cmp));
}

/* Delete the entries of the collected removed cgroups (read this tick) from
 * the kernel maps, then their queue entries: one pass over the keys and the
 * pairs. The user-space keys follow at the next tick (not seen in the maps:
 * freed by sync_watch). */
static void gone_reap(struct sched_priv *sp, size_t n)
{
	int hfd = bpf_map__fd(sp->skel->maps.sched_slot), pfd = bpf_map__fd(sp->skel->maps.sched_pairs),
	    gfd = bpf_map__fd(sp->skel->maps.sched_gone);
	struct sched_key *ks, *ktmp;
	struct sched_pairst *ps, *ptmp;

	if (!n)
		return;
	HASH_ITER(hh, sp->keys, ks, ktmp)
		if (key_gone(sp, n, &ks->k)) {
			uint32_t idx;
			/* the slot the entry names now (a wait since the read may
			 * have re-created it under another one) and the one read */
			if (bpf_map_lookup_and_delete_elem(hfd, &ks->k, &idx) == 0 && idx + 1 != ks->slot1)
				sched_slot_release(sp, idx);
			ks->hist_tick = 0; /* read for the last time: not watched any more */
			if (ks->slot1)
				sched_slot_release(sp, ks->slot1 - 1);
			ks->slot1 = 0;
		}
	HASH_ITER(hh, sp->pairs, ps, ptmp)
		if (key_gone(sp, n, &ps->k.victim) || key_gone(sp, n, &ps->k.neighbour))
			bpf_map_delete_elem(pfd, &ps->k);
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(gfd, &sp->gone[i]);
}

static struct sched_snap *build_snap(struct sched_priv *sp, uint64_t now, uint64_t interval_ns)
{
	struct sched_series *s, *tmp;
	unsigned n = HASH_COUNT(sp->series), i = 0;
	struct sched_snap *snap = calloc(1, sizeof(*snap) + n * sizeof(snap->s[0]));

	if (!snap)
		return NULL;
	atomic_init(&snap->refs, 1);
	snap->time_mono_ns = now;
	snap->interval_ns = interval_ns;
	HASH_ITER(hh, sp->series, s, tmp) {
		struct sched_snap_series *o = &snap->s[i++];
		snprintf(o->id, sizeof(o->id), "%s", s->id);
		snprintf(o->pod_uid, sizeof(o->pod_uid), "%s", s->pod_uid);
		snprintf(o->runtime, sizeof(o->runtime), "%s", s->runtime);
		o->names = s->names;
		o->is_host = s->is_host;
		o->ncg = s->ncg;
		memcpy(o->cgids, s->cgids, sizeof(o->cgids));
		memcpy(o->slots, s->slots, sizeof(o->slots));
		o->sum_ns = s->sum_ns;
		memcpy(o->class_ns, s->class_ns, sizeof(o->class_ns));
		o->iv_count = sl_sched_count(s->iv_slots);
		o->iv_sum_ns = s->iv_sum_ns;
		memcpy(o->iv_class_ns, s->iv_class_ns, sizeof(o->iv_class_ns));
		o->iv_max_ns = s->iv_max_ns;
		o->iv_p50_ns = sl_sched_quantile(s->iv_slots, 0.50, s->iv_max_ns);
		o->iv_p90_ns = sl_sched_quantile(s->iv_slots, 0.90, s->iv_max_ns);
		o->iv_p99_ns = sl_sched_quantile(s->iv_slots, 0.99, s->iv_max_ns);
		o->iv_cpu_ns = -1;
		if (s->cpu_ok && s->prev_cpu_ok && (s->cpu.known & s->prev_cpu.known & SL_CPU_USAGE) &&
		    s->cpu.usage_usec >= s->prev_cpu.usage_usec)
			o->iv_cpu_ns = (int64_t)(s->cpu.usage_usec - s->prev_cpu.usage_usec) * 1000;
		if (s->cpu_ok && (s->cpu.known & SL_CPU_NR_PERIODS)) {
			o->has_throttle = 1;
			o->nr_periods = s->cpu.nr_periods;
			o->nr_throttled = s->cpu.nr_throttled;
			o->throttled_ns = s->cpu.throttled_usec * 1000;
			if (s->prev_cpu_ok && (s->prev_cpu.known & SL_CPU_NR_PERIODS) &&
			    s->cpu.nr_throttled >= s->prev_cpu.nr_throttled &&
			    s->cpu.throttled_usec >= s->prev_cpu.throttled_usec) {
				o->iv_nr_throttled = s->cpu.nr_throttled - s->prev_cpu.nr_throttled;
				o->iv_throttled_ns = (s->cpu.throttled_usec - s->prev_cpu.throttled_usec) * 1000;
			}
		}
		/* top neighbours by the wait they caused since first seen */
		int used[SCHED_NEIGH_TRACK] = {0};
		for (int t = 0; t < SCHED_TOP_NEIGHBOURS; t++) {
			int best = -1;
			for (int j = 0; j < s->nneigh; j++)
				if (!used[j] && (best < 0 || s->neigh[j].wait_ns > s->neigh[best].wait_ns))
					best = j;
			if (best < 0)
				break;
			used[best] = 1;
			o->neigh[o->nneigh++] = s->neigh[best];
		}
	}
	snap->n = (int)i;
	return snap;
}

static void sched_tick(struct sl_module *m, uint64_t now_ns)
{
	struct sched_priv *sp = m->priv;
	struct sched_series *s, *tmp;
	uint64_t epoch, interval;

	sp->tick_no++;
	/* Close the epoch: waits from now on record their max in the other slot. */
	epoch = __atomic_load_n(&sp->skel->bss->sched_epoch, __ATOMIC_RELAXED);
	__atomic_store_n(&sp->skel->bss->sched_epoch, epoch + 1, __ATOMIC_RELEASE);

	HASH_ITER(hh, sp->series, s, tmp) {
		memset(s->iv_slots, 0, sizeof(s->iv_slots));
		s->iv_sum_ns = 0;
		memset(s->iv_class_ns, 0, sizeof(s->iv_class_ns));
		s->iv_max_ns = 0;
		for (int i = 0; i < s->nneigh; i++)
			s->neigh[i].iv_wait_ns = s->neigh[i].iv_count = 0;
	}
	/* cgroups removed before this read: their figures are final; their
	 * entries go once read (removed later: next tick) */
	sched_slots_tick(sp); /* slots released a tick ago: zeroed, free again */
	size_t ngone = gone_collect(sp);
	read_hist(sp, epoch);
	read_pairs(sp);
	gone_reap(sp, ngone);
	sync_watch(sp);

	HASH_ITER(hh, sp->series, s, tmp) {
		if (s->nkeys <= 0 && sp->tick_no - s->last_active_tick > SERIES_IDLE_TICKS) {
			HASH_DEL(sp->series, s);
			if (!s->is_host)
				sp->nseries--;
			free(s);
			continue;
		}
		if (!s->is_host && s->nkeys > 0)
			series_read_cpu(sp, s);
	}
	interval = sp->last_tick_ns && now_ns > sp->last_tick_ns ? now_ns - sp->last_tick_ns : 0;
	sp->last_tick_ns = now_ns;
	struct sched_snap *snap = build_snap(sp, now_ns, interval);
	if (snap)
		sched_snap_publish(sp, snap);
}

/* ---------- lifecycle ---------- */

int sl_sched_use_sched_info(const char *wait_source, const char *schedstat_path)
{
	if (!strcmp(wait_source, "wakeup"))
		return 0;
	if (!strcmp(wait_source, "sched_info"))
		return 1;
	/* auto: /proc/<pid>/schedstat exists exactly when the kernel was
	 * built with CONFIG_SCHED_INFO (fs/proc/base.c) */
	return access(schedstat_path, R_OK) == 0;
}

/* Open and load bpf/sched.bpf.c with the programs of one way of timing a
 * wait (sched_info: sched_switch_si; else the wakeup hooks and
 * sched_switch). 0, or a negative errno with m->error set. */
static int sched_load(struct sl_module *m, struct sched_priv *sp, int sched_info)
{
	const struct sl_sched_cfg *cfg = sp->cfg;
	struct sched_bpf *s;
	int err;

	sp->sched_info = sched_info;
	s = sp->skel = sched_bpf__open();
	if (!s) {
		snprintf(m->error, sizeof(m->error), "open BPF object: %s", strerror(errno));
		return -errno;
	}
	bpf_program__set_autoload(s->progs.sched_switch_si, sched_info);
	bpf_program__set_autoload(s->progs.sched_task_free, sched_info);
	bpf_program__set_autoload(s->progs.sched_wakeup, !sched_info);
	bpf_program__set_autoload(s->progs.sched_wakeup_new, !sched_info);
	bpf_program__set_autoload(s->progs.sched_switch, !sched_info);
	s->rodata->delay_threshold_ns = cfg->delay_threshold_ns;
	s->rodata->delay_rate = cfg->delay_rate;
	s->rodata->delay_burst = cfg->delay_burst;
	s->rodata->sl_v1_subsys_id = sl_module_v1_subsys_id(m);
	s->rodata->v1_hierarchy_id = sl_module_mounts(m)->v1_hierarchy_id;
	bpf_map__set_max_entries(s->maps.sched_hist, (__u32)cfg->max_cgroups);
	bpf_map__set_max_entries(s->maps.sched_slot, (__u32)cfg->max_cgroups);
	bpf_map__set_max_entries(s->maps.sched_free, (__u32)cfg->max_cgroups);
	bpf_map__set_max_entries(s->maps.sched_watch, (__u32)cfg->max_cgroups);
	bpf_map__set_max_entries(s->maps.sched_pairs, (__u32)cfg->max_neighbour_pairs);
	bpf_map__set_max_entries(s->maps.sched_events, (__u32)cfg->ringbuf_size);
	err = sched_bpf__load(s);
	if (err) {
		snprintf(m->error, sizeof(m->error), "load BPF object (wait source %s): %s",
			 sched_info ? "sched_info" : "wakeup", strerror(-err));
		return err;
	}
	return 0;
}

static int sched_init(struct sl_module *m)
{
	const struct sl_sched_cfg *cfg = sl_module_cfg(m);
	struct sched_priv *sp = calloc(1, sizeof(*sp));
	struct sched_bpf *s;
	int err;

	if (!sp)
		return -ENOMEM;
	m->priv = sp;
	sp->m = m;
	sp->cfg = cfg;
	pthread_mutex_init(&sp->snap_lock, NULL);
	sp->ncpus = libbpf_num_possible_cpus();
	if (sp->ncpus <= 0) {
		snprintf(m->error, sizeof(m->error), "cannot count possible CPUs");
		return -EINVAL;
	}
	sp->pcpu = calloc((size_t)sp->ncpus, sizeof(*sp->pcpu));
	sp->pcpu_pair = calloc((size_t)sp->ncpus, sizeof(*sp->pcpu_pair));
	if (!sp->pcpu || !sp->pcpu_pair)
		return -ENOMEM;
	/* the agent's one mount discovery */
	snprintf(sp->cpu_v1, sizeof(sp->cpu_v1), "%s", sl_module_mounts(m)->v1_ctrl[SL_CG_CPU]);
	snprintf(sp->cpuacct_v1, sizeof(sp->cpuacct_v1), "%s", sl_module_mounts(m)->v1_ctrl[SL_CG_CPUACCT]);

	char fallback[sizeof(m->error)] = "";
	err = sched_load(m, sp, sl_sched_use_sched_info(cfg->wait_source, "/proc/self/schedstat"));
	if (err && !strcmp(cfg->wait_source, "auto") && sp->sched_info) {
		/* a kernel whose BTF lacks a field sched_switch_si reads (or a
		 * verifier that refuses it): the wakeup hooks, as runqlat; the
		 * figures are the same, the cost higher */
		sl_log(SL_LOG_WARN, MOD, "waits timed with the wakeup hooks: sched_info not usable (%s)", m->error);
		snprintf(fallback, sizeof(fallback), "%s", m->error);
		sched_bpf__destroy(sp->skel);
		sp->skel = NULL;
		m->error[0] = 0;
		err = sched_load(m, sp, 0);
	}
	if (err)
		return err;
	s = sp->skel;
	err = sched_slots_init(sp);
	if (err) {
		snprintf(m->error, sizeof(m->error), "fill sched_free: %s", strerror(-err));
		return err;
	}
	if (sp->sched_info) {
		static const char why[] = "not needed: waits are timed from the kernel's sched_info (sched.wait_source)";
		sl_module_hook(m, "tp_btf/sched_wakeup", SL_HOOK_DISABLED, why);
		sl_module_hook(m, "tp_btf/sched_wakeup_new", SL_HOOK_DISABLED, why);
		sl_module_attach(m, s->progs.sched_switch_si, &s->links.sched_switch_si, "tp_btf/sched_switch");
		if (!s->links.sched_switch_si) {
			snprintf(m->error, sizeof(m->error), "sched_switch could not be attached");
			return -ENOTSUP;
		}
		/* The tasks' state goes to sched_tasks slots
		 * (bpf/sched_slots.bpf.h) only while the hook that gives a
		 * freed task's slot back is attached; else it stays in task
		 * storage. */
		sl_module_attach(m, s->progs.sched_task_free, &s->links.sched_task_free,
				 "tp_btf/sched_process_free");
		if (s->links.sched_task_free)
			__atomic_store_n(&s->bss->task_slots, 1, __ATOMIC_RELEASE);
	} else {
		sl_module_attach(m, s->progs.sched_wakeup, &s->links.sched_wakeup, "tp_btf/sched_wakeup");
		sl_module_attach(m, s->progs.sched_wakeup_new, &s->links.sched_wakeup_new,
				 "tp_btf/sched_wakeup_new");
		sl_module_attach(m, s->progs.sched_switch, &s->links.sched_switch, "tp_btf/sched_switch");
		if (!s->links.sched_wakeup || !s->links.sched_switch) {
			snprintf(m->error, sizeof(m->error), "sched_wakeup/sched_switch could not be attached");
			return -ENOTSUP;
		}
		if (fallback[0]) { /* /healthz says why auto chose these hooks */
			char why[sizeof(m->hooks[0].reason)];
			snprintf(why, sizeof(why), "auto fell back to the wakeup hooks: %.120s", fallback);
			sl_module_hook_note(m, "tp_btf/sched_switch", why);
			sl_module_hook_note(m, "tp_btf/sched_wakeup", why);
			sl_module_hook_note(m, "tp_btf/sched_wakeup_new", why);
		}
	}
	sl_module_attach(m, s->progs.sched_cgroup_rmdir, &s->links.sched_cgroup_rmdir, "tp_btf/cgroup_rmdir");
	/* The per-task cgroup-key cache (bpf/sched.bpf.c task_key) is on only
	 * when both cgroup-move hooks that invalidate it are attached. */
	sl_module_attach(m, s->progs.sched_cgroup_attach, &s->links.sched_cgroup_attach, "tp_btf/cgroup_attach_task");
	sl_module_attach(m, s->progs.sched_cgroup_transfer, &s->links.sched_cgroup_transfer,
			 "tp_btf/cgroup_transfer_tasks");
	if (s->links.sched_cgroup_attach && s->links.sched_cgroup_transfer)
		__atomic_store_n(&s->bss->key_cache, 1, __ATOMIC_RELEASE);
	sp->last_tick_ns = sl_mono_ns();
	return sl_module_ringbuf(m, "sched_events", bpf_map__fd(s->maps.sched_events));
}

int sl_sched_set_rate_shift(struct sl_module *m, unsigned shift)
{
	struct sched_priv *sp = m ? m->priv : NULL;
	if (shift > 8 || !sp || !sp->skel || !sp->skel->bss)
		return -EINVAL;
	__atomic_store_n(&sp->skel->bss->rate_shift, shift, __ATOMIC_RELAXED);
	return 0;
}

unsigned sl_sched_get_rate_shift(struct sl_module *m)
{
	struct sched_priv *sp = m ? m->priv : NULL;
	if (!sp || !sp->skel || !sp->skel->bss)
		return 0;
	return __atomic_load_n(&sp->skel->bss->rate_shift, __ATOMIC_RELAXED);
}

static void sched_destroy(struct sl_module *m)
{
	struct sched_priv *sp = m->priv;
	struct sched_key *ks, *kt;
	struct sched_pairst *ps, *pt;
	struct sched_series *s, *st;

	if (!sp)
		return;
	sched_bpf__destroy(sp->skel); /* detaches every link */
	HASH_ITER(hh, sp->keys, ks, kt) {
		HASH_DEL(sp->keys, ks);
		free(ks);
	}
	HASH_ITER(hh, sp->pairs, ps, pt) {
		HASH_DEL(sp->pairs, ps);
		free(ps);
	}
	HASH_ITER(hh, sp->series, s, st) {
		HASH_DEL(sp->series, s);
		free(s);
	}
	if (sp->snap)
		sched_snap_put(sp->snap);
	pthread_mutex_destroy(&sp->snap_lock);
	free(sp->pcpu);
	free(sp->rd_keys);
	free(sp->rd_idx);
	free(sp->rd_rev);
	free(sp->pcpu_pair);
	sched_slots_free(sp);
	free(sp);
	m->priv = NULL;
}

void sched_write_metrics(struct sl_module *m, struct sl_prom *p);
void sched_write_drops(struct sl_module *m, struct sl_prom *p);

static const struct sl_ringbuf_decl sched_ringbufs[] = {{"sched_events", on_record}};
static const struct sl_api_view sched_views[] = {
	{"", 0, NULL, 0, sl_sched_view,
	 "the last per-container runqueue snapshot (docs/SCHED.md, docs/API.md GET /api/v1/sched)"},
};

static const struct sl_series_decl sched_series[SL_SCHED_NSERIES] = {
	{"sched_runqueue_latency_p99_seconds", "seconds",
	 "p99 of the runqueue waits that ended in the last snapshot interval (docs/SCHED.md)"},
	{"sched_runqueue_waiting_tasks", "count",
	 "runqueue wait time in the last snapshot interval divided by its length: tasks waiting on average"},
};

const struct sl_module_ops sl_sched_module = {
	.name = "sched",
	.doc = "docs/SCHED.md",
	.config = {sizeof(struct sl_sched_cfg), sl_sched_cfg_keys, SL_SCHED_NCFG, sl_sched_cfg_check},
	.kinds = sl_sched_kinds,
	.nkinds = 1,
	.families = sl_sched_families,
	.nfamilies = SL_SCHED_NFAMILIES,
	.hooks = sl_sched_hooks,
	.nhooks = SL_SCHED_NHOOKS,
	.ringbufs = sched_ringbufs,
	.nringbufs = 1,
	.views = sched_views,
	.nviews = 1,
	.series = sched_series,
	.nseries = SL_SCHED_NSERIES,
	.read_series = sl_sched_read_series,
	.tick_is_metrics = 1,
	.init = sched_init,
	.tick = sched_tick,
	.write_metrics = sched_write_metrics,
	.write_drops = sched_write_drops,
	.destroy = sched_destroy,
	.set_rate_shift = sl_sched_set_rate_shift,
};
