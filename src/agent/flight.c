/* The per-container flight recorder: rings, bounds, triggers, completion
 * (flight.h, docs/FLIGHT.md). */
#include "agent/flight.h"

#include "common/timefmt.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

uint64_t sl_mono_ns(void);

struct fl_ct;

/* One event in a ring: in its container's list (oldest first) and in the
 * host-wide list in append order (a container's entries are in the same
 * order in both, so the host-wide oldest is always its container's head). */
struct fl_ent {
	struct fl_ent *next;          /* the container's next newer entry */
	struct fl_ent *gprev, *gnext; /* host-wide append order */
	struct fl_ct *ct;
	uint64_t ts, weight, seq;
	const char *type; /* the kind's name (static, the kind table's) */
	size_t len;
	char json[];
};

/* A recording opened by a trigger, completed at deadline. */
struct fl_open {
	int64_t id;
	uint64_t opened, deadline;
	char reason[64];
	int64_t trigger_event_id;
	json_t *triggers;  /* array, at most SL_FLIGHT_MAX_TRIGGERS */
	uint64_t ntriggers; /* every trigger, listed or not */
};

struct fl_ct {
	char id[SL_CONTAINER_ID_LEN]; /* hash key */
	char pod_uid[SL_POD_UID_LEN];
	char runtime[SL_RUNTIME_LEN];
	struct fl_ent *head, *tail;
	size_t n;
	uint64_t bytes;
	uint64_t last_ns;      /* CLOCK_MONOTONIC of its last append (eviction order) */
	uint64_t last_freeze;  /* CLOCK_MONOTONIC of its last recording's opening */
	int frozen;            /* last_freeze is set */
	/* external freezes (captures) have their own interval and do not
	 * count against the deaths' one: a capture must not cost the
	 * container the recording of its crash a moment later */
	uint64_t last_external;
	int ext_frozen;
	uint64_t dropped;      /* entries dropped for the byte bounds since its last recording */
	uint64_t dropped_newest_ts; /* the newest of them (CLOCK_MONOTONIC) */
	struct fl_open *open;
	UT_hash_handle hh;
};

/* A host-wide drop sample (tick): counters by "reason/type". */
struct fl_sample {
	struct fl_sample *next;
	uint64_t ts;
	json_t *counts; /* {"reason": {"type": total}} */
};
#define FL_MAX_SAMPLES 4096

struct sl_flight {
	struct sl_flight_config cfg;
	sl_flight_sink sink;
	void *ctx;
	pthread_mutex_t mu;
	struct fl_ct *cts; /* uthash by id */
	struct fl_ent *ghead, *gtail;
	uint64_t bytes, entries, ncts, seq;
	int64_t next_id;
	unsigned nopen;
	uint64_t next_due; /* earliest open deadline (valid when nopen) */
	uint64_t bucket_ns, bucket_at; /* host token bucket: credit in ns, as of bucket_at */
	int bucket_init;
	struct fl_sample *shead, *stail;
	unsigned nsamples;
	_Atomic uint64_t st_appended, st_drop_ct, st_drop_total, st_drop_evicted, st_evicted, st_expired,
		st_recorded, st_joined, st_rl_ct, st_rl_host, st_unknown, st_cts, st_bytes, st_entries;
};

#define INC(f, field, n) atomic_fetch_add_explicit(&(f)->field, (n), memory_order_relaxed)

void sl_flight_rec_free(struct sl_flight_rec *r)
{
	if (!r)
		return;
	free(r->json);
	free(r);
}

