/* Prometheus text rendering of a snapshot (exposition format 0.0.4).
 * cAdvisor-compatible container_* families (same names, units and meaning
 * where cAdvisor has them) and sandlens_* families for PSI, epochs and the
 * pod/sandbox sums. Every family: docs/STATS.md "Prometheus". Samples of a
 * figure that is unknown are left out, never written as 0. */
#include "stats/stats.h"

#include "cgroup/attr_labels.h"
#include "common/prom.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum vt { V_U64, V_SEC }; /* V_SEC: microseconds printed as seconds */

struct cfam {
	const char *name;
	int type; /* enum sl_prom_type */
	const char *help;
	enum vt vt;
	int (*get)(const struct sl_stats_ctr *c, uint64_t *v);
};

#define G(fn, cond, expr)                                                   \
	static int fn(const struct sl_stats_ctr *c, uint64_t *v)            \
	{                                                                   \
		if (!(cond))                                                \
			return 0;                                           \
		*v = (expr);                                                \
		return 1;                                                   \
	}
G(g_cpu, c->st.cpu.known & SL_CPU_USAGE, c->st.cpu.usage_usec)
G(g_user, c->st.cpu.known & SL_CPU_USER, c->st.cpu.user_usec)
G(g_sys, c->st.cpu.known & SL_CPU_SYSTEM, c->st.cpu.system_usec)
G(g_per, c->st.cpu.known & SL_CPU_NR_PERIODS, c->st.cpu.nr_periods)
G(g_thrp, c->st.cpu.known & SL_CPU_NR_THROTTLED, c->st.cpu.nr_throttled)
G(g_thrt, c->st.cpu.known & SL_CPU_THROTTLED, c->st.cpu.throttled_usec)
G(g_usage, c->st.mem.known & SL_MEM_USAGE, c->st.mem.usage_bytes)
G(g_ws, c->st.mem.known & SL_MEM_WORKING_SET, c->st.mem.working_set_bytes)
G(g_peak, c->st.mem.known & SL_MEM_PEAK, c->st.mem.peak_bytes)
G(g_cache, c->st.mem.known & SL_MEM_CACHE, c->st.mem.cache_bytes)
G(g_rss, c->st.mem.known & SL_MEM_RSS, c->st.mem.rss_bytes)
G(g_swap, c->st.mem.known & SL_MEM_SWAP, c->st.mem.swap_bytes)
/* cAdvisor's specMemoryValue: a byte limit above 2^62 is "no limit", 0 */
#define SPEC_MEM(v) ((v) > (1ull << 62) ? 0 : (v))
G(g_limit, c->st.mem.known & SL_MEM_LIMIT, SPEC_MEM(c->st.mem.limit_bytes))
G(g_resv, c->st.spec.known & SL_SPEC_MEM_RESERVATION, SPEC_MEM(c->st.spec.mem_reservation_bytes))
G(g_swlim, c->st.spec.known & SL_SPEC_MEM_SWAP_LIMIT, SPEC_MEM(c->st.spec.mem_swap_limit_bytes))
#undef SPEC_MEM
/* cAdvisor writes no quota sample without a quota ("max", -1) */
G(g_quota, (c->st.spec.known & SL_SPEC_CPU_QUOTA) && c->st.spec.cpu_quota_usec != SL_CGSTAT_UNLIMITED,
  c->st.spec.cpu_quota_usec)
G(g_period, c->st.spec.known & SL_SPEC_CPU_PERIOD, c->st.spec.cpu_period_usec)
G(g_shares, c->st.spec.known & SL_SPEC_CPU_SHARES, c->st.spec.cpu_shares)
G(g_oomk, c->st.mem.known & SL_MEM_OOM_KILL, c->st.mem.oom_kill_events)
G(g_oom, c->st.mem.known & SL_MEM_OOM, c->st.mem.oom_events)
G(g_thr, c->st.pids.known & SL_PIDS_CURRENT, c->st.pids.current)
G(g_thrmax, c->st.pids.known & SL_PIDS_MAX,
  c->st.pids.max == SL_CGSTAT_UNLIMITED ? 0 : c->st.pids.max)
