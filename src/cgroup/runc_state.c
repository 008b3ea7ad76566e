/* The shared runc state index: immutable, reference-counted snapshots
 * (runc_state.h). */
#include "cgroup/runc_state.h"
#include "cgroup/attr.h"
#include "sandlens/common.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <uthash.h>

struct dir_entry {
	char *dir; /* key */
	char *id;
	uint64_t gone_ns; /* 0: listed by runc now; else when it was first seen missing */
	int seen;         /* listed by the state that made this snapshot (first one wins) */
	UT_hash_handle hh;
};

/* container id -> its bundle directory (runc's "bundle=" label) */
struct id_entry {
	char *id; /* key */
	char *bundle;
	UT_hash_handle hh;
};

/* A container directory's state.json as a rebuild saw it (stat before
 * reading): a later bundle miss for that id compares it with the file now. */
struct state_seen {
	char *name; /* key: the directory under the root (= the container id) */
	struct stat sb;
	UT_hash_handle hh;
};

/* Ids a bundle lookup missed recently (they may be runc containers whose
 * state.json is not written, or not indexed, yet). */
#define WANTED_MAX 8
#define WANTED_TTL_NS (10ull * 1000000000ull)

/* Container directories without state.json a snapshot remembers by name,
 * so a miss can check just them (runc create -> start, one stat each). */
#define PENDING_MAX 16

/* Immutable once published. */
struct sl_runc_snap {
	atomic_uint refs;
	const struct sl_runc_index *ix; /* for the grace (outlives every snapshot) */
	struct dir_entry *map;
	struct id_entry *ids; /* containers listed now that name their bundle */
	struct state_seen *seen; /* state.json files read (their stat) */
	struct timespec mtime; /* of the root when built */
	int root_ok;           /* the root existed */
	int built;             /* made from the root (not the empty start snapshot) */
	int pending;           /* a container directory had no state.json yet */
	int npend;             /* names of those directories (the first PENDING_MAX) */
	char pend[PENDING_MAX][128];
	uint64_t built_ns;
};