struct sl_flight *sl_flight_new(const struct sl_flight_config *cfg, sl_flight_sink sink, void *ctx)
{
	struct sl_flight *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	if (cfg)
		f->cfg = *cfg;
	struct sl_flight_config *c = &f->cfg;
	if (!c->window_ns)
		c->window_ns = SL_FLIGHT_DEFAULT_WINDOW_NS;
	if (!c->container_max_bytes)
		c->container_max_bytes = SL_FLIGHT_DEFAULT_CONTAINER_MAX_BYTES;
	if (!c->max_bytes)
		c->max_bytes = SL_FLIGHT_DEFAULT_MAX_BYTES;
	if (!c->max_containers)
		c->max_containers = SL_FLIGHT_DEFAULT_MAX_CONTAINERS;
	if (!c->max_freezes_per_minute)
		c->max_freezes_per_minute = SL_FLIGHT_DEFAULT_MAX_FREEZES_PER_MINUTE;
	f->sink = sink;
	f->ctx = ctx;
	f->next_id = c->first_id > 0 ? c->first_id + 1 : 1;
	pthread_mutex_init(&f->mu, NULL);
	return f;
}

static void open_free(struct fl_open *o)
{
	if (!o)
		return;
	json_decref(o->triggers);
	free(o);
}

void sl_flight_free(struct sl_flight *f)
{
	if (!f)
		return;
	struct fl_ct *ct, *tmp;
	HASH_ITER(hh, f->cts, ct, tmp)
	{
		HASH_DEL(f->cts, ct);
		open_free(ct->open);
		free(ct);
	}
	for (struct fl_ent *e = f->ghead, *n; e; e = n) {
		n = e->gnext;
		free(e);
	}
	for (struct fl_sample *s = f->shead, *n; s; s = n) {
		n = s->next;
		json_decref(s->counts);
		free(s);
	}
	pthread_mutex_destroy(&f->mu);
	free(f);
}

static void publish(struct sl_flight *f)
{
	atomic_store_explicit(&f->st_cts, f->ncts, memory_order_relaxed);
	atomic_store_explicit(&f->st_bytes, f->bytes, memory_order_relaxed);
	atomic_store_explicit(&f->st_entries, f->entries, memory_order_relaxed);
}

static uint64_t ent_cost(size_t len)
{
	return (uint64_t)len + SL_FLIGHT_ENTRY_OVERHEAD;
}

/* Remove its container's oldest entry (which must be e: the host-wide
 * oldest, or the container's head). */
static void drop_head(struct sl_flight *f, struct fl_ent *e)
{
	struct fl_ct *ct = e->ct;
	if (ct->head != e) /* cannot happen: both lists keep append order */
		return;
	ct->head = e->next;
	if (!ct->head)
		ct->tail = NULL;
	ct->n--;
	ct->bytes -= ent_cost(e->len);
	if (e->gprev)
		e->gprev->gnext = e->gnext;
	else
		f->ghead = e->gnext;
	if (e->gnext)
		e->gnext->gprev = e->gprev;
	else
		f->gtail = e->gprev;
	f->bytes -= ent_cost(e->len);
	f->entries--;
	free(e);
}

/* A byte bound dropped e: noted in its container's next recording. */
static void drop_for_bytes(struct sl_flight *f, struct fl_ent *e)
{
	e->ct->dropped++;
	if (e->ts > e->ct->dropped_newest_ts)
		e->ct->dropped_newest_ts = e->ts;
	drop_head(f, e);
}

static void age_out(struct sl_flight *f, uint64_t now)
{
	while (f->ghead && f->ghead->ts + f->cfg.window_ns < now)
		drop_head(f, f->ghead);
}

static void ct_forget(struct sl_flight *f, struct fl_ct *ct)
{
	while (ct->head) {
		INC(f, st_drop_evicted, 1);
		drop_head(f, ct->head);
	}
	if (ct->open) {
		f->nopen--;
		open_free(ct->open);
	}
	HASH_DEL(f->cts, ct);
	f->ncts--;
	free(ct);
}

/* The container of id, created when missing (evicting the one with the
 * oldest last event, without an open recording, when the table is full).
 * NULL when it cannot be made. */
