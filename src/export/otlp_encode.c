/* OTLP logs and metrics encoding (otlp_encode.h). Every message of one
 * request is allocated from an arena and freed at once after packing. */
#include "export/otlp_encode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/timefmt.h"
#include "opentelemetry/proto/collector/logs/v1/logs_service.pb-c.h"
#include "opentelemetry/proto/collector/metrics/v1/metrics_service.pb-c.h"

typedef Opentelemetry__Proto__Common__V1__AnyValue AnyValue;
typedef Opentelemetry__Proto__Common__V1__KeyValue KeyValue;
typedef Opentelemetry__Proto__Common__V1__KeyValueList KeyValueList;
typedef Opentelemetry__Proto__Common__V1__ArrayValue ArrayValue;
typedef Opentelemetry__Proto__Common__V1__InstrumentationScope Scope;
typedef Opentelemetry__Proto__Resource__V1__Resource Resource;
typedef Opentelemetry__Proto__Logs__V1__ResourceLogs ResourceLogs;
typedef Opentelemetry__Proto__Logs__V1__ScopeLogs ScopeLogs;
typedef Opentelemetry__Proto__Logs__V1__LogRecord LogRecord;
typedef Opentelemetry__Proto__Collector__Logs__V1__ExportLogsServiceRequest LogsRequest;
typedef Opentelemetry__Proto__Collector__Logs__V1__ExportLogsServiceResponse LogsResponse;
typedef Opentelemetry__Proto__Collector__Metrics__V1__ExportMetricsServiceRequest MetricsRequest;
typedef Opentelemetry__Proto__Collector__Metrics__V1__ExportMetricsServiceResponse MetricsResponse;
typedef Opentelemetry__Proto__Metrics__V1__ResourceMetrics ResourceMetrics;
typedef Opentelemetry__Proto__Metrics__V1__ScopeMetrics ScopeMetrics;
typedef Opentelemetry__Proto__Metrics__V1__Metric Metric;
typedef Opentelemetry__Proto__Metrics__V1__Sum Sum;
typedef Opentelemetry__Proto__Metrics__V1__Gauge Gauge;
typedef Opentelemetry__Proto__Metrics__V1__Histogram Histogram;
typedef Opentelemetry__Proto__Metrics__V1__NumberDataPoint NumberDataPoint;
typedef Opentelemetry__Proto__Metrics__V1__HistogramDataPoint HistogramDataPoint;

#define SCOPE_NAME "sandlensd"

/* ---- arena ---- */
struct arena {
	void **p;
	size_t n, cap;
	int oom;
};

static void *az(struct arena *a, size_t sz)
{
	if (a->oom)
		return NULL;
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 256;
		void **np = realloc(a->p, nc * sizeof(*np));
		if (!np) {
			a->oom = 1;
			return NULL;
		}
		a->p = np;
		a->cap = nc;
	}
	void *m = calloc(1, sz ? sz : 1);
	if (!m) {
		a->oom = 1;
		return NULL;
	}
	a->p[a->n++] = m;
	return m;
}

static char *astr(struct arena *a, const char *s)
{
	size_t l = strlen(s);
	char *d = az(a, l + 1);
	if (d)
		memcpy(d, s, l);
	return d;
}

static void arena_free(struct arena *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->p[i]);
	free(a->p);
}

/* ---- values ---- */
static AnyValue *any_new(struct arena *a)
{
	AnyValue *v = az(a, sizeof(*v));
	if (v)
		opentelemetry__proto__common__v1__any_value__init(v);
	return v;
}

static AnyValue *any_str(struct arena *a, const char *s)
{
	AnyValue *v = any_new(a);
	char *d = astr(a, s);
	if (!v || !d)
		return NULL;
	v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
	v->string_value = d;
	return v;
}

static AnyValue *any_int(struct arena *a, int64_t i)
{
	AnyValue *v = any_new(a);
	if (!v)
		return NULL;
	v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
	v->int_value = i;
	return v;
}

