/* The symbolizer (PROF-3): process snapshots, the per-build-id module
 * cache, kernel symbols, and turning raw stacks into a struct sl_profile.
 * docs/PROFILING.md "Symbolization" describes the rules.
 *
 * Locking: one mutex (mu) is shared by every task's runner. It guards the
 * caches only (procs, mods, vdso, ks, counters) and is never held across
 * file I/O: snapshots, ELF and debug files, perf maps and kallsyms are read
 * with mu released (files others control through sl_sym_open, sym_open.c),
 * then inserted under it. A process snapshot that sl_symbolize is using is
 * pinned (pins): eviction and replacement leave it alive until unpinned. */
#include "profile/profile_internal.h"
#include "profile/symbolize_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>
#include <zlib.h>

struct module {
	UT_hash_handle hh;   /* by key (file identity) */
	UT_hash_handle hb;   /* by elf.build_id, when in_bid */
	char *key;
	char *path;          /* display path of the file (" (deleted)" stripped), may be NULL */
	int in_bid;          /* in the build-id index */
	struct sl_elf_info elf;
	int ok;              /* ELF parsed */
	int refs;            /* snapshots using it */
	uint64_t last_use;
	size_t bytes;        /* heap it holds (symbols and names), counted in mod_bytes */
};

struct pmap {
	uint64_t start, end, offset;
	int cls;
	struct module *mod;  /* NULL when not an ELF we could read */
	char *path;          /* display module path (" (deleted)" stripped) */
};

struct proc {
	UT_hash_handle hh;
	int pid;
	int pins;            /* (mu) sl_symbolize calls using it */
	int dead;            /* (mu) out of the hash; freed at the last unpin */
	uint64_t starttime;  /* /proc/<pid>/stat field 22, clock ticks */
	struct pmap *maps;
	size_t n;
	struct sl_jit_sym *jit;
	size_t njit;
	uint64_t last_use;
};

/* A build-id looked for everywhere without success: not looked for again
 * before retry_at (seconds, CLOCK_MONOTONIC). */
struct bidneg {
	UT_hash_handle hh;
	char id[2 * SL_BUILD_ID_MAX + 1];
	uint64_t retry_at;
};

struct sl_symbolizer {
	pthread_mutex_t mu;
	struct module *bids; /* build-id index: hash hb over modules */
	struct bidneg *neg;
	size_t nneg;
	struct sl_dbgd *dbgd; /* debuginfod client settings, NULL = off */
	char proc_root[256];
	char kallsyms_path[256];
	char debug_root[256];
	size_t max_pids, max_modules;
	size_t max_module_bytes, mod_bytes; /* cap and sum of module->bytes of mods */
	int no_debuginfo;
	struct proc *procs;
	size_t nprocs;
	struct module *mods;
	size_t nmods;
	struct module *vdso;
	int vdso_tried;
	const struct sl_ksyms *ks; /* shared (sl_ksyms_shared_get), when ks_state is 1 */
	int ks_state; /* see sl_sym_stats.kallsyms_state */
	uint64_t tick;
	struct sl_sym_stats st;
};

/* ---- helpers ---- */

static void module_put(struct sl_symbolizer *s, struct module *m)
{
	(void)s;
	if (m && m->refs > 0)
		m->refs--;
}

static void module_free(struct module *m)
{
	sl_elf_info_free(&m->elf);
	free(m->key);
	free(m->path);
	free(m);
}

/* Length of build-id hex without its trailing zero bytes ("00" pairs; at
 * least one byte kept): the key of the build-id index. The kernel reports
 * a stack frame's build-id zero padded to BUILD_ID_SIZE_MAX (20) bytes with
 * no length (struct bpf_stack_build_id, include/uapi/linux/bpf.h), so a
 * 16-byte id and a 20-byte one ending in zero bytes are only comparable
 * with those bytes dropped on both sides. */
static size_t bid_keylen(const char *hex)
{
	size_t n = strlen(hex);
	while (n > 2 && hex[n - 1] == '0' && hex[n - 2] == '0')
		n -= 2;
	return n;
}

/* 1 when build-id hexes a and b are the same id (trailing zero bytes
 * ignored, bid_keylen). */
static int bid_same(const char *a, const char *b)
{
	size_t n = bid_keylen(a);
	return n == bid_keylen(b) && !strncmp(a, b, n);
}

/* Put m into the build-id index (mu held): a module with symbols replaces
 * one without. */
static void bid_index(struct sl_symbolizer *s, struct module *m)
{
	if (!m->ok || !m->elf.build_id[0] || m->in_bid)
		return;
	struct module *o;
	size_t kl = bid_keylen(m->elf.build_id);
	HASH_FIND(hb, s->bids, m->elf.build_id, kl, o);
	if (o) {
		if (o->elf.nsyms || !m->elf.nsyms)
			return;
		HASH_DELETE(hb, s->bids, o);
		o->in_bid = 0;
	}
	HASH_ADD_KEYPTR(hb, s->bids, m->elf.build_id, kl, m);
	m->in_bid = 1;
}

static void bid_unindex(struct sl_symbolizer *s, struct module *m)
{
	if (m->in_bid) {
		HASH_DELETE(hb, s->bids, m);
		m->in_bid = 0;
	}
}

static void evict_modules(struct sl_symbolizer *s)
{
	while (s->nmods > s->max_modules || s->mod_bytes > s->max_module_bytes) {
		struct module *m, *tmp, *old = NULL;
		HASH_ITER(hh, s->mods, m, tmp) {
			if (!m->refs && (!old || m->last_use < old->last_use))
				old = m;
		}
		if (!old)
			return;
		HASH_DEL(s->mods, old);
		bid_unindex(s, old);
		s->mod_bytes -= old->bytes;
		module_free(old);
		s->nmods--;
	}
}

static void proc_free(struct sl_symbolizer *s, struct proc *p)
{
	for (size_t i = 0; i < p->n; i++) {
		module_put(s, p->maps[i].mod);
		free(p->maps[i].path);
	}
	free(p->maps);
	sl_perfmap_free(p->jit, p->njit);
	free(p);
}

/* ---- separate debug files ---- */

static int file_crc_ok(int fd, uint32_t want)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	ssize_t r;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, (uInt)r);
	lseek(fd, 0, SEEK_SET);
	return r == 0 && (uint32_t)crc == want;
}

/* path inside root ("" = the host); sl_sym_open rules, at most
 * SL_SYM_ELF_MAX bytes (so the CRC pass is bounded too). */
