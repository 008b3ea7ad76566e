/* io module, read side: the Prometheus families and the GET /api/v1/io
 * body. API threads: reads only the published snapshot (common/snapref.h)
 * and atomics. */
#include "cgroup/attr_labels.h"
#include "common/log2hist.h"
#include "modules/io_decode.h"
#include "modules/io_internal.h"

#include <stdio.h>
#include <string.h>

const struct sl_prom_family io_families[IO_NFAM] = {
	[IF_QUEUE] = {"sandlens_io_queue_seconds", SL_PROM_HISTOGRAM,
		      "Block requests charged to the container (rq->bio->bi_blkg->blkcg): block_rq_insert to block_rq_issue, "
		      "requests that were inserted; docs/IO.md."},
	[IF_DEVICE] = {"sandlens_io_device_seconds", SL_PROM_HISTOGRAM,
		       "Block requests charged to the container: block_rq_issue to the final block_rq_complete (as biolatency -D)."},
	[IF_BYTES] = {"sandlens_io_bytes_total", SL_PROM_COUNTER,
		      "Bytes completed of the container's block requests (block_rq_complete nr_bytes), by device and op."},
	[IF_REQUESTS] = {"sandlens_io_requests_total", SL_PROM_COUNTER,
			 "Block requests of the container completed, by device and op (the unit of /proc/diskstats ios)."},
	[IF_ERRORS] = {"sandlens_io_errors_total", SL_PROM_COUNTER,
		       "Block requests of the container completed with an error status, by device and op."},
	[IF_PC_ADDED] = {"sandlens_io_pagecache_added_pages_total", SL_PROM_COUNTER,
			 "Pages the container's tasks added to the page cache (filemap:mm_filemap_add_to_page_cache): read "
			 "misses, readahead and writes into uncached pages."},
	[IF_RA] = {"sandlens_io_readahead_total", SL_PROM_COUNTER,
		   "Readahead runs started by the container's tasks, by kind (sync: a miss; async: a PG_readahead hit)."},
	[IF_RA_PAGES] = {"sandlens_io_readahead_pages_total", SL_PROM_COUNTER,
			 "Pages readahead was asked to read for the container's tasks (page_cache_ra_unbounded nr_to_read)."},
	[IF_DIRTY] = {"sandlens_io_dirty_throttled_total", SL_PROM_COUNTER,
		      "Times the container's tasks were paused in balance_dirty_pages (writeback:balance_dirty_pages, pause > 0)."},
	[IF_DIRTY_S] = {"sandlens_io_dirty_throttled_seconds_total", SL_PROM_COUNTER,
			"Time the container's tasks were paused waiting on dirty pages (Σ pause, jiffies / CONFIG_HZ)."},
	[IF_DISK_INFLIGHT] = {"sandlens_io_disk_in_flight", SL_PROM_GAUGE,
			      "Requests in flight on the disk (/proc/diskstats field 9), at the module's tick."},
	[IF_DISK_IOTICKS] = {"sandlens_io_disk_io_ticks_seconds_total", SL_PROM_COUNTER,
			     "Time the disk had requests in flight (/proc/diskstats io_ticks)."},
	[IF_DISK_QUEUE_TIME] = {"sandlens_io_disk_time_in_queue_seconds_total", SL_PROM_COUNTER,
				"Weighted time of requests on the disk (/proc/diskstats time_in_queue)."},
	[IF_DISK_COMPLETED] = {"sandlens_io_disk_completed_total", SL_PROM_COUNTER,
			       "Requests completed on the disk as /proc/diskstats counts them, by op."},
	[IF_DISK_REQUESTS] = {"sandlens_io_disk_requests_total", SL_PROM_COUNTER,
			      "Requests completed on the disk as the module counted them since it started (every cgroup), by op."},
	[IF_KERNEL] = {"sandlens_io_kernel_events_total", SL_PROM_COUNTER,
		       "Counters of the kernel half (io_stats), by counter (docs/IO.md \"Accounting\")."},
	[IF_NOT_EXPORTED] = {"sandlens_io_requests_not_exported_total", SL_PROM_COUNTER,
			     "Requests counted by the kernel half in no exported series, by reason (series_full; expired: "
			     "exported while their series lived)."},
	[IF_SERIES] = {"sandlens_io_series", SL_PROM_GAUGE, "Series (request series + page-cache series) in the io snapshot."},
	[IF_SLOW_TRUNC] = {"sandlens_io_slow_truncated_total", SL_PROM_COUNTER,
			   "Sum of truncated_count over delivered slow_io events."},
};

