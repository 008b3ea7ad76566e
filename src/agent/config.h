/* sandlensd configuration (YAML). Every key, its default and its unit are
 * documented in docs/CONFIG.md; sl_config_defaults() is the source of truth
 * for the defaults and docs/CONFIG.md must match it. */
#ifndef SANDLENS_AGENT_CONFIG_H
#define SANDLENS_AGENT_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* proc.redact_args: at most this many patterns of at most SL_REDACT_LEN - 1
 * bytes each. */
#define SL_REDACT_MAX 32
#define SL_REDACT_LEN 64

struct sl_config {
	int log_level; /* enum sl_log_level; key log_level: error|warn|info|debug */
	char tracefs[256];       /* key tracefs: default "/sys/kernel/tracing"; absolute */
	uint64_t tick_ms;        /* key tick_interval: periodic work, default 1000 ms */

	struct {
		char path[512];          /* store.path: default /var/lib/sandlens/events.db */
		uint64_t max_age_s;      /* store.max_age: default 7d */
		uint64_t max_rows;       /* store.max_rows: default 1000000 */
		uint64_t queue_size;     /* store.queue_size: default 65536 */
		uint64_t batch_max;      /* store.batch_max: default 2048 */
		uint64_t max_bytes;      /* store.max_bytes: default 1 GiB, 0 = no limit */
	} store;

	struct {
		char listen[128];        /* api.listen: "127.0.0.1:9753"; "" = no TCP */
		char unix_socket[256];   /* api.unix_socket: default /run/sandlens/api.sock; "" = none; mode 0600 (0660 with admin_group) */
		uint64_t threads;        /* api.threads: default 2 */
		char token_file[256];    /* api.token_file: default /run/sandlens/api.token (generated when missing); "" = no token */
		char admin_group[64];    /* api.admin_group: "" = none; else a group whose members are admins over the socket */
		gid_t admin_gid;         /* (derived) admin_group's gid, (gid_t)-1 when none */
		uint64_t header_timeout_s; /* api.header_timeout: request headers must be complete within this; default 10s */
		uint64_t max_client_connections; /* api.max_client_connections: per peer uid (or address), root exempt; default 16 */
	} api;

	struct {
		int enabled;             /* attribution.enabled: default true */
		uint64_t cache_size;     /* attribution.cache_size: default 4096 */
		uint64_t positive_ttl_s; /* attribution.positive_ttl: default 5m */
		uint64_t negative_ttl_s; /* attribution.negative_ttl: default 30s */
		char v1_controller[32];  /* attribution.v1_controller: default "memory"; a v1 controller name */
		char runc_root[256];     /* attribution.runc_root: plain runc state root, default "/run/runc"; absolute */
	} attribution;

	struct {
		int enabled;             /* proc.enabled: default true */
		uint64_t exec_rate;      /* proc.exec_rate: events/s per (ppid, comm), default 50 */
		uint64_t exec_burst;     /* proc.exec_burst: bucket size, default 100 */
		uint64_t exec_buckets;   /* proc.exec_buckets: max (ppid, comm) keys, default 16384 */
		uint64_t ringbuf_bytes;  /* proc.ringbuf_size: default 4 MiB (power of 2, >= page) */
		int fatal_signals_only;  /* proc.fatal_signals_only: default true */
		uint64_t exit_rate;      /* proc.exit_rate: exit and fatal-signal events/s per
		                            (cgroup, comm), default 50; 0 = no limit */
		uint64_t exit_burst;     /* proc.exit_burst: bucket size, default 100 */
		/* proc.redact_args: argv redaction patterns (docs/CONFIG.md);
		 * default SL_REDACT_DEFAULTS, an empty list = none */
		unsigned nredact;
		char redact[SL_REDACT_MAX][SL_REDACT_LEN];
	} proc;

	struct {
		int enabled;                  /* sched.enabled: default true */
		char watch[1024];             /* sched.watch: "all" (default), "none", or comma-separated
		                                 container-id / pod-uid prefixes */
		uint64_t delay_threshold_ns;  /* sched.delay_threshold: default 1ms */
		uint64_t delay_rate;          /* sched.delay_rate: sched_delay events/s per cgroup, default 10 */
		uint64_t delay_burst;         /* sched.delay_burst: bucket size, default 20 */
		uint64_t max_cgroups;         /* sched.max_cgroups: kernel histogram entries, default 1024 */
		uint64_t max_neighbour_pairs; /* sched.max_neighbour_pairs: (victim, neighbour) entries, default 4096 */
		uint64_t max_containers;      /* sched.max_containers: exported series, default 256 */
		uint64_t ringbuf_bytes;       /* sched.ringbuf_size: default 256 KiB (power of 2) */
	} sched;

