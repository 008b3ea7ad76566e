/* The module contract (docs/ARCHITECTURE.md "Module contract").
 *
 * A kernel module is bpf/<m>.bpf.c, include/sandlens/<m>.h (its ABI),
 * src/modules/<m>*.c, docs/<M>.md and its tests, plus ONE line in
 * src/modules/registry.c. The agent, the config loader, the API, the store,
 * /healthz, /metrics and the pressure code know a module only through the
 * struct sl_module_ops it fills; a module knows the agent only through the
 * services declared at the end of this header (it never includes
 * agent/agent.h). tests/check-module-names.sh (run by `make all`) fails
 * the build when a file outside a module's own files and the registry names
 * a module.
 *
 * What a module declares (static, const data; read before init):
 *   config    its section "<name>:" of the YAML file: keys with type,
 *             default (text parsed by the same parser as the file), range
 *             and one-line doc. "<name>.enabled" (bool, default true) is
 *             implicit. The loader parses into a struct the module owns
 *             (config.size bytes, m->cfg); docs/CONFIG.md (or the module's
 *             docs/<M>.md) is checked against every key both ways.
 *   kinds     event kinds: name (globally unique), severity, field schema,
 *             CLI DETAILS template. The JSON encoder, the store, the API's
 *             `type` filter, GET /api/v1/schema/events and the CLI read them.
 *   families  Prometheus families the module writes; the writer refuses
 *             any other while the module writes (src/common/prom.h).
 *   hooks     the kernel hooks it may attach (listed in /healthz even when
 *             init fails: a hook init did not record shows "failed: not
 *             recorded by init").
 *   ringbufs  ring buffer maps and their record callback; the agent
 *             registers each one whose fd init set (sl_module_ringbuf) with
 *             its one poll loop.
 *   views     optional API views mounted at /api/v1/<name><path>.
 *   series    optional per-container series detectors read (read_series).
 *
 * Changes against the first draft (module_contract.h), as landed:
 *   - the registry is declared here (sl_registry, sl_registry_count);
 *     SL_MAX_MODULES (16) and SL_MAX_KINDS (128) bound it;
 *   - a module's config struct lives inside struct sl_config (mod_store,
 *     SL_CFG_MODULE_MAX bytes each; src/agent/config.h), not allocated:
 *     m->cfg points there, a config can be copied and is never freed;
 *   - views get parameters already checked (declared names only, no empty
 *     value, no repeat); *status is 200 on entry; the agent answers 503
 *     itself when the module is not running;
 *   - the netns subject is attributed through sl_subject.task when the
 *     module passes a task of that netns, else to "host";
 *   - common fields: the list with types is sl_common_fields
 *     (src/agent/kinds.h); a module field may not reuse one the pipeline
 *     always sets (id, time, type, severity, subject_kind, pid, ppid,
 *     cgroup_id, cgroup_hierarchy, container_id, pod_uid, runtime, qos);
 *     comm, cpu, device, netns_inode set by the module win;
 *   - admin fields (SL_FF_ADMIN) are withheld from readers as
 *     "<field>_withheld": true (exec: argv_withheld, as before);
 *   - new: ops.tick_is_metrics (pressure step 1 thins that tick out), and
 *     the services sl_module_attribution, sl_module_cgroup_path;
 *   - sl_module_mounts returns an empty set (v1_hierarchy_id -1) for a
 *     module without an agent (unit tests); the runc index stays the
 *     agent's (attribution uses it inside resolve_*);
 *   - the writer lifts a restriction with sl_prom_unrestrict (prom.h).
 *
 * Threads: init, tick, destroy, set_rate_shift, reconfigure and ring buffer callbacks run
 * on the poll-loop thread. write_metrics, write_drops, views and
 * read_series run on API threads: they may read only atomics, immutable
 * state, published (reference-counted) snapshots and BPF maps.
 */
#ifndef SANDLENS_AGENT_MODULE_H
#define SANDLENS_AGENT_MODULE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cgroup/attr.h"
#include "common/prom.h"
#include "sandlens/common.h"

struct sl_agent;
struct sl_module;
struct sl_attr;

/* ------------------------------------------------------------------ */
/* Config section                                                      */
/* ------------------------------------------------------------------ */