struct sl_runc_index {
	char root[256];
	pthread_mutex_t ptr_mu;   /* guards cur: a pointer swap or taking a reference, nothing else */
	pthread_mutex_t build_mu; /* one rebuild at a time; readers only trylock it */
	struct sl_runc_snap *cur; /* holds one reference; never NULL after new */
	_Atomic uint64_t errors, rebuilds;
	_Atomic uint64_t grace_ns, min_ns;
	pthread_mutex_t want_mu; /* guards wanted, want_check_ns */
	struct {
		char id[128];
		uint64_t ns;
	} wanted[WANTED_MAX];
	uint64_t want_check_ns;
	atomic_int dirty; /* a missed id's state.json appeared or changed: rebuild */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------- snapshots */

static void snap_free(struct sl_runc_snap *s)
{
	struct dir_entry *e, *tmp;
	HASH_ITER(hh, s->map, e, tmp) {
		HASH_DEL(s->map, e);
		free(e->dir);
		free(e->id);
		free(e);
	}
	struct id_entry *b, *btmp;
	HASH_ITER(hh, s->ids, b, btmp) {
		HASH_DEL(s->ids, b);
		free(b->id);
		free(b->bundle);
		free(b);
	}
	struct state_seen *v, *vtmp;
	HASH_ITER(hh, s->seen, v, vtmp) {
		HASH_DEL(s->seen, v);
		free(v->name);
		free(v);
	}
	free(s);
}

/* id -> bundle into the snapshot being made (first one wins). 0 or -ENOMEM. */
static int put_bundle(struct sl_runc_snap *s, const char *id, const char *bundle)
{
	struct id_entry *b;
	HASH_FIND_STR(s->ids, id, b);
	if (b)
		return 0;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->id = strdup(id);
	b->bundle = strdup(bundle);
	if (!b->id || !b->bundle) {
		free(b->id);
		free(b->bundle);
		free(b);
		return -ENOMEM;
	}
	HASH_ADD_KEYPTR(hh, s->ids, b->id, strlen(b->id), b);
	return 0;
}

/* A name that can be a directory under the root. */
static int dir_name_ok(const char *id)
{
	size_t n = strlen(id);
	return n && n < sizeof(((struct sl_runc_index *)0)->wanted[0].id) && id[0] != '.' && !strchr(id, '/');
}

/* Remember a missed id: the next get checks whether runc has written (or
 * rewritten) its state.json since the snapshot was built. */
static void want(struct sl_runc_index *ix, const char *id)
{
	if (!ix->root[0] || !dir_name_ok(id))
		return;
	uint64_t now = mono_ns();
	pthread_mutex_lock(&ix->want_mu);
	int slot = 0;
	for (int i = 0; i < WANTED_MAX; i++) {
		if (!strcmp(ix->wanted[i].id, id)) {
			slot = i;
			break;
		}
		if (ix->wanted[i].ns < ix->wanted[slot].ns)
			slot = i; /* the oldest (or a free one) */
	}
	snprintf(ix->wanted[slot].id, sizeof(ix->wanted[slot].id), "%s", id);
	ix->wanted[slot].ns = now;
	ix->want_check_ns = 0; /* check at the next get */
	pthread_mutex_unlock(&ix->want_mu);
}

/* Has the state.json of a wanted id appeared or changed since s was built?
 * At most one check per min-interval; stale entries expire. */
static int wanted_changed(struct sl_runc_index *ix, const struct sl_runc_snap *s)
{
	uint64_t now = mono_ns();
	int changed = 0;
	pthread_mutex_lock(&ix->want_mu);
	if (ix->want_check_ns && now - ix->want_check_ns < atomic_load(&ix->min_ns)) {
		pthread_mutex_unlock(&ix->want_mu);
		return 0;
	}
	ix->want_check_ns = now ? now : 1;
	for (int i = 0; i < WANTED_MAX && !changed; i++) {
		if (!ix->wanted[i].id[0])
			continue;
		if (now - ix->wanted[i].ns >= WANTED_TTL_NS) {
			ix->wanted[i].id[0] = 0;
			ix->wanted[i].ns = 0;
			continue;
		}
		char path[600];
		struct stat sb;
		struct state_seen *v;
		snprintf(path, sizeof(path), "%s/%s/state.json", ix->root, ix->wanted[i].id);
		if (stat(path, &sb) != 0)
			continue;
		HASH_FIND_STR(s->seen, ix->wanted[i].id, v);
		if (!v || v->sb.st_ino != sb.st_ino || v->sb.st_size != sb.st_size ||
		    v->sb.st_mtim.tv_sec != sb.st_mtim.tv_sec || v->sb.st_mtim.tv_nsec != sb.st_mtim.tv_nsec)
			changed = 1;
	}
	pthread_mutex_unlock(&ix->want_mu);
	return changed;
}

int sl_runc_snap_bundle(const struct sl_runc_snap *s, const char *id, char *bundle, size_t len)
{
	struct id_entry *b;
	if (!s || !id || !bundle || !len)
		return 0;
	HASH_FIND_STR(s->ids, id, b);
	if (!b) {
		want((struct sl_runc_index *)s->ix, id);
		return 0;
	}
	if (strlen(b->bundle) >= len)
		return 0;
	memcpy(bundle, b->bundle, strlen(b->bundle) + 1);
	return 1;
}

int sl_runc_snap_pending(const struct sl_runc_snap *s, const char *id)
{
	char path[600];
	struct stat sb;
	struct id_entry *b;
	if (!s || !id || !s->ix->root[0] || !dir_name_ok(id))
		return 0;
	HASH_FIND_STR(s->ids, id, b);
	if (b)
		return 0;
	snprintf(path, sizeof(path), "%s/%s/state.json", s->ix->root, id);
	if (stat(path, &sb) == 0 || errno != ENOENT)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", s->ix->root, id);
	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

void sl_runc_snap_put(struct sl_runc_snap *s)
{
	if (s && atomic_fetch_sub(&s->refs, 1) == 1)
		snap_free(s);
}

static struct sl_runc_snap *snap_new(const struct sl_runc_index *ix)
{
	struct sl_runc_snap *s = calloc(1, sizeof(*s));
	if (s) {
		atomic_init(&s->refs, 1);
		s->ix = ix;
	}
	return s;
}

/* Insert dir -> id into the snapshot being made. seen: listed by a state
 * now (a second state listing the same directory is ignored; one carried
 * from the last snapshot is replaced). Returns 0 or -ENOMEM. */
static int put_entry(struct sl_runc_snap *s, const char *dir, const char *id, uint64_t gone_ns, int seen)
{
	struct dir_entry *e;
	HASH_FIND_STR(s->map, dir, e);
	if (e && (e->seen || !seen))
		return 0;
	if (e) {
		char *nid = strdup(id);
		if (!nid)
			return -ENOMEM;
		free(e->id);
		e->id = nid;
		e->seen = 1;
		e->gone_ns = 0;
		return 0;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->dir = strdup(dir);
	e->id = strdup(id);
	if (!e->dir || !e->id) {
		free(e->dir);
		free(e->id);
		free(e);
		return -ENOMEM;
	}
	e->gone_ns = gone_ns;
	e->seen = seen;
	HASH_ADD_KEYPTR(hh, s->map, e->dir, strlen(e->dir), e);
	return 0;
}

static int expired(const struct sl_runc_snap *s, const struct dir_entry *e, uint64_t now)
{
	return e->gone_ns && now - e->gone_ns >= atomic_load(&s->ix->grace_ns);
}

int sl_runc_snap_lookup(const struct sl_runc_snap *s, const char *dir, char *id, size_t idlen)
{
	struct dir_entry *e;
	if (!s || !dir)
		return 0;
	HASH_FIND_STR(s->map, dir, e);
	if (!e || expired(s, e, mono_ns()))
		return 0;
	if (id && idlen)
		snprintf(id, idlen, "%s", e->id);
	return 1;
}

/* Index one parsed state: "id" and every string of "cgroup_paths". */
static int add_state_json(struct sl_runc_index *ix, struct sl_runc_snap *s, json_t *st)
{
	const char *id = json_string_value(json_object_get(st, "id"));
	json_t *paths = json_object_get(st, "cgroup_paths");
	const char *k;
	json_t *v;
	if (!id || !json_is_object(paths)) {
		atomic_fetch_add(&ix->errors, 1);
		return -EINVAL;
	}
	json_object_foreach(paths, k, v) {
		if (json_is_string(v) && put_entry(s, json_string_value(v), id, 0, 1))
			return -ENOMEM;
	}
	/* runc records its bundle as the label "bundle=<dir>" of the
	 * container's config (libcontainer configs.Config.Labels) */
	json_t *labels = json_object_get(json_object_get(st, "config"), "labels"), *l;
	size_t i;
	json_array_foreach(labels, i, l) {
		const char *t = json_string_value(l);
		if (t && !strncmp(t, "bundle=", 7) && t[7] == '/')
			return put_bundle(s, id, t + 7);
	}
	return 0;
}

static void load_state(struct sl_runc_index *ix, struct sl_runc_snap *s, const char *name)
{
	char path[600];
	json_error_t jerr;
	snprintf(path, sizeof(path), "%s/%s/state.json", ix->root, name);
	struct stat pre;
	if (stat(path, &pre) == 0) {
		struct state_seen *v = calloc(1, sizeof(*v));
		if (v && (v->name = strdup(name))) {
			v->sb = pre;
			HASH_ADD_KEYPTR(hh, s->seen, v->name, strlen(v->name), v);
		} else {
			free(v);
		}
	}
	json_t *st = json_load_file(path, 0, &jerr);
	if (!st) {
		struct stat sb;
		if (stat(path, &sb) != 0 && errno == ENOENT) {
			s->pending = 1; /* runc has made the directory, not yet the state */
			if (s->npend < PENDING_MAX && strlen(name) < sizeof(s->pend[0]))
				strcpy(s->pend[s->npend++], name);
		} else
			atomic_fetch_add(&ix->errors, 1);
		return;
	}
	add_state_json(ix, s, st);
	json_decref(st);
}

/* A new snapshot from the state root; containers of prev that runc no
 * longer lists are carried with their gone time until their grace ends. */
static struct sl_runc_snap *rebuild(struct sl_runc_index *ix, const struct sl_runc_snap *prev)
{
	struct sl_runc_snap *s = snap_new(ix);
	struct stat sb;
	if (!s)
		return NULL;
	s->built = 1;
	s->built_ns = mono_ns();
	atomic_store(&ix->dirty, 0); /* what made it stale is read below */
	if (stat(ix->root, &sb) == 0) {
		s->root_ok = 1;
		s->mtime = sb.st_mtim;
	}
	DIR *d = s->root_ok ? opendir(ix->root) : NULL;
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)))
			if (de->d_name[0] != '.')
				load_state(ix, s, de->d_name);
		closedir(d);
	}
	/* no root: runc is gone, so are its containers (no grace) */
	struct dir_entry *e, *tmp;
	if (s->root_ok && prev) {
		HASH_ITER(hh, prev->map, e, tmp) {
			uint64_t gone = e->gone_ns ? e->gone_ns : s->built_ns;
			if (s->built_ns - gone < atomic_load(&ix->grace_ns))
				put_entry(s, e->dir, e->id, gone, 0);
		}
	}
	atomic_fetch_add(&ix->rebuilds, 1);
	return s;
}

