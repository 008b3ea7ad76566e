/* proc module, user half: load/attach/degrade bpf/proc.bpf.c, decode its
 * ring buffer (argv redaction on the way), keep the token-bucket tables
 * swept, export counters, scale the rates at run time. */
#include "modules/proc.h"
#include "modules/proc_redact.h"
#include "modules/proc_sweep.h"
#include "sandlens/token_bucket.h"
#include "agent/agent.h"
#include "agent/probe.h"
#include "common/json.h"
#include "common/log.h"
#include "proc.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MOD "proc"
/* A bucket idle this long is removed by the sweep; what it still held as
 * pending is counted as dropped: reason ringbuf_full for the part lost to
 * a full ring buffer (pending_rb), ratelimit_expired for the rest. */
#define BUCKET_IDLE_NS (10ull * 1000000000ull)

/* Event types with token buckets: index of the per-type counters. */
enum { T_EXEC, T_EXIT, T_SIGNAL, T_N };
static const char *const type_name[T_N] = {"exec", "exit", "signal"};

struct proc_priv {
	struct proc_bpf *skel;
	struct sl_agent *agent;
	int ncpus;
	_Atomic uint64_t truncated_total;    /* Σ truncated_count delivered (exec) */
	_Atomic uint64_t exit_truncated;     /* Σ truncated_count delivered (exit) */
	_Atomic uint64_t signal_truncated;   /* Σ truncated_count delivered (signal) */
	_Atomic uint64_t args_redacted;      /* exec events with redacted argv */
	_Atomic uint64_t ratelimit_expired[T_N]; /* pending lost with idle buckets */
	_Atomic uint64_t ringbuf_expired[T_N];   /* of which lost to the ring buffer first */
	_Atomic uint64_t exit_abn_expired;   /* abnormal exits among the expired */
	_Atomic uint64_t pending;            /* Σ pending over exec buckets, last sweep */
	_Atomic uint64_t buckets;            /* exec buckets in the table, last sweep */
	_Atomic uint64_t exit_pending;       /* Σ pending over exit/signal buckets */
	_Atomic uint64_t exit_buckets;       /* exit/signal buckets in the table */
	_Atomic uint64_t sweep_ns;           /* duration of the last sweep (both tables) */
	void *keybuf;                        /* sweep scratch (tick thread only) */
	size_t keycap;
	void *xkeybuf;
	size_t xkeycap;
};

/* The running proc module's private state, or NULL. */
static struct proc_priv *running(struct sl_module *m)
{
	if (!m || m->ops != &sl_proc_module || m->state != 0 || !m->priv)
		return NULL;
	struct proc_priv *pp = m->priv;
	return pp->skel && pp->skel->bss ? pp : NULL;
}

int sl_proc_set_rate_shift(struct sl_module *m, unsigned shift)
{
	struct proc_priv *pp;

	if (shift > SL_RATE_SHIFT_MAX)
		return -EINVAL;
	if (!(pp = running(m)))
		return -ENODEV;
	__atomic_store_n(&pp->skel->bss->rate_shift, shift, __ATOMIC_RELAXED);
	return 0;
}

unsigned sl_proc_get_rate_shift(struct sl_module *m)
{
	struct proc_priv *pp = running(m);
	return pp ? __atomic_load_n(&pp->skel->bss->rate_shift, __ATOMIC_RELAXED) : 0;
}

struct sl_module *sl_proc_find(struct sl_agent *a)
{
	for (int i = 0; a && i < a->nmodules; i++)
		if (a->modules[i].ops == &sl_proc_module)
			return &a->modules[i];
	return NULL;
}

/* ---------- decoding ---------- */

json_t *sl_proc_argv_json(const char *argv, size_t len)
{
	json_t *arr = json_array();
	size_t i = 0;

	while (i < len) {
		size_t n = strnlen(argv + i, len - i);
		json_array_append_new(arr, sl_json_str_lossy(argv + i, n));
		i += n + 1;
	}
	return arr;
}