static struct fl_ct *ct_get(struct sl_flight *f, const char *id, const struct sl_attr *at, uint64_t now)
{
	struct fl_ct *ct = NULL;
	HASH_FIND_STR(f->cts, id, ct);
	if (ct)
		return ct;
	if (f->ncts >= f->cfg.max_containers) {
		struct fl_ct *c, *tmp, *old = NULL;
		HASH_ITER(hh, f->cts, c, tmp)
		if (!c->open && (!old || c->last_ns < old->last_ns))
			old = c;
		if (!old)
			return NULL; /* every one has an open recording */
		ct_forget(f, old);
		INC(f, st_evicted, 1);
	}
	ct = calloc(1, sizeof(*ct));
	if (!ct)
		return NULL;
	snprintf(ct->id, sizeof(ct->id), "%s", id);
	if (at) {
		snprintf(ct->pod_uid, sizeof(ct->pod_uid), "%s", at->pod_uid);
		snprintf(ct->runtime, sizeof(ct->runtime), "%s", at->runtime);
	}
	ct->last_ns = now;
	HASH_ADD_STR(f->cts, id, ct);
	f->ncts++;
	return ct;
}

static const char *container_of(const struct sl_attr *at)
{
	if (!at || at->is_container != SL_YES || !at->container_id[0])
		return NULL;
	return at->container_id;
}

/* Take a token of the host bucket (max_freezes_per_minute, burst the same). */
static int bucket_take(struct sl_flight *f, uint64_t now)
{
	const uint64_t cap = 60ull * 1000000000ull, per = cap / f->cfg.max_freezes_per_minute;
	if (!f->bucket_init) {
		f->bucket_init = 1;
		f->bucket_ns = cap;
		f->bucket_at = now;
	}
	if (now > f->bucket_at) {
		f->bucket_ns += now - f->bucket_at;
		if (f->bucket_ns > cap)
			f->bucket_ns = cap;
		f->bucket_at = now;
	}
	if (f->bucket_ns < per)
		return 0;
	f->bucket_ns -= per;
	return 1;
}

/* Under f->mu: open (or join) a recording of ct. Returns its id, or
 * -EBUSY when rate-limited. */
static int64_t open_locked(struct sl_flight *f, struct fl_ct *ct, const char *reason, const json_t *info,
			   int64_t trigger_event_id, uint64_t now, int external)
{
	struct fl_open *o = ct->open;
	if (o) {
		o->ntriggers++;
		if (info && json_array_size(o->triggers) < SL_FLIGHT_MAX_TRIGGERS)
			json_array_append_new(o->triggers, json_deep_copy(info));
		if (trigger_event_id > 0 && !o->trigger_event_id)
			o->trigger_event_id = trigger_event_id;
		INC(f, st_joined, 1);
		return o->id;
	}
	if (external ? ct->ext_frozen && now - ct->last_external < f->cfg.freeze_interval_ns
		     : ct->frozen && now - ct->last_freeze < f->cfg.freeze_interval_ns) {
		INC(f, st_rl_ct, 1);
		return -EBUSY;
	}
	/* the host bucket is the deaths' (restart loops of new containers);
	 * captures are already bounded per (container, detector) by their
	 * cooldown and per container by the interval above */
	if (!external && !bucket_take(f, now)) {
		INC(f, st_rl_host, 1);
		return -EBUSY;
	}
	o = calloc(1, sizeof(*o));
	if (!o || !(o->triggers = json_array())) {
		free(o);
		return -ENOMEM;
	}
	o->id = f->next_id++;
	o->opened = now;
	o->deadline = now + f->cfg.post_trigger_ns;
	snprintf(o->reason, sizeof(o->reason), "%s", reason);
	o->trigger_event_id = trigger_event_id;
	o->ntriggers = 1;
	if (info)
		json_array_append_new(o->triggers, json_deep_copy(info));
	ct->open = o;
	if (external) {
		ct->ext_frozen = 1;
		ct->last_external = now;
	} else {
		ct->frozen = 1;
		ct->last_freeze = now;
	}
	if (!f->nopen || o->deadline < f->next_due)
		f->next_due = o->deadline;
	f->nopen++;
	return o->id;
}

