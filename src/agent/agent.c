/* Agent core: module registry helpers, ring buffer registration, the event
 * pipeline (identity rule, attribution, counting, store), /healthz and the
 * agent-wide part of /metrics. */
#include "agent/agent.h"
#include "agent/pressure.h"
#include "agent/pressure_rt.h"
#include "api/api.h"
#include "common/json.h"
#include "common/log.h"
#include "common/thread_cpu.h"
#include "common/timefmt.h"
#include "cgroup/runc_state.h"
#include "store/store.h"
#include "stats/stats.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>


uint64_t sl_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int sl_agent_add_ringbuf(struct sl_agent *a, const char *name, int map_fd, sl_rb_cb cb, void *ctx)
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

/* --- identity and attribution --- */

uint64_t sl_pipeline_resolve(struct sl_agent *a, const struct sl_task_id *t, struct sl_attr *attr)
{
	uint64_t v1 = a->mounts.v1[0] ? t->cgroup_v1_id : 0;
	int hier = -1;

	memset(attr, 0, sizeof(*attr));
	attr->is_container = SL_UNKNOWN;
	if (a->attr) {
		char path[SL_CGPATH_BYTES], dir[SL_CGPATH_BYTES + 256];
		/* Hybrid rule (docs/ATTRIBUTION.md): a container on either
		 * hierarchy wins, v2 first; else the v2 answer. */
		path[0] = 0;
		sl_attr_cache_resolve(a->attr, t->cgroup_id, v1, sl_mono_ns(), attr, path, sizeof(path), &hier);
		if (attr->is_container != SL_YES && path[0] && strcmp(path, "/") && hier >= 0 &&
		    snprintf(dir, sizeof(dir), "%s%s", hier == SL_CG_V1 ? a->mounts.v1 : a->mounts.v2, path) <
			    (int)sizeof(dir) &&
		    sl_runc_index_lookup(a->runc, dir, attr->container_id, sizeof(attr->container_id))) {
			attr->is_container = SL_YES;
			snprintf(attr->runtime, sizeof(attr->runtime), "runc");
		}
		if (attr->is_container == SL_NO && !attr->runtime[0])
			snprintf(attr->runtime, sizeof(attr->runtime), "host");
		return hier == SL_CG_V1 ? v1 : t->cgroup_id;
	}
	/* Attribution off: report the v2 cgroup, or the v1 one when the task
	 * sits at the v2 root in a non-root v1 cgroup. */
	if ((t->cgroup_id == 0 || t->cgroup_id == a->mounts.v2_root_id) && v1 &&
	    v1 != a->mounts.v1_root_id)
		return v1;
	return t->cgroup_id;
}

static void put_identity(json_t *o, uint64_t cgid, const struct sl_attr *at)
{
	json_object_set_new(o, "cgroup_id", json_integer((json_int_t)cgid));
	json_object_set_new(o, "container_id", json_string(at->container_id));
	json_object_set_new(o, "pod_uid", json_string(at->pod_uid));
	json_object_set_new(o, "runtime", json_string(at->runtime));
}

json_t *sl_pipeline_task_json(struct sl_agent *a, const struct sl_task_id *t)
{
	struct sl_attr at;
	uint64_t cg = sl_pipeline_resolve(a, t, &at);
	json_t *o = json_object();
	char comm[SL_COMM_LEN + 1];

	memcpy(comm, t->comm, SL_COMM_LEN);
	comm[SL_COMM_LEN] = 0;
	json_object_set_new(o, "pid", json_integer(t->pid));
	json_object_set_new(o, "comm", sl_json_str_lossy(comm, strlen(comm)));
	put_identity(o, cg, &at);
	return o;
}

