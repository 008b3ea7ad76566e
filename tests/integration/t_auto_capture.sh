#!/bin/bash
# AutoTracing (issue 15 items 1, 2, 5; docs/AUTO.md): real runc containers,
# the real task executor and BPF profiler.
#  1. a container does light shell work (a few % CPU, the healthy baseline
#     continuous profiling stores in 2 s windows), then spins in
#     prof_spin_loop() for ~15 s: the cpu detector fires exactly once for it
#     (the cooldown holds the later readings), the capture's on-CPU profile
#     names prof_spin_loop as its hottest function, the record says why
#     (detector, series, value, threshold, window), its baseline diff against
#     the container's healthy continuous windows has prof_spin_loop as the
#     top regression, and its flight recording (frozen at the capture) holds
#     the container's exec of sl-profprog;
#     `sandlens captures` lists it and shows it; the profile is served in
#     every format; a reader sees no argv.
#  2. a container whose working set grows ~60 MiB/s (tmpfs writes) fires the
#     memgrowth detector.
#  3. pressure inputs: the status says, per container, whether a PSI poll
#     trigger is armed on its v2 pressure file or the detector samples, and
#     why (t_auto_psi tests the trigger path itself).
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/lib_sched.sh"
source "$(dirname "$0")/lib_prof.sh"
sl_init
sl_require_agent_env
ct_require
[ -x "$SL_BUILD/helpers/sl-profprog" ] || fail "sl-profprog not built"

# the containers first: the agent watches only them (auto.containers; the
# other tests on this host have containers too, and the task slots are shared)
# 1. light shell work ~7 s (a short busy loop every 0.1 s: well under the 0.1
# threshold), then spin 15 s on one CPU (no quota: normalized by its cpuset /
# host CPUs)
prof_ct spin "" -- /bin/sh -c 'sleep 1; e=$(($(date +%s) + 7)); while [ $(date +%s) -lt $e ]; do i=0; while [ $i -lt 1500 ]; do i=$((i+1)); done; sleep 0.1; done; exec /bin/sl-profprog spin 15'
A=$CT_ID
A_DIR=$CT_DIR
A_CG=$CT_CGPATH
# 2. working set growing: 300 MiB of tmpfs pages in ~5 s after 4 s idle
prof_ct mem "" -- /bin/sh -c 'sleep 4; i=0; while [ $i -lt 30 ]; do dd if=/dev/zero of=/dev/shm/f$i bs=1M count=10 2>/dev/null; i=$((i+1)); sleep 0.1; done; sleep 20'
M=$CT_ID
M_DIR=$CT_DIR
M_CG=$CT_CGPATH
note "spin=$A mem=$M"

sl_agent_start "stats:
  interval: 1s
profiling:
  continuous:
    hz: 99
    window: 2s
auto:
  enabled: true
  containers: \"${A:0:16},${M:0:16}\"
  cooldown: 10m
  profile_duration: 4s
  cpu:
    method: mean
    threshold: 0.1
    window: 2
  memgrowth:
    threshold: 20971520
    window: 2
  throttle:
    enabled: false
  runqueue:
    enabled: false
  cpupsi:
    enabled: false
  mempsi:
    enabled: false
  dstate:
    enabled: false"

CT_DIR=$A_DIR CT_ID=$A ct_start_bg
A_RUN=$CT_RUN_PID
CT_DIR=$M_DIR CT_ID=$M ct_start_bg
M_RUN=$CT_RUN_PID
CT_ID=$A CT_CGPATH=$A_CG ct_wait_running
CT_ID=$M CT_CGPATH=$M_CG ct_wait_running

caps() { curl -sf -m 5 "$SL_API/api/v1/captures?container=$1${2:+&detector=$2}"; }
wait_capture() { # CONTAINER DETECTOR SECONDS QUERY
	local n=0 out
	while [ $n -lt $(($3 * 4)) ]; do
		out=$(caps "$1" "$2")
		if printf '%s' "$out" | jq -e "$4" >/dev/null 2>&1; then
			printf '%s\n' "$out"
			return 0
		fi
		sleep 0.25
		n=$((n + 1))
	done
	curl -sf -m 5 "$SL_API/api/v1/auto" >"$SL_LOGDIR/auto-status.json"
	printf '%s\n' "$out" >"$SL_LOGDIR/last-captures.json"
	fail "$2 capture of $1: '$4' did not hold within $3 s (last answer in last-captures.json)"
}