enum sl_cfg_type {
	SL_CFG_BOOL = 0,    /* int: true|false|yes|no|on|off */
	SL_CFG_UINT,        /* uint64_t: plain non-negative integer */
	SL_CFG_BYTES,       /* uint64_t bytes: "4MiB", "512KiB", "1GiB", plain bytes */
	SL_CFG_DURATION_NS, /* uint64_t ns: "500us", "1ms", "2s", "1m"; plain = ns */
	SL_CFG_DURATION_S,  /* uint64_t s: "30s", "5m", "2h", "7d"; plain = s */
	SL_CFG_STR,         /* char[size] */
	SL_CFG_RATIO,       /* double: plain decimal, range in millionths */
	SL_CFG_STRLIST,     /* struct sl_cfg_strlist: a YAML sequence of strings */
};

/* SL_CFG_STRLIST storage: up to SL_CFG_STRLIST_MAX strings of at most
 * SL_CFG_STRLIST_LEN - 1 bytes. */
#define SL_CFG_STRLIST_MAX 32
#define SL_CFG_STRLIST_LEN 64
struct sl_cfg_strlist {
	unsigned n;
	char v[SL_CFG_STRLIST_MAX][SL_CFG_STRLIST_LEN];
};

struct sl_cfg_key {
	const char *name;  /* key inside the section, e.g. "delay_threshold" */
	int type;          /* enum sl_cfg_type */
	size_t offset;     /* in the module's config struct */
	size_t size;       /* bytes of the field (SL_CFG_STR: buffer size) */
	const char *def;   /* default as YAML scalar text ("1ms", "true", "all");
	                      SL_CFG_STRLIST: items separated by '\n' ("" = none) */
	uint64_t min, max; /* inclusive range of numeric types in the type's unit
	                      (ns, s, bytes, millionths for RATIO); 0,0 = none */
	const char *doc;   /* one line for docs/CONFIG.md */
};

/* Field descriptor helper: SL_CFG_FIELD(struct mem_cfg, threshold_ns). */
#define SL_CFG_FIELD(type, f) offsetof(type, f), sizeof(((type *)0)->f)

struct sl_module_config {
	size_t size;                 /* sizeof the module's config struct (0: no keys) */
	const struct sl_cfg_key *keys;
	unsigned nkeys;
	/* optional cross-key check after every key parsed; cfg is the module's
	 * struct. Returns 0, or -1 with "<module>.<key>: <reason>" in err. */
	int (*check)(const void *cfg, char *err, size_t errlen);
};

/* ------------------------------------------------------------------ */
/* Event kinds                                                         */
/* ------------------------------------------------------------------ */

enum sl_severity {
	SL_SEV_DEBUG = 0,
	SL_SEV_INFO,
	SL_SEV_NOTICE,
	SL_SEV_WARNING,
	SL_SEV_ERROR,
	SL_SEV_CRITICAL,
};

enum sl_field_type {
	SL_FT_INT = 0, /* JSON integer */
	SL_FT_UINT,    /* JSON integer >= 0 */
	SL_FT_REAL,    /* JSON number */
	SL_FT_BOOL,
	SL_FT_STR,
	SL_FT_OBJ,     /* JSON object (e.g. a task: {pid, comm, cgroup_id, container_id}) */
	SL_FT_ARRAY,   /* JSON array */
};

/* Field flags (OR into sl_field.flags). */
#define SL_FF_OPTIONAL 0x1 /* may be absent */
#define SL_FF_ADMIN    0x2 /* withheld from non-admin readers (argv, stacks, addresses) */

struct sl_field {
	const char *name;
	int type;     /* enum sl_field_type */
	unsigned flags;
	const char *doc; /* one line, with unit */
};

struct sl_event_kind {
	const char *name;  /* e.g. "mem_stall": [a-z][a-z0-9_]*, unique over all modules */
	int severity;      /* enum sl_severity of every event of the kind, unless severity_of */
	/* optional: severity of one event from its module fields */
	int (*severity_of)(const json_t *fields);
	const struct sl_field *fields; /* the module's fields (not the common ones) */
	unsigned nfields;
	/* CLI DETAILS column: literal text with {field} (or {obj.field})
	 * substitutions; "{?field}text{/}" prints text only when field is
	 * present and not 0/false/"". Checked at start: a malformed template or
	 * one naming an undeclared field stops the agent. */
	const char *details;
	const char *doc; /* one line */
};

