/* YAML configuration: libyaml document API, a table of the agent's own
 * keys, and each module's declared section (src/agent/module.h). */
#include "agent/config.h"
#include "agent/module.h"
#include "common/detail.h"
#include "common/dir_trust.h"
#include "common/log.h"
#include "common/units.h"
#include "auto/auto_config.h"

#include <errno.h>
#include <unistd.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <grp.h>
#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

enum kind { K_STR, K_BOOL, K_UINT, K_DURATION, K_BYTES, K_LOGLEVEL, K_DURATION_NS, K_V1_CONTROLLER, K_STRLIST, K_RATIO, K_TICK, K_HEADERS };

/* attribution.v1_controller: the cgroup v1 controllers of the kernel
 * (cgroup_subsys_id, "blkio" being io_cgrp_id), docs/CONFIG.md. A fixed list,
 * not /proc/cgroups, so that --check-config gives the same answer on any host;
 * a controller this kernel lacks is reported by the agent at start. */
static const char *const v1_controllers[] = {
	"memory", "cpu", "cpuacct", "pids", "blkio", "devices", "freezer", "net_cls",
	"perf_event", "hugetlb", "cpuset", "net_prio", "rdma", "misc", NULL,
};

struct key {
	const char *name; /* dotted path */
	enum kind kind;
	size_t off;
	size_t size; /* strings: buffer size */
	uint64_t min, max; /* K_RATIO: in millionths */
};