static KeyValue *kv(struct arena *a, const char *key, AnyValue *v)
{
	KeyValue *k = az(a, sizeof(*k));
	char *d = astr(a, key);
	if (!k || !d || !v)
		return NULL;
	opentelemetry__proto__common__v1__key_value__init(k);
	k->key = d;
	k->value = v;
	return k;
}

static AnyValue *any_json(struct arena *a, json_t *j, int depth);

static KeyValueList *kvlist_json(struct arena *a, json_t *o, int depth)
{
	KeyValueList *l = az(a, sizeof(*l));
	size_t n = json_object_size(o), i = 0;
	KeyValue **vals = az(a, n * sizeof(*vals));
	const char *k;
	json_t *v;
	if (!l || !vals)
		return NULL;
	opentelemetry__proto__common__v1__key_value_list__init(l);
	json_object_foreach(o, k, v)
	{
		if (!(vals[i] = kv(a, k, any_json(a, v, depth + 1))))
			return NULL;
		i++;
	}
	l->values = vals;
	l->n_values = i;
	return l;
}

/* JSON -> AnyValue; null is an empty AnyValue (no value set). Nesting
 * beyond 16 levels (never in sandlens events) becomes its JSON text. */
static AnyValue *any_json(struct arena *a, json_t *j, int depth)
{
	AnyValue *v;
	if (depth > 16) {
		char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
		v = s ? any_str(a, s) : NULL;
		free(s);
		return v;
	}
	switch (json_typeof(j)) {
	case JSON_STRING:
		return any_str(a, json_string_value(j));
	case JSON_INTEGER:
		return any_int(a, json_integer_value(j));
	case JSON_REAL:
		if (!(v = any_new(a)))
			return NULL;
		v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_DOUBLE_VALUE;
		v->double_value = json_real_value(j);
		return v;
	case JSON_TRUE:
	case JSON_FALSE:
		if (!(v = any_new(a)))
			return NULL;
		v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BOOL_VALUE;
		v->bool_value = json_is_true(j);
		return v;
	case JSON_ARRAY: {
		ArrayValue *arr = az(a, sizeof(*arr));
		size_t n = json_array_size(j);
		AnyValue **vals = az(a, n * sizeof(*vals));
		if (!(v = any_new(a)) || !arr || !vals)
			return NULL;
		opentelemetry__proto__common__v1__array_value__init(arr);
		for (size_t i = 0; i < n; i++)
			if (!(vals[i] = any_json(a, json_array_get(j, i), depth + 1)))
				return NULL;
		arr->values = vals;
		arr->n_values = n;
		v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_ARRAY_VALUE;
		v->array_value = arr;
		return v;
	}
	case JSON_OBJECT: {
		KeyValueList *l = kvlist_json(a, j, depth);
		if (!(v = any_new(a)) || !l)
			return NULL;
		v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_KVLIST_VALUE;
		v->kvlist_value = l;
		return v;
	}
	default:
		return any_new(a);
	}
}

/* ---- resources ---- */
#define RES_MAX 12

struct attrs {
	KeyValue *kv[RES_MAX + 8];
	size_t n;
};

static void attr_str(struct arena *a, struct attrs *at, const char *key, const char *v)
{
	if (v && *v && at->n < sizeof(at->kv) / sizeof(at->kv[0]))
		at->kv[at->n++] = kv(a, key, any_str(a, v));
}

static Resource *resource(struct arena *a, struct attrs *at)
{
	Resource *r = az(a, sizeof(*r));
	KeyValue **kvs = az(a, at->n * sizeof(*kvs));
	if (!r || !kvs)
		return NULL;
	opentelemetry__proto__resource__v1__resource__init(r);
	for (size_t i = 0; i < at->n; i++)
		if (!(kvs[i] = at->kv[i]))
			return NULL;
	r->attributes = kvs;
	r->n_attributes = at->n;
	return r;
}

