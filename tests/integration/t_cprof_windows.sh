#!/bin/bash
# PROF-5 continuous profiling (issue 12 items 1 and 5): the agent samples
# every container at a low rate, aggregates in the kernel and stores one
# pprof per container per window (windows shortened to 2 s here, 99 Hz).
# A kubepods runc container spins in prof_phase_a() until the test creates
# a file, then in prof_phase_b(). Checked: the windows list of the
# container; the merged profile of the windows before the switch shows A
# and not B, the one after shows B and not A (folded, pprof via
# `go tool pprof -top`, SVG, JSON); the diff names both with the right
# signs (JSON and a pprof diff), and `go tool pprof -diff_base` on the two
# ranges' pprof agrees; a reader (uid 65534, no token) gets 403; with
# profiling.continuous.enabled false nothing is attached (/healthz hook
# "disabled", no cprof_sample program loaded) and the routes answer 503.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/lib_sched.sh"
source "$(dirname "$0")/lib_prof.sh"
sl_init
sl_require_agent_env
ct_require
[ -x "$SL_BUILD/helpers/sl-profprog" ] || fail "sl-profprog not built"

CPROF="profiling:
  continuous:
    hz: 99
    window: 2s
attribution:
  runc_root: $CT_RUNC_ROOT"
sl_agent_start "$CPROF"
H=$(sl_get /healthz)
assert_eq "continuous profiling state" running "$(printf '%s' "$H" | jq -r .continuous_profiling.state)"
assert_eq "its hook" attached "$(printf '%s' "$H" | jq -r '.continuous_profiling.hooks[0].state')"
assert_eq "its exec hook (build-ids of short-lived processes)" "tp_btf/sched_process_exec attached" "$(printf '%s' "$H" | jq -r '.continuous_profiling.hooks[1] | "\(.name) \(.state)"')"

# a plain runc container (a cgroup path that names no runtime: found through
# the runc state index, as events are) spinning a few seconds
ct_create p plain -- /bin/sl-profprog spin 6
cp "$SL_BUILD/helpers/sl-profprog" "$CT_DIR/rootfs/bin/sl-profprog" || fail "copy sl-profprog"
P=$CT_ID P_DIR=$CT_DIR P_CG=$CT_CGPATH
ct_start_bg
P_RUN=$CT_RUN_PID
prof_ct a "" -- /bin/sl-profprog phases 60 /tmp/go-b
A=$CT_ID
mkdir -p "$CT_DIR/rootfs/tmp"
GO_B=$CT_DIR/rootfs/tmp/go-b
rm -f "$GO_B"
ct_start_bg
ct_wait_running
note "container $A"
O=$SL_TMP/out
mkdir -p "$O"

# windows of A (JSON list) with samples
windows() { curl -sf -m 10 "$SL_API/api/v1/profiles/windows?container=$A" || echo '{}'; }
wait_windows() { # JQ-FILTER-COUNT MIN: poll until the count of matching windows >= MIN
	local q=$1 min=$2 n=0 c
	while [ $n -lt 120 ]; do
		c=$(windows | jq "[.windows[]? | select(.samples > 0) | $q] | length")
		[ "${c:-0}" -ge "$min" ] && return 0
		sleep 0.25
		n=$((n + 1))
	done
	windows >"$SL_LOGDIR/windows.json"
	fail "fewer than $min windows matching '$q' within 30 s (list in windows.json)"
}
wait_windows 'select(true)' 3
# the plain container's windows are its own, runtime runc (not "host")
CT_DIR=$P_DIR CT_ID=$P CT_CGPATH=$P_CG CT_RUN_PID=$P_RUN ct_wait_bg 40 || fail "plain container exited with $?"
PW=$(curl -sf -m 10 "$SL_API/api/v1/profiles/windows?container=$P" || echo '{}')
printf '%s' "$PW" | jq -e '[.windows[]? | select(.samples > 0 and .runtime == "runc")] | length >= 1' >/dev/null ||
	fail "no runc windows of the plain container $P: $PW"