OUT=$(wait_capture "$A" cpu 40 '.captures | length >= 1 and (.[0].status == "done")')
C=$(printf '%s' "$OUT" | jq -c '.captures[0]')
printf '%s\n' "$C" >"$SL_LOGDIR/cpu-capture.json"
ID=$(printf '%s' "$C" | jq -r .id)
note "capture $ID: $(printf '%s' "$C" | jq -c '{reason, on_cpu: .profiles.on_cpu | {status, total_count, top_functions}, baseline}')"
assert_eq "detector" "cpu" "$(printf '%s' "$C" | jq -r .reason.detector)"
assert_eq "series" "cpu_usage_ratio" "$(printf '%s' "$C" | jq -r .reason.series)"
assert_eq "method" "mean" "$(printf '%s' "$C" | jq -r .reason.method)"
assert_eq "window" "2" "$(printf '%s' "$C" | jq -r .reason.window)"
printf '%s' "$C" | jq -e '.reason.value > .reason.threshold and .reason.threshold == 0.1' >/dev/null ||
	fail "reason value/threshold: $(printf '%s' "$C" | jq -c .reason)"
printf '%s' "$C" | jq -e '.reason.normalized_by | IN("quota", "cpuset", "host_cpus")' >/dev/null ||
	fail "no normalization basis: $(printf '%s' "$C" | jq -c .reason)"
assert_eq "profile status" "done" "$(printf '%s' "$C" | jq -r .profiles.on_cpu.status)"
assert_eq "hottest function" "prof_spin_loop" "$(printf '%s' "$C" | jq -r '.profiles.on_cpu.top_functions[0].function')"
# the baseline diff: the container's healthy continuous windows (the shell
# loop) against the capture: prof_spin_loop is the top regression
assert_eq "baseline diff" "ok" "$(printf '%s' "$C" | jq -r .baseline.status)"
assert_eq "top regression" "prof_spin_loop" "$(printf '%s' "$C" | jq -r '.baseline.top_regressions[0].function')"
printf '%s' "$C" | jq -e '.baseline.baseline_total_count > 0' >/dev/null || fail "baseline: $(printf '%s' "$C" | jq -c .baseline)"
# the flight recording frozen at the capture holds the exec of the spinner
FR=$(printf '%s' "$C" | jq -r '.flight_recording.id // empty')
[ -n "$FR" ] || fail "no flight recording: $(printf '%s' "$C" | jq -c .flight_recording)"
REC=""
for _ in $(seq 1 40); do
	REC=$(curl -sf -m 5 "$SL_API/api/v1/flight/$FR") && break
	sleep 0.25
done
printf '%s' "$REC" >"$SL_LOGDIR/flight.json"
printf '%s' "$REC" | jq -e '[.events[] | select(.type == "exec" and (.filename // "" | test("sl-profprog")))] | length >= 1' >/dev/null ||
	fail "flight recording $FR lacks the exec of sl-profprog (flight.json)"
printf '%s' "$C" | jq -e '.snapshot.processes | map(.comm) | index("sl-profprog") != null' >/dev/null ||
	fail "process snapshot lacks sl-profprog: $(printf '%s' "$C" | jq -c .snapshot.processes)"
# reader (no token): argv withheld
RD=$(curl -q -sf -m 5 "$SL_API/api/v1/captures/$ID")
printf '%s' "$RD" | jq -e '[.snapshot.processes[] | has("cmdline")] | any | not' >/dev/null || fail "a reader sees argv"
printf '%s' "$RD" | jq -e '.snapshot.processes[0].cmdline_withheld == true' >/dev/null || fail "no cmdline_withheld for a reader"
# ... and the functions of the profiles (parts of stacks) and open files' paths
printf '%s' "$RD" | jq -e '[.profiles[] | has("top_functions")] | any | not' >/dev/null || fail "a reader sees top_functions"
printf '%s' "$RD" | jq -e '.profiles.on_cpu.top_functions_withheld == true' >/dev/null || fail "no top_functions_withheld for a reader"
printf '%s' "$RD" | jq -e '[.snapshot.open_files[]? | has("path")] | any | not' >/dev/null || fail "a reader sees open files' paths"
printf '%s' "$RD" | jq -e '(.baseline // {}) | has("top_regressions") | not' >/dev/null || fail "a reader sees top_regressions"
# admin sees argv
curl -sf -m 5 "$SL_API/api/v1/captures/$ID" | jq -e '.snapshot.processes | map(.cmdline | length > 0) | any' >/dev/null ||
	fail "admin does not see argv"
