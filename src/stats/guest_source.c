/* The guest-agent source's answer (docs/STATS.md "Guest-agent source"):
 * status codes, the read under an identity check, epochs.
 *
 * Locking. The read path takes no lock of the statistics collector and
 * none of the Kata runtime (its state is read from files, non-blocking).
 * The only lock here is this source's own epoch table mutex, held for a
 * table lookup and update, never across I/O or the guest call. */
#include "stats/guest.h"
#include "stats/stats.h"
#include "common/timefmt.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EPOCH_SLOTS 1024

struct epoch_member {
	uint64_t id_hash;
	uint64_t cpu_usec, peak;
};

struct epoch_ent {
	char id[SL_GUEST_ID_LEN]; /* "" = free */
	uint64_t member_key;      /* workload member ids + start times */
	uint64_t vmm_key;         /* hypervisor uuid + pid */
	uint64_t state_ino;       /* the sandbox's incarnation (persist.json inode) */
	uint64_t generation;
	char epoch_id[SL_STATS_EPOCH_LEN];
	int64_t start_ns;
	const char *reason; /* why this epoch began (static string) */
	unsigned vmm_changes;  /* VMM restarts seen within this epoch (restores) */
	int64_t last_read_mono; /* start of the read last applied */
	size_t n;
	struct epoch_member m[SL_GUEST_MAX_MEMBERS];
};

struct sl_guest {
	struct sl_guest_config cfg;
	char open_root[512]; /* host_root + kata_root */
	atomic_uint inflight;
	pthread_mutex_t mu; /* the epoch table only; never held across I/O */
	struct epoch_ent *ep; /* EPOCH_SLOTS */
};

struct sl_guest *sl_guest_new(const struct sl_guest_config *cfg)
{
	struct sl_guest *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->ep = calloc(EPOCH_SLOTS, sizeof(*g->ep));
	if (!g->ep) {
		free(g);
		return NULL;
	}
	g->cfg = *cfg;
	if (!g->cfg.kata_root[0])
		snprintf(g->cfg.kata_root, sizeof(g->cfg.kata_root), "/run/vc");
	if (!g->cfg.timeout_ns)
		g->cfg.timeout_ns = 1000000000ull;
	if (!g->cfg.max_inflight)
		g->cfg.max_inflight = 8;
	snprintf(g->open_root, sizeof(g->open_root), "%s%s", g->cfg.host_root, g->cfg.kata_root);
	pthread_mutex_init(&g->mu, NULL);
	return g;
}

void sl_guest_free(struct sl_guest *g)
{
	if (!g)
		return;
	pthread_mutex_destroy(&g->mu);
	free(g->ep);
	free(g);
}

int sl_guest_knows(struct sl_guest *g, const char *id)
{
	if (!g || !id[0] || strchr(id, '/') || id[0] == '.')
		return 0;
	char p[600];
	snprintf(p, sizeof(p), "%s/sbs/%s", g->open_root, id);
	return access(p, F_OK) == 0;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 1099511628211ull;
	}
	return h;
}
#define FNV0 1469598103934665603ull

static int64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* ------------------------------------------------------------ epochs */

struct epoch_view {
	char id[SL_STATS_EPOCH_LEN];
	int64_t start_ns;
	const char *reason;
	unsigned vmm_changes;
	int first; /* this sample began the epoch */
};

/* Per-member figures of one read, for the epoch rules. */
struct member_obs {
	const struct sl_kata_member *m;
	int answered;
	struct sl_guest_sample s;
};