# times as RFC 3339 strings (ns since the epoch do not survive jq's doubles);
# same fixed format as the API's, so they compare as strings
T1=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
touch "$GO_B"
wait_windows "select(.start >= \"$T1\")" 3
W=$(windows)
printf '%s' "$W" | jq -c '.windows[] | {start: .start, "end": .end, samples: .samples, bytes: .bytes}' | head -20
assert_eq "every window is A's" "$A" "$(printf '%s' "$W" | jq -r '[.windows[].container_id] | unique | join(",")')"
printf '%s' "$W" | jq -e '(.windows | length) as $n | [.windows[] | select(.kind == "on_cpu" and .bytes > 0 and .end_ns > .start_ns)] | length == $n' >/dev/null ||
	fail "a window without kind, bytes or a time span: $W"
# the list from the CLI too
sl_cli profile --container "${A:0:12}" --windows >"$O/windows.txt" || fail "sandlens profile --windows failed"
[ "$(grep -c "$A" "$O/windows.txt")" -ge 6 ] || { cat "$O/windows.txt"; fail "CLI windows list lacks A's windows"; }
# base: windows that ended before the switch; new: windows that began after it
B0=$(printf '%s' "$W" | jq -r --arg t "$T1" '[.windows[] | select(.end <= $t) | .start] | min')
B1=$(printf '%s' "$W" | jq -r --arg t "$T1" '[.windows[] | select(.end <= $t) | .end] | max')
N0=$(printf '%s' "$W" | jq -r --arg t "$T1" '[.windows[] | select(.start >= $t) | .start] | min')
N1=$(printf '%s' "$W" | jq -r --arg t "$T1" '[.windows[] | select(.start >= $t) | .end] | max')
note "base [$B0, $B1), new [$N0, $N1), switch at $T1"

sl_cli profile --container "${A:0:12}" --since "$B0" --until "$B1" -o "$O/base.folded" >/dev/null ||
	fail "profile of the base range failed"
sl_cli profile --container "${A:0:12}" --since "$N0" --until "$N1" -o "$O/new.folded" >/dev/null ||
	fail "profile of the new range failed"
BA=$(folded_sum "$O/base.folded" prof_phase_a) BB=$(folded_sum "$O/base.folded" prof_phase_b)
NA=$(folded_sum "$O/new.folded" prof_phase_a) NB=$(folded_sum "$O/new.folded" prof_phase_b)
BT=$(folded_sum "$O/base.folded") NT=$(folded_sum "$O/new.folded")
note "base: $BT samples, A $BA, B $BB; new: $NT samples, A $NA, B $NB"
[ "$BT" -ge 20 ] && [ "$NT" -ge 20 ] || fail "too few samples in a range (base $BT, new $NT)"
[ $((BA * 100)) -ge $((BT * 80)) ] || fail "base range: prof_phase_a holds only $BA of $BT samples"
assert_eq "base range: samples in prof_phase_b" 0 "$BB"
[ $((NB * 100)) -ge $((NT * 80)) ] || fail "new range: prof_phase_b holds only $NB of $NT samples"
assert_eq "new range: samples in prof_phase_a" 0 "$NA"
# the merged sample count is the windows' sum
WS=$(printf '%s' "$W" | jq --arg a "$B0" --arg b "$B1" '[.windows[] | select(.start >= $a and .end <= $b) | .samples] | add')
assert_eq "base range sample count = its windows' sum" "$WS" "$BT"

# every format of the new range; default --since form (a duration ago)
sl_cli profile --container "${A:0:12}" --since 10m -o "$O/all.json" >/dev/null || fail "profile --since 10m -o .json"
jq -e '.total_count > 0 and (.top | length) > 0' "$O/all.json" >/dev/null || fail "JSON: $(head -c 300 "$O/all.json")"
sl_cli profile --container "${A:0:12}" --since "$N0" --until "$N1" -o "$O/new.svg" >/dev/null || fail "profile -o .svg"
head -c 200 "$O/new.svg" | grep -q '<svg' || fail "new.svg is not an SVG"
grep -q prof_phase_b "$O/new.svg" || fail "new.svg does not show prof_phase_b"
sl_cli profile --container "${A:0:12}" --since "$B0" --until "$B1" -o "$O/base.pb.gz" >/dev/null || fail "profile -o base.pb.gz"
sl_cli profile --container "${A:0:12}" --since "$N0" --until "$N1" -o "$O/new.pb.gz" >/dev/null || fail "profile -o new.pb.gz"

