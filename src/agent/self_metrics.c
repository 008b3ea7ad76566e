/* The agent's part of /metrics (docs/API.md "GET /metrics"): its own
 * families through the writer (src/common/prom.h), each module's families
 * with the writer restricted to what the module declared, and the parts
 * other components still render as text (written to the writer's stream).
 * API threads: reads atomics, BPF maps and what init wrote. */
#include "agent/agent.h"
#include "auto/auto.h"
#include "agent/container_events.h"
#include "agent/pressure_rt.h"
#include "common/log.h"
#include "common/prom.h"
#include "common/thread_cpu.h"
#include "export/exporter.h"
#include "stats/stats.h"
#include "store/store.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const struct sl_prom_family dropped_family = {
	"sandlens_events_dropped_total", SL_PROM_COUNTER,
	"Kernel events lost before reaching the store, by reason and type."};

/* Agent process CPU seconds and RSS bytes from /proc/self/stat (fields 14,
 * 15 utime/stime in clock ticks; 24 rss in pages; proc(5)). */
static int self_usage(double *cpu_s, double *rss_bytes)
{
	char buf[2048];
	FILE *f = fopen("/proc/self/stat", "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	unsigned long long ut = 0, st = 0;
	long long rss = 0;
	/* after ")": state(3) ppid ... utime is field 14, stime 15, rss 24 */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %*u %*u %lld",
		   &ut, &st, &rss) != 3)
		return -1;
	long hz = sysconf(_SC_CLK_TCK);
	*cpu_s = (double)(ut + st) / (double)(hz > 0 ? hz : 100);
	*rss_bytes = (double)rss * (double)sysconf(_SC_PAGESIZE);
	return 0;
}

static void u64(struct sl_prom *p, const char *name, int type, const char *help, uint64_t v)
{
	sl_prom_family(p, name, type, help);
	sl_prom_u64(p, name, NULL, v);
}

static void f64(struct sl_prom *p, const char *name, int type, const char *help, double v)
{
	sl_prom_family(p, name, type, help);
	sl_prom_f64(p, name, NULL, v);
}

static int module_running(const struct sl_module *m)
{
	return m->enabled && !m->state;
}

static void per_kind(struct sl_agent *a, struct sl_prom *p, const char *reason, int which)
{
	for (unsigned k = 0; k < a->kinds.n; k++) {
		const struct sl_prom_label l[] = {{"reason", reason}, {"type", a->kinds.e[k].k->name}, {NULL, NULL}};
		const struct sl_kind_counters *c = &a->kc[k];
		sl_prom_u64(p, dropped_family.name, l,
			    atomic_load(which ? &c->dropped_pressure : &c->dropped_store));
	}
}

static void bpf_progs(struct sl_agent *a, struct sl_prom *p, int count)
{
	/* kernel.bpf_stats_enabled=1 makes the kernel fill bpf_prog_info
	 * run_time_ns / run_cnt (include/uapi/linux/bpf.h) */
	const char *name = count ? "sandlens_bpf_prog_run_count_total" : "sandlens_bpf_prog_run_time_seconds_total";
	sl_prom_family(p, name, SL_PROM_COUNTER,
		       count ? "Runs of each BPF program (needs kernel.bpf_stats_enabled=1)."
			     : "Time spent in each BPF program (needs kernel.bpf_stats_enabled=1).");
	for (int i = 0; i < a->nmodules; i++)
		for (int j = 0; j < a->modules[i].nprogs; j++) {
			struct bpf_prog_info info;
			__u32 len = sizeof(info);
			const struct sl_prom_label l[] = {{"module", a->modules[i].ops->name},
							  {"prog", a->modules[i].prog_names[j]},
							  {NULL, NULL}};
			memset(&info, 0, sizeof(info));
			if (bpf_obj_get_info_by_fd(a->modules[i].prog_fds[j], &info, &len))
				continue;
			if (count)
				sl_prom_u64(p, name, l, info.run_cnt);
			else
				sl_prom_f64(p, name, l, (double)info.run_time_ns / 1e9);
		}
}

/* The version reported by sandlens_build_info; the build may set it
 * (-DSL_VERSION="..."). */
#ifndef SL_VERSION
#define SL_VERSION "0.1.0-dev"
#endif

/* sandlens_build_info (value 1): what was built, as Prometheus' own
 * *_build_info: the version, the C compiler, the libbpf it runs with. */
static void build_info(struct sl_prom *p)
{
	char lb[24];
	snprintf(lb, sizeof(lb), "%u.%u", libbpf_major_version(), libbpf_minor_version());
	const struct sl_prom_label l[] = {{"version", SL_VERSION}, {"compiler", __VERSION__}, {"libbpf", lb}, {NULL, NULL}};
	sl_prom_family(p, "sandlens_build_info", SL_PROM_GAUGE,
		       "A metric with a constant '1' value labeled by version, compiler and libbpf version.");
	sl_prom_u64(p, "sandlens_build_info", l, 1);
}

static const char *kind_name(unsigned k, void *ctx)
{
	const struct sl_agent *a = ctx;
	return k < a->kinds.n ? a->kinds.e[k].k->name : "unknown";
}