	struct {
		int enabled;             /* stats.enabled: default true */
		uint64_t interval_ns;    /* stats.interval: collector period, default 5s (100ms .. 1h) */
		uint64_t max_containers; /* stats.max_containers: containers per pass, default 4096 */
	} stats;

	struct {                              /* on-demand tasks, docs/TASKS.md */
		int enabled;                  /* tasks.enabled: default true */
		uint64_t max_concurrent;      /* tasks.max_concurrent_tasks: default 4 */
		uint64_t max_duration_s;      /* tasks.max_duration: default 5m */
		uint64_t default_duration_s;  /* tasks.default_duration: default 10s */
		uint64_t deadline_grace_s;    /* tasks.deadline_grace: TTL beyond duration, default 10s */
		uint64_t default_hz;          /* tasks.default_hz: on-CPU sampling, default 99 */
		uint64_t max_hz;              /* tasks.max_hz: default 1000 */
		uint64_t off_cpu_min_ns;      /* tasks.off_cpu_min_duration: default 1us */
		uint64_t stack_entries;       /* tasks.stack_entries: BPF stack map size, default 8192 */
		uint64_t count_entries;       /* tasks.count_entries: BPF counts map size, default 16384 */
		uint64_t result_retention_s;  /* tasks.result_retention: default 24h */
		uint64_t max_results;         /* tasks.max_results: finished records kept, default 200 */
		char store_path[512];         /* tasks.store_path: "" = tasks.db next to store.path */
	} tasks;

	struct {                              /* self-protection, docs/CONFIG.md "pressure" */
		int enabled;                  /* pressure.enabled: default true */
		double cpu_budget;            /* pressure.cpu_budget: share of one CPU, default 0.10 */
		uint64_t memory_budget;       /* pressure.memory_budget: RSS bytes, default 256 MiB; 0 = off */
		uint64_t window_ns;           /* pressure.window: CPU share averaged over, default 10s */
		double queue_high;            /* pressure.queue_high: queue fill counted as pressure, default 0.5 */
		double release_ratio;         /* pressure.release_ratio: hysteresis, default 0.7 */
		uint64_t dwell_up_ns;         /* pressure.dwell_up: default 10s */
		uint64_t dwell_down_ns;       /* pressure.dwell_down: default 30s */
		uint64_t metrics_slowdown;    /* pressure.metrics_slowdown: step 1 interval factor, default 4 */
		uint64_t rate_shift;          /* pressure.rate_shift: step 2 event rates >> this, default 3 */
		struct {
			int enabled;          /* pressure.cgroup.enabled: default false */
			char name[128];       /* pressure.cgroup.name: relative cgroup, default "sandlensd" */
			double cpu_limit;     /* pressure.cgroup.cpu_limit: CPUs (cpu.max), default 1.0; 0 = none */
			uint64_t memory_limit; /* pressure.cgroup.memory_limit: bytes, default 512 MiB; 0 = none */
		} cgroup;
	} pressure;
};

void sl_config_defaults(struct sl_config *c);

/* Load YAML from path over the defaults. On error returns -1 and writes
 * "<key>: <reason>" (or "<path>:<line>: <reason>" for syntax errors and a
 * second YAML document) into err; the caller exits 2. An empty or null
 * section is all defaults; nothing else is ignored (docs/CONFIG.md). */
int sl_config_load(struct sl_config *c, const char *path, char *err, size_t errlen);

/* Limits of a config file, checked before the YAML is loaded: nesting
 * depth (mappings and sequences; the real config nests 2 deep) and size.
 * Deeper or larger files are rejected with the limit named in err (libyaml
 * loads deep nesting in quadratic time). */
#define SL_CONFIG_MAX_DEPTH 32
#define SL_CONFIG_MAX_BYTES (1 << 20)

/* sl_config_load on YAML text in memory (buf, len bytes, need not be
 * NUL-terminated); name stands for the file in messages. Same errors. */
int sl_config_load_buf(struct sl_config *c, const char *name, const char *buf, size_t len,
		       char *err, size_t errlen);


#endif