#define F(f) offsetof(struct sl_config, f), sizeof(((struct sl_config *)0)->f)
static const struct key keys[] = {
	{"log_level", K_LOGLEVEL, F(log_level), 0, 0},
	{"tracefs", K_STR, F(tracefs), 0, 0},
	{"tick_interval", K_TICK, F(tick_ms), 1, 3600},
	{"store.path", K_STR, F(store.path), 0, 0},
	{"store.max_age", K_DURATION, F(store.max_age_s), 0, UINT32_MAX},
	{"store.max_rows", K_UINT, F(store.max_rows), 0, UINT32_MAX},
	{"store.queue_size", K_UINT, F(store.queue_size), 16, 16u << 20},
	{"store.batch_max", K_UINT, F(store.batch_max), 1, 1u << 20},
	{"store.max_bytes", K_BYTES, F(store.max_bytes), 0, 1ull << 50},
	{"api.listen", K_STR, F(api.listen), 0, 0},
	{"api.unix_socket", K_STR, F(api.unix_socket), 0, 0},
	{"api.threads", K_UINT, F(api.threads), 1, 64},
	{"api.token_file", K_STR, F(api.token_file), 0, 0},
	{"api.admin_group", K_STR, F(api.admin_group), 0, 0},
	{"api.header_timeout", K_DURATION, F(api.header_timeout_s), 1, 3600},
	{"api.max_client_connections", K_UINT, F(api.max_client_connections), 1, 1024},
	{"attribution.enabled", K_BOOL, F(attribution.enabled), 0, 0},
	{"attribution.cache_size", K_UINT, F(attribution.cache_size), 16, 1u << 22},
	{"attribution.positive_ttl", K_DURATION, F(attribution.positive_ttl_s), 1, 86400},
	{"attribution.negative_ttl", K_DURATION, F(attribution.negative_ttl_s), 1, 86400},
	{"attribution.v1_controller", K_V1_CONTROLLER, F(attribution.v1_controller), 0, 0},
	{"attribution.runc_root", K_STR, F(attribution.runc_root), 0, 0},
	{"attribution.host_root", K_STR, F(attribution.host_root), 0, 0},
	{"stats.enabled", K_BOOL, F(stats.enabled), 0, 0},
	{"stats.interval", K_DURATION_NS, F(stats.interval_ns), 100000000ull, 3600000000000ull},
	{"stats.max_containers", K_UINT, F(stats.max_containers), 1, 1u << 20},
	{"stats.guest.enabled", K_BOOL, F(stats.guest.enabled), 0, 0},
	{"stats.guest.kata_root", K_STR, F(stats.guest.kata_root), 0, 0},
	{"stats.guest.timeout", K_DURATION_NS, F(stats.guest.timeout_ns), 10000000ull, 30000000000ull},
	{"stats.guest.max_inflight", K_UINT, F(stats.guest.max_inflight), 1, 64},
	{"tasks.enabled", K_BOOL, F(tasks.enabled), 0, 0},
	{"tasks.max_concurrent_tasks", K_UINT, F(tasks.max_concurrent), 1, 64},
	{"tasks.max_duration", K_DURATION, F(tasks.max_duration_s), 1, 86400},
	{"tasks.default_duration", K_DURATION, F(tasks.default_duration_s), 1, 86400},
	{"tasks.deadline_grace", K_DURATION, F(tasks.deadline_grace_s), 1, 3600},
	{"tasks.default_hz", K_UINT, F(tasks.default_hz), 1, 1000000},
	{"tasks.max_hz", K_UINT, F(tasks.max_hz), 1, 1000000},
	{"tasks.off_cpu_min_duration", K_DURATION_NS, F(tasks.off_cpu_min_ns), 0, 60000000000ull},
	{"tasks.stack_entries", K_UINT, F(tasks.stack_entries), 64, 1u << 20},
	{"tasks.count_entries", K_UINT, F(tasks.count_entries), 64, 1u << 22},
	{"tasks.result_retention", K_DURATION, F(tasks.result_retention_s), 0, UINT32_MAX},
	{"tasks.max_results", K_UINT, F(tasks.max_results), 0, 1u << 20},
	{"tasks.store_path", K_STR, F(tasks.store_path), 0, 0},
	{"tasks.debuginfod_urls", K_STR, F(tasks.debuginfod_urls), 0, 0},
	{"tasks.debuginfod_cache", K_STR, F(tasks.debuginfod_cache), 0, 0},
	{"tasks.debuginfod_timeout", K_DURATION, F(tasks.debuginfod_timeout_s), 1, 600},
	{"profiling.continuous.enabled", K_BOOL, F(cprof.enabled), 0, 0},
	{"profiling.continuous.hz", K_UINT, F(cprof.hz), 1, 1000},
	{"profiling.continuous.window", K_DURATION, F(cprof.window_s), 1, 3600},
	{"profiling.continuous.max_age", K_DURATION, F(cprof.max_age_s), 0, UINT32_MAX},
	{"profiling.continuous.max_bytes", K_BYTES, F(cprof.max_bytes), 0, 1ull << 50},
	{"profiling.continuous.stack_entries", K_UINT, F(cprof.stack_entries), 64, 1u << 20},
	{"profiling.continuous.count_entries", K_UINT, F(cprof.count_entries), 64, 1u << 22},
	{"profiling.continuous.store_path", K_STR, F(cprof.store_path), 0, 0},
	{"pressure.enabled", K_BOOL, F(pressure.enabled), 0, 0},
	{"pressure.cpu_budget", K_RATIO, F(pressure.cpu_budget), 1, 64000000},
	{"pressure.memory_budget", K_BYTES, F(pressure.memory_budget), 0, 1ull << 40},
	{"pressure.window", K_DURATION_NS, F(pressure.window_ns), 1000000000ull, 600000000000ull},
	{"pressure.queue_high", K_RATIO, F(pressure.queue_high), 1, 1000000},
	{"pressure.release_ratio", K_RATIO, F(pressure.release_ratio), 1, 999999},
	{"pressure.dwell_up", K_DURATION_NS, F(pressure.dwell_up_ns), 0, 3600000000000ull},
	{"pressure.dwell_down", K_DURATION_NS, F(pressure.dwell_down_ns), 0, 3600000000000ull},
	{"pressure.metrics_slowdown", K_UINT, F(pressure.metrics_slowdown), 2, 60},
	{"pressure.rate_shift", K_UINT, F(pressure.rate_shift), 1, 8},
	{"pressure.cgroup.enabled", K_BOOL, F(pressure.cgroup.enabled), 0, 0},
	{"pressure.cgroup.name", K_STR, F(pressure.cgroup.name), 0, 0},
	{"pressure.cgroup.cpu_limit", K_RATIO, F(pressure.cgroup.cpu_limit), 0, 1024000000},
	{"pressure.cgroup.memory_limit", K_BYTES, F(pressure.cgroup.memory_limit), 0, 1ull << 40},
	{"export.otlp.endpoint", K_STR, F(export_otlp.endpoint), 0, 0},
	{"export.otlp.headers", K_HEADERS, F(export_otlp.headers), 0, 0},
	{"export.otlp.timeout", K_DURATION_NS, F(export_otlp.timeout_ns), 100000000ull, 300000000000ull},
	{"export.otlp.interval", K_DURATION_NS, F(export_otlp.interval_ns), 1000000000ull, 3600000000000ull},
	{"export.otlp.batch_size", K_UINT, F(export_otlp.batch_size), 1, 10000},
	{"export.otlp.queue_size", K_UINT, F(export_otlp.queue_size), 1, 16u << 20},
	{"export.otlp.gzip", K_BOOL, F(export_otlp.gzip), 0, 0},
	{"export.otlp.retry_initial", K_DURATION_NS, F(export_otlp.retry_initial_ns), 10000000ull, 60000000000ull},
	{"export.otlp.retry_max_interval", K_DURATION_NS, F(export_otlp.retry_max_interval_ns), 10000000ull, 600000000000ull},
	{"export.otlp.max_retry_time", K_DURATION_NS, F(export_otlp.max_retry_time_ns), 0, 3600000000000ull},
	{"export.otlp.ca_file", K_STR, F(export_otlp.ca_file), 0, 0},
	{"export.otlp.client_cert", K_STR, F(export_otlp.client_cert), 0, 0},
	{"export.otlp.client_key", K_STR, F(export_otlp.client_key), 0, 0},
	{"export.otlp.persist_cursor", K_BOOL, F(export_otlp.persist_cursor), 0, 0},
	{"flight.enabled", K_BOOL, F(flight.enabled), 0, 0},
	{"flight.window", K_DURATION_NS, F(flight.window_ns), 1000000000ull, 3600000000000ull},
	{"flight.container_max_bytes", K_BYTES, F(flight.container_max_bytes), 4096, 1ull << 30},
	{"flight.max_bytes", K_BYTES, F(flight.max_bytes), 65536, 1ull << 36},
	{"flight.max_containers", K_UINT, F(flight.max_containers), 1, 1u << 20},
	{"flight.post_trigger", K_DURATION_NS, F(flight.post_trigger_ns), 0, 60000000000ull},
	{"flight.freeze_interval", K_DURATION_NS, F(flight.freeze_interval_ns), 0, 86400000000000ull},
	{"flight.max_freezes_per_minute", K_UINT, F(flight.max_freezes_per_minute), 1, 10000},
	{"flight.max_age", K_DURATION, F(flight.max_age_s), 0, UINT32_MAX},
	{"flight.max_recordings", K_UINT, F(flight.max_recordings), 0, 1000000},
	{"flight.store_max_bytes", K_BYTES, F(flight.store_max_bytes), 0, 1ull << 40},
	{"auto.enabled", K_BOOL, F(autotr.enabled), 0, 0},
	{"auto.cooldown", K_DURATION, F(autotr.cooldown_s), 1, 86400 * 7},
	{"auto.profile_duration", K_DURATION, F(autotr.profile_duration_s), 1, 300},
	{"auto.off_cpu", K_BOOL, F(autotr.off_cpu), 0, 0},
	{"auto.max_captures", K_UINT, F(autotr.max_captures), 1, 1000000},
	{"auto.store_path", K_STR, F(autotr.store_path), 0, 0},
	{"auto.baseline_lookback", K_DURATION, F(autotr.baseline_lookback_s), 60, 86400 * 7},
	{"auto.max_processes", K_UINT, F(autotr.max_processes), 1, 4096},
	{"auto.containers", K_STR, F(autotr.containers), 0, 0},
	{"auto.cpu.enabled", K_BOOL, F(autotr.det[0].enabled), 0, 0},
	{"auto.cpu.method", K_STR, F(autotr.det[0].method), 0, 0},
	{"auto.cpu.threshold", K_RATIO, F(autotr.det[0].threshold), 1, 1ull << 50},
	{"auto.cpu.window", K_UINT, F(autotr.det[0].window), 1, 64},
	{"auto.cpu.baseline", K_RATIO, F(autotr.det[0].baseline), 0, 1000000000},
	{"auto.throttle.enabled", K_BOOL, F(autotr.det[1].enabled), 0, 0},
	{"auto.throttle.method", K_STR, F(autotr.det[1].method), 0, 0},
	{"auto.throttle.threshold", K_RATIO, F(autotr.det[1].threshold), 1, 1ull << 50},
	{"auto.throttle.window", K_UINT, F(autotr.det[1].window), 1, 64},
	{"auto.throttle.baseline", K_RATIO, F(autotr.det[1].baseline), 0, 1000000000},
	{"auto.runqueue.enabled", K_BOOL, F(autotr.det[2].enabled), 0, 0},
	{"auto.runqueue.method", K_STR, F(autotr.det[2].method), 0, 0},
	{"auto.runqueue.threshold", K_RATIO, F(autotr.det[2].threshold), 1, 1ull << 50},
	{"auto.runqueue.window", K_UINT, F(autotr.det[2].window), 1, 64},
	{"auto.runqueue.baseline", K_RATIO, F(autotr.det[2].baseline), 0, 1000000000},
	{"auto.runqueue.series", K_STR, F(autotr.det[2].series), 0, 0},
	{"auto.dstate.enabled", K_BOOL, F(autotr.det[3].enabled), 0, 0},
	{"auto.dstate.method", K_STR, F(autotr.det[3].method), 0, 0},
	{"auto.dstate.threshold", K_RATIO, F(autotr.det[3].threshold), 1, 1ull << 50},
	{"auto.dstate.window", K_UINT, F(autotr.det[3].window), 1, 64},
	{"auto.dstate.baseline", K_RATIO, F(autotr.det[3].baseline), 0, 1000000000},
	{"auto.memgrowth.enabled", K_BOOL, F(autotr.det[4].enabled), 0, 0},
	{"auto.memgrowth.method", K_STR, F(autotr.det[4].method), 0, 0},
	{"auto.memgrowth.threshold", K_RATIO, F(autotr.det[4].threshold), 1, 1ull << 50},
	{"auto.memgrowth.window", K_UINT, F(autotr.det[4].window), 1, 64},
	{"auto.memgrowth.baseline", K_RATIO, F(autotr.det[4].baseline), 0, 1000000000},
	{"auto.mempsi.enabled", K_BOOL, F(autotr.det[5].enabled), 0, 0},
	{"auto.mempsi.method", K_STR, F(autotr.det[5].method), 0, 0},
	{"auto.mempsi.threshold", K_RATIO, F(autotr.det[5].threshold), 1, 1ull << 50},
	{"auto.mempsi.window", K_UINT, F(autotr.det[5].window), 1, 64},
	{"auto.mempsi.baseline", K_RATIO, F(autotr.det[5].baseline), 0, 1000000000},
	{"auto.mempsi.trigger", K_STR, F(autotr.det[5].trigger), 0, 0},
	{"auto.cpupsi.enabled", K_BOOL, F(autotr.det[6].enabled), 0, 0},
	{"auto.cpupsi.method", K_STR, F(autotr.det[6].method), 0, 0},
	{"auto.cpupsi.threshold", K_RATIO, F(autotr.det[6].threshold), 1, 1ull << 50},
	{"auto.cpupsi.window", K_UINT, F(autotr.det[6].window), 1, 64},
	{"auto.cpupsi.baseline", K_RATIO, F(autotr.det[6].baseline), 0, 1000000000},
	{"auto.cpupsi.trigger", K_STR, F(autotr.det[6].trigger), 0, 0},
	{"auto.iolat.enabled", K_BOOL, F(autotr.det[7].enabled), 0, 0},
	{"auto.iolat.method", K_STR, F(autotr.det[7].method), 0, 0},
	{"auto.iolat.threshold", K_RATIO, F(autotr.det[7].threshold), 1, 1ull << 50},
	{"auto.iolat.window", K_UINT, F(autotr.det[7].window), 1, 64},
	{"auto.iolat.baseline", K_RATIO, F(autotr.det[7].baseline), 0, 1000000000},
	{"auto.iolat.series", K_STR, F(autotr.det[7].series), 0, 0},
};
#undef F