static void epoch_update(struct sl_guest *g, const struct sl_kata_sandbox *sb, uint64_t member_key,
			 const struct member_obs *obs, size_t nobs, int64_t read_mono,
			 int64_t now_wall, struct epoch_view *v)
{
	uint64_t vmm_key = fnv(fnv(FNV0, sb->hv_uuid, strlen(sb->hv_uuid)), &sb->hv_pid, sizeof(sb->hv_pid));
	pthread_mutex_lock(&g->mu);
	struct epoch_ent *e = NULL, *victim = &g->ep[0];
	for (size_t i = 0; i < EPOCH_SLOTS; i++) {
		struct epoch_ent *x = &g->ep[i];
		if (x->id[0] && !strcmp(x->id, sb->id)) {
			e = x;
			break;
		}
		if (!x->id[0])
			victim = victim->id[0] ? x : victim;
		else if (victim->id[0] && x->last_read_mono < victim->last_read_mono)
			victim = x;
	}
	const char *reason = NULL;
	if (!e) {
		e = victim;
		memset(e, 0, sizeof(*e));
		snprintf(e->id, sizeof(e->id), "%s", sb->id);
		reason = "first_seen";
	} else if (read_mono < e->last_read_mono) {
		/* an older read finishing after a newer one: its figures may be
		 * lower without any reset; report the current epoch, change nothing */
		goto out;
	} else if (e->state_ino != sb->state_ino) {
		reason = "sandbox_recreated";
	} else if (e->member_key != member_key) {
		reason = "members_changed";
	} else {
		for (size_t i = 0; i < nobs && !reason; i++) {
			if (!obs[i].answered)
				continue;
			uint64_t h = fnv(FNV0, obs[i].m->id, strlen(obs[i].m->id));
			for (size_t k = 0; k < e->n; k++)
				if (e->m[k].id_hash == h &&
				    (obs[i].s.cpu_usage_usec < e->m[k].cpu_usec || obs[i].s.mem_peak_bytes < e->m[k].peak))
					reason = "counter_reset";
		}
		if (!reason && e->vmm_key != vmm_key)
			e->vmm_changes++; /* a restore: guest memory came back, counters did not fall */
	}
	if (reason) {
		e->generation++;
		e->member_key = member_key;
		e->start_ns = now_wall;
		e->reason = reason;
		e->vmm_changes = 0;
		uint64_t h = fnv(FNV0, sb->id, strlen(sb->id));
		h = fnv(h, &member_key, sizeof(member_key));
		h = fnv(h, &e->generation, sizeof(e->generation));
		h = fnv(h, &now_wall, sizeof(now_wall));
		snprintf(e->epoch_id, sizeof(e->epoch_id), "%016llx", (unsigned long long)h);
		e->n = 0;
	}
	e->vmm_key = vmm_key;
	e->state_ino = sb->state_ino;
	e->last_read_mono = read_mono;
	/* keep the last figures of every member that answered */
	for (size_t i = 0; i < nobs; i++) {
		if (!obs[i].answered)
			continue;
		uint64_t h = fnv(FNV0, obs[i].m->id, strlen(obs[i].m->id));
		size_t k;
		for (k = 0; k < e->n && e->m[k].id_hash != h; k++)
			;
		if (k == e->n) {
			if (e->n >= SL_GUEST_MAX_MEMBERS)
				continue;
			e->n++;
		}
		e->m[k] = (struct epoch_member){h, obs[i].s.cpu_usage_usec, obs[i].s.mem_peak_bytes};
	}
out:
	snprintf(v->id, sizeof(v->id), "%s", e->epoch_id);
	v->start_ns = e->start_ns;
	v->reason = e->reason;
	v->vmm_changes = e->vmm_changes;
	v->first = reason != NULL;
	pthread_mutex_unlock(&g->mu);
}

/* ------------------------------------------------------------ answer */

static int err_reply(struct sl_stats_reply *r, unsigned status, const char *code, const char *reason,
		     const char *msg)
{
	r->status = status;
	r->body = sl_stats_error_body(code, reason, msg, &r->len);
	return r->body ? 0 : -ENOMEM;
}

static json_t *time_json(int64_t ns)
{
	char buf[SL_TIME_RFC3339_MAX];
	if (ns <= 0 || sl_time_format(ns, buf, sizeof(buf)) < 0)
		return json_null();
	return json_string(buf);
}

static json_t *u64(int known, uint64_t v)
{
	return known ? json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v) : json_null();
}