static void node_attrs(struct arena *a, struct attrs *at, const struct sl_otlp_node *node)
{
	attr_str(a, at, "service.name", "sandlensd");
	attr_str(a, at, "service.version", node->version);
	attr_str(a, at, "host.name", node->host_name);
}

static Scope *scope(struct arena *a, const struct sl_otlp_node *node)
{
	Scope *s = az(a, sizeof(*s));
	if (!s)
		return NULL;
	opentelemetry__proto__common__v1__instrumentation_scope__init(s);
	s->name = astr(a, SCOPE_NAME);
	s->version = astr(a, node->version ? node->version : "");
	return s;
}

int sl_otlp_severity_number(const char *sev)
{
	static const struct {
		const char *name;
		int num;
	} m[] = {{"debug", 5}, {"info", 9}, {"notice", 10}, {"warning", 13}, {"error", 17}, {"critical", 21}};
	for (size_t i = 0; sev && i < sizeof(m) / sizeof(m[0]); i++)
		if (!strcmp(sev, m[i].name))
			return m[i].num;
	return 0;
}

/* ---- logs ---- */
static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* The resource key of an event: its container identity fields. */
static const char *const res_fields[] = {"container_id", "pod_uid", "namespace", "pod", "container", "image"};
static const char *const res_attr[] = {"container.id", "k8s.pod.uid", "k8s.namespace.name", "k8s.pod.name",
				       "k8s.container.name", "container.image.name"};
#define NRES (sizeof(res_fields) / sizeof(res_fields[0]))

static int same_resource(json_t *x, json_t *y)
{
	for (size_t i = 0; i < NRES; i++)
		if (strcmp(jstr(x, res_fields[i]), jstr(y, res_fields[i])))
			return 0;
	return 1;
}

static LogRecord *log_record(struct arena *a, json_t *ev, uint64_t observed_ns)
{
	LogRecord *r = az(a, sizeof(*r));
	KeyValue **at = az(a, 5 * sizeof(*at));
	char name[64];
	size_t n = 0;
	int64_t t = 0;
	json_t *v;
	if (!r || !at)
		return NULL;
	opentelemetry__proto__logs__v1__log_record__init(r);
	if (!sl_time_parse_rfc3339(jstr(ev, "time"), &t) && t > 0)
		r->time_unix_nano = (uint64_t)t;
	r->observed_time_unix_nano = observed_ns;
	r->severity_number = sl_otlp_severity_number(jstr(ev, "severity"));
	r->severity_text = astr(a, jstr(ev, "severity"));
	snprintf(name, sizeof(name), "sandlens.%s", jstr(ev, "type"));
	r->event_name = astr(a, name);
	r->body = any_json(a, ev, 0);
	if ((v = json_object_get(ev, "id")) && json_is_integer(v))
		at[n++] = kv(a, "sandlens.event.id", any_int(a, json_integer_value(v)));
	at[n++] = kv(a, "sandlens.event.type", any_str(a, jstr(ev, "type")));
	if ((v = json_object_get(ev, "pid")) && json_is_integer(v))
		at[n++] = kv(a, "process.pid", any_int(a, json_integer_value(v)));
	if ((v = json_object_get(ev, "ppid")) && json_is_integer(v))
		at[n++] = kv(a, "process.parent_pid", any_int(a, json_integer_value(v)));
	if ((v = json_object_get(ev, "comm")) && json_is_string(v))
		at[n++] = kv(a, "process.executable.name", any_str(a, json_string_value(v)));
	for (size_t i = 0; i < n; i++)
		if (!at[i])
			return NULL;
	r->attributes = at;
	r->n_attributes = n;
	return r->body && r->severity_text && r->event_name ? r : NULL;
}