static void agent_defaults(struct sl_config *c)
{
	memset(c, 0, offsetof(struct sl_config, mod_store)); /* padding too (configs are compared) */
	c->log_level = SL_LOG_INFO;
	snprintf(c->tracefs, sizeof(c->tracefs), "/sys/kernel/tracing");
	c->tick_ms = 1000;
	snprintf(c->store.path, sizeof(c->store.path), "/var/lib/sandlens/events.db");
	c->store.max_age_s = 7 * 86400;
	c->store.max_rows = 1000000;
	c->store.queue_size = 65536;
	c->store.batch_max = 2048;
	c->store.max_bytes = 1ull << 30;
	snprintf(c->api.listen, sizeof(c->api.listen), "127.0.0.1:9753");
	c->api.threads = 2;
	snprintf(c->api.unix_socket, sizeof(c->api.unix_socket), "/run/sandlens/api.sock");
	snprintf(c->api.token_file, sizeof(c->api.token_file), "/run/sandlens/api.token");
	c->api.admin_gid = (gid_t)-1;
	c->api.header_timeout_s = 10;
	c->api.max_client_connections = 16;
	c->attribution.enabled = 1;
	c->attribution.cache_size = 4096;
	c->attribution.positive_ttl_s = 300;
	c->attribution.negative_ttl_s = 30;
	snprintf(c->attribution.v1_controller, sizeof(c->attribution.v1_controller), "memory");
	snprintf(c->attribution.runc_root, sizeof(c->attribution.runc_root), "/run/runc");
	c->stats.enabled = 1;
	c->stats.interval_ns = 5000000000ull;
	c->stats.max_containers = 4096;
	c->stats.guest.enabled = 1;
	snprintf(c->stats.guest.kata_root, sizeof(c->stats.guest.kata_root), "/run/vc");
	c->stats.guest.timeout_ns = 1000000000ull;
	c->stats.guest.max_inflight = 8;
	c->tasks.enabled = 1;
	c->tasks.max_concurrent = 4;
	c->tasks.max_duration_s = 300;
	c->tasks.default_duration_s = 10;
	c->tasks.deadline_grace_s = 10;
	c->tasks.default_hz = 99;
	c->tasks.max_hz = 1000;
	c->tasks.off_cpu_min_ns = 1000;
	c->tasks.stack_entries = 8192;
	c->tasks.count_entries = 16384;
	c->tasks.result_retention_s = 86400;
	c->tasks.max_results = 200;
	c->tasks.debuginfod_timeout_s = 10;
	c->pressure.enabled = 1;
	c->pressure.cpu_budget = 0.10;
	c->pressure.memory_budget = 256ull << 20;
	c->pressure.window_ns = 10000000000ull;
	c->pressure.queue_high = 0.5;
	c->pressure.release_ratio = 0.7;
	c->pressure.dwell_up_ns = 10000000000ull;
	c->pressure.dwell_down_ns = 30000000000ull;
	c->pressure.metrics_slowdown = 4;
	c->pressure.rate_shift = 3;
	snprintf(c->pressure.cgroup.name, sizeof(c->pressure.cgroup.name), "sandlensd");
	c->pressure.cgroup.cpu_limit = 1.0;
	c->pressure.cgroup.memory_limit = 512ull << 20;
	c->cprof.enabled = 1;
	c->cprof.hz = 19;
	c->cprof.window_s = 10;
	c->cprof.max_age_s = 86400;
	c->cprof.max_bytes = 256ull << 20;
	c->cprof.stack_entries = 4096;
	c->cprof.count_entries = 8192;
	c->export_otlp.timeout_ns = 10000000000ull;
	c->export_otlp.interval_ns = 30000000000ull;
	c->export_otlp.batch_size = 512;
	c->export_otlp.queue_size = 16384;
	c->export_otlp.gzip = 1;
	c->export_otlp.retry_initial_ns = 1000000000ull;
	c->export_otlp.retry_max_interval_ns = 30000000000ull;
	c->export_otlp.max_retry_time_ns = 300000000000ull;
	c->export_otlp.persist_cursor = 1;
	c->flight.enabled = 1;
	c->flight.window_ns = 60000000000ull;
	c->flight.container_max_bytes = 1ull << 20;
	c->flight.max_bytes = 64ull << 20;
	c->flight.max_containers = 1024;
	c->flight.post_trigger_ns = 1000000000ull;
	c->flight.freeze_interval_ns = 60000000000ull;
	c->flight.max_freezes_per_minute = 10;
	c->flight.max_age_s = 7 * 86400;
	c->flight.max_recordings = 500;
	c->flight.store_max_bytes = 256ull << 20;
	c->autotr.cooldown_s = 600;
	c->autotr.profile_duration_s = 10;
	c->autotr.off_cpu = 1;
	c->autotr.max_captures = 1000;
	c->autotr.baseline_lookback_s = 3600;
	c->autotr.max_processes = 64;
	c->autotr.det[0].enabled = 1;
	snprintf(c->autotr.det[0].method, sizeof(c->autotr.det[0].method), "mean");
	c->autotr.det[0].threshold = 0.9;
	c->autotr.det[0].window = 5;
	c->autotr.det[0].baseline = 0;
	c->autotr.det[1].enabled = 1;
	snprintf(c->autotr.det[1].method, sizeof(c->autotr.det[1].method), "consecutive");
	c->autotr.det[1].threshold = 0.5;
	c->autotr.det[1].window = 3;
	c->autotr.det[1].baseline = 0;
	c->autotr.det[2].enabled = 1;
	snprintf(c->autotr.det[2].method, sizeof(c->autotr.det[2].method), "ema");
	c->autotr.det[2].threshold = 0.05;
	c->autotr.det[2].window = 5;
	c->autotr.det[2].baseline = 2.0;
	c->autotr.det[3].enabled = 1;
	snprintf(c->autotr.det[3].method, sizeof(c->autotr.det[3].method), "consecutive");
	c->autotr.det[3].threshold = 0.5;
	c->autotr.det[3].window = 3;
	c->autotr.det[3].baseline = 0;
	c->autotr.det[4].enabled = 1;
	snprintf(c->autotr.det[4].method, sizeof(c->autotr.det[4].method), "mean");
	c->autotr.det[4].threshold = 67108864;
	c->autotr.det[4].window = 3;
	c->autotr.det[4].baseline = 0;
	c->autotr.det[5].enabled = 1;
	snprintf(c->autotr.det[5].method, sizeof(c->autotr.det[5].method), "mean");
	c->autotr.det[5].threshold = 0.15;
	c->autotr.det[5].window = 1;
	c->autotr.det[5].baseline = 0;
	c->autotr.det[6].enabled = 1;
	snprintf(c->autotr.det[6].method, sizeof(c->autotr.det[6].method), "mean");
	c->autotr.det[6].threshold = 0.15;
	c->autotr.det[6].window = 1;
	c->autotr.det[6].baseline = 0;
	c->autotr.det[7].enabled = 1;
	snprintf(c->autotr.det[7].method, sizeof(c->autotr.det[7].method), "ema");
	c->autotr.det[7].threshold = 0.1;
	c->autotr.det[7].window = 5;
	c->autotr.det[7].baseline = 2.0;
	snprintf(c->autotr.det[2].series, sizeof(c->autotr.det[2].series), "sched_runqueue_latency_p99_seconds");
	snprintf(c->autotr.det[7].series, sizeof(c->autotr.det[7].series), "io_latency_p99_seconds");
	snprintf(c->autotr.det[5].trigger, sizeof(c->autotr.det[5].trigger), "some 150000 1000000");
	snprintf(c->autotr.det[6].trigger, sizeof(c->autotr.det[6].trigger), "some 150000 1000000");
}

static int parse_u64(const char *s, uint64_t *out, const char **rest)
{
	char *end;
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	*out = v;
	*rest = end;
	return 0;
}

/* "<digits><suffix>" with suffix from a table of (suffix, multiplier). */
struct unit {
	const char *sfx;
	uint64_t mul;
};

#define NUNITS(a) (sizeof(a) / sizeof((a)[0]))

