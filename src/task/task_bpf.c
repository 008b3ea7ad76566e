/* BPF objects of tasks (task_bpf.h). */
#include "task/task_bpf.h"
#include "profile/sampler_util.h"
#include "task/task_kprof.h"
#include "task/task.h"
#include "task/syscall_names.h"
#include "profile/profile.h"
#include "sandlens/task_abi.h"
#include "profile.skel.h"
#include "syscall_errors.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_CPUS 1024
#define STACK_DEPTH SL_STACK_DEPTH

struct sl_task_bpf {
	int type;
	uint32_t hz;
	const char *event;
	struct profile_bpf *prof;
	struct syscall_errors_bpf *sce;
	struct sl_kprof *kp; /* memory and lock profiles (task_kprof.c) */
	int nlinks;
	struct bpf_link **links;
	int pids_fd, cg2_fd, cg1_fd, stats_fd, nstats;
};

static int add_link(struct sl_task_bpf *b, struct bpf_link *l)
{
	struct bpf_link **nl = realloc(b->links, sizeof(*nl) * (size_t)(b->nlinks + 1));
	if (!nl)
		return -ENOMEM;
	b->links = nl;
	b->links[b->nlinks++] = l;
	return 0;
}

static int attach_on_cpu(struct sl_task_bpf *b, char *err, size_t errlen)
{
	int cpus[MAX_CPUS];
	int n = sl_online_cpus(cpus, MAX_CPUS), hw = 1;

	if (n <= 0) {
		snprintf(err, errlen, "reading the online CPUs: %s", strerror(n ? -n : EINVAL));
		return n ? n : -EINVAL;
	}
	for (int i = 0; i < n; i++) {
		int fd = hw ? sl_perf_open_freq(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, b->hz, cpus[i]) : -1;
		if (fd < 0) {
			hw = 0; /* no PMU (VMs) or a CPU without one: cpu-clock from here on */
			fd = sl_perf_open_freq(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, b->hz, cpus[i]);
		}
		if (fd < 0) {
			int e = errno;
			snprintf(err, errlen, "perf_event_open(cpu-clock, cpu %d, %u Hz): %s", cpus[i], b->hz,
				 strerror(e));
			return -e;
		}
		struct bpf_link *l = bpf_program__attach_perf_event(b->prof->progs.on_cpu, fd);
		if (!l) {
			int e = errno;
			close(fd);
			snprintf(err, errlen, "attach perf_event program on cpu %d: %s", cpus[i], strerror(e));
			return -e;
		}
		if (add_link(b, l)) {
			bpf_link__destroy(l);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	b->event = hw ? "cycles" : "cpu-clock";
	return 0;
}

static int attach_prog(struct sl_task_bpf *b, struct bpf_program *p, const char *what, char *err,
		       size_t errlen)
{
	struct bpf_link *l = bpf_program__attach(p);
	if (!l) {
		int e = errno;
		snprintf(err, errlen, "attach %s: %s", what, strerror(e));
		return -e;
	}
	if (add_link(b, l)) {
		bpf_link__destroy(l);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static int open_profile(struct sl_task_bpf *b, const struct sl_task_bpf_opts *o, int attach,
			char *err, size_t errlen)
{
	int rc;
	b->prof = profile_bpf__open();
	if (!b->prof) {
		rc = -errno;
		snprintf(err, errlen, "open profile BPF object: %s", strerror(-rc));
		return rc;
	}
	b->prof->rodata->filter_kind = (uint32_t)o->filter_kind;
	b->prof->rodata->off_min_ns = o->min_off_cpu_ns;
	b->prof->rodata->sl_v1_subsys_id = o->v1_subsys_id;
	int on = o->type == SL_TASK_PROFILE_ON_CPU;
	bpf_program__set_autoload(b->prof->progs.on_cpu, on);
	bpf_program__set_autoload(b->prof->progs.off_cpu_switch, !on);
	bpf_program__set_autoload(b->prof->progs.off_cpu_wakeup, !on);
	if (o->stack_entries) {
		/* user stacks are build-id frames, 4x the size of ip frames:
		 * a quarter of the entries for the same memory */
		uint32_t u = o->stack_entries / 4;
		bpf_map__set_max_entries(b->prof->maps.prof_stacks, o->stack_entries);
		bpf_map__set_max_entries(b->prof->maps.prof_ustacks, u < 64 ? 64 : u);
	}
	if (o->count_entries)
		bpf_map__set_max_entries(b->prof->maps.prof_counts, o->count_entries);
	rc = profile_bpf__load(b->prof);
	if (rc) {
		snprintf(err, errlen, "load profile BPF object (%s): %s",
			 on ? "perf_event" : "tp_btf/sched_switch, tp_btf/sched_wakeup", strerror(-rc));
		return rc;
	}
	b->pids_fd = bpf_map__fd(b->prof->maps.filter_pids);
	b->cg2_fd = bpf_map__fd(b->prof->maps.filter_cg2);
	b->cg1_fd = bpf_map__fd(b->prof->maps.filter_cg1);
	b->stats_fd = bpf_map__fd(b->prof->maps.prof_stats);
	b->nstats = SL_PST_MAX;
	if (!attach)
		return 0;
	if ((rc = attach_prog(b, b->prof->progs.prof_exec, "tp_btf/sched_process_exec", err, errlen)))
		return rc;
	if (on)
		return attach_on_cpu(b, err, errlen);
	b->event = "sched_switch";
	if ((rc = attach_prog(b, b->prof->progs.off_cpu_switch, "tp_btf/sched_switch", err, errlen)))
		return rc;
	return attach_prog(b, b->prof->progs.off_cpu_wakeup, "tp_btf/sched_wakeup", err, errlen);
}

static int open_sce(struct sl_task_bpf *b, const struct sl_task_bpf_opts *o, int attach, char *err,
		    size_t errlen)
{
	int rc;
	b->sce = syscall_errors_bpf__open();
	if (!b->sce) {
		rc = -errno;
		snprintf(err, errlen, "open syscall_errors BPF object: %s", strerror(-rc));
		return rc;
	}
	b->sce->rodata->filter_kind = (uint32_t)o->filter_kind;
	b->sce->rodata->sl_v1_subsys_id = o->v1_subsys_id;
	if (o->count_entries)
		bpf_map__set_max_entries(b->sce->maps.sce_counts, o->count_entries);
	rc = syscall_errors_bpf__load(b->sce);
	if (rc) {
		snprintf(err, errlen, "load syscall_errors BPF object: %s", strerror(-rc));
		return rc;
	}
	b->pids_fd = bpf_map__fd(b->sce->maps.filter_pids);
	b->cg2_fd = bpf_map__fd(b->sce->maps.filter_cg2);
	b->cg1_fd = bpf_map__fd(b->sce->maps.filter_cg1);
	b->stats_fd = bpf_map__fd(b->sce->maps.sce_stats);
	b->nstats = SL_SCE_MAX;
	b->event = "sys_exit";
	if (!attach)
		return 0;
	return attach_prog(b, b->sce->progs.sys_exit, "tp/raw_syscalls/sys_exit", err, errlen);
}

static struct sl_task_bpf *open_any(const struct sl_task_bpf_opts *o, int attach, char *err,
				    size_t errlen)
{
	struct sl_task_bpf *b = calloc(1, sizeof(*b));
	int rc;
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	b->type = o->type;
	b->hz = o->hz ? o->hz : 99;
	b->pids_fd = b->cg2_fd = b->cg1_fd = b->stats_fd = -1;
	if (o->type == SL_TASK_PROFILE_ON_CPU || o->type == SL_TASK_PROFILE_OFF_CPU)
		rc = open_profile(b, o, attach, err, errlen);
	else if (o->type == SL_TASK_SYSCALL_ERRORS)
		rc = open_sce(b, o, attach, err, errlen);
	else if (sl_kprof_is_type(o->type)) {
		b->kp = sl_kprof_open(o, attach, err, errlen);
		rc = b->kp ? 0 : -EINVAL;
		if (b->kp) {
			sl_kprof_fds(b->kp, &b->pids_fd, &b->cg2_fd, &b->cg1_fd, &b->stats_fd);
			b->nstats = SL_KST_MAX;
			b->event = sl_kprof_event(b->kp);
		}
	} else {
		snprintf(err, errlen, "unknown task type %d", o->type);
		rc = -EINVAL;
	}
	if (rc) {
		sl_task_bpf_destroy(b);
		return NULL;
	}
	return b;
}

struct sl_task_bpf *sl_task_bpf_open(const struct sl_task_bpf_opts *o, char *err, size_t errlen)
{
	return open_any(o, 1, err, errlen);
}

int sl_task_bpf_probe(int type, int v1_subsys_id, char *err, size_t errlen)
{
	struct sl_task_bpf_opts o = {.type = type, .filter_kind = SL_TF_TGID, .hz = 99,
				     .stack_entries = 64, .count_entries = 64,
				     .v1_subsys_id = v1_subsys_id};
	struct sl_task_bpf *b = open_any(&o, 0, err, errlen);
	if (!b)
		return -EINVAL;
	sl_task_bpf_destroy(b);
	return 0;
}

const char *sl_task_bpf_event(const struct sl_task_bpf *b) { return b && b->event ? b->event : ""; }

int sl_task_bpf_add_pid(struct sl_task_bpf *b, uint32_t pid)
{
	uint8_t one = 1;
	return bpf_map_update_elem(b->pids_fd, &pid, &one, BPF_ANY) ? -errno : 0;
}

int sl_task_bpf_add_cgroup(struct sl_task_bpf *b, uint64_t id, int hier)
{
	uint8_t one = 1;
	return bpf_map_update_elem(hier ? b->cg1_fd : b->cg2_fd, &id, &one, BPF_ANY) ? -errno : 0;
}

uint64_t sl_task_bpf_stat(struct sl_task_bpf *b, int idx)
{
	if (!b || b->stats_fd < 0 || idx < 0 || idx >= b->nstats)
		return 0;
	return sl_bpf_percpu_sum(b->stats_fd, (uint32_t)idx);
}

int sl_task_bpf_read_execs(struct sl_task_bpf *b, struct sl_prof_exec_val *out, int max)
{
	struct sl_prof_exec_key k, next, *prev = NULL;
	struct sl_prof_exec_val v;
	int n = 0, fd;
	if (!b || !b->prof || max <= 0)
		return 0;
	fd = bpf_map__fd(b->prof->maps.prof_execs);
	while (n < max && bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v))
			continue;
		v.path[sizeof(v.path) - 1] = 0;
		/* each file once: the entry stays (so BPF does not add it
		 * again) with tgid UINT32_MAX as the "taken" mark */
		if (!v.path[0] || v.tgid == UINT32_MAX)
			continue;
		out[n++] = v;
		v.tgid = UINT32_MAX;
		bpf_map_update_elem(fd, &k, &v, BPF_EXIST);
	}
	return n;
}

struct sl_raw_profile *sl_task_bpf_read_profile(struct sl_task_bpf *b, uint64_t start_wall_ns,
						uint64_t duration_ns,
						const char *(*container_of)(void *, uint32_t, uint64_t,
									    uint64_t),
						void *ctx, json_t **dropped)
{
	if (b->kp)
		return sl_kprof_read(b->kp, start_wall_ns, duration_ns, container_of, ctx, dropped);
	int on = b->type == SL_TASK_PROFILE_ON_CPU;
	uint64_t period = on ? 1000000000ull / (b->hz ? b->hz : 99) : 0;
	struct sl_raw_profile *rp = sl_raw_profile_new(on ? SL_PROF_ON_CPU : SL_PROF_OFF_CPU,
						       start_wall_ns, duration_ns, period);
	uint64_t uips[STACK_DEPTH], kips[STACK_DEPTH];
	struct sl_raw_bid ubid[STACK_DEPTH];
	struct sl_prof_key k, next, *prev = NULL;
	struct sl_prof_val v;
	int cfd = bpf_map__fd(b->prof->maps.prof_counts), sfd = bpf_map__fd(b->prof->maps.prof_stacks);
	int ufd = bpf_map__fd(b->prof->maps.prof_ustacks);
	uint64_t lost_user = 0, lost_kernel = 0;

	if (!rp)
		return NULL;
	while (bpf_map_get_next_key(cfd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(cfd, &k, &v))
			continue;
		struct sl_raw_stack s = {0};
		s.pid = k.tgid;
		s.tid = (int32_t)k.tid; /* per thread for process and thread targets, else 0 */
		_Static_assert(sizeof(s.comm) == sizeof(v.comm), "comm sizes");
		memcpy(s.comm, v.comm, sizeof(s.comm) - 1);
		s.comm[sizeof(s.comm) - 1] = 0;
		s.n_user = sl_bpf_ustack_read_bid(ufd, k.user_stack_id, ubid, uips);
		s.user_ips = uips;
		s.user_bid = ubid;
		s.n_kernel = sl_bpf_stack_read(sfd, k.kernel_stack_id, kips);
		s.kernel_ips = kips;
		if (k.user_stack_id < 0 && k.user_stack_id != -EFAULT) {
			s.flags |= SL_RAW_USER_LOST;
			lost_user += v.count;
		}
		if (k.kernel_stack_id < 0 && k.kernel_stack_id != -EFAULT) {
			s.flags |= SL_RAW_KERNEL_LOST;
			lost_kernel += v.count;
		}
		s.count = v.count;
		s.value_ns = on ? v.count * period : v.value_ns;
		s.off_cpu_state = (int)k.state;
		if (container_of)
			snprintf(s.container_id, sizeof(s.container_id), "%s",
				 container_of(ctx, k.tgid, v.cgroup_id, v.cgroup_v1_id));
		if (sl_raw_profile_add(rp, &s)) {
			sl_raw_profile_free(rp);
			return NULL;
		}
	}
	if (dropped) {
		*dropped = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}",
				     "counts_full", (json_int_t)sl_task_bpf_stat(b, SL_PST_COUNTS_FULL),
				     "user_stack_lost", (json_int_t)sl_task_bpf_stat(b, SL_PST_USTACK_LOST),
				     "kernel_stack_lost", (json_int_t)sl_task_bpf_stat(b, SL_PST_KSTACK_LOST),
				     "user_stack_lost_in_result", (json_int_t)lost_user,
				     "kernel_stack_lost_in_result", (json_int_t)lost_kernel,
				     "short_intervals", (json_int_t)sl_task_bpf_stat(b, SL_PST_SHORT));
	}
	return rp;
}