json_t *sl_proc_exec_fields_redact(const struct sl_exec_event *e, size_t size, const char (*pat)[64],
				   unsigned npat)
{
	if (size < sizeof(*e))
		return NULL;
	size_t alen = e->argv_len > SL_ARGV_BYTES ? SL_ARGV_BYTES : e->argv_len;
	size_t flen = strnlen(e->filename, SL_FILENAME_BYTES);
	int redacted = 0;
	json_t *o = json_object(), *argv = sl_proc_argv_json_redact(e->argv, alen, pat, npat, &redacted);

	if (!o || !argv) {
		json_decref(o);
		json_decref(argv);
		return NULL;
	}
	json_object_set_new(o, "filename", sl_json_str_lossy(e->filename, flen));
	json_object_set_new(o, "argv", argv);
	if (redacted)
		json_object_set_new(o, "args_redacted", json_true());
	json_object_set_new(o, "args_truncated", json_boolean(e->args_truncated));
	json_object_set_new(o, "truncated_count", json_integer((json_int_t)e->truncated_count));
	return o;
}

json_t *sl_proc_exec_fields(const struct sl_exec_event *e, size_t size)
{
	return sl_proc_exec_fields_redact(e, size, NULL, 0);
}

json_t *sl_proc_exit_fields(const struct sl_exit_event *e, size_t size)
{
	if (size < sizeof(*e))
		return NULL;
	json_t *o = json_object();
	json_object_set_new(o, "exit_code", json_integer(e->exit_code));
	json_object_set_new(o, "signal", json_integer(e->signal));
	json_object_set_new(o, "core_dumped", json_boolean(e->core_dumped));
	json_object_set_new(o, "lifetime_ns", json_integer((json_int_t)e->lifetime_ns));
	json_object_set_new(o, "truncated_count", json_integer((json_int_t)e->truncated_count));
	json_object_set_new(o, "truncated_abnormal", json_integer((json_int_t)e->truncated_abnormal));
	return o;
}

const char *sl_oom_constraint_name(unsigned c)
{
	return c == SL_OOM_MEMCG ? "memcg" : "global";
}

static void comm_copy(char *dst, const char *src)
{
	memcpy(dst, src, SL_COMM_LEN);
	dst[SL_COMM_LEN] = 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct sl_module *m = ctx;
	struct proc_priv *pp = m->priv;
	struct sl_agent *a = pp->agent;
	const struct sl_hdr *h = data;
	json_t *o;

	if (size < sizeof(*h))
		goto bad;
	switch (h->type) {
	case SL_EV_EXEC: {
		const struct sl_exec_event *e = data;
		if (!(o = sl_proc_exec_fields_redact(e, size, (const char (*)[64])a->cfg.proc.redact,
						     a->cfg.proc.nredact)))
			goto bad;
		if (json_object_get(o, "args_redacted"))
			atomic_fetch_add(&pp->args_redacted, 1);
		atomic_fetch_add(&pp->truncated_total, e->truncated_count);
		sl_pipeline_emit(a, SL_K_EXEC, h->ts_ns, &e->task, o, 1 + e->truncated_count);
		return 0;
	}
	case SL_EV_EXIT: {
		const struct sl_exit_event *e = data;
		if (!(o = sl_proc_exit_fields(e, size)))
			goto bad;
		atomic_fetch_add(&pp->exit_truncated, e->truncated_count);
		sl_pipeline_emit(a, SL_K_EXIT, h->ts_ns, &e->task, o, 1 + e->truncated_count);
		return 0;
	}
	case SL_EV_SIGNAL: {
		const struct sl_signal_event *e = data;
		char sc[SL_COMM_LEN + 1], tc[SL_COMM_LEN + 1];
		if (size < sizeof(*e))
			goto bad;
		comm_copy(sc, e->sender.comm);
		comm_copy(tc, e->target.comm);
		o = json_object();
		json_object_set_new(o, "signal", json_integer(e->signal));
		json_object_set_new(o, "si_code", json_integer(e->si_code));
		json_object_set_new(o, "sender_pid", json_integer(e->sender.pid));
		json_object_set_new(o, "sender_comm", sl_json_str_lossy(sc, strlen(sc)));
		json_object_set_new(o, "target_pid", json_integer(e->target.pid));
		json_object_set_new(o, "target_comm", sl_json_str_lossy(tc, strlen(tc)));
		json_object_set_new(o, "sender", sl_pipeline_task_json(a, &e->sender));
		json_object_set_new(o, "truncated_count", json_integer((json_int_t)e->truncated_count));
		atomic_fetch_add(&pp->signal_truncated, e->truncated_count);
		sl_pipeline_emit(a, SL_K_SIGNAL, h->ts_ns, &e->target, o, 1 + e->truncated_count);
		return 0;
	}
	case SL_EV_OOM: {
		const struct sl_oom_event *e = data;
		if (size < sizeof(*e))
			goto bad;
		o = json_object();
		json_object_set_new(o, "constraint", json_string(sl_oom_constraint_name(e->constraint)));
		json_object_set_new(o, "constraint_source",
				    json_string(e->constraint_source == SL_OOM_SRC_KPROBE ? "kprobe" : "inferred"));
		if (e->constraint == SL_OOM_MEMCG)
			json_object_set_new(o, "memcg_limit_bytes", json_integer((json_int_t)e->memcg_limit_bytes));
		json_object_set_new(o, "actor", sl_pipeline_task_json(a, &e->actor));
		json_object_set_new(o, "victim", sl_pipeline_task_json(a, &e->victim));
		sl_pipeline_emit(a, SL_K_OOM, h->ts_ns, &e->victim, o, 1);
		return 0;
	}
	case SL_EV_CGROUP_MKDIR:
	case SL_EV_CGROUP_RMDIR:
		if (size < sizeof(struct sl_cgroup_event))
			goto bad;
		sl_pipeline_cgroup_event(a, data);
		return 0;
	}
bad:
	atomic_fetch_add(&a->decode_errors, 1);
	return 0;
}

