#!/bin/bash
# mem module, a pod-level memcg (docs/MEM.md "Pod-level series"): a
# kubepods pod cgroup with its own 64 MiB memory limit
# (ct_create --pod-mem), a runc container under it with no limit of its
# own (cgroupsPath /kubepods/burstable/pod<uid>/<64hex>) reading a 128 MiB
# file SL_MEM_ROUNDS times (sl-testprog memstorm): the memcg reclaimed is
# the pod's. Checks:
#   - GET /api/v1/mem has a pod-level series (kind "pod", pod_uid = the
#     pod, container_id "", runtime not "host", host false) whose
#     memcg_reclaim runs equal perf's count of
#     vmscan:mm_vmscan_memcg_reclaim_begin of the hog within +-2 %; the
#     container has no memcg reclaim series of its own (its memcg has no
#     limit), and the runs are not in the host series;
#   - /metrics sandlens_mem_memcg_reclaim_seconds_count{pod_uid=the pod,
#     container_id=""} with a runtime label that is not "host", equal to
#     the API's runs;
#   - mem_stall events (mem.stall_threshold SL_MEM_STALL, default 20us):
#     subject_kind cgroup, cgroup_id = the memcg = the pod's cgroup,
#     pod_uid and qos of the pod, container_id "", runtime not "host";
#     memcg.pod_uid = the pod, memcg.runtime not "host"; task = the hog
#     with the container's id; `sandlens events --pod` finds them and the
#     table's CONTAINER column names the pod, not "host".
# Failed before the fix: the pod memcg was the "host" series and the
# events said runtime "host".
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
sl_init
sl_require_agent_env
sl_require_cmd perf
ct_require
[ -d /sys/kernel/tracing/events/vmscan/mm_vmscan_memcg_reclaim_begin ] ||
	[ -d /sys/kernel/debug/tracing/events/vmscan/mm_vmscan_memcg_reclaim_begin ] ||
	skip "kernel has no vmscan:mm_vmscan_memcg_reclaim_begin tracepoint"
perf list 2>/dev/null | grep -q 'vmscan:mm_vmscan_memcg_reclaim_begin' ||
	skip "perf cannot see vmscan:mm_vmscan_memcg_reclaim_begin (tracefs not mounted for perf?)"

ROUNDS=${SL_MEM_ROUNDS:-2}
STALL=${SL_MEM_STALL:-20us}
sl_agent_start "mem:
  stall_threshold: $STALL
  stall_rate: 50
  stall_burst: 100"
curl -sf "$SL_API/api/v1/mem" >/dev/null || fail "GET /api/v1/mem failed (mem module not running?)"

ct_create mempod kubepods --pod-mem 64 -- /bin/sl-testprog memstorm /data 24 "$ROUNDS" 3
truncate -s 128M "$CT_DIR/rootfs/data"
ID=$CT_ID POD=$CT_POD_UID
ct_start_bg
ct_wait_running
HOG=
for _ in $(seq 50); do
	HOG=$(runc --root "$CT_RUNC_ROOT" state "$ID" 2>/dev/null | jq -r .pid)
	[ -n "$HOG" ] && [ "$HOG" != null ] && [ "$HOG" != 0 ] && break
	sleep 0.1
done
[ -n "$HOG" ] && [ "$HOG" != null ] || fail "no pid for container $ID"
note "container $ID in pod $POD (pod limit 64 MiB, none on the container), hog pid $HOG"

perf stat -x, -e vmscan:mm_vmscan_memcg_reclaim_begin -p "$HOG" -o "$SL_TMP/perf.out" &
PERF=$!
sl_on_exit "kill -INT $PERF"
n=0
until grep -q '"rounds"' "$CT_DIR/stdout" 2>/dev/null; do
	sleep 0.5
	n=$((n + 1))
	[ $n -lt 600 ] || fail "memstorm did not finish within 300 s"
	kill -0 "$HOG" 2>/dev/null || fail "the hog died (OOM?): $(cat "$CT_DIR/stderr" 2>/dev/null)"
done
note "storm: $(cat "$CT_DIR/stdout")"
sleep 1
kill -INT "$PERF"
wait "$PERF"
cp "$SL_TMP/perf.out" "$SL_LOGDIR/perf.out"
PERF_RUNS=$(awk -F, '/mm_vmscan_memcg_reclaim_begin/ {print $1}' "$SL_TMP/perf.out")
case "$PERF_RUNS" in '' | *[!0-9]*) fail "perf count unreadable: $(cat "$SL_TMP/perf.out")" ;; esac
[ "$PERF_RUNS" -gt 0 ] || fail "perf saw no memcg reclaim (the storm did not press the pod's limit)"

sleep 2.5
curl -sf "$SL_API/api/v1/mem" >"$SL_TMP/mem.json" || fail "GET /api/v1/mem"
cp "$SL_TMP/mem.json" "$SL_LOGDIR/mem.json"
curl -sf "$SL_API/metrics" >"$SL_TMP/metrics.txt" || fail "GET /metrics"
cp "$SL_TMP/metrics.txt" "$SL_LOGDIR/metrics.txt"
PS=$(jq -c --arg p "$POD" '[.containers[] | select(.pod_uid == $p and .container_id == "")]' "$SL_TMP/mem.json")
note "pod-level series: $(jq -c '[.[] | {kind, runtime, host, pod_uid, runs: .memcg_reclaim.runs}]' <<<"$PS")"
assert_eq "pod-level series of the pod in /api/v1/mem" 1 "$(jq length <<<"$PS")"
assert_eq "pod series kind" pod "$(jq -r '.[0].kind' <<<"$PS")"
assert_eq "pod series host" false "$(jq -r '.[0].host' <<<"$PS")"
RT=$(jq -r '.[0].runtime' <<<"$PS")
[ "$RT" != host ] || fail "the pod-level series has runtime \"host\""
POD_RUNS=$(jq '.[0].memcg_reclaim.runs' <<<"$PS")
CT_RUNS=$(jq --arg id "$ID" '[.containers[] | select(.container_id == $id) | .memcg_reclaim.runs] | add // 0' "$SL_TMP/mem.json")
note "memcg reclaim runs: perf $PERF_RUNS, pod series $POD_RUNS, container series $CT_RUNS"
assert_eq "container's own memcg reclaim runs (its memcg has no limit)" 0 "$CT_RUNS"
DIFF=$(( POD_RUNS > PERF_RUNS ? POD_RUNS - PERF_RUNS : PERF_RUNS - POD_RUNS ))
[ $((DIFF * 100)) -le $((PERF_RUNS * 2)) ] ||
	fail "pod series has $POD_RUNS memcg reclaim runs, perf $PERF_RUNS: off by $DIFF (> 2 %)"
