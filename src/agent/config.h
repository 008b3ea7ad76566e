/* sandlensd configuration (YAML). Every key, its default and its unit are
 * documented in docs/CONFIG.md; sl_config_defaults() is the source of truth
 * for the agent's own defaults, each module's declaration (struct
 * sl_module_config) for its section; tests/unit/test_config_doc.c checks
 * docs/CONFIG.md against the declarations. */
#ifndef SANDLENS_AGENT_CONFIG_H
#define SANDLENS_AGENT_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sl_module_ops;

/* export.otlp.headers: "Name: value" lines (bearer tokens need the room). */
#define SL_CFG_HEADERS_MAX 16
#define SL_CFG_HEADER_LEN 512
struct sl_cfg_headers {
	unsigned n;
	char v[SL_CFG_HEADERS_MAX][SL_CFG_HEADER_LEN];
};

/* Storage of one module's config struct inside struct sl_config (bytes;
 * a module whose ops->config.size is larger is refused at defaults time). */
#define SL_CFG_MODULE_MAX 4096
#define SL_CFG_MODULES_MAX 16 /* = SL_MAX_MODULES (src/agent/module.h) */

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
		char host_root[256];     /* attribution.host_root: prefix of every runtime-state path, default "" */
	} attribution;

	struct {
		int enabled;             /* stats.enabled: default true */
		uint64_t interval_ns;    /* stats.interval: collector period, default 5s (100ms .. 1h) */
		uint64_t max_containers; /* stats.max_containers: containers per pass, default 4096 */
		struct {                 /* the guest-agent source (micro-VM sandboxes), docs/STATS.md */
			int enabled;         /* stats.guest.enabled: default true */
			char kata_root[256]; /* stats.guest.kata_root: Kata runtime state root, default "/run/vc"; absolute */
			uint64_t timeout_ns; /* stats.guest.timeout: whole guest read, default 1s (10ms .. 30s) */
			uint64_t max_inflight; /* stats.guest.max_inflight: concurrent guest reads, default 8 (1 .. 64) */
		} guest;
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
		char debuginfod_urls[1024];   /* tasks.debuginfod_urls: "" = off (default) */
		char debuginfod_cache[256];   /* tasks.debuginfod_cache: "" = libdebuginfod's default */
		uint64_t debuginfod_timeout_s;/* tasks.debuginfod_timeout: one file, default 10s */
	} tasks;

	struct {                              /* continuous profiling, docs/PROFILING.md "Continuous profiling" */
		int enabled;                  /* profiling.continuous.enabled: default true */
		uint64_t hz;                  /* profiling.continuous.hz: on-CPU samples per second per CPU, default 19 */
		uint64_t window_s;            /* profiling.continuous.window: default 10s */
		uint64_t max_age_s;           /* profiling.continuous.max_age: windows kept, default 1d; 0 = no limit */
		uint64_t max_bytes;           /* profiling.continuous.max_bytes: default 256 MiB; 0 = no limit */
		uint64_t stack_entries;       /* profiling.continuous.stack_entries: per buffer, default 4096 */
		uint64_t count_entries;       /* profiling.continuous.count_entries: per buffer, default 8192 */
		char store_path[512];         /* profiling.continuous.store_path: "" = profiles.db next to store.path */
	} cprof;

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

	struct sl_cfg_otlp {                  /* OTLP/HTTP export, docs/EXPORT.md */
		char endpoint[512];           /* export.otlp.endpoint: "" = off; http(s)://host:port[/prefix] */
		struct sl_cfg_headers headers; /* export.otlp.headers: list of "Name: value" */
		uint64_t timeout_ns;          /* export.otlp.timeout: per request, default 10s */
		uint64_t interval_ns;         /* export.otlp.interval: metrics export period, default 30s */
		uint64_t batch_size;          /* export.otlp.batch_size: events per logs request, default 512 */
		uint64_t queue_size;          /* export.otlp.queue_size: events waiting at most, default 16384 */
		int gzip;                     /* export.otlp.gzip: default true */
		uint64_t retry_initial_ns;    /* export.otlp.retry_initial: first backoff, default 1s */
		uint64_t retry_max_interval_ns; /* export.otlp.retry_max_interval: backoff cap, default 30s */
		uint64_t max_retry_time_ns;   /* export.otlp.max_retry_time: give a request up after, default 5m */
		char ca_file[512];            /* export.otlp.ca_file: PEM CA bundle for https ("" = system's) */
		char client_cert[512];        /* export.otlp.client_cert: PEM client certificate (mTLS) */
		char client_key[512];         /* export.otlp.client_key: its PEM private key */
		int persist_cursor;           /* export.otlp.persist_cursor: keep the logs cursor across restarts, default true */
	} export_otlp;

	struct {                              /* the flight recorder, docs/FLIGHT.md */
		int enabled;                  /* flight.enabled: default true */
		uint64_t window_ns;           /* flight.window: how far back a recording reaches, default 60s */
		uint64_t container_max_bytes; /* flight.container_max_bytes: one container's ring, default 1 MiB */
		uint64_t max_bytes;           /* flight.max_bytes: all rings, default 64 MiB */
		uint64_t max_containers;      /* flight.max_containers: rings at most, default 1024 */
		uint64_t post_trigger_ns;     /* flight.post_trigger: a recording completes this long after its trigger, default 1s */
		uint64_t freeze_interval_ns;  /* flight.freeze_interval: one recording per container per this, default 1m */
		uint64_t max_freezes_per_minute; /* flight.max_freezes_per_minute: host-wide, default 10 */
		uint64_t max_age_s;           /* flight.max_age: stored recordings' retention, default 7d; 0 = off */
		uint64_t max_recordings;      /* flight.max_recordings: stored recordings at most, default 500; 0 = off */
		uint64_t store_max_bytes;     /* flight.store_max_bytes: their JSON bytes at most, default 256 MiB; 0 = off */
	} flight;
	/* AutoTracing (docs/AUTO.md, keys in docs/CONFIG.md "auto"): detectors
	 * and captures. Detector order: SL_AUTO_DETECTORS (src/auto/auto.h). */
	struct {
		int enabled;                  /* auto.enabled: default false */
		uint64_t cooldown_s;          /* auto.cooldown: per (container, detector), default 10m */
		uint64_t profile_duration_s;  /* auto.profile_duration: default 10s */
		int off_cpu;                  /* auto.off_cpu: off-CPU profile for blocked triggers, default true */
		uint64_t max_captures;        /* auto.max_captures: records kept, default 1000 */
		char store_path[512];         /* auto.store_path: "" = captures.db next to store.path */
		uint64_t baseline_lookback_s; /* auto.baseline_lookback: diff baseline range, default 1h */
		uint64_t max_processes;       /* auto.max_processes: per snapshot, default 64 */
		char containers[512];         /* auto.containers: comma-separated id prefixes watched; "" = all */
		struct sl_cfg_auto_det {
			int enabled;          /* auto.<d>.enabled */
			char method[16];      /* auto.<d>.method: mean|ema|jump|consecutive */
			double threshold;     /* auto.<d>.threshold: in the input's unit */
			uint64_t window;      /* auto.<d>.window: readings */
			double baseline;      /* auto.<d>.baseline: factor over the own p99, 0 = constant */
			char series[96];      /* auto.<d>.series (series inputs): a declared series name */
			char trigger[48];     /* auto.<d>.trigger (pressure inputs): PSI trigger, "" = sampling */
		} det[8];
	} autotr;

	/* Module sections (src/agent/module.h, struct sl_module_config): one
	 * per module of the list given to sl_config_defaults_mods (the registry
	 * for sl_config_defaults), in its order. Each module's struct lives in
	 * mod_store[i] (no allocation: a struct sl_config may be copied and is
	 * never freed); read it with sl_config_module(). */
	unsigned nmods;
	const struct sl_module_ops *const *mods;
	int mod_enabled[SL_CFG_MODULES_MAX]; /* <name>.enabled, default true */
	_Alignas(16) unsigned char mod_store[SL_CFG_MODULES_MAX][SL_CFG_MODULE_MAX];
};