static void put_sample(json_t *o, const struct sl_guest_sample *s)
{
	uint32_t k = s->known;
#define P(name, bit, v) json_object_set_new(o, name, u64(k & (bit), s->v))
	P("cpu_usage_usec", SL_GS_CPU_USAGE, cpu_usage_usec);
	P("cpu_user_usec", SL_GS_CPU_USER, cpu_user_usec);
	P("cpu_system_usec", SL_GS_CPU_SYSTEM, cpu_system_usec);
	P("cpu_cfs_periods", SL_GS_CPU_THROTTLE, cpu_periods);
	P("cpu_cfs_throttled_periods", SL_GS_CPU_THROTTLE, cpu_throttled_periods);
	P("cpu_cfs_throttled_usec", SL_GS_CPU_THROTTLE, cpu_throttled_usec);
	P("memory_current_bytes", SL_GS_MEM_USAGE, mem_usage_bytes);
	P("memory_working_set_bytes", SL_GS_MEM_WS, mem_working_set_bytes);
	P("memory_peak_bytes", SL_GS_MEM_PEAK, mem_peak_bytes);
	P("memory_cache_bytes", SL_GS_MEM_CACHE, mem_cache_bytes);
	P("memory_swap_bytes", SL_GS_MEM_SWAP, mem_swap_bytes);
	P("pids_current", SL_GS_PIDS, pids_current);
#undef P
}

static const char *errname(int rc)
{
	return rc == -ETIMEDOUT ? "timed out" : strerror(rc < 0 ? -rc : rc);
}