/* ---------- lifecycle ---------- */

static int proc_init(struct sl_module *m, struct sl_agent *a)
{
	struct proc_priv *pp = calloc(1, sizeof(*pp));
	struct proc_bpf *s;
	int err, use_btf_oom, kprobes;

	if (!pp)
		return -ENOMEM;
	m->priv = pp;
	pp->agent = a;
	pp->ncpus = libbpf_num_possible_cpus();
	s = pp->skel = proc_bpf__open();
	if (!s) {
		snprintf(m->error, sizeof(m->error), "open BPF object: %s", strerror(errno));
		return -errno;
	}
	s->rodata->exec_rate = a->cfg.proc.exec_rate;
	s->rodata->exec_burst = a->cfg.proc.exec_burst;
	s->rodata->exit_rate = a->cfg.proc.exit_rate;
	s->rodata->exit_burst = a->cfg.proc.exit_burst;
	s->rodata->fatal_only = a->cfg.proc.fatal_signals_only ? 1 : 0;
	s->rodata->sl_v1_subsys_id = a->v1_subsys_id;
	s->rodata->v1_hierarchy_id = a->mounts.v1_hierarchy_id;
	bpf_map__set_max_entries(s->maps.proc_events, (__u32)a->cfg.proc.ringbuf_bytes);
	bpf_map__set_max_entries(s->maps.exec_buckets, (__u32)a->cfg.proc.exec_buckets);
	bpf_map__set_max_entries(s->maps.exit_buckets, (__u32)a->cfg.proc.exec_buckets);

	/* oom:mark_victim: tp_btf needs the (task, uid) prototype (6.x and
	 * 6.1.y backports); older kernels get the raw tracepoint (pid only). */
	use_btf_oom = sl_btf_tp_arg_is_ptr("mark_victim", 0) == 1;
	bpf_program__set_autoload(s->progs.handle_mark_victim, use_btf_oom);
	bpf_program__set_autoload(s->progs.handle_mark_victim_tp, !use_btf_oom);
	if (!use_btf_oom)
		sl_module_hook(m, "tp_btf/mark_victim", SL_HOOK_DEGRADED,
			       "kernel's oom:mark_victim has no task argument; using tp/oom/mark_victim (victim pid only)");

	kprobes = sl_kprobes_available();
	bpf_program__set_autoload(s->progs.handle_oom_kill_process, kprobes);
	if (!kprobes)
		sl_module_hook(m, "kprobe/oom_kill_process", SL_HOOK_DEGRADED,
			       "kernel has no kprobe support (no /sys/bus/event_source/devices/kprobe); "
			       "OOM constraint is inferred from the victim's memcg page counters");

	err = proc_bpf__load(s);
	if (err) {
		snprintf(m->error, sizeof(m->error), "load BPF object: %s", strerror(-err));
		return err;
	}
	sl_module_attach(m, s->progs.handle_exec, &s->links.handle_exec, "tp_btf/sched_process_exec");
	sl_module_attach(m, s->progs.handle_exit, &s->links.handle_exit, "tp_btf/sched_process_exit");
	sl_module_attach(m, s->progs.handle_signal, &s->links.handle_signal, "tp_btf/signal_generate");
	sl_module_attach(m, s->progs.handle_mark_victim, &s->links.handle_mark_victim, "tp_btf/mark_victim");
	sl_module_attach(m, s->progs.handle_mark_victim_tp, &s->links.handle_mark_victim_tp, "tp/oom/mark_victim");
	if (kprobes) {
		sl_module_attach(m, s->progs.handle_oom_kill_process, &s->links.handle_oom_kill_process,
			   "kprobe/oom_kill_process");
		if (!s->links.handle_oom_kill_process) /* attach failed: degrade */
			m->hooks[m->nhooks - 1].state = SL_HOOK_DEGRADED;
	}
	if (a->attr) {
		sl_module_attach(m, s->progs.handle_cgroup_mkdir, &s->links.handle_cgroup_mkdir, "tp_btf/cgroup_mkdir");
		sl_module_attach(m, s->progs.handle_cgroup_rmdir, &s->links.handle_cgroup_rmdir, "tp_btf/cgroup_rmdir");
	} else {
		sl_module_hook(m, "tp_btf/cgroup_mkdir", SL_HOOK_DISABLED, "attribution is off");
		sl_module_hook(m, "tp_btf/cgroup_rmdir", SL_HOOK_DISABLED, "attribution is off");
	}
	if (!s->links.handle_exec || !s->links.handle_exit) {
		snprintf(m->error, sizeof(m->error), "exec/exit tracepoints could not be attached");
		return -ENOTSUP;
	}
	return 0;
}