void sl_pipeline_emit(struct sl_agent *a, enum sl_evkind kind, uint64_t ts_mono_ns,
		      const struct sl_task_id *subject, json_t *fields, uint64_t weight)
{
	struct sl_store_event ev;
	struct sl_attr at;
	char tbuf[SL_TIME_RFC3339_MAX], comm[SL_COMM_LEN + 1];
	/* pressure step 4: low-severity events go before any further work */
	if (atomic_load_explicit(&a->pressure_level, memory_order_relaxed) >= 4 &&
	    sl_pressure_low_severity(sl_evkind_names[kind], (long)json_integer_value(json_object_get(fields, "exit_code")),
				     (long)json_integer_value(json_object_get(fields, "signal")))) {
		atomic_fetch_add(&a->dropped_pressure[kind], weight ? weight : 1);
		json_decref(fields);
		return;
	}
	uint64_t cg = sl_pipeline_resolve(a, subject, &at);

	memset(&ev, 0, sizeof(ev));
	ev.time_ns = (int64_t)ts_mono_ns + a->mono_to_real_ns;
	sl_time_format(ev.time_ns, tbuf, sizeof(tbuf));
	memcpy(comm, subject->comm, SL_COMM_LEN);
	comm[SL_COMM_LEN] = 0;

	json_object_set_new(fields, "time", json_string(tbuf));
	json_object_set_new(fields, "type", json_string(sl_evkind_names[kind]));
	json_object_set_new(fields, "pid", json_integer(subject->pid));
	json_object_set_new(fields, "ppid", json_integer(subject->ppid));
	if (!json_object_get(fields, "comm"))
		json_object_set_new(fields, "comm", sl_json_str_lossy(comm, strlen(comm)));
	put_identity(fields, cg, &at);
	json_object_set_new(fields, "qos", json_string(at.qos));

	snprintf(ev.type, sizeof(ev.type), "%s", sl_evkind_names[kind]);
	ev.pid = subject->pid;
	snprintf(ev.container_id, sizeof(ev.container_id), "%s", at.container_id);
	snprintf(ev.pod_uid, sizeof(ev.pod_uid), "%s", at.pod_uid);
	snprintf(ev.runtime, sizeof(ev.runtime), "%s", at.runtime);
	ev.weight = weight;
	ev.json = json_dumps(fields, JSON_COMPACT);
	json_decref(fields);
	atomic_fetch_add(&a->events_total[kind], 1);
	if (!ev.json) {
		atomic_fetch_add(&a->decode_errors, 1);
		return;
	}
	if (sl_store_submit(a->store, &ev) == -EAGAIN)
		atomic_fetch_add(&a->dropped_store[kind], weight ? weight : 1);
}

void sl_pipeline_cgroup_event(struct sl_agent *a, const struct sl_cgroup_event *e)
{
	int hier;
	char path[SL_CGPATH_BYTES + 1];

	if (!a->attr)
		return;
	if (e->hierarchy_id == 0)
		hier = SL_CG_V2;
	else if ((int)e->hierarchy_id == a->mounts.v1_hierarchy_id)
		hier = SL_CG_V1;
	else
		return;
	memcpy(path, e->path, SL_CGPATH_BYTES);
	path[SL_CGPATH_BYTES] = 0;
	if (e->hdr.type == SL_EV_CGROUP_MKDIR)
		sl_attr_cache_on_mkdir(a->attr, hier, e->cgroup_id, path, sl_mono_ns());
	else
		sl_attr_cache_on_rmdir(a->attr, hier, e->cgroup_id, sl_mono_ns());
}

/* --- read side --- */

