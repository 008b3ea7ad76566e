/* The flight recorder in the agent (docs/FLIGHT.md): start/stop, the
 * pipeline's two calls, the tick's host drop sample, /metrics, the read
 * side of the API. Generic over kinds: a kind freezes by its declaration
 * (struct sl_event_kind.freezes), no module is named. */
#include "agent/agent.h"
#include "agent/flight.h"
#include "agent/read.h"
#include "common/log.h"
#include "common/prom.h"
#include "common/timefmt.h"
#include "store/flight_store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MOD "flight"

int sl_agent_flight_start(struct sl_agent *a)
{
	char err[256];
	if (!a->cfg.flight.enabled) {
		sl_info(MOD, "flight recorder off (flight.enabled false)");
		return 0;
	}
	struct sl_flight_db_config dc = {
		.path = a->cfg.store.path,
		.max_age_s = a->cfg.flight.max_age_s,
		.max_recordings = a->cfg.flight.max_recordings,
		.max_bytes = a->cfg.flight.store_max_bytes,
	};
	a->flight_db = sl_flight_db_open(&dc, err, sizeof(err));
	if (!a->flight_db) {
		sl_warn(MOD, "flight recorder off: %s", err);
		return -1;
	}
	struct sl_flight_config fc = {
		.window_ns = a->cfg.flight.window_ns,
		.container_max_bytes = a->cfg.flight.container_max_bytes,
		.max_bytes = a->cfg.flight.max_bytes,
		.max_containers = (unsigned)a->cfg.flight.max_containers,
		.post_trigger_ns = a->cfg.flight.post_trigger_ns,
		.freeze_interval_ns = a->cfg.flight.freeze_interval_ns,
		.max_freezes_per_minute = (unsigned)a->cfg.flight.max_freezes_per_minute,
		.mono_to_real_ns = a->mono_to_real_ns,
		.first_id = sl_flight_db_max_id(a->flight_db),
	};
	a->flight = sl_flight_new(&fc, sl_flight_db_submit, a->flight_db);
	if (!a->flight) {
		sl_warn(MOD, "flight recorder off: out of memory");
		sl_flight_db_close(a->flight_db);
		a->flight_db = NULL;
		return -1;
	}
	char w[32], b[32];
	sl_info(MOD, "flight recorder on: %s per container, %s per ring, recordings from id %lld",
		sl_cfg_fmt_ns(fc.window_ns, w, sizeof(w)), sl_cfg_fmt_bytes(fc.container_max_bytes, b, sizeof(b)),
		(long long)fc.first_id + 1);
	return 0;
}

void sl_agent_flight_stop(struct sl_agent *a)
{
	sl_flight_free(a->flight);
	a->flight = NULL;
	sl_flight_db_close(a->flight_db);
	a->flight_db = NULL;
}

void sl_agent_flight_check(struct sl_agent *a, unsigned kind, uint64_t ts_mono_ns, const struct sl_attr *at,
			   json_t *fields)
{
	if (!a->flight || kind >= a->kinds.n || at->is_container != SL_YES || !at->container_id[0])
		return;
	const struct sl_kind_ent *ke = &a->kinds.e[kind];
	const struct sl_event_kind *k0 = ke->mod->kinds;
	if (!ke->mod->kind_freezes || ke->k < k0 || ke->k >= k0 + ke->mod->nkinds ||
	    !ke->mod->kind_freezes((unsigned)(ke->k - k0), fields))
		return;
	const char *type = a->kinds.e[kind].k->name;
	json_t *info = json_pack("{s:s,s:O?,s:O?,s:O?,s:O?}", "type", type, "time", json_object_get(fields, "time"),
				 "severity", json_object_get(fields, "severity"), "pid", json_object_get(fields, "pid"),
				 "comm", json_object_get(fields, "comm"));
	(void)ts_mono_ns;
	int64_t id = sl_flight_trigger(a->flight, at, type, info, sl_mono_ns());
	json_decref(info);
	if (id > 0)
		json_object_set_new(fields, "flight_recording_id", json_integer(id));
}

