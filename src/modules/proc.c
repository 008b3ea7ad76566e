/* proc module, user half: load/attach/degrade bpf/proc.bpf.c, decode its
 * ring buffer (argv redaction on the way), keep the token-bucket tables
 * swept, export counters, scale the rates at run time. */
#include "modules/proc.h"
#include "modules/proc_redact.h"
#include "modules/proc_sweep.h"
#include "sandlens/token_bucket.h"
#include "agent/probe.h"
#include "common/json.h"
#include "common/log.h"
#include "proc.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stddef.h>
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
	/* variable length: the record ends after its argv_len argv bytes
	 * (bpf/proc.bpf.c handle_exec) */
	if (size < offsetof(struct sl_exec_event, argv) || e->argv_len > SL_ARGV_BYTES ||
	    e->argv_len > size - offsetof(struct sl_exec_event, argv))
		return NULL;
	size_t alen = e->argv_len;
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

/* A task object for actor/victim-style fields: attributed through the
 * agent when m is given, else the host fields only (unit tests). */
static json_t *task_obj(struct sl_module *m, const struct sl_task_id *t)
{
	char c[SL_COMM_LEN + 1];
	json_t *o;

	if (m && m->agent)
		return sl_module_task_json(m, t);
	comm_copy(c, t->comm);
	o = json_object();
	json_object_set_new(o, "pid", json_integer(t->pid));
	json_object_set_new(o, "comm", sl_json_str_lossy(c, strlen(c)));
	json_object_set_new(o, "cgroup_id", json_integer((json_int_t)t->cgroup_id));
	return o;
}

/* si_code of a signal the kernel sends itself (SI_KERNEL) */
#define SL_SI_KERNEL 0x80

json_t *sl_proc_signal_fields(struct sl_module *m, const struct sl_signal_event *e, size_t size)
{
	char sc[SL_COMM_LEN + 1], tc[SL_COMM_LEN + 1];
	json_t *o;

	if (size < sizeof(*e))
		return NULL;
	comm_copy(sc, e->sender.comm);
	comm_copy(tc, e->target.comm);
	o = json_object();
	json_object_set_new(o, "signal", json_integer(e->signal));
	json_object_set_new(o, "si_code", json_integer(e->si_code));
	/* SI_KERNEL (include/uapi/asm-generic/siginfo.h): sent by the kernel
	 * itself (SEND_SIG_PRIV: the OOM killer's SIGKILL), so the "sender"
	 * task is only whoever was running, not who sent it */
	json_object_set_new(o, "sender_kernel", json_boolean(e->si_code == SL_SI_KERNEL));
	json_object_set_new(o, "sender_pid", json_integer(e->sender.pid));
	json_object_set_new(o, "sender_comm", sl_json_str_lossy(sc, strlen(sc)));
	json_object_set_new(o, "target_pid", json_integer(e->target.pid));
	json_object_set_new(o, "target_comm", sl_json_str_lossy(tc, strlen(tc)));
	json_object_set_new(o, "sender", task_obj(m, &e->sender));
	json_object_set_new(o, "truncated_count", json_integer((json_int_t)e->truncated_count));
	return o;
}

json_t *sl_proc_oom_fields(struct sl_module *m, const struct sl_oom_event *e, size_t size)
{
	json_t *o;

	if (size < sizeof(*e))
		return NULL;
	o = json_object();
	json_object_set_new(o, "constraint", json_string(sl_oom_constraint_name(e->constraint)));
	json_object_set_new(o, "constraint_source",
			    json_string(e->constraint_source == SL_OOM_SRC_KPROBE ? "kprobe" : "inferred"));
	if (e->constraint == SL_OOM_MEMCG)
		json_object_set_new(o, "memcg_limit_bytes", json_integer((json_int_t)e->memcg_limit_bytes));
	json_object_set_new(o, "actor", task_obj(m, &e->actor));
	json_object_set_new(o, "victim", task_obj(m, &e->victim));
	return o;
}