json_t *sl_agent_health_json(struct sl_agent *a)
{
	json_t *root = json_object(), *mods = json_array();
	int ok = 1;

	for (int i = 0; i < a->nmodules; i++) {
		struct sl_module *m = &a->modules[i];
		json_t *mo = json_object(), *hooks = json_array();
		const char *state = !m->enabled ? "disabled" : m->state ? "failed" : "running";
		int degraded = 0;

		for (int h = 0; h < m->nhooks; h++) {
			json_t *ho = json_object();
			json_object_set_new(ho, "name", json_string(m->hooks[h].name));
			json_object_set_new(ho, "state", json_string(sl_hook_state_name(m->hooks[h].state)));
			if (m->hooks[h].reason[0])
				json_object_set_new(ho, "reason", json_string(m->hooks[h].reason));
			json_array_append_new(hooks, ho);
			if (m->hooks[h].state == SL_HOOK_DEGRADED || m->hooks[h].state == SL_HOOK_FAILED)
				degraded = 1;
		}
		if (m->enabled && !m->state && degraded)
			state = "degraded";
		if (m->enabled && m->state)
			ok = 0;
		json_object_set_new(mo, "name", json_string(m->ops->name));
		json_object_set_new(mo, "state", json_string(state));
		if (m->error[0])
			json_object_set_new(mo, "error", json_string(m->error));
		json_object_set_new(mo, "hooks", hooks);
		json_array_append_new(mods, mo);
	}
	/* The store's own state (ok/degraded/failed, why): a store that cannot
	 * be written makes the agent degraded, not failed (it holds the rows). */
	json_t *store = sl_store_health_json(a->store);
	const char *sst = json_string_value(json_object_get(store, "state"));
	int store_ok = sst && !strcmp(sst, "ok");
	json_object_set_new(root, "status", json_string(!ok ? "failed" : store_ok ? "ok" : "degraded"));
	json_object_set_new(root, "store", store);
	json_object_set_new(root, "uptime_seconds",
			    json_real((double)(sl_mono_ns() - a->start_mono_ns) / 1e9));
	json_object_set_new(root, "attribution", json_boolean(a->attr != NULL));
	json_object_set_new(root, "cgroup_v2_mount", json_string(a->mounts.v2));
	json_object_set_new(root, "cgroup_v1_mount", json_string(a->mounts.v1));
	json_object_set_new(root, "modules", mods);
	json_object_set_new(root, "pressure", sl_pressure_rt_health_json(a->pressure, a->mono_to_real_ns));
	return root;
}

/* Fill of a BPF ring buffer: (producer_pos - consumer_pos) / size, from its
 * read-only mmap'd position pages (see kernel/bpf/ringbuf.c). -1 on error. */
double sl_agent_ringbuf_fill(int map_fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	long pg = sysconf(_SC_PAGESIZE);
	double fill = -1;

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(map_fd, &info, &len) || !info.max_entries)
		return -1;
	void *cons = mmap(NULL, pg, PROT_READ, MAP_SHARED, map_fd, 0);
	if (cons == MAP_FAILED)
		return -1;
	void *prod = mmap(NULL, pg, PROT_READ, MAP_SHARED, map_fd, pg);
	if (prod != MAP_FAILED) {
		uint64_t c = __atomic_load_n((uint64_t *)cons, __ATOMIC_ACQUIRE);
		uint64_t p = __atomic_load_n((uint64_t *)prod, __ATOMIC_ACQUIRE);
		fill = p >= c ? (double)(p - c) / info.max_entries : 0;
		munmap(prod, pg);
	}
	munmap(cons, pg);
	return fill;
}

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

struct sl_stats_prom *sl_agent_stats_prom(struct sl_agent *a)
{
	return sl_stats_prom_get(a->stats);
}