static int try_debug_file(const char *root, const char *path, struct sl_elf_info *main, uint32_t crc,
			  int check_crc)
{
	int fd = sl_sym_open(root, path, 0, SL_SYM_ELF_MAX, NULL);
	if (fd < 0)
		return -1;
	if (check_crc && !file_crc_ok(fd, crc)) {
		close(fd);
		return -1;
	}
	struct sl_elf_info dbg;
	int rc = sl_elf_read_fd(fd, &dbg);
	close(fd);
	if (rc)
		return -1;
	/* A build-id, when both have one, must match. */
	if (main->build_id[0] && dbg.build_id[0] && strcmp(main->build_id, dbg.build_id)) {
		sl_elf_info_free(&dbg);
		return -1;
	}
	int ok = dbg.nsyms > 0;
	if (ok)
		sl_elf_merge_syms(main, &dbg);
	sl_elf_info_free(&dbg);
	return ok ? 0 : -1;
}

/* root: "" for the host, "/proc/<pid>/root" for the process's view. path:
 * the module's path inside that root. No lock held (file I/O). */
static void find_debuginfo(const struct sl_symbolizer *s, struct sl_elf_info *e, const char *root,
			   const char *path)
{
	char p[1024];
	const char *roots[2] = { "", root };
	for (int r = 0; r < 2; r++) {
		if (r == 1 && (!root || !*root))
			break;
		if (e->build_id[0] && strlen(e->build_id) > 2) {
			snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s.debug", s->debug_root, e->build_id,
				 e->build_id + 2);
			if (!try_debug_file(roots[r], p, e, 0, 0))
				return;
		}
		if (e->debuglink[0] && path && path[0] == '/') {
			const char *slash = strrchr(path, '/');
			int dl = (int)(slash - path);
			snprintf(p, sizeof(p), "%.*s/%s", dl, path, e->debuglink);
			if (strcmp(p, path) && !try_debug_file(roots[r], p, e, e->debuglink_crc, 1))
				return;
			snprintf(p, sizeof(p), "%.*s/.debug/%s", dl, path, e->debuglink);
			if (!try_debug_file(roots[r], p, e, e->debuglink_crc, 1))
				return;
			snprintf(p, sizeof(p), "%s%.*s/%s", s->debug_root, dl, path, e->debuglink);
			if (!try_debug_file(roots[r], p, e, e->debuglink_crc, 1))
				return;
		}
	}
}

/* ---- modules ---- */

static void module_key(char *key, size_t len, const struct sl_map_entry *me, const char *clean_path)
{
	snprintf(key, len, "%x:%x:%" PRIu64 ":%s", me->dev_major, me->dev_minor, me->inode, clean_path);
}

/* Open and index the ELF file of mapping me of pid (no lock held: file
 * I/O). Always returns a module (ok = 0 when unreadable), NULL on ENOMEM. */
static struct module *module_load(const struct sl_symbolizer *s, int pid, const struct sl_map_entry *me,
				  const char *clean_path, const char *key)
{
	struct module *m = calloc(1, sizeof(*m));
	if (!m || !(m->key = strdup(key)) || !(m->path = strdup(clean_path))) {
		if (m)
			free(m->key);
		free(m);
		return NULL;
	}
	char p[1200], root[300];
	snprintf(root, sizeof(root), "%s/%d/root", s->proc_root, pid);
	/* map_files/ entries are magic links to the mapped file itself */
	snprintf(p, sizeof(p), "%s/%d/map_files/%" PRIx64 "-%" PRIx64, s->proc_root, pid, me->start, me->end);
	int fd = sl_sym_open(NULL, p, 0, SL_SYM_ELF_MAX, NULL);
	if (fd < 0 && me->cls == SL_MAP_FILE)
		fd = sl_sym_open(root, clean_path, SL_SYM_NOFOLLOW, SL_SYM_ELF_MAX, NULL);
	if (fd >= 0) {
		if (!sl_elf_read_fd(fd, &m->elf))
			m->ok = 1;
		close(fd);
	}
	if (m->ok && !s->no_debuginfo && (!m->elf.has_symtab || !m->elf.nsyms) && me->cls == SL_MAP_FILE)
		find_debuginfo(s, &m->elf, root, clean_path);
	return m;
}

/* Insert the new module nm (loaded without mu) into the cache and the
 * build-id index, or take the one another task inserted meanwhile (nm is
 * freed then). refs is incremented by ref. Returns the cached module.
 * Called without mu. */
static struct module *module_insert(struct sl_symbolizer *s, struct module *nm, int ref)
{
	struct module *m;
	pthread_mutex_lock(&s->mu);
	HASH_FIND_STR(s->mods, nm->key, m);
	if (m) { /* another task loaded it meanwhile */
		m->refs += ref;
		m->last_use = ++s->tick;
	} else {
		m = nm;
		nm = NULL;
		if (!m->ok)
			s->st.elf_errors++;
		m->refs = ref;
		m->last_use = ++s->tick;
		HASH_ADD_KEYPTR(hh, s->mods, m->key, strlen(m->key), m);
		s->nmods++;
		m->bytes = sizeof(*m) + m->elf.nsyms * sizeof(*m->elf.syms) + m->elf.names_len;
		s->mod_bytes += m->bytes;
		bid_index(s, m);
		evict_modules(s);
	}
	pthread_mutex_unlock(&s->mu);
	if (nm)
		module_free(nm);
	return m;
}

/* The module of mapping me, referenced (refs++): from the cache, else
 * loaded with mu released and inserted. Called without mu. */
static struct module *module_get(struct sl_symbolizer *s, int pid, const struct sl_map_entry *me,
				 const char *clean_path)
{
	char key[1200];
	module_key(key, sizeof(key), me, clean_path);
	struct module *m;
	pthread_mutex_lock(&s->mu);
	HASH_FIND_STR(s->mods, key, m);
	if (m) {
		m->refs++;
		m->last_use = ++s->tick;
	}
	pthread_mutex_unlock(&s->mu);
	if (m)
		return m;
	struct module *nm = module_load(s, pid, me, clean_path, key);
	if (!nm)
		return NULL;
	return module_insert(s, nm, 1);
}

/* This process's vdso as a module, or NULL. */
static struct module *vdso_read(void)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return NULL;
	char *buf;
	size_t len;
	if (sl_read_small_file("/proc/self/maps", SL_SYM_PROCFILE_MAX, &buf, &len))
		return NULL;
	struct sl_map_entry *v;
	size_t n;
	size_t size = 0;
	if (!sl_maps_parse(buf, len, &v, &n)) {
		for (size_t i = 0; i < n; i++)
			if (v[i].cls == SL_MAP_VDSO && v[i].start == base)
				size = v[i].end - v[i].start;
		sl_maps_free(v, n);
	}
	free(buf);
	if (!size)
		return NULL;
	struct module *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	if (sl_elf_read_mem((const void *)base, size, &m->elf)) {
		free(m);
		return NULL;
	}
	m->ok = 1;
	return m;
}