/* v in the key's unit for a range message. */
static const char *fmt_unit(enum kind kind, uint64_t v, char *buf, size_t len)
{
	switch (kind) {
	case K_DURATION_NS: return sl_cfg_fmt_ns(v, buf, len);
	case K_DURATION:
	case K_TICK: return sl_cfg_fmt_s(v, buf, len);
	case K_BYTES: return sl_cfg_fmt_bytes(v, buf, len);
	default: snprintf(buf, len, "%llu", (unsigned long long)v); return buf;
	}
}

static int range_error(const struct key *k, const char *v, char *err, size_t errlen)
{
	char lo[32], hi[32];
	/* a plain number: say what it was read as ("5 (ns)"), the docs' trap */
	const char *unit = !*v || strspn(v, "0123456789") != strlen(v) ? NULL
			   : k->kind == K_DURATION_NS			  ? "ns"
			   : k->kind == K_BYTES				  ? "bytes"
			   : k->kind == K_DURATION || k->kind == K_TICK	  ? "s"
									  : NULL;
	snprintf(err, errlen, "%s: %s%s%s%s out of range [%s, %s]", k->name, v, unit ? " (" : "", unit ? unit : "",
		 unit ? ")" : "", fmt_unit(k->kind, k->min, lo, sizeof(lo)), fmt_unit(k->kind, k->max, hi, sizeof(hi)));
	return -1;
}

/* Parse scalar v of key k into base + k->off. */
static int set_value(void *base, const struct key *k, const char *v, char *err, size_t errlen)
{
	char *dst = (char *)base + k->off;
	uint64_t u = 0;

	switch (k->kind) {
	case K_STRLIST: /* a sequence: set_strlist */
	case K_HEADERS:
		snprintf(err, errlen, "%s: expected a list of strings, e.g. [\"a\", \"b\"] ([] = none)", k->name);
		return -1;
	case K_V1_CONTROLLER:
		for (const char *const *ch = v1_controllers; *ch; ch++)
			if (!strcmp(v, *ch)) {
				memcpy(dst, v, strlen(v) + 1); /* every name fits k->size */
				return 0;
			}
		{
			size_t n = (size_t)snprintf(err, errlen, "%s: '%s' is not a cgroup v1 controller (",
						    k->name, v);
			for (const char *const *ch = v1_controllers; *ch && n < errlen; ch++)
				n += (size_t)snprintf(err + n, errlen - n, "%s%s",
						      ch == v1_controllers ? "" : "|", *ch);
			if (n < errlen)
				snprintf(err + n, errlen - n, ")");
		}
		return -1;
	case K_STR:
		if (strlen(v) >= k->size) {
			snprintf(err, errlen, "%s: value longer than %zu bytes", k->name, k->size - 1);
			return -1;
		}
		memcpy(dst, v, strlen(v) + 1);
		return 0;
	case K_BOOL:
		if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "on"))
			*(int *)dst = 1;
		else if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "off"))
			*(int *)dst = 0;
		else {
			snprintf(err, errlen, "%s: '%s' is not a boolean (true|false)", k->name, v);
			return -1;
		}
		return 0;
	case K_LOGLEVEL: {
		int l = sl_log_level_parse(v);
		if (l < 0) {
			snprintf(err, errlen, "%s: '%s' is not one of error|warn|info|debug", k->name, v);
			return -1;
		}
		*(int *)dst = l;
		return 0;
	}
	case K_UINT:
		if (parse_u64(v, &u, &(const char *){0}) || strspn(v, "0123456789") != strlen(v)) {
			snprintf(err, errlen, "%s: '%s' is not a non-negative integer", k->name, v);
			return -1;
		}
		break;
	case K_DURATION:
	case K_TICK:
		if (sl_parse_duration_s(v, &u)) {
			snprintf(err, errlen, "%s: '%s' is not a duration (e.g. 30s, 5m, 2h, 7d)", k->name, v);
			return -1;
		}
		if (k->kind == K_TICK) { /* kept in ms */
			if (u < k->min || u > k->max)
				return range_error(k, v, err, errlen);
			*(uint64_t *)dst = u * 1000;
			return 0;
		}
		break;
	case K_DURATION_NS:
		if (sl_parse_duration_ns(v, &u)) {
			snprintf(err, errlen, "%s: '%s' is not a duration (e.g. 500us, 1ms, 2s)", k->name, v);
			return -1;
		}
		break;
	case K_RATIO: {
		/* plain decimal only ("0.1", "2", ".5"): no sign, exponent, hex, inf or nan */
		char *end;
		double d;
		size_t digits = strspn(v, "0123456789.");
		errno = 0;
		d = digits == strlen(v) && strchr("0123456789.", *v) ? strtod(v, &end) : 0;
		if (digits != strlen(v) || !*v || errno || *end || strchr(v, '.') != strrchr(v, '.') ||
		    !strcmp(v, ".")) {
			snprintf(err, errlen, "%s: '%s' is not a decimal number (e.g. 0.1)", k->name, v);
			return -1;
		}
		if ((k->min || k->max) && (d * 1e6 < (double)k->min - 0.5 || d * 1e6 > (double)k->max + 0.5)) {
			snprintf(err, errlen, "%s: %s out of range [%g, %g]", k->name, v, (double)k->min / 1e6,
				 (double)k->max / 1e6);
			return -1;
		}
		*(double *)dst = d;
		return 0;
	}
	case K_BYTES:
		if (sl_parse_bytes(v, &u)) {
			snprintf(err, errlen, "%s: '%s' is not a size (e.g. 4MiB, 512KiB)", k->name, v);
			return -1;
		}
		break;
	}
	if ((k->min || k->max) && (u < k->min || u > k->max))
		return range_error(k, v, err, errlen);
	*(uint64_t *)dst = u;
	return 0;
}

/* A YAML null: an explicit !!null tag, or a plain (unquoted) "", "~" or null. */
static int is_null(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE)
		return 0;
	if (n->tag && !strcmp((const char *)n->tag, YAML_NULL_TAG))
		return 1;
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	const char *v = (const char *)n->data.scalar.value;
	return !*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") || !strcmp(v, "NULL");
}

static const char *node_kind(const yaml_node_t *n)
{
	if (!n)
		return "nothing";
	switch (n->type) {
	case YAML_MAPPING_NODE: return "a mapping";
	case YAML_SEQUENCE_NODE: return "a sequence";
	default: return "a scalar";
	}
}

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* A SL_CFG_STRLIST value: a sequence of strings (an empty one = none). */
static int set_strlist(void *base, const struct key *k, yaml_document_t *doc, yaml_node_t *seq,
		       char *err, size_t errlen)
{
	struct sl_cfg_strlist *l = (struct sl_cfg_strlist *)((char *)base + k->off);
	unsigned n = 0;

	for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		yaml_node_t *in = yaml_document_get_node(doc, *it);
		unsigned idx = (unsigned)(it - seq->data.sequence.items.start);
		const char *v;

		if (!in || in->type != YAML_SCALAR_NODE || is_null(in)) {
			snprintf(err, errlen, "%s[%u]: expected a string (got %s)", k->name, idx,
				 in && in->type == YAML_SCALAR_NODE ? "null" : node_kind(in));
			return -1;
		}
		v = (const char *)in->data.scalar.value;
		if (strlen(v) != in->data.scalar.length) {
			snprintf(err, errlen, "%s[%u]: value contains a NUL byte", k->name, idx);
			return -1;
		}
		if (n >= SL_CFG_STRLIST_MAX) {
			snprintf(err, errlen, "%s: more than %d items", k->name, SL_CFG_STRLIST_MAX);
			return -1;
		}
		if (strlen(v) >= SL_CFG_STRLIST_LEN) {
			snprintf(err, errlen, "%s[%u]: longer than %d bytes", k->name, idx, SL_CFG_STRLIST_LEN - 1);
			return -1;
		}
		snprintf(l->v[n++], SL_CFG_STRLIST_LEN, "%s", v);
	}
	l->n = n;
	return 0;
}

/* A K_HEADERS value: a sequence of "Name: value" strings (a token name,
 * a colon; no CR/LF), at most SL_CFG_HEADERS_MAX. */
