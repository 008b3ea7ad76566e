/* API answers: JSON bodies and status codes (STATS-3..5). docs/STATS.md
 * "API" is the reference for the field names and the status table. */
#include "stats/stats.h"
#include "common/json.h"
#include "common/timefmt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static json_t *time_json(int64_t ns)
{
	char buf[SL_TIME_RFC3339_MAX];
	if (ns <= 0 || sl_time_format(ns, buf, sizeof(buf)) < 0)
		return json_null();
	return json_string(buf);
}

static json_t *u64_json(int known, uint64_t v)
{
	return known ? json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v) : json_null();
}

static json_t *epoch_json(const char *id, int64_t start_ns)
{
	json_t *e = json_object();
	json_object_set_new(e, "id", json_string(id));
	json_object_set_new(e, "start", time_json(start_ns));
	return e;
}

/* The figures of a sum, under the API's names. */
static void put_sum(json_t *o, const struct sl_stats_sum *s)
{
	uint32_t k = s->known;
#define P(name, bit, v) json_object_set_new(o, name, u64_json(k & (bit), s->v))
	P("cpu_usage_usec", SL_SUM_CPU_USAGE, cpu_usage_usec);
	P("cpu_user_usec", SL_SUM_CPU_USER, cpu_user_usec);
	P("cpu_system_usec", SL_SUM_CPU_SYSTEM, cpu_system_usec);
	P("cpu_cfs_periods", SL_SUM_CPU_PERIODS, cpu_nr_periods);
	P("cpu_cfs_throttled_periods", SL_SUM_CPU_THROTTLED, cpu_nr_throttled);
	P("cpu_cfs_throttled_usec", SL_SUM_CPU_THROTTLED_TIME, cpu_throttled_usec);
	P("memory_current_bytes", SL_SUM_MEM_USAGE, mem_usage_bytes);
	P("memory_working_set_bytes", SL_SUM_MEM_WS, mem_working_set_bytes);
	P("memory_peak_bytes", SL_SUM_MEM_PEAK, mem_peak_bytes);
	P("memory_cache_bytes", SL_SUM_MEM_CACHE, mem_cache_bytes);
	P("memory_rss_bytes", SL_SUM_MEM_RSS, mem_rss_bytes);
	P("memory_swap_bytes", SL_SUM_MEM_SWAP, mem_swap_bytes);
	P("memory_oom_events", SL_SUM_OOM, oom_events);
	P("memory_oom_kill_events", SL_SUM_OOM_KILL, oom_kill_events);
	P("io_read_bytes", SL_SUM_IO_BYTES, io_rbytes);
	P("io_write_bytes", SL_SUM_IO_BYTES, io_wbytes);
	P("io_read_ops", SL_SUM_IO_OPS, io_rios);
	P("io_write_ops", SL_SUM_IO_OPS, io_wios);
	P("pids_current", SL_SUM_PIDS, pids_current);
#undef P
}

static json_t *psi_line(int has, const struct sl_psi_line *l)
{
	if (!has)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "avg10", json_real(l->avg10));
	json_object_set_new(o, "avg60", json_real(l->avg60));
	json_object_set_new(o, "avg300", json_real(l->avg300));
	json_object_set_new(o, "total_usec", u64_json(1, l->total_usec));
	return o;
}

static const char *const psi_names[SL_PSI_NRES] = {"cpu", "memory", "io"};

static json_t *ctr_json(const struct sl_stats_ctr *c)
{
	json_t *o = json_object();
	json_object_set_new(o, "id", json_string(c->id));
	json_object_set_new(o, "runtime", json_string(c->runtime));
	json_object_set_new(o, "pod_uid", json_string(c->pod_uid));
	json_object_set_new(o, "sandbox_id", json_string(c->sandbox_id));
	json_object_set_new(o, "cgroup_path", sl_json_strz(c->path));
	/* "overhead": the sandbox's overhead cgroup (kata_overhead/<id>), not a container */
	json_object_set_new(o, "role", json_string(c->overhead ? "overhead" : "container"));
	json_object_set_new(o, "epoch", epoch_json(c->epoch_id, c->epoch_start_ns));
	json_object_set_new(o, "read", json_boolean(c->read_rc == 0));
	if (c->read_rc) {
		json_object_set_new(o, "error", json_string(strerror(-c->read_rc)));
		return o;
	}
	struct sl_stats_sum one;
	sl_stats_sum_init(&one);
	sl_stats_sum_add(&one, &c->st);
	sl_stats_sum_finish(&one);
	put_sum(o, &one);
	const struct sl_cgstat_mem *m = &c->st.mem;
	int lim = m->known & SL_MEM_LIMIT;
	json_object_set_new(o, "memory_limit_bytes",
			    lim && m->limit_bytes == SL_CGSTAT_UNLIMITED ? json_string("max")
									 : u64_json(lim, m->limit_bytes));
	int pm = c->st.pids.known & SL_PIDS_MAX;
	json_object_set_new(o, "pids_max",
			    pm && c->st.pids.max == SL_CGSTAT_UNLIMITED ? json_string("max")
									: u64_json(pm, c->st.pids.max));
	json_t *psi = json_object();
	for (int r = 0; r < SL_PSI_NRES; r++) {
		json_t *p = json_object();
		json_object_set_new(p, "some", psi_line(c->st.psi[r].has_some, &c->st.psi[r].some));
		json_object_set_new(p, "full", psi_line(c->st.psi[r].has_full, &c->st.psi[r].full));
		json_object_set_new(psi, psi_names[r], p);
	}
	json_object_set_new(o, "pressure", psi);
	json_object_set_new(o, "cgroup_version", json_integer(c->st.version));
	return o;
}