#undef G

static const struct cfam cfams[] = {
	{"container_cpu_usage_seconds_total", SL_PROM_COUNTER, "Cumulative cpu time consumed in seconds (cpu.stat usage_usec / cpuacct.usage).", V_SEC, g_cpu},
	{"container_cpu_user_seconds_total", SL_PROM_COUNTER, "Cumulative user cpu time consumed in seconds.", V_SEC, g_user},
	{"container_cpu_system_seconds_total", SL_PROM_COUNTER, "Cumulative system cpu time consumed in seconds.", V_SEC, g_sys},
	{"container_cpu_cfs_periods_total", SL_PROM_COUNTER, "Number of elapsed enforcement period intervals.", V_U64, g_per},
	{"container_cpu_cfs_throttled_periods_total", SL_PROM_COUNTER, "Number of throttled period intervals.", V_U64, g_thrp},
	{"container_cpu_cfs_throttled_seconds_total", SL_PROM_COUNTER, "Total time duration the container has been throttled.", V_SEC, g_thrt},
	{"container_memory_usage_bytes", SL_PROM_GAUGE, "Current memory usage in bytes, including all memory regardless of when it was accessed (memory.current / memory.usage_in_bytes).", V_U64, g_usage},
	{"container_memory_working_set_bytes", SL_PROM_GAUGE, "Current working set in bytes: usage minus inactive_file (v1 total_inactive_file), floored at 0.", V_U64, g_ws},
	{"container_memory_max_usage_bytes", SL_PROM_GAUGE, "Maximum memory usage recorded in bytes (memory.peak / memory.max_usage_in_bytes).", V_U64, g_peak},
	{"container_memory_cache", SL_PROM_GAUGE, "Number of bytes of page cache memory.", V_U64, g_cache},
	{"container_memory_rss", SL_PROM_GAUGE, "Size of RSS (anonymous memory) in bytes.", V_U64, g_rss},
	{"container_memory_swap", SL_PROM_GAUGE, "Container swap usage in bytes.", V_U64, g_swap},
	{"container_spec_cpu_quota", SL_PROM_GAUGE, "CPU quota of the container in microseconds per period (cpu.max / cpu.cfs_quota_us; no sample without a quota).", V_U64, g_quota},
	{"container_spec_cpu_period", SL_PROM_GAUGE, "CPU period of the container in microseconds (cpu.max / cpu.cfs_period_us).", V_U64, g_period},
	{"container_spec_cpu_shares", SL_PROM_GAUGE, "CPU share of the container (cpu.shares; v2: cpu.weight as shares, 2 + (weight-1)*262142/9999).", V_U64, g_shares},
	{"container_spec_memory_limit_bytes", SL_PROM_GAUGE, "Memory limit for the container in bytes (0 = no limit).", V_U64, g_limit},
	{"container_spec_memory_reservation_limit_bytes", SL_PROM_GAUGE, "Memory reservation limit for the container in bytes (memory.min / memory.soft_limit_in_bytes; 0 = none).", V_U64, g_resv},
	{"container_spec_memory_swap_limit_bytes", SL_PROM_GAUGE, "Memory swap limit for the container in bytes (memory.swap.max / memory.memsw.limit_in_bytes; 0 = no limit).", V_U64, g_swlim},
	{"container_oom_events_total", SL_PROM_COUNTER, "Count of out of memory kills in the container (memory.events oom_kill / memory.oom_control oom_kill).", V_U64, g_oomk},
	{"container_threads", SL_PROM_GAUGE, "Number of threads running inside the container (pids.current).", V_U64, g_thr},
	{"container_threads_max", SL_PROM_GAUGE, "Maximum number of threads allowed inside the container (pids.max; 0 = no limit).", V_U64, g_thrmax},
	{"sandlens_container_memory_oom_total", SL_PROM_COUNTER, "Times the container's memory usage hit its limit and reclaim failed (memory.events oom; v2 only).", V_U64, g_oom},
};