static int set_headers(void *base, const struct key *k, yaml_document_t *doc, yaml_node_t *seq,
		       char *err, size_t errlen)
{
	struct sl_cfg_headers *h = (struct sl_cfg_headers *)((char *)base + k->off);
	unsigned n = 0;

	for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		yaml_node_t *in = yaml_document_get_node(doc, *it);
		unsigned idx = (unsigned)(it - seq->data.sequence.items.start);
		if (!in || in->type != YAML_SCALAR_NODE || is_null(in)) {
			snprintf(err, errlen, "%s[%u]: expected a string (got %s)", k->name, idx,
				 in && in->type == YAML_SCALAR_NODE ? "null" : node_kind(in));
			return -1;
		}
		const char *v = (const char *)in->data.scalar.value;
		size_t nl = strcspn(v, ":");
		int bad = strlen(v) != in->data.scalar.length || !nl || !v[nl] || strpbrk(v, "\r\n");
		for (size_t i = 0; i < nl && !bad; i++)
			if (!isalnum((unsigned char)v[i]) && !strchr("!#$%&'*+-.^_`|~", v[i]))
				bad = 1;
		if (bad) {
			snprintf(err, errlen, "%s[%u]: '%.64s' is not \"Name: value\" (a header name, a colon, no line breaks)",
				 k->name, idx, v);
			return -1;
		}
		if (n >= SL_CFG_HEADERS_MAX) {
			snprintf(err, errlen, "%s: more than %d items", k->name, SL_CFG_HEADERS_MAX);
			return -1;
		}
		if (strlen(v) >= SL_CFG_HEADER_LEN) {
			snprintf(err, errlen, "%s[%u]: longer than %d bytes", k->name, idx, SL_CFG_HEADER_LEN - 1);
			return -1;
		}
		snprintf(h->v[n++], SL_CFG_HEADER_LEN, "%s", v);
	}
	h->n = n;
	return 0;
}

/* A module key as the loader's key (name = "<module>.<key>" in buf). */
static const int cfg_kind[] = {
	[SL_CFG_BOOL] = K_BOOL,		  [SL_CFG_UINT] = K_UINT, [SL_CFG_BYTES] = K_BYTES,
	[SL_CFG_DURATION_NS] = K_DURATION_NS, [SL_CFG_DURATION_S] = K_DURATION, [SL_CFG_STR] = K_STR,
	[SL_CFG_RATIO] = K_RATIO,	  [SL_CFG_STRLIST] = K_STRLIST,
};

static int module_key(const struct sl_module_ops *ops, const struct sl_cfg_key *mk, struct key *k, char *buf,
		      size_t len)
{
	if (mk->type < 0 || mk->type > SL_CFG_STRLIST)
		return -1;
	snprintf(buf, len, "%s.%s", ops->name, mk->name);
	k->name = buf;
	k->kind = (enum kind)cfg_kind[mk->type];
	k->off = mk->offset;
	k->size = mk->size;
	k->min = mk->min;
	k->max = mk->max;
	return 0;
}

/* The module whose section is name, or -1. */
static int module_index(const struct sl_config *c, const char *name)
{
	for (unsigned i = 0; i < c->nmods; i++)
		if (!strcmp(c->mods[i]->name, name))
			return (int)i;
	return -1;
}

void *sl_config_module(struct sl_config *c, unsigned i)
{
	if (i >= c->nmods || !c->mods[i]->config.size)
		return NULL;
	return c->mod_store[i];
}

void *sl_config_module_by_name(struct sl_config *c, const char *name, int *enabled)
{
	int i = module_index(c, name);
	if (i < 0)
		return NULL;
	if (enabled)
		*enabled = c->mod_enabled[i];
	return sl_config_module(c, (unsigned)i);
}

/* name is a section of the agent's when some key is "<name>.<...>". */
static int is_section(const char *name)
{
	size_t nl = strlen(name);
	for (size_t i = 0; i < NKEYS; i++)
		if (!strncmp(keys[i].name, name, nl) && keys[i].name[nl] == '.')
			return 1;
	return 0;
}

/* Set key k (its value node vn) in base. */
static int set_node(void *base, const struct key *k, yaml_document_t *doc, yaml_node_t *vn, char *err,
		    size_t errlen)
{
	if (k->kind == K_STRLIST && vn && vn->type == YAML_SEQUENCE_NODE)
		return set_strlist(base, k, doc, vn, err, errlen);
	if (k->kind == K_HEADERS && vn && vn->type == YAML_SEQUENCE_NODE)
		return set_headers(base, k, doc, vn, err, errlen);
	if (!vn || vn->type != YAML_SCALAR_NODE) {
		snprintf(err, errlen, "%s: expected a single value (got %s)", k->name, node_kind(vn));
		return -1;
	}
	if (is_null(vn)) {
		snprintf(err, errlen, "%s: no value (empty or null)%s", k->name,
			 k->kind == K_STR ? "; write \"\" for an empty string" : "");
		return -1;
	}
	if (strlen((const char *)vn->data.scalar.value) != vn->data.scalar.length) {
		snprintf(err, errlen, "%s: value contains a NUL byte", k->name);
		return -1;
	}
	return set_value(base, k, (const char *)vn->data.scalar.value, err, errlen);
}

/* Keys must be plain strings without '.' and given once in their mapping;
 * fills name = prefix.key. */
static int key_name(yaml_document_t *doc, yaml_node_t *map, yaml_node_pair_t *p, const char *prefix, char *name,
		    size_t len, char *err, size_t errlen)
{
	yaml_node_t *kn = yaml_document_get_node(doc, p->key);

	if (!kn || kn->type != YAML_SCALAR_NODE) {
		snprintf(err, errlen, "%s: keys must be plain strings", *prefix ? prefix : "(top level)");
		return -1;
	}
	const char *kv = (const char *)kn->data.scalar.value;
	if (strlen(kv) != kn->data.scalar.length) { /* "stall_rate\0x" is not stall_rate */
		char shown[96];
		size_t o = 0;
		for (size_t i = 0; i < kn->data.scalar.length && o + 5 < sizeof(shown); i++)
			o += (size_t)(kv[i] ? snprintf(shown + o, 2, "%c", kv[i]) : snprintf(shown + o, 5, "\\x00"));
		shown[o] = 0;
		snprintf(err, errlen, "%s%s%s: the key contains a NUL byte", prefix, *prefix ? "." : "", shown);
		return -1;
	}
	if (snprintf(name, len, "%s%s%s", prefix, *prefix ? "." : "", kv) >= (int)len) {
		snprintf(err, errlen, "%s: unknown key", name);
		return -1;
	}
	/* "store.path: x" at the top level is not store: {path: x} */
	if (strchr(kv, '.')) {
		snprintf(err, errlen, "%s: unknown key (a key has no '.'; nest it under its section)", name);
		return -1;
	}
	for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
		yaml_node_t *qk = yaml_document_get_node(doc, q->key);
		if (qk && qk->type == YAML_SCALAR_NODE && !strcmp((const char *)qk->data.scalar.value, kv)) {
			snprintf(err, errlen, "%s: given more than once", name);
			return -1;
		}
	}
	return 0;
}

/* A module's section: its declared keys and "enabled". */
static int walk_module(struct sl_config *c, unsigned mi, yaml_document_t *doc, yaml_node_t *map, char *err,
		       size_t errlen)
{
	const struct sl_module_ops *ops = c->mods[mi];
	const char *prefix = ops->name;

	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *vn = yaml_document_get_node(doc, p->value);
		char name[128], kname[128];
		struct key k;
		const struct sl_cfg_key *mk = NULL;

		if (key_name(doc, map, p, prefix, name, sizeof(name), err, errlen))
			return -1;
		const char *leaf = name + strlen(prefix) + 1;
		if (!strcmp(leaf, "enabled")) {
			struct key ek = {name, K_BOOL, 0, sizeof(int), 0, 0};
			if (set_node(&c->mod_enabled[mi], &ek, doc, vn, err, errlen))
				return -1;
			continue;
		}
		for (unsigned i = 0; i < ops->config.nkeys; i++)
			if (!strcmp(ops->config.keys[i].name, leaf))
				mk = &ops->config.keys[i];
		if (!mk || module_key(ops, mk, &k, kname, sizeof(kname))) {
			snprintf(err, errlen, "%s: unknown key", name);
			return -1;
		}
		if (set_node(c->mod_store[mi], &k, doc, vn, err, errlen))
			return -1;
	}
	return 0;
}

