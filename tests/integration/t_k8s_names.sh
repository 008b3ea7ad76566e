#!/bin/bash
# ATTR-5 and the cAdvisor label scheme with real components: two runc
# containers whose bundle config.json carries CRI annotations, containerd
# style on a kubepods container (CPU quota: it is throttled) and CRI-O style
# on a plain one, spin; a real Prometheus (Debian prometheus, own loopback
# port, temp config and storage, the rules of deploy/prometheus) scrapes the
# agent for ~20 s. Checked through Prometheus' HTTP API: CPU and working set
# per namespace/pod/container, the kubernetes-mixin expressions (container
# CPU rate, working set, CPUThrottlingHigh's ratio) one series per container
# with the right names, the recording rules' outputs; in /metrics the
# sandlens_* families (runqueue histogram) carry the same names next to
# container_id; exec events carry namespace, pod, container.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
sl_init
sl_require_agent_env
ct_require
sl_require_cmd prometheus promtool curl jq

SPIN=60 # B still runs when the test execs into it (about 30 s in), also under ASan
annotate() { # jq object -> merged into the current bundle's annotations
	jq --argjson a "$1" '.annotations = ((.annotations // {}) + $a)' "$CT_DIR/config.json" >"$CT_DIR/c.new" ||
		fail "jq annotations"
	mv "$CT_DIR/c.new" "$CT_DIR/config.json"
	cp "$CT_DIR/config.json" "$SL_LOGDIR/ct-$(basename "$CT_DIR").config.json"
}

sl_agent_start "attribution:
  runc_root: $CT_RUNC_ROOT
stats:
  interval: 1s"

# containerd style, kubepods path, 30% CPU quota
ct_create cd kubepods -- /bin/sl-testprog spin $SPIN
jq '.linux.resources.cpu.quota = 30000 | .linux.resources.cpu.period = 100000' "$CT_DIR/config.json" >"$CT_DIR/c.new" &&
	mv "$CT_DIR/c.new" "$CT_DIR/config.json"
annotate "$(jq -cn --arg uid "$CT_POD_UID" --arg sid "$(printf '%064d' 7)" '{
	"io.kubernetes.cri.container-type": "container",
	"io.kubernetes.cri.sandbox-id": $sid,
	"io.kubernetes.cri.sandbox-namespace": "shop",
	"io.kubernetes.cri.sandbox-name": "cart-7d9f8-x2x4q",
	"io.kubernetes.cri.sandbox-uid": $uid,
	"io.kubernetes.cri.container-name": "cart",
	"io.kubernetes.cri.image-name": "docker.io/library/busybox:1.36"}')"
A_ID=$CT_ID A_CG=$CT_CGPATH
ct_start_bg
A_PID=$CT_RUN_PID

# CRI-O style, plain path (found through runc's state)
ct_create crio plain -- /bin/sl-testprog spin $SPIN
annotate "$(jq -cn '{
	"io.kubernetes.cri-o.ContainerType": "container",
	"io.kubernetes.pod.namespace": "billing",
	"io.kubernetes.pod.name": "invoice-0",
	"io.kubernetes.pod.uid": "0e3f2c7a-1b2c-4d5e-8f90-a1b2c3d4e5f6",
	"io.kubernetes.container.name": "worker",
	"io.kubernetes.cri-o.ImageName": "quay.io/example/worker:2.1"}')"
B_ID=$CT_ID
ct_start_bg
B_PID=$CT_RUN_PID

# the names reach /metrics
n=0
until curl -sf "$SL_API/metrics" >"$SL_TMP/m.txt" &&
	grep -q "^container_cpu_usage_seconds_total{[^}]*namespace=\"shop\",pod=\"cart-7d9f8-x2x4q\",container=\"cart\"" "$SL_TMP/m.txt" &&
	grep -q "^container_cpu_usage_seconds_total{[^}]*namespace=\"billing\",pod=\"invoice-0\",container=\"worker\"" "$SL_TMP/m.txt"; do
	[ $n -lt 100 ] || fail "container_cpu_usage_seconds_total never had both containers' names: $(grep '^container_cpu_usage_seconds_total' "$SL_TMP/m.txt" | head -5)"
	sleep 0.2
	n=$((n + 1))
done
cp "$SL_TMP/m.txt" "$SL_LOGDIR/metrics.txt"
line=$(grep "^container_cpu_usage_seconds_total{id=\"$A_CG\"," "$SL_TMP/m.txt")
assert_eq "cAdvisor labels of the containerd-style container" \
	"{id=\"$A_CG\",name=\"$A_ID\",image=\"docker.io/library/busybox:1.36\",namespace=\"shop\",pod=\"cart-7d9f8-x2x4q\",container=\"cart\"}" \
	"$(sed 's/^container_cpu_usage_seconds_total//; s/ [^ ]*$//' <<<"$line")"
