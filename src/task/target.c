/* Task targets: cgroup walk + attribution (target.h). */
#include "task/target.h"
#include "cgroup/cgwalk.h"
#include "cgroup/runc_state.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DIRS 200000 /* directories one walk visits at most */

struct walk {
	const struct sl_target_opts *o;
	struct sl_runc_snap *runc; /* one snapshot of the shared index per walk */
	int kind;               /* 0 container, 1 pod */
	int refresh;            /* walking known roots: everything below matches */
	const char *want;
	size_t wantlen;
	struct sl_target_set *s;
	size_t visited;
	size_t added;
	int ambiguous;
	char other[SL_CONTAINER_ID_LEN];
};

static int has_cg(const struct sl_target_set *s, uint64_t id, int hier)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->cg[i].id == id && s->cg[i].hier == hier)
			return 1;
	return 0;
}

static void add_cg(struct walk *w, uint64_t id, int hier, const char *cid)
{
	struct sl_target_set *s = w->s;
	if (has_cg(s, id, hier))
		return;
	if (s->n == SL_TARGET_MAX_CG) {
		s->truncated++;
		return;
	}
	s->cg[s->n].id = id;
	s->cg[s->n].hier = hier;
	snprintf(s->cg[s->n].container_id, sizeof(s->cg[s->n].container_id), "%s", cid ? cid : "");
	s->n++;
	w->added++;
}

static void add_root(struct sl_target_set *s, const char *abs, int hier)
{
	for (size_t i = 0; i < s->nroots; i++)
		if (!strcmp(s->roots[i], abs))
			return;
	if (s->nroots == SL_TARGET_MAX_ROOTS)
		return;
	snprintf(s->roots[s->nroots], sizeof(s->roots[0]), "%s", abs);
	s->roots_hier[s->nroots] = hier;
	s->nroots++;
}

/* Does attribution a (of directory abs) make it part of the target?
 * cid gets the container id to record. */
static int dir_matches(struct walk *w, const char *abs, const struct sl_attr *a, char *cid,
		       size_t cidlen)
{
	cid[0] = 0;
	if (w->kind == 1) { /* pod */
		if (a->pod_uid[0] && !strcasecmp(a->pod_uid, w->want)) {
			snprintf(cid, cidlen, "%s", a->is_container == SL_YES ? a->container_id : "");
			return 1;
		}
		return 0;
	}
	const char *id = NULL;
	char runc_id[SL_CONTAINER_ID_LEN];
	if (a->is_container == SL_YES && a->container_id[0])
		id = a->container_id;
	else if (w->runc && sl_runc_snap_lookup(w->runc, abs, runc_id, sizeof(runc_id)) == 1)
		id = runc_id;
	if (!id)
		return 0;
	int hit = w->wantlen >= 4 ? !strncmp(id, w->want, w->wantlen) : !strcmp(id, w->want);
	if (!hit)
		return 0;
	if (w->s->container_id[0] && strcmp(w->s->container_id, id)) {
		w->ambiguous = 1;
		snprintf(w->other, sizeof(w->other), "%s", id);
	}
	if (!w->s->container_id[0])
		snprintf(w->s->container_id, sizeof(w->s->container_id), "%s", id);
	snprintf(cid, cidlen, "%s", id);
	return 1;
}

/* Per-directory walk state: the directory (or an ancestor) matched, and
 * the container id to record for it. */
struct dir_state {
	int match;
	char cid[SL_CONTAINER_ID_LEN];
};

struct walk_root {
	struct walk *w;
	int hier;
	int inherited;    /* the root itself is known to match (refresh) */
	const char *icid; /* and its container id */
};

