/* OTLP export encoding (src/export): the Prometheus text parser, logs and
 * metrics requests decoded again with protobuf-c's own unpack of the
 * OpenTelemetry definitions, partial-success responses, gzip, retry
 * policy. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>

#include "export/otlp_encode.h"
#include "export/otlp_http.h"
#include "export/otlp_retry.h"
#include "export/prom_parse.h"
#include "opentelemetry/proto/collector/logs/v1/logs_service.pb-c.h"
#include "opentelemetry/proto/collector/metrics/v1/metrics_service.pb-c.h"

typedef Opentelemetry__Proto__Common__V1__KeyValue KV;

static const char PROM[] =
	"# HELP sandlens_events_total Events by type.\n"
	"# TYPE sandlens_events_total counter\n"
	"sandlens_events_total{type=\"exec\"} 12\n"
	"sandlens_events_total{type=\"exit\"} 3\n"
	"\n# HELP machine_cpu_cores CPUs.\n"
	"# TYPE machine_cpu_cores gauge\n"
	"machine_cpu_cores 2\n"
	"# HELP sandlens_runqueue_latency_seconds Waits.\n"
	"# TYPE sandlens_runqueue_latency_seconds histogram\n"
	"sandlens_runqueue_latency_seconds_bucket{id=\"a\\\"b\",le=\"0.001\",pod=\"p\"} 1\n"
	"sandlens_runqueue_latency_seconds_bucket{id=\"a\\\"b\",le=\"0.01\",pod=\"p\"} 5\n"
	"sandlens_runqueue_latency_seconds_bucket{id=\"a\\\"b\",le=\"+Inf\",pod=\"p\"} 7\n"
	"sandlens_runqueue_latency_seconds_sum{id=\"a\\\"b\",pod=\"p\"} 0.25\n"
	"sandlens_runqueue_latency_seconds_count{id=\"a\\\"b\",pod=\"p\"} 7\n"
	"sandlens_runqueue_latency_seconds_bucket{id=\"c\",pod=\"q\",le=\"0.001\"} 0\n"
	"sandlens_runqueue_latency_seconds_bucket{id=\"c\",pod=\"q\",le=\"0.01\"} 2\n"
	"sandlens_runqueue_latency_seconds_bucket{id=\"c\",pod=\"q\",le=\"+Inf\"} 2\n"
	"sandlens_runqueue_latency_seconds_sum{id=\"c\",pod=\"q\"} 0.01\n"
	"sandlens_runqueue_latency_seconds_count{id=\"c\",pod=\"q\"} 2\n"
	"this is not a sample\n";

static void prom_parse(void **st)
{
	(void)st;
	struct sl_pm pm = {0};
	assert_int_equal(sl_pm_parse(&pm, PROM, strlen(PROM)), 0);
	assert_int_equal(pm.nfam, 3); /* the bad line makes no family */
	assert_int_equal(pm.bad_lines, 1);
	assert_string_equal(pm.fam[0].name, "sandlens_events_total");
	assert_int_equal(pm.fam[0].type, SL_PM_COUNTER);
	assert_string_equal(pm.fam[0].help, "Events by type.");
	assert_int_equal(pm.fam[0].nseries, 2);
	assert_string_equal(pm.fam[0].series[1].labels[0].value, "exit");
	assert_true(pm.fam[0].series[1].value == 3);
	assert_int_equal(pm.fam[1].type, SL_PM_GAUGE);
	assert_int_equal(pm.fam[1].series[0].nlabels, 0);
	const struct sl_pm_family *h = &pm.fam[2];
	assert_int_equal(h->type, SL_PM_HISTOGRAM);
	assert_int_equal(h->nseries, 2); /* le in the middle or at the end: the same series */
	assert_int_equal(h->series[0].nlabels, 2);
	assert_string_equal(h->series[0].labels[0].value, "a\"b");
	assert_string_equal(h->series[0].labels[1].name, "pod");
	assert_int_equal(h->series[0].nb, 2);
	assert_true(h->series[0].le[1] == 0.01 && h->series[0].cum[1] == 5 && h->series[0].inf == 7);
	assert_true(h->series[0].sum == 0.25 && h->series[0].count == 7);
	sl_pm_free(&pm);
}

static const char *kv_str(KV **kv, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(kv[i]->key, key) && kv[i]->value &&
		    kv[i]->value->value_case == OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE)
			return kv[i]->value->string_value;
	return NULL;
}

static const Opentelemetry__Proto__Common__V1__AnyValue *kv_get(KV **kv, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(kv[i]->key, key))
			return kv[i]->value;
	return NULL;
}

