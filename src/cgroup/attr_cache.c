/* Bounded cgroup-id -> attribution cache (ATTR-2). See attr.h and
 * docs/ATTRIBUTION.md.
 *
 * Entries: (hier, id) -> {attr, path, expiry, negative} in a uthash table
 * plus a doubly linked LRU list (head = most recent). Capacity is a hard
 * bound: an insert into a full cache evicts the LRU tail.
 *
 * Lookup: (1) bounded sweep: up to SWEEP_STEP entries from the LRU tail are
 * dropped if expired; (2) the mount root id -> "host"; (3) hit: a fresh
 * positive entry answers; a fresh negative entry answers "unknown"; an
 * expired positive entry is revalidated with one stat() of mount+path (same
 * inode -> refreshed, no walk); other expired entries are dropped; (4) miss:
 * walk the hierarchy (the one walker, cgwalk.h: no mount crossing, no
 * symlinks, depth <= SL_CGWALK_MAX_DEPTH) for
 * the directory with st_ino == id (cgroup id == kernfs node id == inode
 * number on 64-bit kernels). While the cache has free room the walk also
 * records other directories it passes (at the LRU tail, never evicting).
 * Walks of one hierarchy are at most one per rewalk_interval_ns; a miss
 * inside the interval is a negative entry that expires when the next walk is
 * allowed. A walk that does not find the id leaves a negative entry for
 * negative_ttl_ns. cgroup mkdir events insert entries directly; rmdir
 * drops a negative entry at once and ends a positive one after a short
 * grace (SL_ATTR_RMDIR_GRACE_NS), so late samples of a dead container still
 * resolve.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(elt) (add_oom = 1)
#include <uthash.h>

#include "cgroup/attr.h"
#include "cgroup/cgwalk.h"
#include "cgroup/k8s_names.h"
#include "cgroup/runc_state.h"

#define SWEEP_STEP 4
#define NS_PER_SEC 1000000000ull

struct cache_key {
	uint64_t id;
	uint32_t hier;
	uint32_t pad; /* always 0: the key is hashed as bytes */
};

struct cache_entry {
	struct cache_key key;
	struct sl_attr attr;
	char *path; /* relative to the mount, starts with '/'; NULL for negative */
	uint64_t expires_ns;
	bool negative;
	bool removed; /* rmdir seen: answers until expires_ns, then dropped */
	/* Kubernetes names of container names_id (sl_attr_cache_names);
	 * NULL until looked up */
	struct names_slot *names;
	struct cache_entry *prev, *next; /* LRU list */
	UT_hash_handle hh;
};

struct names_slot {
	char id[SL_CONTAINER_ID_LEN];
	struct sl_k8s_names names;
	bool found;
	uint64_t next_ns; /* not found: next lookup allowed */
	uint64_t backoff_ns;
};

struct sl_attr_cache {
	struct sl_attr_cache_config cfg;
	struct sl_cg_mounts mounts;
	bool have_mounts;
	struct cache_entry *map;
	struct cache_entry *head, *tail;
	size_t n;
	uint64_t last_walk_ns[2];
	bool walked[2];
	struct sl_attr_cache_stats st;
	struct sl_k8s_roots roots;
};

static struct cache_key mkkey(int hier, uint64_t id)
{
	struct cache_key k;
	memset(&k, 0, sizeof(k));
	k.id = id;
	k.hier = (uint32_t)hier;
	return k;
}

static const char *mount_of(const struct sl_attr_cache *c, int hier)
{
	if (!c->have_mounts)
		return "";
	return hier == 0 ? c->mounts.v2 : c->mounts.v1;
}

static uint64_t root_of(const struct sl_attr_cache *c, int hier)
{
	if (!c->have_mounts)
		return 0;
	return hier == 0 ? c->mounts.v2_root_id : c->mounts.v1_root_id;
}

/* ---- LRU list ---- */

static void lru_unlink(struct sl_attr_cache *c, struct cache_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
}

static void lru_push_head(struct sl_attr_cache *c, struct cache_entry *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	c->head = e;
	if (!c->tail)
		c->tail = e;
}

static void lru_push_tail(struct sl_attr_cache *c, struct cache_entry *e)
{
	e->next = NULL;
	e->prev = c->tail;
	if (c->tail)
		c->tail->next = e;
	c->tail = e;
	if (!c->head)
		c->head = e;
}

static void entry_drop(struct sl_attr_cache *c, struct cache_entry *e)
{
	HASH_DEL(c->map, e);
	lru_unlink(c, e);
	free(e->path);
	free(e->names);
	free(e);
	c->n--;
}

static struct cache_entry *find(struct sl_attr_cache *c, int hier, uint64_t id)
{
	struct cache_key k = mkkey(hier, id);
	struct cache_entry *e = NULL;
	HASH_FIND(hh, c->map, &k, sizeof(k), e);
	return e;
}

