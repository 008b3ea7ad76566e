#!/bin/bash
# PROF-2 memory and lock profiles (docs/TASKS.md "Memory profiles", "Lock
# profiles"), against real BPF objects and real workloads (process targets;
# tests/helpers/sl-kindprog.c):
#  - memory: kind_alloc_big() maps and touches 3x what kind_alloc_small()
#    does. profile_mem_virtual: the bytes of each site exactly as the
#    program mapped them, every mapping netted out by its munmap;
#    profile_page_faults (sampled, default period): big/small = 3 within
#    5 %, estimated faults within 5 % of the process's own minor-fault
#    count (getrusage) over the run; profile_resident: big/small = 3
#    within 10 % (percpu_counter batches). The three run at once.
#  - futex: a futex mutex whose every FUTEX_WAIT the program times itself:
#    the number of waits on kind_futex_lock's stack equals the program's,
#    their delay is 85-101 % of what its own clock says around each call
#    (which also spans syscall entry/exit); two threads on one pthread
#    mutex: the contended path (kind_lock_hold -> pthread_mutex_lock) is
#    the top delay stack.
#  - kernel locks (when lock:contention_* exists, else SKIP of that part):
#    four threads mmap/munmap: mmap_lock (rwsem) waits on kind_mmap_churn.
#  - every format renders; pprof sample types by `go tool pprof` when go is
#    installed; bad fault_period -> 400.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/lib_prof.sh"
sl_init
sl_require_agent_env
P=$SL_BUILD/helpers/sl-kindprog
[ -x "$P" ] || fail "sl-kindprog not built"

sl_agent_start
O=$SL_LOGDIR/out
mkdir -p "$O"

caps=$(curl -sf -m 10 "$SL_API/api/v1/capabilities") || fail "capabilities"
cap() { printf '%s' "$caps" | jq -r --arg t "$1" '.task_types[] | select(.type == $t) | .supported'; }
why() { printf '%s' "$caps" | jq -r --arg t "$1" '.task_types[] | select(.type == $t) | .reason // ""'; }
for t in profile_mem_virtual profile_page_faults profile_resident profile_futex; do
	[ "$(cap $t)" = true ] || fail "$t not supported here: $(why $t)"
done

# start PROG ARGS...: run it in the background until it says ready; sets PID, OUT
start() {
	OUT=$SL_TMP/prog.$1.out
	"$P" "$@" >"$OUT" 2>&1 &
	PID=$!
	local n=0
	until grep -q ready "$OUT"; do
		[ $n -lt 100 ] || fail "sl-kindprog $* not ready: $(cat "$OUT")"
		sleep 0.1
		n=$((n + 1))
	done
}
# finish: wait for the program; M = its JSON line
finish() {
	wait "$PID" || fail "sl-kindprog exited with $?: $(cat "$OUT")"
	M=$(tail -1 "$OUT")
}

# ---- bad requests ----
r=$(task_post '{"type":"profile_page_faults","target":{"pid":1},"fault_period":0}')
assert_eq "fault_period 0" 400 "${r%% *}"
r=$(task_post '{"type":"profile_futex","target":{"pid":1},"fault_period":4}')
assert_eq "fault_period on futex" 400 "${r%% *}"

# ---- memory: three profiles of one run ----
UNIT_KIB=1024
ROUNDS=16
start mem $UNIT_KIB $ROUNDS
V=$(task_create "{\"type\":\"profile_mem_virtual\",\"target\":{\"pid\":$PID},\"duration_s\":4}")
F=$(task_create "{\"type\":\"profile_page_faults\",\"target\":{\"pid\":$PID},\"duration_s\":4}")
S=$(task_create "{\"type\":\"profile_resident\",\"target\":{\"pid\":$PID},\"duration_s\":4}")
task_wait_running "$V"
task_wait_running "$F"
task_wait_running "$S"
kill -USR1 "$PID"
finish
note "program: $M"
BIG=$(printf '%s' "$M" | jq .big_bytes)
SMALL=$(printf '%s' "$M" | jq .small_bytes)
MINFLT=$(printf '%s' "$M" | jq .minflt)
for id in $V $F $S; do
	R=$(task_wait "$id" 40)
	note "$(printf '%s' "$R" | jq -c '{type, status, reason, event, fault_period, progress, result: (.result | del(.by_container))}')"
	assert_eq "status of $(printf '%s' "$R" | jq -r .type)" done "$(printf '%s' "$R" | jq -r .status)"
	for f in pprof folded svg json; do task_result "$id" $f "$O/$id.$f"; done
	head -c 200 "$O/$id.svg" | grep -q '<svg' || fail "$id svg"
	jq -e .tree "$O/$id.json" >/dev/null || fail "$id json"