static int pack(struct arena *a, const ProtobufCMessage *m, uint8_t **out, size_t *outlen)
{
	if (a->oom)
		return -ENOMEM;
	size_t len = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	*outlen = protobuf_c_message_pack(m, buf);
	*out = buf;
	return 0;
}

int sl_otlp_encode_logs(const struct sl_otlp_node *node, json_t *events, uint64_t observed_ns, uint8_t **out,
			size_t *outlen)
{
	if (!json_is_array(events))
		return -EINVAL;
	struct arena a = {0};
	size_t n = json_array_size(events), ng = 0;
	/* groups: first event index of each resource, records per group */
	size_t *first = az(&a, n * sizeof(size_t)), *cnt = az(&a, n * sizeof(size_t));
	size_t *grp = az(&a, n * sizeof(size_t));
	ResourceLogs **rls = az(&a, n * sizeof(*rls));
	LogsRequest req = OPENTELEMETRY__PROTO__COLLECTOR__LOGS__V1__EXPORT_LOGS_SERVICE_REQUEST__INIT;
	int rc = -ENOMEM;
	if (a.oom)
		goto out;
	for (size_t i = 0; i < n; i++) {
		json_t *ev = json_array_get(events, i);
		size_t g = 0;
		while (g < ng && !same_resource(json_array_get(events, first[g]), ev))
			g++;
		if (g == ng)
			first[ng++] = i;
		grp[i] = g;
		cnt[g]++;
	}
	for (size_t g = 0; g < ng; g++) {
		json_t *ev0 = json_array_get(events, first[g]);
		struct attrs at = {0};
		ResourceLogs *rl = az(&a, sizeof(*rl));
		ScopeLogs *sl = az(&a, sizeof(*sl));
		ScopeLogs **sls = az(&a, sizeof(*sls));
		LogRecord **recs = az(&a, cnt[g] * sizeof(*recs));
		if (a.oom)
			goto out;
		node_attrs(&a, &at, node);
		for (size_t k = 0; k < NRES; k++)
			attr_str(&a, &at, res_attr[k], jstr(ev0, res_fields[k]));
		opentelemetry__proto__logs__v1__resource_logs__init(rl);
		opentelemetry__proto__logs__v1__scope_logs__init(sl);
		rl->resource = resource(&a, &at);
		sl->scope = scope(&a, node);
		size_t r = 0;
		for (size_t i = 0; i < n; i++)
			if (grp[i] == g && !(recs[r++] = log_record(&a, json_array_get(events, i), observed_ns)))
				goto out;
		sl->log_records = recs;
		sl->n_log_records = r;
		sls[0] = sl;
		rl->scope_logs = sls;
		rl->n_scope_logs = 1;
		rls[g] = rl;
		if (!rl->resource || !sl->scope)
			goto out;
	}
	req.resource_logs = rls;
	req.n_resource_logs = ng;
	rc = pack(&a, &req.base, out, outlen);
out:
	arena_free(&a);
	return rc;
}

/* ---- metrics ---- */
static const char *unit_of(const char *name)
{
	size_t l = strlen(name);
	static const struct {
		const char *suf, *unit;
	} u[] = {{"_seconds", "s"}, {"_seconds_total", "s"}, {"_bytes", "By"}, {"_bytes_total", "By"}};
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		size_t sl = strlen(u[i].suf);
		if (l > sl && !strcmp(name + l - sl, u[i].suf))
			return u[i].unit;
	}
	return "";
}

static KeyValue **labels_kv(struct arena *a, const struct sl_pm_series *s)
{
	KeyValue **kvs = az(a, s->nlabels * sizeof(*kvs));
	if (!kvs)
		return NULL;
	for (size_t i = 0; i < s->nlabels; i++)
		if (!(kvs[i] = kv(a, s->labels[i].name, any_str(a, s->labels[i].value))))
			return NULL;
	return kvs;
}