/* This process's vdso (the same in every process), read once: called
 * without mu, installs s->vdso under it. */
static void vdso_load(struct sl_symbolizer *s)
{
	pthread_mutex_lock(&s->mu);
	int tried = s->vdso_tried;
	pthread_mutex_unlock(&s->mu);
	if (tried)
		return;
	struct module *m = vdso_read();
	pthread_mutex_lock(&s->mu);
	if (!s->vdso_tried) {
		s->vdso_tried = 1;
		s->vdso = m;
		m = NULL;
	}
	pthread_mutex_unlock(&s->mu);
	if (m)
		module_free(m);
}

/* ---- process snapshots ---- */

static uint64_t proc_starttime(struct sl_symbolizer *s, int pid)
{
	char p[300], *buf;
	size_t len;
	snprintf(p, sizeof(p), "%s/%d/stat", s->proc_root, pid);
	if (sl_read_small_file(p, 8192, &buf, &len))
		return 0;
	uint64_t v = 0;
	char *rp = strrchr(buf, ')');
	if (rp) {
		/* after ')': state(3) ppid(4) ... starttime is field 22 */
		char *q = rp + 1;
		int field = 2;
		while (*q && field < 22) {
			if (*q == ' ') {
				field++;
				while (q[1] == ' ')
					q++;
			}
			q++;
		}
		if (field == 22)
			v = strtoull(q, NULL, 10);
	}
	free(buf);
	return v;
}

static int nspid_of(struct sl_symbolizer *s, int pid)
{
	char p[300], *buf;
	size_t len;
	snprintf(p, sizeof(p), "%s/%d/status", s->proc_root, pid);
	if (sl_read_small_file(p, 65536, &buf, &len))
		return pid;
	int ns = pid;
	char *l = strstr(buf, "\nNSpid:");
	if (l) {
		l += 7;
		char *e = strchr(l, '\n');
		if (e)
			*e = 0;
		char *tok, *save = NULL;
		for (tok = strtok_r(l, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
			ns = atoi(tok);
	}
	free(buf);
	return ns > 0 ? ns : pid;
}

static int cmp_jsym(const void *a, const void *b)
{
	const struct sl_jit_sym *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

int sl_perfmap_parse(const char *buf, size_t len, struct sl_jit_sym **out, size_t *n)
{
	size_t cap = 0, cnt = 0;
	struct sl_jit_sym *v = NULL;
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		char line[1024];
		size_t ll = (size_t)(le - p) < sizeof(line) - 1 ? (size_t)(le - p) : sizeof(line) - 1;
		memcpy(line, p, ll);
		line[ll] = 0;
		p = nl ? nl + 1 : end;
		char *q = line, *e;
		errno = 0;
		unsigned long long st = strtoull(q, &e, 16);
		if (e == q || errno || (*e != ' ' && *e != '\t'))
			continue;
		q = e;
		unsigned long long sz = strtoull(q, &e, 16);
		if (e == q || errno || (*e != ' ' && *e != '\t') || !sz)
			continue;
		while (*e == ' ' || *e == '\t')
			e++;
		size_t nl2 = strlen(e);
		while (nl2 && (e[nl2 - 1] == '\r' || e[nl2 - 1] == ' '))
			e[--nl2] = 0;
		if (!*e)
			continue;
		if (cnt == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct sl_jit_sym *nv = realloc(v, nc * sizeof(*nv));
			if (!nv)
				goto oom;
			v = nv;
			cap = nc;
		}
		v[cnt].start = st;
		v[cnt].size = sz;
		v[cnt].name = strdup(e);
		if (!v[cnt].name)
			goto oom;
		cnt++;
	}
	if (cnt > 1)
		qsort(v, cnt, sizeof(*v), cmp_jsym);
	*out = v;
	*n = cnt;
	return 0;
oom:
	sl_perfmap_free(v, cnt);
	return -ENOMEM;
}

void sl_perfmap_free(struct sl_jit_sym *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].name);
	free(v);
}

const struct sl_jit_sym *sl_perfmap_lookup(const struct sl_jit_sym *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct sl_jit_sym *j = &v[lo - 1];
	return addr - j->start < j->size ? j : NULL;
}

/* Owner of process pid (its /proc/<pid> directory: the effective uid, or
 * root for a non-dumpable process); (uid_t)-1 when unknown. */
static uid_t proc_uid(const struct sl_symbolizer *s, int pid)
{
	char p[300];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%d", s->proc_root, pid);
	return stat(p, &st) ? (uid_t)-1 : st.st_uid;
}

/* Read one perf map candidate (sl_sym_open rules, no symlink as the last
 * component, at most SL_SYM_PERFMAP_MAX bytes, owned by root or by the
 * process's user: anyone else could plant one in /tmp). 0 or -errno. */
static int read_perfmap(const char *root, const char *path, uid_t owner, char **buf, size_t *len)
{
	struct stat st;
	int fd = sl_sym_open(root, path, SL_SYM_NOFOLLOW, SL_SYM_PERFMAP_MAX, &st);
	if (fd < 0)
		return fd;
	if (st.st_uid != 0 && st.st_uid != owner) {
		close(fd);
		return -EPERM;
	}
	int rc = sl_read_fd_bounded(fd, SL_SYM_PERFMAP_MAX, buf, len);
	close(fd);
	return rc;
}

/* JIT symbols of pr (private, not yet in the cache: no lock, file I/O). */
static void load_jit(struct sl_symbolizer *s, struct proc *pr)
{
	char root[300], p[128], *buf = NULL;
	size_t len;
	int ns = nspid_of(s, pr->pid);
	uid_t owner = proc_uid(s, pr->pid);
	snprintf(root, sizeof(root), "%s/%d/root", s->proc_root, pr->pid);
	snprintf(p, sizeof(p), "/tmp/perf-%d.map", ns);
	if (read_perfmap(root, p, owner, &buf, &len)) {
		snprintf(p, sizeof(p), "/tmp/perf-%d.map", pr->pid);
		if (read_perfmap(NULL, p, owner, &buf, &len))
			return;
	}
	struct sl_jit_sym *v;
	size_t n;
	if (!sl_perfmap_parse(buf, len, &v, &n)) {
		sl_perfmap_free(pr->jit, pr->njit);
		pr->jit = v;
		pr->njit = n;
	}
	free(buf);
}