grep -q "^container_memory_working_set_bytes{[^}]*name=\"$B_ID\",image=\"quay.io/example/worker:2.1\",namespace=\"billing\",pod=\"invoice-0\",container=\"worker\"}" "$SL_TMP/m.txt" ||
	fail "working set of the CRI-O-style container lacks its labels"
grep -q '^container_cpu_usage_seconds_total{id="/"} ' "$SL_TMP/m.txt" || fail "no root id=\"/\" series"
grep -q '^machine_cpu_cores ' "$SL_TMP/m.txt" || fail "no machine_cpu_cores"
grep -q '^sandlens_build_info{' "$SL_TMP/m.txt" || fail "no sandlens_build_info"
grep -q '^sandlens_cpu_cfs_' "$SL_TMP/m.txt" && fail "CFS throttling exported twice (sandlens_cpu_cfs_*)"
echo "ok - /metrics: cAdvisor labels, root series, machine, build info, CFS once"
promtool check metrics <"$SL_TMP/m.txt" >"$SL_LOGDIR/promtool.txt" 2>&1 || fail "promtool check metrics: $(head "$SL_LOGDIR/promtool.txt")"

# sandlens_* families: the same names next to the ids (one label scheme)
n=0
until curl -sf "$SL_API/metrics" | grep -q "^sandlens_runqueue_latency_seconds_count{container_id=\"$A_ID\",pod_uid=\"$CT_POD_UID\\?[^}]*namespace=\"shop\",pod=\"cart-7d9f8-x2x4q\",container=\"cart\"}"; do
	[ $n -lt 50 ] || fail "sandlens_runqueue_latency_seconds lacks the names: $(curl -sf "$SL_API/metrics" | grep "^sandlens_runqueue_latency_seconds_count{container_id=\"$A_ID\"")"
	sleep 0.2
	n=$((n + 1))
done
echo "ok - sandlens_runqueue_latency_seconds carries namespace, pod, container"

PPORT=$(sl_free_port)
mkdir -p "$SL_TMP/prom-data"
cp "$SL_ROOT/deploy/prometheus/sandlens-k8s.rules.yml" "$SL_TMP/"
cat >"$SL_TMP/prometheus.yml" <<EOF2
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $SL_TMP/sandlens-k8s.rules.yml
scrape_configs:
  - job_name: sandlens
    static_configs:
      - targets: ["127.0.0.1:$SL_PORT"]
EOF2
cp "$SL_TMP/prometheus.yml" "$SL_LOGDIR/prometheus.yml"
prometheus --config.file="$SL_TMP/prometheus.yml" --storage.tsdb.path="$SL_TMP/prom-data" \
	--web.listen-address="127.0.0.1:$PPORT" >"$SL_LOGDIR/prometheus.log" 2>&1 &
PROM=$!
sl_on_exit "kill $PROM; wait $PROM"
sleep 20

query() { # PromQL -> the result vector as compact JSON
	curl -sf -G "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" | jq -c '.data.result'
}
names() { jq -c '[.[] | .metric | {namespace, pod, container}] | sort_by(.namespace)'; }
WANT='[{"namespace":"billing","pod":"invoice-0","container":"worker"},{"namespace":"shop","pod":"cart-7d9f8-x2x4q","container":"cart"}]'
sel="{container!=\"\",id=~\"$A_CG|/sandlens-test/$B_ID\"}"

r=$(query "sum by (namespace, pod, container) (rate(container_cpu_usage_seconds_total$sel[10s]))")
echo "$r" >"$SL_LOGDIR/q-cpu.json"
assert_eq "CPU rate by namespace,pod,container" "$WANT" "$(names <<<"$r")"
jq -e 'all(.[]; (.value[1] | tonumber) > 0.1)' <<<"$r" >/dev/null || fail "a spinning container's CPU rate is not > 0.1: $r"
# the quota caps the containerd-style one near 0.3
jq -e '.[] | select(.metric.container == "cart") | (.value[1] | tonumber) < 0.4' <<<"$r" >/dev/null ||
	fail "the 30% quota container uses more than 0.4 CPU: $r"
r=$(query "max by (namespace, pod, container) (container_memory_working_set_bytes$sel)")
assert_eq "working set by namespace,pod,container" "$WANT" "$(names <<<"$r")"
jq -e 'all(.[]; (.value[1] | tonumber) > 0)' <<<"$r" >/dev/null || fail "working set 0: $r"
echo "ok - Prometheus: CPU and working set per namespace/pod/container"