static NumberDataPoint **number_points(struct arena *a, const struct sl_pm_family *f, uint64_t start_ns,
				       uint64_t now_ns, int cumulative)
{
	NumberDataPoint **pts = az(a, f->nseries * sizeof(*pts));
	if (!pts)
		return NULL;
	for (size_t i = 0; i < f->nseries; i++) {
		NumberDataPoint *p = az(a, sizeof(*p));
		if (!p)
			return NULL;
		opentelemetry__proto__metrics__v1__number_data_point__init(p);
		p->attributes = labels_kv(a, &f->series[i]);
		p->n_attributes = f->series[i].nlabels;
		if (cumulative)
			p->start_time_unix_nano = start_ns;
		p->time_unix_nano = now_ns;
		p->value_case = OPENTELEMETRY__PROTO__METRICS__V1__NUMBER_DATA_POINT__VALUE_AS_DOUBLE;
		p->as_double = f->series[i].value;
		pts[i] = p;
	}
	return pts;
}

static HistogramDataPoint **hist_points(struct arena *a, const struct sl_pm_family *f, uint64_t start_ns,
					uint64_t now_ns)
{
	HistogramDataPoint **pts = az(a, f->nseries * sizeof(*pts));
	if (!pts)
		return NULL;
	for (size_t i = 0; i < f->nseries; i++) {
		const struct sl_pm_series *s = &f->series[i];
		HistogramDataPoint *p = az(a, sizeof(*p));
		double *bounds = az(a, s->nb * sizeof(double));
		uint64_t *bc = az(a, (s->nb + 1) * sizeof(uint64_t));
		if (!p || !bounds || !bc)
			return NULL;
		opentelemetry__proto__metrics__v1__histogram_data_point__init(p);
		p->attributes = labels_kv(a, s);
		p->n_attributes = s->nlabels;
		p->start_time_unix_nano = start_ns;
		p->time_unix_nano = now_ns;
		double prev = 0, total = s->has_inf ? s->inf : s->count;
		for (size_t b = 0; b < s->nb; b++) {
			bounds[b] = s->le[b];
			double c = s->cum[b] - prev;
			bc[b] = c > 0 ? (uint64_t)c : 0;
			prev = s->cum[b];
		}
		bc[s->nb] = total > prev ? (uint64_t)(total - prev) : 0;
		p->explicit_bounds = bounds;
		p->n_explicit_bounds = s->nb;
		p->bucket_counts = bc;
		p->n_bucket_counts = s->nb + 1;
		p->count = total > 0 ? (uint64_t)total : 0;
		p->sum = s->sum;
		pts[i] = p;
	}
	return pts;
}

