/* stall module internals shared by stall.c (BPF, tick, events) and
 * stall_snap.c (snapshot, /metrics). Not a public interface. */
#ifndef SANDLENS_MODULES_STALL_INTERNAL_H
#define SANDLENS_MODULES_STALL_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>
#include <uthash.h>

#include "agent/module.h"
#include "cgroup/attr.h"
#include "common/snapref.h"
#include "modules/stall_hung.h"
#include "sandlens/stall.h"

#define STALL_PATH_LEN 256
#define STALL_IRQ_NAME_LEN 64

/* The module's config section (stall.*; docs/STALL.md "Configuration"). */
struct stall_cfg {
	uint64_t hung_threshold_ns;
	int hung_scan;
	uint64_t cpu_stall_threshold_ns;
	uint64_t cpu_stall_period_ns;
	int cpu_stall;
	int kernel_log;
	char kmsg_path[STALL_PATH_LEN];
	uint64_t max_containers;
	struct sl_cfg_strlist missing_hooks;
};

enum stall_src { STALL_SRC_SANDLENS = 0, STALL_SRC_KERNEL = 1 };

/* Hung-task figures of one container (or pod, or the host). */
struct stall_series {
	char key[SL_CONTAINER_ID_LEN]; /* container id, "pod/<uid>", "" = host */
	struct sl_attr at;
	uint64_t hung_now;   /* tasks whose episode is at or above the threshold, last scan */
	uint64_t events[2];  /* hung_task events by enum stall_src */
	UT_hash_handle hh;
};

struct stall_snap_irq {
	uint32_t irq;
	char name[STALL_IRQ_NAME_LEN];
	struct sl_stall_hist h; /* summed over CPUs */
};

struct stall_snap_series {
	struct sl_attr at;
	uint64_t hung_now;
	uint64_t events[2];
};

/* Immutable figures published each tick. */
struct stall_snap {
	struct sl_snap base;
	int ncpus;
	struct sl_stall_softirq *softirq; /* [ncpus * SL_STALL_NR_SOFTIRQS], cpu-major */
	uint64_t *stats;                  /* [ncpus * SL_STST_MAX], cpu-major */
	unsigned nirq;
	struct stall_snap_irq *irqs;
	unsigned irqs_cap; /* entries allocated in irqs */
	unsigned nseries;
	struct stall_snap_series *series;
	uint64_t klog[4];   /* kernel-log events by enum sl_stall_klog_kind - 1 */
	uint64_t klog_lost; /* records the kernel overwrote before they were read */
	uint64_t scan_ns;   /* last hung-task scan, ns */
	uint64_t scan_tasks; /* D-state tasks it found */
	uint64_t scan_hung;  /* of those at or above the threshold */
};

/* Module private state; fields below "poll loop" are the poll-loop
 * thread's only. */
struct stall_priv {
	struct stall_bpf *skel;
	struct sl_module *m;
	int ncpus;
	struct sl_snapref ref;
	_Atomic uint64_t decode_errors;

	/* poll loop */
	struct bpf_link **perf_links; /* [ncpus] */
	int *perf_fds;
	struct bpf_link *iter_link;
	struct sl_hung hung;
	struct sl_hung khung; /* kernel-reported episodes (khungtaskd repeats each check) */
	struct stall_series *series;
	unsigned nseries;
	struct sl_kmsg *kmsg;
	uint64_t klog[4], klog_lost;
	uint64_t scan_ns, scan_tasks, scan_hung;
	uint64_t tick_no;
	/* irq names (re-read every STALL_IRQ_NAMES_TICKS) */
	char (*irq_names)[STALL_IRQ_NAME_LEN]; /* [SL_STALL_MAX_IRQS] */
	struct sl_stall_hist *hist_buf;       /* one IRQ's per-CPU histograms [ncpus] */
	/* kernel symbols for stacks (loaded at the first stack) */
	const void *ksyms; /* const struct sl_ksyms * (sl_ksyms_shared_get) */
	int ksyms_state; /* 0 not loaded, 1 loaded, -1 unreadable/hidden */
	/* an RCU stall header waiting for its CPU lines */
	int rcu_pending;
	uint64_t rcu_ts_ns;
	json_t *rcu_fields;
	int rcu_cpu;
};

/* Declared Prometheus families, by index. */
enum stall_fam {
	SF_SOFTIRQ_LAT = 0,
	SF_SOFTIRQ_DUR,
	SF_HARDIRQ,
	SF_HUNG,
	SF_HUNG_EVENTS,
	SF_CPU_STALLS,
	SF_CPU_GAPS,
	SF_CPU_SAMPLES,
	SF_KLOG,
	SF_KLOG_LOST,
	SF_SCAN_SECONDS,
	SF_SCAN_TASKS,
	SF_NO_RAISE,
	SF_IRQ_RANGE,
	SF_RB_FAIL,
	STALL_NFAM,
};
extern const struct sl_prom_family sl_stall_families[STALL_NFAM];

/* Softirq vector names as /proc/softirqs prints them. */
extern const char *const sl_stall_softirq_names[SL_STALL_NR_SOFTIRQS];

/* Snapshot free (stall_snap.c). */
void stall_snap_free(struct sl_snap *s);
/* API-thread entry points (stall_snap.c). */
void stall_write_metrics(struct sl_module *m, struct sl_prom *p);
void stall_write_drops(struct sl_module *m, struct sl_prom *p);

#endif