static int walk(struct sl_config *c, yaml_document_t *doc, yaml_node_t *map, const char *prefix,
		char *err, size_t errlen)
{
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *vn = yaml_document_get_node(doc, p->value);
		char name[128];
		int mi = -1;

		if (key_name(doc, map, p, prefix, name, sizeof(name), err, errlen))
			return -1;
		if (!*prefix)
			mi = module_index(c, name);
		if (mi >= 0 || is_section(name)) {
			if (vn && vn->type == YAML_MAPPING_NODE) {
				if (mi >= 0 ? walk_module(c, (unsigned)mi, doc, vn, err, errlen)
					    : walk(c, doc, vn, name, err, errlen))
					return -1;
			} else if (!vn || !is_null(vn)) {
				snprintf(err, errlen, "%s: must be a mapping (got %s)", name, node_kind(vn));
				return -1;
			} /* empty or null section (every key commented out): all defaults */
			continue;
		}
		const struct key *k = NULL;
		for (size_t i = 0; i < NKEYS; i++)
			if (!strcmp(keys[i].name, name))
				k = &keys[i];
		if (!k) {
			snprintf(err, errlen, "%s: unknown key", name);
			return -1;
		}
		if (set_node(c, k, doc, vn, err, errlen))
			return -1;
	}
	return 0;
}

/* The modules' cross-key checks, and at least one module enabled. */
static int validate_modules(struct sl_config *c, char *err, size_t errlen)
{
	unsigned on = 0;
	for (unsigned i = 0; i < c->nmods; i++) {
		const struct sl_module_ops *ops = c->mods[i];
		on += c->mod_enabled[i] != 0;
		/* checked whether enabled or not: nothing set is silently ignored */
		if (ops->config.check && ops->config.check(c->mod_store[i], err, errlen))
			return -1;
	}
	if (c->nmods && !on) {
		size_t n = (size_t)snprintf(err, errlen, "modules: every module is disabled (");
		for (unsigned i = 0; i < c->nmods && n < errlen; i++)
			n += (size_t)snprintf(err + n, errlen - n, "%s%s.enabled", i ? ", " : "", c->mods[i]->name);
		if (n < errlen)
			snprintf(err + n, errlen - n, " false): nothing to run");
		return -1;
	}
	return 0;
}

/* Unit formatting: the largest unit dividing v exactly. */
static const char *fmt_units(uint64_t v, const struct unit *u, size_t n, char *buf, size_t len)
{
	size_t best = 0;
	for (size_t i = 0; i < n; i++)
		if (v && v % u[i].mul == 0)
			best = i;
	snprintf(buf, len, "%llu%s", (unsigned long long)(v / u[best].mul), u[best].sfx);
	return buf;
}

const char *sl_cfg_fmt_ns(uint64_t v, char *buf, size_t len)
{
	static const struct unit u[] = {{"ns", 1},	      {"us", 1000},	       {"ms", 1000000},
					{"s", 1000000000ull}, {"m", 60000000000ull}, {"h", 3600000000000ull}};
	return v ? fmt_units(v, u, NUNITS(u), buf, len) : (snprintf(buf, len, "0"), buf);
}