echo "ok - pod series runs within 2 % of perf: $POD_RUNS vs $PERF_RUNS"
HOST_RUNS=$(jq '[.containers[] | select(.host) | .memcg_reclaim.runs] | add // 0' "$SL_TMP/mem.json")
[ "$HOST_RUNS" -lt "$PERF_RUNS" ] || fail "host series has $HOST_RUNS memcg reclaim runs (>= the pod's $PERF_RUNS)"

LINE=$(grep "^sandlens_mem_memcg_reclaim_seconds_count{[^}]*pod_uid=\"$POD\"" "$SL_TMP/metrics.txt")
note "/metrics: $LINE"
assert_eq "pod series lines in /metrics" 1 "$(grep -c . <<<"$LINE")"
grep -q 'container_id=""' <<<"$LINE" || fail "pod series has a container_id: $LINE"
grep -q 'runtime="host"' <<<"$LINE" && fail "pod series labelled runtime=\"host\": $LINE"
assert_eq "/metrics count = API runs" "$POD_RUNS" "${LINE##* }"

# events
sl_cli events --type mem_stall --pod "$POD" --json --limit 1000 >"$SL_TMP/stalls.json" 2>"$SL_TMP/stalls.err" ||
	fail "sandlens events --type mem_stall --pod failed: $(cat "$SL_TMP/stalls.err")"
cp "$SL_TMP/stalls.json" "$SL_LOGDIR/stalls.json"
EVS=$(jq -sc '[.[] | if type == "array" then .[] else . end | (.events? // .) | if type == "array" then .[] else . end
	| select(.type == "mem_stall" and .subject_kind == "cgroup")]' "$SL_TMP/stalls.json")
[ "$(jq length <<<"$EVS")" -gt 0 ] || fail "no memcg mem_stall event found with --pod $POD"
ONE=$(jq -c '.[0]' <<<"$EVS")
note "a stall: $ONE"
POD_INO=$(stat -c %i "/sys/fs/cgroup/memory$(dirname "$CT_CGPATH")" 2>/dev/null ||
	stat -c %i "/sys/fs/cgroup$(dirname "$CT_CGPATH")")
assert_eq "stall kind" memcg_reclaim "$(jq -r .kind <<<"$ONE")"
assert_eq "stall cgroup_id = the pod's memcg" "$POD_INO" "$(jq -r .cgroup_id <<<"$ONE")"
assert_eq "stall memcg.cgroup_id" "$POD_INO" "$(jq -r .memcg.cgroup_id <<<"$ONE")"
assert_eq "stall pod_uid" "$POD" "$(jq -r .pod_uid <<<"$ONE")"
assert_eq "stall qos" burstable "$(jq -r .qos <<<"$ONE")"
assert_eq "stall container_id (a pod has none)" "" "$(jq -r .container_id <<<"$ONE")"
[ "$(jq -r .runtime <<<"$ONE")" != host ] || fail "stall runtime \"host\": $ONE"
assert_eq "stall memcg.pod_uid" "$POD" "$(jq -r .memcg.pod_uid <<<"$ONE")"
assert_eq "stall memcg.container_id" "" "$(jq -r .memcg.container_id <<<"$ONE")"
assert_eq "stall memcg.runtime = the event's" "$(jq -r .runtime <<<"$ONE")" "$(jq -r .memcg.runtime <<<"$ONE")"
assert_eq "stall memcg source" at_max "$(jq -r .memcg.source <<<"$ONE")"
assert_eq "stall task = the hog" "$HOG" "$(jq -r .task.pid <<<"$ONE")"
assert_eq "stall task's container" "$ID" "$(jq -r .task.container_id <<<"$ONE")"
assert_eq "stall task's pod" "$POD" "$(jq -r .task.pod_uid <<<"$ONE")"
NHOST=$(jq '[.[] | select(.runtime == "host" or .memcg.runtime == "host")] | length' <<<"$EVS")
assert_eq "pod stalls called host" 0 "$NHOST"

sl_cli events --type mem_stall --pod "$POD" --limit 50 >"$SL_TMP/stalls.txt" 2>"$SL_TMP/stalls.err" ||
	fail "sandlens events table failed: $(cat "$SL_TMP/stalls.err")"
cp "$SL_TMP/stalls.txt" "$SL_LOGDIR/stalls.txt"
ROW=$(grep -m1 "mem_stall" "$SL_TMP/stalls.txt")
note "CLI row: $ROW"
grep -qE "^[^ ]+ +mem_stall +pod:${POD:0:8} " <<<"$ROW" || fail "the CONTAINER column does not name the pod: $ROW"

runc --root "$CT_RUNC_ROOT" kill "$ID" KILL >/dev/null 2>&1
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