static void strip_deleted(char *path)
{
	size_t n = strlen(path);
	if (n > 10 && !strcmp(path + n - 10, " (deleted)"))
		path[n - 10] = 0;
}

/* A new snapshot of pid, not in the cache yet. Called without mu (file
 * I/O; module_get takes it briefly). */
static int snapshot(struct sl_symbolizer *s, int pid, struct proc **out)
{
	char p[300], *buf;
	size_t len;
	snprintf(p, sizeof(p), "%s/%d/maps", s->proc_root, pid);
	int rc = sl_read_small_file(p, SL_SYM_PROCFILE_MAX, &buf, &len);
	if (rc)
		return rc == -ENOENT ? -ESRCH : rc;
	struct sl_map_entry *v;
	size_t n;
	rc = sl_maps_parse(buf, len, &v, &n);
	free(buf);
	if (rc)
		return rc;
	struct proc *pr = calloc(1, sizeof(*pr));
	if (!pr) {
		sl_maps_free(v, n);
		return -ENOMEM;
	}
	pr->pid = pid;
	pr->starttime = proc_starttime(s, pid);
	pr->maps = calloc(n ? n : 1, sizeof(*pr->maps));
	if (!pr->maps) {
		free(pr);
		sl_maps_free(v, n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct sl_map_entry *me = &v[i];
		if (me->perms[2] != 'x')
			continue;
		struct pmap *pm = &pr->maps[pr->n];
		pm->start = me->start;
		pm->end = me->end;
		pm->offset = me->offset;
		pm->cls = me->cls;
		pm->path = strdup(me->path);
		if (!pm->path)
			continue;
		pr->n++;
		if (me->cls == SL_MAP_FILE || me->cls == SL_MAP_DELETED || me->cls == SL_MAP_MEMFD) {
			strip_deleted(pm->path);
			/* a module that is not ok keeps its reference: identity
			 * known, symbols not */
			pm->mod = module_get(s, pid, me, pm->path);
		}
	}
	sl_maps_free(v, n);
	load_jit(s, pr);
	*out = pr;
	return 0;
}

/* Out of the hash (mu held); freed now unless pinned, else at the last
 * unpin. */
static void proc_drop(struct sl_symbolizer *s, struct proc *p)
{
	HASH_DEL(s->procs, p);
	s->nprocs--;
	if (p->pins)
		p->dead = 1;
	else
		proc_free(s, p);
}

static void proc_unpin(struct sl_symbolizer *s, struct proc *p)
{
	if (--p->pins == 0 && p->dead)
		proc_free(s, p);
}

/* The oldest unpinned snapshots go while there are more than max_pids
 * (pinned ones may keep it above for the length of a call). mu held. */
static void evict_procs(struct sl_symbolizer *s)
{
	while (s->nprocs > s->max_pids) {
		struct proc *p, *tmp, *old = NULL;
		HASH_ITER(hh, s->procs, p, tmp) {
			if (!p->pins && (!old || p->last_use < old->last_use))
				old = p;
		}
		if (!old)
			return;
		proc_drop(s, old);
	}
}

/* Snapshot pid (without mu) and put it in the cache in place of an older
 * one. 0 or -errno (the old snapshot stays). */
static int cache_pid(struct sl_symbolizer *s, int pid)
{
	struct proc *np;
	int rc = snapshot(s, pid, &np);
	if (rc)
		return rc;
	pthread_mutex_lock(&s->mu);
	struct proc *old;
	HASH_FIND_INT(s->procs, &pid, old);
	if (old)
		proc_drop(s, old);
	np->last_use = ++s->tick;
	HASH_ADD_INT(s->procs, pid, np);
	s->nprocs++;
	evict_procs(s);
	pthread_mutex_unlock(&s->mu);
	return 0;
}

/* ---- the build-id index ---- */

static void hex_of(const uint8_t *id, size_t len, char *out)
{
	static const char hx[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = hx[id[i] >> 4];
		out[2 * i + 1] = hx[id[i] & 15];
	}
	out[2 * len] = 0;
}

/* Build-id hex of a raw frame, trailing zero bytes dropped (the kernel pads
 * shorter build-ids, e.g. 16-byte MD5 ones, with zeros to 20 bytes). */
static void bid_hex(const struct sl_raw_bid *b, char *out)
{
	size_t len = b->len;
	while (len > 1 && !b->id[len - 1])
		len--;
	hex_of(b->id, len, out);
}


/* Read the ELF file open at fd as a new module (not in the cache), key
 * "dev:ino:path" from fstat; root/path for its debug files. */
/* The module cache key of the file behind fd shown as display (the
 * format of module_key: "major:minor:inode:path"); 0 or -1 (fstat). */
static int fd_module_key(int fd, const char *display, char *key, size_t len)
{
	struct stat st;
	if (fstat(fd, &st))
		return -1;
	snprintf(key, len, "%x:%x:%" PRIu64 ":%s", major(st.st_dev), minor(st.st_dev), (uint64_t)st.st_ino,
		 display);
	return 0;
}

static struct module *module_from_fd(const struct sl_symbolizer *s, int fd, const char *root,
				     const char *path, const char *display)
{
	char key[1200];
	if (fd_module_key(fd, display, key, sizeof(key)))
		return NULL;
	struct module *m = calloc(1, sizeof(*m));
	if (!m || !(m->key = strdup(key)) || !(m->path = strdup(display))) {
		if (m)
			free(m->key);
		free(m);
		return NULL;
	}
	if (!sl_elf_read_fd(fd, &m->elf))
		m->ok = 1;
	if (m->ok && !s->no_debuginfo && (!m->elf.has_symtab || !m->elf.nsyms) && path && path[0] == '/')
		find_debuginfo(s, &m->elf, root, path);
	return m;
}

int sl_symbolizer_index_file(struct sl_symbolizer *s, const int *pids, size_t npids, const char *path)
{
	int rc = -ESRCH;
	if (!path || !*path)
		return -EINVAL;
	for (size_t i = 0; i < npids; i++) {
		char root[300];
		if (pids[i] <= 0)
			continue;
		snprintf(root, sizeof(root), "%s/%d/root", s->proc_root, pids[i]);
		/* symlinks are followed inside the root (/bin/dd -> busybox) */
		int fd = sl_sym_open(root, path, 0, SL_SYM_ELF_MAX, NULL);
		if (fd < 0) {
			rc = fd;
			continue;
		}
		/* already held (another process exec'd the same file): no
		 * second parse */
		char key[1200];
		struct module *m = NULL;
		if (!fd_module_key(fd, path, key, sizeof(key))) {
			pthread_mutex_lock(&s->mu);
			HASH_FIND_STR(s->mods, key, m);
			if (m)
				m->last_use = ++s->tick;
			pthread_mutex_unlock(&s->mu);
		}
		if (m) {
			close(fd);
			return 0;
		}
		m = module_from_fd(s, fd, root, path, path);
		close(fd);
		if (!m)
			return -ENOMEM;
		if (!m->ok) {
			module_free(m);
			return -EINVAL;
		}
		module_insert(s, m, 0);
		return 0;
	}
	return rc;
}

/* Look for the file of build-id hex (bytes id[len]) outside any process:
 * <debug_root>/.build-id/xx/rest.debug, the .build-id/xx/rest link to the
 * binary, then debuginfod when configured. A new module or NULL. No lock
 * (file I/O, maybe network). */
static struct module *bid_find_len(struct sl_symbolizer *s, const uint8_t *id, size_t len)
{
	char p[600], hex[2 * SL_BUILD_ID_MAX + 1];
	static const char *const sfx[2] = { ".debug", "" };
	hex_of(id, len, hex);
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s%s", s->debug_root, hex, hex + 2, sfx[i]);
		int fd = sl_sym_open(NULL, p, 0, SL_SYM_ELF_MAX, NULL);
		if (fd < 0)
			continue;
		struct module *m = module_from_fd(s, fd, "", NULL, p);
		close(fd);
		if (m && m->ok && bid_same(m->elf.build_id, hex) && m->elf.nsyms)
			return m;
		if (m)
			module_free(m);
	}
	for (int what = 0; s->dbgd && what < 2; what++) {
		char *fpath = NULL;
		int fd = sl_dbgd_fetch(s->dbgd, id, len, what, &fpath);
		if (fd < 0)
			continue;
		struct module *m = module_from_fd(s, fd, "", NULL, fpath ? fpath : hex);
		close(fd);
		free(fpath);
		if (m && m->ok && bid_same(m->elf.build_id, hex) && m->elf.nsyms)
			return m;
		if (m)
			module_free(m);
	}
	return NULL;
}