static int proc_add_ringbufs(struct sl_module *m, struct sl_agent *a)
{
	struct proc_priv *pp = m->priv;
	return sl_agent_add_ringbuf(a, "proc", bpf_map__fd(pp->skel->maps.proc_events), on_record, m);
}

static void expired_exec(const void *key, const struct sl_exec_bucket *b, void *ctx)
{
	struct proc_priv *pp = ctx;
	uint64_t rb = sl_bucket_pending_rb(b);
	(void)key;
	atomic_fetch_add(&pp->ringbuf_expired[T_EXEC], rb);
	atomic_fetch_add(&pp->ratelimit_expired[T_EXEC], b->pending - rb);
}

static void expired_exit(const void *key, const struct sl_exec_bucket *b, void *ctx)
{
	const struct sl_exit_key *k = key;
	struct proc_priv *pp = ctx;
	int t = k->kind == SL_EXK_SIGNAL ? T_SIGNAL : T_EXIT;
	uint64_t rb = sl_bucket_pending_rb(b);

	atomic_fetch_add(&pp->ringbuf_expired[t], rb);
	atomic_fetch_add(&pp->ratelimit_expired[t], b->pending - rb);
	if (t == T_EXIT)
		atomic_fetch_add(&pp->exit_abn_expired, b->pending_abn < b->pending ? b->pending_abn : b->pending);
}

/* Sweep the token-bucket tables: drop idle buckets (counting what they
 * still held, by reason), publish the pending totals. Linear in the table
 * sizes (src/modules/proc_sweep.c). */
