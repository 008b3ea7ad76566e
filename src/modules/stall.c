/* stall module, user half: declarations (config, kinds, hooks, ring
 * buffer), load/attach of bpf/stall.bpf.c with per-hook probing, the
 * cpu_stall and kernel hung-task records, the per-tick hung-task scan (the
 * iter/task program), the kernel-log decoders' events, and the snapshot
 * the read side serves (stall_snap.c). Definitions: docs/STALL.md. */
#include "modules/stall_internal.h"
#include "modules/stall_decode.h"
#include "modules/stall_kmsg.h"
#include "common/kmsg.h"
#include "common/log.h"
#include "profile/profile_internal.h"
#include "profile/symbolize_proc.h"
#include "stall.skel.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define IRQ_NAMES_TICKS 30 /* /sys/kernel/irq/<n>/actions re-read this often */
#define DTASK_BATCH 64
/* kernel-reported episodes not reported again within this many ticks are
 * forgotten (khungtaskd checks every hung_task_check_interval_secs, at
 * most hung_task_timeout_secs: 120 s by default) */
#define KHUNG_SWEEP_TICKS 600

/* ---------- declarations ---------- */

#define F(f) SL_CFG_FIELD(struct stall_cfg, f)
static const struct sl_cfg_key stall_keys[] = {
	{"hung_threshold", SL_CFG_DURATION_NS, F(hung_threshold_ns), "10s", 1000000000ULL, 3600ULL * 1000000000ULL,
	 "a task in uninterruptible sleep (D) without running for this long is a hung_task event (1s..1h)"},
	{"hung_scan", SL_CFG_BOOL, F(hung_scan), "true", 0, 0,
	 "run sandlens' own hung-task scan (a BPF task iterator each tick)"},
	{"cpu_stall_threshold", SL_CFG_DURATION_NS, F(cpu_stall_threshold_ns), "10ms", 1000000ULL, 10ULL * 1000000000ULL,
	 "a CPU that takes its cpu-clock timer interrupt this much late (steal time excluded) is a cpu_stall event "
	 "(1ms..10s)"},
	{"cpu_stall_period", SL_CFG_DURATION_NS, F(cpu_stall_period_ns), "1ms", 100000ULL, 100000000ULL,
	 "cpu-clock sampling period per CPU (100us..100ms; at most half of cpu_stall_threshold)"},
	{"cpu_stall", SL_CFG_BOOL, F(cpu_stall), "true", 0, 0, "sample every CPU's cpu-clock to find CPU stalls"},
	{"kernel_log", SL_CFG_BOOL, F(kernel_log), "true", 0, 0,
	 "read the kernel log for soft lockups, hard lockups and RCU stalls (needs CAP_SYSLOG)"},
	{"kmsg_path", SL_CFG_STR, F(kmsg_path), "/dev/kmsg", 0, 0,
	 "testing: the kernel log to read; a path other than /dev/kmsg is a fixture file read from its start"},
	{"max_containers", SL_CFG_UINT, F(max_containers), "512", 1, 65536,
	 "containers with hung-task series; further ones are counted in the host series"},
	{"missing_hooks", SL_CFG_STRLIST, F(missing_hooks), "", 0, 0,
	 "testing: hooks (e.g. sched_process_hang) to treat as absent from the kernel: the degraded path"},
};
#undef F

static const struct sl_field hung_fields[] = {
	{"tid", SL_FT_UINT, 0, "thread id of the blocked task"},
	{"source", SL_FT_STR, 0, "sandlens (the module's own scan) | kernel (sched:sched_process_hang from khungtaskd)"},
	{"blocked_ns", SL_FT_UINT, 0,
	 "ns the task has been blocked without running: sandlens, a lower bound (scan resolution: one tick); kernel, "
	 "kernel.hung_task_timeout_secs"},
	{"threshold_ns", SL_FT_UINT, 0, "the threshold that was crossed, ns"},
	{"state", SL_FT_UINT, 0, "task->__state bits (TASK_UNINTERRUPTIBLE 0x2, TASK_WAKEKILL 0x100)"},
	{"killable", SL_FT_BOOL, 0, "a TASK_KILLABLE sleep (khungtaskd ignores those; sandlens reports them)"},
	{"kthread", SL_FT_BOOL, 0, "a kernel thread"},
	{"switches", SL_FT_UINT, 0, "its context switches (nvcsw + nivcsw), unchanged over the episode"},
	{"kernel_stack", SL_FT_ARRAY, SL_FF_ADMIN, "kernel stack where it sleeps, innermost first (symbol+0xoff [module])"},
	{"stack_error", SL_FT_STR, SL_FF_OPTIONAL, "why kernel_stack is empty"},
};

static const struct sl_field cpu_fields[] = {
	{"late_ns", SL_FT_UINT, 0,
	 "ns the cpu-clock timer interrupt was taken after its expiry: the CPU had interrupts off at least this long"},
	{"gap_ns", SL_FT_UINT, 0, "ns since the CPU's previous cpu-clock sample"},
	{"steal_ns", SL_FT_UINT, 0, "hypervisor steal time the kernel accounted on the CPU over the gap, ns"},
	{"threshold_ns", SL_FT_UINT, 0, "stall.cpu_stall_threshold, ns"},
	{"period_ns", SL_FT_UINT, 0, "stall.cpu_stall_period, ns"},
	{"task", SL_FT_OBJ, 0, "{pid, comm, cgroup_id, container_id, pod_uid, runtime}: the task running when it resumed"},
	{"kernel_stack", SL_FT_ARRAY, SL_FF_ADMIN,
	 "kernel stack of the resuming sample (where interrupts came back on), innermost first"},
	{"stack_error", SL_FT_STR, SL_FF_OPTIONAL, "why kernel_stack is empty (user: resumed in user mode)"},
};