/* One sample: V_SEC microseconds written as seconds, exactly. */
static void put_val(struct sl_prom *w, const char *name, const struct sl_prom_label *l, enum vt vt,
		    uint64_t v)
{
	if (vt == V_SEC)
		sl_prom_decimal(w, name, l, v, 6);
	else
		sl_prom_u64(w, name, l, v);
}

/* Wall-clock ns as seconds with digits fractional digits (9: ns, 3: ms);
 * a time before 1970 is left out. */
static void put_wall(struct sl_prom *w, const char *name, const struct sl_prom_label *l, int64_t ns,
		     unsigned digits)
{
	uint64_t div = 1;
	for (unsigned i = digits; i < 9; i++)
		div *= 10;
	if (ns >= 0)
		sl_prom_decimal(w, name, l, (uint64_t)ns / div, digits);
}

static const char *const psi_res[SL_PSI_NRES] = {"cpu", "memory", "io"};

/* A container's attribution as the label helper takes it (the fields the
 * labels use). */
static void ctr_attr(const struct sl_stats_ctr *c, struct sl_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->is_container = SL_YES;
	snprintf(a->container_id, sizeof(a->container_id), "%s", c->id);
	snprintf(a->pod_uid, sizeof(a->pod_uid), "%s", c->pod_uid);
	snprintf(a->runtime, sizeof(a->runtime), "%s", c->runtime);
	a->names = c->names;
}

/* cAdvisor's labels of c (attr_labels.h) into l, then up to 5 extra
 * labels, terminated. The values point into c and *a. */
#define CLAB_MAX (SL_ATTR_LABELS_MAX + 6)
static void clabels(const struct sl_stats_ctr *c, struct sl_attr *a, struct sl_prom_label *l,
		    const struct sl_prom_label *extra)
{
	ctr_attr(c, a);
	size_t n = sl_attr_cadvisor_labels(c->path, a, l);
	for (; extra && extra->name && n < CLAB_MAX - 1; extra++)
		l[n++] = *extra;
	l[n] = (struct sl_prom_label){NULL, NULL};
}

void sl_stats_prom_put(struct sl_stats_prom *p)
{
	if (!p || atomic_fetch_sub(&p->refs, 1) != 1)
		return;
	free(p->text);
	sl_gz_part_free(&p->gz);
	free(p);
}

/* Per-device I/O (cAdvisor: container_blkio_device_usage_total in bytes,
 * container_fs_{reads,writes}_total in completed operations). */
static void put_io(struct sl_prom *w, const struct sl_stats_snap *s)
{
	static const char *const fsn[2] = {"container_fs_reads_total", "container_fs_writes_total"};
	static const char *const fsh[2] = {"Cumulative count of reads completed (io.stat rios; blkio.throttle.io_serviced Read).",
					   "Cumulative count of writes completed (io.stat wios; blkio.throttle.io_serviced Write)."};
	static const char *const opn[2] = {"Read", "Write"};
	const char *bn = "container_blkio_device_usage_total";
	char dev[24], maj[12], min[12];

	sl_prom_family(w, bn, SL_PROM_COUNTER,
		       "Blkio device bytes usage (io.stat rbytes/wbytes; blkio.throttle.io_service_bytes).");
	for (size_t i = 0; i < s->nctr; i++) {
		if (s->ctr[i].overhead) /* a sandbox's overhead cgroup: not a container (put_overhead) */
			continue;
		const struct sl_cgstat_io *io = &s->ctr[i].st.io;
		if (s->ctr[i].read_rc || !(io->known & SL_IO_BYTES))
			continue;
		for (uint32_t d = 0; d < io->ndev; d++) {
			const struct sl_cgstat_iodev *v = &io->dev[d];
			snprintf(dev, sizeof(dev), "%u:%u", v->major, v->minor);
			snprintf(maj, sizeof(maj), "%u", v->major);
			snprintf(min, sizeof(min), "%u", v->minor);
			for (int op = 0; op < 2; op++) {
				const struct sl_prom_label x[] = {{"device", dev}, {"major", maj}, {"minor", min},
								  {"operation", opn[op]}, {NULL, NULL}};
				struct sl_prom_label l[CLAB_MAX];
				struct sl_attr a;
				clabels(&s->ctr[i], &a, l, x);
				sl_prom_u64(w, bn, l, op ? v->wbytes : v->rbytes);
			}
		}
	}
	for (int wr = 0; wr < 2; wr++) {
		sl_prom_family(w, fsn[wr], SL_PROM_COUNTER, fsh[wr]);
		for (size_t i = 0; i < s->nctr; i++) {
			if (s->ctr[i].overhead) /* a sandbox's overhead cgroup: not a container (put_overhead) */
				continue;
			const struct sl_cgstat_io *io = &s->ctr[i].st.io;
			if (s->ctr[i].read_rc || !(io->known & SL_IO_OPS))
				continue;
			for (uint32_t d = 0; d < io->ndev; d++) {
				snprintf(dev, sizeof(dev), "%u:%u", io->dev[d].major, io->dev[d].minor);
				const struct sl_prom_label x[] = {{"device", dev}, {NULL, NULL}};
				struct sl_prom_label l[CLAB_MAX];
				struct sl_attr a;
				clabels(&s->ctr[i], &a, l, x);
				sl_prom_u64(w, fsn[wr], l, wr ? io->dev[d].wios : io->dev[d].rios);
			}
		}
	}
}

