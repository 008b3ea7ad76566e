/* sched module declarations (src/agent/module.h): config section, the
 * sched_delay kind, Prometheus families and hooks. Pure data plus the
 * config check, so the config loader's fuzz target links it alone. */
#include "modules/sched.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define K(name, type, f, def, min, max, doc)                                                   \
	{                                                                                      \
		name, type, SL_CFG_FIELD(struct sl_sched_cfg, f), def, min, max, doc           \
	}

const struct sl_cfg_key sl_sched_cfg_keys[SL_SCHED_NCFG] = {
	K("watch", SL_CFG_STR, watch, "all", 0, 0,
	  "containers that get sched_delay events: all, none, or comma-separated container-id / pod-uid prefixes"),
	K("delay_threshold", SL_CFG_DURATION_NS, delay_threshold_ns, "1ms", 1000, 60000000000ull,
	  "a runqueue wait at or above this is a sched_delay event"),
	K("delay_rate", SL_CFG_UINT, delay_rate, "10", 0, 1000000, "sched_delay events/s per cgroup; 0 = no limit"),
	K("delay_burst", SL_CFG_UINT, delay_burst, "20", 1, 1000000, "sched_delay bucket size (events)"),
	K("max_cgroups", SL_CFG_UINT, max_cgroups, "1024", 16, 1u << 20, "cgroup keys of the kernel histogram map"),
	K("max_neighbour_pairs", SL_CFG_UINT, max_neighbour_pairs, "4096", 16, 1u << 22,
	  "(victim, neighbour) entries of the kernel pair map"),
	K("max_containers", SL_CFG_UINT, max_containers, "256", 1, 1u << 16, "container series exported"),
	K("ringbuf_size", SL_CFG_BYTES, ringbuf_size, "256KiB", 4096, 1u << 30,
	  "sched ring buffer bytes, a power of two"),
	K("wait_source", SL_CFG_STR, wait_source, "auto", 0, 0,
	  "how a runqueue wait is timed: sched_info (the kernel's own run_delay, read at the task's switch-out, one hook), wakeup (wakeup and "
	  "switch hooks, as runqlat), auto (sched_info where the kernel keeps it)"),
};

int sl_sched_cfg_check(const void *cfg, char *err, size_t errlen)
{
	const struct sl_sched_cfg *c = cfg;

	if (strcmp(c->wait_source, "auto") && strcmp(c->wait_source, "sched_info") &&
	    strcmp(c->wait_source, "wakeup")) {
		snprintf(err, errlen, "sched.wait_source: '%s' is not auto, sched_info or wakeup", c->wait_source);
		return -1;
	}
	if (c->ringbuf_size & (c->ringbuf_size - 1)) {
		snprintf(err, errlen, "sched.ringbuf_size: %llu is not a power of two",
			 (unsigned long long)c->ringbuf_size);
		return -1;
	}
	if (strcmp(c->watch, "all") && strcmp(c->watch, "none")) {
		/* a list: at least one prefix (sl_sched_watch_match skips empty
		 * items), and "all"/"none" only as the whole value */
		int items = 0, bad = 0;
		for (const char *p = c->watch; *p; p++)
			if (!isalnum((unsigned char)*p) && !strchr(",-_.: ", *p))
				bad = 1;
		for (const char *p = c->watch; *p && !bad;) {
			p += strspn(p, ", ");
			size_t n = strcspn(p, ", ");
			if (n && ((n == 3 && !strncmp(p, "all", 3)) || (n == 4 && !strncmp(p, "none", 4))))
				bad = 1;
			items += n > 0;
			p += n;
		}
		if (bad || !items) {
			snprintf(err, errlen,
				 "sched.watch: '%s' is not all, none or a comma-separated list of id prefixes", c->watch);
			return -1;
		}
	}
	return 0;
}

