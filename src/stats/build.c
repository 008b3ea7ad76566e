/* One collector pass: walk the cgroup hierarchies, attribute, read, group
 * into workloads, carry epochs over from the previous snapshot, keep
 * tombstones. docs/STATS.md "Collector", "Workloads", "Epochs". */
#include "stats/stats.h"
#include "cgroup/cgfd.h"
#include "cgroup/cgwalk.h"
#include "cgroup/runc_state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>

/* ------------------------------------------------------------ mounts */

static int has_word(const char *list, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = list; (p = strstr(p, w)); p += n)
		if ((p == list || p[-1] == ' ' || p[-1] == ',') &&
		    (p[n] == 0 || p[n] == ' ' || p[n] == '\n' || p[n] == ','))
			return 1;
	return 0;
}

void sl_stats_mounts_from(const struct sl_cg_mounts *cm, struct sl_stats_mounts *m)
{
	char *dst[SL_CG_NCTRL] = {m->memory, m->cpu, m->cpuacct, m->blkio, m->pids};

	memset(m, 0, sizeof(*m));
	for (int i = 0; i < SL_CG_NCTRL; i++)
		snprintf(dst[i], sizeof(m->memory), "%s", cm->v1_ctrl[i]);
	snprintf(m->v2, sizeof(m->v2), "%s", cm->v2);
	m->use_v2 = !m->memory[0];
	if (m->v2[0]) {
		char path[300], buf[512];
		snprintf(path, sizeof(path), "%s/cgroup.controllers", m->v2);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (n > 0) {
				buf[n] = 0;
				if (has_word(buf, "memory"))
					m->use_v2 = 1;
			}
		}
	}
}

/* -------------------------------------------------------------- walk */

enum { F_CTR = 1, F_POD = 2 };

struct found {
	char path[SL_STATS_PATH_LEN]; /* key */
	int what;                     /* F_CTR | F_POD */
	uint64_t ino[2];              /* [0] v2, [1] v1 memory */
	struct sl_attr at;
	char sandbox_id[SL_CONTAINER_ID_LEN];
	UT_hash_handle hh;
};

struct walk {
	const struct sl_stats_build_opts *o;
	struct sl_runc_snap *runc; /* one snapshot of the runc index for the pass */
	struct found *map;
	size_t ncontainers, max;
	uint64_t skipped, dirs;
	uint64_t cut; /* directories the walker's bounds left out (cgwalk.h) */
	int hier; /* 0 v2, 1 v1 memory */
	const char *mount;
	char path[SL_STATS_PATH_LEN];
	int oom;
};

static struct found *found_get(struct walk *w, const char *path)
{
	struct found *f;
	HASH_FIND_STR(w->map, path, f);
	if (f)
		return f;
	f = calloc(1, sizeof(*f));
	if (!f) {
		w->oom = 1;
		return NULL;
	}
	snprintf(f->path, sizeof(f->path), "%s", path);
	HASH_ADD_STR(w->map, path, f);
	return f;
}

/* Per-directory walk state: the innermost enclosing container's id (a
 * container nested in it belongs to its sandbox). */
struct anc {
	char id[SL_CONTAINER_ID_LEN];
};

static int visit(const struct sl_cgwalk_ent *e, void *arg)
{
	struct walk *w = arg;
	const struct anc *pa = e->parent;
	struct anc *me = e->ctx;
	const char *anc = pa ? pa->id : "";

	if (strlen(e->rel) >= sizeof(w->path))
		return SL_CGWALK_SKIP;
	snprintf(w->path, sizeof(w->path), "%s", e->rel);
	w->dirs++;

	struct sl_attr at;
	sl_cgpath_parse_opts(w->path, w->o->path_opts, &at);
	if (at.is_container != SL_YES && w->runc &&
	    sl_runc_snap_lookup(w->runc, e->abs, at.container_id, sizeof(at.container_id))) {
		at.is_container = SL_YES;
		snprintf(at.runtime, sizeof(at.runtime), "runc");
		snprintf(at.kind, sizeof(at.kind), "container");
	}
	const char *next_anc = anc;
	if (at.is_container == SL_YES && at.container_id[0] && strcmp(at.container_id, anc)) {
		struct found *f;
		HASH_FIND_STR(w->map, w->path, f);
		if (!f && w->ncontainers >= w->max) {
			w->skipped++;
		} else {
			if (!f) {
				f = found_get(w, w->path);
				if (f)
					w->ncontainers++;
			}
			if (f) {
				f->what |= F_CTR;
				f->at = at;
				f->ino[w->hier] = e->ino;
				snprintf(f->sandbox_id, sizeof(f->sandbox_id), "%s", anc);
			}
		}
		next_anc = at.container_id;
	} else if (at.is_container != SL_YES && at.pod_uid[0] && !strcmp(at.kind, "pod")) {
		struct found *f = found_get(w, w->path);
		if (f) {
			f->what |= F_POD;
			if (!(f->what & F_CTR))
				f->at = at;
		}
	}
	snprintf(me->id, sizeof(me->id), "%s", next_anc);
	return SL_CGWALK_DESCEND;
}