# profile in every format; readers refused
for f in pprof folded svg json html; do
	curl -sf -m 10 -o "$SL_TMP/p.$f" "$SL_API/api/v1/captures/$ID/profile?format=$f" || fail "profile format $f"
done
gzip -t "$SL_TMP/p.pprof" || fail "pprof is not gzip"
grep -q prof_spin_loop "$SL_TMP/p.folded" || fail "folded lacks prof_spin_loop"
head -c 300 "$SL_TMP/p.svg" | grep -q '<svg' || fail "svg"
jq -e '.total_count > 0' "$SL_TMP/p.json" >/dev/null || fail "json profile"
grep -q prof_spin_loop "$SL_TMP/p.html" || fail "html flame graph lacks prof_spin_loop"
curl -sf -m 10 -D "$SL_TMP/h.hdr" -o /dev/null "$SL_API/api/v1/captures/$ID/profile?format=html" || fail "html headers"
grep -qi "^content-security-policy: .*script-src 'sha256-" "$SL_TMP/h.hdr" || fail "html profile without its CSP header: $(cat "$SL_TMP/h.hdr")"
assert_eq "reader gets 403 for the profile" 403 "$(curl -q -s -o /dev/null -w '%{http_code}' -m 5 "$SL_API/api/v1/captures/$ID/profile")"
assert_eq "bad format is 400" 400 "$(curl -s -o /dev/null -w '%{http_code}' -m 5 "$SL_API/api/v1/captures/$ID/profile?format=png")"
assert_eq "unknown capture is 404" 404 "$(curl -s -o /dev/null -w '%{http_code}' -m 5 "$SL_API/api/v1/captures/c-0000")"

# CLI: list and show
sl_cli captures >"$SL_LOGDIR/cli-list.txt" 2>&1 || { cat "$SL_LOGDIR/cli-list.txt"; fail "sandlens captures"; }
cat "$SL_LOGDIR/cli-list.txt"
grep -q "$ID" "$SL_LOGDIR/cli-list.txt" || fail "sandlens captures does not list $ID"
sl_cli captures show "$ID" >"$SL_LOGDIR/cli-show.txt" 2>&1 || { cat "$SL_LOGDIR/cli-show.txt"; fail "sandlens captures show"; }
grep -q prof_spin_loop "$SL_LOGDIR/cli-show.txt" || { cat "$SL_LOGDIR/cli-show.txt"; fail "show lacks the top function"; }

# 2. memory growth
MO=$(wait_capture "$M" memgrowth 30 '.captures | length >= 1')
note "memgrowth: $(printf '%s' "$MO" | jq -c '.captures[0].reason')"
printf '%s' "$MO" | jq -e '.captures[0].reason.value > 20971520' >/dev/null || fail "memgrowth value"

# the spinner's capture stays the only cpu one (cooldown) until it ends
CT_DIR=$A_DIR CT_ID=$A CT_CGPATH=$A_CG CT_RUN_PID=$A_RUN ct_wait_bg 40 || fail "spinner exited with $?"
assert_eq "cpu captures of the spinner (cooldown)" 1 "$(caps "$A" cpu | jq '.captures | length')"
ST=$(curl -sf -m 5 "$SL_API/api/v1/auto")
printf '%s\n' "$ST" >"$SL_LOGDIR/auto-status.json"
note "cpu detector: $(printf '%s' "$ST" | jq -c '.detectors[] | select(.name == "cpu") | {fired, captures, suppressed}')"
printf '%s' "$ST" | jq -e '.detectors[] | select(.name == "cpu") | .fired >= 1 and .captures == 1' >/dev/null ||
	fail "cpu detector counters: $(printf '%s' "$ST" | jq -c '.detectors[] | select(.name == "cpu")')"
# 3. the runqueue series is found through the contract; io latency is said absent or found
printf '%s' "$ST" | jq -e '.detectors[] | select(.name == "iolat") | .source == "series" or (.reason | test("declares"))' >/dev/null ||
	fail "iolat status: $(printf '%s' "$ST" | jq -c '.detectors[] | select(.name == "iolat")')"
curl -sf -m 5 "$SL_API/metrics" | grep -q '^sandlens_auto_captures_total{detector="cpu"} 1' || fail "metric sandlens_auto_captures_total"
CT_DIR=$M_DIR CT_ID=$M CT_CGPATH=$M_CG CT_RUN_PID=$M_RUN ct_wait_bg 40 || fail "memory container exited with $?"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