/* Insert or replace (hier, id). path NULL = negative entry. at_tail puts a
 * new entry at the cold end (walk prefetch). Returns the entry or NULL on
 * allocation failure (the cache is then unchanged apart from evictions). */
static struct cache_entry *put(struct sl_attr_cache *c, int hier, uint64_t id, const char *path,
			       const struct sl_attr *attr, uint64_t expires_ns, bool at_tail)
{
	struct cache_entry *e = find(c, hier, id);
	char *dup = NULL;
	if (path && !(dup = strdup(path)))
		return NULL;
	if (e) {
		free(e->path);
		free(e->names); /* a new path or answer: names looked up again */
		e->names = NULL;
		lru_unlink(c, e);
	} else {
		while (c->n >= c->cfg.capacity && c->tail) {
			if (!c->tail->removed) /* removed ones were counted at rmdir */
				c->st.evictions++;
			entry_drop(c, c->tail);
		}
		e = calloc(1, sizeof(*e));
		if (!e) {
			free(dup);
			return NULL;
		}
		e->key = mkkey(hier, id);
		int add_oom = 0;
		HASH_ADD(hh, c->map, key, sizeof(e->key), e);
		if (add_oom) {
			free(dup);
			free(e);
			return NULL;
		}
		c->n++;
	}
	e->path = dup;
	e->negative = path == NULL;
	e->removed = false;
	e->expires_ns = expires_ns;
	if (attr) {
		e->attr = *attr;
	} else {
		memset(&e->attr, 0, sizeof(e->attr));
		e->attr.is_container = SL_UNKNOWN;
	}
	if (at_tail)
		lru_push_tail(c, e);
	else
		lru_push_head(c, e);
	return e;
}

static void sweep(struct sl_attr_cache *c, uint64_t now_ns)
{
	struct cache_entry *e = c->tail;
	for (int i = 0; i < SWEEP_STEP && e; i++) {
		struct cache_entry *prev = e->prev;
		if (now_ns >= e->expires_ns) {
			if (!e->removed)
				c->st.expired++;
			entry_drop(c, e);
		}
		e = prev;
	}
}

/* ---- hierarchy walk (the one walker, cgwalk.h) ---- */

struct walk {
	struct sl_attr_cache *c;
	int hier;
	uint64_t target, now_ns;
	bool found;
};

static bool walk_done(const struct walk *w)
{
	return w->found && w->c->n >= w->c->cfg.capacity;
}

static int walk_record(const struct sl_cgwalk_ent *e, void *arg)
{
	struct walk *w = arg;
	struct sl_attr a;
	sl_cgpath_parse_opts(e->rel, &w->c->cfg.path_opts, &a);
	uint64_t exp = w->now_ns + w->c->cfg.positive_ttl_ns;
	if (e->ino == w->target) {
		if (put(w->c, w->hier, e->ino, e->rel, &a, exp, false))
			w->found = true;
	} else {
		struct cache_entry *ce = find(w->c, w->hier, e->ino);
		if (!ce || ce->negative) {
			if (ce || w->c->n < w->c->cfg.capacity)
				put(w->c, w->hier, e->ino, e->rel, &a, exp, true);
		}
	}
	return walk_done(w) ? SL_CGWALK_STOP : SL_CGWALK_DESCEND;
}

/* Returns true if the id was found (and inserted). */
static bool walk(struct sl_attr_cache *c, int hier, uint64_t id, uint64_t now_ns)
{
	const char *m = mount_of(c, hier);
	if (!m[0])
		return false;
	struct walk w = {.c = c, .hier = hier, .target = id, .now_ns = now_ns};
	struct sl_cgwalk_opts o = {.same_dev = 1};
	struct sl_cgwalk_stats st;
	if (sl_cgwalk(m, &o, walk_record, &w, &st) != 0)
		return false;
	c->st.walks++;
	c->st.walk_cut += sl_cgwalk_cut(&st);
	return w.found;
}

/* Does mount+path still name the directory with inode id? */
static bool still_there(const struct sl_attr_cache *c, int hier, uint64_t id, const char *path)
{
	char full[4608];
	int n = snprintf(full, sizeof(full), "%s%s", mount_of(c, hier), path);
	if (n < 0 || (size_t)n >= sizeof(full))
		return false;
	struct stat sb;
	return stat(full, &sb) == 0 && S_ISDIR(sb.st_mode) && (uint64_t)sb.st_ino == id;
}

/* ---- public ---- */

