#!/bin/bash
# OTLP/HTTP export (issue 10 item 4, docs/EXPORT.md) against a test receiver
# on loopback (tests/lib/otlp_receiver.py), decoded with the OpenTelemetry
# project's own .proto files (proto/opentelemetry) by protobufjs
# (tests/lib/otlp_decode.js; installed with npm into $SL_OTLP_NODE_DIR,
# default /tmp/sl-otlp-node, never into the repo):
#   1. a kubepods container's exec and exit events arrive as OTLP logs with
#      container.id / k8s.pod.uid resource attributes, severities, bodies;
#      the metrics arrive with Sums, Gauges and explicit-bucket Histograms;
#      the configured header and gzip are used;
#   2. the receiver answers 429 (Retry-After: 1), then 503: the agent
#      retries (counted), the requests keep coming;
#   3. the receiver goes away: an exec storm fills the queue, drops are
#      counted (queue_full / retry_exhausted), every event still reaches the
#      store and /api/v1/events, /healthz shows the exporter's state;
#   4. the receiver comes back: new events are exported again.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
sl_init
sl_require_agent_env
ct_require
sl_require_cmd python3 node jq
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

NODE_DIR=${SL_OTLP_NODE_DIR:-/tmp/sl-otlp-node}
if [ ! -d "$NODE_DIR/node_modules/protobufjs" ]; then
	command -v npm >/dev/null || skip "protobufjs not in $NODE_DIR and no npm to install it"
	mkdir -p "$NODE_DIR"
	timeout 180 npm install --prefix "$NODE_DIR" --no-audit --no-fund protobufjs@7 >"$SL_LOGDIR/npm.log" 2>&1 ||
		skip "npm install protobufjs into $NODE_DIR failed (registry unreachable?): $(tail -n 3 "$SL_LOGDIR/npm.log")"
fi
export NODE_PATH=$NODE_DIR/node_modules
decode() { node "$ROOT/tests/lib/otlp_decode.js" "$ROOT/proto" "$@"; }

RX=$SL_TMP/rx
mkdir -p "$RX"
echo ok >"$RX/mode"
RX_PORT=$(sl_free_port)
rx_start() {
	python3 "$ROOT/tests/lib/otlp_receiver.py" "$RX_PORT" "$RX" 2>>"$SL_LOGDIR/receiver.stderr" &
	RX_PID=$!
	local n=0
	while ! sl_port_in_use "$RX_PORT"; do
		sleep 0.1; n=$((n + 1)); [ $n -lt 100 ] || fail "receiver did not listen on $RX_PORT"
	done
}
rx_stop() { [ -n "${RX_PID:-}" ] && kill "$RX_PID" 2>/dev/null && wait "$RX_PID" 2>/dev/null; RX_PID=; }
sl_on_exit 'rx_stop; cp "$RX/requests.log" "$SL_LOGDIR/" 2>/dev/null'
rx_start