int64_t sl_flight_trigger(struct sl_flight *f, const struct sl_attr *at, const char *reason, const json_t *info,
			  uint64_t now_ns)
{
	const char *id = container_of(at);
	if (!f || !id || !reason)
		return 0;
	pthread_mutex_lock(&f->mu);
	struct fl_ct *ct = ct_get(f, id, at, now_ns);
	int64_t rid = ct ? open_locked(f, ct, reason, info, 0, now_ns, 0) : 0;
	publish(f);
	pthread_mutex_unlock(&f->mu);
	return rid > 0 ? rid : 0;
}

static int64_t freeze_at(struct sl_flight *f, const char *container_id, const char *reason, int64_t trigger_event_id,
			 uint64_t now)
{
	if (!f || !container_id || !container_id[0] || !reason || !reason[0])
		return -EINVAL;
	json_t *info = json_pack("{s:s,s:s}", "type", "external", "reason", reason);
	if (info && trigger_event_id > 0)
		json_object_set_new(info, "event_id", json_integer(trigger_event_id));
	pthread_mutex_lock(&f->mu);
	struct fl_ct *ct = NULL;
	HASH_FIND_STR(f->cts, container_id, ct);
	int64_t rid;
	if (!ct || (!ct->head && !ct->open)) {
		INC(f, st_unknown, 1);
		rid = -ENOENT;
	} else {
		rid = open_locked(f, ct, reason, info, trigger_event_id, now, 1);
	}
	pthread_mutex_unlock(&f->mu);
	json_decref(info);
	if (rid > 0 && f->cfg.post_trigger_ns == 0)
		sl_flight_complete_due(f, now);
	return rid;
}

int64_t sl_flight_freeze(struct sl_flight *f, const char *container_id, const char *reason, int64_t trigger_event_id)
{
	return freeze_at(f, container_id, reason, trigger_event_id, sl_mono_ns());
}

/* Tests: the same at a given CLOCK_MONOTONIC time. */
int64_t sl_flight_freeze_at(struct sl_flight *f, const char *container_id, const char *reason,
			    int64_t trigger_event_id, uint64_t now_ns);
int64_t sl_flight_freeze_at(struct sl_flight *f, const char *container_id, const char *reason,
			    int64_t trigger_event_id, uint64_t now_ns)
{
	return freeze_at(f, container_id, reason, trigger_event_id, now_ns);
}

/* ---- completion ---- */

struct snap_ent {
	uint64_t ts, weight, seq;
	const char *type;
	char *json;
	size_t len;
};

/* What one due recording takes out of the rings (under f->mu). */
struct snap {
	struct snap *next;
	struct fl_open *open;
	char container_id[SL_CONTAINER_ID_LEN], pod_uid[SL_POD_UID_LEN], runtime[SL_RUNTIME_LEN];
	uint64_t now, from;
	uint64_t dropped, dropped_newest_ts;
	struct snap_ent *e;
	size_t n;
	json_t *host_drops; /* {"reason": {"type": n}} over the window, or NULL */
	uint64_t host_from; /* time of the baseline sample */
	int oom;
};

/* The host's drops between the sample at or before `from` (else the
 * oldest) and the newest one. */
static json_t *host_drops(struct sl_flight *f, uint64_t from, uint64_t *base_ts)
{
	struct fl_sample *base = f->shead, *last = f->stail;
	if (!base || !last)
		return NULL;
	for (struct fl_sample *s = f->shead; s; s = s->next)
		if (s->ts <= from)
			base = s;
	*base_ts = base->ts;
	json_t *out = json_object();
	const char *reason, *type;
	json_t *types, *v;
	json_object_foreach(last->counts, reason, types)
	{
		json_object_foreach(types, type, v)
		{
			json_t *b = json_object_get(json_object_get(base->counts, reason), type);
			uint64_t now = (uint64_t)json_integer_value(v), was = b ? (uint64_t)json_integer_value(b) : 0;
			if (now <= was)
				continue;
			json_t *r = json_object_get(out, reason);
			if (!r)
				json_object_set_new(out, reason, r = json_object());
			json_object_set_new(r, type, json_integer((json_int_t)(now - was)));
		}
	}
	return out;
}

