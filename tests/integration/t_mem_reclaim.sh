#!/bin/bash
# mem module (SYS-1, docs/MEM.md): a kubepods runc container under a 64 MiB
# limit (swap limit = memory limit: no swapping) keeps 24 MiB of anonymous
# memory, reads a 192 MiB file SL_MEM_ROUNDS times and churns 8 MiB of
# anonymous memory each round (sl-testprog memstorm): its memcg is reclaimed
# over and over. Checks:
#   - /metrics sandlens_mem_memcg_reclaim_seconds_count{container_id=it} > 0
#     and GET /api/v1/mem lists it with memcg_reclaim.runs > 0;
#   - an idle neighbour container (same limit, sleeping) has no memcg
#     reclaim series (/metrics) and no runs (API);
#   - the runs sandlens counts for the container's memcg equal an
#     independent count of vmscan:mm_vmscan_memcg_reclaim_begin over the
#     same window within +-2 %: `perf stat -p <the hog>` attached before the
#     storm starts (the hog sleeps first) and stopped after it is done (the
#     hog then sleeps: no more reclaim). The container's only task is the
#     hog, and nothing else charges its memcg;
#   - with mem.stall_threshold lowered to SL_MEM_STALL (default 20us),
#     `sandlens events --type mem_stall --json` shows a stall whose subject
#     is the container's memcg (subject_kind cgroup, container_id = the
#     container) and whose task is the hog; the CLI table
#     (`sandlens events --type mem_stall`) has a mem_stall row of the
#     container; GET /api/v1/schema/events lists mem_stall;
#   - `promtool check metrics` accepts /metrics (when promtool is installed);
#   - expiry (mem.series_idle_ticks 5 here; docs/MEM.md "Series"): while
#     the storm container lives, GET /api/v1/series mem_stall_seconds has
#     its point; once it is deleted the point is gone within 3 s (no live
#     cgroup) and every sandlens_mem_* line of it leaves /metrics within
#     the TTL + 3 s, its runs counted in sandlens_mem_runs_expired_total.
#     Failed before the fix: the series stayed (a point stamped now, value
#     0) until the 512-series cap.
# SL_MEM_ROUNDS (default 3) changes the storm's length.
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

ROUNDS=${SL_MEM_ROUNDS:-3}
STALL=${SL_MEM_STALL:-20us}
TTL=5
sl_agent_start "mem:
  stall_threshold: $STALL
  stall_rate: 50
  stall_burst: 100
  series_idle_ticks: $TTL"
curl -sf "$SL_API/api/v1/mem" >/dev/null || fail "GET /api/v1/mem failed (mem module not running?)"

# the file: sparse (no disk I/O), its page cache charged to the reader
ct_create memidle kubepods --mem 64 -- /bin/sl-testprog sleep 600
IDLE_ID=$CT_ID IDLE_CG=$CT_CGPATH
ct_start_bg
IDLE_RUN_PID=$CT_RUN_PID
ct_wait_running

ct_create memstorm kubepods --mem 64 -- /bin/sl-testprog memstorm /data 24 "$ROUNDS" 3
truncate -s 192M "$CT_DIR/rootfs/data"
STORM_ID=$CT_ID STORM_CG=$CT_CGPATH
ct_start_bg
ct_wait_running
HOG=
for _ in $(seq 50); do # runc state can lag behind "running" for a moment
	HOG=$(runc --root "$CT_RUNC_ROOT" state "$STORM_ID" 2>/dev/null | jq -r .pid)
	[ -n "$HOG" ] && [ "$HOG" != null ] && [ "$HOG" != 0 ] && break
	sleep 0.1
done
[ -n "$HOG" ] && [ "$HOG" != null ] || fail "no pid for container $STORM_ID"
note "storm container $STORM_ID, hog pid $HOG; idle neighbour $IDLE_ID"

perf stat -x, -e vmscan:mm_vmscan_memcg_reclaim_begin -p "$HOG" -o "$SL_TMP/perf.out" &
PERF=$!
sl_on_exit "kill -INT $PERF"
# the storm: done when the hog prints its summary
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
[ "$PERF_RUNS" -gt 0 ] || fail "perf saw no memcg reclaim in the storm container (the storm did not press its limit)"