static const char *const kstat_names[SL_IOST_MAX] = {
	"insert", "issue", "complete", "no_issue", "partial", "start_full", "hist_full",
	"merged", "reissue", "slow_seen", "slow_rate_limited", "slow_ringbuf_fail", "slow_bucket_full", "cg_full",
};

static struct io_snap *snap_get(struct io_priv *ip)
{
	return (struct io_snap *)sl_snapref_get(&ip->snap);
}

/* Identity labels (cgroup/attr_labels.h) then up to two extra labels. */
#define ID_LABELS_MAX (SL_ATTR_LABELS_MAX + 3)
static void id_labels(struct sl_prom_label *l, struct sl_attr *a, const struct io_ident *w, const char *x1,
		      const char *v1, const char *x2, const char *v2)
{
	size_t n;

	memset(a, 0, sizeof(*a));
	snprintf(a->container_id, sizeof(a->container_id), "%s", w->id);
	snprintf(a->pod_uid, sizeof(a->pod_uid), "%s", w->pod_uid);
	snprintf(a->runtime, sizeof(a->runtime), "%s", w->runtime);
	a->names = w->names;
	n = sl_attr_labels(a, l);
	if (x1)
		l[n++] = (struct sl_prom_label){x1, v1};
	if (x2)
		l[n++] = (struct sl_prom_label){x2, v2};
	l[n] = (struct sl_prom_label){NULL, NULL};
}

static const char *disk_label(const struct io_snap_series *s, char *buf, size_t len)
{
	if (s->disk[0])
		return s->disk;
	snprintf(buf, len, "%u:%u", io_dev_major(s->dev), io_dev_minor(s->dev));
	return buf;
}

static void write_series(struct sl_prom *p, const struct io_snap *snap, unsigned fam)
{
	const struct sl_prom_family *f = &io_families[fam];
	struct sl_prom_label l[ID_LABELS_MAX];
	struct sl_attr a;
	double le[SL_IO_SLOTS - 1];
	char db[24];

	if (sl_prom_declared(p, f) || !snap)
		return;
	sl_l2h_le_seconds(le, SL_IO_SLOTS);
	for (int i = 0; i < snap->n; i++) {
		const struct io_snap_series *s = &snap->s[i];
		if (!s->tot.requests)
			continue; /* no request: no series (an idle container shows none) */
		id_labels(l, &a, &s->who, "device", disk_label(s, db, sizeof(db)), "op", io_op_name(s->op));
		switch (fam) {
		case IF_QUEUE:
			if (s->tot.requests > s->tot.direct)
				sl_prom_histogram(p, f->name, l, le, (const uint64_t *)s->tot.queue, SL_IO_SLOTS - 1,
						  (double)s->tot.queue_sum_ns / 1e9);
			break;
		case IF_DEVICE:
			sl_prom_histogram(p, f->name, l, le, (const uint64_t *)s->tot.device, SL_IO_SLOTS - 1, (double)s->tot.device_sum_ns / 1e9);
			break;
		case IF_BYTES: sl_prom_u64(p, f->name, l, s->tot.bytes); break;
		case IF_REQUESTS: sl_prom_u64(p, f->name, l, s->tot.requests); break;
		default: sl_prom_u64(p, f->name, l, s->tot.errors); break;
		}
	}
}

static void write_cg(struct sl_prom *p, const struct io_snap *snap, unsigned fam)
{
	const struct sl_prom_family *f = &io_families[fam];
	struct sl_prom_label l[ID_LABELS_MAX];
	struct sl_attr a;

	if (sl_prom_declared(p, f) || !snap)
		return;
	for (int i = 0; i < snap->ncg; i++) {
		const struct sl_io_cg *t = &snap->cg[i].tot;
		switch (fam) {
		case IF_PC_ADDED:
			if (!t->pagecache_added)
				continue;
			id_labels(l, &a, &snap->cg[i].who, NULL, NULL, NULL, NULL);
			sl_prom_u64(p, f->name, l, t->pagecache_added);
			break;
		case IF_RA:
			if (!t->ra_sync && !t->ra_async)
				continue;
			id_labels(l, &a, &snap->cg[i].who, "kind", "sync", NULL, NULL);
			sl_prom_u64(p, f->name, l, t->ra_sync);
			id_labels(l, &a, &snap->cg[i].who, "kind", "async", NULL, NULL);
			sl_prom_u64(p, f->name, l, t->ra_async);
			break;
		case IF_RA_PAGES:
			if (!t->ra_pages)
				continue;
			id_labels(l, &a, &snap->cg[i].who, NULL, NULL, NULL, NULL);
			sl_prom_u64(p, f->name, l, t->ra_pages);
			break;
		case IF_DIRTY:
			if (!t->dirty_throttled)
				continue;
			id_labels(l, &a, &snap->cg[i].who, NULL, NULL, NULL, NULL);
			sl_prom_u64(p, f->name, l, t->dirty_throttled);
			break;
		default:
			if (!t->dirty_throttled)
				continue;
			id_labels(l, &a, &snap->cg[i].who, NULL, NULL, NULL, NULL);
			sl_prom_f64(p, f->name, l, (double)t->dirty_pause_ns / 1e9);
			break;
		}
	}
}

