/* io module: blkcg -> attribution cgroup pair; see io_blkcg.h. */
#include "modules/io_blkcg.h"
#include "cgroup/cgwalk.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <uthash.h>

struct ent {
	uint64_t id; /* hash key: blkcg id on the blkio hierarchy */
	uint64_t v2, v1;
	int found;
	uint64_t made_ns;
	char rel[512];
	UT_hash_handle hh;
};

struct io_blkcg_cache {
	struct sl_cg_mounts m;
	unsigned cap;
	uint64_t retry_ns, walks;
	struct ent *tab;
};

struct io_blkcg_cache *io_blkcg_new(const struct sl_cg_mounts *mounts, unsigned cap, uint64_t retry_ns)
{
	struct io_blkcg_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (mounts)
		c->m = *mounts;
	else
		c->m.v1_hierarchy_id = -1;
	c->cap = cap ? cap : 1024;
	c->retry_ns = retry_ns;
	return c;
}

static void clear(struct io_blkcg_cache *c)
{
	struct ent *e, *t;

	HASH_ITER(hh, c->tab, e, t) {
		HASH_DEL(c->tab, e);
		free(e);
	}
}

void io_blkcg_free(struct io_blkcg_cache *c)
{
	if (!c)
		return;
	clear(c);
	free(c);
}

uint64_t io_blkcg_walks(const struct io_blkcg_cache *c)
{
	return c ? c->walks : 0;
}

struct find {
	uint64_t id;
	char rel[512];
	int found;
};

static int on_dir(const struct sl_cgwalk_ent *e, void *arg)
{
	struct find *f = arg;

	if (e->ino != f->id)
		return SL_CGWALK_DESCEND;
	snprintf(f->rel, sizeof(f->rel), "%s", e->rel[0] ? e->rel : "/");
	f->found = 1;
	return SL_CGWALK_STOP;
}

/* st_ino of mount + rel, 0 when absent (or the mount is not set). */
static uint64_t ino_at(const char *mount, const char *rel)
{
	char p[SL_CGWALK_PATH_MAX];
	struct stat st;

	if (!mount[0])
		return 0;
	if ((size_t)snprintf(p, sizeof(p), "%s%s", mount, strcmp(rel, "/") ? rel : "") >= sizeof(p))
		return 0;
	if (stat(p, &st) || !S_ISDIR(st.st_mode))
		return 0;
	return (uint64_t)st.st_ino;
}

int io_blkcg_pair(struct io_blkcg_cache *c, uint32_t hid, uint64_t id, uint64_t now_ns, uint64_t *v2,
		  uint64_t *v1, char *rel, size_t len)
{
	const char *blk;
	struct ent *e;

	*v2 = *v1 = 0;
	if (rel && len)
		rel[0] = 0;
	if (!c || !id)
		return 0;
	if (hid == 0) {
		*v2 = id;
		return 1;
	}
	if (c->m.v1_hierarchy_id > 0 && (int)hid == c->m.v1_hierarchy_id) {
		*v1 = id;
		return 1;
	}
	/* another v1 hierarchy: the blkcg lives on the blkio one */
	blk = c->m.v1_ctrl[SL_CG_BLKIO];
	if (!blk[0])
		return 0;
	HASH_FIND(hh, c->tab, &id, sizeof(id), e);
	if (e && !e->found && now_ns - e->made_ns >= c->retry_ns) {
		HASH_DEL(c->tab, e);
		free(e);
		e = NULL;
	}
	if (!e) {
		struct find f = {.id = id};
		struct sl_cgwalk_opts o = {.visit_root = 1, .same_dev = 1};
		if (HASH_COUNT(c->tab) >= c->cap)
			clear(c);
		if (!(e = calloc(1, sizeof(*e))))
			return 0;
		e->id = id;
		e->made_ns = now_ns;
		c->walks++;
		if (sl_cgwalk(blk, &o, on_dir, &f, NULL) == 0 && f.found) {
			e->found = 1;
			snprintf(e->rel, sizeof(e->rel), "%s", f.rel);
			e->v2 = ino_at(c->m.v2, f.rel);
			e->v1 = ino_at(c->m.v1, f.rel);
		}
		HASH_ADD(hh, c->tab, id, sizeof(e->id), e);
	}
	if (!e->found)
		return 0;
	*v2 = e->v2;
	*v1 = e->v1;
	if (rel && len)
		snprintf(rel, len, "%s", e->rel);
	return e->v2 || e->v1;
}
