/* Module helpers of the module contract (src/agent/module.h): hook, ring
 * buffer and program bookkeeping, attach, per-CPU counter sums. Kept apart
 * from the agent (services.c) so code that only needs these links without
 * it. */
#include "agent/module.h"
#include "common/log.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void sl_module_hook(struct sl_module *m, const char *name, int state, const char *reason)
{
	if (m->nhooks >= SL_MAX_HOOKS)
		return;
	struct sl_hook_status *h = &m->hooks[m->nhooks++];
	snprintf(h->name, sizeof(h->name), "%s", name);
	h->state = state;
	snprintf(h->reason, sizeof(h->reason), "%s", reason ? reason : "");
	if (state == SL_HOOK_ATTACHED)
		sl_debug(m->ops->name, "hook %s attached", name);
	else
		sl_log(state == SL_HOOK_FAILED	   ? SL_LOG_ERROR
		       : state == SL_HOOK_DISABLED ? SL_LOG_INFO /* on purpose: nothing is missing */
						   : SL_LOG_WARN,
		       m->ops->name, "hook %s %s: %s", name, sl_hook_state_name(state), h->reason);
}

int sl_module_hook_note(struct sl_module *m, const char *name, const char *reason)
{
	for (int i = m->nhooks - 1; i >= 0; i--)
		if (!strcmp(m->hooks[i].name, name)) {
			snprintf(m->hooks[i].reason, sizeof(m->hooks[i].reason), "%s", reason ? reason : "");
			return 0;
		}
	return -ENOENT;
}

void sl_module_prog(struct sl_module *m, const char *name, int prog_fd)
{
	if (m->nprogs >= SL_MAX_PROGS || prog_fd < 0)
		return;
	snprintf(m->prog_names[m->nprogs], sizeof(m->prog_names[0]), "%s", name);
	m->prog_fds[m->nprogs++] = prog_fd;
}

void sl_module_attach(struct sl_module *m, struct bpf_program *prog, struct bpf_link **link,
		      const char *hook)
{
	*link = NULL;
	if (!bpf_program__autoload(prog))
		return;
	*link = bpf_program__attach(prog);
	if (!*link) {
		char why[128];
		snprintf(why, sizeof(why), "attach failed: %s", strerror(errno));
		sl_module_hook(m, hook, SL_HOOK_FAILED, why);
		*link = NULL;
		return;
	}
	sl_module_hook(m, hook, SL_HOOK_ATTACHED, NULL);
	sl_module_prog(m, bpf_program__name(prog), bpf_program__fd(prog));
}

uint64_t sl_percpu_sum(int map_fd, uint32_t idx, int ncpus)
{
	uint64_t vals[ncpus > 0 ? ncpus : 1], sum = 0;

	/* defined for valgrind, which does not model per-CPU lookups */
	memset(vals, 0, sizeof(vals));
	if (ncpus <= 0 || bpf_map_lookup_elem(map_fd, &idx, vals))
		return 0;
	for (int i = 0; i < ncpus; i++)
		sum += vals[i];
	return sum;
}

int sl_percpu_array_each(int map_fd, uint32_t nelem, size_t value_size, int ncpus, uint32_t chunk,
			 int (*fn)(void *ctx, uint32_t idx, const void *vals), void *ctx)
{
	size_t vsz = (value_size + 7) & ~(size_t)7, per = vsz * (size_t)(ncpus > 0 ? ncpus : 1);
	uint32_t *keys;
	unsigned char *vals;
	uint32_t next = 0, done = 0;
	int rc = 0, batch = 1;

	if (ncpus <= 0 || !chunk)
		return -EINVAL;
	if (chunk > nelem)
		chunk = nelem ? nelem : 1;
	keys = calloc(chunk, sizeof(*keys));
	/* zeroed: valgrind does not model what the kernel writes */
	vals = calloc(chunk, per);
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	while (!rc && done < nelem) {
		uint32_t want = nelem - done < chunk ? nelem - done : chunk, count = want;
		if (batch) {
			LIBBPF_OPTS(bpf_map_batch_opts, o);
			int e = bpf_map_lookup_batch(map_fd, done ? &next : NULL, &next, keys, vals, &count, &o);
			if (e && errno != ENOENT) {
				if (!done && (errno == EINVAL || errno == ENOTSUP || errno == EOPNOTSUPP ||
					      errno == ENOSYS || errno == 524 /* ENOTSUPP */)) {
					batch = 0; /* no batch ops: per element from here */
					continue;
				}
				rc = -errno;
				break;
			}
			for (uint32_t i = 0; i < count && !rc; i++)
				rc = fn(ctx, keys[i], vals + (size_t)i * per);
			done += count;
			if (e || !count) /* ENOENT: the end of the array */
				break;
			continue;
		}
		for (uint32_t i = 0; i < want && !rc; i++) {
			uint32_t idx = done + i;
			memset(vals, 0, per);
			if (bpf_map_lookup_elem(map_fd, &idx, vals))
				continue;
			rc = fn(ctx, idx, vals);
		}
		done += want;
	}
	free(keys);
	free(vals);
	return rc;
}

struct sums {
	uint64_t *out;
	int ncpus;
};

static int sum_one(void *ctx, uint32_t idx, const void *vals)
{
	struct sums *s = ctx;
	const uint64_t *v = vals;
	uint64_t sum = 0;
	for (int c = 0; c < s->ncpus; c++)
		sum += v[c];
	s->out[idx] = sum;
	return 0;
}

int sl_percpu_sums(int map_fd, uint32_t n, int ncpus, uint64_t *out)
{
	struct sums s = {.out = out, .ncpus = ncpus};
	memset(out, 0, n * sizeof(*out));
	int rc = n ? sl_percpu_array_each(map_fd, n, sizeof(uint64_t), ncpus, n, sum_one, &s) : 0;
	if (rc)
		memset(out, 0, n * sizeof(*out));
	return rc;
}

int sl_module_ringbuf(struct sl_module *m, const char *name, int map_fd)
{
	for (unsigned i = 0; i < m->ops->nringbufs && i < SL_MAX_RINGBUFS; i++)
		if (!strcmp(m->ops->ringbufs[i].name, name)) {
			m->ringbuf_fds[i] = map_fd;
			return 0;
		}
	sl_err(m->ops->name, "ring buffer %s is not declared", name);
	return -ENOENT;
}

uint64_t sl_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *sl_hook_state_name(int state)
{
	static const char *const n[] = {"attached", "degraded", "disabled", "failed"};
	return state >= 0 && state <= SL_HOOK_FAILED ? n[state] : "unknown";
}