static struct snap *take_snap(struct sl_flight *f, struct fl_ct *ct, uint64_t now)
{
	struct snap *s = calloc(1, sizeof(*s));
	if (!s) {
		s = NULL;
		goto out;
	}
	s->open = ct->open;
	snprintf(s->container_id, sizeof(s->container_id), "%s", ct->id);
	snprintf(s->pod_uid, sizeof(s->pod_uid), "%s", ct->pod_uid);
	snprintf(s->runtime, sizeof(s->runtime), "%s", ct->runtime);
	s->now = now;
	s->from = now > f->cfg.window_ns ? now - f->cfg.window_ns : 0;
	s->dropped = ct->dropped;
	s->dropped_newest_ts = ct->dropped_newest_ts;
	s->e = ct->n ? calloc(ct->n, sizeof(*s->e)) : NULL;
	if (ct->n && !s->e) {
		free(s);
		s = NULL;
		goto out;
	}
	for (struct fl_ent *e = ct->head; e; e = e->next) {
		if (e->ts < s->from)
			continue;
		struct snap_ent *d = &s->e[s->n];
		d->json = malloc(e->len + 1);
		if (!d->json)
			continue; /* out of memory: that event is left out */
		memcpy(d->json, e->json, e->len + 1);
		d->len = e->len;
		d->ts = e->ts;
		d->weight = e->weight;
		d->seq = e->seq;
		d->type = e->type;
		s->n++;
	}
	s->host_drops = host_drops(f, s->from, &s->host_from);
out:
	/* the recording is closed either way (a failed copy is not retried) */
	if (!s)
		open_free(ct->open);
	ct->open = NULL;
	ct->dropped = 0;
	ct->dropped_newest_ts = 0;
	f->nopen--;
	return s;
}