static void metrics_encode(void **st)
{
	(void)st;
	struct sl_pm pm = {0};
	struct sl_otlp_node node = {"node-1", "0.9"};
	uint8_t *buf;
	size_t len, np;
	assert_int_equal(sl_pm_parse(&pm, PROM, strlen(PROM)), 0);
	assert_int_equal(sl_otlp_encode_metrics(&node, &pm, 1000, 2000, &buf, &len, &np), 0);
	sl_pm_free(&pm);
	assert_int_equal(np, 2 + 1 + 2);
	Opentelemetry__Proto__Collector__Metrics__V1__ExportMetricsServiceRequest *r =
		opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__unpack(NULL, len, buf);
	free(buf);
	assert_non_null(r);
	assert_int_equal(r->n_resource_metrics, 1);
	const Opentelemetry__Proto__Resource__V1__Resource *res = r->resource_metrics[0]->resource;
	assert_string_equal(kv_str(res->attributes, res->n_attributes, "service.name"), "sandlensd");
	assert_string_equal(kv_str(res->attributes, res->n_attributes, "host.name"), "node-1");
	const Opentelemetry__Proto__Metrics__V1__ScopeMetrics *sm = r->resource_metrics[0]->scope_metrics[0];
	assert_string_equal(sm->scope->name, "sandlensd");
	assert_int_equal(sm->n_metrics, 3);
	const Opentelemetry__Proto__Metrics__V1__Metric *m = sm->metrics[0];
	assert_string_equal(m->name, "sandlens_events_total");
	assert_int_equal(m->data_case, OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_SUM);
	assert_true(m->sum->is_monotonic);
	assert_int_equal(m->sum->aggregation_temporality,
			 OPENTELEMETRY__PROTO__METRICS__V1__AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE);
	assert_int_equal(m->sum->n_data_points, 2);
	assert_true(m->sum->data_points[0]->as_double == 12);
	assert_int_equal(m->sum->data_points[0]->start_time_unix_nano, 1000);
	assert_int_equal(m->sum->data_points[0]->time_unix_nano, 2000);
	assert_string_equal(kv_str(m->sum->data_points[0]->attributes, m->sum->data_points[0]->n_attributes, "type"),
			    "exec");
	assert_int_equal(sm->metrics[1]->data_case, OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_GAUGE);
	assert_true(sm->metrics[1]->gauge->data_points[0]->as_double == 2);
	m = sm->metrics[2];
	assert_string_equal(m->unit, "s");
	assert_int_equal(m->data_case, OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_HISTOGRAM);
	const Opentelemetry__Proto__Metrics__V1__HistogramDataPoint *hp = m->histogram->data_points[0];
	assert_int_equal(hp->n_explicit_bounds, 2);
	assert_true(hp->explicit_bounds[0] == 0.001 && hp->explicit_bounds[1] == 0.01);
	assert_int_equal(hp->n_bucket_counts, 3);
	assert_int_equal(hp->bucket_counts[0], 1);
	assert_int_equal(hp->bucket_counts[1], 4);
	assert_int_equal(hp->bucket_counts[2], 2);
	assert_int_equal(hp->count, 7);
	assert_true(hp->sum == 0.25);
	assert_string_equal(kv_str(hp->attributes, hp->n_attributes, "id"), "a\"b");
	assert_null(kv_get(hp->attributes, hp->n_attributes, "le"));
	opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__free_unpacked(r, NULL);
}

