/* /proc/kallsyms parsing and lookup (kernel/kallsyms.c s_show(): "%px %c
 * %s\t[%s]" per symbol; addresses print as 0 when kptr_restrict hides them,
 * Documentation/admin-guide/sysctl/kernel.rst "kptr_restrict"). */
#include "profile/profile_internal.h"

#include "profile/symbolize_proc.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int is_text(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct sl_ksym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* stable: keep file order via pointer order of names in the pool */
	return x->name < y->name ? -1 : x->name > y->name;
}

/* The name of syms[i + 1] when syms[i] is its __pfx_ padding symbol (the
 * 16 bytes of padding before every function of kernels with
 * CONFIG_FUNCTION_PADDING_ALIGNMENT: about half of the text symbols):
 * "__pfx_X" is kept once and X points into it. NULL when not such a pair. */
static const char *pfx_pair(const struct sl_ksyms *ks, const struct sl_ksym *syms, size_t i)
{
	const struct sl_ksym *a = &syms[i], *b = i + 1 < ks->n ? &syms[i + 1] : NULL;
	if (!b || strncmp(a->name, "__pfx_", 6) || strcmp(a->name + 6, b->name))
		return NULL;
	if ((a->module == NULL) != (b->module == NULL) || (a->module && strcmp(a->module, b->module)))
		return NULL;
	return b->name;
}

/* Replace the pool (a copy of the whole file) by one holding only the
 * kept symbols' names (X in "__pfx_X" when they follow each other: one
 * copy) and modules (a module name once per run of symbols):
 * /proc/kallsyms is 5-10 MB of text and the table is kept for the
 * agent's life (kernel frames of drop stacks and profiles). Without memory
 * for the copy the table stays as it is. */
static void compact(struct sl_ksyms *ks, struct sl_ksym *syms)
{
	size_t bytes = 0;
	const char *pm = NULL;

	for (size_t i = 0; i < ks->n; i++) {
		if (!(i && pfx_pair(ks, syms, i - 1)))
			bytes += strlen(syms[i].name) + 1;
		if (syms[i].module && (!pm || strcmp(pm, syms[i].module))) {
			pm = syms[i].module;
			bytes += strlen(pm) + 1;
		}
	}
	char *pool = malloc(bytes ? bytes : 1), *w = pool;
	if (!pool)
		return;
	const char *src_m = NULL, *dst_m = NULL, *pfx_of_next = NULL;
	for (size_t i = 0; i < ks->n; i++) {
		struct sl_ksym *k = &syms[i];
		const char *shared = pfx_of_next; /* this one's name inside the previous "__pfx_" name */
		int pair = pfx_pair(ks, syms, i) != NULL; /* before k->name moves */
		if (shared) {
			k->name = shared;
		} else {
			size_t l = strlen(k->name) + 1;
			memcpy(w, k->name, l);
			k->name = w;
			w += l;
		}
		pfx_of_next = pair ? k->name + 6 : NULL;
		if (k->module && (!src_m || strcmp(src_m, k->module))) {
			src_m = k->module;
			size_t l = strlen(src_m) + 1;
			memcpy(w, src_m, l);
			dst_m = w;
			w += l;
		}
		if (k->module)
			k->module = dst_m;
	}
	free(ks->pool_);
	ks->pool_ = pool;
}

/* The parsed symbols (32 bytes each, pointers into ks->pool_) -> the
 * stored 16-byte entries and the module list. 0 / -ENOMEM. */
static int store(struct sl_ksyms *ks, struct sl_ksym *syms)
{
	size_t nm = 0;
	const char *pm = NULL;
	for (size_t i = 0; i < ks->n; i++)
		if (syms[i].module && (!pm || strcmp(syms[i].module, pm))) {
			pm = syms[i].module;
			nm++;
		}
	if (nm > UINT16_MAX - 1)
		nm = UINT16_MAX - 1; /* more runs than that: the rest show no module */
	ks->ents = malloc((ks->n ? ks->n : 1) * sizeof(*ks->ents));
	ks->mods = calloc(nm ? nm : 1, sizeof(*ks->mods));
	if (!ks->ents || !ks->mods)
		return -ENOMEM;
	pm = NULL;
	for (size_t i = 0; i < ks->n; i++) {
		const struct sl_ksym *k = &syms[i];
		uint16_t mod = 0;
		if (k->module) {
			if ((!pm || strcmp(k->module, pm)) && ks->nmods < nm) {
				pm = k->module;
				ks->mods[ks->nmods++] = pm;
			}
			if (pm && !strcmp(k->module, pm))
				mod = (uint16_t)ks->nmods;
		}
		ks->ents[i] = (struct sl_ksym_ent){k->addr, (uint32_t)(k->name - ks->pool_), mod, k->type, 0};
	}
	return 0;
}