/* ---------------------------------------------------------- the index */

struct sl_runc_index *sl_runc_index_new(const char *root)
{
	struct sl_runc_index *ix = calloc(1, sizeof(*ix));
	if (!ix)
		return NULL;
	snprintf(ix->root, sizeof(ix->root), "%s", root ? root : "");
	atomic_init(&ix->grace_ns, SL_RUNC_GONE_GRACE_NS);
	atomic_init(&ix->min_ns, SL_RUNC_REBUILD_MIN_NS);
	ix->cur = snap_new(ix);
	if (!ix->cur) {
		free(ix);
		return NULL;
	}
	pthread_mutex_init(&ix->ptr_mu, NULL);
	pthread_mutex_init(&ix->build_mu, NULL);
	pthread_mutex_init(&ix->want_mu, NULL);
	return ix;
}

void sl_runc_index_free(struct sl_runc_index *ix)
{
	if (!ix)
		return;
	sl_runc_snap_put(ix->cur);
	pthread_mutex_destroy(&ix->ptr_mu);
	pthread_mutex_destroy(&ix->build_mu);
	pthread_mutex_destroy(&ix->want_mu);
	free(ix);
}

void sl_runc_index_set_grace(struct sl_runc_index *ix, uint64_t grace_ns)
{
	if (ix)
		atomic_store(&ix->grace_ns, grace_ns);
}

