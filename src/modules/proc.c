/* proc module, user half: load/attach/degrade bpf/proc.bpf.c, decode its
 * ring buffer, keep the exec token-bucket table swept, export counters. */
#include "modules/proc.h"
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
/* A (ppid, comm) bucket idle this long is removed by the sweep; what it
 * still held as pending is counted as dropped (reason ratelimit_expired). */
#define BUCKET_IDLE_NS (10ull * 1000000000ull)

struct proc_priv {
	struct proc_bpf *skel;
	struct sl_agent *agent;
	int ncpus;
	_Atomic uint64_t truncated_total;    /* Σ truncated_count delivered */
	_Atomic uint64_t ratelimit_expired;  /* pending lost with idle buckets */
	_Atomic uint64_t pending;            /* Σ pending over buckets, last sweep */
	_Atomic uint64_t buckets;            /* buckets in the table, last sweep */
};

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

json_t *sl_proc_exec_fields(const struct sl_exec_event *e, size_t size)
{
	if (size < sizeof(*e))
		return NULL;
	size_t alen = e->argv_len > SL_ARGV_BYTES ? SL_ARGV_BYTES : e->argv_len;
	size_t flen = strnlen(e->filename, SL_FILENAME_BYTES);
	json_t *o = json_object();

	json_object_set_new(o, "filename", sl_json_str_lossy(e->filename, flen));
	json_object_set_new(o, "argv", sl_proc_argv_json(e->argv, alen));
	json_object_set_new(o, "args_truncated", json_boolean(e->args_truncated));
	json_object_set_new(o, "truncated_count", json_integer((json_int_t)e->truncated_count));
	return o;
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
		if (!(o = sl_proc_exec_fields(e, size)))
			goto bad;
		atomic_fetch_add(&pp->truncated_total, e->truncated_count);
		sl_pipeline_emit(a, SL_K_EXEC, h->ts_ns, &e->task, o, 1 + e->truncated_count);
		return 0;
	}
	case SL_EV_EXIT: {
		const struct sl_exit_event *e = data;
		if (!(o = sl_proc_exit_fields(e, size)))
			goto bad;
		sl_pipeline_emit(a, SL_K_EXIT, h->ts_ns, &e->task, o, 1);
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
		sl_pipeline_emit(a, SL_K_SIGNAL, h->ts_ns, &e->target, o, 1);
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
	s->rodata->fatal_only = a->cfg.proc.fatal_signals_only ? 1 : 0;
	s->rodata->sl_v1_subsys_id = a->v1_subsys_id;
	s->rodata->v1_hierarchy_id = a->mounts.v1_hierarchy_id;
	bpf_map__set_max_entries(s->maps.proc_events, (__u32)a->cfg.proc.ringbuf_bytes);
	bpf_map__set_max_entries(s->maps.exec_buckets, (__u32)a->cfg.proc.exec_buckets);

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

/* Sweep the token-bucket table: drop idle buckets (counting what they
 * still held), publish the pending total. */
static void proc_tick(struct sl_module *m, uint64_t now_ns)
{
	struct proc_priv *pp = m->priv;
	int fd = bpf_map__fd(pp->skel->maps.exec_buckets);
	struct sl_exec_key key, next, *prev = NULL;
	struct sl_exec_bucket b;
	uint64_t pending = 0, n = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &b))
			continue;
		if (now_ns > b.last_ns && now_ns - b.last_ns > BUCKET_IDLE_NS) {
			if (bpf_map_lookup_and_delete_elem(fd, &key, &b) == 0) {
				atomic_fetch_add(&pp->ratelimit_expired, b.pending);
				continue;
			}
		}
		pending += b.pending;
		n++;
	}
	atomic_store(&pp->pending, pending);
	atomic_store(&pp->buckets, n);
}

int sl_proc_set_rate_shift(struct sl_module *m, unsigned shift)
{
	struct proc_priv *pp = m ? m->priv : NULL;
	if (shift > 8 || !pp || !pp->skel || !pp->skel->bss)
		return -EINVAL;
	__atomic_store_n(&pp->skel->bss->rate_shift, shift, __ATOMIC_RELAXED);
	return 0;
}

