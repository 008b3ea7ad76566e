/* Prometheus text rendering of a snapshot (exposition format 0.0.4).
 * cAdvisor-compatible container_* families (same names, units and meaning
 * where cAdvisor has them) and sandlens_* families for PSI, epochs and the
 * pod/sandbox sums. Every family: docs/STATS.md "Prometheus". Samples of a
 * figure that is unknown are left out, never written as 0. */
#include "stats/stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Escape a label value (\ " and newline). */
static void put_esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f), fputc(*s, f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

enum vt { V_U64, V_SEC }; /* V_SEC: microseconds printed as seconds */

struct cfam {
	const char *name, *type, *help;
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
/* cAdvisor: 0 = no limit */
G(g_limit, c->st.mem.known & SL_MEM_LIMIT,
  c->st.mem.limit_bytes == SL_CGSTAT_UNLIMITED ? 0 : c->st.mem.limit_bytes)
G(g_oomk, c->st.mem.known & SL_MEM_OOM_KILL, c->st.mem.oom_kill_events)
G(g_oom, c->st.mem.known & SL_MEM_OOM, c->st.mem.oom_events)
G(g_thr, c->st.pids.known & SL_PIDS_CURRENT, c->st.pids.current)
G(g_thrmax, c->st.pids.known & SL_PIDS_MAX,
  c->st.pids.max == SL_CGSTAT_UNLIMITED ? 0 : c->st.pids.max)
#undef G

static const struct cfam cfams[] = {
	{"container_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed in seconds (cpu.stat usage_usec / cpuacct.usage).", V_SEC, g_cpu},
	{"container_cpu_user_seconds_total", "counter", "Cumulative user cpu time consumed in seconds.", V_SEC, g_user},
	{"container_cpu_system_seconds_total", "counter", "Cumulative system cpu time consumed in seconds.", V_SEC, g_sys},
	{"container_cpu_cfs_periods_total", "counter", "Number of elapsed enforcement period intervals.", V_U64, g_per},
	{"container_cpu_cfs_throttled_periods_total", "counter", "Number of throttled period intervals.", V_U64, g_thrp},
	{"container_cpu_cfs_throttled_seconds_total", "counter", "Total time duration the container has been throttled.", V_SEC, g_thrt},
	{"container_memory_usage_bytes", "gauge", "Current memory usage in bytes, including all memory regardless of when it was accessed (memory.current / memory.usage_in_bytes).", V_U64, g_usage},
	{"container_memory_working_set_bytes", "gauge", "Current working set in bytes: usage minus inactive_file (v1 total_inactive_file), floored at 0.", V_U64, g_ws},
	{"container_memory_max_usage_bytes", "gauge", "Maximum memory usage recorded in bytes (memory.peak / memory.max_usage_in_bytes).", V_U64, g_peak},
	{"container_memory_cache", "gauge", "Number of bytes of page cache memory.", V_U64, g_cache},
	{"container_memory_rss", "gauge", "Size of RSS (anonymous memory) in bytes.", V_U64, g_rss},
	{"container_memory_swap", "gauge", "Container swap usage in bytes.", V_U64, g_swap},
	{"container_spec_memory_limit_bytes", "gauge", "Memory limit for the container in bytes (0 = no limit).", V_U64, g_limit},
	{"container_oom_events_total", "counter", "Count of out of memory kills in the container (memory.events oom_kill / memory.oom_control oom_kill).", V_U64, g_oomk},
	{"container_threads", "gauge", "Number of threads running inside the container (pids.current).", V_U64, g_thr},
	{"container_threads_max", "gauge", "Maximum number of threads allowed inside the container (pids.max; 0 = no limit).", V_U64, g_thrmax},
	{"sandlens_container_memory_oom_total", "counter", "Times the container's memory usage hit its limit and reclaim failed (memory.events oom; v2 only).", V_U64, g_oom},
};

static void put_val(FILE *f, enum vt vt, uint64_t v)
{
	if (vt == V_SEC)
		fprintf(f, "%llu.%06llu\n", (unsigned long long)(v / 1000000),
			(unsigned long long)(v % 1000000));
	else
		fprintf(f, "%llu\n", (unsigned long long)v);
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static const char *const psi_res[SL_PSI_NRES] = {"cpu", "memory", "io"};

void sl_stats_prom_put(struct sl_stats_prom *p)
{
	if (!p || atomic_fetch_sub(&p->refs, 1) != 1)
		return;
	free(p->text);
	sl_gz_part_free(&p->gz);
	free(p);
}

int sl_stats_render_prom(struct sl_stats_snap *s, int gz_level)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	/* label sets, rendered once per container */
	char **lab = calloc(s->nctr + 1, sizeof(*lab));
	if (!lab) {
		fclose(f);
		free(buf);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->nctr; i++) {
		size_t ll = 0;
		FILE *lf = open_memstream(&lab[i], &ll);
		if (!lf)
			continue;
		/* cAdvisor's label: id = the cgroup path (it names the container
		 * id too); container_id, pod etc. are in sandlens_container_info */
		fputs("id=\"", lf);
		put_esc(lf, s->ctr[i].path);
		fputc('"', lf);
		fclose(lf);
	}
#define READ_OK(i) (s->ctr[i].read_rc == 0 && lab[i])

	for (size_t k = 0; k < sizeof(cfams) / sizeof(cfams[0]); k++) {
		const struct cfam *fm = &cfams[k];
		head(f, fm->name, fm->type, fm->help);
		for (size_t i = 0; i < s->nctr; i++) {
			uint64_t v;
			if (!READ_OK(i) || !fm->get(&s->ctr[i], &v))
				continue;
			fprintf(f, "%s{%s} ", fm->name, lab[i]);
			put_val(f, fm->vt, v);
		}
	}

	/* per-device I/O (cAdvisor: container_blkio_device_usage_total in bytes,
	 * container_fs_{reads,writes}_total in completed operations) */
	head(f, "container_blkio_device_usage_total", "counter",
	     "Blkio device bytes usage (io.stat rbytes/wbytes; blkio.throttle.io_service_bytes).");
	for (size_t i = 0; i < s->nctr; i++) {
		const struct sl_cgstat_io *io = &s->ctr[i].st.io;
		if (!READ_OK(i) || !(io->known & SL_IO_BYTES))
			continue;
		for (uint32_t d = 0; d < io->ndev; d++) {
			const struct sl_cgstat_iodev *v = &io->dev[d];
			fprintf(f, "container_blkio_device_usage_total{%s,device=\"%u:%u\",major=\"%u\",minor=\"%u\",operation=\"Read\"} %llu\n",
				lab[i], v->major, v->minor, v->major, v->minor, (unsigned long long)v->rbytes);
			fprintf(f, "container_blkio_device_usage_total{%s,device=\"%u:%u\",major=\"%u\",minor=\"%u\",operation=\"Write\"} %llu\n",
				lab[i], v->major, v->minor, v->major, v->minor, (unsigned long long)v->wbytes);
		}
	}
	static const char *const fsn[2] = {"container_fs_reads_total", "container_fs_writes_total"};
	static const char *const fsh[2] = {"Cumulative count of reads completed (io.stat rios; blkio.throttle.io_serviced Read).",
					   "Cumulative count of writes completed (io.stat wios; blkio.throttle.io_serviced Write)."};
	for (int w = 0; w < 2; w++) {
		head(f, fsn[w], "counter", fsh[w]);
		for (size_t i = 0; i < s->nctr; i++) {
			const struct sl_cgstat_io *io = &s->ctr[i].st.io;
			if (!READ_OK(i) || !(io->known & SL_IO_OPS))
				continue;
			for (uint32_t d = 0; d < io->ndev; d++)
				fprintf(f, "%s{%s,device=\"%u:%u\"} %llu\n", fsn[w], lab[i], io->dev[d].major,
					io->dev[d].minor,
					(unsigned long long)(w ? io->dev[d].wios : io->dev[d].rios));
		}
	}

	head(f, "container_start_time_seconds", "gauge",
	     "Start time of the container since unix epoch in seconds (creation of its cgroup: the epoch start).");
	for (size_t i = 0; i < s->nctr; i++)
		if (lab[i])
			fprintf(f, "container_start_time_seconds{%s} %lld.%09lld\n", lab[i],
				(long long)(s->ctr[i].epoch_start_ns / 1000000000),
				(long long)(s->ctr[i].epoch_start_ns % 1000000000));

	/* PSI: cumulative stall time; rate() of it is the share of time stalled */
	head(f, "sandlens_container_pressure_stalled_seconds_total", "counter",
	     "PSI total stall time ({cpu,memory,io}.pressure total) in seconds; kind some = some tasks stalled, full = all non-idle tasks stalled.");
	for (size_t i = 0; i < s->nctr; i++) {
		if (!READ_OK(i))
			continue;
		for (int r = 0; r < SL_PSI_NRES; r++) {
			const struct sl_cgstat_psi *p = &s->ctr[i].st.psi[r];
			if (p->has_some) {
				fprintf(f, "sandlens_container_pressure_stalled_seconds_total{%s,resource=\"%s\",kind=\"some\"} ",
					lab[i], psi_res[r]);
				put_val(f, V_SEC, p->some.total_usec);
			}
			if (p->has_full) {
				fprintf(f, "sandlens_container_pressure_stalled_seconds_total{%s,resource=\"%s\",kind=\"full\"} ",
					lab[i], psi_res[r]);
				put_val(f, V_SEC, p->full.total_usec);
			}
		}
	}

	head(f, "sandlens_container_epoch_start_seconds", "gauge",
	     "Start of the container's current epoch (its cgroup's creation); a new epoch label means cumulative counters restarted.");
	for (size_t i = 0; i < s->nctr; i++)
		if (lab[i])
			fprintf(f, "sandlens_container_epoch_start_seconds{%s,epoch=\"%s\"} %lld\n", lab[i],
				s->ctr[i].epoch_id, (long long)(s->ctr[i].epoch_start_ns / 1000000000));

	head(f, "sandlens_container_info", "gauge",
	     "Identity of each container cgroup (value 1): runtime, pod, QoS, enclosing sandbox, whether it could be read.");
	for (size_t i = 0; i < s->nctr; i++) {
		const struct sl_stats_ctr *c = &s->ctr[i];
		if (!lab[i])
			continue;
		fprintf(f, "sandlens_container_info{%s,container_id=\"", lab[i]);
		put_esc(f, c->id);
		fputs("\",runtime=\"", f);
		put_esc(f, c->runtime);
		fputs("\",pod_uid=\"", f);
		put_esc(f, c->pod_uid);
		fputs("\",qos=\"", f);
		put_esc(f, c->qos);
		fputs("\",sandbox_id=\"", f);
		put_esc(f, c->sandbox_id);
		fprintf(f, "\",read=\"%s\"} 1\n", c->read_rc == 0 ? "true" : "false");
	}

	/* pod and sandbox sums */
	static const struct {
		const char *name, *type, *help;
		enum vt vt;
		uint32_t bit;
		size_t off;
	} wf[] = {
		{"sandlens_workload_cpu_usage_seconds_total", "counter", "Sum over the workload's containers of cpu usage in seconds, within the workload's epoch.", V_SEC, SL_SUM_CPU_USAGE, offsetof(struct sl_stats_sum, cpu_usage_usec)},
		{"sandlens_workload_cpu_user_seconds_total", "counter", "Sum of user cpu time in seconds.", V_SEC, SL_SUM_CPU_USER, offsetof(struct sl_stats_sum, cpu_user_usec)},
		{"sandlens_workload_cpu_system_seconds_total", "counter", "Sum of system cpu time in seconds.", V_SEC, SL_SUM_CPU_SYSTEM, offsetof(struct sl_stats_sum, cpu_system_usec)},
		{"sandlens_workload_memory_usage_bytes", "gauge", "Sum of the containers' memory usage in bytes.", V_U64, SL_SUM_MEM_USAGE, offsetof(struct sl_stats_sum, mem_usage_bytes)},
		{"sandlens_workload_memory_working_set_bytes", "gauge", "Sum of the containers' working sets in bytes.", V_U64, SL_SUM_MEM_WS, offsetof(struct sl_stats_sum, mem_working_set_bytes)},
		{"sandlens_workload_memory_peak_upper_bound_bytes", "gauge", "Sum of the containers' memory peaks: an upper bound on the peak of the sum (exact for one container).", V_U64, SL_SUM_MEM_PEAK, offsetof(struct sl_stats_sum, mem_peak_bytes)},
	};
	for (size_t k = 0; k < sizeof(wf) / sizeof(wf[0]); k++) {
		head(f, wf[k].name, wf[k].type, wf[k].help);
		for (size_t i = 0; i < s->nwl; i++) {
			const struct sl_stats_wl *w = &s->wl[i];
			if (w->kind == SL_WL_CONTAINER || w->state != SL_WLS_READY || !(w->sum.known & wf[k].bit))
				continue;
			fprintf(f, "%s{kind=\"%s\",workload=\"", wf[k].name, sl_wl_kind_name(w->kind));
			put_esc(f, w->id);
			fputs("\"} ", f);
			put_val(f, wf[k].vt, *(const uint64_t *)((const char *)&w->sum + wf[k].off));
		}
	}
	head(f, "sandlens_workload_containers", "gauge",
	     "Containers of each pod/sandbox: state=\"total\" found, state=\"read\" read and summed.");
	for (size_t i = 0; i < s->nwl; i++) {
		const struct sl_stats_wl *w = &s->wl[i];
		if (w->kind == SL_WL_CONTAINER)
			continue;
		for (int st = 0; st < 2; st++) {
			fprintf(f, "sandlens_workload_containers{kind=\"%s\",workload=\"", sl_wl_kind_name(w->kind));
			put_esc(f, w->id);
			fprintf(f, "\",state=\"%s\"} %u\n", st ? "read" : "total", st ? w->sum.nread : w->n);
		}
	}
	head(f, "sandlens_workload_epoch_start_seconds", "gauge",
	     "Start of the pod/sandbox's current epoch: it changes when its set of container cgroups changes.");
	for (size_t i = 0; i < s->nwl; i++) {
		const struct sl_stats_wl *w = &s->wl[i];
		if (w->kind == SL_WL_CONTAINER || !w->n)
			continue;
		fprintf(f, "sandlens_workload_epoch_start_seconds{kind=\"%s\",workload=\"", sl_wl_kind_name(w->kind));
		put_esc(f, w->id);
		fprintf(f, "\",epoch=\"%s\"} %lld\n", w->epoch_id, (long long)(w->epoch_start_ns / 1000000000));
	}

	/* the pass that produced this snapshot */
	head(f, "sandlens_stats_collect_duration_seconds", "gauge",
	     "Duration of the last statistics pass (walk, read, group), excluding rendering.");
	fprintf(f, "sandlens_stats_collect_duration_seconds %.6f\n", (double)s->duration_ns / 1e9);
	head(f, "sandlens_stats_containers", "gauge", "Container cgroups in the last statistics pass.");
	fprintf(f, "sandlens_stats_containers %zu\n", s->nctr);
	head(f, "sandlens_stats_containers_skipped", "gauge",
	     "Containers left out of the last pass because stats.max_containers was reached.");
	fprintf(f, "sandlens_stats_containers_skipped %llu\n", (unsigned long long)s->skipped);
	head(f, "sandlens_stats_last_collect_timestamp_seconds", "gauge", "Wall time of the last statistics pass.");
	fprintf(f, "sandlens_stats_last_collect_timestamp_seconds %lld.%03lld\n",
		(long long)(s->observed_ns / 1000000000), (long long)(s->observed_ns % 1000000000 / 1000000));

	for (size_t i = 0; i < s->nctr; i++)
		free(lab[i]);
	free(lab);
	if (fclose(f) || !buf) {
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
	sl_stats_prom_put(s->prom);
	s->prom = p;
	return 0;
}