static int snap_cmp(const void *a, const void *b)
{
	const struct snap_ent *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static json_t *wall(const struct sl_flight *f, uint64_t mono)
{
	char buf[SL_TIME_RFC3339_MAX];
	sl_time_format((int64_t)mono + f->cfg.mono_to_real_ns, buf, sizeof(buf));
	return json_string(buf);
}

/* Build the recording (docs/FLIGHT.md "Recording") of s; frees s. */
static struct sl_flight_rec *build(struct sl_flight *f, struct snap *s)
{
	struct sl_flight_rec *r = calloc(1, sizeof(*r));
	json_t *o = json_object(), *supp = json_object();
	char *head = NULL;
	if (s->n)
		qsort(s->e, s->n, sizeof(*s->e), snap_cmp);
	size_t total = 0;
	for (size_t i = 0; i < s->n; i++) {
		total += s->e[i].len + 1;
		if (s->e[i].weight > 1 && s->e[i].type) {
			json_t *v = json_object_get(supp, s->e[i].type);
			json_object_set_new(supp, s->e[i].type,
					    json_integer(json_integer_value(v) + (json_int_t)(s->e[i].weight - 1)));
		}
	}
	if (!r || !o || !supp)
		goto fail;
	r->id = s->open->id;
	r->time_ns = (int64_t)s->now + f->cfg.mono_to_real_ns;
	r->events = s->n;
	snprintf(r->container_id, sizeof(r->container_id), "%s", s->container_id);
	snprintf(r->reason, sizeof(r->reason), "%s", s->open->reason);
	json_object_set_new(o, "id", json_integer(r->id));
	json_object_set_new(o, "container_id", json_string(s->container_id));
	json_object_set_new(o, "pod_uid", json_string(s->pod_uid));
	json_object_set_new(o, "runtime", json_string(s->runtime));
	json_object_set_new(o, "reason", json_string(s->open->reason));
	json_object_set_new(o, "opened", wall(f, s->open->opened));
	json_object_set_new(o, "frozen", wall(f, s->now));
	json_object_set_new(o, "from", wall(f, s->from));
	json_object_set_new(o, "window_seconds", json_real((double)f->cfg.window_ns / 1e9));
	if (s->open->trigger_event_id > 0)
		json_object_set_new(o, "trigger_event_id", json_integer(s->open->trigger_event_id));
	json_object_set_new(o, "triggers", json_incref(s->open->triggers));
	json_object_set_new(o, "triggers_total", json_integer((json_int_t)s->open->ntriggers));
	json_object_set_new(o, "event_count", json_integer((json_int_t)s->n));
	json_t *drops = json_object();
	json_object_set_new(drops, "suppressed", supp);
	supp = NULL;
	json_object_set_new(drops, "ring_dropped", json_integer((json_int_t)s->dropped));
	if (s->dropped)
		json_object_set_new(drops, "complete_from", wall(f, s->dropped_newest_ts));
	if (s->host_drops) {
		json_object_set_new(drops, "host", s->host_drops);
		json_object_set_new(drops, "host_from", wall(f, s->host_from));
		s->host_drops = NULL;
	}
	json_object_set_new(o, "drops", drops);
	head = json_dumps(o, JSON_COMPACT);
	if (!head)
		goto fail;
	size_t hl = strlen(head); /* ends with '}' */
	r->json = malloc(hl + total + 16);
	if (!r->json)
		goto fail;
	memcpy(r->json, head, hl - 1);
	size_t p = hl - 1;
	memcpy(r->json + p, ",\"events\":[", 11);
	p += 11;
	for (size_t i = 0; i < s->n; i++) {
		if (i)
			r->json[p++] = ',';
		memcpy(r->json + p, s->e[i].json, s->e[i].len);
		p += s->e[i].len;
	}
	memcpy(r->json + p, "]}", 3);
	r->len = p + 2;
	goto done;
fail:
	sl_flight_rec_free(r);
	r = NULL;
done:
	free(head);
	json_decref(o);
	json_decref(supp);
	json_decref(s->host_drops);
	for (size_t i = 0; i < s->n; i++)
		free(s->e[i].json);
	free(s->e);
	open_free(s->open);
	free(s);
	return r;
}

void sl_flight_complete_due(struct sl_flight *f, uint64_t now)
{
	struct snap *list = NULL;
	if (!f)
		return;
	pthread_mutex_lock(&f->mu);
	if (f->nopen && now >= f->next_due) {
		struct fl_ct *ct, *tmp;
		uint64_t next = UINT64_MAX;
		HASH_ITER(hh, f->cts, ct, tmp)
		{
			if (!ct->open)
				continue;
			if (now < ct->open->deadline) {
				if (ct->open->deadline < next)
					next = ct->open->deadline;
				continue;
			}
			struct snap *s = take_snap(f, ct, now);
			if (s) {
				s->next = list;
				list = s;
			}
		}
		f->next_due = next;
	}
	pthread_mutex_unlock(&f->mu);
	while (list) {
		struct snap *s = list;
		list = s->next;
		struct sl_flight_rec *r = build(f, s);
		if (!r)
			continue;
		INC(f, st_recorded, 1);
		if (f->sink)
			f->sink(f->ctx, r);
		else
			sl_flight_rec_free(r);
	}
}

void sl_flight_append(struct sl_flight *f, const struct sl_attr *at, unsigned kind, const char *type, uint64_t ts_ns,
		      uint64_t weight, const char *json, size_t len, uint64_t now_ns)
{
	const char *id = container_of(at);
	(void)kind;
	if (!f || !json)
		return;
	if (id) {
		struct fl_ent *e = malloc(sizeof(*e) + len + 1);
		pthread_mutex_lock(&f->mu);
		struct fl_ct *ct = e ? ct_get(f, id, at, now_ns) : NULL;
		if (ct) {
			memset(e, 0, sizeof(*e));
			memcpy(e->json, json, len);
			e->json[len] = 0;
			e->len = len;
			e->ts = ts_ns;
			e->weight = weight ? weight : 1;
			e->type = type;
			e->ct = ct;
			e->seq = f->seq++;
			if (ct->tail)
				ct->tail->next = e;
			else
				ct->head = e;
			ct->tail = e;
			ct->n++;
			ct->bytes += ent_cost(len);
			ct->last_ns = now_ns;
			e->gprev = f->gtail;
			if (f->gtail)
				f->gtail->gnext = e;
			else
				f->ghead = e;
			f->gtail = e;
			f->bytes += ent_cost(len);
			f->entries++;
			INC(f, st_appended, 1);
			/* the container's bound (an entry larger than it goes too) */
			while (ct->head && ct->bytes > f->cfg.container_max_bytes) {
				INC(f, st_drop_ct, 1);
				drop_for_bytes(f, ct->head);
			}
			while (f->ghead && f->bytes > f->cfg.max_bytes) {
				INC(f, st_drop_total, 1);
				drop_for_bytes(f, f->ghead);
			}
			e = NULL;
		}
		age_out(f, now_ns);
		publish(f);
		pthread_mutex_unlock(&f->mu);
		free(e); /* not taken: no container slot */
	}
	sl_flight_complete_due(f, now_ns);
}

void sl_flight_tick(struct sl_flight *f, uint64_t now_ns, const struct sl_flight_drop *drops, size_t n)
{
	if (!f)
		return;
	struct fl_sample *s = calloc(1, sizeof(*s));
	if (s && !(s->counts = json_object())) {
		free(s);
		s = NULL;
	}
	for (size_t i = 0; s && i < n; i++) {
		if (!drops[i].reason || !drops[i].type)
			continue;
		json_t *r = json_object_get(s->counts, drops[i].reason);
		if (!r)
			json_object_set_new(s->counts, drops[i].reason, r = json_object());
		json_t *v = json_object_get(r, drops[i].type);
		json_object_set_new(r, drops[i].type,
				    json_integer(json_integer_value(v) + (json_int_t)drops[i].value));
	}
	pthread_mutex_lock(&f->mu);
	age_out(f, now_ns);
	struct fl_ct *ct, *tmp;
	HASH_ITER(hh, f->cts, ct, tmp)
	{
		if (ct->head || ct->open || (ct->frozen && now_ns - ct->last_freeze < f->cfg.freeze_interval_ns) ||
		    (ct->ext_frozen && now_ns - ct->last_external < f->cfg.freeze_interval_ns))
			continue;
		ct_forget(f, ct);
		INC(f, st_expired, 1);
	}
	if (s) {
		s->ts = now_ns;
		if (f->stail)
			f->stail->next = s;
		else
			f->shead = s;
		f->stail = s;
		f->nsamples++;
		/* keep the newest sample at or before the window's start */
		while (f->shead->next &&
		       (f->nsamples > FL_MAX_SAMPLES || f->shead->next->ts + f->cfg.window_ns <= now_ns)) {
			struct fl_sample *old = f->shead;
			f->shead = old->next;
			f->nsamples--;
			json_decref(old->counts);
			free(old);
		}
	}
	publish(f);
	pthread_mutex_unlock(&f->mu);
	sl_flight_complete_due(f, now_ns);
}

void sl_flight_get_stats(struct sl_flight *f, struct sl_flight_stats *o)
{
	memset(o, 0, sizeof(*o));
	if (!f)
		return;
#define LD(x) atomic_load_explicit(&f->x, memory_order_relaxed)
	o->appended = LD(st_appended);
	o->ring_dropped_container_bytes = LD(st_drop_ct);
	o->ring_dropped_total_bytes = LD(st_drop_total);
	o->ring_dropped_evicted = LD(st_drop_evicted);
	o->containers_evicted = LD(st_evicted);
	o->containers_expired = LD(st_expired);
	o->recorded = LD(st_recorded);
	o->joined = LD(st_joined);
	o->rate_limited_container = LD(st_rl_ct);
	o->rate_limited_host = LD(st_rl_host);
	o->unknown_container = LD(st_unknown);
	o->containers = LD(st_cts);
	o->bytes = LD(st_bytes);
	o->entries = LD(st_entries);
#undef LD
}