void sl_agent_flight_append(struct sl_agent *a, unsigned kind, uint64_t ts_mono_ns, const struct sl_attr *at,
			    uint64_t weight, const char *json)
{
	if (!a->flight || !json || kind >= a->kinds.n || at->is_container != SL_YES)
		return;
	sl_flight_append(a->flight, at, kind, a->kinds.e[kind].k->name, ts_mono_ns, weight, json, strlen(json),
			 sl_mono_ns());
}

/* The host-wide drop counters, as /metrics has them
 * (sandlens_events_dropped_total{reason,type}): the pipeline's own and each
 * running module's write_drops, parsed back from the exposition text. */
#define MAX_DROPS 256
struct drop_buf {
	size_t n;
	struct sl_flight_drop d[MAX_DROPS];
	char reason[MAX_DROPS][48], type[MAX_DROPS][48];
};

static void add_drop(struct drop_buf *b, const char *reason, const char *type, uint64_t v)
{
	if (b->n >= MAX_DROPS || !v)
		return;
	snprintf(b->reason[b->n], sizeof(b->reason[0]), "%s", reason);
	snprintf(b->type[b->n], sizeof(b->type[0]), "%s", type);
	b->d[b->n] = (struct sl_flight_drop){b->reason[b->n], b->type[b->n], v};
	b->n++;
}

/* value of label name="..." in line into out; 0 or -1 */
static int label(const char *line, const char *name, char *out, size_t len)
{
	char key[64];
	snprintf(key, sizeof(key), "%s=\"", name);
	const char *p = strstr(line, key);
	if (!p)
		return -1;
	p += strlen(key);
	const char *q = strchr(p, '"');
	if (!q || (size_t)(q - p) >= len)
		return -1;
	memcpy(out, p, (size_t)(q - p));
	out[q - p] = 0;
	return 0;
}

static void module_drops(struct sl_agent *a, struct drop_buf *b)
{
	static const struct sl_prom_family fam = {"sandlens_events_dropped_total", SL_PROM_COUNTER, "drops"};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return;
	struct sl_prom *p = sl_prom_new(f);
	for (int i = 0; p && i < a->nmodules; i++) {
		struct sl_module *m = &a->modules[i];
		if (!m->enabled || m->state || !m->ops->write_drops)
			continue;
		sl_prom_restrict(p, &fam, 1);
		sl_prom_declared(p, &fam);
		m->ops->write_drops(m, p);
		sl_prom_unrestrict(p);
	}
	sl_prom_free(p);
	fclose(f);
	for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		char reason[48], type[48];
		const char *sp = strrchr(line, ' ');
		if (strncmp(line, fam.name, strlen(fam.name)) || !sp || label(line, "reason", reason, sizeof(reason)) ||
		    label(line, "type", type, sizeof(type)))
			continue;
		add_drop(b, reason, type, strtoull(sp + 1, NULL, 10));
	}
	free(text);
}

void sl_agent_flight_tick(struct sl_agent *a, uint64_t now_ns)
{
	static struct drop_buf b;
	if (!a->flight)
		return;
	b.n = 0;
	for (unsigned k = 0; k < a->kinds.n; k++) {
		add_drop(&b, "store_queue_full", a->kinds.e[k].k->name, atomic_load(&a->kc[k].dropped_store));
		add_drop(&b, "pressure", a->kinds.e[k].k->name, atomic_load(&a->kc[k].dropped_pressure));
	}
	module_drops(a, &b);
	sl_flight_tick(a->flight, now_ns, b.d, b.n);
}