/* bid_find for the id of a stack frame, id[len] with its zero padding
 * dropped: the files are named by the whole build-id, so the lengths
 * build-ids have (8: lld's fast, 16: md5/uuid, 20: sha1) above len are
 * tried too, zero filled (a 20-byte id may end in zero bytes). */
static struct module *bid_find(struct sl_symbolizer *s, const uint8_t *id, size_t len)
{
	static const size_t sizes[3] = { 8, 16, SL_BUILD_ID_MAX };
	uint8_t full[SL_BUILD_ID_MAX] = { 0 };
	if (s->no_debuginfo || !len || len > SL_BUILD_ID_MAX)
		return NULL;
	memcpy(full, id, len);
	struct module *m = bid_find_len(s, full, len);
	for (int i = 0; !m && i < 3; i++)
		if (sizes[i] > len)
			m = bid_find_len(s, full, sizes[i]);
	return m;
}

static uint64_t mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

#define BIDNEG_RETRY_S 600 /* a build-id found nowhere is looked for again after 10 min */
#define BIDNEG_MAX 4096

/* Every build-id of rp's frames that the index does not hold is looked
 * for (bid_find) once; misses are remembered for BIDNEG_RETRY_S. Called
 * without mu. */
static void bid_resolve_missing(struct sl_symbolizer *s, const struct sl_raw_profile *rp)
{
	uint64_t now = mono_s();
	for (size_t i = 0; i < rp->n_stacks; i++) {
		const struct sl_raw_stack *rs = &rp->stacks[i];
		for (uint32_t j = 0; rs->user_bid && j < rs->n_user; j++) {
			const struct sl_raw_bid *b = &rs->user_bid[j];
			char hex[2 * SL_BUILD_ID_MAX + 1];
			if (!b->len)
				continue;
			bid_hex(b, hex);
			struct module *m;
			struct bidneg *ng;
			pthread_mutex_lock(&s->mu);
			HASH_FIND(hb, s->bids, hex, strlen(hex), m);
			HASH_FIND_STR(s->neg, hex, ng);
			int skip = m || (ng && ng->retry_at > now);
			pthread_mutex_unlock(&s->mu);
			if (skip)
				continue;
			size_t len = b->len;
			while (len > 1 && !b->id[len - 1])
				len--;
			struct module *nm = bid_find(s, b->id, len);
			pthread_mutex_lock(&s->mu);
			HASH_FIND_STR(s->neg, hex, ng);
			if (nm && ng) {
				HASH_DEL(s->neg, ng);
				s->nneg--;
				free(ng);
			} else if (!nm && !ng && s->nneg < BIDNEG_MAX && (ng = calloc(1, sizeof(*ng)))) {
				snprintf(ng->id, sizeof(ng->id), "%s", hex);
				HASH_ADD_STR(s->neg, id, ng);
				s->nneg++;
			}
			if (!nm && ng)
				ng->retry_at = now + BIDNEG_RETRY_S;
			pthread_mutex_unlock(&s->mu);
			if (nm)
				module_insert(s, nm, 0);
		}
	}
}

/* ---- public: lifecycle ---- */

struct sl_symbolizer *sl_symbolizer_new(const struct sl_sym_config *cfg)
{
	struct sl_symbolizer *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	pthread_mutex_init(&s->mu, NULL);
	snprintf(s->proc_root, sizeof(s->proc_root), "%s", cfg && cfg->proc_root ? cfg->proc_root : "/proc");
	snprintf(s->kallsyms_path, sizeof(s->kallsyms_path), "%s",
		 cfg && cfg->kallsyms_path ? cfg->kallsyms_path : "/proc/kallsyms");
	snprintf(s->debug_root, sizeof(s->debug_root), "%s",
		 cfg && cfg->debug_root ? cfg->debug_root : "/usr/lib/debug");
	s->max_pids = cfg && cfg->max_pids ? cfg->max_pids : 1024;
	s->max_modules = cfg && cfg->max_modules ? cfg->max_modules : 512;
	s->max_module_bytes = cfg && cfg->max_module_bytes ? cfg->max_module_bytes : 16u << 20;
	s->no_debuginfo = cfg ? cfg->no_debuginfo : 0;
	if (cfg && cfg->debuginfod_urls && cfg->debuginfod_urls[0] && !s->no_debuginfo)
		s->dbgd = sl_dbgd_new(cfg->debuginfod_urls, cfg->debuginfod_cache, cfg->debuginfod_timeout_s);
	return s;
}