static void logs_encode(void **st)
{
	(void)st;
	json_error_t je;
	json_t *evs = json_loads(
		"[{\"id\":7,\"time\":\"2024-05-01T12:00:00.000000001Z\",\"type\":\"exec\",\"severity\":\"info\","
		"\"pid\":42,\"ppid\":1,\"comm\":\"sh\",\"container_id\":\"abc\",\"pod_uid\":\"u-1\",\"namespace\":\"ns\","
		"\"pod\":\"web\",\"container\":\"app\",\"argv\":[\"sh\",\"-c\",\"x\"],\"args_truncated\":false},"
		"{\"id\":8,\"time\":\"2024-05-01T12:00:01Z\",\"type\":\"oom\",\"severity\":\"critical\",\"container_id\":\"\"},"
		"{\"id\":9,\"time\":\"2024-05-01T12:00:02Z\",\"type\":\"exit\",\"severity\":\"error\",\"container_id\":\"abc\","
		"\"pod_uid\":\"u-1\",\"namespace\":\"ns\",\"pod\":\"web\",\"container\":\"app\",\"exit_code\":3,\"x\":1.5,\"n\":null}]",
		0, &je);
	assert_non_null(evs);
	struct sl_otlp_node node = {"node-1", "0.9"};
	uint8_t *buf;
	size_t len;
	assert_int_equal(sl_otlp_encode_logs(&node, evs, 5, &buf, &len), 0);
	json_decref(evs);
	Opentelemetry__Proto__Collector__Logs__V1__ExportLogsServiceRequest *r =
		opentelemetry__proto__collector__logs__v1__export_logs_service_request__unpack(NULL, len, buf);
	free(buf);
	assert_non_null(r);
	assert_int_equal(r->n_resource_logs, 2); /* the container, the host */
	const Opentelemetry__Proto__Resource__V1__Resource *res = r->resource_logs[0]->resource;
	assert_string_equal(kv_str(res->attributes, res->n_attributes, "container.id"), "abc");
	assert_string_equal(kv_str(res->attributes, res->n_attributes, "k8s.pod.uid"), "u-1");
	assert_string_equal(kv_str(res->attributes, res->n_attributes, "k8s.namespace.name"), "ns");
	assert_string_equal(kv_str(res->attributes, res->n_attributes, "k8s.pod.name"), "web");
	assert_string_equal(kv_str(res->attributes, res->n_attributes, "k8s.container.name"), "app");
	assert_string_equal(kv_str(res->attributes, res->n_attributes, "service.name"), "sandlensd");
	assert_null(kv_str(res->attributes, res->n_attributes, "container.image.name")); /* not known: absent */
	const Opentelemetry__Proto__Logs__V1__ScopeLogs *sl = r->resource_logs[0]->scope_logs[0];
	assert_int_equal(sl->n_log_records, 2);
	const Opentelemetry__Proto__Logs__V1__LogRecord *lr = sl->log_records[0];
	assert_int_equal(lr->time_unix_nano, 1714564800000000001ull);
	assert_int_equal(lr->observed_time_unix_nano, 5);
	assert_int_equal(lr->severity_number, 9);
	assert_string_equal(lr->severity_text, "info");
	assert_string_equal(lr->event_name, "sandlens.exec");
	assert_int_equal(kv_get(lr->attributes, lr->n_attributes, "sandlens.event.id")->int_value, 7);
	assert_int_equal(kv_get(lr->attributes, lr->n_attributes, "process.pid")->int_value, 42);
	assert_string_equal(kv_str(lr->attributes, lr->n_attributes, "process.executable.name"), "sh");
	assert_int_equal(lr->body->value_case, OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_KVLIST_VALUE);
	const Opentelemetry__Proto__Common__V1__AnyValue *argv =
		kv_get(lr->body->kvlist_value->values, lr->body->kvlist_value->n_values, "argv");
	assert_int_equal(argv->value_case, OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_ARRAY_VALUE);
	assert_int_equal(argv->array_value->n_values, 3);
	assert_string_equal(argv->array_value->values[1]->string_value, "-c");
	lr = sl->log_records[1];
	assert_int_equal(lr->severity_number, 17);
	const Opentelemetry__Proto__Common__V1__AnyValue *x =
		kv_get(lr->body->kvlist_value->values, lr->body->kvlist_value->n_values, "x");
	assert_true(x->double_value == 1.5);
	assert_int_equal(kv_get(lr->body->kvlist_value->values, lr->body->kvlist_value->n_values, "n")->value_case,
			 OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE__NOT_SET);
	res = r->resource_logs[1]->resource;
	assert_null(kv_str(res->attributes, res->n_attributes, "container.id"));
	assert_string_equal(kv_str(res->attributes, res->n_attributes, "host.name"), "node-1");
	assert_int_equal(r->resource_logs[1]->scope_logs[0]->log_records[0]->severity_number, 21);
	opentelemetry__proto__collector__logs__v1__export_logs_service_request__free_unpacked(r, NULL);
	assert_int_equal(sl_otlp_encode_logs(&node, NULL, 0, &buf, &len), -EINVAL);
}