static void write_disks(struct sl_prom *p, const struct io_snap *snap, unsigned fam)
{
	const struct sl_prom_family *f = &io_families[fam];
	char dev[24];

	if (sl_prom_declared(p, f) || !snap)
		return;
	for (int i = 0; i < snap->ndisk; i++) {
		const struct io_snap_disk *d = &snap->d[i];
		const char *name = d->have_stat ? d->st.name : dev;
		struct sl_prom_label l[3] = {{"device", name}, {NULL, NULL}, {NULL, NULL}};
		snprintf(dev, sizeof(dev), "%u:%u", io_dev_major(d->dev), io_dev_minor(d->dev));
		if (fam == IF_DISK_REQUESTS) {
			for (unsigned op = 0; op < SL_IO_NOPS; op++) {
				l[1] = (struct sl_prom_label){"op", io_op_name(op)};
				sl_prom_u64(p, f->name, l, d->requests[op]);
			}
			continue;
		}
		if (!d->have_stat)
			continue;
		switch (fam) {
		case IF_DISK_INFLIGHT: sl_prom_u64(p, f->name, l, d->st.in_flight); break;
		case IF_DISK_IOTICKS: sl_prom_f64(p, f->name, l, (double)d->st.io_ticks_ms / 1e3); break;
		case IF_DISK_QUEUE_TIME: sl_prom_f64(p, f->name, l, (double)d->st.time_in_queue_ms / 1e3); break;
		default:
			for (unsigned op = 0; op < SL_IO_OP_OTHER; op++) {
				l[1] = (struct sl_prom_label){"op", io_op_name(op)};
				sl_prom_u64(p, f->name, l, d->st.ops[op]);
			}
			break;
		}
	}
}

void io_write_metrics(struct sl_module *m, struct sl_prom *p)
{
	struct io_priv *ip = m->priv;
	struct io_snap *snap;

	if (!ip)
		return;
	snap = snap_get(ip);
	for (unsigned f = IF_QUEUE; f <= IF_ERRORS; f++)
		write_series(p, snap, f);
	for (unsigned f = IF_PC_ADDED; f <= IF_DIRTY_S; f++)
		write_cg(p, snap, f);
	for (unsigned f = IF_DISK_INFLIGHT; f <= IF_DISK_REQUESTS; f++)
		write_disks(p, snap, f);
	if (snap && sl_prom_declared(p, &io_families[IF_KERNEL]) == 0)
		for (unsigned k = 0; k < SL_IOST_MAX; k++) {
			struct sl_prom_label l[2] = {{"counter", kstat_names[k]}, {NULL, NULL}};
			sl_prom_u64(p, io_families[IF_KERNEL].name, l, snap->stats[k]);
		}
	if (sl_prom_declared(p, &io_families[IF_NOT_EXPORTED]) == 0) {
		struct sl_prom_label l[2] = {{"reason", "series_full"}, {NULL, NULL}};
		sl_prom_u64(p, io_families[IF_NOT_EXPORTED].name, l, atomic_load(&ip->not_exported));
		l[0].value = "expired";
		sl_prom_u64(p, io_families[IF_NOT_EXPORTED].name, l, atomic_load(&ip->expired));
	}
	if (sl_prom_declared(p, &io_families[IF_SERIES]) == 0)
		sl_prom_u64(p, io_families[IF_SERIES].name, NULL, atomic_load(&ip->nseries_pub));
	if (sl_prom_declared(p, &io_families[IF_SLOW_TRUNC]) == 0)
		sl_prom_u64(p, io_families[IF_SLOW_TRUNC].name, NULL, atomic_load(&ip->truncated_total));
	if (snap)
		sl_snap_put(&snap->base);
}