# two ticks for the snapshot
sleep 2.5
curl -sf "$SL_API/api/v1/mem" >"$SL_TMP/mem.json" || fail "GET /api/v1/mem"
cp "$SL_TMP/mem.json" "$SL_LOGDIR/mem.json"
API_RUNS=$(jq --arg id "$STORM_ID" '[.containers[] | select(.container_id == $id) | .memcg_reclaim.runs] | add // 0' "$SL_TMP/mem.json")
IDLE_RUNS=$(jq --arg id "$IDLE_ID" '[.containers[] | select(.container_id == $id) | .memcg_reclaim.runs] | add // 0' "$SL_TMP/mem.json")
PROM_RUNS=$(sl_metric sandlens_mem_memcg_reclaim_seconds_count "container_id=\"$STORM_ID\"")
curl -sf "$SL_API/metrics" >"$SL_TMP/metrics.txt"
cp "$SL_TMP/metrics.txt" "$SL_LOGDIR/metrics.txt"
IDLE_PROM=$(grep -c "^sandlens_mem_memcg_reclaim_seconds_count{[^}]*container_id=\"$IDLE_ID\"" "$SL_TMP/metrics.txt")
note "memcg reclaim runs: perf $PERF_RUNS, API $API_RUNS, /metrics $PROM_RUNS; idle neighbour API $IDLE_RUNS, /metrics series $IDLE_PROM"

[ "$API_RUNS" -gt 0 ] || fail "no memcg reclaim runs for $STORM_ID in /api/v1/mem"
assert_eq "/metrics count = API runs" "$API_RUNS" "$PROM_RUNS"
assert_eq "idle neighbour runs (API)" 0 "$IDLE_RUNS"
assert_eq "idle neighbour memcg reclaim series in /metrics" 0 "$IDLE_PROM"
grep -q "^sandlens_mem_memcg_reclaim_seconds_bucket{[^}]*container_id=\"$STORM_ID\"[^}]*le=\"+Inf\"} $API_RUNS\$" \
	"$SL_TMP/metrics.txt" || fail "no +Inf bucket equal to the count for $STORM_ID"
DIFF=$(( API_RUNS > PERF_RUNS ? API_RUNS - PERF_RUNS : PERF_RUNS - API_RUNS ))
[ $((DIFF * 100)) -le $((PERF_RUNS * 2)) ] ||
	fail "sandlens counted $API_RUNS memcg reclaim runs for the container, perf $PERF_RUNS: off by $DIFF (> 2 %)"
echo "ok - runs within 2 % of perf: $API_RUNS vs $PERF_RUNS (off by $DIFF)"

# accounting: kernel runs = Σ histogram counts + not counted (whole host)
KRUNS=$(sl_metric sandlens_mem_runs_total 'kind="memcg_reclaim"')
ALL=$(awk '/^sandlens_mem_memcg_reclaim_seconds_count/ {s += $NF} END {print s + 0}' "$SL_TMP/metrics.txt")
NC=$(sl_metric sandlens_mem_runs_not_counted_total 'kind="memcg_reclaim"')
note "accounting: kernel runs $KRUNS, histograms $ALL, not counted $NC (read at different moments; reclaim elsewhere on the host may add)"
[ "$KRUNS" -ge $((ALL + NC)) ] || fail "histograms ($ALL) + not counted ($NC) exceed the kernel's runs ($KRUNS)"

# mem_stall events of the hog, the container as the memcg
sl_cli events --type mem_stall --json --limit 1000 >"$SL_TMP/stalls.json" 2>"$SL_TMP/stalls.err" ||
	fail "sandlens events --type mem_stall failed: $(cat "$SL_TMP/stalls.err")"
cp "$SL_TMP/stalls.json" "$SL_LOGDIR/stalls.json"
NSTALL=$(jq -s --arg id "$STORM_ID" '[.[] | if type == "array" then .[] else . end | (.events? // .) | if type == "array" then .[] else . end
	| select(.type == "mem_stall" and .memcg.container_id == $id)] | length' "$SL_TMP/stalls.json")