/* Every key at its default, the modules of the registry (sl_registry).
 * Module keys get their declared default text parsed by the same parser as
 * the file; a declaration that does not parse (or a module struct larger
 * than SL_CFG_MODULE_MAX, more modules than SL_CFG_MODULES_MAX) is a bug:
 * the message goes to stderr and the process aborts. */
void sl_config_defaults(struct sl_config *c);
/* The same for the modules ops[0..n) (tests, fuzzing). */
void sl_config_defaults_mods(struct sl_config *c, const struct sl_module_ops *const *ops, unsigned n);

/* The config struct of module i (index in c->mods), NULL when i is out of
 * range or the module declares no keys. */
void *sl_config_module(struct sl_config *c, unsigned i);
/* The same by module name (NULL when there is none). */
void *sl_config_module_by_name(struct sl_config *c, const char *name, int *enabled);

/* Format v in a unit for messages and docs: ns as "1us", "250ms", "1m";
 * seconds as "30s", "5m", "7d"; bytes as "4KiB", "1GiB" (the largest unit
 * that divides v exactly; 0 as "0", "0s", "0B"). Returns buf. */
const char *sl_cfg_fmt_ns(uint64_t v, char *buf, size_t len);
const char *sl_cfg_fmt_s(uint64_t v, char *buf, size_t len);
const char *sl_cfg_fmt_bytes(uint64_t v, char *buf, size_t len);