static int visit(const struct sl_cgwalk_ent *e, void *arg)
{
	struct walk_root *r = arg;
	struct walk *w = r->w;
	const struct dir_state *p = e->parent;
	struct dir_state *me = e->ctx;
	int inherited = p ? p->match : r->inherited;
	const char *icid = p ? p->cid : r->icid;
	const char *rel = e->rel;

	me->match = inherited;
	snprintf(me->cid, sizeof(me->cid), "%s", inherited ? icid : "");
	if (!inherited && !w->refresh) {
		struct sl_attr a;
		sl_cgpath_parse(rel[0] ? rel : "/", &a);
		if (dir_matches(w, e->abs, &a, me->cid, sizeof(me->cid))) {
			me->match = 1;
			add_root(w->s, e->abs, r->hier);
			if (w->kind == 1 && !w->s->pod_uid[0])
				snprintf(w->s->pod_uid, sizeof(w->s->pod_uid), "%s", a.pod_uid);
		}
	} else if (inherited && w->kind == 1 && !me->cid[0]) {
		/* children of a pod cgroup: record their container ids */
		struct sl_attr a;
		sl_cgpath_parse(rel, &a);
		if (a.is_container == SL_YES)
			snprintf(me->cid, sizeof(me->cid), "%s", a.container_id);
	}
	if (me->match)
		add_cg(w, e->ino, r->hier, me->cid);
	return SL_CGWALK_DESCEND;
}

/* Walk the tree at abs (the mount, or a known root); inherited: abs is
 * already known to match, with container id icid. */
static void walk_tree(struct walk *w, int hier, const char *abs, int inherited, const char *icid)
{
	struct walk_root r = {w, hier, inherited, icid};
	struct sl_cgwalk_opts o = {
		.visit_root = 1, .ctx_size = sizeof(struct dir_state), .max_dirs = MAX_DIRS};
	struct sl_cgwalk_stats st;
	if (sl_cgwalk(abs, &o, visit, &r, &st) == 0)
		w->s->walk_cut += sl_cgwalk_cut(&st);
}

static int valid_id(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n >= SL_CONTAINER_ID_LEN)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)id[i]) && !strchr("-_.+:", id[i]))
			return 0;
	return 1;
}

int sl_target_resolve(const struct sl_target_opts *o, int kind, const char *id,
		      struct sl_target_set *out, char *err, size_t errlen)
{
	const struct sl_cg_mounts *m = o->mounts;
	struct walk w = {.o = o, .kind = kind, .want = id, .s = out};

	memset(out, 0, sizeof(*out));
	if ((kind != 0 && kind != 1) || !id || !valid_id(id)) {
		snprintf(err, errlen, "target: '%s' is not a container id or pod uid", id ? id : "");
		return -EINVAL;
	}
	if (!m || (!m->v2[0] && !m->v1[0])) {
		snprintf(err, errlen, "target: no cgroup hierarchy is mounted");
		return -EIO;
	}
	out->kind = kind;
	w.wantlen = strlen(id);
	if (kind == 0 && o->runc)
		w.runc = sl_runc_index_get(o->runc);
	if (m->v2[0])
		walk_tree(&w, 0, m->v2, 0, "");
	if (m->v1[0])
		walk_tree(&w, 1, m->v1, 0, "");
	sl_runc_snap_put(w.runc);
	if (w.ambiguous) {
		snprintf(err, errlen, "target: container prefix '%s' matches %.64s and %.64s", id,
			 out->container_id, w.other);
		return -EINVAL;
	}
	if (out->n == 0) {
		snprintf(err, errlen, "target: no %s '%s' on this node", kind ? "pod" : "container", id);
		return -ENOENT;
	}
	for (size_t i = 0; i < out->n; i++) {
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(out->cg[i].container_id, out->cg[j].container_id);
		if (!seen && out->cg[i].container_id[0])
			out->ncontainers++;
	}
	return 0;
}

size_t sl_target_refresh(const struct sl_target_opts *o, struct sl_target_set *s)
{
	struct walk w = {.o = o, .kind = s->kind, .refresh = 1, .s = s};
	for (size_t i = 0; i < s->nroots; i++) {
		const char *cid = "";
		struct stat st;
		if (stat(s->roots[i], &st) != 0)
			continue;
		for (size_t j = 0; j < s->n; j++)
			if (s->cg[j].id == (uint64_t)st.st_ino && s->cg[j].hier == s->roots_hier[i])
				cid = s->cg[j].container_id;
		char cidbuf[SL_CONTAINER_ID_LEN];
		snprintf(cidbuf, sizeof(cidbuf), "%s", cid);
		walk_tree(&w, s->roots_hier[i], s->roots[i], 1, cidbuf);
	}
	return w.added;
}