[ "${NSTALL:-0}" -gt 0 ] || fail "no mem_stall event with memcg $STORM_ID (threshold $STALL)"
ONE=$(jq -sc --arg id "$STORM_ID" '[.[] | if type == "array" then .[] else . end | (.events? // .) | if type == "array" then .[] else . end
	| select(.type == "mem_stall" and .memcg.container_id == $id)][0]' "$SL_TMP/stalls.json")
note "a stall: $ONE"
assert_eq "stall kind" memcg_reclaim "$(jq -r .kind <<<"$ONE")"
assert_eq "stall subject" cgroup "$(jq -r .subject_kind <<<"$ONE")"
assert_eq "stall subject's container (the memcg's)" "$STORM_ID" "$(jq -r .container_id <<<"$ONE")"
assert_eq "stall cgroup_id = the memcg" "$(jq -r .memcg.cgroup_id <<<"$ONE")" "$(jq -r .cgroup_id <<<"$ONE")"
assert_eq "stall task = the hog" "$HOG" "$(jq -r .task.pid <<<"$ONE")"
assert_eq "stall task's container" "$STORM_ID" "$(jq -r .task.container_id <<<"$ONE")"
[ "$(jq -r '.duration_ns >= 20000' <<<"$ONE")" = true ] || fail "stall shorter than the threshold: $ONE"
assert_eq "stall memcg source" at_max "$(jq -r .memcg.source <<<"$ONE")"

# the same as a user sees it: the table, the container's short id in its row
sl_cli events --type mem_stall --limit 50 >"$SL_TMP/stalls.txt" 2>"$SL_TMP/stalls.err" ||
	fail "sandlens events --type mem_stall (table) failed: $(cat "$SL_TMP/stalls.err")"
cp "$SL_TMP/stalls.txt" "$SL_LOGDIR/stalls.txt"
grep -qE "^[^ ]+ +mem_stall +${STORM_ID:0:12} " "$SL_TMP/stalls.txt" ||
	fail "no mem_stall row of ${STORM_ID:0:12} in the CLI table: $(head -3 "$SL_TMP/stalls.txt")"
note "CLI row: $(grep -m1 "mem_stall" "$SL_TMP/stalls.txt")"
# DETAILS from the kind's template (served by the schema route): the kind, the memcg and the task
grep -qE "mem_stall +${STORM_ID:0:12} .* memcg_reclaim .*\(at_max\) of ${STORM_ID}.* by ${HOG}\(" "$SL_TMP/stalls.txt" ||
	fail "no CLI row with DETAILS 'memcg_reclaim ... (at_max) of $STORM_ID by $HOG(...)': $(grep -m1 mem_stall "$SL_TMP/stalls.txt")"
grep -v "^TIME" "$SL_TMP/stalls.txt" | grep -vq "mem_stall" && fail "a row of another type in --type mem_stall"

# the schema route lists the kind with its fields
curl -sf "$SL_API/api/v1/schema/events" >"$SL_TMP/schema.json" || fail "GET /api/v1/schema/events"
jq -e '[.. | objects | select(.name? == "mem_stall")] | length > 0' "$SL_TMP/schema.json" >/dev/null ||
	fail "mem_stall not in GET /api/v1/schema/events"

# /metrics is valid exposition text
if command -v promtool >/dev/null; then
	promtool check metrics <"$SL_TMP/metrics.txt" >"$SL_TMP/promtool.out" 2>&1
	rc=$?
	# lint warnings (exit 3 on some versions) are not errors; "error" lines are
	grep -i "error" "$SL_TMP/promtool.out" && fail "promtool check metrics: $(head -5 "$SL_TMP/promtool.out")"
	echo "ok - promtool check metrics (rc $rc)"
else
	note "promtool not installed: /metrics syntax not checked by promtool"
fi