static void emit_task(struct sl_module *m, unsigned kind, uint64_t ts, const struct sl_task_id *t, json_t *o,
		      uint64_t weight)
{
	struct sl_subject subj = {.kind = SL_SUBJ_TASK, .task = t};
	sl_module_emit(m, kind, ts, &subj, o, weight);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct sl_module *m = ctx;
	struct proc_priv *pp = m->priv;
	const struct sl_proc_cfg *cfg = sl_module_cfg(m);
	const struct sl_hdr *h = data;
	json_t *o;

	if (size < sizeof(*h))
		goto bad;
	switch (h->type) {
	case SL_EV_EXEC: {
		const struct sl_exec_event *e = data;
		if (!(o = sl_proc_exec_fields_redact(e, size, (const char (*)[64])cfg->redact_args.v,
						     cfg->redact_args.n)))
			goto bad;
		if (json_object_get(o, "args_redacted"))
			atomic_fetch_add(&pp->args_redacted, 1);
		atomic_fetch_add(&pp->truncated_total, e->truncated_count);
		emit_task(m, SL_PROC_K_EXEC, h->ts_ns, &e->task, o, 1 + e->truncated_count);
		return 0;
	}
	case SL_EV_EXIT: {
		const struct sl_exit_event *e = data;
		if (!(o = sl_proc_exit_fields(e, size)))
			goto bad;
		atomic_fetch_add(&pp->exit_truncated, e->truncated_count);
		emit_task(m, SL_PROC_K_EXIT, h->ts_ns, &e->task, o, 1 + e->truncated_count);
		return 0;
	}
	case SL_EV_SIGNAL: {
		const struct sl_signal_event *e = data;
		if (!(o = sl_proc_signal_fields(m, e, size)))
			goto bad;
		atomic_fetch_add(&pp->signal_truncated, e->truncated_count);
		emit_task(m, SL_PROC_K_SIGNAL, h->ts_ns, &e->target, o, 1 + e->truncated_count);
		return 0;
	}
	case SL_EV_OOM: {
		const struct sl_oom_event *e = data;
		if (!(o = sl_proc_oom_fields(m, e, size)))
			goto bad;
		emit_task(m, SL_PROC_K_OOM, h->ts_ns, &e->victim, o, 1);
		return 0;
	}
	case SL_EV_CGROUP_MKDIR:
	case SL_EV_CGROUP_RMDIR: {
		const struct sl_cgroup_event *e = data;
		char path[SL_CGPATH_BYTES + 1];
		if (size < sizeof(*e))
			goto bad;
		memcpy(path, e->path, SL_CGPATH_BYTES);
		path[SL_CGPATH_BYTES] = 0;
		sl_module_cgroup_event(m, e->cgroup_id, e->hierarchy_id, h->type == SL_EV_CGROUP_MKDIR, path);
		return 0;
	}
	}
bad:
	sl_module_decode_error(m);
	return 0;
}

/* ---------- lifecycle ---------- */