struct sl_attr_cache *sl_attr_cache_new(const struct sl_attr_cache_config *cfg,
					const struct sl_cg_mounts *mounts)
{
	struct sl_attr_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (cfg)
		c->cfg = *cfg;
	if (!c->cfg.capacity)
		c->cfg.capacity = 4096;
	if (!c->cfg.positive_ttl_ns)
		c->cfg.positive_ttl_ns = 300 * NS_PER_SEC;
	if (!c->cfg.negative_ttl_ns)
		c->cfg.negative_ttl_ns = 30 * NS_PER_SEC;
	if (!c->cfg.rewalk_interval_ns)
		c->cfg.rewalk_interval_ns = NS_PER_SEC;
	if (mounts) {
		c->mounts = *mounts;
		c->have_mounts = true;
	}
	if (c->cfg.roots)
		c->roots = *c->cfg.roots;
	else
		sl_k8s_roots_default(&c->roots);
	c->cfg.roots = NULL; /* the copy above is used */
	return c;
}

void sl_attr_cache_free(struct sl_attr_cache *c)
{
	if (!c)
		return;
	struct cache_entry *e, *tmp;
	HASH_ITER(hh, c->map, e, tmp)
	{
		HASH_DEL(c->map, e);
		free(e->path);
		free(e->names);
		free(e);
	}
	free(c);
}

static void out_unknown(struct sl_attr *out, char *path, size_t pathlen)
{
	if (out) {
		memset(out, 0, sizeof(*out));
		out->is_container = SL_UNKNOWN;
	}
	if (path && pathlen)
		path[0] = '\0';
}

static int answer(const struct cache_entry *e, struct sl_attr *out, char *path, size_t pathlen)
{
	if (e->negative) {
		out_unknown(out, path, pathlen);
		return 0;
	}
	if (out)
		*out = e->attr;
	if (path && pathlen)
		snprintf(path, pathlen, "%s", e->path);
	return 1;
}

int sl_attr_cache_lookup(struct sl_attr_cache *c, int hier, uint64_t id, uint64_t now_ns,
			 struct sl_attr *out, char *path, size_t pathlen)
{
	out_unknown(out, path, pathlen);
	if (!c || (hier != 0 && hier != 1))
		return 0;
	sweep(c, now_ns);

	if (id != 0 && id == root_of(c, hier)) {
		c->st.hits++;
		if (out)
			sl_cgpath_parse("/", out);
		if (path && pathlen)
			snprintf(path, pathlen, "/");
		return 1;
	}

	struct cache_entry *e = find(c, hier, id);
	if (e && now_ns < e->expires_ns) {
		if (!e->removed) { /* removed entries stay at the tail: evicted first */
			lru_unlink(c, e);
			lru_push_head(c, e);
		}
		if (e->negative) {
			c->st.negative_hits++;
		} else {
			c->st.hits++;
		}
		return answer(e, out, path, pathlen);
	}
	if (e) {
		if (!e->removed)
			c->st.expired++;
		if (!e->negative && !e->removed && still_there(c, hier, id, e->path)) {
			/* revalidated with one stat(): refresh, re-parse */
			sl_cgpath_parse_opts(e->path, &c->cfg.path_opts, &e->attr);
			e->expires_ns = now_ns + c->cfg.positive_ttl_ns;
			lru_unlink(c, e);
			lru_push_head(c, e);
			c->st.hits++;
			return answer(e, out, path, pathlen);
		}
		entry_drop(c, e);
	}

	c->st.misses++;
	uint64_t neg_exp = now_ns + c->cfg.negative_ttl_ns;
	if (c->walked[hier] && now_ns - c->last_walk_ns[hier] < c->cfg.rewalk_interval_ns) {
		/* rate limited: negative until the next walk is allowed */
		neg_exp = c->last_walk_ns[hier] + c->cfg.rewalk_interval_ns;
	} else if (mount_of(c, hier)[0]) {
		c->walked[hier] = true;
		c->last_walk_ns[hier] = now_ns;
		if (walk(c, hier, id, now_ns)) {
			e = find(c, hier, id);
			if (e)
				return answer(e, out, path, pathlen);
		}
	}
	put(c, hier, id, NULL, NULL, neg_exp, false);
	return 0;
}

int sl_attr_cache_resolve(struct sl_attr_cache *c, uint64_t v2_id, uint64_t v1_id, uint64_t now_ns,
			  struct sl_attr *out, char *path, size_t pathlen, int *hier_used)
{
	struct sl_attr a2, a1;
	char p2[512] = "", p1[512] = "";
	int f2 = 0, f1 = 0;
	out_unknown(out, path, pathlen);
	if (hier_used)
		*hier_used = -1;
	if (!c)
		return 0;
	if (v2_id)
		f2 = sl_attr_cache_lookup(c, 0, v2_id, now_ns, &a2, p2, sizeof(p2));
	if (f2 && a2.is_container == SL_YES)
		goto use_v2;
	if (v1_id)
		f1 = sl_attr_cache_lookup(c, 1, v1_id, now_ns, &a1, p1, sizeof(p1));
	if (f1 && a1.is_container == SL_YES)
		goto use_v1;
	if (f2)
		goto use_v2;
	if (f1)
		goto use_v1;
	return 0;
use_v2:
	if (out)
		*out = a2;
	if (path && pathlen)
		snprintf(path, pathlen, "%s", p2);
	if (hier_used)
		*hier_used = 0;
	return 1;
use_v1:
	if (out)
		*out = a1;
	if (path && pathlen)
		snprintf(path, pathlen, "%s", p1);
	if (hier_used)
		*hier_used = 1;
	return 1;
}