static const struct sl_field soft_fields[] = {
	{"stuck_s", SL_FT_UINT, 0, "seconds the CPU was stuck, as the watchdog printed"},
	{"lockup_pid", SL_FT_INT, SL_FF_OPTIONAL, "pid of the task on the CPU (the [comm:pid] of the line)"},
	{"lockup_comm", SL_FT_STR, SL_FF_OPTIONAL, "its comm"},
	{"message", SL_FT_STR, 0, "the kernel-log line"},
};

static const struct sl_field hard_fields[] = {
	{"message", SL_FT_STR, 0, "the kernel-log line"},
};

static const struct sl_field rcu_fields[] = {
	{"flavor", SL_FT_STR, 0, "RCU flavor as the kernel names it (rcu_sched, rcu_preempt, ...)"},
	{"how", SL_FT_STR, 0, "self_detected | other_cpus | expedited"},
	{"cpus", SL_FT_ARRAY, 0, "CPUs of the CPU lines that followed the header (may be empty)"},
	{"message", SL_FT_STR, 0, "the header line"},
};

#define N(a) (sizeof(a) / sizeof(a[0]))
static const struct sl_event_kind stall_kinds[] = {
	{.name = "hung_task", .severity = SL_SEV_WARNING, .fields = hung_fields, .nfields = N(hung_fields),
	 .details = "{source} tid={tid} blocked {blocked_ns:dur}{?killable} (killable){/}{?kthread} (kthread){/}",
	 .doc = "a task stayed in uninterruptible sleep without running for stall.hung_threshold (or khungtaskd said so)"},
	{.name = "cpu_stall", .severity = SL_SEV_WARNING, .fields = cpu_fields, .nfields = N(cpu_fields),
	 .details = "timer interrupt {late_ns:dur} late{?steal_ns} (steal {steal_ns:dur}){/} in "
		    "{task.pid}({task.comm})",
	 .doc = "a CPU took a timer interrupt more than stall.cpu_stall_threshold late (interrupts off)"},
	{.name = "soft_lockup", .severity = SL_SEV_ERROR, .fields = soft_fields, .nfields = N(soft_fields),
	 .details = "stuck {stuck_s}s{?lockup_pid} in {lockup_comm}:{lockup_pid}{/}",
	 .doc = "the kernel's soft-lockup watchdog fired (kernel log)"},
	{.name = "hard_lockup", .severity = SL_SEV_CRITICAL, .fields = hard_fields, .nfields = N(hard_fields),
	 .details = "{message}", .doc = "the kernel's hard-lockup (NMI) watchdog fired (kernel log)"},
	{.name = "rcu_stall", .severity = SL_SEV_ERROR, .fields = rcu_fields, .nfields = N(rcu_fields),
	 .details = "{flavor} {how}", .doc = "the kernel reported an RCU CPU stall (kernel log)"},
};
enum { K_HUNG = 0, K_CPU, K_SOFT, K_HARD, K_RCU };

/* A hung task freezes its container's flight recorder (ops.kind_freezes,
 * docs/FLIGHT.md); the CPU-wide kinds have no container. */
static int stall_kind_freezes(unsigned kind, const json_t *fields)
{
	(void)fields;
	return kind == K_HUNG;
}

/* Hooks, in enum order. */
enum {
	H_RAISE = 0, H_ENTRY, H_EXIT, H_IRQ_ENTRY, H_IRQ_EXIT, H_PERF, H_HANG, H_ITER, H_KMSG, NHOOKS,
};
static const struct sl_hook_decl stall_hooks[NHOOKS] = {
	{"tp_btf/softirq_raise", "softirq raise->entry latency per CPU and vector"},
	{"tp_btf/softirq_entry", "softirq latency and duration per CPU and vector"},
	{"tp_btf/softirq_exit", "softirq duration per CPU and vector"},
	{"tp_btf/irq_handler_entry", "hardirq handler duration per IRQ"},
	{"tp_btf/irq_handler_exit", "hardirq handler duration per IRQ"},
	{"perf_event/cpu-clock", "CPU stalls: lateness of per-CPU cpu-clock timer interrupts"},
	{"tp_btf/sched_process_hang", "hung_task events from khungtaskd"},
	{"iter/task", "sandlens' own hung-task scan (each tick)"},
	{"kmsg", "soft_lockup, hard_lockup, rcu_stall events from the kernel log"},
};
/* tracepoint names (NULL: not a tracepoint) and the hook of the pair */
static const struct {
	const char *tp, *short_name;
	int pair;
} hook_tab[NHOOKS] = {
	{"softirq_raise", "softirq_raise", -1}, {"softirq_entry", "softirq_entry", -1},
	{"softirq_exit", "softirq_exit", H_ENTRY}, {"irq_handler_entry", "irq_handler_entry", H_IRQ_EXIT},
	{"irq_handler_exit", "irq_handler_exit", H_IRQ_ENTRY}, {NULL, "cpu-clock", -1},
	{"sched_process_hang", "sched_process_hang", -1}, {NULL, "task_iter", -1}, {NULL, "kmsg", -1},
};

