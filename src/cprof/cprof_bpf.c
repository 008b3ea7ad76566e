/* The sampler of continuous profiling (cprof_internal.h): bpf/cprof.bpf.c
 * opened, sized, loaded and attached to one perf event per online CPU; the
 * buffer flip and the read/clear of the inactive buffer. */
#include "cprof/cprof_internal.h"
#include "profile/profile.h"
#include "profile/sampler_util.h"
#include "sandlens/cprof.h"
#include "cprof.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_CPUS 1024
#define STACK_DEPTH SL_STACK_DEPTH

struct sl_cprof_bpf {
	struct cprof_bpf *skel;
	int nlinks;
	struct bpf_link **links;
	struct bpf_link *exec_link; /* NULL: exec'd files not announced */
	char exec_err[160];         /* why exec_link is NULL */
	const char *event;
	unsigned active; /* buffer the programs write now */
	int ncpus;       /* possible CPUs (per-CPU map values) */
};

void sl_cprof_bpf_destroy(struct sl_cprof_bpf *b)
{
	if (!b)
		return;
	for (int i = 0; i < b->nlinks; i++)
		bpf_link__destroy(b->links[i]);
	free(b->links);
	bpf_link__destroy(b->exec_link);
	cprof_bpf__destroy(b->skel);
	free(b);
}

struct sl_cprof_bpf *sl_cprof_bpf_open(uint32_t hz, uint32_t stack_entries, uint32_t count_entries,
				       int v1_subsys_id, char *err, size_t errlen)
{
	struct sl_cprof_bpf *b = calloc(1, sizeof(*b));
	int cpus[MAX_CPUS], rc, hw = 1;
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	b->ncpus = libbpf_num_possible_cpus();
	b->skel = cprof_bpf__open();
	if (!b->skel || b->ncpus <= 0) {
		snprintf(err, errlen, "open cprof BPF object: %s", strerror(errno));
		goto fail;
	}
	b->skel->rodata->sl_v1_subsys_id = v1_subsys_id;
	uint32_t ustack_entries = stack_entries / 4 < 64 ? 64 : stack_entries / 4;
	bpf_map__set_max_entries(b->skel->maps.cprof_stacks0, stack_entries);
	bpf_map__set_max_entries(b->skel->maps.cprof_stacks1, stack_entries);
	bpf_map__set_max_entries(b->skel->maps.cprof_ustacks0, ustack_entries);
	bpf_map__set_max_entries(b->skel->maps.cprof_ustacks1, ustack_entries);
	bpf_map__set_max_entries(b->skel->maps.cprof_counts0, count_entries);
	bpf_map__set_max_entries(b->skel->maps.cprof_counts1, count_entries);
	if ((rc = cprof_bpf__load(b->skel))) {
		snprintf(err, errlen, "load cprof BPF object (perf_event): %s", strerror(-rc));
		goto fail;
	}
	int n = sl_online_cpus(cpus, MAX_CPUS);
	if (n <= 0) {
		snprintf(err, errlen, "reading the online CPUs: %s", strerror(n ? -n : EINVAL));
		goto fail;
	}
	b->links = calloc((size_t)n, sizeof(*b->links));
	if (!b->links) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (int i = 0; i < n; i++) {
		int fd = hw ? sl_perf_open_freq(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, hz, cpus[i]) : -1;
		if (fd < 0) {
			hw = 0; /* no PMU (VMs): cpu-clock from here on */
			fd = sl_perf_open_freq(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, hz, cpus[i]);
		}
		if (fd < 0) {
			snprintf(err, errlen, "perf_event_open(cpu-clock, cpu %d, %u Hz): %s", cpus[i], hz,
				 strerror(errno));
			goto fail;
		}
		struct bpf_link *l = bpf_program__attach_perf_event(b->skel->progs.cprof_sample, fd);
		if (!l) {
			int e = errno;
			close(fd);
			snprintf(err, errlen, "attach perf_event program on cpu %d: %s", cpus[i], strerror(e));
			goto fail;
		}
		b->links[b->nlinks++] = l;
	}
	b->event = hw ? "cycles" : "cpu-clock";
	/* optional: without it a short-lived process is symbolized only when
	 * a snapshot poll finds it alive (cprof.c) */
	b->exec_link = bpf_program__attach(b->skel->progs.cprof_exec);
	if (!b->exec_link)
		snprintf(b->exec_err, sizeof(b->exec_err), "attach tp_btf/sched_process_exec: %s",
			 strerror(errno));
	return b;
fail:
	sl_cprof_bpf_destroy(b);
	return NULL;
}

const char *sl_cprof_bpf_event(const struct sl_cprof_bpf *b) { return b && b->event ? b->event : ""; }

int sl_cprof_bpf_prog_fd(const struct sl_cprof_bpf *b) { return bpf_program__fd(b->skel->progs.cprof_sample); }

uint64_t sl_cprof_bpf_stat(const struct sl_cprof_bpf *b, int idx)
{
	return sl_bpf_percpu_sum(bpf_map__fd(b->skel->maps.cprof_stats), (uint32_t)idx);
}

