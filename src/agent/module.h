/* The module contract (docs/ARCHITECTURE.md "Module contract").
 *
 * A kernel module is one bpf/<m>.bpf.c plus one src/modules/<m>.c that
 * fills a struct sl_module_ops. The agent knows modules only through it:
 *
 *   init()          probe hooks, open/load/attach the BPF object, degrade
 *                   to the portable subset where an optional hook is
 *                   missing, and record each hook's state with
 *                   sl_module_hook(). Returns 0, or -errno when the module
 *                   cannot run at all (the agent logs it, marks the module
 *                   failed in /healthz and goes on without it).
 *   add_ringbufs()  register the module's ring buffers with the agent's one
 *                   poll loop (sl_agent_add_ringbuf()).
 *   tick()          periodic work on the poll-loop thread (map sweeps).
 *   write_metrics() Prometheus text for /metrics; called from API threads,
 *                   so it may read only atomics, immutable state and BPF
 *                   maps (syscalls are thread-safe).
 *   write_drops()   sample lines only (no HELP/TYPE) of the shared family
 *                   sandlens_events_dropped_total{reason,type}, in kernel
 *                   events lost; same threading rules as write_metrics.
 *   destroy()       detach every link, free everything. Called once.
 *   set_rate_shift() optional: degradation step 2 (docs/ARCHITECTURE.md
 *                   "Pressure"): divide the module's event token-bucket
 *                   rates and bursts by 2^shift (0..8; 0 = as configured),
 *                   keeping every suppressed event counted. Poll-loop
 *                   thread. Returns 0, -EINVAL (shift > 8) or -ENODEV (not
 *                   running). NULL: the module has no rate-limited events.
 */
#ifndef SANDLENS_AGENT_MODULE_H
#define SANDLENS_AGENT_MODULE_H

#include <stdint.h>
#include <stdio.h>

struct sl_agent;
struct sl_module;

enum sl_hook_state {
	SL_HOOK_ATTACHED = 0,
	SL_HOOK_DEGRADED, /* not available; a portable fallback is used or the figure is absent */
	SL_HOOK_DISABLED, /* turned off by configuration */
	SL_HOOK_FAILED,   /* should have worked and did not */
};

#define SL_MAX_HOOKS 16
#define SL_MAX_PROGS 16

struct sl_hook_status {
	char name[64];    /* e.g. "tp_btf/sched_process_exec" */
	int state;        /* enum sl_hook_state */
	char reason[160]; /* empty when attached */
};

struct sl_module_ops {
	const char *name;
	int (*init)(struct sl_module *m, struct sl_agent *a);
	int (*add_ringbufs)(struct sl_module *m, struct sl_agent *a);
	void (*tick)(struct sl_module *m, uint64_t now_ns);
	void (*write_metrics)(struct sl_module *m, FILE *out);
	void (*write_drops)(struct sl_module *m, FILE *out);
	void (*destroy)(struct sl_module *m);
	int (*set_rate_shift)(struct sl_module *m, unsigned shift);
};

struct sl_module {
	const struct sl_module_ops *ops;
	void *priv;
	int enabled;   /* from config */
	int state;     /* 0 running, -errno failed at init */
	char error[160];
	/* Written during init only; read by API threads afterwards. */
	int nhooks;
	struct sl_hook_status hooks[SL_MAX_HOOKS];
	/* BPF program fds whose bpf_stats /metrics reports (owned by the module). */
	int nprogs;
	int prog_fds[SL_MAX_PROGS];
	char prog_names[SL_MAX_PROGS][64];
};

/* Record a hook's state (init only). reason may be NULL. */
void sl_module_hook(struct sl_module *m, const char *name, int state, const char *reason);
struct bpf_program;
struct bpf_link;
/* Attach prog (init only) and record the hook `hook` as attached, or as
 * failed with errno's reason; an attached program is also registered for
 * bpf_stats. A program set not to load (bpf_program__autoload false) is
 * skipped silently: its hook state is the module's to record. *link gets
 * the link or NULL; the skeleton's destroy detaches it. */
void sl_module_attach(struct sl_module *m, struct bpf_program *prog, struct bpf_link **link,
		      const char *hook);
/* Sum over CPUs of element idx of a BPF_MAP_TYPE_PERCPU_ARRAY of __u64
 * counters (ncpus = libbpf_num_possible_cpus()). 0 when it cannot be read.
 * Safe from any thread. */
uint64_t sl_percpu_sum(int map_fd, uint32_t idx, int ncpus);
/* Register a BPF program for run-time/run-count metrics (init only). */
void sl_module_prog(struct sl_module *m, const char *name, int prog_fd);

const char *sl_hook_state_name(int state);

/* The registry: every module the agent knows, in start order. */
extern const struct sl_module_ops sl_proc_module;
extern const struct sl_module_ops sl_sched_module; /* src/modules/sched.c */

#endif