/* Common fields the pipeline adds to every event (not declared by modules):
 * time, type, severity ("debug".."critical"), subject_kind
 * ("task"|"cgroup"|"netns"|"device"|"cpu"), host fields of the subject
 * (pid, ppid, comm for a task; netns_inode; device; cpu), cgroup_id,
 * cgroup_hierarchy ("v2"|"v1"), container_id, pod_uid, runtime, qos. The
 * exact list with types: sl_common_fields (src/agent/kinds.h). A module
 * field must not reuse a common name (checked at start). */

/* ------------------------------------------------------------------ */
/* Event subjects                                                      */
/* ------------------------------------------------------------------ */

enum sl_subject_kind {
	SL_SUBJ_TASK = 0, /* a task: pid, comm, its cgroup pair */
	SL_SUBJ_CGROUP,   /* a cgroup only (e.g. the memcg being reclaimed) */
	SL_SUBJ_NETNS,    /* a network namespace (inode of /proc/<pid>/ns/net); attributed
	                     through .task when the module has a task of that netns
	                     (its container), else to "host" */
	SL_SUBJ_DEVICE,   /* a disk, NIC, PCI function or GPU */
	SL_SUBJ_CPU,      /* a CPU (host-wide) */
};

struct sl_subject {
	int kind;                       /* enum sl_subject_kind */
	const struct sl_task_id *task;  /* TASK; NETNS: optional, a task of that netns */
	uint64_t cgroup_id;             /* CGROUP: id on the hierarchy below */
	int cgroup_hier;                /* CGROUP: enum sl_cg_hier */
	uint64_t netns_inode;           /* NETNS */
	const char *device;             /* DEVICE: "disk:8:0", "nic:eth0", "pci:0000:3b:00.0", "gpu:0" */
	int cpu;                        /* CPU */
};

/* ------------------------------------------------------------------ */
/* Hooks, ring buffers, views, series                                  */
/* ------------------------------------------------------------------ */

enum sl_hook_state {
	SL_HOOK_ATTACHED = 0,
	SL_HOOK_DEGRADED, /* not available; a portable fallback is used or the figure is absent */
	SL_HOOK_DISABLED, /* turned off by configuration */
	SL_HOOK_FAILED,   /* should have worked and did not */
};

#define SL_MAX_HOOKS 32
#define SL_MAX_PROGS 32
#define SL_MAX_RINGBUFS 4
#define SL_MAX_MODULES 16 /* entries of sl_registry */
#define SL_MAX_KINDS 128  /* event kinds over every module */

struct sl_hook_decl {
	const char *name;   /* e.g. "tp_btf/sched_process_exec" */
	const char *figure; /* what it feeds, one line */
};

struct sl_hook_status {
	char name[64];
	int state;        /* enum sl_hook_state */
	char reason[160]; /* empty when attached */
};

typedef int (*sl_rb_cb)(void *ctx, void *data, size_t size);

/* The poll loop reads every registered ring buffer at least this often
 * (ms), woken or not, while records keep coming: a BPF program may commit
 * a record with BPF_RB_NO_WAKEUP (no irq_work and wake-up in the traced
 * task: a self-IPI, a VM exit on a guest) and it is read within this delay.
 * Each timed read that finds nothing doubles the delay up to
 * SL_RB_POLL_MAX_MS (an idle agent wakes about once a second, not ten
 * times); a read that finds records brings it back to SL_RB_POLL_MS. */
#define SL_RB_POLL_MS 100
#define SL_RB_POLL_MAX_MS 1000

struct sl_ringbuf_decl {
	const char *name; /* the BPF map's name, e.g. "mem_events" */
	/* record callback; ctx is the struct sl_module *. Poll-loop thread. */
	int (*on_record)(void *ctx, void *data, size_t size);
};

/* View parameters: plain (name, value) pairs. The agent refuses a request
 * with an empty value or a repeated name (400) before the view runs, and
 * any name the view does not declare; a view gets p[0..n) in request order,
 * every name declared, every value non-empty valid UTF-8. */