/* PSI: cumulative stall time; rate() of it is the share of time stalled. */
static void put_psi(struct sl_prom *w, const struct sl_stats_snap *s)
{
	const char *n = "sandlens_container_pressure_stalled_seconds_total";

	sl_prom_family(w, n, SL_PROM_COUNTER,
		       "PSI total stall time ({cpu,memory,io}.pressure total) in seconds; kind some = some tasks stalled, full = all non-idle tasks stalled.");
	for (size_t i = 0; i < s->nctr; i++) {
		if (s->ctr[i].overhead) /* a sandbox's overhead cgroup: not a container (put_overhead) */
			continue;
		if (s->ctr[i].read_rc)
			continue;
		for (int r = 0; r < SL_PSI_NRES; r++) {
			const struct sl_cgstat_psi *p = &s->ctr[i].st.psi[r];
			struct sl_prom_label l[CLAB_MAX];
			struct sl_attr a;
			struct sl_prom_label x[] = {{"resource", psi_res[r]}, {"kind", "some"}, {NULL, NULL}};
			clabels(&s->ctr[i], &a, l, x);
			if (p->has_some)
				put_val(w, n, l, V_SEC, p->some.total_usec);
			x[1].value = "full";
			clabels(&s->ctr[i], &a, l, x);
			if (p->has_full)
				put_val(w, n, l, V_SEC, p->full.total_usec);
		}
	}
}

/* Every container, read or not: start time, epoch, identity. */
static void put_identity(struct sl_prom *w, const struct sl_stats_snap *s)
{
	sl_prom_family(w, "container_start_time_seconds", SL_PROM_GAUGE,
		       "Start time of the container since unix epoch in seconds (creation of its cgroup: the epoch start).");
	for (size_t i = 0; i < s->nctr; i++) {
		if (s->ctr[i].overhead) /* a sandbox's overhead cgroup: not a container (put_overhead) */
			continue;
		struct sl_prom_label l[CLAB_MAX];
		struct sl_attr a;
		clabels(&s->ctr[i], &a, l, NULL);
		put_wall(w, "container_start_time_seconds", l, s->ctr[i].epoch_start_ns, 9);
	}
	sl_prom_family(w, "container_last_seen", SL_PROM_GAUGE,
		       "Last time a container was seen by the exporter (the statistics pass that found its cgroup), unix seconds.");
	for (size_t i = 0; i < s->nctr; i++) {
		if (s->ctr[i].overhead) /* a sandbox's overhead cgroup: not a container (put_overhead) */
			continue;
		struct sl_prom_label l[CLAB_MAX];
		struct sl_attr a;
		clabels(&s->ctr[i], &a, l, NULL);
		put_wall(w, "container_last_seen", l, s->observed_ns, 3);
	}
}

