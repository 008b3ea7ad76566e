/* Private to src/task: the executor's objects (task.c, task_run.c,
 * caps.c). Locking: sl_tasks.mu guards the registry and every field of a
 * task marked (mu); a task's bpf_mu guards its BPF handle (taken by the
 * runner to read/destroy and by the reaper to destroy on deadline). Never
 * take mu while holding bpf_mu.
 * Lifetime: a task is freed when its last reference goes (refs). The runner
 * may use its task without a reference (the reaper joins the runner before
 * dropping the registry's one); any other thread that drops mu and then
 * uses the task again must hold a reference across that (task.c). */
#ifndef SANDLENS_TASK_INTERNAL_H
#define SANDLENS_TASK_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <uthash.h>

#include "task/task.h"
#include "task/task_bpf.h"
#include "task/task_store.h"

struct sl_symbolizer;

/* Result name of the pprof rendering without kernel addresses (served to
 * callers who may not see them; profile.h sl_kaddrs_visible). */
#define SL_TASK_PPROF_NOKADDRS "pprof_nokaddrs"

struct sl_task {
	char id[SL_TASK_ID_LEN];
	struct sl_tasks *ts;
	struct sl_task_spec spec;
	/* (mu) */
	int status;
	char reason[256];
	int64_t created_ns, started_ns, ended_ns; /* wall clock */
	uint64_t created_mono, deadline_mono;     /* CLOCK_MONOTONIC ns */
	int cancel;
	char cancel_reason[128];
	int deleted;
	int delete_claimed; /* a DELETE holds it (waiting for the runner); later ones get -ENOENT */
	int refs;            /* the registry's reference (dropped by the reaper
			      * when it forgets the task) + one per API thread
			      * that keeps using t with mu released (DELETE's
			      * wait); the last one frees t (task.c) */
	int finished;        /* the runner has returned */
	int reaped;          /* ended failed by the reaper at its deadline; the
			      * runner's own finish() then changes nothing */
	uint64_t seq;        /* progress sequence */
	json_t *progress;    /* owned */
	json_t *result;      /* summary of the result, owned */
	json_t *target_info; /* resolved target, owned */
	char event[16];
	uint64_t cpu_ns;     /* CPU time of the runner thread, set when it ends */
	/* runner */
	pthread_t thread;
	/* (bpf_mu) */
	pthread_mutex_t bpf_mu;
	struct sl_task_bpf *bpf;
	UT_hash_handle hh;
};

struct sl_tasks {
	struct sl_tasks_config cfg;
	pthread_mutex_t mu;
	pthread_cond_t cond; /* CLOCK_MONOTONIC; runners wait on it, delete waits for teardown */
	struct sl_task *tasks; /* (mu) every task of this run not yet forgotten */
	size_t active;         /* (mu) pending + running */
	int shutdown;          /* (mu) */
	int test_stall;        /* (mu) sl_tasks_test_stall_runners (tests only) */
	int test_reaper_wins;  /* (mu) sl_tasks_test_delete_lets_reaper_win (tests only) */
	pthread_t reaper;
	int reaper_started;
	struct sl_task_store *store;
	struct sl_symbolizer *sym;
	int own_sym;
	/* capabilities: immutable after sl_tasks_new */
	int supported[SL_TASK_NTYPES];
	char why[SL_TASK_NTYPES][256];
	char event_on_cpu[32];
	/* follow notification */
	void (*notify)(void *);
	void *notify_ctx;
	_Atomic uint64_t created_total, refused_total, reaped_total;
};

/* Runner thread body (task_run.c); arg is the task. */
void *sl_task_runner(void *arg);

/* Record JSON of t (docs/TASKS.md). Caller holds ts->mu. New reference. */
json_t *sl_task_record(const struct sl_task *t);

/* Save t's record in the store (takes and releases ts->mu to build it). */
void sl_task_save(struct sl_tasks *ts, struct sl_task *t);

/* Call the follow notifier (no lock held). */
void sl_tasks_notify(struct sl_tasks *ts);

/* Destroy t's BPF object if it still has one (takes bpf_mu). Returns 1
 * when something was destroyed. */
int sl_task_teardown(struct sl_task *t);

/* Probe every type's capability (caps.c); fills ts->supported/why. */
void sl_tasks_probe(struct sl_tasks *ts);

uint64_t sl_task_mono_ns(void);

#endif