static const char *state_name(int st)
{
	return st == SL_WLS_READY ? "ready" : st == SL_WLS_NO_CGROUP ? "no_cgroup" : "unreadable";
}

json_t *sl_stats_wl_json(const struct sl_stats_snap *s, const struct sl_stats_wl *w)
{
	json_t *o = json_object(), *cs = json_array(), *notes = json_array();
	json_object_set_new(o, "id", json_string(w->id));
	json_object_set_new(o, "kind", json_string(sl_wl_kind_name(w->kind)));
	json_object_set_new(o, "source", json_string("cgroup"));
	json_object_set_new(o, "observed_at", time_json(s->observed_ns));
	json_object_set_new(o, "containers_read", json_integer(w->sum.nread));
	json_object_set_new(o, "containers_total", json_integer(w->n));
	json_object_set_new(o, "epoch", epoch_json(w->epoch_id, w->epoch_start_ns));
	put_sum(o, &w->sum);
	json_object_set_new(o, "memory_peak_is_upper_bound", json_boolean(w->sum.nread > 1));
	if (w->sum.nread > 1)
		json_array_append_new(notes, json_string(
			"memory_peak_bytes is the sum of the containers' peaks: an upper bound on the "
			"peak of the sum, not the peak itself (the containers need not peak at once)"));
	if (w->sum.nread < w->n)
		json_array_append_new(notes, json_string(
			"containers that could not be read contribute 0 (containers_read < containers_total)"));
	json_array_append_new(notes, json_string(
		"source cgroup: host cgroup accounting; for a micro-VM sandbox it holds the VMM and "
		"guest RAM, not the guest's own accounting, and is not comparable with a guest-agent "
		"source"));
	json_array_append_new(notes, json_string(
		"cumulative figures (cpu_*, memory_peak_bytes, io_*, memory_oom_*) count within the epoch; "
		"a new epoch id means they restarted"));
	if (w->kind == SL_WL_SANDBOX)
		json_array_append_new(notes, json_string(
			"sandbox epoch (source cgroup): the identity of its member cgroups (the sandbox "
			"cgroup, its overhead cgroup, nested containers); a member re-created (new cgroup "
			"inode) or added/removed starts a new epoch"));
	json_object_set_new(o, "notes", notes);
	for (uint32_t i = 0; i < w->n; i++)
		json_array_append_new(cs, ctr_json(&s->ctr[s->members[w->first + i]]));
	json_object_set_new(o, "containers", cs);
	return o;
}

json_t *sl_stats_list_json(const struct sl_stats_snap *s)
{
	json_t *o = json_object(), *a = json_array();
	json_object_set_new(o, "observed_at", time_json(s->observed_ns));
	json_object_set_new(o, "source", json_string("cgroup"));
	for (size_t i = 0; i < s->nwl; i++) {
		const struct sl_stats_wl *w = &s->wl[i];
		json_t *e = json_object();
		json_object_set_new(e, "id", json_string(w->id));
		json_object_set_new(e, "kind", json_string(sl_wl_kind_name(w->kind)));
		json_object_set_new(e, "state", json_string(state_name(w->state)));
		json_object_set_new(e, "containers_read", json_integer(w->sum.nread));
		json_object_set_new(e, "containers_total", json_integer(w->n));
		json_object_set_new(e, "epoch", epoch_json(w->epoch_id, w->epoch_start_ns));
		if (w->kind == SL_WL_CONTAINER && w->n) {
			const struct sl_stats_ctr *c = &s->ctr[s->members[w->first]];
			json_object_set_new(e, "runtime", json_string(c->runtime));
			json_object_set_new(e, "pod_uid", json_string(c->pod_uid));
			json_object_set_new(e, "sandbox_id", json_string(c->sandbox_id));
		}
		json_array_append_new(a, e);
	}
	for (size_t i = 0; i < s->ngone; i++) {
		json_t *e = json_object();
		json_object_set_new(e, "id", json_string(s->gone[i].id));
		json_object_set_new(e, "kind", json_string(sl_wl_kind_name(s->gone[i].kind)));
		json_object_set_new(e, "state", json_string("tearing_down"));
		json_array_append_new(a, e);
	}
	for (size_t i = 0; i < s->npending; i++) {
		json_t *e = json_object();
		json_object_set_new(e, "id", json_string(s->pending[i].id));
		json_object_set_new(e, "kind", json_string("container"));
		json_object_set_new(e, "state", json_string("no_cgroup"));
		json_array_append_new(a, e);
	}
	json_object_set_new(o, "workloads", a);
	return o;
}

