/* Agent core: the modules of the registry (setup, kind table), ring
 * buffer registration, ring buffer fill. The pipeline is pipeline.c,
 * /healthz health.c, the agent's /metrics self_metrics.c, the services
 * modules use services.c. */
#include "agent/agent.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* One map with the poll loop's ring_buffer. */
static int add_ringbuf(struct sl_agent *a, const char *name, int map_fd, sl_rb_cb cb, void *ctx)
{
	int n = (int)(sizeof(a->rb_map_fds) / sizeof(a->rb_map_fds[0]));
	if (a->nrb >= n)
		return -ENOSPC;
	if (!a->rb)
		a->rb = ring_buffer__new(map_fd, (ring_buffer_sample_fn)cb, ctx, NULL);
	else if (ring_buffer__add(a->rb, map_fd, (ring_buffer_sample_fn)cb, ctx))
		return -errno;
	if (!a->rb)
		return -errno;
	a->rb_map_fds[a->nrb] = map_fd;
	snprintf(a->rb_names[a->nrb], sizeof(a->rb_names[0]), "%s", name);
	a->nrb++;
	return 0;
}

int sl_agent_add_module_ringbufs(struct sl_agent *a, struct sl_module *m)
{
	for (unsigned i = 0; i < m->ops->nringbufs && i < SL_MAX_RINGBUFS; i++) {
		const struct sl_ringbuf_decl *d = &m->ops->ringbufs[i];
		int rc;
		if (m->ringbuf_fds[i] < 0) {
			snprintf(m->error, sizeof(m->error), "ring buffer %s: init set no fd", d->name);
			return -ENOENT;
		}
		if ((rc = add_ringbuf(a, d->name, m->ringbuf_fds[i], d->on_record, m))) {
			snprintf(m->error, sizeof(m->error), "ring buffer %s: %s", d->name, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

int sl_agent_modules_setup(struct sl_agent *a, char *err, size_t errlen)
{
	unsigned base[SL_MAX_MODULES];

	if (sl_registry_count > SL_MAX_MODULES || a->cfg.nmods != sl_registry_count) {
		snprintf(err, errlen, "registry: %u modules, config knows %u (max %d)", sl_registry_count,
			 a->cfg.nmods, SL_MAX_MODULES);
		return -1;
	}
	if (sl_kinds_build(&a->kinds, sl_registry, sl_registry_count, base, err, errlen))
		return -1;
	a->nmodules = 0;
	for (unsigned i = 0; i < sl_registry_count; i++) {
		struct sl_module *m = &a->modules[a->nmodules++];
		memset(m, 0, sizeof(*m));
		m->ops = sl_registry[i];
		m->agent = a;
		m->cfg = sl_config_module(&a->cfg, i);
		m->enabled = a->cfg.mod_enabled[i];
		m->kind_base = base[i];
		for (int r = 0; r < SL_MAX_RINGBUFS; r++)
			m->ringbuf_fds[r] = -1;
		if (m->ops->nringbufs > SL_MAX_RINGBUFS || m->ops->nhooks > SL_MAX_HOOKS) {
			snprintf(err, errlen, "module %s: more ring buffers or hooks than the contract's bounds",
				 m->ops->name);
			return -1;
		}
	}
	return 0;
}

/* The position pages of the ring buffers whose fill was asked, mapped
 * once (the fill is read every tick by the pressure sampler and at every
 * scrape: mapping and unmapping both pages each time was 4 syscalls and a
 * TLB shootdown per ring a tick). Keyed by descriptor and checked against
 * the map id, so a descriptor reused for another map is remapped. A
 * mapping keeps its map alive: entries stay until the process exits (or the
 * descriptor names another map), which is the life of the agent's ring
 * buffers (modules are not re-created at reload, src/agent/reload.c). */
struct rb_pos {
	int fd;
	__u32 id, size;
	const uint64_t *cons, *prod;
};
static pthread_mutex_t rb_pos_mu = PTHREAD_MUTEX_INITIALIZER;
static struct rb_pos rb_pos[SL_MAX_MODULES * SL_MAX_RINGBUFS];
static int rb_npos;

/* Fill of a BPF ring buffer: (producer_pos - consumer_pos) / size, from its
 * read-only mmap'd position pages (see kernel/bpf/ringbuf.c). -1 on error. */
double sl_agent_ringbuf_fill(int map_fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	long pg = sysconf(_SC_PAGESIZE);
	double fill = -1;
	struct rb_pos *e = NULL;

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(map_fd, &info, &len) || !info.max_entries)
		return -1;
	pthread_mutex_lock(&rb_pos_mu);
	for (int i = 0; i < rb_npos && !e; i++)
		if (rb_pos[i].fd == map_fd)
			e = &rb_pos[i];
	if (e && e->id != info.id) { /* the descriptor now names another map */
		munmap((void *)e->cons, (size_t)pg);
		munmap((void *)e->prod, (size_t)pg);
		*e = rb_pos[--rb_npos];
		e = NULL;
	}
	if (!e) {
		void *cons = mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, map_fd, 0);
		void *prod = cons == MAP_FAILED ? MAP_FAILED : mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, map_fd, pg);
		if (prod == MAP_FAILED) {
			if (cons != MAP_FAILED)
				munmap(cons, (size_t)pg);
		} else if (rb_npos < (int)(sizeof(rb_pos) / sizeof(rb_pos[0]))) {
			e = &rb_pos[rb_npos++];
			*e = (struct rb_pos){.fd = map_fd, .id = info.id, .size = info.max_entries, .cons = cons, .prod = prod};
		} else { /* no room: read once, as before */
			uint64_t c = __atomic_load_n((uint64_t *)cons, __ATOMIC_ACQUIRE);
			uint64_t p = __atomic_load_n((uint64_t *)prod, __ATOMIC_ACQUIRE);
			fill = p >= c ? (double)(p - c) / info.max_entries : 0;
			munmap(prod, (size_t)pg);
			munmap(cons, (size_t)pg);
		}
	}
	if (e) {
		uint64_t c = __atomic_load_n(e->cons, __ATOMIC_ACQUIRE);
		uint64_t p = __atomic_load_n(e->prod, __ATOMIC_ACQUIRE);
		fill = p >= c ? (double)(p - c) / e->size : 0;
	}
	pthread_mutex_unlock(&rb_pos_mu);
	return fill;
}