# CPUThrottlingHigh's expression (resource_alerts.libsonnet) without the threshold
r=$(query "sum without (id, metrics_path, name, image, endpoint, job, node, instance) (increase(container_cpu_cfs_throttled_periods_total{container!=\"\"}[15s])) / on (namespace, pod, container) sum without (id, metrics_path, name, image, endpoint, job, node, instance) (increase(container_cpu_cfs_periods_total{container!=\"\"}[15s]))")
echo "$r" >"$SL_LOGDIR/q-throttle.json"
got=$(jq -c --arg ns shop '[.[] | select(.metric.namespace == $ns)]' <<<"$r")
assert_eq "CPUThrottlingHigh ratio series for the throttled container" \
	'[{"namespace":"shop","pod":"cart-7d9f8-x2x4q","container":"cart"}]' "$(names <<<"$got")"
jq -e '.[0].value[1] | tonumber > 0.25' <<<"$got" >/dev/null || fail "throttled ratio of a 30% quota spinner is not > 25%: $got"
echo "ok - CPUThrottlingHigh's expression: one series, the throttled container, ratio > 25%"

# the recording rules of deploy/prometheus over the live data
r=$(query "namespace_pod_container:container_memory_working_set_bytes{namespace=~\"shop|billing\"}")
assert_eq "recording rule working set" "$WANT" "$(names <<<"$r")"
r=$(query "namespace_pod_container:container_cpu_usage_seconds_total:sum_irate{namespace=~\"shop|billing\"}")
assert_eq "recording rule CPU" "$WANT" "$(names <<<"$r")"
echo "ok - recording rules: one series per container with its names"

# events carry the names: an exec into B now (its entrypoint's exec, at
# start, can be the one a plain container's attribution misses: runc says
# running a moment before its state.json is read, docs/ATTRIBUTION.md)
runc --root "$CT_RUNC_ROOT" exec "$B_ID" /bin/true || fail "runc exec into $B_ID failed"
n=0
until ev=$(curl -sf "$SL_API/api/v1/events?type=exec&container=$B_ID" | jq -c '.events[0] // empty') && [ -n "$ev" ]; do
	[ $n -lt 25 ] || fail "no exec event of $B_ID"
	sleep 0.2
	n=$((n + 1))
done
assert_eq "exec event names" '{"namespace":"billing","pod":"invoice-0","container":"worker"}' \
	"$(jq -c '{namespace, pod, container}' <<<"$ev")"
echo "ok - events carry namespace, pod, container"

# runc create + runc start (how containerd's shim runs a container): the
# state.json is written inside <root>/<id>/ after the names were first
# looked up, the root's mtime need not change; names within a few seconds,
# on /metrics and on the container's first exec
# (kubepods path: the id comes from the path, no cgroup -> id lookup in
# runc's index makes it rebuild)
ct_create cs kubepods -- /bin/sl-testprog spin 15
annotate "$(jq -cn --arg uid "$CT_POD_UID" '{
	"io.kubernetes.cri.container-type": "container",
	"io.kubernetes.cri.sandbox-namespace": "staged",
	"io.kubernetes.cri.sandbox-name": "created-then-started",
	"io.kubernetes.cri.sandbox-uid": $uid,
	"io.kubernetes.cri.container-name": "late"}')"
C_ID=$CT_ID
runc --root "$CT_RUNC_ROOT" create --bundle "$CT_DIR" "$C_ID" </dev/null >"$CT_DIR/stdout" 2>"$CT_DIR/stderr" ||
	fail "runc create: $(cat "$CT_DIR/stderr")"
sleep 0.5 # the first lookups (the stats pass, the init's events) see no state.json
runc --root "$CT_RUNC_ROOT" start "$C_ID" || fail "runc start failed"
n=0
until curl -sf "$SL_API/metrics" | grep -q "^container_cpu_usage_seconds_total{[^}]*name=\"$C_ID\"[^}]*namespace=\"staged\",pod=\"created-then-started\",container=\"late\""; do
	[ $n -lt 25 ] || fail "create+start container has no names on /metrics after 5 s: $(curl -sf "$SL_API/metrics" | grep "^container_cpu_usage_seconds_total{[^}]*name=\"$C_ID\"")"
	sleep 0.2
	n=$((n + 1))
done
echo "ok - runc create + start: names on /metrics within 5 s"
n=0
until ev=$(curl -sf "$SL_API/api/v1/events?type=exec&container=$C_ID" | jq -c '.events[-1] // empty') && [ -n "$ev" ]; do
	[ $n -lt 25 ] || fail "no exec event of $C_ID"
	sleep 0.2
	n=$((n + 1))
done
assert_eq "first exec event names (create + start)" '{"namespace":"staged","pod":"created-then-started","container":"late"}' \
	"$(jq -c '{namespace, pod, container}' <<<"$ev")"
echo "ok - runc create + start: the first exec carries the names"
runc --root "$CT_RUNC_ROOT" kill "$C_ID" KILL >/dev/null 2>&1

wait "$A_PID" "$B_PID" 2>/dev/null
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