char *sl_stats_error_body(const char *code, const char *reason, const char *msg, size_t *len)
{
	json_t *e = json_object(), *o = json_object();
	json_object_set_new(e, "code", json_string(code));
	json_object_set_new(e, "message", json_string(msg));
	if (reason)
		json_object_set_new(e, "reason", json_string(reason));
	json_object_set_new(o, "error", e);
	char *b = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	*len = b ? strlen(b) : 0;
	return b;
}

static int err_reply(struct sl_stats_reply *r, unsigned status, const char *code,
		     const char *reason, const char *msg)
{
	r->status = status;
	r->body = sl_stats_error_body(code, reason, msg, &r->len);
	return r->body ? 0 : -ENOMEM;
}

static int json_reply(struct sl_stats_reply *r, json_t *o)
{
	r->status = 200;
	r->body = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	r->len = r->body ? strlen(r->body) : 0;
	return r->body ? 0 : -ENOMEM;
}

int sl_stats_answer(const struct sl_stats_snap *s, const char *id, struct sl_stats_reply *r)
{
	char msg[256];
	memset(r, 0, sizeof(*r));
	if (!sl_stats_id_valid(id))
		return err_reply(r, 400, "INVALID_ARGUMENT", NULL,
				 "malformed workload id: 1..79 characters of [A-Za-z0-9_.+-], "
				 "not starting with '.' or '-'");
	if (!s)
		return err_reply(r, 503, "FAILED_PRECONDITION", "collector_not_ready",
				 "the statistics collector has not completed a pass yet");
	const struct sl_stats_wl *w = sl_stats_snap_find(s, id);
	if (!w && strlen(id) >= SL_STATS_MIN_PREFIX) {
		/* a unique prefix, as docker and crictl take one (the 12-hex
		 * short id the CLI prints) */
		size_t plen = strlen(id);
		for (size_t i = 0; i < s->nwl; i++) {
			if (strncmp(s->wl[i].id, id, plen))
				continue;
			if (!w) {
				w = &s->wl[i];
			} else if (strcmp(w->id, s->wl[i].id)) {
				snprintf(msg, sizeof(msg),
					 "workload id prefix %s matches more than one workload (%.12s..., %.12s...): "
					 "give more characters",
					 id, w->id, s->wl[i].id);
				return err_reply(r, 400, "INVALID_ARGUMENT", "ambiguous_id", msg);
			}
		}
		if (w)
			id = w->id;
	}
	if (w && w->state == SL_WLS_READY)
		return json_reply(r, sl_stats_wl_json(s, w));
	if (w && w->state == SL_WLS_NO_CGROUP) {
		snprintf(msg, sizeof(msg), "%s %s exists but has no container cgroup yet",
			 sl_wl_kind_name(w->kind), id);
		return err_reply(r, 409, "FAILED_PRECONDITION", "no_cgroup", msg);
	}
	if (w) {
		snprintf(msg, sizeof(msg), "%s %s: none of its %u container cgroups could be read",
			 sl_wl_kind_name(w->kind), id, w->n);
		return err_reply(r, 503, "FAILED_PRECONDITION", "unreadable", msg);
	}
	for (size_t i = 0; i < s->npending; i++)
		if (!strcmp(s->pending[i].id, id)) {
			snprintf(msg, sizeof(msg),
				 "container %s is in runc's state but its cgroup was not found "
				 "(not created yet, or already removed)", id);
			return err_reply(r, 409, "FAILED_PRECONDITION", "no_cgroup", msg);
		}
	for (size_t i = 0; i < s->ngone; i++)
		if (!strcmp(s->gone[i].id, id)) {
			snprintf(msg, sizeof(msg), "%s %s is tearing down: its cgroups were removed",
				 sl_wl_kind_name(s->gone[i].kind), id);
			return err_reply(r, 503, "FAILED_PRECONDITION", "tearing_down", msg);
		}
	snprintf(msg, sizeof(msg), "no workload %s on this node", id);
	return err_reply(r, 404, "NOT_FOUND", NULL, msg);
}

int sl_stats_list_answer(const struct sl_stats_snap *s, struct sl_stats_reply *r)
{
	memset(r, 0, sizeof(*r));
	if (!s)
		return err_reply(r, 503, "FAILED_PRECONDITION", "collector_not_ready",
				 "the statistics collector has not completed a pass yet");
	return json_reply(r, sl_stats_list_json(s));
}