# $1 batch_size, $2 queue_size (the host's own events are exported too)
agent_yaml() {
	printf '%s\n' "export:
  otlp:
    endpoint: \"http://127.0.0.1:$RX_PORT\"
    headers: [\"X-Test: sandlens\"]
    interval: 2s
    batch_size: $1
    queue_size: $2
    timeout: 2s
    retry_initial: 200ms
    retry_max_interval: 1s
    max_retry_time: 4s
proc:
  exec_rate: 0"
}
sl_agent_start "$(agent_yaml 512 16384)"

# every logs request decoded, one JSON object per line
all_logs() { local f; f=$(ls "$RX"/*-logs-200.pb 2>/dev/null); [ -n "$f" ] && decode logs $f; }
# the log records of container $1 whose event_name is $2
records_of() {
	all_logs | jq -c --arg cid "$1" --arg ev "$2" '.resourceLogs[]
		| select(any(.resource.attributes[]; .key == "container.id" and .value.stringValue == $cid))
		| . as $rl | .scopeLogs[].logRecords[] | select(.eventName == $ev) | {res: $rl.resource, rec: .}'
}
# body field value: jq -r "$(bodyv exit_code)"
bodyv() { printf '[.rec.body.kvlistValue.values[] | select(.key=="%s") | .value | (.intValue // .stringValue)][0]' "$1"; }
wait_records() { # CID EVENT [TIMEOUT [JQ-BOOL]]
	local n=0 out
	while [ $n -lt $((${3:-20} * 2)) ]; do
		out=$(records_of "$1" "$2" 2>>"$SL_LOGDIR/decode.stderr" | jq -c "select(${4:-true})" | head -n 1)
		[ -n "$out" ] && { printf '%s\n' "$out"; return 0; }
		sleep 0.5; n=$((n + 1))
	done
	return 1
}

# ---- 1: logs and metrics decode with the OpenTelemetry definitions ----
cat >"$SL_TMP/run1.sh" <<'SH'
#!/bin/sh
/bin/sleep 0.5
/bin/sl-testprog exit 3
exit 0
SH
ct_create otlp1 kubepods --script "$SL_TMP/run1.sh" -- /run.sh
CID1=$CT_ID POD1=$CT_POD_UID
ct_run 60
R=$(wait_records "$CID1" sandlens.exec 20) || fail "no OTLP log record of the exec in $CID1 (requests: $(wc -l <"$RX/requests.log" 2>/dev/null))"
assert_eq "exec resource k8s.pod.uid" "$POD1" "$(jq -r '.res.attributes[] | select(.key=="k8s.pod.uid") | .value.stringValue' <<<"$R")"
assert_eq "exec resource service.name" sandlensd "$(jq -r '.res.attributes[] | select(.key=="service.name") | .value.stringValue' <<<"$R")"
assert_eq "exec resource host.name" "$(hostname)" "$(jq -r '.res.attributes[] | select(.key=="host.name") | .value.stringValue' <<<"$R")"
assert_eq "exec severity" "SEVERITY_NUMBER_INFO/info" "$(jq -r '.rec.severityNumber + "/" + .rec.severityText' <<<"$R")"
assert_eq "exec body type" exec "$(jq -r '.rec.body.kvlistValue.values[] | select(.key=="type") | .value.stringValue' <<<"$R")"
jq -e '.rec.attributes[] | select(.key=="sandlens.event.id") | .value.intValue' <<<"$R" >/dev/null || fail "no sandlens.event.id attribute: $R"
jq -e '.rec.timeUnixNano | tonumber > 1.6e18' <<<"$R" >/dev/null || fail "bad timeUnixNano: $R"
R=$(wait_records "$CID1" sandlens.exit 20 "$(bodyv exit_code) == \"3\"") || fail "no OTLP log record of the exit 3 in $CID1"
# severityNumber from the event's own severity (docs/EXPORT.md)
SEV=$(jq -r "$(bodyv severity)" <<<"$R")
declare -A SEVNUM=([debug]=SEVERITY_NUMBER_DEBUG [info]=SEVERITY_NUMBER_INFO [notice]=SEVERITY_NUMBER_INFO2
	[warning]=SEVERITY_NUMBER_WARN [error]=SEVERITY_NUMBER_ERROR [critical]=SEVERITY_NUMBER_FATAL)
assert_eq "exit 3 ($SEV) severity" "${SEVNUM[$SEV]:-?}/$SEV" "$(jq -r '.rec.severityNumber + "/" + .rec.severityText' <<<"$R")"
grep -q '/v1/logs 200 ctype=application/x-protobuf enc=gzip xtest=sandlens' "$RX/requests.log" ||
	fail "logs requests lack Content-Type/gzip/X-Test: $(head -n 3 "$RX/requests.log")"

n=0
while [ -z "$(ls "$RX"/*-metrics-200.pb 2>/dev/null)" ] && [ $n -lt 40 ]; do sleep 0.25; n=$((n + 1)); done
MF=$(ls "$RX"/*-metrics-200.pb 2>/dev/null | tail -n 1)
[ -n "$MF" ] || fail "no metrics request within 10 s"
decode metrics "$MF" >"$SL_TMP/metrics.json" || fail "metrics body does not decode"
M() { jq -c --arg n "$1" '.resourceMetrics[].scopeMetrics[].metrics[] | select(.name == $n)' "$SL_TMP/metrics.json"; }
jq -e '.sum.isMonotonic and .sum.aggregationTemporality == "AGGREGATION_TEMPORALITY_CUMULATIVE"' <<<"$(M sandlens_events_total)" >/dev/null ||
	fail "sandlens_events_total is not a monotonic cumulative sum: $(M sandlens_events_total | head -c 300)"
jq -e '.gauge.dataPoints | length > 0' <<<"$(M machine_cpu_cores)" >/dev/null || fail "machine_cpu_cores is not a gauge"
H=$(M sandlens_runqueue_latency_seconds)
[ -n "$H" ] || H=$(jq -c '[.resourceMetrics[].scopeMetrics[].metrics[] | select(.histogram)][0]' "$SL_TMP/metrics.json")
jq -e '.histogram.aggregationTemporality == "AGGREGATION_TEMPORALITY_CUMULATIVE" and
	(.histogram.dataPoints[0] | (.explicitBounds | length) > 0 and (.bucketCounts | length) == (.explicitBounds | length) + 1
	 and ((.bucketCounts | map(tonumber) | add) == (.count | tonumber)))' <<<"$H" >/dev/null ||
	fail "no explicit-bucket histogram with consistent counts: $(head -c 400 <<<"$H")"
note "histogram $(jq -r .name <<<"$H"): bounds $(jq -c '.histogram.dataPoints[0].explicitBounds' <<<"$H")"
# the same bounds as the Prometheus exposition
PB=$(curl -sf "$SL_API/metrics" | grep "^$(jq -r .name <<<"$H")_bucket" | grep -o 'le="[^"]*"' | grep -v Inf | sort -u | sed 's/le="//;s/"//' | sort -g | uniq | tr '\n' ' ')
OB=$(jq -r '.histogram.dataPoints[0].explicitBounds | map(tostring) | join(" ")' <<<"$H")
[ "$(echo $PB | tr ' ' '\n' | awk '{printf "%.9g\n", $1}' | tr '\n' ' ')" = "$(echo $OB | tr ' ' '\n' | awk '{printf "%.9g\n", $1}' | tr '\n' ' ')" ] ||
	fail "histogram bounds differ from /metrics: OTLP [$OB], Prometheus [$PB]"

# ---- 2: 429 with Retry-After, then 503: retried ----
echo 429 >"$RX/mode"
R0=$(sl_metric sandlens_export_retries_total 'signal="logs"')
cat >"$SL_TMP/run2.sh" <<'SH'
#!/bin/sh
/bin/sl-testprog exit 4
exit 0
SH
ct_create otlp2 kubepods --script "$SL_TMP/run2.sh" -- /run.sh
CID2=$CT_ID
ct_run 60
sleep 3
N429=$(grep -c '/v1/logs 429' "$RX/requests.log")
[ "$N429" -ge 2 ] || fail "logs not retried after 429 (429 answers: $N429)"
echo 503 >"$RX/mode"
sleep 2
N503=$(grep -c '/v1/logs 503' "$RX/requests.log")
[ "$N503" -ge 1 ] || fail "no logs request answered 503"
R1=$(sl_metric sandlens_export_retries_total 'signal="logs"')
[ "$R1" -gt "$R0" ] || fail "sandlens_export_retries_total{signal=logs} did not grow ($R0 -> $R1)"
F1=$(sl_metric sandlens_export_failed_total 'signal="logs"')
[ "$F1" -ge 3 ] || fail "sandlens_export_failed_total{signal=logs} = $F1"
note "429 x$N429, 503 x$N503, retries $R0 -> $R1, failed $F1"

# ---- 3: the receiver goes away; a storm fills a small queue ----
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
sl_agent_start "$(agent_yaml 20 60)"
rx_stop
D0=$(sl_metric sandlens_export_dropped_total 'signal="logs"')
cat >"$SL_TMP/run3.sh" <<'SH'
#!/bin/sh
/bin/sl-testprog storm 300 /bin/true
exit 0
SH
ct_create otlp3 kubepods --script "$SL_TMP/run3.sh" -- /run.sh
CID3=$CT_ID
T0=$(date +%s%N)
ct_run 120
T1=$(date +%s%N)
note "storm container ran in $(((T1 - T0) / 1000000)) ms with the receiver gone"
n=0
while [ $n -lt 60 ]; do
	STORED=$(curl -sf "$SL_API/api/v1/events?container=$CID3&type=exec&limit=1000" | jq '.events | length')
	[ "${STORED:-0}" -ge 301 ] && break
	sleep 0.5; n=$((n + 1))
done
[ "${STORED:-0}" -ge 301 ] || fail "only ${STORED:-0} of 301 execs of the storm in /api/v1/events while the receiver was gone"
n=0
while [ $n -lt 40 ]; do
	D1=$(sl_metric sandlens_export_dropped_total 'signal="logs"')
	[ "$D1" -gt "$D0" ] && break
	sleep 0.25; n=$((n + 1))
done
[ "$D1" -gt "$D0" ] || fail "no logs drop counted with the queue (60) full and the receiver gone ($D0 -> $D1)"
QF=$(sl_metric sandlens_export_dropped_total 'signal="logs",reason="queue_full"')
RE=$(sl_metric sandlens_export_dropped_total 'signal="logs",reason="retry_exhausted"')
[ "$QF" -gt 0 ] || fail "no queue_full drop with 301 events against a 60-event queue"
DEPTH=$(sl_metric sandlens_export_queue_depth 'signal="logs"')
[ "$DEPTH" -le 60 ] || fail "queue depth $DEPTH above its capacity 60"
ST=$(curl -sf "$SL_API/healthz" | jq -r '.export.state')
case "$ST" in retrying|failing) ;; *) fail "/healthz export.state '$ST' with the receiver gone" ;; esac
note "drops: queue_full $QF, retry_exhausted $RE; depth $DEPTH; healthz export.state $ST"

# ---- 4: the receiver returns; export resumes ----
# the sent counter before the receiver is back (read after the container
# below has run, a quiet host has already sent all of it)
S0=$(sl_metric sandlens_export_sent_total 'signal="logs"')
echo ok >"$RX/mode"
rx_start
# exits spread over ~5 s: the queue keeps the newest, so a host busy with
# other events cannot skip them all
cat >"$SL_TMP/run4.sh" <<'SH'
#!/bin/sh
i=0
while [ $i -lt 25 ]; do /bin/sl-testprog exit 5; /bin/sleep 0.2; i=$((i + 1)); done
exit 0
SH
ct_create otlp4 kubepods --script "$SL_TMP/run4.sh" -- /run.sh
CID4=$CT_ID
ct_run 60
wait_records "$CID4" sandlens.exit 30 "$(bodyv exit_code) == \"5\"" >/dev/null || fail "export did not resume after the receiver came back"
[ "$(sl_metric sandlens_export_sent_total 'signal="logs"')" -gt "$S0" ] || fail "sandlens_export_sent_total{signal=logs} did not grow after the receiver came back"
S=$(sl_metric sandlens_export_sent_total 'signal="logs"')
note "logs sent $S, metrics sent $(sl_metric sandlens_export_sent_total 'signal="metrics"')"

sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