static int on_record(void *ctx, void *data, size_t size);
static const struct sl_ringbuf_decl stall_ringbufs[] = {{"stall_events", on_record}};

const char *const sl_stall_softirq_names[SL_STALL_NR_SOFTIRQS] = {
	"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
};

static int stall_cfg_check(const void *cfg, char *err, size_t errlen)
{
	const struct stall_cfg *c = cfg;

	if (c->cpu_stall_period_ns * 2 > c->cpu_stall_threshold_ns) {
		snprintf(err, errlen,
			 "stall.cpu_stall_period: %llu (ns) is more than half of stall.cpu_stall_threshold %llu (ns)",
			 (unsigned long long)c->cpu_stall_period_ns, (unsigned long long)c->cpu_stall_threshold_ns);
		return -1;
	}
	if (c->kmsg_path[0] != '/') {
		snprintf(err, errlen, "stall.kmsg_path: '%s' is not an absolute path", c->kmsg_path);
		return -1;
	}
	for (unsigned i = 0; i < c->missing_hooks.n && i < SL_CFG_STRLIST_MAX; i++) {
		unsigned h = 0;
		while (h < NHOOKS && strcmp(hook_tab[h].short_name, c->missing_hooks.v[i]))
			h++;
		if (h < NHOOKS)
			continue;
		size_t n = (size_t)snprintf(err, errlen, "stall.missing_hooks[%u]: '%s' is not a stall hook (known:", i,
					    c->missing_hooks.v[i]);
		for (h = 0; h < NHOOKS && n < errlen; h++)
			n += (size_t)snprintf(err + n, errlen - n, "%s %s", h ? "," : "", hook_tab[h].short_name);
		if (n < errlen)
			snprintf(err + n, errlen - n, ")");
		return -1;
	}
	return 0;
}

static int listed(const struct sl_cfg_strlist *l, const char *name)
{
	for (unsigned i = 0; i < l->n && i < SL_CFG_STRLIST_MAX; i++)
		if (!strcmp(l->v[i], name))
			return 1;
	return 0;
}

/* ---------- kernel stacks ---------- */

static void ksyms_load(struct stall_priv *sp)
{
	if (sp->ksyms_state)
		return;
	sp->ksyms = sl_ksyms_shared_get("/proc/kallsyms", NULL);
	sp->ksyms_state = sp->ksyms ? 1 : -1;
}

/* The kernel stack as strings (kallsyms loaded at the first stack). */
static json_t *stack_json(struct stall_priv *sp, const uint64_t *ips, int bytes, const char **err)
{
	if (bytes > 0)
		ksyms_load(sp);
	return sl_stall_stack_json(sp->ksyms_state == 1 ? sp->ksyms : NULL, ips, bytes, err);
}

/* ---------- hung-task series ---------- */

static struct stall_series *series_of(struct stall_priv *sp, const struct sl_attr *at)
{
	const struct stall_cfg *c = sl_module_cfg(sp->m);
	struct stall_series *s;
	char key[SL_CONTAINER_ID_LEN];
	int pod = at->is_container == SL_NO && at->pod_uid[0];
	int host = at->is_container != SL_YES && !pod;

	if (pod)
		snprintf(key, sizeof(key), "pod/%s", at->pod_uid);
	else
		snprintf(key, sizeof(key), "%s", host ? "" : at->container_id);
	HASH_FIND_STR(sp->series, key, s);
	if (s)
		return s;
	if (key[0] && sp->nseries >= c->max_containers) {
		struct sl_attr h;
		memset(&h, 0, sizeof(h));
		snprintf(h.runtime, sizeof(h.runtime), "host");
		return series_of(sp, &h);
	}
	if (!(s = calloc(1, sizeof(*s))))
		return NULL;
	snprintf(s->key, sizeof(s->key), "%s", key);
	if (!host)
		s->at = *at;
	else
		snprintf(s->at.runtime, sizeof(s->at.runtime), "host");
	if (pod)
		s->at.container_id[0] = 0;
	HASH_ADD_STR(sp->series, key, s);
	if (key[0])
		sp->nseries++;
	return s;
}

static struct stall_series *series_of_task(struct stall_priv *sp, const struct sl_task_id *t)
{
	struct sl_attr at;

	memset(&at, 0, sizeof(at));
	sl_module_resolve_task(sp->m, t, &at, NULL);
	return series_of(sp, &at);
}

/* ---------- events ---------- */

static json_t *hung_json(struct stall_priv *sp, const char *source, uint32_t tid, uint64_t blocked, uint64_t thr,
			 uint32_t state, uint32_t flags, int have_flags, uint64_t switches, const uint64_t *ips, int bytes)
{
	const char *err;
	json_t *st = stack_json(sp, ips, bytes, &err);

	return sl_stall_hung_fields(source, tid, blocked, thr, state, flags, have_flags, switches, st, err);
}