void sl_agent_write_metrics_to(struct sl_agent *a, struct sl_prom *p)
{
	struct sl_store_stats ss;

	build_info(p);

	sl_prom_family(p, "sandlens_events_total", SL_PROM_COUNTER,
		       "Events delivered by the kernel and stored, by type.");
	for (unsigned k = 0; k < a->kinds.n; k++) {
		const struct sl_prom_label l[] = {{"type", a->kinds.e[k].k->name}, {NULL, NULL}};
		sl_prom_u64(p, "sandlens_events_total", l, atomic_load(&a->kc[k].events));
	}
	sl_cevents_write(a->cevents, p, kind_name, a);

	sl_store_get_stats(a->store, &ss);
	u64(p, "sandlens_store_queue_dropped_total", SL_PROM_COUNTER,
	    "Records dropped because the store queue was full.", ss.dropped_queue_full);
	u64(p, "sandlens_store_rows_written_total", SL_PROM_COUNTER, "Rows committed to the event store.", ss.written);
	u64(p, "sandlens_store_write_errors_total", SL_PROM_COUNTER, "Rows lost to store write errors.",
	    ss.write_errors);
	u64(p, "sandlens_store_queue_depth", SL_PROM_GAUGE, "Records waiting for the store writer.", ss.queue_depth);
	sl_store_write_metrics(a->store, p);
	sl_export_write_metrics(a->export, p);
	sl_auto_write_metrics(a->autotr, p);
	f64(p, "sandlens_api_cpu_seconds_total", SL_PROM_COUNTER,
	    "CPU time of the API threads (not counted in pressure.cpu_budget).",
	    (double)sl_thread_cpu_ns(SL_TCPU_API) / 1e9);
	u64(p, "sandlens_log_suppressed_total", SL_PROM_COUNTER,
	    "Log lines not printed by a rate limiter (repeated failures).", sl_log_suppressed_total());
	u64(p, "sandlens_decode_errors_total", SL_PROM_COUNTER, "Ring buffer records that could not be decoded.",
	    atomic_load(&a->decode_errors));

	sl_prom_family(p, "sandlens_ringbuf_fill_ratio", SL_PROM_GAUGE,
		       "Share of each BPF ring buffer holding unread records.");
	for (int i = 0; i < a->nrb; i++) {
		double f = sl_agent_ringbuf_fill(a->rb_map_fds[i]);
		const struct sl_prom_label l[] = {{"ringbuf", a->rb_names[i]}, {NULL, NULL}};
		if (f >= 0)
			sl_prom_f64(p, "sandlens_ringbuf_fill_ratio", l, f);
	}
	bpf_progs(a, p, 0);
	bpf_progs(a, p, 1);

	/* the shared drop family: the agent's reasons, then each module's
	 * samples with the writer allowing only this family */
	sl_prom_declared(p, &dropped_family);
	per_kind(a, p, "store_queue_full", 0);
	per_kind(a, p, "pressure", 1);
	for (int i = 0; i < a->nmodules; i++) {
		struct sl_module *m = &a->modules[i];
		if (!module_running(m) || !m->ops->write_drops)
			continue;
		sl_prom_restrict(p, &dropped_family, 1);
		sl_prom_declared(p, &dropped_family);
		m->ops->write_drops(m, p);
		sl_prom_unrestrict(p);
	}

	if (a->attr) {
		u64(p, "sandlens_attribution_cache_entries", SL_PROM_GAUGE, "Entries in the cgroup attribution cache.",
		    atomic_load(&a->attr_entries));
		const struct sl_prom_label hit[] = {{"result", "hit"}, {NULL, NULL}};
		const struct sl_prom_label miss[] = {{"result", "miss"}, {NULL, NULL}};
		sl_prom_family(p, "sandlens_attribution_lookups_total", SL_PROM_COUNTER,
			       "Attribution cache lookups by result.");
		sl_prom_u64(p, "sandlens_attribution_lookups_total", hit, atomic_load(&a->attr_hits));
		sl_prom_u64(p, "sandlens_attribution_lookups_total", miss, atomic_load(&a->attr_misses));
		const struct sl_prom_label cap[] = {{"reason", "capacity"}, {NULL, NULL}};
		const struct sl_prom_label rmd[] = {{"reason", "rmdir"}, {NULL, NULL}};
		sl_prom_family(p, "sandlens_attribution_cache_evictions_total", SL_PROM_COUNTER,
			       "Entries evicted (capacity) or dropped on cgroup_rmdir.");
		sl_prom_u64(p, "sandlens_attribution_cache_evictions_total", cap, atomic_load(&a->attr_evictions));
		sl_prom_u64(p, "sandlens_attribution_cache_evictions_total", rmd, atomic_load(&a->attr_rmdir_drops));
	}

	for (int i = 0; i < a->nmodules; i++) {
		struct sl_module *m = &a->modules[i];
		if (!module_running(m) || !m->ops->write_metrics)
			continue;
		sl_prom_restrict(p, m->ops->families, m->ops->nfamilies);
		m->ops->write_metrics(m, p);
		sl_prom_unrestrict(p);
	}

	/* the container_* and sandlens_workload_* families come from the stats
	 * snapshot by reference (sl_agent_stats_prom), not through this copy */
	sl_stats_write_self_metrics(a->stats, p);
	sl_pressure_rt_write_metrics(a->pressure, p);
	sl_agent_flight_write_metrics(a, p);

	double cpu, rss;
	if (!self_usage(&cpu, &rss)) {
		f64(p, "process_cpu_seconds_total", SL_PROM_COUNTER, "Agent user+system CPU time.", cpu);
		f64(p, "process_resident_memory_bytes", SL_PROM_GAUGE, "Agent resident set size.", rss);
	}
}

struct sl_stats_prom *sl_agent_stats_prom(struct sl_agent *a)
{
	return sl_stats_prom_get(a->stats);
}