const char *sl_cfg_fmt_s(uint64_t v, char *buf, size_t len)
{
	static const struct unit u[] = {{"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}};
	return fmt_units(v, u, NUNITS(u), buf, len);
}

const char *sl_cfg_fmt_bytes(uint64_t v, char *buf, size_t len)
{
	static const struct unit u[] = {{"B", 1}, {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30}};
	return fmt_units(v, u, NUNITS(u), buf, len);
}

/* A declared default, parsed as the file's value would be. */
static int module_default(void *base, const struct sl_module_ops *ops, const struct sl_cfg_key *mk, char *err,
			  size_t errlen)
{
	char kname[128];
	struct key k;

	if (!mk->name || !mk->def || module_key(ops, mk, &k, kname, sizeof(kname)) ||
	    mk->offset + mk->size > ops->config.size) {
		snprintf(err, errlen, "%s.%s: malformed declaration", ops->name, mk->name ? mk->name : "?");
		return -1;
	}
	if (k.kind == K_STRLIST) {
		struct sl_cfg_strlist *l = (struct sl_cfg_strlist *)((char *)base + k.off);
		if (k.size != sizeof(*l)) {
			snprintf(err, errlen, "%s: SL_CFG_STRLIST field is not a struct sl_cfg_strlist", kname);
			return -1;
		}
		l->n = 0;
		for (const char *p = mk->def; *p;) {
			size_t n = strcspn(p, "\n");
			if (l->n >= SL_CFG_STRLIST_MAX || n >= SL_CFG_STRLIST_LEN) {
				snprintf(err, errlen, "%s: default list too long", kname);
				return -1;
			}
			memcpy(l->v[l->n], p, n);
			l->v[l->n++][n] = 0;
			p += n + (p[n] == '\n');
		}
		return 0;
	}
	return set_value(base, &k, mk->def, err, errlen);
}

void sl_config_defaults_mods(struct sl_config *c, const struct sl_module_ops *const *ops, unsigned n)
{
	char err[256];

	agent_defaults(c);
	if (n > SL_CFG_MODULES_MAX) {
		fprintf(stderr, "sandlensd: %u modules, more than SL_CFG_MODULES_MAX %d\n", n, SL_CFG_MODULES_MAX);
		abort();
	}
	c->nmods = n;
	c->mods = ops;
	memset(c->mod_enabled, 0, sizeof(c->mod_enabled));
	memset(c->mod_store, 0, sizeof(c->mod_store));
	for (unsigned i = 0; i < n; i++) {
		c->mod_enabled[i] = 1;
		if (ops[i]->config.size > SL_CFG_MODULE_MAX) {
			fprintf(stderr, "sandlensd: module %s: config struct of %zu bytes, above SL_CFG_MODULE_MAX\n",
				ops[i]->name, ops[i]->config.size);
			abort();
		}
		for (unsigned k = 0; k < ops[i]->config.nkeys; k++)
			if (module_default(c->mod_store[i], ops[i], &ops[i]->config.keys[k], err, sizeof(err))) {
				fprintf(stderr, "sandlensd: built-in default of %s\n", err);
				abort();
			}
	}
}

static int validate(struct sl_config *c, char *err, size_t errlen)
{
	if (sl_auto_config_check(c, err, errlen))
		return -1;
	if (c->tasks.default_hz > c->tasks.max_hz) {
		snprintf(err, errlen, "tasks.default_hz: %llu exceeds tasks.max_hz %llu",
			 (unsigned long long)c->tasks.default_hz, (unsigned long long)c->tasks.max_hz);
		return -1;
	}
	if (c->tasks.default_duration_s > c->tasks.max_duration_s) {
		snprintf(err, errlen, "tasks.default_duration: %llus exceeds tasks.max_duration %llus",
			 (unsigned long long)c->tasks.default_duration_s,
			 (unsigned long long)c->tasks.max_duration_s);
		return -1;
	}
	if (c->tracefs[0] != '/') {
		snprintf(err, errlen, "tracefs: '%s' is not an absolute path", c->tracefs);
		return -1;
	}
	if (c->attribution.runc_root[0] != '/') {
		snprintf(err, errlen, "attribution.runc_root: '%s' is not an absolute path",
			 c->attribution.runc_root);
		return -1;
	}
	if (c->stats.guest.kata_root[0] != '/') {
		snprintf(err, errlen, "stats.guest.kata_root: '%s' is not an absolute path",
			 c->stats.guest.kata_root);
		return -1;
	}
	if (c->attribution.host_root[0] &&
	    (c->attribution.host_root[0] != '/' ||
	     strlen(c->attribution.host_root) + strlen(c->attribution.runc_root) >= sizeof(c->attribution.runc_root))) {
		snprintf(err, errlen, "attribution.host_root: '%s' is not an absolute path, or with runc_root longer than %zu bytes",
			 c->attribution.host_root, sizeof(c->attribution.runc_root) - 1);
		return -1;
	}
	if (c->store.max_bytes && c->store.max_bytes < (1ull << 20)) {
		snprintf(err, errlen, "store.max_bytes: %llu is below 1MiB (0 = no limit)",
			 (unsigned long long)c->store.max_bytes);
		return -1;
	}
	if (c->cprof.max_bytes && c->cprof.max_bytes < (1ull << 20)) {
		snprintf(err, errlen, "profiling.continuous.max_bytes: %llu is below 1MiB (0 = no limit)",
			 (unsigned long long)c->cprof.max_bytes);
		return -1;
	}
	if (c->flight.container_max_bytes > c->flight.max_bytes) {
		snprintf(err, errlen, "flight.container_max_bytes: %llu exceeds flight.max_bytes %llu",
			 (unsigned long long)c->flight.container_max_bytes, (unsigned long long)c->flight.max_bytes);
		return -1;
	}
	if (!c->store.path[0]) {
		snprintf(err, errlen, "store.path: must not be empty");
		return -1;
	}
	if (!c->api.listen[0] && !c->api.unix_socket[0]) {
		snprintf(err, errlen, "api.listen: empty and api.unix_socket empty: no way to reach the API");
		return -1;
	}
	const char *colon = c->api.listen[0] ? strrchr(c->api.listen, ':') : NULL;
	uint64_t port = 0;
	if (c->api.listen[0] && (!colon || colon == c->api.listen ||
				 parse_u64(colon + 1, &port, &(const char *){0}) ||
				 strspn(colon + 1, "0123456789") != strlen(colon + 1) || port < 1 || port > 65535)) {
		snprintf(err, errlen, "api.listen: '%s' is not host:port with a port in 1..65535", c->api.listen);
		return -1;
	}
	{ /* checked whether enabled or not: nothing set is silently ignored */
		const char *n = c->pressure.cgroup.name;
		int bad = !*n || *n == '/' || n[strlen(n) - 1] == '/' || strstr(n, "//") != NULL;
		for (const char *p = n; *p && !bad; p++)
			if (!isalnum((unsigned char)*p) && !strchr("._-/", *p))
				bad = 1;
		for (const char *p = n; *p && !bad; p += strcspn(p, "/"), p += *p == '/') {
			size_t sl = strcspn(p, "/");
			if ((sl == 1 && p[0] == '.') || (sl == 2 && p[0] == '.' && p[1] == '.'))
				bad = 1;
		}
		if (bad) {
			snprintf(err, errlen,
				 "pressure.cgroup.name: '%s' is not a relative cgroup path (letters, digits, '._-', '/' between components, no '.' or '..')",
				 n);
			return -1;
		}
		if (c->pressure.cgroup.memory_limit && c->pressure.cgroup.memory_limit < (16ull << 20)) {
			snprintf(err, errlen, "pressure.cgroup.memory_limit: %llu bytes is below 16 MiB (0 = no limit)",
				 (unsigned long long)c->pressure.cgroup.memory_limit);
			return -1;
		}
	}
	if (c->export_otlp.endpoint[0] && strncmp(c->export_otlp.endpoint, "http://", 7) &&
	    strncmp(c->export_otlp.endpoint, "https://", 8)) {
		snprintf(err, errlen, "export.otlp.endpoint: '%s' is not an http:// or https:// URL (\"\" = off)",
			 c->export_otlp.endpoint);
		return -1;
	}
	{
		const struct {
			const char *key, *v;
		} tls[] = {{"export.otlp.ca_file", c->export_otlp.ca_file},
			   {"export.otlp.client_cert", c->export_otlp.client_cert},
			   {"export.otlp.client_key", c->export_otlp.client_key}};
		for (size_t i = 0; i < sizeof(tls) / sizeof(tls[0]); i++) {
			if (!tls[i].v[0])
				continue;
			if (tls[i].v[0] != '/') {
				snprintf(err, errlen, "%s: '%s' is not an absolute path", tls[i].key, tls[i].v);
				return -1;
			}
			if (strncmp(c->export_otlp.endpoint, "https://", 8)) {
				snprintf(err, errlen, "%s: set, but export.otlp.endpoint '%s' is not an https:// URL",
					 tls[i].key, c->export_otlp.endpoint);
				return -1;
			}
			/* stat, never open here: a FIFO must not block the check,
			 * and libcurl opens it only when it is a regular file */
			struct stat tst;
			const char *why = NULL;
			if (stat(tls[i].v, &tst) || (!S_ISREG(tst.st_mode) && (errno = EINVAL)) || access(tls[i].v, R_OK))
				why = errno == EINVAL ? "not a regular file" : strerror(errno);
			if (why) {
				snprintf(err, errlen, "%s: '%s': %s", tls[i].key, tls[i].v, why);
				return -1;
			}
		}
		if (!c->export_otlp.client_cert[0] != !c->export_otlp.client_key[0]) {
			snprintf(err, errlen, "%s: set without %s (a client certificate needs its key)",
				 c->export_otlp.client_cert[0] ? "export.otlp.client_cert" : "export.otlp.client_key",
				 c->export_otlp.client_cert[0] ? "export.otlp.client_key" : "export.otlp.client_cert");
			return -1;
		}
	}
	if (c->export_otlp.batch_size > c->export_otlp.queue_size) {
		snprintf(err, errlen, "export.otlp.batch_size: %llu exceeds export.otlp.queue_size %llu",
			 (unsigned long long)c->export_otlp.batch_size, (unsigned long long)c->export_otlp.queue_size);
		return -1;
	}
	if (c->api.unix_socket[0] && c->api.unix_socket[0] != '/') {
		snprintf(err, errlen, "api.unix_socket: '%s' is not an absolute path", c->api.unix_socket);
		return -1;
	}
	if (c->api.token_file[0] && c->api.token_file[0] != '/') {
		snprintf(err, errlen, "api.token_file: '%s' is not an absolute path", c->api.token_file);
		return -1;
	}
	c->api.admin_gid = (gid_t)-1;
	if (c->api.admin_group[0]) {
		struct group gr, *res = NULL;
		char buf[4096];
		if (getgrnam_r(c->api.admin_group, &gr, buf, sizeof(buf), &res) != 0 || !res) {
			snprintf(err, errlen, "api.admin_group: no such group '%s'", c->api.admin_group);
			return -1;
		}
		c->api.admin_gid = res->gr_gid;
	}
	return 0;
}

/* Depth of the deepest mapping/sequence nesting, found with libyaml's event
 * parser and given up as soon as it passes SL_CONFIG_MAX_DEPTH: libyaml's
 * scanner and document loader take time quadratic in the nesting depth
 * (40k nested flow mappings: ~20 s), so the document is only loaded once
 * the depth is known to be small. Each event costs at most O(limit) here.
 * Returns 0 (within the limit or a syntax error, which the loader reports)
 * or -1 with the reason in err. */
static int check_depth(const char *name, const unsigned char *buf, size_t len, char *err,
		       size_t errlen)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	int depth = 0, rc = 0;

	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, buf, len);
	for (;;) {
		if (!yaml_parser_parse(&parser, &ev))
			break; /* the document loader reports it with its line */
		yaml_event_type_t t = ev.type;
		if (t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT) {
			if (++depth > SL_CONFIG_MAX_DEPTH) {
				snprintf(err, errlen,
					 "%s:%zu: nested deeper than %d mappings/sequences (the config's depth limit)",
					 name, ev.start_mark.line + 1, SL_CONFIG_MAX_DEPTH);
				rc = -1;
			}
		} else if (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT) {
			depth--;
		}
		yaml_event_delete(&ev);
		if (rc || t == YAML_STREAM_END_EVENT)
			break;
	}
	yaml_parser_delete(&parser);
	return rc;
}

static int load_buf(struct sl_config *c, const char *name, const char *buf, size_t len, char *err,
		    size_t errlen);

/* Messages quote keys and values from the file: their control characters,
 * C1, bidi and invisible characters and invalid UTF-8 are escaped for the
 * terminal or journal that shows them (sl_term_escape's \xNN, \u{XXXX}),
 * backslashes left as they are (a NUL in a key is already "\x00"). */
static void escape_msg(char *err, size_t errlen)
{
	char *raw = strdup(err);
	if (!raw)
		return;
	size_t o = 0, n = strlen(raw);
	for (size_t i = 0;;) {
		size_t l = strcspn(raw + i, "\\");
		o += sl_term_escape(raw + i, l, err + o, errlen - o);
		if (o + 1 >= errlen) {
			o = errlen - 1;
			break;
		}
		i += l;
		if (i >= n)
			break;
		err[o++] = '\\';
		i++;
	}
	err[o] = 0;
	free(raw);
}