unsigned sl_proc_get_rate_shift(struct sl_module *m)
{
	struct proc_priv *pp = m ? m->priv : NULL;
	if (!pp || !pp->skel || !pp->skel->bss)
		return 0;
	return __atomic_load_n(&pp->skel->bss->rate_shift, __ATOMIC_RELAXED);
}

static uint64_t stat_sum(struct proc_priv *pp, uint32_t idx)
{
	return sl_percpu_sum(bpf_map__fd(pp->skel->maps.proc_stats), idx, pp->ncpus);
}

static void proc_write_drops(struct sl_module *m, FILE *out)
{
	struct proc_priv *pp = m->priv;
	static const struct { const char *type; uint32_t idx; } rb[] = {
		{"exit", SL_ST_EXIT_RB_FAIL}, {"signal", SL_ST_SIGNAL_RB_FAIL}, {"oom", SL_ST_OOM_RB_FAIL}};

	for (size_t i = 0; i < sizeof(rb) / sizeof(rb[0]); i++)
		fprintf(out, "sandlens_events_dropped_total{reason=\"ringbuf_full\",type=\"%s\"} %llu\n", rb[i].type,
			(unsigned long long)stat_sum(pp, rb[i].idx));
	fprintf(out, "sandlens_events_dropped_total{reason=\"ratelimit_expired\",type=\"exec\"} %llu\n",
		(unsigned long long)atomic_load(&pp->ratelimit_expired));
	fprintf(out, "sandlens_events_dropped_total{reason=\"ratelimit_table_full\",type=\"exec\"} %llu\n",
		(unsigned long long)stat_sum(pp, SL_ST_EXEC_KEY_TABLE_FULL));
}

static void proc_write_metrics(struct sl_module *m, FILE *out)
{
	struct proc_priv *pp = m->priv;

	fprintf(out,
		"# HELP sandlens_exec_seen_total Execs seen by the kernel hook (delivered or not).\n"
		"# TYPE sandlens_exec_seen_total counter\n"
		"sandlens_exec_seen_total %llu\n"
		"# HELP sandlens_exec_rate_limited_total Execs suppressed by the (ppid, comm) token bucket; carried as truncated_count.\n"
		"# TYPE sandlens_exec_rate_limited_total counter\n"
		"sandlens_exec_rate_limited_total %llu\n"
		"# HELP sandlens_exec_truncated_total Sum of truncated_count over delivered exec events.\n"
		"# TYPE sandlens_exec_truncated_total counter\n"
		"sandlens_exec_truncated_total %llu\n"
		"# HELP sandlens_exec_ratelimit_pending Suppressed execs not yet carried by a delivered event (last sweep).\n"
		"# TYPE sandlens_exec_ratelimit_pending gauge\n"
		"sandlens_exec_ratelimit_pending %llu\n"
		"# HELP sandlens_exit_suppressed_total Clean exits (code 0, no signal) not sent because the process' exec event was not delivered.\n"
		"# TYPE sandlens_exit_suppressed_total counter\n"
		"sandlens_exit_suppressed_total %llu\n"
		"# HELP sandlens_exec_ratelimit_buckets (ppid, comm) token buckets in the kernel table (last sweep).\n"
		"# TYPE sandlens_exec_ratelimit_buckets gauge\n"
		"sandlens_exec_ratelimit_buckets %llu\n",
		(unsigned long long)stat_sum(pp, SL_ST_EXEC_SEEN),
		(unsigned long long)stat_sum(pp, SL_ST_EXEC_RATE_LIMITED),
		(unsigned long long)atomic_load(&pp->truncated_total),
		(unsigned long long)atomic_load(&pp->pending),
		(unsigned long long)stat_sum(pp, SL_ST_EXIT_SUPPRESSED),
		(unsigned long long)atomic_load(&pp->buckets));
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
};