done

# virtual: exact bytes per site; munmap netted every mapping of the run
vb=$(folded_sum "$O/$V.folded" kind_alloc_big)
vs=$(folded_sum "$O/$V.folded" kind_alloc_small)
note "mem_virtual: big $vb bytes (program $BIG), small $vs (program $SMALL)"
assert_eq "mmap bytes of kind_alloc_big" "$BIG" "$vb"
assert_eq "mmap bytes of kind_alloc_small" "$SMALL" "$vs"
grep -q '^sl-kindprog;\[mmap\];' "$O/$V.folded" || fail "no [mmap] state frame in the folded output"
R=$(task_get "$V")
assert_eq "live mappings after munmap" 0 "$(printf '%s' "$R" | jq .result.inuse_objects)"
assert_eq "live bytes after munmap" 0 "$(printf '%s' "$R" | jq .result.inuse_bytes)"
assert_eq "munmaps not matched" 0 "$(printf '%s' "$R" | jq .result.dropped.munmap_unmatched)"
assert_eq "json unit" bytes "$(jq -r .unit "$O/$V.json")"
assert_eq "json kind" mem_virtual "$(jq -r .kind "$O/$V.json")"

# page faults: ratio and total against the process's own counter
fb=$(folded_sum "$O/$F.folded" kind_alloc_big)
fs=$(folded_sum "$O/$F.folded" kind_alloc_small)
PF=$(task_get "$F" | jq .result.page_faults)
PER=$(task_get "$F" | jq .result.fault_period)
note "page_faults (period $PER): big $fb bytes, small $fs bytes, $PF faults estimated, minflt $MINFLT"
[ "$fs" -gt 0 ] || fail "no page faults of kind_alloc_small"
awk -v b="$fb" -v s="$fs" 'BEGIN { r = b / s; exit !(r >= 2.85 && r <= 3.15) }' ||
	fail "page-fault bytes big/small = $fb/$fs, not 3 +-5%"
awk -v a="$PF" -v m="$MINFLT" 'BEGIN { exit !(a >= m * 0.95 && a <= m * 1.05) }' ||
	fail "estimated faults $PF not within 5% of the process's minflt $MINFLT"
PAGE=$(printf '%s' "$M" | jq .page_size)
[ $((fb + fs)) -le $(((BIG + SMALL) * 105 / 100)) ] && [ $((fb + fs)) -ge $(((BIG + SMALL) * 95 / 100)) ] ||
	fail "page-fault bytes $((fb + fs)) not within 5% of the $((BIG + SMALL)) bytes touched (page $PAGE)"

# resident growth
sb=$(folded_sum "$O/$S.folded" kind_alloc_big)
ss=$(folded_sum "$O/$S.folded" kind_alloc_small)
note "resident: big $sb bytes, small $ss bytes"
[ "$ss" -gt 0 ] || fail "no resident growth on kind_alloc_small"
awk -v b="$sb" -v s="$ss" 'BEGIN { r = b / s; exit !(r >= 2.7 && r <= 3.3) }' ||
	fail "resident growth big/small = $sb/$ss, not 3 +-10%"
grep -q '\[anon_pages\]' "$O/$S.folded" || fail "no [anon_pages] frame"

if command -v go >/dev/null 2>&1; then
	go tool pprof -raw "$O/$V.pprof" >"$O/v.raw" 2>&1 || { head "$O/v.raw"; fail "go tool pprof -raw (virtual)"; }
	grep -q 'alloc_objects/count alloc_space/bytes\[dflt\] inuse_objects/count inuse_space/bytes' "$O/v.raw" ||
		fail "virtual pprof sample types: $(grep -m1 -i 'count' "$O/v.raw")"
	go tool pprof -raw "$O/$F.pprof" | grep -q 'samples/count page_faults/count page_fault_bytes/bytes\[dflt\]' ||
		fail "page-fault pprof sample types"
	go tool pprof -raw "$O/$S.pprof" | grep -q 'samples/count resident_growth/bytes\[dflt\] resident_release/bytes' ||
		fail "resident pprof sample types"
else
	note "go not installed: pprof checked by tests/unit/test_prof_kinds.c only"
fi