int sl_otlp_encode_metrics(const struct sl_otlp_node *node, const struct sl_pm *pm, uint64_t start_ns,
			   uint64_t now_ns, uint8_t **out, size_t *outlen, size_t *npoints)
{
	struct arena a = {0};
	MetricsRequest req = OPENTELEMETRY__PROTO__COLLECTOR__METRICS__V1__EXPORT_METRICS_SERVICE_REQUEST__INIT;
	ResourceMetrics *rm = az(&a, sizeof(*rm));
	ResourceMetrics **rms = az(&a, sizeof(*rms));
	ScopeMetrics *sm = az(&a, sizeof(*sm));
	ScopeMetrics **sms = az(&a, sizeof(*sms));
	Metric **ms = az(&a, pm->nfam * sizeof(*ms));
	struct attrs at = {0};
	size_t nm = 0, np = 0;
	int rc = -ENOMEM;
	if (a.oom)
		goto out;
	opentelemetry__proto__metrics__v1__resource_metrics__init(rm);
	opentelemetry__proto__metrics__v1__scope_metrics__init(sm);
	node_attrs(&a, &at, node);
	rm->resource = resource(&a, &at);
	sm->scope = scope(&a, node);
	for (size_t i = 0; i < pm->nfam; i++) {
		const struct sl_pm_family *f = &pm->fam[i];
		if (!f->nseries)
			continue;
		Metric *m = az(&a, sizeof(*m));
		if (!m)
			goto out;
		opentelemetry__proto__metrics__v1__metric__init(m);
		m->name = astr(&a, f->name);
		m->description = astr(&a, f->help);
		m->unit = astr(&a, unit_of(f->name));
		if (f->type == SL_PM_COUNTER) {
			Sum *s = az(&a, sizeof(*s));
			if (!s)
				goto out;
			opentelemetry__proto__metrics__v1__sum__init(s);
			s->aggregation_temporality =
				OPENTELEMETRY__PROTO__METRICS__V1__AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE;
			s->is_monotonic = 1;
			s->data_points = number_points(&a, f, start_ns, now_ns, 1);
			s->n_data_points = f->nseries;
			m->data_case = OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_SUM;
			m->sum = s;
		} else if (f->type == SL_PM_HISTOGRAM) {
			Histogram *h = az(&a, sizeof(*h));
			if (!h)
				goto out;
			opentelemetry__proto__metrics__v1__histogram__init(h);
			h->aggregation_temporality =
				OPENTELEMETRY__PROTO__METRICS__V1__AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE;
			h->data_points = hist_points(&a, f, start_ns, now_ns);
			h->n_data_points = f->nseries;
			m->data_case = OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_HISTOGRAM;
			m->histogram = h;
		} else {
			Gauge *g = az(&a, sizeof(*g));
			if (!g)
				goto out;
			opentelemetry__proto__metrics__v1__gauge__init(g);
			g->data_points = number_points(&a, f, start_ns, now_ns, 0);
			g->n_data_points = f->nseries;
			m->data_case = OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_GAUGE;
			m->gauge = g;
		}
		ms[nm++] = m;
		np += f->nseries;
	}
	sm->metrics = ms;
	sm->n_metrics = nm;
	sms[0] = sm;
	rm->scope_metrics = sms;
	rm->n_scope_metrics = 1;
	rms[0] = rm;
	req.resource_metrics = rms;
	req.n_resource_metrics = 1;
	rc = pack(&a, &req.base, out, outlen);
	if (!rc && npoints)
		*npoints = np;
out:
	arena_free(&a);
	return rc;
}

/* ---- responses ---- */
static void copy_msg(const char *m, char *msg, size_t msglen)
{
	if (msglen)
		snprintf(msg, msglen, "%s", m ? m : "");
}

int sl_otlp_logs_response(const uint8_t *buf, size_t len, int64_t *rejected, char *msg, size_t msglen)
{
	*rejected = 0;
	copy_msg("", msg, msglen);
	if (!len)
		return 0;
	LogsResponse *r = opentelemetry__proto__collector__logs__v1__export_logs_service_response__unpack(NULL, len, buf);
	if (!r)
		return -EINVAL;
	if (r->partial_success) {
		*rejected = r->partial_success->rejected_log_records;
		copy_msg(r->partial_success->error_message, msg, msglen);
	}
	opentelemetry__proto__collector__logs__v1__export_logs_service_response__free_unpacked(r, NULL);
	return 0;
}

int sl_otlp_metrics_response(const uint8_t *buf, size_t len, int64_t *rejected, char *msg, size_t msglen)
{
	*rejected = 0;
	copy_msg("", msg, msglen);
	if (!len)
		return 0;
	MetricsResponse *r =
		opentelemetry__proto__collector__metrics__v1__export_metrics_service_response__unpack(NULL, len, buf);
	if (!r)
		return -EINVAL;
	if (r->partial_success) {
		*rejected = r->partial_success->rejected_data_points;
		copy_msg(r->partial_success->error_message, msg, msglen);
	}
	opentelemetry__proto__collector__metrics__v1__export_metrics_service_response__free_unpacked(r, NULL);
	return 0;
}