/* Wait until no program still runs with the old value of `active`: the
 * perf_event program runs inside rcu_read_lock() (kernel/events/core.c,
 * bpf_overflow_handler), and MEMBARRIER_CMD_GLOBAL returns after
 * synchronize_rcu() (kernel/sched/membarrier.c). Without it (nohz_full
 * hosts refuse it) a pause far longer than one program run. */
static void grace_period(void)
{
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0)
		return;
	struct timespec ts = {0, 50 * 1000 * 1000};
	nanosleep(&ts, NULL);
}

unsigned sl_cprof_bpf_flip(struct sl_cprof_bpf *b)
{
	unsigned old = b->active;
	b->active = old ^ 1u;
	__atomic_store_n(&b->skel->bss->active, b->active, __ATOMIC_SEQ_CST);
	grace_period();
	return old;
}

int sl_cprof_bpf_drain(struct sl_cprof_bpf *b, unsigned buf,
		       int (*fn)(void *ctx, const struct sl_cprof_stack *s), void *ctx)
{
	int cfd = bpf_map__fd(buf ? b->skel->maps.cprof_counts1 : b->skel->maps.cprof_counts0);
	int sfd = bpf_map__fd(buf ? b->skel->maps.cprof_stacks1 : b->skel->maps.cprof_stacks0);
	int ufd = bpf_map__fd(buf ? b->skel->maps.cprof_ustacks1 : b->skel->maps.cprof_ustacks0);
	uint64_t uips[STACK_DEPTH], kips[STACK_DEPTH];
	struct sl_raw_bid ubid[STACK_DEPTH];
	struct sl_cprof_key k, next, *prev = NULL;
	struct sl_cprof_val v;
	int rc = 0;

	while (bpf_map_get_next_key(cfd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(cfd, &k, &v))
			continue;
		struct sl_cprof_stack s = {.cgroup_id = k.cgroup_id, .cgroup_v1_id = k.cgroup_v1_id,
					   .tgid = k.tgid, .count = v.count};
		memcpy(s.comm, v.comm, sizeof(s.comm) - 1);
		s.n_user = sl_bpf_ustack_read_bid(ufd, k.user_stack_id, ubid, uips);
		s.n_kernel = sl_bpf_stack_read(sfd, k.kernel_stack_id, kips);
		s.user_bid = ubid;
		s.user_ips = uips;
		s.kernel_ips = kips;
		s.user_lost = k.user_stack_id < 0 && k.user_stack_id != -EFAULT;
		s.kernel_lost = k.kernel_stack_id < 0 && k.kernel_stack_id != -EFAULT;
		if (!rc)
			rc = fn(ctx, &s);
	}
	/* clear the buffer for its next turn: every key (collected first:
	 * deleting during a get_next_key walk restarts it) */
	for (int pass = 0; pass < 3; pass++) {
		int fd = pass == 2 ? ufd : pass ? sfd : cfd;
		size_t ksz = pass ? sizeof(uint32_t) : sizeof(struct sl_cprof_key), n = 0, cap = 0;
		unsigned char *keys = NULL, kb[sizeof(struct sl_cprof_key)], pkb[sizeof(struct sl_cprof_key)];
		void *pk = NULL;
		while (bpf_map_get_next_key(fd, pk, kb) == 0) {
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 1024;
				unsigned char *nk = realloc(keys, nc * ksz);
				if (!nk)
					break;
				keys = nk;
				cap = nc;
			}
			memcpy(keys + n * ksz, kb, ksz);
			memcpy(pkb, kb, ksz);
			pk = pkb;
			n++;
		}
		for (size_t i = 0; i < n; i++)
			bpf_map_delete_elem(fd, keys + i * ksz);
		free(keys);
	}
	return rc;
}

const char *sl_cprof_bpf_exec_error(const struct sl_cprof_bpf *b)
{
	return b->exec_link ? NULL : b->exec_err;
}

int sl_cprof_bpf_exec_of(struct sl_cprof_bpf *b, uint32_t tgid, struct sl_prof_exec_val *out)
{
	if (!b->exec_link)
		return -ENOENT;
	uint32_t idx = tgid & (SL_CPROF_EXEC_SLOTS - 1);

	if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.cprof_execs), &idx, out))
		return -errno;
	if (out->tgid != tgid) /* another process's exec took the slot since */
		return -ENOENT;
	out->path[sizeof(out->path) - 1] = 0;
	return out->path[0] ? 0 : -ENOENT;
}

size_t sl_cprof_bpf_new_pids(struct sl_cprof_bpf *b, struct sl_cprof_newpid *out, size_t max)
{
	int fd = bpf_map__fd(b->skel->maps.cprof_pids);
	uint32_t k, next, *prev = NULL;
	size_t n = 0;
	while (n < max && bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct sl_cprof_pid v;
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v))
			continue;
		out[n].tgid = k;
		out[n].cgroup_id = v.cgroup_id;
		out[n].cgroup_v1_id = v.cgroup_v1_id;
		n++;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &out[i].tgid);
	return n;
}