struct sl_view_param {
	const char *name;
	const char *value;
};

struct sl_view_param_decl {
	const char *name;
	const char *doc;
};

struct sl_api_view {
	const char *path; /* "" for /api/v1/<module>, else "/sub" */
	int admin_only;   /* 1: root / admin group / token only (docs/API.md) */
	const struct sl_view_param_decl *params;
	unsigned nparams;
	/* JSON body (new reference; *status is 200 on entry), or NULL with
	 * *status (4xx/5xx; 503 for "not running") and a reason in err. API
	 * thread. */
	json_t *(*get)(struct sl_module *m, const struct sl_view_param *p, size_t n, unsigned *status,
		       char *err, size_t errlen);
	const char *doc;
};

struct sl_series_decl {
	const char *name; /* e.g. "mem_stall_seconds" */
	const char *unit; /* "seconds", "bytes", "ratio", "count" */
	const char *doc;
};

/* One per-container value of a series. */
struct sl_series_point {
	char container_id[SL_CONTAINER_ID_LEN]; /* "" for the host series */
	char pod_uid[SL_POD_UID_LEN];
	uint64_t cgroup_id;
	uint64_t ts_ns; /* CLOCK_MONOTONIC of the reading */
	double value;
};

/* ------------------------------------------------------------------ */
/* The ops                                                             */
/* ------------------------------------------------------------------ */

struct sl_module_ops {
	const char *name; /* [a-z][a-z0-9]*: config section, API path, label module="" */
	const char *doc;  /* docs/<NAME>.md */

	struct sl_module_config config;
	const struct sl_event_kind *kinds;
	unsigned nkinds;
	const struct sl_prom_family *families;
	unsigned nfamilies;
	const struct sl_hook_decl *hooks;
	unsigned nhooks;
	const struct sl_ringbuf_decl *ringbufs;
	unsigned nringbufs;
	const struct sl_api_view *views;
	unsigned nviews;
	const struct sl_series_decl *series;
	unsigned nseries;

	/* Probe hooks, open/load/attach, record each hook (sl_module_hook /
	 * sl_module_attach) and each ring buffer fd (sl_module_ringbuf).
	 * Returns 0, or -errno when the module cannot run at all (logged, the
	 * module is "failed" in /healthz, the agent goes on). */
	int (*init)(struct sl_module *m);
	/* periodic work (poll-loop thread), now = CLOCK_MONOTONIC ns */
	void (*tick)(struct sl_module *m, uint64_t now_ns);
	/* 1: tick is metric collection (a snapshot of counters that keep
	 * counting), which pressure step 1 runs only every n-th tick; 0: it
	 * always runs (sweeps, drop accounting) */
	int tick_is_metrics;
	/* the module's declared families (API thread) */
	void (*write_metrics)(struct sl_module *m, struct sl_prom *p);
	/* samples of the shared family sandlens_events_dropped_total{reason,type}
	 * for the module's kinds, in kernel events lost (API thread); the family
	 * is started by the agent and allowed while this runs */
	void (*write_drops)(struct sl_module *m, struct sl_prom *p);
	/* per-container values of series[idx]; returns points written (<= max)
	 * or -errno (API thread) */
	int (*read_series)(struct sl_module *m, unsigned idx, struct sl_series_point *out, size_t max);
	/* degradation step 2 (docs/ARCHITECTURE.md "Pressure"): divide event
	 * rates and bursts by 2^shift (0..8), suppressed events stay counted.
	 * Returns 0, -EINVAL (shift > 8), -ENODEV (not running). NULL: no
	 * rate-limited events. */
	int (*set_rate_shift)(struct sl_module *m, unsigned shift);
	/* optional, SIGHUP reload (docs/ARCHITECTURE.md "Reload"): key (a name
	 * of config.keys) has a new value in new_cfg (the module's whole
	 * struct as loaded from the new file, already checked). Apply it and
	 * return 0 — the agent then copies that key's bytes into m->cfg, so
	 * API threads that read the key from m->cfg must tolerate the change
	 * (scalars) — or return -EOPNOTSUPP when the key needs a restart (the
	 * agent logs it and keeps the running value). Poll-loop thread, only
	 * for a running module. NULL: every key of the module needs a restart. */
	int (*reconfigure)(struct sl_module *m, const void *new_cfg, const char *key);
	/* detach every link, free everything. Called once, also after a failed init. */
	void (*destroy)(struct sl_module *m);
	/* optional (the flight recorder, docs/FLIGHT.md): 1 when an event of
	 * kinds[kind] with module fields `fields` means a task of its container
	 * died or hung (an OOM kill, a crash or kill signal, a hung task): the
	 * container's flight-recorder ring is frozen and the event carries
	 * flight_recording_id. Poll-loop thread; pure. NULL: no kind freezes. */
	int (*kind_freezes)(unsigned kind, const json_t *fields);
};