void sl_symbolizer_free(struct sl_symbolizer *s)
{
	if (!s)
		return;
	struct proc *p, *pt;
	HASH_ITER(hh, s->procs, p, pt) {
		HASH_DEL(s->procs, p);
		proc_free(s, p);
	}
	HASH_CLEAR(hb, s->bids); /* an index over the modules freed next */
	struct module *m, *mt;
	HASH_ITER(hh, s->mods, m, mt) {
		HASH_DEL(s->mods, m);
		module_free(m);
	}
	struct bidneg *ng, *nt;
	HASH_ITER(hh, s->neg, ng, nt) {
		HASH_DEL(s->neg, ng);
		free(ng);
	}
	sl_dbgd_free(s->dbgd);
	if (s->vdso)
		module_free(s->vdso);
	sl_ksyms_shared_put(s->ks);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

int sl_symbolizer_cache_pid(struct sl_symbolizer *s, int pid)
{
	if (pid <= 0)
		return -ESRCH;
	return cache_pid(s, pid);
}

void sl_symbolizer_forget_pid(struct sl_symbolizer *s, int pid)
{
	pthread_mutex_lock(&s->mu);
	struct proc *p;
	HASH_FIND_INT(s->procs, &pid, p);
	if (p)
		proc_drop(s, p);
	pthread_mutex_unlock(&s->mu);
}

void sl_symbolizer_stats(struct sl_symbolizer *s, struct sl_sym_stats *out)
{
	pthread_mutex_lock(&s->mu);
	*out = s->st;
	out->pids_cached = s->nprocs;
	out->modules_cached = s->nmods;
	out->modules_bytes = s->mod_bytes;
	out->kallsyms_state = s->ks_state;
	pthread_mutex_unlock(&s->mu);
}

/* ---- frames ---- */

/* Read kallsyms once: called without mu (file I/O), installed under it
 * (when two calls race, the first to finish wins). */
static void load_kallsyms(struct sl_symbolizer *s)
{
	pthread_mutex_lock(&s->mu);
	int state = s->ks_state;
	pthread_mutex_unlock(&s->mu);
	if (state)
		return;
	const struct sl_ksyms *ks = sl_ksyms_shared_get(s->kallsyms_path, &state);
	if (ks)
		state = 1;
	pthread_mutex_lock(&s->mu);
	if (!s->ks_state) {
		s->ks = ks;
		s->ks_state = state;
		ks = NULL;
	}
	pthread_mutex_unlock(&s->mu);
	sl_ksyms_shared_put(ks);
}

static int64_t kernel_frame(struct sl_symbolizer *s, struct sl_profile *P, uint64_t ip, int caller)
{
	struct sl_frame f = { .address = ip, .module_offset = ip, .flags = SL_FRAME_KERNEL };
	struct sl_ksym kb;
	const struct sl_ksym *k = s->ks_state == 1 ? sl_ksyms_lookup(s->ks, caller ? ip - 1 : ip, &kb) : NULL;
	char mod[80];
	if (!k) {
		f.flags |= SL_FRAME_UNKNOWN;
		f.name = "[kernel]";
		f.module = "[kernel.kallsyms]";
		s->st.frames_unresolved++;
		return sl_prof_frame(P, &f);
	}
	if (k->module)
		snprintf(mod, sizeof(mod), "[%s]", k->module);
	f.name = k->name;
	f.function = k->name;
	f.module = k->module ? mod : "[kernel.kallsyms]";
	f.sym_addr = k->addr;
	f.sym_offset = ip - k->addr;
	s->st.frames_resolved++;
	return sl_prof_frame(P, &f);
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');
	return b && b[1] ? b + 1 : p;
}

/* Symbol of f->module_offset in module m into f (function, name,
 * sym_addr, sym_offset, build_id); 1 when found. mu held. */
static int elf_sym(struct sl_symbolizer *s, struct sl_frame *f, struct module *m, int caller)
{
	if (!m->ok)
		return 0;
	m->last_use = s->tick;
	if (m->elf.build_id[0])
		f->build_id = m->elf.build_id;
	uint64_t off = (caller ? f->module_offset - 1 : f->module_offset);
	uint64_t va = sl_elf_off_to_vaddr(&m->elf, off);
	const struct sl_esym *e = sl_elf_lookup(&m->elf, va);
	if (!e)
		return 0;
	f->function = m->elf.names + e->name;
	f->name = f->function;
	f->sym_addr = e->addr;
	f->sym_offset = va + (caller ? 1 : 0) - e->addr;
	s->st.frames_resolved++;
	return 1;
}

static int64_t user_frame(struct sl_symbolizer *s, struct sl_profile *P, struct proc *pr, uint64_t ip,
			  int caller)
{
	struct sl_frame f = { .address = ip };
	char name[600];
	uint64_t look = caller ? ip - 1 : ip;
	const struct pmap *pm = NULL;
	if (pr) {
		size_t lo = 0, hi = pr->n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (pr->maps[mid].start <= look)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && look < pr->maps[lo - 1].end)
			pm = &pr->maps[lo - 1];
		if ((!pm || pm->cls == SL_MAP_ANON || pm->cls == SL_MAP_MEMFD || !pm->mod || !pm->mod->ok) &&
		    pr->njit) {
			const struct sl_jit_sym *j =
				sl_perfmap_lookup(pr->jit, pr->njit, look);
			if (j) {
				f.name = j->name;
				f.function = j->name;
				f.module = "[jit]";
				f.sym_addr = j->start;
				f.sym_offset = ip - j->start;
				f.flags = SL_FRAME_JIT;
				s->st.frames_resolved++;
				return sl_prof_frame(P, &f);
			}
		}
	}
	if (!pm) {
		f.name = "[unknown]";
		f.flags = SL_FRAME_UNKNOWN;
		s->st.frames_unresolved++;
		return sl_prof_frame(P, &f);
	}
	f.module_offset = ip - pm->start + pm->offset;
	struct module *m = pm->mod;
	if (pm->cls == SL_MAP_VDSO) {
		m = s->vdso;
		f.module = "[vdso]";
		f.module_offset = ip - pm->start;
	} else if (pm->cls == SL_MAP_ANON) {
		f.module = "[anon]";
		f.module_offset = ip - pm->start;
	} else {
		f.module = pm->path;
	}
	if (m && m->ok && elf_sym(s, &f, m, caller))
		return sl_prof_frame(P, &f);
	if (pm->cls == SL_MAP_ANON)
		snprintf(name, sizeof(name), "[anon]");
	else
		snprintf(name, sizeof(name), "%s+0x%" PRIx64, base_name(f.module), f.module_offset);
	f.name = name;
	f.flags = SL_FRAME_NOSYM;
	s->st.frames_unresolved++;
	return sl_prof_frame(P, &f);
}