static int proc_init(struct sl_module *m)
{
	const struct sl_proc_cfg *cfg = sl_module_cfg(m);
	struct proc_priv *pp = calloc(1, sizeof(*pp));
	struct proc_bpf *s;
	int err, use_btf_oom, kprobes;

	if (!pp)
		return -ENOMEM;
	m->priv = pp;
	pp->ncpus = libbpf_num_possible_cpus();
	s = pp->skel = proc_bpf__open();
	if (!s) {
		snprintf(m->error, sizeof(m->error), "open BPF object: %s", strerror(errno));
		return -errno;
	}
	s->rodata->exec_rate = cfg->exec_rate;
	s->rodata->exec_burst = cfg->exec_burst;
	s->rodata->exit_rate = cfg->exit_rate;
	s->rodata->exit_burst = cfg->exit_burst;
	s->rodata->fatal_only = cfg->fatal_signals_only ? 1 : 0;
	s->rodata->sl_v1_subsys_id = sl_module_v1_subsys_id(m);
	s->rodata->v1_hierarchy_id = sl_module_mounts(m)->v1_hierarchy_id;
	/* exec/exit records wake the reader only past an eighth of the ring;
	 * below that the poll loop reads them within SL_RB_POLL_MS */
	s->rodata->rb_wake_bytes = cfg->ringbuf_size / 8;
	bpf_map__set_max_entries(s->maps.proc_events, (__u32)cfg->ringbuf_size);
	bpf_map__set_max_entries(s->maps.exec_buckets, (__u32)cfg->exec_buckets);
	bpf_map__set_max_entries(s->maps.exit_buckets, (__u32)cfg->exec_buckets);

	/* oom:mark_victim: tp_btf needs the (task, uid) prototype (6.x and
	 * 6.1.y backports); older kernels get the raw tracepoint (pid only). */
	use_btf_oom = sl_btf_tp_arg_is_ptr("mark_victim", 0) == 1;
	bpf_program__set_autoload(s->progs.handle_mark_victim, use_btf_oom);
	bpf_program__set_autoload(s->progs.handle_mark_victim_tp, !use_btf_oom);
	if (!use_btf_oom)
		sl_module_hook(m, "tp_btf/mark_victim", SL_HOOK_DEGRADED,
			       "kernel's oom:mark_victim has no task argument; using tp/oom/mark_victim (victim pid only)");
	else
		sl_module_hook(m, "tp/oom/mark_victim", SL_HOOK_DISABLED, "not needed: tp_btf/mark_victim is used");

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
	if (sl_module_attribution(m)) {
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
	return sl_module_ringbuf(m, "proc_events", bpf_map__fd(s->maps.proc_events));
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

static void drop(struct sl_prom *p, const char *reason, const char *type, uint64_t v)
{
	const struct sl_prom_label l[] = {{"reason", reason}, {"type", type}, {NULL, NULL}};
	sl_prom_u64(p, "sandlens_events_dropped_total", l, v);
}

static void proc_write_drops(struct sl_module *m, struct sl_prom *p)
{
	struct proc_priv *pp = m->priv;
	static const uint32_t rb_lost[T_N] = {SL_ST_EXEC_RB_LOST, SL_ST_EXIT_RB_LOST, SL_ST_SIGNAL_RB_LOST};

	/* a full token-bucket table drops nothing: those events are
	 * delivered without a limit (sandlens_proc_ratelimit_table_full_total) */
	for (int t = 0; t < T_N; t++) {
		drop(p, "ringbuf_full", type_name[t], stat_sum(pp, rb_lost[t]) + atomic_load(&pp->ringbuf_expired[t]));
		drop(p, "ratelimit_expired", type_name[t], atomic_load(&pp->ratelimit_expired[t]));
	}
	drop(p, "ringbuf_full", "oom", stat_sum(pp, SL_ST_OOM_RB_FAIL));
}

/* One unlabelled sample of declared family i. */
static void one(struct sl_prom *p, unsigned i, uint64_t v)
{
	sl_prom_declared(p, &sl_proc_families[i]);
	sl_prom_u64(p, sl_proc_families[i].name, NULL, v);
}

static void proc_write_metrics(struct sl_module *m, struct sl_prom *p)
{
	struct proc_priv *pp = m->priv;
	const uint64_t v[] = {
		stat_sum(pp, SL_ST_EXEC_SEEN),
		stat_sum(pp, SL_ST_EXEC_RATE_LIMITED),
		atomic_load(&pp->truncated_total),
		atomic_load(&pp->pending),
		stat_sum(pp, SL_ST_EXIT_SUPPRESSED),
		atomic_load(&pp->buckets),
		atomic_load(&pp->args_redacted),
		stat_sum(pp, SL_ST_EXIT_SEEN),
		stat_sum(pp, SL_ST_EXIT_RATE_LIMITED),
		stat_sum(pp, SL_ST_EXIT_ABN_RATE_LIMITED),
		atomic_load(&pp->exit_truncated),
		atomic_load(&pp->exit_abn_expired),
		stat_sum(pp, SL_ST_SIGNAL_SEEN),
		stat_sum(pp, SL_ST_SIGNAL_RATE_LIMITED),
		atomic_load(&pp->signal_truncated),
		atomic_load(&pp->exit_pending),
		atomic_load(&pp->exit_buckets),
		sl_proc_get_rate_shift(m),
	};
	/* the last three families of sl_proc_families, after the unlabelled
	 * counters and gauges of v */
	enum { F_SWEEP = SL_PROC_NFAMILIES - 3, F_RB_FAIL, F_TABLE_FULL };
	_Static_assert(sizeof(v) / sizeof(v[0]) == F_SWEEP, "one value per unlabelled family");
	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		one(p, i, v[i]);
	sl_prom_declared(p, &sl_proc_families[F_SWEEP]);
	sl_prom_f64(p, sl_proc_families[F_SWEEP].name, NULL, (double)atomic_load(&pp->sweep_ns) / 1e9);

	static const struct {
		const char *type;
		uint32_t idx;
	} rb[] = {{"exec", SL_ST_EXEC_RB_FAIL},
		  {"exit", SL_ST_EXIT_RB_FAIL},
		  {"signal", SL_ST_SIGNAL_RB_FAIL},
		  {"oom", SL_ST_OOM_RB_FAIL},
		  {"cgroup", SL_ST_CGROUP_RB_FAIL}};
	const struct sl_prom_family *f = &sl_proc_families[F_RB_FAIL];
	sl_prom_declared(p, f);
	for (size_t i = 0; i < sizeof(rb) / sizeof(rb[0]); i++) {
		const struct sl_prom_label l[] = {{"type", rb[i].type}, {NULL, NULL}};
		sl_prom_u64(p, f->name, l, stat_sum(pp, rb[i].idx));
	}
	static const uint32_t full[T_N] = {SL_ST_EXEC_KEY_TABLE_FULL, SL_ST_EXIT_KEY_TABLE_FULL,
					   SL_ST_SIGNAL_KEY_TABLE_FULL};
	f = &sl_proc_families[F_TABLE_FULL];
	sl_prom_declared(p, f);
	for (int t = 0; t < T_N; t++) {
		const struct sl_prom_label l[] = {{"type", type_name[t]}, {NULL, NULL}};
		sl_prom_u64(p, f->name, l, stat_sum(pp, full[t]));
	}
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

static const struct sl_ringbuf_decl proc_ringbufs[] = {{"proc_events", on_record}};

const struct sl_module_ops sl_proc_module = {
	.name = "proc",
	.doc = "docs/ARCHITECTURE.md",
	.config = {sizeof(struct sl_proc_cfg), sl_proc_cfg_keys, SL_PROC_NCFG, sl_proc_cfg_check},
	.kinds = sl_proc_kinds,
	.nkinds = SL_PROC_NKINDS,
	.families = sl_proc_families,
	.nfamilies = SL_PROC_NFAMILIES,
	.hooks = sl_proc_hooks,
	.nhooks = SL_PROC_NHOOKS,
	.ringbufs = proc_ringbufs,
	.nringbufs = 1,
	.init = proc_init,
	.tick = proc_tick,
	.write_metrics = proc_write_metrics,
	.write_drops = proc_write_drops,
	.destroy = proc_destroy,
	.kind_freezes = sl_proc_kind_freezes,
	.set_rate_shift = sl_proc_set_rate_shift,
};