static uint64_t hung_timeout_ns(void)
{
	char buf[32] = "";
	int fd = open("/proc/sys/kernel/hung_task_timeout_secs", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strtoull(buf, NULL, 10) * 1000000000ULL;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct sl_module *m = ctx;
	struct stall_priv *sp = m->priv;
	const struct sl_hdr *h = data;
	struct sl_subject subj;

	if (size < sizeof(*h)) {
		sl_module_decode_error(m);
		return 0;
	}
	memset(&subj, 0, sizeof(subj));
	if (h->type == SL_EV_STALL_CPU && size >= sizeof(struct sl_stall_cpu_event)) {
		const struct sl_stall_cpu_event *e = data;
		const struct stall_cfg *c = sl_module_cfg(m);
		const char *err;
		json_t *st = stack_json(sp, (const uint64_t *)e->kstack, e->kstack_bytes, &err);
		json_t *o = sl_stall_cpu_fields(e, size, c->cpu_stall_threshold_ns, sl_module_task_json(m, &e->task), st, err);
		if (!o) {
			sl_module_decode_error(m);
			return 0;
		}
		subj.kind = SL_SUBJ_CPU;
		subj.cpu = (int)e->hdr.cpu;
		sl_module_emit(m, K_CPU, e->hdr.ts_ns, &subj, o, 1);
		return 0;
	}
	if (h->type == SL_EV_STALL_HANG && size >= sizeof(struct sl_stall_hang_event)) {
		const struct sl_stall_hang_event *e = data;
		uint64_t to = hung_timeout_ns(), b;
		int over;
		/* khungtaskd reports a task at every check while it stays
		 * blocked: one event per episode (same tid, same switch count).
		 * The episode table is swept every KHUNG_SWEEP_TICKS ticks:
		 * an entry the kernel did not report again since is forgotten. */
		if (sl_hung_observe(&sp->khung, e->task.tid, e->switches, e->hdr.ts_ns, 0, &b, &over) != 1)
			return 0;
		struct stall_series *s = series_of_task(sp, &e->task);
		if (s)
			s->events[STALL_SRC_KERNEL]++;
		json_t *o = hung_json(sp, "kernel", e->task.tid, to, to, e->state, 0, 0, e->switches, (const uint64_t *)e->kstack,
				      e->kstack_bytes);
		subj.kind = SL_SUBJ_TASK;
		subj.task = &e->task;
		sl_module_emit(m, K_HUNG, e->hdr.ts_ns, &subj, o, 1);
		return 0;
	}
	sl_module_decode_error(m);
	return 0;
}

/* The per-tick scan: every D-state task from the iterator. */
static void hung_scan(struct stall_priv *sp, uint64_t now)
{
	const struct stall_cfg *c = sl_module_cfg(sp->m);
	struct sl_stall_dtask r[DTASK_BATCH];
	struct stall_series *s, *tmp;
	uint64_t t0 = sl_mono_ns(), tasks = 0, hung = 0;
	int fd;

	if (!sp->iter_link)
		return;
	fd = bpf_iter_create(bpf_link__fd(sp->iter_link));
	if (fd < 0)
		return;
	HASH_ITER(hh, sp->series, s, tmp)
		s->hung_now = 0;
	sl_hung_begin(&sp->hung);
	for (;;) {
		ssize_t n = read(fd, r, sizeof(r));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (size_t i = 0; i < (size_t)n / sizeof(r[0]); i++) {
			const struct sl_stall_dtask *d = &r[i];
			uint64_t blocked;
			int over, rc;
			tasks++;
			rc = sl_hung_observe(&sp->hung, d->task.tid, d->switches, now, c->hung_threshold_ns, &blocked,
					     &over);
			if (!over)
				continue;
			hung++;
			s = series_of_task(sp, &d->task);
			if (s)
				s->hung_now++;
			if (rc != 1)
				continue;
			if (s)
				s->events[STALL_SRC_SANDLENS]++;
			struct sl_subject subj = {.kind = SL_SUBJ_TASK, .task = &d->task};
			json_t *o = hung_json(sp, "sandlens", d->task.tid, blocked, c->hung_threshold_ns, d->state,
					      d->flags, 1, d->switches, (const uint64_t *)d->kstack, d->kstack_bytes);
			sl_module_emit(sp->m, K_HUNG, now, &subj, o, 1);
		}
	}
	close(fd);
	sl_hung_end(&sp->hung);
	sp->scan_tasks = tasks;
	sp->scan_hung = hung;
	sp->scan_ns = sl_mono_ns() - t0;
}

/* ---------- kernel log ---------- */

static void rcu_flush(struct stall_priv *sp)
{
	struct sl_subject subj = {.kind = SL_SUBJ_CPU};

	if (!sp->rcu_pending)
		return;
	subj.cpu = sp->rcu_cpu;
	sl_module_emit(sp->m, K_RCU, sp->rcu_ts_ns, &subj, sp->rcu_fields, 1);
	sp->rcu_fields = NULL;
	sp->rcu_pending = 0;
	sp->klog[SL_KLOG_RCU_STALL - 1]++;
}

static void klog_record(struct stall_priv *sp, const struct sl_kmsg_rec *r)
{
	struct sl_stall_klog k;
	struct sl_subject subj = {.kind = SL_SUBJ_CPU};
	uint64_t ts = r->ts_us * 1000;
	int kind = sl_stall_klog_decode(r->msg, &k);
	json_t *o;

	if (kind == SL_KLOG_RCU_CPU && sp->rcu_pending) {
		json_array_append_new(json_object_get(sp->rcu_fields, "cpus"), json_integer(k.cpu));
		if (sp->rcu_cpu < 0)
			sp->rcu_cpu = k.cpu;
		return;
	}
	if (kind == SL_KLOG_NONE || kind == SL_KLOG_RCU_CPU) {
		/* the CPU lines end at the first other line */
		rcu_flush(sp);
		return;
	}
	rcu_flush(sp);
	if (!(o = sl_stall_klog_fields(&k, r->msg)))
		return;
	subj.cpu = k.cpu;
	sp->klog[kind - 1]++;
	if (kind == SL_KLOG_SOFT_LOCKUP) {
		sl_module_emit(sp->m, K_SOFT, ts, &subj, o, 1);
	} else if (kind == SL_KLOG_HARD_LOCKUP) {
		sl_module_emit(sp->m, K_HARD, ts, &subj, o, 1);
	} else { /* RCU header: wait for its CPU lines (counted at the flush) */
		sp->klog[kind - 1]--;
		sp->rcu_fields = o;
		sp->rcu_pending = 1;
		sp->rcu_ts_ns = ts;
		sp->rcu_cpu = -1;
	}
}

static void klog_drain(struct stall_priv *sp)
{
	struct sl_kmsg_rec r;
	unsigned n = 0;

	if (!sp->kmsg)
		return;
	/* bounded per tick: a log flood must not hold the poll loop */
	while (n++ < 4096) {
		int rc = sl_kmsg_next(sp->kmsg, &r);
		if (rc <= 0)
			break;
		if (r.facility != 0) /* kernel messages only (a user write to /dev/kmsg is facility 1) */
			continue;
		klog_record(sp, &r);
	}
	/* a header whose CPU lines did not come in this drain: emit now */
	rcu_flush(sp);
	sp->klog_lost = sl_kmsg_lost(sp->kmsg);
}

/* ---------- snapshot ---------- */

/* The names of the IRQs that exist: the numeric entries of
 * /sys/kernel/irq (kernel/irq/irqdesc.c, one directory per allocated
 * descriptor), each one's "actions" file (the handlers' names, comma
 * separated). One directory read instead of an open per possible IRQ. */
static void irq_names_read(struct stall_priv *sp)
{
	char path[64], buf[STALL_IRQ_NAME_LEN];
	DIR *d = opendir("/sys/kernel/irq");
	struct dirent *de;

	for (unsigned i = 0; i < SL_STALL_MAX_IRQS; i++)
		sp->irq_names[i][0] = 0;
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		unsigned long i = strtoul(de->d_name, &end, 10);
		int fd;
		ssize_t n;
		if (!isdigit((unsigned char)de->d_name[0]) || *end || i >= SL_STALL_MAX_IRQS)
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/irq/%lu/actions", i);
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		buf[strcspn(buf, "\n")] = 0;
		snprintf(sp->irq_names[i], sizeof(sp->irq_names[i]), "%s", buf);
	}
	closedir(d);
}