static int cmp_count_desc(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "count"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "count"));
	return x < y ? 1 : x > y ? -1 : 0;
}

json_t *sl_task_bpf_read_syscall_errors(struct sl_task_bpf *b)
{
	int fd = bpf_map__fd(b->sce->maps.sce_counts);
	struct sl_sce_key k, next, *prev = NULL;
	struct sl_sce_val v;
	uint64_t total = 0;
	size_t n = 0, cap = 0;
	json_t **items = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v))
			continue;
		char comm[SL_TASK_COMM_LEN + 1];
		memcpy(comm, v.comm, SL_TASK_COMM_LEN);
		comm[SL_TASK_COMM_LEN] = 0;
		const char *name = sl_syscall_name((int)k.nr, NULL);
		const char *ename = sl_errno_name((int)k.err);
		char nbuf[32], ebuf[32];
		if (!name) {
			snprintf(nbuf, sizeof(nbuf), "syscall_%u", k.nr);
			name = nbuf;
		}
		if (!ename) {
			snprintf(ebuf, sizeof(ebuf), "E%u", k.err);
			ename = ebuf;
		}
		json_t *o = json_pack("{s:s, s:i, s:i, s:s, s:s, s:I, s:{s:i, s:s%}}", "syscall", name,
				      "nr", (int)k.nr, "errno", (int)k.err, "errno_name", ename,
				      "message", strerror((int)k.err), "count", (json_int_t)v.count,
				      "example", "pid", (int)v.tgid, "comm", comm, strlen(comm));
		if (!o)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			json_t **ni = realloc(items, cap * sizeof(*ni));
			if (!ni) {
				json_decref(o);
				break;
			}
			items = ni;
		}
		items[n++] = o;
		total += v.count;
	}
	if (n)
		qsort(items, n, sizeof(*items), cmp_count_desc);
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, items[i]);
	free(items);
	return json_pack("{s:I, s:o, s:{s:I, s:I}}", "total_errors", (json_int_t)total, "errors", arr,
			 "dropped", "table_full", (json_int_t)sl_task_bpf_stat(b, SL_SCE_FULL),
			 "exits_seen", (json_int_t)sl_task_bpf_stat(b, SL_SCE_EXITS));
}

void sl_task_bpf_detach(struct sl_task_bpf *b)
{
	if (!b)
		return;
	for (int i = 0; i < b->nlinks; i++)
		bpf_link__destroy(b->links[i]);
	free(b->links);
	b->links = NULL;
	b->nlinks = 0;
	sl_kprof_detach(b->kp);
}

void sl_task_bpf_destroy(struct sl_task_bpf *b)
{
	if (!b)
		return;
	sl_task_bpf_detach(b);
	profile_bpf__destroy(b->prof);
	syscall_errors_bpf__destroy(b->sce);
	sl_kprof_destroy(b->kp);
	free(b);
}