static void responses(void **st)
{
	(void)st;
	Opentelemetry__Proto__Collector__Logs__V1__ExportLogsServiceResponse resp =
		OPENTELEMETRY__PROTO__COLLECTOR__LOGS__V1__EXPORT_LOGS_SERVICE_RESPONSE__INIT;
	Opentelemetry__Proto__Collector__Logs__V1__ExportLogsPartialSuccess ps =
		OPENTELEMETRY__PROTO__COLLECTOR__LOGS__V1__EXPORT_LOGS_PARTIAL_SUCCESS__INIT;
	ps.rejected_log_records = 3;
	ps.error_message = "too old";
	resp.partial_success = &ps;
	uint8_t buf[128];
	size_t n = opentelemetry__proto__collector__logs__v1__export_logs_service_response__pack(&resp, buf);
	int64_t rej;
	char msg[64];
	assert_int_equal(sl_otlp_logs_response(buf, n, &rej, msg, sizeof(msg)), 0);
	assert_int_equal(rej, 3);
	assert_string_equal(msg, "too old");
	assert_int_equal(sl_otlp_logs_response(NULL, 0, &rej, msg, sizeof(msg)), 0);
	assert_int_equal(rej, 0);
	const uint8_t junk[] = {0xff, 0xff, 0xff};
	assert_int_equal(sl_otlp_metrics_response(junk, sizeof(junk), &rej, msg, sizeof(msg)), -EINVAL);
}

static void gzip_roundtrip(void **st)
{
	(void)st;
	const char *in = "otlp otlp otlp otlp otlp otlp otlp";
	uint8_t *gz, out[128];
	size_t gl;
	assert_int_equal(sl_otlp_gzip((const uint8_t *)in, strlen(in), &gz, &gl), 0);
	assert_true(gz[0] == 0x1f && gz[1] == 0x8b);
	z_stream z = {0};
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = gz;
	z.avail_in = (uInt)gl;
	z.next_out = out;
	z.avail_out = sizeof(out);
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(z.total_out, strlen(in));
	assert_memory_equal(out, in, strlen(in));
	inflateEnd(&z);
	free(gz);
}

static void retry_policy(void **st)
{
	(void)st;
	assert_true(sl_otlp_retryable(0) && sl_otlp_retryable(429) && sl_otlp_retryable(503) &&
		    sl_otlp_retryable(502) && sl_otlp_retryable(504));
	assert_false(sl_otlp_retryable(400) || sl_otlp_retryable(401) || sl_otlp_retryable(404) ||
		     sl_otlp_retryable(500) || sl_otlp_retryable(200));
	const uint64_t s = 1000000000ull;
	/* rnd 0.5 = factor 1.0: 1, 2, 4, 8, then the cap 10 */
	assert_int_equal(sl_otlp_backoff_ns(1, s, 10 * s, 0.5, 0), s);
	assert_int_equal(sl_otlp_backoff_ns(2, s, 10 * s, 0.5, 0), 2 * s);
	assert_int_equal(sl_otlp_backoff_ns(4, s, 10 * s, 0.5, 0), 8 * s);
	assert_int_equal(sl_otlp_backoff_ns(5, s, 10 * s, 0.5, 0), 10 * s);
	assert_int_equal(sl_otlp_backoff_ns(60, s, 10 * s, 0.5, 0), 10 * s);
	/* jitter: [0.5, 1.5) of the step */
	assert_int_equal(sl_otlp_backoff_ns(2, s, 10 * s, 0.0, 0), s);
	assert_true(sl_otlp_backoff_ns(2, s, 10 * s, 0.999, 0) < 3 * s);
	/* Retry-After wins */
	assert_int_equal(sl_otlp_backoff_ns(1, s, 10 * s, 0.5, 7 * s), 7 * s);
	assert_int_equal(sl_otlp_retry_after_ns("3", 0), 3 * s);
	assert_int_equal(sl_otlp_retry_after_ns(" 120", 0), 120 * s);
	assert_int_equal(sl_otlp_retry_after_ns("", 0), 0);
	assert_int_equal(sl_otlp_retry_after_ns(NULL, 0), 0);
	assert_int_equal(sl_otlp_retry_after_ns("soon", 0), 0);
	/* an HTTP-date 30 s after now */
	assert_int_equal(sl_otlp_retry_after_ns("Wed, 21 Oct 2015 07:28:30 GMT", 1445412480), 30 * s);
	assert_int_equal(sl_otlp_retry_after_ns("Wed, 21 Oct 2015 07:28:30 GMT", 1445412600), 0);
}

static void severities(void **st)
{
	(void)st;
	assert_int_equal(sl_otlp_severity_number("debug"), 5);
	assert_int_equal(sl_otlp_severity_number("notice"), 10);
	assert_int_equal(sl_otlp_severity_number("warning"), 13);
	assert_int_equal(sl_otlp_severity_number("bogus"), 0);
	assert_int_equal(sl_otlp_severity_number(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(prom_parse),   cmocka_unit_test(metrics_encode), cmocka_unit_test(logs_encode),
		cmocka_unit_test(responses),    cmocka_unit_test(gzip_roundtrip), cmocka_unit_test(retry_policy),
		cmocka_unit_test(severities),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