/* Load YAML from path over the defaults. On error returns -1 and writes
 * "<key>: <reason>" (or "<path>:<line>: <reason>" for syntax errors and a
 * second YAML document) into err; the caller exits 2. An empty or null
 * section is all defaults; nothing else is ignored (docs/CONFIG.md). A
 * module section "<name>:" takes the keys the module declares plus
 * "enabled"; range errors are in the key's unit ("[1us, 1m]"); each
 * module's check hook runs after every key is read; every module disabled
 * is an error ("modules: ..."). The file (symlinks followed, opened
 * non-blocking, a regular file) must be owned by root or the effective uid
 * and not writable by group or others ("<path>: refusing it: ..."), and its
 * directory must pass sl_dir_refusal with SL_DIR_STICKY_OK
 * (src/common/dir_trust.h; "<path>: refusing its directory: it ..."):
 * whoever can write it decides what the agent does. On start and on every
 * SIGHUP reload. */
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

/* The agent's own duration keys (not the modules'), for the docs test
 * (tests/unit/test_config_doc.c): the i-th one's dotted name and the unit
 * of a plain number in it ("s": sl_parse_duration_s; "ns":
 * sl_parse_duration_ns, src/common/units.h). Returns 0, or -1 past the
 * last. */
int sl_config_duration_key(size_t i, const char **name, const char **plain_unit);

struct sl_cfg_key;
/* Called by sl_config_diff for one key that differs: key is its dotted
 * name ("store.max_age", "proc.exec_rate", "proc.enabled"); module is the
 * module's index in c->mods (-1 for the agent's own keys); mk is the
 * module's declaration of the key (NULL for agent keys and for
 * "<module>.enabled"). */
typedef void (*sl_config_diff_fn)(void *arg, const char *key, int module, const struct sl_cfg_key *mk);
/* Compare two loaded configs of the same module list key by key (what the
 * file can set; derived fields such as api.admin_gid are not keys): calls
 * fn (may be NULL) for each key whose value differs, agent keys in the
 * loader's table order, then each module's "enabled" and declared keys.
 * Returns the number of differing keys. Used by the SIGHUP reload
 * (src/agent/reload.c). */
int sl_config_diff(const struct sl_config *a, const struct sl_config *b, sl_config_diff_fn fn, void *arg);

#endif