struct irq_read {
	struct stall_priv *sp;
	struct stall_snap *s;
	int nc;
};

/* One softirq vector's per-CPU counters (sl_percpu_array_each), kept per
 * CPU. */
static int softirq_one(void *ctx, uint32_t vec, const void *vals)
{
	struct irq_read *r = ctx;
	const struct sl_stall_softirq *v = vals;
	for (int c = 0; c < r->nc; c++)
		r->s->softirq[(size_t)c * SL_STALL_NR_SOFTIRQS + vec] = v[c];
	return 0;
}

/* One counter's per-CPU values (sl_percpu_array_each), kept per CPU. */
static int stat_one(void *ctx, uint32_t i, const void *vals)
{
	struct irq_read *r = ctx;
	const uint64_t *v = vals;
	for (int c = 0; c < r->nc; c++)
		r->s->stats[(size_t)c * SL_STST_MAX + i] = v[c];
	return 0;
}

/* One IRQ's per-CPU histograms (sl_percpu_array_each): summed, kept when
 * it fired. */
static int irq_one(void *ctx, uint32_t i, const void *vals)
{
	struct irq_read *r = ctx;
	const struct sl_stall_hist *hv = vals;
	struct stall_snap_irq *o = &r->s->irqs[r->s->nirq];
	uint64_t cnt = 0;

	if (i >= SL_STALL_MAX_IRQS || r->s->nirq >= r->s->irqs_cap)
		return 0;
	memset(o, 0, sizeof(*o));
	for (int c = 0; c < r->nc; c++) {
		for (unsigned k = 0; k < SL_STALL_SLOTS; k++)
			o->h.slots[k] += hv[c].slots[k];
		o->h.sum_ns += hv[c].sum_ns;
	}
	for (unsigned k = 0; k < SL_STALL_SLOTS; k++)
		cnt += o->h.slots[k];
	if (!cnt)
		return 0;
	o->irq = i;
	snprintf(o->name, sizeof(o->name), "%s", r->sp->irq_names[i]);
	r->s->nirq++;
	return 0;
}

static struct stall_snap *build_snap(struct stall_priv *sp)
{
	int nc = sp->ncpus;
	struct stall_snap *s = calloc(1, sizeof(*s));
	struct stall_series *se, *tmp;
	int ffd, hfd, sfd;