static void walk_hier(struct walk *w, int hier, const char *mount)
{
	if (!mount || !mount[0])
		return;
	struct sl_cgwalk_opts wo = {.ctx_size = sizeof(struct anc)};
	struct sl_cgwalk_stats ws;
	w->hier = hier;
	w->mount = mount;
	w->path[0] = 0;
	if (sl_cgwalk_cached(w->o->walk_cache[hier], mount, &wo, visit, w, &ws) == 0)
		w->cut += sl_cgwalk_cut(&ws);
}

/* ------------------------------------------------------------ helpers */

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}
#define FNV0 0xcbf29ce484222325ull

static int64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_ctr_path(const void *a, const void *b)
{
	return strcmp(((const struct sl_stats_ctr *)a)->path, ((const struct sl_stats_ctr *)b)->path);
}

static const struct sl_stats_ctr *find_ctr(const struct sl_stats_snap *s, const char *path)
{
	if (!s || !s->nctr)
		return NULL;
	size_t lo = 0, hi = s->nctr;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(s->ctr[mid].path, path);
		if (!c)
			return &s->ctr[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int cmp_wl(const void *a, const void *b)
{
	const struct sl_stats_wl *x = a, *y = b;
	int c = strcmp(x->id, y->id);
	return c ? c : x->kind - y->kind;
}

/* Lowest index whose id is >= id. */
static size_t wl_lower(const struct sl_stats_snap *s, const char *id)
{
	size_t lo = 0, hi = s->nwl;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (strcmp(s->wl[mid].id, id) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct sl_stats_wl *find_wl(const struct sl_stats_snap *s, int kind, const char *id)
{
	if (!s)
		return NULL;
	for (size_t i = wl_lower(s, id); i < s->nwl && !strcmp(s->wl[i].id, id); i++)
		if (s->wl[i].kind == kind)
			return &s->wl[i];
	return NULL;
}

const struct sl_stats_wl *sl_stats_snap_find(const struct sl_stats_snap *s, const char *id)
{
	if (!s || !id)
		return NULL;
	size_t i = wl_lower(s, id);
	return i < s->nwl && !strcmp(s->wl[i].id, id) ? &s->wl[i] : NULL;
}

int sl_stats_id_valid(const char *id)
{
	size_t n = id ? strlen(id) : 0;
	if (n == 0 || n >= SL_CONTAINER_ID_LEN || id[0] == '.' || id[0] == '-')
		return 0;
	return strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-") == n;
}

const char *sl_wl_kind_name(int kind)
{
	static const char *const n[] = {"pod", "sandbox", "container"};
	return kind >= 0 && kind < SL_WL_NKINDS ? n[kind] : "unknown";
}

void sl_stats_snap_free(struct sl_stats_snap *s)
{
	if (!s)
		return;
	free(s->ctr);
	free(s->wl);
	free(s->members);
	free(s->gone);
	free(s->pending);
	sl_stats_prom_put(s->prom);
	free(s);
}

/* ---------------------------------------------------------- reading */

static void read_ctr(const struct sl_stats_build_opts *o, struct sl_stats_ctr *c)
{
	const struct sl_stats_mounts *m = o->mounts;
	char d[6][SL_STATS_PATH_LEN + 260];
	int rc;

	if (m->use_v2) {
		snprintf(d[0], sizeof(d[0]), "%s%s", m->v2, c->path);
		rc = sl_cgstat_read_v2_cached(o->fd_cache, d[0], c->ino_v2, &c->st);
	} else {
		const char *mnt[6] = {m->memory, m->cpu, m->cpuacct, m->blkio, m->pids, m->v2};
		for (int i = 0; i < 6; i++)
			if (mnt[i][0])
				snprintf(d[i], sizeof(d[i]), "%s%s", mnt[i], c->path);
			else
				d[i][0] = 0;
		struct sl_cgstat_v1_dirs dirs = {d[0], d[1], d[2], d[3], d[4], d[5]};
		rc = sl_cgstat_read_v1_cached(o->fd_cache, &dirs, c->ino_v1, c->ino_v2, o->clk_tck,
					      &c->st);
	}
	if (rc == 0 && c->st.files_read == 0)
		rc = -ENODATA;
	c->read_rc = rc;
}

/* Creation time of the container's directories (earliest st_ctime; kernfs
 * sets it when the directory is made) and the primary inode when the walk
 * missed it. */
static void identify(const struct sl_stats_build_opts *o, struct sl_stats_ctr *c, int64_t now,
		     int need_time)
{
	const struct sl_stats_mounts *m = o->mounts;
	const char *mnt[2] = {m->v2, m->memory};
	uint64_t *ino[2] = {&c->ino_v2, &c->ino_v1};
	int primary = (m->use_v2 || !m->memory[0]) ? 0 : 1;
	int64_t best = 0;

	for (int h = 0; h < 2; h++) {
		if (!mnt[h][0] || (!need_time && (h != primary || *ino[h])))
			continue;
		char p[SL_STATS_PATH_LEN + 260];
		struct stat sb;
		snprintf(p, sizeof(p), "%s%s", mnt[h], c->path);
		if (stat(p, &sb))
			continue;
		if (!*ino[h])
			*ino[h] = sb.st_ino;
		int64_t t = (int64_t)sb.st_ctim.tv_sec * 1000000000 + sb.st_ctim.tv_nsec;
		if (!best || t < best)
			best = t;
	}
	c->ident = primary == 0 ? (c->ino_v2 ? c->ino_v2 : c->ino_v1 | (1ull << 63))
				: (c->ino_v1 ? c->ino_v1 : c->ino_v2 | (1ull << 62));
	if (need_time)
		c->epoch_start_ns = best ? best : now;
}

/* ----------------------------------------------------------- grouping */

struct tup {
	int kind;
	const char *key;
	int32_t idx; /* ctr index, -1 = workload without a container cgroup */
};

static int cmp_tup(const void *a, const void *b)
{
	const struct tup *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	if (c)
		return c;
	if (x->kind != y->kind)
		return x->kind - y->kind;
	return x->idx - y->idx;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The machine's CPUs and memory (cAdvisor machine_cpu_cores: logical
 * CPUs; machine_memory_bytes: MemTotal of /proc/meminfo). */
static void machine(struct sl_stats_snap *s)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	s->machine_cpus = n > 0 ? (uint64_t)n : 0;
	FILE *f = fopen("/proc/meminfo", "re");
	char line[256];
	unsigned long long kb;
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) {
			s->machine_mem_bytes = (uint64_t)kb * 1024;
			break;
		}
	}
	if (f)
		fclose(f);
}

#define NAMES_BACKOFF_MIN_NS 1000000000ll
#define NAMES_BACKOFF_MAX_NS (60 * 1000000000ll)

/* Kubernetes names of c: carried from pc (the same container and cgroup in
 * the previous pass), else looked up when due. */
static void names_step(const struct sl_stats_build_opts *o, const struct sl_runc_snap *runc,
		       struct sl_stats_ctr *c, const struct sl_stats_ctr *pc, int64_t now)
{
	if (pc) {
		c->names = pc->names;
		c->names_found = pc->names_found;
		c->names_next_ns = pc->names_next_ns;
		c->names_backoff_ns = pc->names_backoff_ns;
	}
	if (!o->k8s_roots || c->names_found || now < c->names_next_ns || !c->id[0])
		return;
	c->names_found = sl_k8s_names_lookup(o->k8s_roots, runc, c->id, c->pod_uid, &c->names) == 1;
	if (!c->names_found && runc && o->runc) {
		/* the miss may have found runc's state newer than the snapshot
		 * (runc_state.h): once more on a rebuilt one */
		struct sl_runc_snap *r2 = sl_runc_index_get(o->runc);
		if (r2 != runc)
			c->names_found = sl_k8s_names_lookup(o->k8s_roots, r2, c->id, c->pod_uid, &c->names) == 1;
		sl_runc_snap_put(r2);
	}
	if (!c->names_found && sl_runc_snap_pending(runc, c->id)) {
		c->names_next_ns = now; /* runc mid-create: again at the next pass */
	} else if (!c->names_found) {
		c->names_backoff_ns = c->names_backoff_ns ? c->names_backoff_ns * 2 : NAMES_BACKOFF_MIN_NS;
		if (c->names_backoff_ns > NAMES_BACKOFF_MAX_NS)
			c->names_backoff_ns = NAMES_BACKOFF_MAX_NS;
		c->names_next_ns = now + c->names_backoff_ns;
	}
}

static void set_epoch_id(char *buf, uint64_t h)
{
	snprintf(buf, SL_STATS_EPOCH_LEN, "%016llx", (unsigned long long)h);
}

static int group(struct sl_stats_snap *s, struct found *pods, size_t npods,
		 const struct sl_stats_snap *prev)
{
	size_t cap = s->nctr * 3 + npods + 1, nt = 0;
	struct tup *t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	/* which containers enclose others (sandboxes) */
	for (size_t i = 0; i < s->nctr; i++) {
		const struct sl_stats_ctr *c = &s->ctr[i];
		if (c->overhead) {
			/* the host cost of sandbox c->id: in its sums, not a container */
			t[nt++] = (struct tup){SL_WL_SANDBOX, c->id, (int32_t)i};
			continue;
		}
		t[nt++] = (struct tup){SL_WL_CONTAINER, c->id, (int32_t)i};
		if (c->sandbox_id[0])
			t[nt++] = (struct tup){SL_WL_SANDBOX, c->sandbox_id, (int32_t)i};
		else if (c->pod_uid[0])
			t[nt++] = (struct tup){SL_WL_POD, c->pod_uid, (int32_t)i};
	}
	/* kata: the sandbox cgroup holds the VMM; with nothing nested it is a
	 * sandbox of one */
	size_t base = nt;
	for (size_t i = 0; i < s->nctr; i++) {
		const struct sl_stats_ctr *c = &s->ctr[i];
		int nested = 0;
		if (strcmp(c->runtime, "kata") || c->overhead)
			continue;
		for (size_t k = 0; k < base && !nested; k++)
			nested = t[k].kind == SL_WL_SANDBOX && !strcmp(t[k].key, c->id) &&
				 !s->ctr[t[k].idx].overhead;
		if (!nested && nt < cap)
			t[nt++] = (struct tup){SL_WL_SANDBOX, c->id, (int32_t)i};
	}
	size_t nmembers = nt;
	struct found *f = pods;
	for (size_t i = 0; i < npods && f; i++, f = f->hh.next)
		if (nt < cap)
			t[nt++] = (struct tup){SL_WL_POD, f->at.pod_uid, -1};
	qsort(t, nt, sizeof(*t), cmp_tup);

	s->members = calloc(nmembers + 1, sizeof(*s->members));
	s->wl = calloc(nt + 1, sizeof(*s->wl));
	uint64_t *ids = calloc(nmembers + 1, sizeof(uint64_t));
	if (!s->members || !s->wl || !ids) {
		free(t);
		free(ids);
		return -ENOMEM;
	}
	size_t nm = 0;
	for (size_t i = 0; i < nt;) {
		size_t j = i;
		struct sl_stats_wl *w = &s->wl[s->nwl++];
		w->kind = t[i].kind;
		snprintf(w->id, sizeof(w->id), "%s", t[i].key);
		w->first = (uint32_t)nm;
		sl_stats_sum_init(&w->sum);
		int64_t latest = 0;
		for (; j < nt && t[j].kind == t[i].kind && !strcmp(t[j].key, t[i].key); j++) {
			if (t[j].idx < 0)
				continue;
			const struct sl_stats_ctr *c = &s->ctr[t[j].idx];
			s->members[nm++] = (uint32_t)t[j].idx;
			ids[w->n++] = c->ident;
			if (c->read_rc == 0)
				sl_stats_sum_add(&w->sum, &c->st);
			if (c->epoch_start_ns > latest)
				latest = c->epoch_start_ns;
		}
		sl_stats_sum_finish(&w->sum);
		w->state = w->n == 0 ? SL_WLS_NO_CGROUP : w->sum.nread == 0 ? SL_WLS_UNREADABLE : SL_WLS_READY;
		if (w->n == 1) {
			w->member_hash = ids[0];
		} else if (w->n > 1) {
			qsort(ids, w->n, sizeof(*ids), cmp_u64);
			w->member_hash = fnv1a(FNV0, ids, w->n * sizeof(*ids));
		}
		set_epoch_id(w->epoch_id, w->member_hash);
		const struct sl_stats_wl *pw = find_wl(prev, w->kind, w->id);
		if (w->n == 0)
			w->epoch_start_ns = 0;
		else if (pw && pw->member_hash == w->member_hash)
			w->epoch_start_ns = pw->epoch_start_ns;
		else if (pw && pw->n > 0)
			w->epoch_start_ns = s->observed_ns; /* membership changed under our eyes */
		else
			w->epoch_start_ns = latest;
		i = j;
	}
	free(t);
	free(ids);
	qsort(s->wl, s->nwl, sizeof(*s->wl), cmp_wl);
	return 0;
}

/* Workloads of prev that are gone now, and older tombstones still within
 * the grace period. */
static int tombstones(struct sl_stats_snap *s, const struct sl_stats_snap *prev, int64_t grace,
		      size_t max)
{
	if (!prev)
		return 0;
	size_t cap = prev->nwl + prev->ngone;
	if (cap > max)
		cap = max;
	s->gone = calloc(cap + 1, sizeof(*s->gone));
	if (!s->gone)
		return -ENOMEM;
	for (size_t i = 0; i < prev->nwl && s->ngone < cap; i++) {
		const struct sl_stats_wl *w = &prev->wl[i];
		if (w->n == 0 || find_wl(s, w->kind, w->id))
			continue;
		struct sl_stats_gone *g = &s->gone[s->ngone++];
		g->kind = w->kind;
		g->gone_ns = s->observed_ns;
		memcpy(g->id, w->id, sizeof(g->id));
	}
	for (size_t i = 0; i < prev->ngone && s->ngone < cap; i++) {
		const struct sl_stats_gone *g = &prev->gone[i];
		if (s->observed_ns - g->gone_ns < grace && !find_wl(s, g->kind, g->id))
			s->gone[s->ngone++] = *g;
	}
	return 0;
}

static int pending(struct sl_stats_snap *s, const char *root, size_t max)
{
	if (!root || !root[0])
		return 0;
	DIR *d = opendir(root);
	if (!d)
		return 0;
	size_t cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !sl_stats_id_valid(de->d_name))
			continue;
		if (find_wl(s, SL_WL_CONTAINER, de->d_name))
			continue;
		char p[600];
		snprintf(p, sizeof(p), "%s/%s/state.json", root, de->d_name);
		if (access(p, F_OK))
			continue;
		if (s->npending == cap) {
			if (cap >= max)
				break;
			size_t nc = cap ? cap * 2 : 16;
			void *n = realloc(s->pending, nc * sizeof(*s->pending));
			if (!n) {
				closedir(d);
				return -ENOMEM;
			}
			s->pending = n;
			cap = nc;
		}
		memcpy(s->pending[s->npending++].id, de->d_name, strlen(de->d_name) + 1); /* < 80: valid id */
	}
	closedir(d);
	return 0;
}

