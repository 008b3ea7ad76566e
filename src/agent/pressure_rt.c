/* Self-protection at run time (see pressure_rt.h): measurement, the level's
 * effects, and the read side for /healthz and /metrics. */
#include "agent/pressure_rt.h"
#include "agent/agent.h"
#include "agent/pressure.h"
#include "agent/pressure_internal.h"
#include "common/log.h"
#include "common/prom.h"
#include "common/thread_cpu.h"
#include "common/timefmt.h"
#include "stats/stats.h"
#include "store/store.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define MOD "pressure"
/* The agent's CPU less its API threads' (src/common/thread_cpu.h): what
 * clients ask for is bounded by api.threads and the connection limits, and
 * must not make the agent drop events (anyone local may send requests). */
static uint64_t self_cpu_ns(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	uint64_t all = ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
		       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
	uint64_t api = sl_thread_cpu_ns(SL_TCPU_API);
	return api < all ? all - api : 0;
}

/* Resident set from /proc/self/statm (second field, pages; proc(5)). */
static uint64_t self_rss(long page)
{
	unsigned long long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &res) != 2)
		res = 0;
	fclose(f);
	return res * (uint64_t)page;
}

static void add_sample(struct sl_pressure_rt *r, uint64_t now)
{
	r->s[r->head] = (struct cpu_sample){now, self_cpu_ns()};
	r->head = (r->head + 1) % PRESSURE_NSAMPLES;
	if (r->ns < PRESSURE_NSAMPLES)
		r->ns++;
}

/* CPU share over the window: from the oldest sample not older than the
 * window (at least the previous one) to the newest. */
static double cpu_share(struct sl_pressure_rt *r)
{
	if (r->ns < 2)
		return 0;
	const struct cpu_sample *nw = &r->s[(r->head + PRESSURE_NSAMPLES - 1) % PRESSURE_NSAMPLES];
	const struct cpu_sample *old = &r->s[(r->head + PRESSURE_NSAMPLES - 2) % PRESSURE_NSAMPLES];
	uint64_t win = r->a->cfg.pressure.window_ns;
	for (unsigned i = 2; i <= r->ns; i++) {
		const struct cpu_sample *c = &r->s[(r->head + PRESSURE_NSAMPLES - i) % PRESSURE_NSAMPLES];
		if (nw->mono_ns - c->mono_ns > win)
			break;
		old = c;
	}
	if (nw->mono_ns <= old->mono_ns)
		return 0;
	return (double)(nw->cpu_ns - old->cpu_ns) / (double)(nw->mono_ns - old->mono_ns);
}

/* Make the agent match level (every step <= level on, the others off). */
static void apply(struct sl_pressure_rt *r, int level)
{
	struct sl_agent *a = r->a;
	unsigned div = level >= 1 ? (unsigned)a->cfg.pressure.metrics_slowdown : 1;
	unsigned shift = level >= 2 ? (unsigned)a->cfg.pressure.rate_shift : 0;
	struct sl_module *m;

	sl_stats_set_slowdown(a->stats, div);
	atomic_store(&r->divisor, div);
	for (int i = 0; i < a->nmodules; i++) {
		m = &a->modules[i];
		if (m->enabled && !m->state && m->ops->set_rate_shift)
			m->ops->set_rate_shift(m, shift);
	}
	atomic_store(&r->shift, shift);
	atomic_store(&a->pressure_level, level); /* steps 3 and 4 read this */
}

struct sl_pressure_rt *sl_pressure_rt_new(struct sl_agent *a)
{
	const struct sl_config *c = &a->cfg;
	if (!c->pressure.enabled) {
		sl_info(MOD, "self-protection off (pressure.enabled: false)");
		return NULL;
	}
	struct sl_pressure_rt *r = calloc(1, sizeof(*r));
	if (!r) {
		sl_err(MOD, "out of memory: self-protection off");
		return NULL;
	}
	struct sl_pressure_config pc = {
		.cpu_budget = c->pressure.cpu_budget,
		.memory_budget = c->pressure.memory_budget,
		.queue_high = c->pressure.queue_high,
		.release_ratio = c->pressure.release_ratio,
		.dwell_up_ns = c->pressure.dwell_up_ns,
		.dwell_down_ns = c->pressure.dwell_down_ns,
	};
	r->a = a;
	r->level = &a->pressure_level;
	r->page = sysconf(_SC_PAGESIZE);
	pthread_mutex_init(&r->mu, NULL);
	sl_pressure_init(&r->sm, &pc);
	snprintf(r->cg.state, sizeof(r->cg.state), "off");
	if (c->pressure.cgroup.enabled) {
		if (sl_pressure_cgroup_enter(c, "/proc/self/mountinfo", &r->cg))
			sl_warn(MOD, "own cgroup not entered: %s", r->cg.error);
		else
			sl_info(MOD, "running in cgroup %s%s%s (%s)", r->cg.dir, r->cg.mem_dir[0] ? " + " : "",
				r->cg.mem_dir, r->cg.state);
	}
	apply(r, 0);
	add_sample(r, sl_mono_ns());
	sl_info(MOD, "budget: cpu %.4f of one CPU over %.0f s, memory %llu MiB; steps at %.0f s dwell, back at %.0f s",
		pc.cpu_budget, (double)c->pressure.window_ns / 1e9, (unsigned long long)(pc.memory_budget >> 20),
		(double)pc.dwell_up_ns / 1e9, (double)pc.dwell_down_ns / 1e9);
	return r;
}