static void put_epochs_info(struct sl_prom *w, const struct sl_stats_snap *s)
{
	sl_prom_family(w, "sandlens_container_epoch_start_seconds", SL_PROM_GAUGE,
		       "Start of the container's current epoch (its cgroup's creation); a new epoch label means cumulative counters restarted.");
	for (size_t i = 0; i < s->nctr; i++) {
		if (s->ctr[i].overhead) /* a sandbox's overhead cgroup: not a container (put_overhead) */
			continue;
		const struct sl_prom_label l[] = {{"id", s->ctr[i].path}, {"epoch", s->ctr[i].epoch_id}, {NULL, NULL}};
		sl_prom_i64(w, "sandlens_container_epoch_start_seconds", l, s->ctr[i].epoch_start_ns / 1000000000);
	}
	sl_prom_family(w, "sandlens_container_info", SL_PROM_GAUGE,
		       "Identity of each container cgroup (value 1): runtime, pod, QoS, enclosing sandbox, whether it could be read.");
	for (size_t i = 0; i < s->nctr; i++) {
		if (s->ctr[i].overhead) /* a sandbox's overhead cgroup: not a container (put_overhead) */
			continue;
		const struct sl_stats_ctr *c = &s->ctr[i];
		struct sl_attr a;
		struct sl_prom_label l[SL_ATTR_LABELS_MAX + 6];
		ctr_attr(c, &a);
		size_t n = 0;
		l[n++] = (struct sl_prom_label){"id", c->path};
		n += sl_attr_labels(&a, l + n);
		l[n++] = (struct sl_prom_label){"image", c->names.image[0] ? c->names.image : NULL};
		l[n++] = (struct sl_prom_label){"qos", c->qos};
		l[n++] = (struct sl_prom_label){"sandbox_id", c->sandbox_id};
		l[n++] = (struct sl_prom_label){"read", c->read_rc == 0 ? "true" : "false"};
		l[n] = (struct sl_prom_label){NULL, NULL};
		sl_prom_u64(w, "sandlens_container_info", l, 1);
	}
}

/* Sandbox overhead cgroups (kata_overhead/<id>: the shim and the VMM's
 * non-vCPU threads): the host cost of their sandbox, in the sandbox's
 * sums, never a container series. */
static void put_overhead(struct sl_prom *w, const struct sl_stats_snap *s)
{
	sl_prom_family(w, "sandlens_sandbox_overhead_cpu_usage_seconds_total", SL_PROM_COUNTER,
		       "CPU time of a sandbox's overhead cgroup (kata_overhead/<id>: shim, VMM I/O threads), seconds; part of the sandbox's workload sums.");
	for (size_t i = 0; i < s->nctr; i++) {
		const struct sl_stats_ctr *c = &s->ctr[i];
		if (!c->overhead || c->read_rc || !(c->st.cpu.known & SL_CPU_USAGE))
			continue;
		const struct sl_prom_label l[] = {{"sandbox_id", c->id}, {"id", c->path}, {NULL, NULL}};
		put_val(w, "sandlens_sandbox_overhead_cpu_usage_seconds_total", l, V_SEC, c->st.cpu.usage_usec);
	}
	sl_prom_family(w, "sandlens_sandbox_overhead_memory_usage_bytes", SL_PROM_GAUGE,
		       "Memory usage of a sandbox's overhead cgroup, bytes; part of the sandbox's workload sums.");
	for (size_t i = 0; i < s->nctr; i++) {
		const struct sl_stats_ctr *c = &s->ctr[i];
		if (!c->overhead || c->read_rc || !(c->st.mem.known & SL_MEM_USAGE))
			continue;
		const struct sl_prom_label l[] = {{"sandbox_id", c->id}, {"id", c->path}, {NULL, NULL}};
		put_val(w, "sandlens_sandbox_overhead_memory_usage_bytes", l, V_U64, c->st.mem.usage_bytes);
	}
}