void sl_attr_cache_on_mkdir(struct sl_attr_cache *c, int hier, uint64_t id, const char *path,
			    uint64_t now_ns)
{
	if (!c || (hier != 0 && hier != 1) || !path)
		return;
	char buf[4096];
	int n = snprintf(buf, sizeof(buf), "%s%s", path[0] == '/' ? "" : "/", path);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return;
	struct sl_attr a;
	sl_cgpath_parse_opts(buf, &c->cfg.path_opts, &a);
	put(c, hier, id, buf, &a, now_ns + c->cfg.positive_ttl_ns, false);
}

void sl_attr_cache_on_rmdir(struct sl_attr_cache *c, int hier, uint64_t id, uint64_t now_ns)
{
	if (!c || (hier != 0 && hier != 1))
		return;
	struct cache_entry *e = find(c, hier, id);
	if (!e || e->removed)
		return;
	c->st.rmdir_drops++;
	if (e->negative) {
		entry_drop(c, e);
		return;
	}
	e->removed = true;
	if (e->expires_ns > now_ns + SL_ATTR_RMDIR_GRACE_NS)
		e->expires_ns = now_ns + SL_ATTR_RMDIR_GRACE_NS;
	/* to the tail: a dead cgroup is the first to make room for a live one */
	lru_unlink(c, e);
	lru_push_tail(c, e);
}

#define NAMES_BACKOFF_MIN_NS NS_PER_SEC
#define NAMES_BACKOFF_MAX_NS (60 * NS_PER_SEC)

void sl_attr_cache_names(struct sl_attr_cache *c, int hier, uint64_t id, uint64_t now_ns, struct sl_attr *at)
{
	if (!at)
		return;
	memset(&at->names, 0, sizeof(at->names));
	if (!c || !c->cfg.names || at->is_container != SL_YES || !at->container_id[0] || (hier != 0 && hier != 1))
		return;
	struct cache_entry *e = find(c, hier, id);
	if (!e || e->negative)
		return;
	struct names_slot *ns = e->names;
	if (ns && strcmp(ns->id, at->container_id)) {
		free(ns); /* another container id for this cgroup (runc state changed) */
		ns = e->names = NULL;
	}
	if (!ns) {
		ns = e->names = calloc(1, sizeof(*ns));
		if (!ns)
			return;
		snprintf(ns->id, sizeof(ns->id), "%s", at->container_id);
		ns->backoff_ns = NAMES_BACKOFF_MIN_NS;
	}
	if (!ns->found && now_ns >= ns->next_ns) {
		struct sl_runc_snap *rs = sl_runc_index_get(c->cfg.runc);
		c->st.names_lookups++;
		ns->found = sl_k8s_names_lookup(&c->roots, rs, at->container_id, at->pod_uid, &ns->names) == 1;
		if (!ns->found && rs) {
			/* the miss may have found runc's state newer than the
			 * snapshot (runc_state.h): once more on a rebuilt one */
			struct sl_runc_snap *r2 = sl_runc_index_get(c->cfg.runc);
			if (r2 != rs)
				ns->found = sl_k8s_names_lookup(&c->roots, r2, at->container_id, at->pod_uid,
								&ns->names) == 1;
			sl_runc_snap_put(r2);
		}
		/* runc mid-create (no state.json yet): its first exec follows
		 * within a moment, so look again soon, not after the backoff */
		int creating = !ns->found && sl_runc_snap_pending(rs, at->container_id);
		sl_runc_snap_put(rs);
		if (ns->found) {
			c->st.names_found++;
		} else if (creating) {
			ns->next_ns = now_ns + SL_RUNC_REBUILD_MIN_NS;
		} else {
			ns->next_ns = now_ns + ns->backoff_ns;
			ns->backoff_ns = ns->backoff_ns * 2 > NAMES_BACKOFF_MAX_NS ? NAMES_BACKOFF_MAX_NS : ns->backoff_ns * 2;
		}
	}
	if (ns->found)
		at->names = ns->names;
}

void sl_attr_cache_get_stats(const struct sl_attr_cache *c, struct sl_attr_cache_stats *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (!c)
		return;
	*out = c->st;
	out->entries = c->n;
}