# expiry of the storm container's series once it is gone
series_points() { # NAME ID: points of container ID in series NAME
	curl -sf "$SL_API/api/v1/series?module=mem&name=$1" | jq --arg id "$2" '[.points[] | select(.container_id == $id)] | length'
}
assert_eq "mem_stall_seconds points of the live storm container" 1 "$(series_points mem_stall_seconds "$STORM_ID")"
SERIES_BEFORE=$(sl_metric sandlens_mem_series)
_ct_delete_id "$STORM_ID" "$STORM_CG"
[ -d "/sys/fs/cgroup/memory$STORM_CG" ] && fail "storm cgroup still there after delete"
T0=$(date +%s.%N) PT= MT=
elapsed() { awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
for _ in $(seq $(((TTL + 6) * 4))); do
	sleep 0.25
	if [ -z "$PT" ] && [ "$(series_points mem_stall_seconds "$STORM_ID")" = 0 ] &&
		[ "$(series_points mem_memcg_reclaim_p99_seconds "$STORM_ID")" = 0 ]; then
		PT=$(elapsed)
	fi
	curl -sf "$SL_API/metrics" >"$SL_TMP/metrics2.txt" || fail "GET /metrics"
	if [ -z "$MT" ] && ! grep -q "^sandlens_mem_[^{]*{[^}]*container_id=\"$STORM_ID\"" "$SL_TMP/metrics2.txt"; then
		MT=$(elapsed)
	fi
	[ -n "$PT" ] && [ -n "$MT" ] && break
done
cp "$SL_TMP/metrics2.txt" "$SL_LOGDIR/metrics-after-delete.txt"
note "after delete: series points gone after ${PT:-never} s, /metrics lines after ${MT:-never} s (TTL $TTL ticks)"
[ -n "$PT" ] || fail "the deleted container still has a detector series point $(((TTL + 6))) s later"
awk -v x="$PT" 'BEGIN { exit !(x <= 3) }' || fail "detector series point of the deleted container lasted $PT s (> 3 s)"
[ -n "$MT" ] || fail "the deleted container's mem series still in /metrics $((TTL + 6)) s later: $(grep -m2 "container_id=\"$STORM_ID\"" "$SL_TMP/metrics2.txt")"
awk -v x="$MT" -v t="$TTL" 'BEGIN { exit !(x <= t + 3) }' || fail "mem series of the deleted container left /metrics after $MT s (> TTL $TTL + 3 s)"
EXPIRED=$(sl_metric sandlens_mem_runs_expired_total 'kind="memcg_reclaim"')
[ "${EXPIRED:-0}" -ge "$API_RUNS" ] || fail "sandlens_mem_runs_expired_total{memcg_reclaim} $EXPIRED < the expired series' $API_RUNS runs"
SERIES_AFTER=$(sl_metric sandlens_mem_series)
[ "$SERIES_AFTER" -lt "$SERIES_BEFORE" ] || fail "sandlens_mem_series $SERIES_BEFORE -> $SERIES_AFTER after the expiry"
KRUNS=$(sl_metric sandlens_mem_runs_total 'kind="memcg_reclaim"')
ALL=$(awk '/^sandlens_mem_memcg_reclaim_seconds_count/ {s += $NF} END {print s + 0}' "$SL_TMP/metrics2.txt")
NC=$(sl_metric sandlens_mem_runs_not_counted_total 'kind="memcg_reclaim"')
note "after expiry: kernel runs $KRUNS, histograms $ALL, expired $EXPIRED, not counted $NC; series $SERIES_BEFORE -> $SERIES_AFTER"
[ "$KRUNS" -ge $((ALL + EXPIRED + NC)) ] || fail "histograms ($ALL) + expired ($EXPIRED) + not counted ($NC) exceed the kernel's runs ($KRUNS)"
[ $((ALL + EXPIRED + NC)) -ge "$API_RUNS" ] || fail "the expired runs left the accounting"
echo "ok - expired after delete: series point ${PT} s, /metrics ${MT} s, expired runs $EXPIRED"

runc --root "$CT_RUNC_ROOT" kill "$IDLE_ID" KILL >/dev/null 2>&1
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