void sl_runc_index_set_min_interval(struct sl_runc_index *ix, uint64_t ns)
{
	if (ix)
		atomic_store(&ix->min_ns, ns);
}

/* The current snapshot with a reference. */
static struct sl_runc_snap *ref_cur(struct sl_runc_index *ix)
{
	pthread_mutex_lock(&ix->ptr_mu);
	struct sl_runc_snap *s = ix->cur;
	atomic_fetch_add(&s->refs, 1);
	pthread_mutex_unlock(&ix->ptr_mu);
	return s;
}

/* Publish n (the caller's reference becomes the index's). */
static void publish(struct sl_runc_index *ix, struct sl_runc_snap *n)
{
	pthread_mutex_lock(&ix->ptr_mu);
	struct sl_runc_snap *old = ix->cur;
	ix->cur = n;
	pthread_mutex_unlock(&ix->ptr_mu);
	sl_runc_snap_put(old);
}

/* Should s be rebuilt? on_miss: a lookup missed (a pending state may have
 * been written since). */
static int stale(struct sl_runc_index *ix, const struct sl_runc_snap *s, int on_miss)
{
	if (!s->built)
		return 1;
	if (mono_ns() - s->built_ns < atomic_load(&ix->min_ns))
		return 0;
	struct stat sb;
	if (stat(ix->root, &sb) != 0)
		return s->root_ok || s->map != NULL;
	if (!s->root_ok || sb.st_mtim.tv_sec != s->mtime.tv_sec || sb.st_mtim.tv_nsec != s->mtime.tv_nsec)
		return 1;
	/* runc writes state.json inside <root>/<id>/ (the root's mtime does
	 * not change), and a change of the root within one coarse timestamp
	 * tick is invisible: a bundle miss for an id whose state.json has
	 * appeared or changed since makes the snapshot stale too */
	if (atomic_load(&ix->dirty) || wanted_changed(ix, s)) {
		atomic_store(&ix->dirty, 1);
		return 1;
	}
	return on_miss && s->pending;
}