/* A (build-id, file offset) frame: the module from the build-id index,
 * whatever process ran it. mu held. */
static int64_t bid_frame(struct sl_symbolizer *s, struct sl_profile *P, const struct sl_raw_bid *b,
			 int caller)
{
	struct sl_frame f = { .address = b->offset, .module_offset = b->offset };
	char hex[2 * SL_BUILD_ID_MAX + 1], name[600], mod[64];
	struct module *m;
	bid_hex(b, hex);
	HASH_FIND(hb, s->bids, hex, strlen(hex), m);
	f.build_id = hex;
	if (m && m->ok && caller && !sl_elf_off_is_text(&m->elf, b->offset - 1)) {
		/* not a return address: as an ip outside every executable
		 * mapping (user_frame), [unknown], one for a run of them */
		f.name = "[unknown]";
		f.flags = SL_FRAME_UNKNOWN;
		f.build_id = NULL;
		s->st.frames_unresolved++;
		return sl_prof_frame(P, &f);
	}
	if (m) {
		f.module = m->path ? m->path : "[unknown]";
		if (elf_sym(s, &f, m, caller))
			return sl_prof_frame(P, &f);
		snprintf(name, sizeof(name), "%s+0x%" PRIx64, base_name(f.module), f.module_offset);
	} else {
		snprintf(mod, sizeof(mod), "[build-id:%.16s]", hex);
		f.module = mod;
		snprintf(name, sizeof(name), "%s+0x%" PRIx64, mod, f.module_offset);
	}
	f.name = name;
	f.flags = SL_FRAME_NOSYM;
	s->st.frames_unresolved++;
	return sl_prof_frame(P, &f);
}

/* Functions a process or thread starts in (the outermost real frames): a
 * frame-pointer walk that goes above them reads whatever the stack held
 * before (glibc's start code is built without frame pointers), e.g.
 * register_tm_clones or __do_global_dtors_aux and a canary-like "address"
 * on every stack of a static glibc binary. */
static const char *const entry_fns[] = {
	"_start", "__libc_start_main", "__libc_start_main_impl", "__libc_start_main_alias_2",
	"__libc_start_call_main", "start_thread", "clone", "clone3", "__clone", "__clone3",
	"__clone_internal", "thread_start", "libc_start_main_stage2", "_start_c", "__start",
	"runtime.goexit", "runtime.goexit1", "runtime.rt0_go", "runtime.mstart",
};

/* Functions that call nothing (crtstuff's transactional-memory clone
 * hooks end in a tail jump): one of them as a caller frame is a garbage
 * return address (e.g. one at the first byte of __do_global_dtors_aux,
 * looked up at ip - 1), and the walk above it is garbage too. */
static const char *const never_callers[] = { "register_tm_clones", "deregister_tm_clones" };

int sl_sym_is_never_caller(const char *fn)
{
	if (!fn)
		return 0;
	for (size_t i = 0; i < sizeof(never_callers) / sizeof(never_callers[0]); i++)
		if (!strcmp(fn, never_callers[i]))
			return 1;
	return 0;
}

int sl_sym_is_entry_fn(const char *fn)
{
	if (!fn)
		return 0;
	for (size_t i = 0; i < sizeof(entry_fns) / sizeof(entry_fns[0]); i++)
		if (!strcmp(fn, entry_fns[i]))
			return 1;
	return 0;
}

/* One stack into P with the (pinned) snapshot pr of its process, or
 * NULL. mu held; memory only. */
static int add_stack(struct sl_symbolizer *s, struct sl_profile *P, const struct sl_raw_stack *rs,
		     struct proc *pr)
{
	uint32_t fr[2 * SL_PROF_MAX_DEPTH + 2];
	uint32_t n = 0;
	if (pr)
		pr->last_use = ++s->tick;
	if (!rs->n_user && (rs->flags & SL_RAW_USER_LOST)) {
		struct sl_frame f = { .name = "[lost user stack]", .flags = SL_FRAME_PSEUDO | SL_FRAME_UNKNOWN };
		int64_t k = sl_prof_frame(P, &f);
		if (k < 0)
			return -ENOMEM;
		fr[n++] = (uint32_t)k;
	}
	/* A frame-pointer walk through code built without frame pointers reads
	 * garbage "return addresses" that fall outside every mapping; one such
	 * address makes every caller above it garbage too. A run of unmapped
	 * frames is kept as one [unknown] frame (the innermost, nearest to
	 * code that was resolved) instead of a deep chain of them. */
	int64_t uf[SL_PROF_MAX_DEPTH];
	uint32_t nu = rs->n_user > SL_PROF_MAX_DEPTH ? SL_PROF_MAX_DEPTH : rs->n_user, top = nu;
	int in_entry = 0;
	for (uint32_t i = 0; i < nu; i++) { /* leaf first */
		const struct sl_raw_bid *b = rs->user_bid && rs->user_bid[i].len ? &rs->user_bid[i] : NULL;
		int64_t k = b ? bid_frame(s, P, b, i > 0) : user_frame(s, P, pr, rs->user_ips[i], i > 0);
		if (k < 0)
			return -ENOMEM;
		uf[i] = k;
		/* above the start functions (a chain of them is kept: _start ->
		 * __libc_start_main -> __libc_start_call_main) nothing is real */
		int entry = sl_sym_is_entry_fn(P->frames[k].function);
		if ((in_entry && !entry) || (i > 0 && sl_sym_is_never_caller(P->frames[k].function))) {
			top = i;
			break;
		}
		in_entry |= entry;
	}
	int prev_unmapped = 0;
	for (uint32_t i = top; i-- > 0;) {
		int64_t k = uf[i];
		int unmapped = (P->frames[k].flags & (SL_FRAME_UNKNOWN | SL_FRAME_PSEUDO)) == SL_FRAME_UNKNOWN;
		if (unmapped && prev_unmapped)
			fr[n - 1] = (uint32_t)k;
		else
			fr[n++] = (uint32_t)k;
		prev_unmapped = unmapped;
	}
	if (!rs->n_kernel && (rs->flags & SL_RAW_KERNEL_LOST)) {
		struct sl_frame f = { .name = "[lost kernel stack]",
				      .flags = SL_FRAME_PSEUDO | SL_FRAME_UNKNOWN | SL_FRAME_KERNEL };
		int64_t k = sl_prof_frame(P, &f);
		if (k < 0)
			return -ENOMEM;
		fr[n++] = (uint32_t)k;
	}
	for (uint32_t i = rs->n_kernel; i-- > 0;) {
		int64_t k = kernel_frame(s, P, rs->kernel_ips[i], i > 0);
		if (k < 0)
			return -ENOMEM;
		fr[n++] = (uint32_t)k;
	}
	struct sl_sample smp = { .pid = rs->pid, .tid = rs->tid, .off_cpu_state = rs->off_cpu_state,
				 .count = rs->count, .value_ns = rs->value_ns,
				 .extra = { rs->extra[0], rs->extra[1] } };
	memcpy(smp.comm, rs->comm, sizeof(smp.comm));
	smp.comm[sizeof(smp.comm) - 1] = 0;
	memcpy(smp.container_id, rs->container_id, sizeof(smp.container_id));
	smp.container_id[sizeof(smp.container_id) - 1] = 0;
	return sl_prof_add_sample(P, &smp, fr, n);
}