static int answer(struct sl_guest *g, const char *id, struct sl_stats_reply *r)
{
	char msg[512];
	int64_t t0 = sl_guest_mono_ns(), deadline = t0 + (int64_t)g->cfg.timeout_ns;
	struct sl_kata_sandbox *sb = malloc(sizeof(*sb) * 2);
	if (!sb)
		return -ENOMEM;
	struct sl_kata_sandbox *after = sb + 1;
	struct member_obs obs[SL_GUEST_MAX_MEMBERS];
	struct sl_guest_addr addr = {.path_fd = -1};
	struct sl_guest_conn *conn = NULL;
	int ret;

	int rc = sl_kata_read(g->open_root, id, sb);
	if (rc == -ENOENT) {
		snprintf(msg, sizeof(msg), "no Kata sandbox %s on this node (%s/sbs)", id, g->cfg.kata_root);
		ret = err_reply(r, 404, "NOT_FOUND", NULL, msg);
		goto done;
	}
	if (rc) {
		snprintf(msg, sizeof(msg), "sandbox %s: its Kata state could not be read (%s)", id, errname(rc));
		ret = err_reply(r, 503, "FAILED_PRECONDITION", "unreadable", msg);
		goto done;
	}
	if (!strcmp(sb->state, "stopped")) {
		snprintf(msg, sizeof(msg), "sandbox %s is tearing down (state stopped)", id);
		ret = err_reply(r, 503, "FAILED_PRECONDITION", "tearing_down", msg);
		goto done;
	}
	if (strcmp(sb->state, "running")) {
		snprintf(msg, sizeof(msg), "sandbox %s has no guest to ask yet (state %s: booting, restoring or paused)",
			 id, sb->state[0] ? sb->state : "unknown");
		ret = err_reply(r, 409, "FAILED_PRECONDITION", "no_guest", msg);
		goto done;
	}
	size_t nw = 0;
	uint64_t member_key = FNV0;
	for (size_t i = 0; i < sb->n; i++)
		if (sb->m[i].workload) {
			obs[nw++] = (struct member_obs){.m = &sb->m[i]};
			member_key = fnv(member_key, sb->m[i].id, strlen(sb->m[i].id) + 1);
			member_key = fnv(member_key, sb->m[i].start, strlen(sb->m[i].start) + 1);
		}
	if (!nw) {
		snprintf(msg, sizeof(msg), "sandbox %s has no workload container yet (only its sandbox "
			 "container or containers never started)", id);
		ret = err_reply(r, 409, "FAILED_PRECONDITION", "no_workload_containers", msg);
		goto done;
	}
	rc = sl_kata_agent_addr(g->cfg.kata_root, g->open_root, sb, &addr);
	if (rc == -ENOENT) {
		snprintf(msg, sizeof(msg), "sandbox %s has no guest to ask yet: its agent socket is not there", id);
		ret = err_reply(r, 409, "FAILED_PRECONDITION", "no_guest", msg);
		goto done;
	}
	if (rc) {
		snprintf(msg, sizeof(msg), "sandbox %s: agent address %.300s refused (%s)", id, sb->agent_url,
			 rc == -EPERM ? "outside stats.guest.kata_root, a symlink or not a socket" : "unparsable");
		ret = err_reply(r, 503, "FAILED_PRECONDITION", "unreadable", msg);
		goto done;
	}
	int cerr = 0, lasterr = 0;
	conn = sl_guest_connect(&addr, deadline, &cerr);
	size_t nread = 0;
	struct sl_guest_sample total;
	memset(&total, 0, sizeof(total));
	if (!conn)
		lasterr = cerr;
	for (size_t i = 0; conn && i < nw; i++) {
		Grpc__StatsContainerResponse *resp = NULL;
		int code = 0;
		rc = sl_guest_stats_call(conn, obs[i].m->id, deadline, &resp, &code);
		if (rc == SL_GCALL_OK) {
			sl_guest_from_cgroup_stats(resp ? resp->cgroup_stats : NULL, &obs[i].s);
			obs[i].answered = 1;
			sl_guest_sample_add(&total, &obs[i].s);
			nread++;
		} else if (rc < 0) {
			lasterr = rc;
			break; /* the connection is unusable (timeout, closed, garbage) */
		}
		if (resp)
			grpc__stats_container_response__free_unpacked(resp, NULL);
	}
	sl_guest_conn_close(conn);
	conn = NULL;

	/* identity re-check: the answer belongs to the sandbox read at the
	 * start, or to none */
	rc = sl_kata_read(g->open_root, id, after);
	if (rc == -ENOENT) {
		snprintf(msg, sizeof(msg), "sandbox %s went away during the read (tearing down)", id);
		ret = err_reply(r, 503, "FAILED_PRECONDITION", "tearing_down", msg);
		goto done;
	}
	if (rc || after->ident != sb->ident) {
		snprintf(msg, sizeof(msg), "sandbox %s was replaced during the read: the figures belonged to "
			 "the previous one and are not reported", id);
		ret = err_reply(r, 404, "NOT_FOUND", NULL, msg);
		goto done;
	}
	if (!nread) {
		snprintf(msg, sizeof(msg), "sandbox %s: the guest answered for none of its %zu workload "
			 "containers (%s)", id, nw, lasterr ? errname(lasterr) : "every container refused");
		ret = err_reply(r, 503, "FAILED_PRECONDITION", "guest_not_answering", msg);
		goto done;
	}

	int64_t now = wall_ns();
	struct epoch_view ev;
	epoch_update(g, sb, member_key, obs, nw, t0, now, &ev);

	json_t *o = json_object(), *notes = json_array(), *cs = json_array(), *ex = json_array();
	json_object_set_new(o, "id", json_string(id));
	json_object_set_new(o, "kind", json_string("sandbox"));
	json_object_set_new(o, "source", json_string("guest_agent"));
	json_object_set_new(o, "comparable_with_cgroup_source", json_false());
	json_object_set_new(o, "observed_at", time_json(now));
	json_object_set_new(o, "runtime", json_string("kata"));
	json_object_set_new(o, "hypervisor", json_string(sb->hv_type));
	json_object_set_new(o, "containers_read", json_integer((json_int_t)nread));
	json_object_set_new(o, "containers_total", json_integer((json_int_t)nw));
	json_t *ej = json_object();
	json_object_set_new(ej, "id", json_string(ev.id));
	json_object_set_new(ej, "start", time_json(ev.start_ns));
	json_object_set_new(ej, "source", json_string("guest_agent"));
	json_object_set_new(ej, "reason", json_string(ev.reason ? ev.reason : ""));
	json_object_set_new(ej, "first_sample", json_boolean(ev.first));
	json_object_set_new(ej, "vmm_restarts", json_integer(ev.vmm_changes));
	json_object_set_new(o, "epoch", ej);
	put_sample(o, &total);
	json_object_set_new(o, "memory_rss_bytes", json_null());
	json_object_set_new(o, "memory_oom_events", json_null());
	json_object_set_new(o, "memory_oom_kill_events", json_null());
	json_object_set_new(o, "io_read_bytes", json_null());
	json_object_set_new(o, "io_write_bytes", json_null());
	json_object_set_new(o, "io_read_ops", json_null());
	json_object_set_new(o, "io_write_ops", json_null());
	json_object_set_new(o, "memory_peak_is_upper_bound", json_boolean(nread > 1));
	json_array_append_new(notes, json_string(
		"source guest_agent: the guest kernel's accounting of the workload containers, read through "
		"the Kata agent; the guest kernel, the agent and the host VMM are overhead outside them. Not "
		"comparable with the host-cgroup source (which holds the VMM and the guest RAM)"));
	if (nread > 1)
		json_array_append_new(notes, json_string(
			"memory_peak_bytes is the sum of the containers' peaks: an upper bound on the peak of "
			"the sum, not the peak itself"));
	if (nread < nw)
		json_array_append_new(notes, json_string(
			"containers the guest did not answer for contribute 0 (containers_read < containers_total)"));
	if (total.flags & SL_GSF_WS_NO_INACTIVE)
		json_array_append_new(notes, json_string(
			"a container's memory.stat had no inactive_file: its working set is its usage (an upper bound)"));
	json_array_append_new(notes, json_string(
		"cumulative figures (cpu_*, memory_peak_bytes) count within the epoch; a restore that brings "
		"the guest memory back continues it, a cold boot starts a new one, and a sandbox resumed from "
		"a shared template can begin its first epoch above zero (epoch.first_sample)"));
	json_object_set_new(o, "notes", notes);
	for (size_t i = 0; i < sb->n; i++) {
		const struct sl_kata_member *m = &sb->m[i];
		if (!m->workload) {
			json_array_append_new(ex, json_string(m->id));
			continue;
		}
		json_t *c = json_object();
		json_object_set_new(c, "id", json_string(m->id));
		json_object_set_new(c, "state", json_string(m->state));
		size_t k;
		for (k = 0; k < nw && obs[k].m != m; k++)
			;
		json_object_set_new(c, "read", json_boolean(k < nw && obs[k].answered));
		if (k < nw && obs[k].answered) {
			put_sample(c, &obs[k].s);
			json_object_set_new(c, "agent_sent_stats", json_boolean(!(obs[k].s.flags & SL_GSF_NIL)));
		}
		json_array_append_new(cs, c);
	}
	json_object_set_new(o, "containers", cs);
	json_object_set_new(o, "containers_excluded", ex);
	r->status = 200;
	r->body = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	r->len = r->body ? strlen(r->body) : 0;
	ret = r->body ? 0 : -ENOMEM;
done:
	if (addr.path_fd >= 0)
		close(addr.path_fd);
	sl_guest_conn_close(conn);
	free(sb);
	return ret;
}

int sl_guest_answer(struct sl_guest *g, const char *id, struct sl_stats_reply *r)
{
	memset(r, 0, sizeof(*r));
	if (!sl_stats_id_valid(id))
		return err_reply(r, 400, "INVALID_ARGUMENT", NULL,
				 "malformed workload id: 1..79 characters of [A-Za-z0-9_.+-], "
				 "not starting with '.' or '-'");
	if (!g)
		return err_reply(r, 503, "FAILED_PRECONDITION", "disabled",
				 "the guest-agent source is disabled (stats.guest.enabled: false)");
	if (atomic_fetch_add(&g->inflight, 1) >= g->cfg.max_inflight) {
		atomic_fetch_sub(&g->inflight, 1);
		return err_reply(r, 503, "FAILED_PRECONDITION", "busy",
				 "too many guest reads in flight; retry");
	}
	int rc = answer(g, id, r);
	atomic_fetch_sub(&g->inflight, 1);
	return rc;
}