/* Rebuild if no other thread is at it; returns a referenced snapshot
 * newer than s, or NULL (keep s). The caller found s stale. */
static struct sl_runc_snap *refresh(struct sl_runc_index *ix, const struct sl_runc_snap *s)
{
	if (pthread_mutex_trylock(&ix->build_mu) != 0)
		return NULL; /* being rebuilt: go on with s, never wait */
	struct sl_runc_snap *c = ref_cur(ix), *n = NULL;
	if (c != s && !stale(ix, c, 0)) {
		pthread_mutex_unlock(&ix->build_mu);
		return c; /* another thread published a fresh one meanwhile */
	}
	n = rebuild(ix, c);
	sl_runc_snap_put(c);
	if (n) {
		atomic_fetch_add(&n->refs, 1); /* the caller's; the first is the index's */
		publish(ix, n);
	}
	pthread_mutex_unlock(&ix->build_mu);
	return n;
}

struct sl_runc_snap *sl_runc_index_get(struct sl_runc_index *ix)
{
	if (!ix)
		return NULL;
	struct sl_runc_snap *s = ref_cur(ix);
	if (stale(ix, s, 0)) {
		struct sl_runc_snap *n = refresh(ix, s);
		if (n) {
			sl_runc_snap_put(s);
			s = n;
		}
	}
	return s;
}

/* A directory s saw without state.json has one now (runc create wrote it
 * after s was built). One stat per remembered name. */
static int pending_appeared(const struct sl_runc_snap *s)
{
	char path[600];
	struct stat sb;

	for (int i = 0; i < s->npend; i++) {
		snprintf(path, sizeof(path), "%s/%s/state.json", s->ix->root, s->pend[i]);
		if (stat(path, &sb) == 0)
			return 1;
	}
	return 0;
}

/* Rebuild now, waiting for a rebuild in progress rather than skipping it
 * (refresh's trylock): a container's state has just appeared, and the
 * lookup that missed is its first exec. Not rate-limited: it happens once
 * per pending state, and a rebuild by another thread that already saw the
 * state is used instead. Returns a referenced snapshot, or NULL. */
static struct sl_runc_snap *refresh_wait(struct sl_runc_index *ix)
{
	pthread_mutex_lock(&ix->build_mu);
	struct sl_runc_snap *c = ref_cur(ix), *n;
	if (c->built && !pending_appeared(c)) {
		pthread_mutex_unlock(&ix->build_mu);
		return c; /* another thread rebuilt after the state appeared */
	}
	n = rebuild(ix, c);
	sl_runc_snap_put(c);
	if (n) {
		atomic_fetch_add(&n->refs, 1);
		publish(ix, n);
	}
	pthread_mutex_unlock(&ix->build_mu);
	return n;
}

