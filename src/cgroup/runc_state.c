#include "cgroup/runc_state.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <uthash.h>

struct dir_entry {
	char *dir; /* key */
	char *id;
	uint64_t gone_ns; /* 0: listed by runc now; else when it was last seen missing */
	int seen;         /* (rebuild) listed in this rebuild */
	UT_hash_handle hh;
};

struct sl_runc_index {
	char root[256];
	struct timespec mtime; /* of root at the last rebuild */
	int built;
	int pending; /* a container directory had no state.json yet (runc mid-create) */
	struct dir_entry *map;
	uint64_t errors;
	uint64_t grace_ns;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct sl_runc_index *sl_runc_index_new(const char *root)
{
	struct sl_runc_index *ix = calloc(1, sizeof(*ix));
	if (ix) {
		snprintf(ix->root, sizeof(ix->root), "%s", root);
		ix->grace_ns = SL_RUNC_GONE_GRACE_NS;
	}
	return ix;
}

void sl_runc_index_set_grace(struct sl_runc_index *ix, uint64_t grace_ns)
{
	if (ix)
		ix->grace_ns = grace_ns;
}

static void entry_free(struct sl_runc_index *ix, struct dir_entry *e)
{
	HASH_DEL(ix->map, e);
	free(e->dir);
	free(e->id);
	free(e);
}

static void clear(struct sl_runc_index *ix)
{
	struct dir_entry *e, *tmp;
	HASH_ITER(hh, ix->map, e, tmp)
		entry_free(ix, e);
}

void sl_runc_index_free(struct sl_runc_index *ix)
{
	if (!ix)
		return;
	clear(ix);
	free(ix);
}

static void add(struct sl_runc_index *ix, const char *dir, const char *id)
{
	struct dir_entry *e;
	HASH_FIND_STR(ix->map, dir, e);
	if (e && e->seen)
		return; /* first state listing the directory wins */
	if (e) { /* known from the last rebuild (or in its grace): listed again */
		char *nid = strdup(id);
		if (nid) {
			free(e->id);
			e->id = nid;
		}
		e->seen = 1;
		e->gone_ns = 0;
		return;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return;
	e->dir = strdup(dir);
	e->id = strdup(id);
	if (!e->dir || !e->id) {
		free(e->dir);
		free(e->id);
		free(e);
		return;
	}
	e->seen = 1;
	HASH_ADD_KEYPTR(hh, ix->map, e->dir, strlen(e->dir), e);
}

/* Index one parsed state: "id" and every string of "cgroup_paths". */
static int add_state_json(struct sl_runc_index *ix, json_t *st)
{
	const char *id = json_string_value(json_object_get(st, "id"));
	json_t *paths = json_object_get(st, "cgroup_paths");
	const char *k;
	json_t *v;
	if (!id || !json_is_object(paths)) {
		ix->errors++;
		return -EINVAL;
	}
	json_object_foreach(paths, k, v) {
		if (json_is_string(v))
			add(ix, json_string_value(v), id);
	}
	return 0;
}

int sl_runc_index_add_state(struct sl_runc_index *ix, const char *buf, size_t len)
{
	if (!ix || !buf)
		return -EINVAL;
	json_error_t jerr;
	json_t *st = json_loadb(buf, len, 0, &jerr);
	if (!st) {
		ix->errors++;
		return -EINVAL;
	}
	int rc = add_state_json(ix, st);
	json_decref(st);
	return rc;
}

static void load_state(struct sl_runc_index *ix, const char *name)
{
	char path[600];
	json_error_t jerr;
	snprintf(path, sizeof(path), "%s/%s/state.json", ix->root, name);
	json_t *st = json_load_file(path, 0, &jerr);
	if (!st) {
		struct stat sb;
		if (stat(path, &sb) != 0 && errno == ENOENT)
			ix->pending = 1; /* runc has made the directory, not yet the state */
		else
			ix->errors++;
		return;
	}
	add_state_json(ix, st);
	json_decref(st);
}

static void rebuild(struct sl_runc_index *ix, const struct timespec *mtime)
{
	DIR *d = opendir(ix->root);
	struct dirent *de;
	struct dir_entry *e, *tmp;

	HASH_ITER(hh, ix->map, e, tmp)
		e->seen = 0;
	ix->mtime = *mtime;
	ix->built = 1;
	ix->pending = 0;
	if (d) {
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			load_state(ix, de->d_name);
		}
		closedir(d);
	}
	/* containers runc no longer lists (deleted) answer for a grace period:
	 * what they did last (scheduler samples read at the next tick, late
	 * events) is still theirs */
	uint64_t now = mono_ns();
	HASH_ITER(hh, ix->map, e, tmp) {
		if (e->seen)
			continue;
		if (!e->gone_ns)
			e->gone_ns = now;
		else if (now - e->gone_ns >= ix->grace_ns)
			entry_free(ix, e);
	}
}

int sl_runc_index_lookup(struct sl_runc_index *ix, const char *dir, char *id, size_t idlen)
{
	struct stat st;
	struct dir_entry *e;

	if (!ix || !dir)
		return 0;
	if (stat(ix->root, &st) != 0) {
		if (ix->map)
			clear(ix);
		return 0;
	}
	if (!ix->built || st.st_mtim.tv_sec != ix->mtime.tv_sec || st.st_mtim.tv_nsec != ix->mtime.tv_nsec)
		rebuild(ix, &st.st_mtim);
	HASH_FIND_STR(ix->map, dir, e);
	if (!e && ix->pending) { /* a state may have appeared since */
		rebuild(ix, &st.st_mtim);
		HASH_FIND_STR(ix->map, dir, e);
	}
	if (e && e->gone_ns && mono_ns() - e->gone_ns >= ix->grace_ns) {
		entry_free(ix, e);
		e = NULL;
	}
	if (!e)
		return 0;
	snprintf(id, idlen, "%s", e->id);
	return 1;
}

uint64_t sl_runc_index_errors(const struct sl_runc_index *ix) { return ix ? ix->errors : 0; }

size_t sl_runc_index_size(const struct sl_runc_index *ix) { return ix ? HASH_COUNT(ix->map) : 0; }