/* -------------------------------------------------------------- build */

struct sl_stats_snap *sl_stats_build(const struct sl_stats_build_opts *o,
				     const struct sl_stats_snap *prev)
{
	struct sl_stats_snap *s = calloc(1, sizeof(*s));
	struct walk w = {.o = o};
	struct found *f, *tmp, *pods = NULL;
	size_t npods = 0, i = 0;
	uint64_t t0 = mono_ns();

	if (!s)
		return NULL;
	s->seq = prev ? prev->seq + 1 : 1;
	s->observed_ns = o->now_ns ? o->now_ns : wall_ns();
	s->cg_version = o->mounts->use_v2 ? 2 : 1;
	w.max = o->max_containers ? o->max_containers : 4096;

	sl_cgfd_cache_begin_pass(o->fd_cache);
	w.runc = o->runc ? sl_runc_index_get(o->runc) : NULL;
	walk_hier(&w, 0, o->mounts->v2);
	if (!o->mounts->use_v2)
		walk_hier(&w, 1, o->mounts->memory);
	s->skipped = w.skipped;
	s->dirs_walked = w.dirs;
	s->walk_cut = w.cut;

	s->ctr = calloc(w.ncontainers + 1, sizeof(*s->ctr));
	if (!s->ctr || w.oom)
		goto oom;
	HASH_ITER(hh, w.map, f, tmp) {
		if (f->what & F_CTR) {
			struct sl_stats_ctr *c = &s->ctr[i++];
			snprintf(c->id, sizeof(c->id), "%s", f->at.container_id);
			snprintf(c->runtime, sizeof(c->runtime), "%s", f->at.runtime);
			snprintf(c->pod_uid, sizeof(c->pod_uid), "%s", f->at.pod_uid);
			snprintf(c->qos, sizeof(c->qos), "%s", f->at.qos);
			snprintf(c->sandbox_id, sizeof(c->sandbox_id), "%s", f->sandbox_id);
			snprintf(c->path, sizeof(c->path), "%s", f->path);
			c->overhead = !strcmp(f->at.kind, "overhead");
			c->ino_v2 = f->ino[0];
			c->ino_v1 = f->ino[1];
		} else if (f->what & F_POD) {
			HASH_DEL(w.map, f);
			HASH_ADD_STR(pods, path, f);
			npods++;
		}
	}
	s->nctr = i;
	qsort(s->ctr, s->nctr, sizeof(*s->ctr), cmp_ctr_path);

	for (i = 0; i < s->nctr; i++) {
		struct sl_stats_ctr *c = &s->ctr[i];
		identify(o, c, s->observed_ns, 0);
		const struct sl_stats_ctr *pc = find_ctr(prev, c->path);
		if (pc && pc->ident == c->ident)
			c->epoch_start_ns = pc->epoch_start_ns;
		else
			identify(o, c, s->observed_ns, 1);
		set_epoch_id(c->epoch_id, c->ident);
		read_ctr(o, c);
		names_step(o, w.runc, c, pc && pc->ident == c->ident && !strcmp(pc->id, c->id) ? pc : NULL,
			   s->observed_ns);
	}
	sl_runc_snap_put(w.runc);
	w.runc = NULL;
	s->root.path[0] = 0; /* mount + "" = the root directory */
	read_ctr(o, &s->root);
	sl_cgfd_cache_end_pass(o->fd_cache); /* closes the cgroups not read this pass */
	machine(s);
	if (group(s, pods, npods, prev))
		goto oom;
	if (tombstones(s, prev, o->gone_grace_ns, 4 * w.max + 1024))
		goto oom;
	if (pending(s, o->runc_root, w.max))
		goto oom;
	s->duration_ns = mono_ns() - t0;
	HASH_ITER(hh, w.map, f, tmp) {
		HASH_DEL(w.map, f);
		free(f);
	}
	HASH_ITER(hh, pods, f, tmp) {
		HASH_DEL(pods, f);
		free(f);
	}
	return s;
oom:
	HASH_ITER(hh, w.map, f, tmp) {
		HASH_DEL(w.map, f);
		free(f);
	}
	HASH_ITER(hh, pods, f, tmp) {
		HASH_DEL(pods, f);
		free(f);
	}
	sl_stats_snap_free(s);
	return NULL;
}