struct sl_module {
	const struct sl_module_ops *ops;
	struct sl_agent *agent; /* opaque to the module: use the services below */
	void *priv;             /* the module's */
	void *cfg;              /* the module's config struct (ops->config.size bytes) */
	int enabled;            /* <name>.enabled */
	int state;              /* 0 running, -errno failed at init */
	char error[160];
	unsigned kind_base;     /* global index of ops->kinds[0] (assigned by the agent) */
	/* Written during init only; read by API threads afterwards. */
	int nhooks;
	struct sl_hook_status hooks[SL_MAX_HOOKS];
	int nprogs;
	int prog_fds[SL_MAX_PROGS];
	char prog_names[SL_MAX_PROGS][64];
	int ringbuf_fds[SL_MAX_RINGBUFS]; /* per ops->ringbufs[], -1 until set */
};

/* ------------------------------------------------------------------ */
/* Services for modules (implemented by the agent)                     */
/* ------------------------------------------------------------------ */

/* Record a hook's state (init only). reason may be NULL. */
void sl_module_hook(struct sl_module *m, const char *name, int state, const char *reason);
/* Set the reason shown in /healthz for the hook `name` recorded last
 * (init only), e.g. why an attached hook is the fallback one. -ENOENT
 * when no hook of that name was recorded. */
int sl_module_hook_note(struct sl_module *m, const char *name, const char *reason);
struct bpf_program;
struct bpf_link;
/* Attach prog (init only) and record hook `hook` as attached, or failed
 * with errno's reason; an attached program is registered for bpf_stats. A
 * program set not to load (bpf_program__autoload false) is skipped: its
 * hook state is the module's to record. *link gets the link or NULL. */
void sl_module_attach(struct sl_module *m, struct bpf_program *prog, struct bpf_link **link,
		      const char *hook);
/* Register a BPF program for run-time/run-count metrics (init only). */
void sl_module_prog(struct sl_module *m, const char *name, int prog_fd);
/* Set the fd of declared ring buffer `name` (init only). -ENOENT when the
 * module did not declare it. */
int sl_module_ringbuf(struct sl_module *m, const char *name, int map_fd);
const char *sl_hook_state_name(int state);

/* Sum over CPUs of element idx of a PERCPU_ARRAY of __u64 counters
 * (ncpus = libbpf_num_possible_cpus()). 0 when unreadable. Any thread. */
uint64_t sl_percpu_sum(int map_fd, uint32_t idx, int ncpus);

/* Every element of a PERCPU_ARRAY of nelem elements whose value is
 * value_size bytes: fn(ctx, idx, vals) per element, vals = ncpus values of
 * round_up(value_size, 8) bytes each (the kernel's per-CPU layout,
 * kernel/bpf/arraymap.c bpf_percpu_array_copy), in index order. Read with
 * BPF_MAP_LOOKUP_BATCH (one syscall per chunk of at most chunk elements
 * instead of one per element: a 1,024-IRQ histogram array read each tick
 * was 1,024 syscalls a second), or one lookup per element on kernels
 * without batch operations (< 5.6). ncpus = libbpf_num_possible_cpus().
 * Returns 0, fn's first non-zero return, or -errno (-ENOMEM, or the
 * lookup's error). Any thread. */
int sl_percpu_array_each(int map_fd, uint32_t nelem, size_t value_size, int ncpus, uint32_t chunk,
			 int (*fn)(void *ctx, uint32_t idx, const void *vals), void *ctx);