static void proc_tick(struct sl_module *m, uint64_t now_ns)
{
	struct proc_priv *pp = m->priv;
	struct sl_sweep_result r;
	uint64_t t0 = sl_mono_ns();

	sl_bucket_sweep(bpf_map__fd(pp->skel->maps.exec_buckets), sizeof(struct sl_exec_key), now_ns,
			BUCKET_IDLE_NS, expired_exec, pp, &pp->keybuf, &pp->keycap, &r);
	atomic_store(&pp->pending, r.pending);
	atomic_store(&pp->buckets, r.buckets);
	sl_bucket_sweep(bpf_map__fd(pp->skel->maps.exit_buckets), sizeof(struct sl_exit_key), now_ns,
			BUCKET_IDLE_NS, expired_exit, pp, &pp->xkeybuf, &pp->xkeycap, &r);
	atomic_store(&pp->exit_pending, r.pending);
	atomic_store(&pp->exit_buckets, r.buckets);
	atomic_store(&pp->sweep_ns, sl_mono_ns() - t0);
}

static uint64_t stat_sum(struct proc_priv *pp, uint32_t idx)
{
	return sl_percpu_sum(bpf_map__fd(pp->skel->maps.proc_stats), idx, pp->ncpus);
}

static void proc_write_drops(struct sl_module *m, FILE *out)
{
	struct proc_priv *pp = m->priv;
	static const uint32_t rb_lost[T_N] = {SL_ST_EXEC_RB_LOST, SL_ST_EXIT_RB_LOST, SL_ST_SIGNAL_RB_LOST};
	static const uint32_t full[T_N] = {SL_ST_EXEC_KEY_TABLE_FULL, SL_ST_EXIT_KEY_TABLE_FULL,
					   SL_ST_SIGNAL_KEY_TABLE_FULL};

	for (int t = 0; t < T_N; t++) {
		fprintf(out, "sandlens_events_dropped_total{reason=\"ringbuf_full\",type=\"%s\"} %llu\n", type_name[t],
			(unsigned long long)(stat_sum(pp, rb_lost[t]) + atomic_load(&pp->ringbuf_expired[t])));
		fprintf(out, "sandlens_events_dropped_total{reason=\"ratelimit_expired\",type=\"%s\"} %llu\n",
			type_name[t], (unsigned long long)atomic_load(&pp->ratelimit_expired[t]));
		fprintf(out, "sandlens_events_dropped_total{reason=\"ratelimit_table_full\",type=\"%s\"} %llu\n",
			type_name[t], (unsigned long long)stat_sum(pp, full[t]));
	}
	fprintf(out, "sandlens_events_dropped_total{reason=\"ringbuf_full\",type=\"oom\"} %llu\n",
		(unsigned long long)stat_sum(pp, SL_ST_OOM_RB_FAIL));
}

static void counter(FILE *out, const char *name, const char *help, uint64_t v)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name, (unsigned long long)v);
}

static void gauge(FILE *out, const char *name, const char *help, uint64_t v)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n%s %llu\n", name, help, name, name, (unsigned long long)v);
}

