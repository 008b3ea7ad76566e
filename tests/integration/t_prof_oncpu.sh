#!/bin/bash
# PROF-1/PROF-4, CLI: a kubepods runc container busy in prof_spin_loop() and a
# second busy container next to it. `sandlens profile --container A` must
# give a profile whose hottest user function is prof_spin_loop, attributed
# to A only (B's samples filtered out in BPF); the folded stacks sum to the
# sample count; the pprof is read by `go tool pprof -top` (golang-go); the
# SVG is an SVG; the JSON parses. Sample count plausible for 99 Hz.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/lib_sched.sh"
source "$(dirname "$0")/lib_prof.sh"
sl_init
sl_require_agent_env
ct_require
[ -x "$SL_BUILD/helpers/sl-profprog" ] || fail "sl-profprog not built"

sl_agent_start
SPIN=40
prof_ct a "" -- /bin/sl-profprog spin $SPIN
A=$CT_ID
ct_start_bg
A_RUN=$CT_RUN_PID
ct_wait_running
prof_ct b "" -- /bin/sl-profprog spin $SPIN
B=$CT_ID
ct_start_bg
B_RUN=$CT_RUN_PID
ct_wait_running
note "A=$A B=$B"

O=$SL_TMP/out
mkdir -p "$O"
A_CG=$(jq -r .linux.cgroupsPath "$SL_TMP/ct-a/config.json")
C0=$(cg_cpu_ns "$A_CG")
sl_cli profile --container "${A:0:12}" --duration 5s -o "$O/a.svg" >"$SL_LOGDIR/cli-svg.txt" 2>&1 ||
	{ cat "$SL_LOGDIR/cli-svg.txt"; fail "sandlens profile -o a.svg failed"; }
C1=$(cg_cpu_ns "$A_CG")
cat "$SL_LOGDIR/cli-svg.txt"
head -c 200 "$O/a.svg" | grep -q '<svg' || fail "a.svg is not an SVG"
grep -q 'prof_spin_loop' "$O/a.svg" || fail "a.svg does not show prof_spin_loop"
ID=$(sl_cli tasks --json | head -1 | jq -r .id)
R=$(task_get "$ID")
printf '%s' "$R" | jq -c '{status, event, resolved, progress, result: .result | {total_count, stacks, top_user_leaves, by_container, dropped}}'
assert_eq "status" "done" "$(printf '%s' "$R" | jq -r .status)"
assert_eq "resolved container" "$A" "$(printf '%s' "$R" | jq -r .resolved.container_id)"
assert_eq "hottest user function" "prof_spin_loop" "$(printf '%s' "$R" | jq -r '.result.top_user_leaves[0].function')"
TOTAL=$(printf '%s' "$R" | jq -r .result.total_count)
INA=$(printf '%s' "$R" | jq -r --arg a "$A" '.result.by_container[$a] // 0')
note "samples: total $TOTAL, in A $INA"
assert_eq "every sample attributed to A" "$TOTAL" "$INA"
[ "$(printf '%s' "$R" | jq --arg b "$B" '.result.by_container[$b] // 0')" = 0 ] || fail "samples of B leaked into A's profile"
# samples vs the CPU time the kernel charged to A's cgroup over the CLI
# call (which also spans the task's start-up, when nothing is sampled):
# 99 Hz x CPU seconds, within -30%/+15%
EXP=$(( (C1 - C0) * 99 / 1000000000 ))
note "A used $(( (C1 - C0) / 1000000 )) ms of CPU: $EXP samples expected at 99 Hz, $TOTAL taken"
[ "$EXP" -gt 20 ] || fail "container A barely ran ($EXP samples worth of CPU)"
[ $((TOTAL * 100)) -ge $((EXP * 70)) ] && [ $((TOTAL * 100)) -le $((EXP * 115)) ] ||
	fail "sample count $TOTAL does not match A's CPU time ($EXP samples at 99 Hz)"
SPIN_N=$(printf '%s' "$R" | jq -r '.result.top_user_leaves[0].count')
[ $((SPIN_N * 100)) -ge $((TOTAL * 80)) ] || fail "prof_spin_loop holds only $SPIN_N of $TOTAL samples"

# the same task's other formats
task_result "$ID" folded "$O/a.folded"
SUM=$(folded_sum "$O/a.folded")
assert_eq "folded stacks sum to the sample count" "$TOTAL" "$SUM"
TOPLINE=$(sort -t' ' -k2 -n "$O/a.folded" | tail -1)
note "hottest folded stack: $TOPLINE"
case "$TOPLINE" in sl-profprog\;*prof_spin_loop*) ;; *) fail "hottest folded stack is not in prof_spin_loop: $TOPLINE" ;; esac
task_result "$ID" json "$O/a.json"
jq -e '.total_count > 0' "$O/a.json" >/dev/null || fail "JSON result: $(head -c 300 "$O/a.json")"
task_result "$ID" pprof "$O/a.pb.gz"
gzip -t "$O/a.pb.gz" || fail "pprof result is not gzip"

# CLI with the pprof extension, then go tool pprof
sl_cli profile --container "${A:0:12}" --duration 3s -o "$O/a.pb.gz" >"$SL_LOGDIR/cli-pprof.txt" 2>&1 ||
	{ cat "$SL_LOGDIR/cli-pprof.txt"; fail "sandlens profile -o a.pb.gz failed"; }
if command -v go >/dev/null 2>&1; then
	HOME=$SL_TMP GOCACHE=$SL_TMP/gocache GOFLAGS=-mod=mod timeout 120 go tool pprof -top -nodecount=5 "$O/a.pb.gz" \
		>"$SL_LOGDIR/pprof-top.txt" 2>&1 || { cat "$SL_LOGDIR/pprof-top.txt"; fail "go tool pprof rejected the profile"; }
	cat "$SL_LOGDIR/pprof-top.txt"
	grep -q 'prof_spin_loop' "$SL_LOGDIR/pprof-top.txt" || fail "go tool pprof -top does not list prof_spin_loop"
else
	note "SKIP part: go not installed (golang-go): pprof only checked as gzip"
fi

# a pid target: the same function, the same container
PID=$(pgrep -f 'sl-profprog spin' | while read -r p; do grep -q "$A" /proc/$p/cgroup 2>/dev/null && echo $p; done | head -1)
[ -n "$PID" ] || fail "no pid of A's spinner"
ID2=$(task_create "{\"type\":\"profile_on_cpu\",\"target\":{\"pid\":$PID},\"duration_s\":2,\"hz\":199}")
R2=$(task_wait "$ID2" 30)
printf '%s' "$R2" | jq -c '{status, hz, result: .result | {total_count, top_user_leaves, by_container}}'
assert_eq "pid task: hottest" "prof_spin_loop" "$(printf '%s' "$R2" | jq -r '.result.top_user_leaves[0].function')"
assert_eq "pid task: container" "$A" "$(printf '%s' "$R2" | jq -r '.result.by_container | keys[0]')"

CT_RUN_PID=$A_RUN ct_wait_bg $((SPIN + 30)) || fail "container A exited with $?"
CT_RUN_PID=$B_RUN ct_wait_bg $((SPIN + 30)) || fail "container B exited with $?"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