/* sl_percpu_sum of every element 0..n-1 of a PERCPU_ARRAY of __u64
 * counters into out[0..n-1], in one BPF_MAP_LOOKUP_BATCH call (a module's
 * counter array read each tick was n bpf() calls). An element that cannot be
 * read is 0. Returns 0 or -errno (out then zeroed). Any thread. */
int sl_percpu_sums(int map_fd, uint32_t n, int ncpus, uint64_t *out);

/* Emit one event of ops->kinds[kind] (poll-loop thread). fields (stolen
 * reference) holds the module's declared fields; the pipeline adds the
 * common ones, attributes the subject, counts it and stores it. ts_mono_ns
 * is CLOCK_MONOTONIC; weight = kernel events the record stands for (>= 1;
 * drop accounting). */
void sl_module_emit(struct sl_module *m, unsigned kind, uint64_t ts_mono_ns, const struct sl_subject *s,
		    json_t *fields, uint64_t weight);
/* A record that could not be decoded (counted in sandlens_decode_errors_total). */
void sl_module_decode_error(struct sl_module *m);

/* Attribution of a task (the hybrid rule, docs/ATTRIBUTION.md): fills *attr
 * and returns the cgroup id used (*hier = enum sl_cg_hier, may be NULL).
 * Poll-loop thread. */
uint64_t sl_module_resolve_task(struct sl_module *m, const struct sl_task_id *t, struct sl_attr *attr,
				int *hier);
/* Attribution of a cgroup pair as BPF maps key them (v2 id, v1 id of
 * attribution.v1_controller or 0): same rule. Poll-loop thread. */
uint64_t sl_module_resolve_cgroup(struct sl_module *m, uint64_t cgroup_id, uint64_t cgroup_v1_id,
				  struct sl_attr *attr, int *hier);
/* The cgroup directory of a cgroup pair as the attribution cache knows it:
 * path relative to its hierarchy's mount (sl_module_mounts) into path,
 * *hier = enum sl_cg_hier. 0, or -ENOENT (attribution off or unknown).
 * Poll-loop thread. */
int sl_module_cgroup_path(struct sl_module *m, uint64_t cgroup_id, uint64_t cgroup_v1_id, char *path,
			  size_t len, int *hier);
/* {pid, comm, cgroup_id, container_id, pod_uid, runtime} of a task for
 * actor/victim-style fields (new reference). Poll-loop thread. */
json_t *sl_module_task_json(struct sl_module *m, const struct sl_task_id *t);
/* cgroup mkdir/rmdir seen by a module's BPF program (poll-loop thread). */
void sl_module_cgroup_event(struct sl_module *m, uint64_t cgroup_id, unsigned hierarchy_id, int mkdir,
			    const char *path);

/* cgroup_subsys_id of attribution.v1_controller on this kernel, -1 when
 * the host has no v1 hierarchy for it (BPF programs read the v1 cgroup id
 * through it). */
int sl_module_v1_subsys_id(const struct sl_module *m);
/* The cgroup mounts and the runc index the agent discovered (NULL before
 * start; do not free). */
const struct sl_cg_mounts *sl_module_mounts(const struct sl_module *m);
/* 1 when attribution is on (attribution.enabled and its cache could be
 * made): a module then feeds cgroup mkdir/rmdir through
 * sl_module_cgroup_event. */
int sl_module_attribution(const struct sl_module *m);
/* tracefs path (config), for tracepoint probing. */
const char *sl_module_tracefs(const struct sl_module *m);
/* Wall-clock ns = mono + this. */
int64_t sl_module_mono_to_real_ns(const struct sl_module *m);
/* Current pressure level 0..4 (docs/ARCHITECTURE.md "Pressure"). */
int sl_module_pressure_level(const struct sl_module *m);
/* The module's config struct, typed by the caller. */
static inline const void *sl_module_cfg(const struct sl_module *m) { return m->cfg; }

/* CLOCK_MONOTONIC now, ns. */
uint64_t sl_mono_ns(void);

/* ------------------------------------------------------------------ */
/* The registry (src/modules/registry.c: the one list of modules)      */
/* ------------------------------------------------------------------ */

/* Every module the agent knows, in start order; sl_registry_count entries
 * (<= SL_MAX_MODULES). */
extern const struct sl_module_ops *const sl_registry[];
extern const unsigned sl_registry_count;

#endif