static const struct sl_field delay_fields[] = {
	{"tid", SL_FT_UINT, 0, "thread id of the task that waited"},
	{"wait_ns", SL_FT_UINT, 0, "ns the task waited runnable on the runqueue"},
	{"cpu", SL_FT_UINT, 0, "CPU it then ran on"},
	{"contention", SL_FT_STR, 0, "idle | internal | external | unknown: who held the CPU when the wait ended (unknown: the switch-in was not seen)"},
	{"enqueue", SL_FT_STR, 0, "wakeup | wakeup_new | preempted | unknown"},
	{"truncated_count", SL_FT_UINT, 0, "sched_delay events of the cgroup not delivered since the previous one"},
	{"neighbour", SL_FT_OBJ, 0, "the task that ran before: {pid, tid, comm, cgroup_id, container_id, pod_uid, runtime}"},
};

const struct sl_event_kind sl_sched_kinds[1] = {
	{"sched_delay", SL_SEV_INFO, NULL, delay_fields, sizeof(delay_fields) / sizeof(delay_fields[0]),
	 "wait {wait_ns:dur}{+cpu} cpu {cpu}{/}{?contention} {contention}{/}{?enqueue} ({enqueue}){/}{?neighbour} neighbour {neighbour.pid}({neighbour.comm}){?neighbour.container_id} [{neighbour.container_id:id}]{/}{!neighbour.container_id}{?neighbour.runtime} [{neighbour.runtime}]{/}{/}{/}{?truncated_count} (+{truncated_count} delays suppressed){/}",
	 "a watched task waited on a runqueue at least sched.delay_threshold"},
};

const struct sl_prom_family sl_sched_families[SL_SCHED_NFAMILIES] = {
	{"sandlens_runqueue_latency_seconds", SL_PROM_HISTOGRAM,
	 "Time tasks spent runnable on a runqueue before running (wakeup or preemption to switch-in), per container; "
	 "one runtime=\"host\" series for everything else."},
	{"sandlens_runqueue_wait_seconds_total", SL_PROM_COUNTER,
	 "Runqueue wait by who held the CPU when it ended: internal (same cgroup), external (another cgroup), idle (no "
	 "contention); docs/SCHED.md."},
	{"sandlens_sched_cgroups", SL_PROM_GAUGE, "Cgroup keys in the kernel runqueue histogram map (last tick)."},
	{"sandlens_sched_neighbour_pairs", SL_PROM_GAUGE,
	 "(victim, neighbour) cgroup pairs in the kernel map (last tick)."},
	{"sandlens_sched_waits_not_counted_total", SL_PROM_COUNTER,
	 "Waits missing from a histogram or neighbour table because its kernel map was full."},
	{"sandlens_sched_series_dropped_total", SL_PROM_COUNTER,
	 "Cgroup keys of containers not exported because sched.max_containers was reached."},
	{"sandlens_sched_watch_entries", SL_PROM_GAUGE,
	 "Entries in the kernel map of watched cgroup keys (sched_watch), last tick."},
	{"sandlens_sched_watch_full_total", SL_PROM_COUNTER,
	 "Watched cgroup keys that found the watch map full (no sched_delay events for them)."},
	{"sandlens_sched_delay_seen_total", SL_PROM_COUNTER, "Waits of watched cgroups at or above sched.delay_threshold."},
	{"sandlens_sched_delay_rate_limited_total", SL_PROM_COUNTER,
	 "sched_delay events suppressed by the per-cgroup token bucket; carried as truncated_count."},
	{"sandlens_sched_delay_truncated_total", SL_PROM_COUNTER, "Sum of truncated_count over delivered sched_delay events."},
	{"sandlens_sched_ringbuf_reserve_failures_total", SL_PROM_COUNTER,
	 "sched_delay ring buffer reservations that failed (carried as truncated_count)."},
	{"sandlens_sched_task_storage_switches_total", SL_PROM_COUNTER,
	 "Context switches whose task kept its state in task storage, not in a sched_tasks slot (both slots of its "
	 "pair owned by other live tasks, or slots off): counted the same, at a higher cost; docs/SCHED.md."},
};

const struct sl_hook_decl sl_sched_hooks[SL_SCHED_NHOOKS] = {
	{"tp_btf/sched_wakeup", "runqueue latency: wakeups (sched.wait_source wakeup only)"},
	{"tp_btf/sched_wakeup_new", "runqueue latency: new tasks (sched.wait_source wakeup only)"},
	{"tp_btf/sched_switch", "runqueue latency, contention, neighbours"},
	{"tp_btf/cgroup_rmdir", "removed cgroups leave the kernel maps"},
};