	if (!s)
		return NULL;
	sl_snap_init(&s->base, stall_snap_free);
	s->ncpus = nc;
	s->softirq = calloc((size_t)nc * SL_STALL_NR_SOFTIRQS, sizeof(*s->softirq));
	s->stats = calloc((size_t)nc * SL_STST_MAX, sizeof(*s->stats));
	/* one copy of the bitmap the BPF side sets (irq_seen): counted here,
	 * walked below */
	_Static_assert(SL_STALL_MAX_IRQS % 64 == 0, "irq_seen words");
	uint64_t seen[SL_STALL_MAX_IRQS / 64];
	unsigned nseen = 0;
	for (unsigned w = 0; w < SL_STALL_MAX_IRQS / 64; w++) {
		seen[w] = __atomic_load_n(&sp->skel->bss->irq_seen[w], __ATOMIC_RELAXED);
		nseen += (unsigned)__builtin_popcountll(seen[w]);
	}
	s->irqs = calloc(nseen + 1, sizeof(*s->irqs));
	s->irqs_cap = nseen;
	s->series = calloc(HASH_COUNT(sp->series) + 1, sizeof(*s->series));
	if (!s->softirq || !s->stats || !s->irqs || !s->series) {
		stall_snap_free(&s->base);
		return NULL;
	}
	ffd = bpf_map__fd(sp->skel->maps.stall_softirq);
	hfd = bpf_map__fd(sp->skel->maps.stall_hardirq);
	sfd = bpf_map__fd(sp->skel->maps.stall_stats);
	{
		/* one batch each (they were one bpf() call per vector and counter) */
		struct irq_read r = { .sp = sp, .s = s, .nc = nc };
		_Static_assert(sizeof(struct sl_stall_softirq) % 8 == 0, "per-CPU values are 8-byte aligned");
		sl_percpu_array_each(ffd, SL_STALL_NR_SOFTIRQS, sizeof(struct sl_stall_softirq), nc,
				     SL_STALL_NR_SOFTIRQS, softirq_one, &r);
		sl_percpu_array_each(sfd, SL_STST_MAX, sizeof(uint64_t), nc, SL_STST_MAX, stat_one, &r);
	}
	{
		/* only the IRQs that fired (irq_seen, set by stall_irq_exit):
		 * a few dozen lookups instead of copying SL_STALL_MAX_IRQS x
		 * CPUs histograms every tick */
		struct irq_read r = { .sp = sp, .s = s, .nc = nc };
		_Static_assert(sizeof(struct sl_stall_hist) % 8 == 0, "per-CPU values are 8-byte aligned");
		for (unsigned w = 0; w < SL_STALL_MAX_IRQS / 64 && sp->hist_buf; w++) {
			uint64_t bits = seen[w];
			while (bits) {
				uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(bits);
				bits &= bits - 1;
				if (bpf_map_lookup_elem(hfd, &i, sp->hist_buf) == 0)
					irq_one(&r, i, sp->hist_buf);
			}
		}
	}
	HASH_ITER(hh, sp->series, se, tmp) {
		struct stall_snap_series *o = &s->series[s->nseries++];
		o->at = se->at;
		o->hung_now = se->hung_now;
		o->events[0] = se->events[0];
		o->events[1] = se->events[1];
	}
	memcpy(s->klog, sp->klog, sizeof(s->klog));
	s->klog_lost = sp->klog_lost;
	s->scan_ns = sp->scan_ns;
	s->scan_tasks = sp->scan_tasks;
	s->scan_hung = sp->scan_hung;
	return s;
}

static void stall_tick(struct sl_module *m, uint64_t now_ns)
{
	struct stall_priv *sp = m->priv;
	struct stall_snap *s;

	if (!sp || !sp->skel)
		return;
	if (sp->tick_no++ % IRQ_NAMES_TICKS == 0)
		irq_names_read(sp);
	if (sp->tick_no % KHUNG_SWEEP_TICKS == 0) {
		/* keep what the kernel reported since the last sweep */
		sl_hung_end(&sp->khung);
		sl_hung_begin(&sp->khung);
	}
	hung_scan(sp, now_ns);
	klog_drain(sp);
	if ((s = build_snap(sp)))
		sl_snapref_publish(&sp->ref, &s->base);
}

/* ---------- lifecycle ---------- */