void io_write_drops(struct sl_module *m, struct sl_prom *p)
{
	struct io_priv *ip = m->priv;
	struct sl_prom_label l[3] = {{"reason", "ratelimit_expired"}, {"type", "slow_io"}, {NULL, NULL}};
	struct io_snap *s;

	if (!ip)
		return;
	sl_prom_u64(p, "sandlens_events_dropped_total", l, atomic_load(&ip->ratelimit_expired));
	l[0].value = "ringbuf_full";
	sl_prom_u64(p, "sandlens_events_dropped_total", l, atomic_load(&ip->ringbuf_expired));
	s = snap_get(ip);
	l[0].value = "ratelimit_table_full";
	sl_prom_u64(p, "sandlens_events_dropped_total", l, s ? s->stats[SL_IOST_BUCKET_FULL] : 0);
	if (s)
		sl_snap_put(&s->base);
}

/* ---------- GET /api/v1/io ---------- */

static void ident_json(json_t *o, const struct io_ident *w)
{
	json_object_set_new(o, "container_id", json_string(w->id));
	json_object_set_new(o, "pod_uid", json_string(w->pod_uid));
	json_object_set_new(o, "runtime", json_string(w->runtime));
	json_object_set_new(o, "kind", json_string(w->is_host ? "host" : w->is_pod ? "pod" : "container"));
	json_object_set_new(o, "cgroup_id", json_integer((json_int_t)w->cgid));
	if (w->names.pod[0]) {
		json_object_set_new(o, "namespace", json_string(w->names.ns));
		json_object_set_new(o, "pod", json_string(w->names.pod));
		json_object_set_new(o, "container", json_string(w->names.container));
	}
}

static json_t *slots_json(const __u64 *slots)
{
	json_t *a = json_array();
	for (unsigned k = 0; k < SL_IO_SLOTS; k++)
		json_array_append_new(a, json_integer((json_int_t)slots[k]));
	return a;
}

static json_t *stage_json(const __u64 *slots, uint64_t count, uint64_t sum_ns, uint64_t max_ns, double p50,
			  double p99)
{
	json_t *o = json_object();
	json_object_set_new(o, "count", json_integer((json_int_t)count));
	json_object_set_new(o, "seconds", json_real((double)sum_ns / 1e9));
	json_object_set_new(o, "p50_seconds", json_real(p50 / 1e9));
	json_object_set_new(o, "p99_seconds", json_real(p99 / 1e9));
	json_object_set_new(o, "max_seconds", json_real((double)max_ns / 1e9));
	json_object_set_new(o, "buckets", slots_json(slots));
	return o;
}