void sl_pressure_rt_free(struct sl_pressure_rt *r)
{
	if (!r)
		return;
	apply(r, 0);
	if (strcmp(r->cg.state, "v1") == 0 || strcmp(r->cg.state, "v2") == 0)
		sl_pressure_cgroup_leave(&r->cg);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

void sl_pressure_rt_tick(struct sl_pressure_rt *r, uint64_t now_ns)
{
	static struct sl_log_limit lim = SL_LOG_LIMIT_INIT(1);
	struct sl_agent *a;
	struct sl_store_stats ss;

	if (!r)
		return;
	a = r->a;
	add_sample(r, now_ns);
	struct sl_pressure_input in = {.now_ns = now_ns, .cpu_share = cpu_share(r), .rss_bytes = self_rss(r->page),
				       .store_fill = 0, .ringbuf_fill = 0};
	sl_store_get_stats(a->store, &ss);
	if (a->cfg.store.queue_size)
		in.store_fill = (double)ss.queue_depth / (double)a->cfg.store.queue_size;
	for (int i = 0; i < a->nrb; i++) {
		double f = sl_agent_ringbuf_fill(a->rb_map_fds[i]);
		if (f > in.ringbuf_fill)
			in.ringbuf_fill = f;
	}
	pthread_mutex_lock(&r->mu);
	int before = r->sm.level;
	int level = sl_pressure_update(&r->sm, &in);
	if (level > before)
		snprintf(r->up_reason, sizeof(r->up_reason), "%s", r->sm.reason);
	char reason[SL_PRESSURE_REASON];
	snprintf(reason, sizeof(reason), "%s", r->sm.reason);
	pthread_mutex_unlock(&r->mu);
	if (level == before)
		return;
	apply(r, level);
	sl_log_limited(&lim, level > before ? SL_LOG_WARN : SL_LOG_INFO, MOD, "level %d -> %d (%s %s): %s", before,
		       level, level > before ? "entered" : "left",
		       sl_pressure_step_name(level > before ? level : before), reason);
}

unsigned sl_pressure_rt_tick_divisor(struct sl_pressure_rt *r)
{
	return r ? atomic_load(&r->divisor) : 1;
}

static const char *zone_name(enum sl_pressure_zone z)
{
	return z == SL_PZ_OVER ? "over" : z == SL_PZ_BAND ? "band" : "under";
}

json_t *sl_pressure_rt_health_json(struct sl_pressure_rt *r, int64_t mono_to_real_ns)
{
	json_t *o = json_object();
	if (!r) {
		json_object_set_new(o, "enabled", json_false());
		json_object_set_new(o, "level", json_integer(0));
		return o;
	}
	struct sl_pressure *sm = malloc(sizeof(*sm));
	struct sl_pressure_cgroup *cg = malloc(sizeof(*cg));
	if (!sm || !cg) {
		free(sm);
		free(cg);
		json_object_set_new(o, "enabled", json_true());
		json_object_set_new(o, "level", json_integer(atomic_load(&r->a->pressure_level)));
		return o;
	}
	pthread_mutex_lock(&r->mu);
	*sm = r->sm;
	*cg = r->cg;
	pthread_mutex_unlock(&r->mu);

	json_t *steps = json_array(), *totals = json_object(), *tr = json_array(), *cgo = json_object();
	for (int s = 1; s <= SL_PRESSURE_MAX_LEVEL; s++) {
		json_t *so = json_object();
		json_object_set_new(so, "step", json_integer(s));
		json_object_set_new(so, "name", json_string(sl_pressure_step_name(s)));
		json_object_set_new(so, "active", json_boolean(sm->level >= s));
		json_array_append_new(steps, so);
		json_object_set_new(totals, sl_pressure_step_name(s), json_integer((json_int_t)sm->steps_total[s]));
	}
	for (unsigned i = SL_PRESSURE_LOG; i-- > 0;) {
		const struct sl_pressure_transition *t = sl_pressure_transition_at(sm, i);
		char tb[SL_TIME_RFC3339_MAX];
		if (!t)
			continue;
		sl_time_format((int64_t)t->mono_ns + mono_to_real_ns, tb, sizeof(tb));
		json_t *to = json_object();
		json_object_set_new(to, "time", json_string(tb));
		json_object_set_new(to, "from", json_integer(t->from));
		json_object_set_new(to, "to", json_integer(t->to));
		json_object_set_new(to, "reason", json_string(t->reason));
		json_array_append_new(tr, to);
	}
	json_object_set_new(cgo, "state", json_string(cg->state));
	if (cg->dir[0])
		json_object_set_new(cgo, "path", json_string(cg->dir));
	if (cg->mem_dir[0])
		json_object_set_new(cgo, "memory_path", json_string(cg->mem_dir));
	if (cg->error[0])
		json_object_set_new(cgo, "error", json_string(cg->error));

	json_object_set_new(o, "enabled", json_true());
	json_object_set_new(o, "level", json_integer(sm->level));
	json_object_set_new(o, "zone", json_string(zone_name(sm->zone)));
	json_object_set_new(o, "reason", json_string(sm->reason));
	json_object_set_new(o, "steps", steps);
	json_object_set_new(o, "cpu_share", json_real(sm->last.cpu_share));
	json_object_set_new(o, "cpu_budget", json_real(sm->cfg.cpu_budget));
	json_object_set_new(o, "rss_bytes", json_integer((json_int_t)sm->last.rss_bytes));
	json_object_set_new(o, "memory_budget_bytes", json_integer((json_int_t)sm->cfg.memory_budget));
	json_object_set_new(o, "store_queue_fill", json_real(sm->last.store_fill));
	json_object_set_new(o, "ringbuf_fill", json_real(sm->last.ringbuf_fill));
	json_object_set_new(o, "window_seconds", json_real((double)r->a->cfg.pressure.window_ns / 1e9));
	json_object_set_new(o, "stats_interval_seconds", json_real((double)sl_stats_interval_ms(r->a->stats) / 1e3));
	json_object_set_new(o, "rate_shift", json_integer(atomic_load(&r->shift)));
	json_object_set_new(o, "steps_total", totals);
	json_object_set_new(o, "transitions_total", json_integer((json_int_t)sm->ntransitions));
	json_object_set_new(o, "transitions", tr);
	json_object_set_new(o, "cgroup", cgo);
	free(sm);
	free(cg);
	return o;
}

void sl_pressure_rt_write_metrics(struct sl_pressure_rt *r, struct sl_prom *p)
{
	if (!r)
		return;
	uint64_t totals[SL_PRESSURE_MAX_LEVEL + 1], ntr;
	struct sl_pressure_input last;
	struct sl_pressure_config cfg;
	int level;

	pthread_mutex_lock(&r->mu);
	memcpy(totals, r->sm.steps_total, sizeof(totals));
	ntr = r->sm.ntransitions;
	last = r->sm.last;
	cfg = r->sm.cfg;
	level = r->sm.level;
	pthread_mutex_unlock(&r->mu);

	sl_prom_one_u64(p, "sandlens_pressure_level", SL_PROM_GAUGE,
			"Degradation level 0..4 (steps 1..level active; docs/ARCHITECTURE.md).", (uint64_t)level);
	const char *n;
	for (int k = 0; k < 2; k++) {
		n = k ? "sandlens_pressure_steps_total" : "sandlens_pressure_step_active";
		sl_prom_family(p, n, k ? SL_PROM_COUNTER : SL_PROM_GAUGE,
			       k ? "Times each degradation step was entered (level reached from below or above)."
				 : "Whether each degradation step is active.");
		for (int s = 1; s <= SL_PRESSURE_MAX_LEVEL; s++) {
			char step[12];
			snprintf(step, sizeof(step), "%d", s);
			const struct sl_prom_label l[] = {{"step", step}, {"name", sl_pressure_step_name(s)}, {NULL, NULL}};
			sl_prom_u64(p, n, l, k ? totals[s] : (uint64_t)(level >= s));
		}
	}
	sl_prom_one_u64(p, "sandlens_pressure_transitions_total", SL_PROM_COUNTER, "Level changes (up or down).", ntr);
	sl_prom_one_f64(p, "sandlens_pressure_cpu_share", SL_PROM_GAUGE,
			"Agent CPU seconds per second over pressure.window.", last.cpu_share);
	sl_prom_one_f64(p, "sandlens_pressure_cpu_budget", SL_PROM_GAUGE, "pressure.cpu_budget (share of one CPU).",
			cfg.cpu_budget);
	sl_prom_one_u64(p, "sandlens_pressure_memory_bytes", SL_PROM_GAUGE, "Agent resident set size at the last tick.",
			last.rss_bytes);
	sl_prom_one_u64(p, "sandlens_pressure_memory_budget_bytes", SL_PROM_GAUGE,
			"pressure.memory_budget (0 = not watched).", cfg.memory_budget);
	n = "sandlens_pressure_queue_fill";
	const struct sl_prom_label qs[] = {{"queue", "store"}, {NULL, NULL}};
	const struct sl_prom_label qr[] = {{"queue", "ringbuf"}, {NULL, NULL}};
	sl_prom_family(p, n, SL_PROM_GAUGE, "Store queue and fullest ring buffer fill at the last tick.");
	sl_prom_f64(p, n, qs, last.store_fill);
	sl_prom_f64(p, n, qr, last.ringbuf_fill > 0 ? last.ringbuf_fill : 0);
}