int sl_config_load_buf(struct sl_config *c, const char *name, const char *buf, size_t len,
		       char *err, size_t errlen)
{
	int rc = load_buf(c, name, buf, len, err, errlen);
	if (rc && errlen)
		escape_msg(err, errlen);
	return rc;
}

static int load_buf(struct sl_config *c, const char *name, const char *buf, size_t len, char *err,
		    size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t doc, next;
	const unsigned char *ubuf = (const unsigned char *)buf;
	int rc = -1;

	if (len > SL_CONFIG_MAX_BYTES) {
		snprintf(err, errlen, "%s: larger than %d bytes (the config's size limit)", name,
			 SL_CONFIG_MAX_BYTES);
		return -1;
	}
	if (check_depth(name, ubuf, len, err, errlen))
		return -1;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, ubuf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "%s:%zu: %s", name, parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "YAML syntax error");
		yaml_parser_delete(&parser);
		return -1;
	}
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (root) { /* the stream must end here: a second document is an error */
		if (!yaml_parser_load(&parser, &next)) {
			snprintf(err, errlen, "%s:%zu: %s", name, parser.problem_mark.line + 1,
				 parser.problem ? parser.problem : "YAML syntax error");
			goto out;
		}
		int more = yaml_document_get_root_node(&next) != NULL;
		size_t line = next.start_mark.line + 1;
		yaml_document_delete(&next);
		if (more) {
			snprintf(err, errlen, "%s:%zu: only one YAML document is allowed (a second one starts here)",
				 name, line);
			goto out;
		}
	}
	if (!root || is_null(root)) /* empty file, or only comments: all defaults */
		rc = 0;
	else if (root->type != YAML_MAPPING_NODE)
		snprintf(err, errlen, "%s: top level must be a mapping of keys", name);
	else
		rc = walk(c, &doc, root, "", err, errlen);
	if (rc == 0)
		rc = validate(c, err, errlen);
	if (rc == 0)
		rc = validate_modules(c, err, errlen);
out:
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

int sl_config_load(struct sl_config *c, const char *path, char *err, size_t errlen)
{
	/* Non-blocking and regular files only: the file is read again on
	 * SIGHUP by the poll loop, and a FIFO (or a device) put in its place
	 * must not stop the agent. Symlinks are followed (a ConfigMap mounts
	 * its files through them); their target must be a regular file. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	/* whoever can write the file decides what the (root) agent reads,
	 * loads and runs: the file of root or ours, in a directory as the
	 * stores' (sticky allowed) */
	const char *dwhy = NULL, *risk = "others could replace the file; keep it in a directory only root can write, "
					  "e.g. /etc/sandlens";
	/* through symlinks: the link itself (another user's could be
	 * re-pointed) and the directories of the file it reaches */
	char real[PATH_MAX], fdp[64];
	struct stat lst;
	snprintf(fdp, sizeof(fdp), "/proc/self/fd/%d", fd);
	ssize_t rn = readlink(fdp, real, sizeof(real) - 1);
	real[rn > 0 ? rn : 0] = 0;
	int link_other = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && lst.st_uid != 0 && lst.st_uid != geteuid();
	if (link_other) {
		snprintf(err, errlen, "%s: refusing it: a symbolic link owned by uid %u (it could be re-pointed)", path,
			 (unsigned)lst.st_uid);
		close(fd);
		return -1;
	}
	int via_real = 0; /* dwhy is about the directory of real */
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH)) ||
	    (dwhy = sl_dir_refusal(path, SL_DIR_STICKY_OK, risk)) ||
	    (real[0] == '/' && strcmp(real, path) && (via_real = 1) &&
	     (dwhy = sl_dir_refusal(real, SL_DIR_STICKY_OK, risk)))) {
		if (dwhy && via_real)
			snprintf(err, errlen, "%s: refusing the directory of %s, the file it reaches: it %s", path, real,
				 dwhy);
		else if (dwhy)
			snprintf(err, errlen, "%s: refusing its directory: it %s", path, dwhy);
		else
			snprintf(err, errlen,
				 "%s: refusing it: %s (uid %u, mode %04o): whoever can write it decides what the agent "
				 "does; make it root's and not writable by group or others (chown root; chmod go-w)",
				 path,
				 st.st_uid != 0 && st.st_uid != geteuid() ? "owned by another user"
									  : "writable by group or others",
				 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	if (st.st_size > SL_CONFIG_MAX_BYTES) {
		snprintf(err, errlen, "%s: larger than %d bytes (the config's size limit)", path, SL_CONFIG_MAX_BYTES);
		close(fd);
		return -1;
	}
	/* one byte more than the limit tells "too large" from "exactly the limit" */
	char *buf = malloc(SL_CONFIG_MAX_BYTES + 1);
	if (!buf) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	size_t len = 0;
	int rd_err = 0;
	while (len < SL_CONFIG_MAX_BYTES + 1) {
		ssize_t n = read(fd, buf + len, SL_CONFIG_MAX_BYTES + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rd_err = errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	int rc;
	if (rd_err) {
		snprintf(err, errlen, "%s: %s", path, strerror(rd_err));
		rc = -1;
	} else {
		rc = sl_config_load_buf(c, path, buf, len, err, errlen);
	}
	free(buf);
	return rc;
}

/* One value of kind at a and b equal? Strings to their NUL, string lists
 * item by item, the rest byte for byte. */
static int value_equal(enum kind kind, const void *a, const void *b, size_t size)
{
	if (kind == K_STR || kind == K_V1_CONTROLLER)
		return strncmp(a, b, size) == 0;
	if (kind == K_STRLIST) {
		const struct sl_cfg_strlist *x = a, *y = b;
		if (x->n != y->n)
			return 0;
		for (unsigned i = 0; i < x->n && i < SL_CFG_STRLIST_MAX; i++)
			if (strncmp(x->v[i], y->v[i], SL_CFG_STRLIST_LEN))
				return 0;
		return 1;
	}
	if (kind == K_HEADERS) {
		const struct sl_cfg_headers *x = a, *y = b;
		if (x->n != y->n)
			return 0;
		for (unsigned i = 0; i < x->n && i < SL_CFG_HEADERS_MAX; i++)
			if (strncmp(x->v[i], y->v[i], SL_CFG_HEADER_LEN))
				return 0;
		return 1;
	}
	return memcmp(a, b, size) == 0;
}

int sl_config_duration_key(size_t i, const char **name, const char **plain_unit)
{
	for (size_t k = 0, n = 0; k < NKEYS; k++) {
		int s = keys[k].kind == K_DURATION || keys[k].kind == K_TICK, ns = keys[k].kind == K_DURATION_NS;
		if (!s && !ns)
			continue;
		if (n++ == i) {
			*name = keys[k].name;
			*plain_unit = s ? "s" : "ns";
			return 0;
		}
	}
	return -1;
}

int sl_config_diff(const struct sl_config *a, const struct sl_config *b, sl_config_diff_fn fn, void *arg)
{
	int n = 0;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const struct key *k = &keys[i];
		if (!value_equal(k->kind, (const char *)a + k->off, (const char *)b + k->off, k->size)) {
			n++;
			if (fn)
				fn(arg, k->name, -1, NULL);
		}
	}
	if (a->nmods != b->nmods || a->mods != b->mods)
		return n; /* different module lists: not comparable (a bug) */
	for (unsigned i = 0; i < a->nmods; i++) {
		const struct sl_module_ops *ops = a->mods[i];
		char name[128];
		if (a->mod_enabled[i] != b->mod_enabled[i]) {
			n++;
			snprintf(name, sizeof(name), "%s.enabled", ops->name);
			if (fn)
				fn(arg, name, (int)i, NULL);
		}
		for (unsigned j = 0; j < ops->config.nkeys; j++) {
			const struct sl_cfg_key *mk = &ops->config.keys[j];
			if (mk->type < 0 || mk->type > SL_CFG_STRLIST || mk->offset + mk->size > SL_CFG_MODULE_MAX)
				continue;
			if (value_equal((enum kind)cfg_kind[mk->type], a->mod_store[i] + mk->offset,
					b->mod_store[i] + mk->offset, mk->size))
				continue;
			n++;
			snprintf(name, sizeof(name), "%s.%s", ops->name, mk->name);
			if (fn)
				fn(arg, name, (int)i, mk);
		}
	}
	return n;
}