static void proc_write_metrics(struct sl_module *m, FILE *out)
{
	struct proc_priv *pp = m->priv;

	counter(out, "sandlens_exec_seen_total", "Execs seen by the kernel hook (delivered or not).",
		stat_sum(pp, SL_ST_EXEC_SEEN));
	counter(out, "sandlens_exec_rate_limited_total",
		"Execs suppressed by the (ppid, comm) token bucket; carried as truncated_count.",
		stat_sum(pp, SL_ST_EXEC_RATE_LIMITED));
	counter(out, "sandlens_exec_truncated_total", "Sum of truncated_count over delivered exec events.",
		atomic_load(&pp->truncated_total));
	gauge(out, "sandlens_exec_ratelimit_pending",
	      "Suppressed execs not yet carried by a delivered event (last sweep).", atomic_load(&pp->pending));
	counter(out, "sandlens_exit_suppressed_total",
		"Clean exits (code 0, no signal) not sent because the process' exec event was not delivered.",
		stat_sum(pp, SL_ST_EXIT_SUPPRESSED));
	gauge(out, "sandlens_exec_ratelimit_buckets", "(ppid, comm) token buckets in the kernel table (last sweep).",
	      atomic_load(&pp->buckets));
	counter(out, "sandlens_exec_args_redacted_total", "Exec events whose argv was redacted (proc.redact_args).",
		atomic_load(&pp->args_redacted));
	counter(out, "sandlens_exit_seen_total", "Process exits seen by the kernel hook (delivered or not).",
		stat_sum(pp, SL_ST_EXIT_SEEN));
	counter(out, "sandlens_exit_rate_limited_total",
		"Exits suppressed by the (cgroup, comm) token bucket; carried as truncated_count.",
		stat_sum(pp, SL_ST_EXIT_RATE_LIMITED));
	counter(out, "sandlens_exit_abnormal_rate_limited_total",
		"Of the rate-limited exits, abnormal ones (non-zero code or a signal); carried as truncated_abnormal.",
		stat_sum(pp, SL_ST_EXIT_ABN_RATE_LIMITED));
	counter(out, "sandlens_exit_truncated_total", "Sum of truncated_count over delivered exit events.",
		atomic_load(&pp->exit_truncated));
	counter(out, "sandlens_exit_abnormal_expired_total",
		"Abnormal exits still pending in a bucket that went idle (counted in the exit drops).",
		atomic_load(&pp->exit_abn_expired));
	counter(out, "sandlens_signal_seen_total", "Fatal signals that passed the signal filters (delivered or not).",
		stat_sum(pp, SL_ST_SIGNAL_SEEN));
	counter(out, "sandlens_signal_rate_limited_total",
		"Fatal signals suppressed by the target's (cgroup, comm) token bucket; carried as truncated_count.",
		stat_sum(pp, SL_ST_SIGNAL_RATE_LIMITED));
	counter(out, "sandlens_signal_truncated_total", "Sum of truncated_count over delivered signal events.",
		atomic_load(&pp->signal_truncated));
	gauge(out, "sandlens_exit_ratelimit_pending",
	      "Suppressed exits and signals not yet carried by a delivered event (last sweep).",
	      atomic_load(&pp->exit_pending));
	gauge(out, "sandlens_exit_ratelimit_buckets",
	      "(cgroup, comm) token buckets of exits and signals in the kernel table (last sweep).",
	      atomic_load(&pp->exit_buckets));
	gauge(out, "sandlens_proc_rate_shift",
	      "Runtime rate shift of the proc token buckets: rates and bursts are divided by 2^shift (degradation).",
	      sl_proc_get_rate_shift(m));
	fprintf(out, "# HELP sandlens_proc_sweep_seconds Duration of the last token-bucket table sweep.\n"
		     "# TYPE sandlens_proc_sweep_seconds gauge\nsandlens_proc_sweep_seconds %.6f\n",
		(double)atomic_load(&pp->sweep_ns) / 1e9);
	fprintf(out, "# HELP sandlens_ringbuf_reserve_failures_total BPF ring buffer reservations that failed (buffer full), by event type.\n"
		     "# TYPE sandlens_ringbuf_reserve_failures_total counter\n");
	static const struct { const char *type; uint32_t idx; } rb[] = {
		{"exec", SL_ST_EXEC_RB_FAIL}, {"exit", SL_ST_EXIT_RB_FAIL}, {"signal", SL_ST_SIGNAL_RB_FAIL},
		{"oom", SL_ST_OOM_RB_FAIL}, {"cgroup", SL_ST_CGROUP_RB_FAIL}};
	for (size_t i = 0; i < sizeof(rb) / sizeof(rb[0]); i++)
		fprintf(out, "sandlens_ringbuf_reserve_failures_total{type=\"%s\"} %llu\n", rb[i].type,
			(unsigned long long)stat_sum(pp, rb[i].idx));
}

static void proc_destroy(struct sl_module *m)
{
	struct proc_priv *pp = m->priv;
	if (!pp)
		return;
	proc_bpf__destroy(pp->skel); /* detaches every link */
	free(pp->keybuf);
	free(pp->xkeybuf);
	free(pp);
	m->priv = NULL;
}

const struct sl_module_ops sl_proc_module = {
	.name = "proc",
	.init = proc_init,
	.add_ringbufs = proc_add_ringbufs,
	.tick = proc_tick,
	.write_metrics = proc_write_metrics,
	.write_drops = proc_write_drops,
	.destroy = proc_destroy,
	.set_rate_shift = sl_proc_set_rate_shift,
};