static int perf_open(int cpu, uint64_t period_ns)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = period_ns;
	a.freq = 0;
	/* pinned: a flexible CPU event is scheduled out (its hrtimer stopped)
	 * whenever a task with its own perf events switches in, which showed
	 * as period-aligned gaps of 10+ ms */
	a.pinned = 1;
	return (int)syscall(__NR_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void attach_perf(struct sl_module *m, struct stall_priv *sp, const struct stall_cfg *c)
{
	struct bpf_program *prog = sp->skel->progs.stall_tick;
	int ok = 0, first_err = 0;
	char why[160];

	sp->perf_links = calloc((size_t)sp->ncpus, sizeof(*sp->perf_links));
	sp->perf_fds = calloc((size_t)sp->ncpus, sizeof(*sp->perf_fds));
	if (!sp->perf_links || !sp->perf_fds) {
		sl_module_hook(m, stall_hooks[H_PERF].name, SL_HOOK_FAILED, "out of memory");
		return;
	}
	for (int cpu = 0; cpu < sp->ncpus; cpu++) {
		sp->perf_fds[cpu] = -1;
		int fd = perf_open(cpu, c->cpu_stall_period_ns);
		if (fd < 0) {
			if (errno != ENODEV && !first_err) /* ENODEV: a possible CPU that is offline */
				first_err = errno;
			continue;
		}
		sp->perf_links[cpu] = bpf_program__attach_perf_event(prog, fd);
		if (!sp->perf_links[cpu]) {
			if (!first_err)
				first_err = errno;
			close(fd);
			continue;
		}
		sp->perf_fds[cpu] = fd;
		ok++;
	}
	if (!ok) {
		snprintf(why, sizeof(why), "perf_event_open cpu-clock: %s: CPU stalls absent",
			 strerror(first_err ? first_err : ENODEV));
		sl_module_hook(m, stall_hooks[H_PERF].name, SL_HOOK_FAILED, why);
		return;
	}
	sl_module_hook(m, stall_hooks[H_PERF].name, SL_HOOK_ATTACHED, NULL);
	sl_module_prog(m, bpf_program__name(prog), bpf_program__fd(prog));
}

static int stall_init(struct sl_module *m)
{
	const struct stall_cfg *c = sl_module_cfg(m);
	struct stall_priv *sp = calloc(1, sizeof(*sp));
	struct stall_bpf *s;
	struct bpf_program *progs[NHOOKS];
	char why[NHOOKS][160];
	int absent[NHOOKS] = {0}, err, nattached = 0;
	struct btf *vmlinux;

	if (!sp)
		return -ENOMEM;
	m->priv = sp;
	sp->m = m;
	sl_snapref_init(&sp->ref);
	sp->ncpus = libbpf_num_possible_cpus();
	if (sp->ncpus <= 0) {
		snprintf(m->error, sizeof(m->error), "cannot count possible CPUs");
		return -EINVAL;
	}
	if (!(sp->irq_names = calloc(SL_STALL_MAX_IRQS, sizeof(*sp->irq_names))) ||
	    !(sp->hist_buf = calloc((size_t)sp->ncpus, sizeof(*sp->hist_buf))))
		return -ENOMEM;
	s = sp->skel = stall_bpf__open();
	if (!s) {
		err = -errno;
		snprintf(m->error, sizeof(m->error), "open BPF object: %s", strerror(-err));
		return err;
	}
	struct bpf_program *p[NHOOKS] = {s->progs.stall_softirq_raise, s->progs.stall_softirq_entry,
					 s->progs.stall_softirq_exit, s->progs.stall_irq_entry,
					 s->progs.stall_irq_exit, s->progs.stall_tick,
					 s->progs.stall_hang, s->progs.stall_dtasks, NULL};
	memcpy(progs, p, sizeof(progs));

	vmlinux = btf__load_vmlinux_btf();
	for (unsigned i = 0; i < NHOOKS; i++) {
		char tn[128];
		if (listed(&c->missing_hooks, hook_tab[i].short_name)) {
			absent[i] = 1;
			snprintf(why[i], sizeof(why[i]), "%s treated as absent (stall.missing_hooks): %s absent",
				 hook_tab[i].short_name, stall_hooks[i].figure);
			continue;
		}
		if (!hook_tab[i].tp)
			continue;
		snprintf(tn, sizeof(tn), "btf_trace_%s", hook_tab[i].tp);
		if (!vmlinux || btf__find_by_name_kind(vmlinux, tn, BTF_KIND_TYPEDEF) < 0) {
			absent[i] = 1;
			snprintf(why[i], sizeof(why[i]), "tracepoint %s not in kernel BTF: %s absent", hook_tab[i].tp,
				 stall_hooks[i].figure);
		}
	}
	btf__free(vmlinux);
	if (!c->cpu_stall && !absent[H_PERF]) {
		absent[H_PERF] = 3;
		snprintf(why[H_PERF], sizeof(why[H_PERF]), "stall.cpu_stall is false");
	}
	if (!c->hung_scan && !absent[H_ITER]) {
		absent[H_ITER] = 3;
		snprintf(why[H_ITER], sizeof(why[H_ITER]), "stall.hung_scan is false");
	}
	if (!c->kernel_log && !absent[H_KMSG]) {
		absent[H_KMSG] = 3;
		snprintf(why[H_KMSG], sizeof(why[H_KMSG]), "stall.kernel_log is false");
	}
	for (unsigned i = 0; i < NHOOKS; i++) { /* half a pair measures nothing */
		int o = hook_tab[i].pair;
		if (o >= 0 && absent[o] && !absent[i]) {
			absent[i] = 2;
			snprintf(why[i], sizeof(why[i]), "its pair %s is absent: %s absent", hook_tab[o].short_name,
				 stall_hooks[i].figure);
		}
	}
	for (unsigned i = 0; i < NHOOKS; i++)
		if (absent[i] && progs[i])
			bpf_program__set_autoload(progs[i], false);
	s->rodata->cpu_stall_threshold_ns = c->cpu_stall_threshold_ns;
	s->rodata->cpu_stall_period_ns = c->cpu_stall_period_ns;
	s->rodata->sl_v1_subsys_id = sl_module_v1_subsys_id(m);
	err = stall_bpf__load(s);
	if (err && !absent[H_ITER]) {
		/* an iterator that does not load must not take the rest down:
		 * retry without it */
		stall_bpf__destroy(s);
		s = sp->skel = stall_bpf__open();
		if (!s)
			return -errno;
		struct bpf_program *q[NHOOKS] = {s->progs.stall_softirq_raise, s->progs.stall_softirq_entry,
						 s->progs.stall_softirq_exit, s->progs.stall_irq_entry,
						 s->progs.stall_irq_exit, s->progs.stall_tick,
						 s->progs.stall_hang, s->progs.stall_dtasks, NULL};
		memcpy(progs, q, sizeof(progs));
		absent[H_ITER] = 1;
		snprintf(why[H_ITER], sizeof(why[H_ITER]), "iter/task program did not load (%s): hung-task scan absent",
			 strerror(-err));
		for (unsigned i = 0; i < NHOOKS; i++)
			if (absent[i] && progs[i])
				bpf_program__set_autoload(progs[i], false);
		s->rodata->cpu_stall_threshold_ns = c->cpu_stall_threshold_ns;
		s->rodata->cpu_stall_period_ns = c->cpu_stall_period_ns;
		s->rodata->sl_v1_subsys_id = sl_module_v1_subsys_id(m);
		err = stall_bpf__load(s);
	}
	if (err) {
		snprintf(m->error, sizeof(m->error), "load BPF object: %s", strerror(-err));
		return err;
	}
	struct bpf_link **l[NHOOKS] = {&s->links.stall_softirq_raise, &s->links.stall_softirq_entry,
				       &s->links.stall_softirq_exit, &s->links.stall_irq_entry,
				       &s->links.stall_irq_exit, NULL, &s->links.stall_hang, &sp->iter_link, NULL};
	for (unsigned i = 0; i < NHOOKS; i++) {
		if (absent[i]) {
			sl_module_hook(m, stall_hooks[i].name, absent[i] == 3 ? SL_HOOK_DISABLED : SL_HOOK_DEGRADED, why[i]);
			continue;
		}
		if (i == H_PERF) {
			attach_perf(m, sp, c);
			nattached += sp->perf_links != NULL;
			continue;
		}
		if (i == H_KMSG) {
			int def = !strcmp(c->kmsg_path, "/dev/kmsg");
			sp->kmsg = sl_kmsg_open(c->kmsg_path, def);
			if (!sp->kmsg) {
				char w[160];
				snprintf(w, sizeof(w), "open %.64s: %s%s: kernel-log events absent", c->kmsg_path, strerror(errno),
					 errno == EACCES || errno == EPERM ? " (needs CAP_SYSLOG under dmesg_restrict)" : "");
				sl_module_hook(m, stall_hooks[i].name, SL_HOOK_FAILED, w);
			} else {
				sl_module_hook(m, stall_hooks[i].name, SL_HOOK_ATTACHED, NULL);
				nattached++;
			}
			continue;
		}
		sl_module_attach(m, progs[i], l[i], stall_hooks[i].name);
		nattached += *l[i] != NULL;
	}
	if (!nattached) {
		snprintf(m->error, sizeof(m->error), "no stall hook could be attached");
		return -ENOTSUP;
	}
	err = sl_module_ringbuf(m, "stall_events", bpf_map__fd(s->maps.stall_events));
	if (err) {
		snprintf(m->error, sizeof(m->error), "ring buffer registration: %s", strerror(-err));
		return err;
	}
	return 0;
}

static void stall_destroy(struct sl_module *m)
{
	struct stall_priv *sp = m->priv;
	struct stall_series *s, *t;

	if (!sp)
		return;
	for (int c = 0; sp->perf_links && c < sp->ncpus; c++) {
		bpf_link__destroy(sp->perf_links[c]);
		if (sp->perf_fds[c] >= 0)
			close(sp->perf_fds[c]);
	}
	free(sp->perf_links);
	free(sp->perf_fds);
	bpf_link__destroy(sp->iter_link);
	stall_bpf__destroy(sp->skel);
	sl_hung_free(&sp->hung);
	sl_hung_free(&sp->khung);
	HASH_ITER(hh, sp->series, s, t) {
		HASH_DEL(sp->series, s);
		free(s);
	}
	sl_kmsg_close(sp->kmsg);
	json_decref(sp->rcu_fields);
	sl_ksyms_shared_put(sp->ksyms);
	free(sp->irq_names);
	free(sp->hist_buf);
	sl_snapref_destroy(&sp->ref);
	free(sp);
	m->priv = NULL;
}

const struct sl_module_ops sl_stall_module = {
	.name = "stall",
	.doc = "docs/STALL.md",
	.config = {.size = sizeof(struct stall_cfg), .keys = stall_keys, .nkeys = N(stall_keys), .check = stall_cfg_check},
	.kinds = stall_kinds,
	.nkinds = N(stall_kinds),
	.families = sl_stall_families,
	.nfamilies = STALL_NFAM,
	.hooks = stall_hooks,
	.nhooks = NHOOKS,
	.ringbufs = stall_ringbufs,
	.nringbufs = 1,
	.init = stall_init,
	.tick = stall_tick,
	.write_metrics = stall_write_metrics,
	.write_drops = stall_write_drops,
	.destroy = stall_destroy,
	.kind_freezes = stall_kind_freezes,
};