int sl_ksyms_parse(const char *buf, size_t len, struct sl_ksyms *ks)
{
	memset(ks, 0, sizeof(*ks));
	ks->pool_ = malloc(len + 1);
	if (!ks->pool_)
		return -ENOMEM;
	memcpy(ks->pool_, buf, len);
	ks->pool_[len] = 0;
	size_t cap = 0;
	int any_nonzero = 0, any = 0;
	struct sl_ksym *syms = NULL; /* parsed; stored as 16-byte entries at the end */
	char *p = ks->pool_, *end = ks->pool_ + len;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *le = nl ? nl : end;
		*le = 0;
		char *q = p;
		p = nl ? nl + 1 : end;
		char *a_end;
		errno = 0;
		unsigned long long addr = strtoull(q, &a_end, 16);
		if (a_end == q || errno || *a_end != ' ')
			continue;
		q = a_end + 1;
		if (!*q || q[1] != ' ')
			continue;
		char type = q[0];
		char *name = q + 2;
		if (!*name)
			continue;
		char *mod = NULL;
		char *tab = strpbrk(name, "\t ");
		if (tab) {
			*tab = 0;
			mod = tab + 1;
			while (*mod == ' ' || *mod == '\t')
				mod++;
			if (*mod == '[') {
				mod++;
				char *rb = strchr(mod, ']');
				if (rb)
					*rb = 0;
			}
			if (!*mod)
				mod = NULL;
		}
		any = 1;
		if (addr)
			any_nonzero = 1;
		if (!is_text(type))
			continue;
		if (ks->n == cap) {
			size_t nc = cap ? cap * 2 : 1024;
			struct sl_ksym *ns = realloc(syms, nc * sizeof(*ns));
			if (!ns) {
				free(syms);
				sl_ksyms_free(ks);
				return -ENOMEM;
			}
			syms = ns;
			cap = nc;
		}
		syms[ks->n++] = (struct sl_ksym){ .addr = addr, .type = type, .name = name, .module = mod };
	}
	ks->hidden = any && !any_nonzero;
	if (ks->n > 1)
		qsort(syms, ks->n, sizeof(*syms), cmp_ksym);
	compact(ks, syms);
	int rc = store(ks, syms);
	free(syms);
	if (rc)
		sl_ksyms_free(ks);
	return rc;
}

void sl_ksyms_free(struct sl_ksyms *ks)
{
	free(ks->ents);
	free(ks->mods);
	free(ks->pool_);
	memset(ks, 0, sizeof(*ks));
}

const struct sl_ksym *sl_ksyms_at(const struct sl_ksyms *ks, size_t i, struct sl_ksym *out)
{
	const struct sl_ksym_ent *e = &ks->ents[i];
	*out = (struct sl_ksym){e->addr, e->type, ks->pool_ + e->name, e->mod ? ks->mods[e->mod - 1] : NULL};
	return out;
}

size_t sl_ksyms_index(const struct sl_ksyms *ks, uint64_t addr)
{
	if (ks->hidden || !ks->n)
		return ks->n;
	size_t lo = 0, hi = ks->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ks->ents[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : ks->n;
}

const struct sl_ksym *sl_ksyms_lookup(const struct sl_ksyms *ks, uint64_t addr, struct sl_ksym *out)
{
	size_t i = sl_ksyms_index(ks, addr);
	return i < ks->n ? sl_ksyms_at(ks, i, out) : NULL;
}

size_t sl_ksyms_addrs(const struct sl_ksyms *ks, const char *name, uint64_t *addrs, size_t max)
{
	size_t k = 0;
	for (size_t i = 0; i < ks->n; i++) {
		if (strcmp(ks->pool_ + ks->ents[i].name, name))
			continue;
		if (k < max)
			addrs[k] = ks->ents[i].addr;
		k++;
	}
	return k;
}

/* ---- the shared tables (sl_ksyms_shared_get) ---- */

struct shared_ks {
	struct sl_ksyms ks;
	unsigned refs;
	struct shared_ks *next;
	char path[];
};
static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;
static struct shared_ks *shared; /* under shared_mu */

static struct shared_ks *shared_find(const char *path)
{
	for (struct shared_ks *e = shared; e; e = e->next)
		if (!strcmp(e->path, path))
			return e;
	return NULL;
}

const struct sl_ksyms *sl_ksyms_shared_get(const char *path, int *state)
{
	int st = -2;
	if (!path || !*path)
		goto out;
	pthread_mutex_lock(&shared_mu);
	struct shared_ks *e = shared_find(path);
	if (e) {
		e->refs++;
		pthread_mutex_unlock(&shared_mu);
		return &e->ks;
	}
	pthread_mutex_unlock(&shared_mu);

	/* read and parse without the lock (MBs of file I/O); when two gets
	 * race, the first to install wins and the other's table is freed */
	size_t pl = strlen(path) + 1, len;
	char *buf;
	e = calloc(1, sizeof(*e) + pl);
	if (!e)
		goto out;
	memcpy(e->path, path, pl);
	if (sl_read_small_file(path, SL_SYM_KALLSYMS_MAX, &buf, &len)) {
		free(e);
		goto out;
	}
	int rc = sl_ksyms_parse(buf, len, &e->ks);
	free(buf);
	if (rc || e->ks.hidden || !e->ks.n) {
		st = rc ? -2 : -1;
		sl_ksyms_free(&e->ks);
		free(e);
		goto out;
	}
	pthread_mutex_lock(&shared_mu);
	struct shared_ks *won = shared_find(path);
	if (won) {
		won->refs++;
		pthread_mutex_unlock(&shared_mu);
		sl_ksyms_free(&e->ks);
		free(e);
		return &won->ks;
	}
	e->refs = 1;
	e->next = shared;
	shared = e;
	pthread_mutex_unlock(&shared_mu);
	return &e->ks;
out:
	if (state)
		*state = st;
	return NULL;
}

void sl_ksyms_shared_put(const struct sl_ksyms *ks)
{
	if (!ks)
		return;
	pthread_mutex_lock(&shared_mu);
	for (struct shared_ks **pp = &shared; *pp; pp = &(*pp)->next) {
		struct shared_ks *e = *pp;
		if (&e->ks != ks)
			continue;
		if (--e->refs == 0) {
			*pp = e->next;
			sl_ksyms_free(&e->ks);
			free(e);
		}
		break;
	}
	pthread_mutex_unlock(&shared_mu);
}