void sl_agent_flight_write_metrics(struct sl_agent *a, struct sl_prom *p)
{
	struct sl_flight_stats s;
	struct sl_flight_db_stats d;
	if (!a->flight)
		return;
	sl_flight_get_stats(a->flight, &s);
	sl_flight_db_get_stats(a->flight_db, &d);
	static const char *const fz = "sandlens_flight_freezes_total";
	sl_prom_family(p, fz, SL_PROM_COUNTER,
		       "Flight-recorder triggers by result: recorded (a recording made), joined (an open one), "
		       "rate_limited_container (flight.freeze_interval), rate_limited_host "
		       "(flight.max_freezes_per_minute), unknown_container.");
	const struct {
		const char *r;
		uint64_t v;
	} fr[] = {{"recorded", s.recorded},
		  {"joined", s.joined},
		  {"rate_limited_container", s.rate_limited_container},
		  {"rate_limited_host", s.rate_limited_host},
		  {"unknown_container", s.unknown_container}};
	for (size_t i = 0; i < sizeof(fr) / sizeof(fr[0]); i++) {
		const struct sl_prom_label l[] = {{"result", fr[i].r}, {NULL, NULL}};
		sl_prom_u64(p, fz, l, fr[i].v);
	}
	static const char *const rd = "sandlens_flight_ring_dropped_total";
	sl_prom_family(p, rd, SL_PROM_COUNTER,
		       "Events the flight-recorder rings dropped before their time: container_bytes "
		       "(flight.container_max_bytes), total_bytes (flight.max_bytes), evicted (with a container "
		       "evicted for flight.max_containers).");
	const struct {
		const char *r;
		uint64_t v;
	} dr[] = {{"container_bytes", s.ring_dropped_container_bytes},
		  {"total_bytes", s.ring_dropped_total_bytes},
		  {"evicted", s.ring_dropped_evicted}};
	for (size_t i = 0; i < sizeof(dr) / sizeof(dr[0]); i++) {
		const struct sl_prom_label l[] = {{"reason", dr[i].r}, {NULL, NULL}};
		sl_prom_u64(p, rd, l, dr[i].v);
	}
	sl_prom_one_u64(p, "sandlens_flight_events_total", SL_PROM_COUNTER, "Events put into flight-recorder rings.",
			s.appended);
	sl_prom_one_u64(p, "sandlens_flight_containers", SL_PROM_GAUGE, "Containers with a flight-recorder ring.",
			s.containers);
	sl_prom_one_u64(p, "sandlens_flight_ring_bytes", SL_PROM_GAUGE,
			"Bytes of every flight-recorder ring (JSON text + per-entry overhead).", s.bytes);
	sl_prom_one_u64(p, "sandlens_flight_ring_events", SL_PROM_GAUGE, "Events in every flight-recorder ring.",
			s.entries);
	sl_prom_one_u64(p, "sandlens_flight_containers_evicted_total", SL_PROM_COUNTER,
			"Containers whose ring was evicted for flight.max_containers.", s.containers_evicted);
	sl_prom_one_u64(p, "sandlens_flight_recordings_written_total", SL_PROM_COUNTER,
			"Flight recordings committed to the store.", d.written);
	sl_prom_one_u64(p, "sandlens_flight_recordings_dropped_total", SL_PROM_COUNTER,
			"Flight recordings lost: the store's queue was full or a write failed.",
			d.dropped_queue + d.write_errors);
	sl_prom_one_u64(p, "sandlens_flight_recordings_retention_deleted_total", SL_PROM_COUNTER,
			"Stored flight recordings removed by retention (flight.max_age, max_recordings, store_max_bytes).",
			d.retention_deleted);
}

json_t *sl_read_flight(struct sl_agent *a, int64_t id, int redact, unsigned *status, char *err, size_t errlen)
{
	if (!a->flight_db) {
		*status = 503;
		snprintf(err, errlen, "the flight recorder is off (flight.enabled, or it could not start: see the log)");
		return NULL;
	}
	json_t *j = sl_flight_db_get(a->flight_db, id, status, err, errlen);
	if (j && redact)
		json_object_set_new(j, "events_withheld_fields",
				    json_integer((json_int_t)sl_kinds_withhold(&a->kinds, json_object_get(j, "events"))));
	return j;
}

json_t *sl_read_flight_list(struct sl_agent *a, const char *container, unsigned limit, unsigned *status, char *err,
			    size_t errlen)
{
	if (!a->flight_db) {
		*status = 503;
		snprintf(err, errlen, "the flight recorder is off (flight.enabled, or it could not start: see the log)");
		return NULL;
	}
	json_t *l = sl_flight_db_list(a->flight_db, container, limit, err, errlen);
	if (!l) {
		*status = 500;
		return NULL;
	}
	return json_pack("{s:o}", "recordings", l);
}