json_t *io_view_get(struct sl_module *m, const struct sl_view_param *p, size_t n, unsigned *status, char *err,
		    size_t errlen)
{
	struct io_priv *ip = m->priv;
	struct io_snap *snap;
	json_t *root, *ser, *pc, *disks, *acc;
	char db[24];

	(void)p;
	(void)n;
	if (!ip) {
		*status = 503;
		snprintf(err, errlen, "the io module is not running");
		return NULL;
	}
	snap = snap_get(ip);
	root = json_object();
	ser = json_array();
	pc = json_array();
	disks = json_array();
	acc = json_object();
	json_object_set_new(root, "time_ns", snap ? json_integer((json_int_t)(snap->time_mono_ns +
					    (uint64_t)sl_module_mono_to_real_ns(m))) : json_null());
	json_object_set_new(root, "interval_seconds", json_real(snap ? (double)snap->interval_ns / 1e9 : 0));
	json_object_set_new(root, "slot_le_us", json_string("slot k <= 2^k us, last slot > 2^24 us"));
	for (int i = 0; snap && i < snap->n; i++) {
		const struct io_snap_series *s = &snap->s[i];
		json_t *o = json_object(), *iv = json_object();
		if (!s->tot.requests)
			continue;
		ident_json(o, &s->who);
		json_object_set_new(o, "device", json_string(disk_label(s, db, sizeof(db))));
		snprintf(db, sizeof(db), "%u:%u", io_dev_major(s->dev), io_dev_minor(s->dev));
		json_object_set_new(o, "devnum", json_string(db));
		json_object_set_new(o, "op", json_string(io_op_name(s->op)));
		json_object_set_new(o, "requests", json_integer((json_int_t)s->tot.requests));
		json_object_set_new(o, "bytes", json_integer((json_int_t)s->tot.bytes));
		json_object_set_new(o, "errors", json_integer((json_int_t)s->tot.errors));
		json_object_set_new(o, "direct", json_integer((json_int_t)s->tot.direct));
		json_object_set_new(o, "queue", stage_json(s->tot.queue, s->tot.requests - s->tot.direct,
							   s->tot.queue_sum_ns, s->tot.queue_max_ns, s->q_p50_ns, s->q_p99_ns));
		json_object_set_new(o, "device_stage", stage_json(s->tot.device, s->tot.requests, s->tot.device_sum_ns,
								  s->tot.device_max_ns, s->d_p50_ns, s->d_p99_ns));
		json_object_set_new(iv, "requests", json_integer((json_int_t)s->iv_requests));
		json_object_set_new(iv, "bytes", json_integer((json_int_t)s->iv_bytes));
		json_object_set_new(iv, "device_seconds", json_real((double)s->iv_device_ns / 1e9));
		json_object_set_new(iv, "device_p99_seconds", json_real(s->iv_d_p99_ns / 1e9));
		json_object_set_new(o, "interval", iv);
		json_array_append_new(ser, o);
	}
	for (int i = 0; snap && i < snap->ncg; i++) {
		const struct io_snap_cg *g = &snap->cg[i];
		json_t *o = json_object();
		ident_json(o, &g->who);
		json_object_set_new(o, "pagecache_added_pages", json_integer((json_int_t)g->tot.pagecache_added));
		json_object_set_new(o, "readahead_sync", json_integer((json_int_t)g->tot.ra_sync));
		json_object_set_new(o, "readahead_async", json_integer((json_int_t)g->tot.ra_async));
		json_object_set_new(o, "readahead_pages", json_integer((json_int_t)g->tot.ra_pages));
		json_object_set_new(o, "dirty_throttled", json_integer((json_int_t)g->tot.dirty_throttled));
		json_object_set_new(o, "dirty_throttled_seconds", json_real((double)g->tot.dirty_pause_ns / 1e9));
		json_object_set_new(o, "interval_pagecache_added_pages", json_integer((json_int_t)g->iv.pagecache_added));
		json_object_set_new(o, "interval_dirty_throttled_seconds", json_real((double)g->iv.dirty_pause_ns / 1e9));
		json_array_append_new(pc, o);
	}
	for (int i = 0; snap && i < snap->ndisk; i++) {
		const struct io_snap_disk *d = &snap->d[i];
		json_t *o = json_object(), *mine = json_object(), *st = json_object();
		snprintf(db, sizeof(db), "%u:%u", io_dev_major(d->dev), io_dev_minor(d->dev));
		json_object_set_new(o, "devnum", json_string(db));
		json_object_set_new(o, "device", json_string(d->have_stat ? d->st.name : db));
		for (unsigned op = 0; op < SL_IO_NOPS; op++)
			json_object_set_new(mine, io_op_name(op), json_integer((json_int_t)d->requests[op]));
		json_object_set_new(o, "requests", mine);
		if (d->have_stat) {
			json_t *ops = json_object();
			for (unsigned op = 0; op < SL_IO_OP_OTHER; op++)
				json_object_set_new(ops, io_op_name(op), json_integer((json_int_t)d->st.ops[op]));
			json_object_set_new(st, "completed", ops);
			json_object_set_new(st, "in_flight", json_integer((json_int_t)d->st.in_flight));
			json_object_set_new(st, "io_ticks_ms", json_integer((json_int_t)d->st.io_ticks_ms));
			json_object_set_new(st, "time_in_queue_ms", json_integer((json_int_t)d->st.time_in_queue_ms));
			json_object_set_new(o, "diskstats", st);
		} else {
			json_decref(st);
			json_object_set_new(o, "diskstats", json_null());
		}
		json_array_append_new(disks, o);
	}
	for (unsigned k = 0; snap && k < SL_IOST_MAX; k++)
		json_object_set_new(acc, kstat_names[k], json_integer((json_int_t)snap->stats[k]));
	json_object_set_new(acc, "not_exported_series_full", json_integer((json_int_t)atomic_load(&ip->not_exported)));
	json_object_set_new(acc, "expired", json_integer((json_int_t)atomic_load(&ip->expired)));
	json_object_set_new(root, "series", ser);
	json_object_set_new(root, "pagecache", pc);
	json_object_set_new(root, "disks", disks);
	json_object_set_new(root, "accounting", acc);
	if (snap)
		sl_snap_put(&snap->base);
	return root;
}