# the diff: JSON deltas (new - base)
D=$(curl -sfG -m 30 "$SL_API/api/v1/profiles/diff" --data-urlencode "container=$A" --data-urlencode "base_since=$B0" \
	--data-urlencode "base_until=$B1" --data-urlencode "since=$N0" --data-urlencode "until=$N1") ||
	fail "GET /api/v1/profiles/diff failed"
DA=$(printf '%s' "$D" | jq '[.functions[] | select(.function == "prof_phase_a") | .delta_self_pct][0]')
DB=$(printf '%s' "$D" | jq '[.functions[] | select(.function == "prof_phase_b") | .delta_self_pct][0]')
note "diff: prof_phase_a ${DA}%, prof_phase_b ${DB}%"
jq -en --argjson a "$DA" --argjson b "$DB" '$a < -50 and $b > 50' >/dev/null || fail "diff signs wrong: A $DA, B $DB"
sl_cli profile --container "${A:0:12}" --base-since "$B0" --base-until "$B1" --since "$N0" --until "$N1" >"$O/diff.txt" ||
	fail "CLI diff failed"
grep -q 'prof_phase_b' "$O/diff.txt" || { cat "$O/diff.txt"; fail "CLI diff table lacks prof_phase_b"; }
sl_cli profile --container "${A:0:12}" --base-since "$B0" --base-until "$B1" --since "$N0" --until "$N1" \
	-o "$O/diff.pb.gz" >/dev/null || fail "CLI diff -o diff.pb.gz failed"
# the differential flame graph (sl_profile_write_diff): folded "stack BASE NEW" lines
# with A shrinking and B growing, an HTML page with its CSP header, an SVG via the CLI
curl -sfG -m 30 "$SL_API/api/v1/profiles/diff" --data-urlencode "container=$A" --data-urlencode "base_since=$B0" \
	--data-urlencode "base_until=$B1" --data-urlencode "since=$N0" --data-urlencode "until=$N1" \
	--data-urlencode "format=folded" >"$O/diff.folded" || fail "diff format=folded failed"
awk '/prof_phase_b/ { b += $(NF-1); n += $NF } END { exit !(n > b) }' "$O/diff.folded" ||
	{ head -5 "$O/diff.folded"; fail "diff folded: prof_phase_b did not grow"; }
awk '/prof_phase_a/ { b += $(NF-1); n += $NF } END { exit !(b > n) }' "$O/diff.folded" ||
	{ head -5 "$O/diff.folded"; fail "diff folded: prof_phase_a did not shrink"; }
curl -sfG -m 30 -D "$O/diff.html.h" "$SL_API/api/v1/profiles/diff" --data-urlencode "container=$A" \
	--data-urlencode "base_since=$B0" --data-urlencode "base_until=$B1" --data-urlencode "since=$N0" \
	--data-urlencode "until=$N1" --data-urlencode "format=html" >"$O/diff.html" || fail "diff format=html failed"
grep -qi '^content-security-policy:' "$O/diff.html.h" || fail "diff html answer has no CSP header"
grep -qi '^content-type: text/html' "$O/diff.html.h" || fail "diff html answer is not text/html"
grep -q prof_phase_b "$O/diff.html" || fail "diff html lacks prof_phase_b"
sl_cli profile --container "${A:0:12}" --base-since "$B0" --base-until "$B1" --since "$N0" --until "$N1" \
	-o "$O/diff.svg" >/dev/null || fail "CLI diff -o diff.svg failed"