/* Pod and sandbox sums. */
static void put_workloads(struct sl_prom *w, const struct sl_stats_snap *s)
{
static const struct {
	const char *name;
	int type;
	const char *help;
	enum vt vt;
	uint32_t bit;
	size_t off;
} wf[] = {
	{"sandlens_workload_cpu_usage_seconds_total", SL_PROM_COUNTER, "Sum over the workload's containers of cpu usage in seconds, within the workload's epoch.", V_SEC, SL_SUM_CPU_USAGE, offsetof(struct sl_stats_sum, cpu_usage_usec)},
	{"sandlens_workload_cpu_user_seconds_total", SL_PROM_COUNTER, "Sum of user cpu time in seconds.", V_SEC, SL_SUM_CPU_USER, offsetof(struct sl_stats_sum, cpu_user_usec)},
	{"sandlens_workload_cpu_system_seconds_total", SL_PROM_COUNTER, "Sum of system cpu time in seconds.", V_SEC, SL_SUM_CPU_SYSTEM, offsetof(struct sl_stats_sum, cpu_system_usec)},
	{"sandlens_workload_memory_usage_bytes", SL_PROM_GAUGE, "Sum of the containers' memory usage in bytes.", V_U64, SL_SUM_MEM_USAGE, offsetof(struct sl_stats_sum, mem_usage_bytes)},
	{"sandlens_workload_memory_working_set_bytes", SL_PROM_GAUGE, "Sum of the containers' working sets in bytes.", V_U64, SL_SUM_MEM_WS, offsetof(struct sl_stats_sum, mem_working_set_bytes)},
	{"sandlens_workload_memory_peak_upper_bound_bytes", SL_PROM_GAUGE, "Sum of the containers' memory peaks: an upper bound on the peak of the sum (exact for one container).", V_U64, SL_SUM_MEM_PEAK, offsetof(struct sl_stats_sum, mem_peak_bytes)},
};
	for (size_t k = 0; k < sizeof(wf) / sizeof(wf[0]); k++) {
		sl_prom_family(w, wf[k].name, wf[k].type, wf[k].help);
		for (size_t i = 0; i < s->nwl; i++) {
			const struct sl_stats_wl *wl = &s->wl[i];
			if (wl->kind == SL_WL_CONTAINER || wl->state != SL_WLS_READY || !(wl->sum.known & wf[k].bit))
				continue;
			const struct sl_prom_label l[] = {{"kind", sl_wl_kind_name(wl->kind)}, {"workload", wl->id}, {NULL, NULL}};
			put_val(w, wf[k].name, l, wf[k].vt, *(const uint64_t *)((const char *)&wl->sum + wf[k].off));
		}
	}
	sl_prom_family(w, "sandlens_workload_containers", SL_PROM_GAUGE,
		       "Containers of each pod/sandbox: state=\"total\" found, state=\"read\" read and summed.");
	for (size_t i = 0; i < s->nwl; i++) {
		const struct sl_stats_wl *wl = &s->wl[i];
		if (wl->kind == SL_WL_CONTAINER)
			continue;
		for (int st = 0; st < 2; st++) {
			const struct sl_prom_label l[] = {{"kind", sl_wl_kind_name(wl->kind)}, {"workload", wl->id},
							  {"state", st ? "read" : "total"}, {NULL, NULL}};
			sl_prom_u64(w, "sandlens_workload_containers", l, st ? wl->sum.nread : wl->n);
		}
	}
	sl_prom_family(w, "sandlens_workload_epoch_start_seconds", SL_PROM_GAUGE,
		       "Start of the pod/sandbox's current epoch: it changes when its set of container cgroups changes.");
	for (size_t i = 0; i < s->nwl; i++) {
		const struct sl_stats_wl *wl = &s->wl[i];
		if (wl->kind == SL_WL_CONTAINER || !wl->n)
			continue;
		const struct sl_prom_label l[] = {{"kind", sl_wl_kind_name(wl->kind)}, {"workload", wl->id},
						  {"epoch", wl->epoch_id}, {NULL, NULL}};
		sl_prom_i64(w, "sandlens_workload_epoch_start_seconds", l, wl->epoch_start_ns / 1000000000);
	}
}