int sl_runc_index_lookup(struct sl_runc_index *ix, const char *dir, char *id, size_t idlen)
{
	if (!ix || !dir)
		return 0;
	struct sl_runc_snap *s = sl_runc_index_get(ix);
	int r = sl_runc_snap_lookup(s, dir, id, idlen);
	if (!r && s && s->pending && pending_appeared(s)) {
		struct sl_runc_snap *n = refresh_wait(ix);
		if (n) {
			r = sl_runc_snap_lookup(n, dir, id, idlen);
			sl_runc_snap_put(n);
		}
	} else if (!r && s && s->pending && stale(ix, s, 1)) {
		struct sl_runc_snap *n = refresh(ix, s);
		if (n) {
			r = sl_runc_snap_lookup(n, dir, id, idlen);
			sl_runc_snap_put(n);
		}
	}
	sl_runc_snap_put(s);
	return r;
}

int sl_runc_index_add_state(struct sl_runc_index *ix, const char *buf, size_t len)
{
	if (!ix || !buf)
		return -EINVAL;
	json_error_t jerr;
	json_t *st = json_loadb(buf, len, 0, &jerr);
	if (!st) {
		atomic_fetch_add(&ix->errors, 1);
		return -EINVAL;
	}
	pthread_mutex_lock(&ix->build_mu);
	struct sl_runc_snap *c = ref_cur(ix), *n = snap_new(ix);
	int rc = n ? 0 : -ENOMEM;
	if (n) {
		n->mtime = c->mtime;
		n->root_ok = c->root_ok;
		n->built = c->built;
		n->pending = c->pending;
		n->npend = c->npend;
		memcpy(n->pend, c->pend, sizeof(n->pend));
		n->built_ns = c->built_ns;
		struct dir_entry *e, *tmp;
		HASH_ITER(hh, c->map, e, tmp) {
			if ((rc = put_entry(n, e->dir, e->id, e->gone_ns, e->seen)))
				break;
		}
		struct id_entry *b, *btmp;
		HASH_ITER(hh, c->ids, b, btmp) {
			if (!rc && (rc = put_bundle(n, b->id, b->bundle)))
				break;
		}
		if (!rc)
			rc = add_state_json(ix, n, st);
	}
	if (rc) {
		if (n)
			snap_free(n);
	} else {
		publish(ix, n);
	}
	sl_runc_snap_put(c);
	pthread_mutex_unlock(&ix->build_mu);
	json_decref(st);
	return rc;
}

uint64_t sl_runc_index_errors(const struct sl_runc_index *ix) { return ix ? atomic_load(&ix->errors) : 0; }

uint64_t sl_runc_index_rebuilds(const struct sl_runc_index *ix)
{
	return ix ? atomic_load(&ix->rebuilds) : 0;
}

size_t sl_runc_index_size(struct sl_runc_index *ix)
{
	if (!ix)
		return 0;
	struct sl_runc_snap *s = ref_cur(ix);
	size_t n = 0;
	uint64_t now = mono_ns();
	struct dir_entry *e, *tmp;
	HASH_ITER(hh, s->map, e, tmp)
		n += !expired(s, e, now);
	sl_runc_snap_put(s);
	return n;
}

int sl_runc_attr_fallback(struct sl_runc_index *ix, const struct sl_cg_mounts *m, const char *path, int hier,
			  struct sl_attr *at)
{
	char dir[SL_CGPATH_BYTES + 256];
	if (!ix || at->is_container == SL_YES || !path || !path[0] || !strcmp(path, "/") || hier < 0 ||
	    snprintf(dir, sizeof(dir), "%s%s", hier == SL_CG_V1 ? m->v1 : m->v2, path) >= (int)sizeof(dir) ||
	    !sl_runc_index_lookup(ix, dir, at->container_id, sizeof(at->container_id)))
		return 0;
	at->is_container = SL_YES;
	snprintf(at->runtime, sizeof(at->runtime), "runc");
	return 1;
}