grep -q prof_phase_b "$O/diff.svg" || fail "diff.svg lacks prof_phase_b"
if command -v go >/dev/null 2>&1; then
	gp() { HOME=$SL_TMP GOCACHE=$SL_TMP/gocache GOFLAGS=-mod=mod timeout 120 go tool pprof "$@"; }
	gp -top -nodecount=10 "$O/new.pb.gz" >"$O/new-top.txt" 2>&1 || { cat "$O/new-top.txt"; fail "go tool pprof rejected new.pb.gz"; }
	grep -q prof_phase_b "$O/new-top.txt" || { cat "$O/new-top.txt"; fail "pprof -top of the new range lacks prof_phase_b"; }
	gp -top -nodecount=10 -diff_base "$O/base.pb.gz" "$O/new.pb.gz" >"$O/diffbase.txt" 2>&1 ||
		{ cat "$O/diffbase.txt"; fail "go tool pprof -diff_base failed"; }
	cat "$O/diffbase.txt"
	# flat column: B grew (positive), A shrank (negative)
	awk '/prof_phase_b/ { if ($1+0 > 0) ok=1 } END { exit !ok }' "$O/diffbase.txt" || fail "-diff_base: prof_phase_b not positive"
	awk '/prof_phase_a/ { if ($1 ~ /^-/) ok=1 } END { exit !ok }' "$O/diffbase.txt" || fail "-diff_base: prof_phase_a not negative"
	gp -top -nodecount=10 "$O/diff.pb.gz" >"$O/diff-top.txt" 2>&1 || { cat "$O/diff-top.txt"; fail "go tool pprof rejected diff.pb.gz"; }
	awk '/prof_phase_b/ { if ($1+0 > 0) ok=1 } END { exit !ok }' "$O/diff-top.txt" || { cat "$O/diff-top.txt"; fail "diff.pb.gz: prof_phase_b not positive"; }
	awk '/prof_phase_a/ { if ($1 ~ /^-/) ok=1 } END { exit !ok }' "$O/diff-top.txt" || { cat "$O/diff-top.txt"; fail "diff.pb.gz: prof_phase_a not negative"; }
else
	note "go not installed: go tool pprof checks not run (install-deps --test installs it)"
fi

# readers are refused: profiles reveal stacks
if command -v setpriv >/dev/null 2>&1 && id -u nobody >/dev/null 2>&1; then
	for p in "/api/v1/profiles?container=$A" "/api/v1/profiles/windows?container=$A" \
		"/api/v1/profiles/diff?container=$A&base_since=10m"; do
		c=$(setpriv --reuid=65534 --regid=65534 --clear-groups curl -q -s -m 10 -o /dev/null -w '%{http_code}' "$SL_API$p")
		assert_eq "reader GET $p" 403 "$c"
	done
else
	note "setpriv or user nobody missing: reader check not run"
fi
# bad requests are 4xx JSON
c=$(curl -s -m 10 -o "$O/bad.json" -w '%{http_code}' "$SL_API/api/v1/profiles?container=$A&since=yesterday")
assert_eq "bad since" 400 "$c"
c=$(curl -s -m 10 -o "$O/bad.json" -w '%{http_code}' "$SL_API/api/v1/profiles?container=ffffffffffff")
assert_eq "unknown container" 404 "$c"
ct_delete
sl_agent_stop || fail "agent exit status $?"

# off: nothing attached, routes 503
sl_agent_start 'profiling:
  continuous:
    enabled: false'
H=$(sl_get /healthz)
assert_eq "off: state" disabled "$(printf '%s' "$H" | jq -r .continuous_profiling.state)"
assert_eq "off: hook" disabled "$(printf '%s' "$H" | jq -r '.continuous_profiling.hooks[0].state')"
if command -v bpftool >/dev/null 2>&1; then
	bpftool prog show 2>/dev/null | grep -q 'cprof_sample' && {
		# another agent (a neighbouring test) may run one: only ours counts
		n=$(ls -l /proc/"$SL_AGENT_PID"/fd 2>/dev/null | grep -c 'bpf-prog' || true)
		bpftool prog show pid "$SL_AGENT_PID" 2>/dev/null | grep -q cprof_sample && fail "off: cprof_sample loaded by the agent"
		note "a cprof_sample program of another process is loaded ($n progs in ours)"
	}
fi
c=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "$SL_API/api/v1/profiles?host=true")
assert_eq "off: profiles route" 503 "$c"
echo "PASS"