/* The pass that produced this snapshot. */
static void put_pass(struct sl_prom *w, const struct sl_stats_snap *s)
{
	sl_prom_family(w, "sandlens_stats_collect_duration_seconds", SL_PROM_GAUGE,
		       "Duration of the last statistics pass (walk, read, group), excluding rendering.");
	sl_prom_decimal(w, "sandlens_stats_collect_duration_seconds", NULL, (s->duration_ns + 500) / 1000, 6);
	sl_prom_one_u64(w, "sandlens_stats_containers", SL_PROM_GAUGE, "Container cgroups in the last statistics pass.",
			s->nctr);
	sl_prom_one_u64(w, "sandlens_stats_containers_skipped", SL_PROM_GAUGE,
			"Containers left out of the last pass because stats.max_containers was reached.", s->skipped);
	sl_prom_family(w, "sandlens_stats_last_collect_timestamp_seconds", SL_PROM_GAUGE,
		       "Wall time of the last statistics pass.");
	put_wall(w, "sandlens_stats_last_collect_timestamp_seconds", NULL, s->observed_ns, 3);
}

/* cAdvisor's machine_* families. */
static void put_machine(struct sl_prom *w, const struct sl_stats_snap *s)
{
	if (s->machine_cpus)
		sl_prom_one_u64(w, "machine_cpu_cores", SL_PROM_GAUGE, "Number of logical CPU cores (online CPUs).",
				s->machine_cpus);
	if (s->machine_mem_bytes)
		sl_prom_one_u64(w, "machine_memory_bytes", SL_PROM_GAUGE,
				"Amount of memory installed on the machine (MemTotal of /proc/meminfo), bytes.",
				s->machine_mem_bytes);
}

/* Every family of the snapshot, in the order docs/STATS.md lists them.
 * Label values are escaped by the writer (the cgroup path is outside
 * input: a container can name its own cgroups). */
static void render(struct sl_prom *w, const struct sl_stats_snap *s)
{
	for (size_t k = 0; k < sizeof(cfams) / sizeof(cfams[0]); k++) {
		const struct cfam *fm = &cfams[k];
		sl_prom_family(w, fm->name, fm->type, fm->help);
		uint64_t v;
		if (!s->root.read_rc && fm->get(&s->root, &v)) {
			/* cAdvisor's root series: the whole machine */
			const struct sl_prom_label l[] = {{"id", "/"}, {NULL, NULL}};
			put_val(w, fm->name, l, fm->vt, v);
		}
		for (size_t i = 0; i < s->nctr; i++) {
			if (s->ctr[i].overhead) /* a sandbox's overhead cgroup: not a container (put_overhead) */
				continue;
			if (s->ctr[i].read_rc || !fm->get(&s->ctr[i], &v))
				continue;
			/* cAdvisor's labels (attr_labels.h): id = the cgroup
			 * path, name, image, namespace, pod, container */
			struct sl_prom_label l[CLAB_MAX];
			struct sl_attr a;
			clabels(&s->ctr[i], &a, l, NULL);
			put_val(w, fm->name, l, fm->vt, v);
		}
	}
	put_machine(w, s);
	put_io(w, s);
	put_identity(w, s);
	put_psi(w, s);
	put_epochs_info(w, s);
	put_workloads(w, s);
	put_overhead(w, s);
	put_pass(w, s);
}

int sl_stats_render_prom(struct sl_stats_snap *s, int gz_level)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	struct sl_prom *w = sl_prom_new(f);
	if (w)
		render(w, s);
	sl_prom_free(w);
	if (fclose(f) || !buf || !w) {
		free(buf);
		return -ENOMEM;
	}
	struct sl_stats_prom *p = calloc(1, sizeof(*p));
	if (!p) {
		free(buf);
		return -ENOMEM;
	}
	atomic_init(&p->refs, 1);
	p->text = buf;
	p->len = len;
	if (gz_level > 0)
		sl_gz_part_make(buf, len, gz_level, &p->gz); /* failed: gz stays empty */
	/* readers load it with acquire (sl_stats_prom_get renders on demand) */
	sl_stats_prom_put(__atomic_exchange_n(&s->prom, p, __ATOMIC_ACQ_REL));
	return 0;
}