/* The processes of one sl_symbolize call, sorted by pid. */
struct use {
	int pid;
	int fresh;      /* snapshotted by this call */
	int refresh;    /* an ip outside its snapshot: re-snapshot once */
	struct proc *pr; /* pinned, or NULL */
};

static int cmp_use(const void *a, const void *b)
{
	const struct use *x = a, *y = b;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static struct use *use_of(struct use *u, size_t n, int pid)
{
	struct use key = { .pid = pid };
	return bsearch(&key, u, n, sizeof(*u), cmp_use);
}

/* The cached snapshot of pid, pinned, or NULL. mu held. */
static struct proc *pin(struct sl_symbolizer *s, int pid)
{
	struct proc *pr;
	HASH_FIND_INT(s->procs, &pid, pr);
	if (pr)
		pr->pins++;
	return pr;
}

/* ip is in no mapping nor JIT symbol of pr. */
static int outside(const struct proc *pr, uint64_t ip)
{
	for (size_t i = 0; i < pr->n; i++)
		if (ip >= pr->maps[i].start && ip < pr->maps[i].end)
			return 0;
	return !sl_perfmap_lookup(pr->jit, pr->njit, ip);
}

/* Pin a snapshot of every process with user frames in rp: cached ones as
 * they are, others snapshotted now (still alive). A process with an ip
 * outside its snapshot may have mapped more since (dlopen, JIT): it is
 * re-snapshotted once per call when it is still the same process (same
 * start time). All file I/O with mu released. */
static void pin_all(struct sl_symbolizer *s, const struct sl_raw_profile *rp, struct use *u, size_t nu)
{
	for (size_t i = 0; i < nu; i++) {
		pthread_mutex_lock(&s->mu);
		u[i].pr = pin(s, u[i].pid);
		pthread_mutex_unlock(&s->mu);
		if (!u[i].pr && u[i].pid > 0 && !cache_pid(s, u[i].pid)) {
			u[i].fresh = 1;
			pthread_mutex_lock(&s->mu);
			u[i].pr = pin(s, u[i].pid);
			pthread_mutex_unlock(&s->mu);
		}
	}
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < rp->n_stacks; i++) {
		const struct sl_raw_stack *rs = &rp->stacks[i];
		struct use *x = rs->n_user ? use_of(u, nu, (int)rs->pid) : NULL;
		if (!x || !x->pr || x->fresh || x->refresh)
			continue;
		if (rs->user_bid && rs->user_bid[0].len) {
			/* a leaf build-id no module read so far has: the snapshot
			 * may predate an exec (same pid, same start time: runc's
			 * init before it execs the workload), so the file that
			 * ran is in none of its mappings: refresh it */
			char hex[2 * SL_BUILD_ID_MAX + 1];
			struct module *m;
			bid_hex(&rs->user_bid[0], hex);
			HASH_FIND(hb, s->bids, hex, strlen(hex), m);
			if (!m)
				x->refresh = 1;
		} else if (outside(x->pr, rs->user_ips[0])) {
			x->refresh = 1;
		}
	}
	pthread_mutex_unlock(&s->mu);
	for (size_t i = 0; i < nu; i++) {
		if (!u[i].refresh)
			continue;
		uint64_t st = proc_starttime(s, u[i].pid);
		if (!st || st != u[i].pr->starttime) /* starttime is immutable: no lock */
			continue;
		if (cache_pid(s, u[i].pid))
			continue; /* the old snapshot is only replaced on success */
		pthread_mutex_lock(&s->mu);
		struct proc *np = pin(s, u[i].pid);
		if (np) {
			proc_unpin(s, u[i].pr);
			u[i].pr = np;
		}
		pthread_mutex_unlock(&s->mu);
	}
}

struct sl_profile *sl_symbolize(struct sl_symbolizer *s, const struct sl_raw_profile *rp)
{
	struct sl_profile *P = sl_prof_new(rp->kind, rp->start_ns, rp->duration_ns, rp->period_ns);
	if (!P)
		return NULL;
	/* distinct pids with user frames */
	struct use *u = calloc(rp->n_stacks ? rp->n_stacks : 1, sizeof(*u));
	if (!u) {
		sl_profile_free(P);
		return NULL;
	}
	size_t nu = 0;
	int kernel = 0, user = 0;
	for (size_t i = 0; i < rp->n_stacks; i++) {
		kernel |= rp->stacks[i].n_kernel > 0;
		if (rp->stacks[i].n_user) {
			user = 1;
			u[nu++].pid = (int)rp->stacks[i].pid;
		}
	}
	qsort(u, nu, sizeof(*u), cmp_use);
	size_t k = 0;
	for (size_t i = 0; i < nu; i++)
		if (!k || u[k - 1].pid != u[i].pid)
			u[k++] = u[i];
	nu = k;

	/* 1. everything that reads files, with mu released */
	if (kernel)
		load_kallsyms(s);
	if (user)
		vdso_load(s);
	pin_all(s, rp, u, nu);
	bid_resolve_missing(s, rp);

	/* 2. the frames, from memory, under mu */
	int rc = 0;
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < rp->n_stacks && !rc; i++) {
		const struct sl_raw_stack *rs = &rp->stacks[i];
		struct use *x = rs->n_user ? use_of(u, nu, (int)rs->pid) : NULL;
		rc = add_stack(s, P, rs, x ? x->pr : NULL);
	}
	for (size_t i = 0; i < nu; i++)
		if (u[i].pr)
			proc_unpin(s, u[i].pr);
	pthread_mutex_unlock(&s->mu);
	free(u);
	if (rc) {
		sl_profile_free(P);
		return NULL;
	}
	return P;
}