struct procs {
	uint32_t *pids;
	size_t n, max;
};

/* cgroup.procs of one directory (opened relative to it), deduplicated. */
static int read_procs(const struct sl_cgwalk_ent *e, void *arg)
{
	struct procs *p = arg;
	char line[32];
	int fd = openat(e->fd, "cgroup.procs", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return SL_CGWALK_DESCEND;
	}
	while (p->n < p->max && fgets(line, sizeof(line), f)) {
		uint32_t pid = (uint32_t)strtoul(line, NULL, 10);
		int dup = 0;
		if (!pid)
			continue;
		for (size_t i = 0; i < p->n && !dup; i++)
			dup = p->pids[i] == pid;
		if (!dup)
			p->pids[p->n++] = pid;
	}
	fclose(f);
	return p->n < p->max ? SL_CGWALK_DESCEND : SL_CGWALK_STOP;
}

size_t sl_target_pids(const struct sl_target_opts *o, const struct sl_target_set *s, uint32_t *pids,
		      size_t max)
{
	(void)o;
	struct procs p = {pids, 0, max};
	struct sl_cgwalk_opts wo = {.visit_root = 1, .max_dirs = MAX_DIRS};
	for (size_t i = 0; i < s->nroots && p.n < max; i++)
		sl_cgwalk(s->roots[i], &wo, read_procs, &p, NULL);
	return p.n;
}

const char *sl_target_container_of(const struct sl_target_set *s, uint64_t cg2, uint64_t cg1)
{
	for (size_t i = 0; i < s->n; i++)
		if ((s->cg[i].hier == 0 && cg2 && s->cg[i].id == cg2) ||
		    (s->cg[i].hier == 1 && cg1 && s->cg[i].id == cg1))
			return s->cg[i].container_id;
	return "";
}

int sl_target_pid_container(const struct sl_target_opts *o, const char *proc_root, uint32_t pid,
			    char *id, size_t idlen)
{
	char p[256], text[4096];
	struct sl_attr a;

	id[0] = 0;
	snprintf(p, sizeof(p), "%s/%u/cgroup", proc_root ? proc_root : "/proc", pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	ssize_t n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return -ESRCH;
	text[n] = 0;
	if (sl_cgproc_parse(text, &a) == 0 && a.is_container == SL_YES && a.container_id[0]) {
		snprintf(id, idlen, "%s", a.container_id);
		return 0;
	}
	/* plain runc: the v2 ("0::") path, or the v1 controller's line */
	if (!o || !o->runc || !o->mounts)
		return 0;
	struct sl_runc_index *ix = o->runc;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		const char *mnt = NULL;
		if (!c2)
			continue;
		if (!strncmp(line, "0::", 3))
			mnt = o->mounts->v2;
		else if (o->mounts->v1_controller[0]) {
			*c2 = 0;
			/* controllers list c1+1 .. c2 */
			for (char *t = c1 + 1; t && *t;) {
				size_t l = strcspn(t, ",");
				if (l == strlen(o->mounts->v1_controller) &&
				    !strncmp(t, o->mounts->v1_controller, l))
					mnt = o->mounts->v1;
				t = t[l] ? t + l + 1 : NULL;
			}
			*c2 = ':';
		}
		if (!mnt || !mnt[0])
			continue;
		char dir[1024];
		snprintf(dir, sizeof(dir), "%s%s", mnt, c2 + 1);
		size_t dl = strlen(dir);
		if (dl > 1 && dir[dl - 1] == '/')
			dir[dl - 1] = 0;
		if (sl_runc_index_lookup(ix, dir, id, idlen) == 1)
			break;
	}
	return 0;
}
