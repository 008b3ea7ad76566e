/* Runqueue wait of sandbox vCPU threads (issue 17 item 1: "the scheduler
 * reports runqueue latency of vCPU threads per sandbox, the host-side cause
 * of the steal time a guest sees"). docs/SCHED.md "Sandboxes".
 *
 * Source: the kernel's own per-task scheduler accounting,
 * /proc/<pid>/task/<tid>/schedstat (fs/proc/base.c proc_pid_schedstat;
 * Documentation/scheduler/sched-stats.rst): "<time on CPU ns> <run_delay
 * ns> <pcount>", i.e. task->se.sum_exec_runtime, sched_info.run_delay (time
 * spent runnable on a runqueue, waiting for a CPU) and sched_info.pcount
 * (timeslices run). run_delay of a vCPU thread is the same sched_info the
 * guest's steal time comes from (KVM's record_steal_time adds the delta
 * of current->sched_info.run_delay). Read when the sandboxes are scanned
 * (a request), never per event, and not in the BPF switch path.
 */
#ifndef SANDLENS_CGROUP_SANDBOX_RQ_H
#define SANDLENS_CGROUP_SANDBOX_RQ_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup/sandbox.h"

/* Parse one schedstat text ("a b c\n") into rq (known, oncpu_ns,
 * run_delay_ns, timeslices; interval fields untouched). "0 0 0" is what
 * the kernel prints when its accounting is off (!sched_info_on()): that,
 * garbage, a missing field, a negative or overflowing number, or trailing
 * junk gives -EINVAL and rq->known = 0. Returns 0 or -EINVAL. */
int sl_sbx_rq_parse(const char *text, struct sl_sbx_rq *rq);

/* Read the schedstat of every vCPU thread of s (under proc_root, NULL =
 * /proc): /proc/<vmm_pid> is opened once (O_DIRECTORY|O_NOFOLLOW), its
 * start time checked against s->vmm_start_time before and after the reads
 * (each file opened relative to it, O_NOFOLLOW|O_NONBLOCK), so a reused pid
 * is never counted: then every vCPU stays unknown. A thread whose file is
 * missing or unreadable is unknown (rq.known 0), never 0. Returns the number
 * of vCPUs with known figures. */
size_t sl_sbx_rq_read(const char *proc_root, struct sl_sbx *s);

/* Sums over the vCPUs of s: 1 and the sums when every vCPU is known (and
 * there is at least one), else 0. iv: the interval sums, 1 when every vCPU
 * has a known interval (iv_ns is then the longest). */
int sl_sbx_rq_sum(const struct sl_sbx *s, struct sl_sbx_rq *sum);

/* The interval tracker: the previous reading of each vCPU thread, keyed
 * by (VMM pid, VMM start time, tid), so an interval never spans two
 * processes. One per reader (the API keeps one); its own mutex, no lock
 * shared with the poll loop. */
struct sl_sbx_rq_track {
	pthread_mutex_t mu;
	struct sl_sbx_rq_ent *v;
	size_t n, cap;
	uint64_t min_ns; /* shortest interval (default 1 s) */
};

#define SL_SBX_RQ_MIN_INTERVAL_NS 1000000000ull

/* Initialise t with min_ns (0 = SL_SBX_RQ_MIN_INTERVAL_NS). */
void sl_sbx_rq_track_init(struct sl_sbx_rq_track *t, uint64_t min_ns);
void sl_sbx_rq_track_free(struct sl_sbx_rq_track *t);

/* Fill the interval fields of every known vCPU of l from t and now_ns
 * (CLOCK_MONOTONIC ns), then remember this reading: the interval is from
 * the last reading that is at least min_ns older (a reading less than
 * min_ns after it reports the interval last computed and keeps the
 * baseline). A thread seen for the first time, or whose counters went
 * down (a reset: the tid now names another thread), has no interval yet
 * (iv_known 0) and starts a new baseline. Threads not in l are forgotten.
 * Returns 0 or -ENOMEM (then intervals stay unknown). */
int sl_sbx_rq_track(struct sl_sbx_rq_track *t, struct sl_sbx_list *l, uint64_t now_ns);

#endif