void sl_agent_write_metrics(struct sl_agent *a, FILE *out)
{
	struct sl_store_stats ss;

	fprintf(out, "# HELP sandlens_events_total Events delivered by the kernel and stored, by type.\n"
		     "# TYPE sandlens_events_total counter\n");
	for (int k = 0; k < SL_K_MAX; k++)
		fprintf(out, "sandlens_events_total{type=\"%s\"} %llu\n", sl_evkind_names[k],
			(unsigned long long)atomic_load(&a->events_total[k]));

	sl_store_get_stats(a->store, &ss);
	fprintf(out, "# HELP sandlens_store_queue_dropped_total Records dropped because the store queue was full.\n"
		     "# TYPE sandlens_store_queue_dropped_total counter\n"
		     "sandlens_store_queue_dropped_total %llu\n",
		(unsigned long long)ss.dropped_queue_full);
	fprintf(out, "# HELP sandlens_store_rows_written_total Rows committed to the event store.\n"
		     "# TYPE sandlens_store_rows_written_total counter\n"
		     "sandlens_store_rows_written_total %llu\n",
		(unsigned long long)ss.written);
	fprintf(out, "# HELP sandlens_store_write_errors_total Rows lost to store write errors.\n"
		     "# TYPE sandlens_store_write_errors_total counter\n"
		     "sandlens_store_write_errors_total %llu\n",
		(unsigned long long)ss.write_errors);
	fprintf(out, "# HELP sandlens_store_queue_depth Records waiting for the store writer.\n"
		     "# TYPE sandlens_store_queue_depth gauge\n"
		     "sandlens_store_queue_depth %llu\n",
		(unsigned long long)ss.queue_depth);
	sl_store_write_metrics(a->store, out);
	fprintf(out, "# HELP sandlens_api_cpu_seconds_total CPU time of the API threads (not counted in pressure.cpu_budget).\n"
		     "# TYPE sandlens_api_cpu_seconds_total counter\n"
		     "sandlens_api_cpu_seconds_total %.3f\n",
		(double)sl_thread_cpu_ns(SL_TCPU_API) / 1e9);
	fprintf(out, "# HELP sandlens_log_suppressed_total Log lines not printed by a rate limiter (repeated failures).\n"
		     "# TYPE sandlens_log_suppressed_total counter\n"
		     "sandlens_log_suppressed_total %llu\n",
		(unsigned long long)sl_log_suppressed_total());
	sl_api_write_metrics(out);
	fprintf(out, "# HELP sandlens_decode_errors_total Ring buffer records that could not be decoded.\n"
		     "# TYPE sandlens_decode_errors_total counter\n"
		     "sandlens_decode_errors_total %llu\n",
		(unsigned long long)atomic_load(&a->decode_errors));

	fprintf(out, "# HELP sandlens_ringbuf_fill_ratio Share of each BPF ring buffer holding unread records.\n"
		     "# TYPE sandlens_ringbuf_fill_ratio gauge\n");
	for (int i = 0; i < a->nrb; i++) {
		double f = sl_agent_ringbuf_fill(a->rb_map_fds[i]);
		if (f >= 0)
			fprintf(out, "sandlens_ringbuf_fill_ratio{ringbuf=\"%s\"} %.6f\n", a->rb_names[i], f);
	}

	/* BPF run time / count: kernel.bpf_stats_enabled=1 makes the kernel fill
	 * bpf_prog_info.run_time_ns / run_cnt (include/uapi/linux/bpf.h). */
	fprintf(out, "# HELP sandlens_bpf_prog_run_time_seconds_total Time spent in each BPF program (needs kernel.bpf_stats_enabled=1).\n"
		     "# TYPE sandlens_bpf_prog_run_time_seconds_total counter\n");
	for (int i = 0; i < a->nmodules; i++)
		for (int p = 0; p < a->modules[i].nprogs; p++) {
			struct bpf_prog_info info;
			__u32 len = sizeof(info);
			memset(&info, 0, sizeof(info));
			if (!bpf_obj_get_info_by_fd(a->modules[i].prog_fds[p], &info, &len))
				fprintf(out, "sandlens_bpf_prog_run_time_seconds_total{module=\"%s\",prog=\"%s\"} %.9f\n",
					a->modules[i].ops->name, a->modules[i].prog_names[p],
					(double)info.run_time_ns / 1e9);
		}
	fprintf(out, "# HELP sandlens_bpf_prog_run_count_total Runs of each BPF program (needs kernel.bpf_stats_enabled=1).\n"
		     "# TYPE sandlens_bpf_prog_run_count_total counter\n");
	for (int i = 0; i < a->nmodules; i++)
		for (int p = 0; p < a->modules[i].nprogs; p++) {
			struct bpf_prog_info info;
			__u32 len = sizeof(info);
			memset(&info, 0, sizeof(info));
			if (!bpf_obj_get_info_by_fd(a->modules[i].prog_fds[p], &info, &len))
				fprintf(out, "sandlens_bpf_prog_run_count_total{module=\"%s\",prog=\"%s\"} %llu\n",
					a->modules[i].ops->name, a->modules[i].prog_names[p],
					(unsigned long long)info.run_cnt);
		}

	fprintf(out, "# HELP sandlens_events_dropped_total Kernel events lost before reaching the store, by reason and type.\n"
		     "# TYPE sandlens_events_dropped_total counter\n");
	for (int k = 0; k < SL_K_MAX; k++)
		fprintf(out, "sandlens_events_dropped_total{reason=\"store_queue_full\",type=\"%s\"} %llu\n",
			sl_evkind_names[k], (unsigned long long)atomic_load(&a->dropped_store[k]));
	for (int k = 0; k < SL_K_MAX; k++)
		fprintf(out, "sandlens_events_dropped_total{reason=\"pressure\",type=\"%s\"} %llu\n",
			sl_evkind_names[k], (unsigned long long)atomic_load(&a->dropped_pressure[k]));
	for (int i = 0; i < a->nmodules; i++) {
		struct sl_module *m = &a->modules[i];
		if (m->enabled && !m->state && m->ops->write_drops)
			m->ops->write_drops(m, out);
	}

	if (a->attr)
		fprintf(out, "# HELP sandlens_attribution_cache_entries Entries in the cgroup attribution cache.\n"
			     "# TYPE sandlens_attribution_cache_entries gauge\n"
			     "sandlens_attribution_cache_entries %llu\n"
			     "# HELP sandlens_attribution_lookups_total Attribution cache lookups by result.\n"
			     "# TYPE sandlens_attribution_lookups_total counter\n"
			     "sandlens_attribution_lookups_total{result=\"hit\"} %llu\n"
			     "sandlens_attribution_lookups_total{result=\"miss\"} %llu\n"
			     "# HELP sandlens_attribution_cache_evictions_total Entries evicted (capacity) or dropped on cgroup_rmdir.\n"
			     "# TYPE sandlens_attribution_cache_evictions_total counter\n"
			     "sandlens_attribution_cache_evictions_total{reason=\"capacity\"} %llu\n"
			     "sandlens_attribution_cache_evictions_total{reason=\"rmdir\"} %llu\n",
			(unsigned long long)atomic_load(&a->attr_entries),
			(unsigned long long)atomic_load(&a->attr_hits),
			(unsigned long long)atomic_load(&a->attr_misses),
			(unsigned long long)atomic_load(&a->attr_evictions),
			(unsigned long long)atomic_load(&a->attr_rmdir_drops));

	for (int i = 0; i < a->nmodules; i++) {
		struct sl_module *m = &a->modules[i];
		if (m->enabled && !m->state && m->ops->write_metrics)
			m->ops->write_metrics(m, out);
	}

	/* the container_* and sandlens_workload_* families come from the stats
	 * snapshot by reference (sl_agent_stats_prom), not through this copy */
	sl_stats_write_self_metrics(a->stats, out);
	sl_pressure_rt_write_metrics(a->pressure, out);

	double cpu, rss;
	if (!self_usage(&cpu, &rss))
		fprintf(out, "# HELP process_cpu_seconds_total Agent user+system CPU time.\n"
			     "# TYPE process_cpu_seconds_total counter\n"
			     "process_cpu_seconds_total %.2f\n"
			     "# HELP process_resident_memory_bytes Agent resident set size.\n"
			     "# TYPE process_resident_memory_bytes gauge\n"
			     "process_resident_memory_bytes %.0f\n",
			cpu, rss);
}