# ---- futex: exact waits and delay of a timed futex mutex ----
start futex 400
X=$(task_create "{\"type\":\"profile_futex\",\"target\":{\"pid\":$PID},\"duration_s\":4}")
task_wait_running "$X"
kill -USR1 "$PID"
finish
note "program: $M"
R=$(task_wait "$X" 30)
assert_eq "futex status" done "$(printf '%s' "$R" | jq -r .status)"
task_result "$X" folded "$O/x.folded"
task_result "$X" pprof "$O/x.pprof"
task_result "$X" json "$O/x.json"
WAITS=$(printf '%s' "$M" | jq .waits)
WNS=$(printf '%s' "$M" | jq .wait_ns)
[ "$WAITS" -gt 20 ] || fail "the futex mutex was barely contended ($WAITS waits)"
# folded default for lock kinds: microseconds; counts from pprof / JSON tree
if command -v go >/dev/null 2>&1; then
	go tool pprof -raw "$O/x.pprof" | grep -q 'contentions/count delay/nanoseconds\[dflt\]' ||
		fail "futex pprof sample types"
fi
# waits on kind_futex_lock's stack (the main thread's pthread_join waits too)
cnt=$(printf '%s' "$R" | jq '[.result.top_user_leaves[] | select(.function == "kind_futex_lock") | .count] | add // 0')
us=$(folded_sum "$O/x.folded" kind_futex_lock)
note "futex: profile $cnt waits, $us us on kind_futex_lock; program $WAITS waits, $((WNS / 1000)) us"
assert_eq "futex waits" "$WAITS" "$cnt"
# the program's clock spans the wait plus the system call's entry, exit
# and the exit hook itself (and any preemption before it reads the clock):
# a superset of the kernel's enter-to-exit time
awk -v a="$us" -v b="$((WNS / 1000))" 'BEGIN { exit !(a >= b * 0.85 && a <= b * 1.01) }' ||
	fail "futex delay $us us not within [85%, 101%] of the program's $((WNS / 1000)) us"

# ---- pthread mutex: the contended call path, through the CLI ----
start mutex 300
sl_cli profile --pid "$PID" --type futex --duration 3s -o "$O/m.folded" >"$O/cli.txt" 2>&1 &
CLI=$!
n=0
until [ "$(sl_cli tasks --json 2>/dev/null | jq -r 'select(.type == "profile_futex" and .status == "running") | .id' | head -1)" ]; do
	[ $n -lt 100 ] || fail "the CLI's futex task did not start: $(cat "$O/cli.txt")"
	sleep 0.1
	n=$((n + 1))
done
kill -USR1 "$PID"
finish
note "program: $M"
wait $CLI || fail "sandlens profile --type futex: $(cat "$O/cli.txt")"
cat "$O/cli.txt"
grep -q 'futex profile' "$O/cli.txt" || fail "CLI summary: $(cat "$O/cli.txt")"
# the workers' top stack (the main thread waits in pthread_join meanwhile)
top=$(grep start_thread "$O/m.folded" | sort -k2 -n -r -t' ' | awk '{ $NF = ""; print }' | head -1)
note "top futex stack of the workers: $top"
# glibc without frame pointers: its frames and the one that called it
# (kind_mutex_take) are skipped by the unwind; the leaf is glibc's wait
case "$top" in
*mutex_worker\;kind_lock_hold\;*lll_lock_wait*) ;;
*) fail "the top futex-wait stack is not mutex_worker -> kind_lock_hold -> __lll_lock_wait: $top" ;;
esac

# ---- kernel locks ----
if [ "$(cap profile_lock_kernel)" != true ]; then
	note "SKIP part: profile_lock_kernel unsupported: $(why profile_lock_kernel)"
else
	start kmmap 2
	K=$(task_create "{\"type\":\"profile_lock_kernel\",\"target\":{\"pid\":$PID},\"duration_s\":4}")
	task_wait_running "$K"
	kill -USR1 "$PID"
	finish
	R=$(task_wait "$K" 30)
	note "$(printf '%s' "$R" | jq -c '{status, reason, progress, result: (.result | del(.by_container))}')"
	assert_eq "lock_kernel status" done "$(printf '%s' "$R" | jq -r .status)"
	task_result "$K" folded "$O/k.folded"
	sort -k2 -n -r -t' ' "$O/k.folded" | head -3 | cut -c1-400
	grep -E '^sl-kindprog;\[rwsem:W\];.*kind_mmap_churn;.*(__vm_munmap|vm_mmap_pgoff);down_write' "$O/k.folded" | grep -q . ||
		fail "no mmap_lock (rwsem:W) wait of munmap/mmap on kind_mmap_churn's path"
fi

sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
