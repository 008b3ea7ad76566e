#!/bin/bash
# PRES-1 / P4: the degradation order under pressure. An artificially low
# CPU budget (pressure.cpu_budget, short window and dwell times) and an
# exec storm in a container drive the agent through the steps in order:
#   1 metrics_slowed (stats interval x metrics_slowdown), 2 events_sampled
#   (token buckets >> rate_shift), 3 tasks_refused (POST /api/v1/tasks ->
#   429 "agent under pressure: ..."), 4 low_severity_dropped (counted as
#   sandlens_events_dropped_total{reason="pressure"});
# after the storm stops it steps back down to 0 in reverse order, and a
# task is accepted again. Observed through /healthz (pressure object and
# its transition log) and /metrics.
# The agent sees every exec on the host, so other work on a shared machine
# is load too: the budget (SL_PRESSURE_BUDGET, default 0.05 of one CPU,
# 0.08 for an ASan build, which idles near 0.02 and on a contended 2-CPU host
# used 0.12 under the storm once step 2 sampled events: 0.15 stalled there)
# sits between an idle agent and one under the storm; a host too busy for an idle agent to get below the release mark
# makes the test SKIP (it could not tell the storm from the rest).
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
sl_init
sl_require_agent_env
ct_require
if ldd "$SL_BUILD/sandlensd" 2>/dev/null | grep -q libasan; then
	BUDGET=${SL_PRESSURE_BUDGET:-0.08}
else
	BUDGET=${SL_PRESSURE_BUDGET:-0.05}
fi

# Default exec rate limits (50/s, burst 100 per (ppid, comm)): other
# single-parent storms on the host cost this agent little. The test's storm
# is many short-lived parents with a few children each (like a build): every
# exec is delivered whatever the buckets' rate (each parent is a new key),
# so step 2 does not end it and the agent climbs to step 4.
sl_agent_start "stats:
  interval: 1s
pressure:
  cpu_budget: $BUDGET
  memory_budget: 4GiB
  window: 3s
  dwell_up: 2s
  dwell_down: 3s
  release_ratio: 0.5
  metrics_slowdown: 4
  rate_shift: 3"

hz() { curl -sf -m 10 "$SL_API/healthz"; }
# rate_shift in this agent's BPF .bss map NAME (proc_bpf.bss, sched_bp.bss),
# found through the agent's fds; "" without bpftool.
bss_shift() {
	command -v bpftool >/dev/null || return 0
	local f id
	for f in /proc/"$SL_AGENT_PID"/fdinfo/*; do
		id=$(awk '/^map_id:/ {print $2}' "$f" 2>/dev/null)
		[ -n "$id" ] || continue
		if [ "$(bpftool map show id "$id" -j 2>/dev/null | jq -r .name)" = "$1" ]; then
			bpftool map dump id "$id" -j | jq '.[0].formatted.value[".bss"][] | select(has("rate_shift")) | .rate_shift'
			return
		fi
	done
}

P=$(hz | jq -c .pressure)
assert_eq "pressure enabled" true "$(jq .enabled <<<"$P")"
assert_eq "level at start" 0 "$(jq .level <<<"$P")"
assert_eq "steps listed" '["metrics_slowed","events_sampled","tasks_refused","low_severity_dropped"]' \
	"$(jq -c '[.steps[].name]' <<<"$P")"

# Idle: the agent must be at level 0 and under the release mark (budget x
# 0.5) for 3 s running (a full window of real measurements), within 60 s.
TI=$(date +%s)
quiet=0
for _ in $(seq 1 120); do
	P=$(hz | jq -c .pressure)
	if [ "$(jq .zone -r <<<"$P")" = under ] && [ "$(jq .level <<<"$P")" = 0 ] &&
		[ "$(jq .rss_bytes <<<"$P")" -gt 0 ]; then
		quiet=$((quiet + 1))
		[ $quiet -ge 6 ] && break
	else
		quiet=0
	fi
	sleep 0.5
done
note "idle after $(($(date +%s) - TI)) s: cpu_share $(jq .cpu_share <<<"$P") (budget $BUDGET), rss $(jq .rss_bytes <<<"$P") bytes"
[ $quiet -ge 6 ] || skip "the idle agent stays above the release mark, the host is too busy to tell the storm from the rest ($(jq -r .reason <<<"$P"); cpu budget $BUDGET); set SL_PRESSURE_BUDGET"

# A target for the task probes.
sleep 600 &
TPID=$!
post_task() { # -> "<http code> <body>"
	local code
	code=$(curl -s -m 10 -o "$SL_TMP/task.body" -w '%{http_code}' -XPOST "$SL_API/api/v1/tasks" \
		-d "{\"type\":\"profile_on_cpu\",\"target\":{\"pid\":$TPID},\"duration_s\":1}")
	echo "$code $(tr -d '\n' <"$SL_TMP/task.body")"
}

LOOP='while :; do /bin/sh -c "/bin/true; /bin/true; /bin/true; /bin/true"; done'
ct_create storm kubepods -- /bin/sh -c "$LOOP & $LOOP & wait"
ct_start_bg
STORM_PID=$CT_RUN_PID
T0=$(date +%s)

# Up: poll until level 4 (at most 120 s), checking each step's effect.
max=0 seen_interval="" seen_shift="" refused="" t=0
: >"$SL_LOGDIR/pressure-up.jsonl"
while [ $t -lt 240 ]; do
	P=$(hz | jq -c .pressure)
	echo "$P" >>"$SL_LOGDIR/pressure-up.jsonl"
	l=$(jq .level <<<"$P")
	[ "$l" -gt "$max" ] && max=$l
	[ "$l" -ge 1 ] && [ -z "$seen_interval" ] && seen_interval=$(jq .stats_interval_seconds <<<"$P")
	if [ "$l" -ge 2 ] && [ -z "$seen_shift" ]; then
		seen_shift=$(jq .rate_shift <<<"$P")
		kshift="$(bss_shift proc_bpf.bss) $(bss_shift sched_bp.bss)"
	fi
	if [ "$l" -ge 3 ] && [ -z "$refused" ]; then
		refused=$(post_task)
		# the level may have gone back below 3 between the two requests
		[ "${refused%% *}" = 429 ] || [ "$(hz | jq .pressure.level)" -ge 3 ] || refused=""
	fi
	[ "$l" -ge 4 ] && break
	sleep 0.5
	t=$((t + 1))
done
kill -0 "$STORM_PID" 2>/dev/null || fail "the storm container ended early ($(cat "$CT_DIR/stderr"))"
note "level 4 reached $(($(date +%s) - T0)) s after the storm began"
assert_eq "highest level under the storm" 4 "$max"
assert_eq "step 1: stats interval (1 s x 4)" 4 "$seen_interval"
assert_eq "step 2: rate shift" 3 "$seen_shift"
if command -v bpftool >/dev/null; then
	# the kernel side: both modules' buckets (unless the level fell back meanwhile)
	assert_eq "step 2: rate_shift in the proc and sched BPF programs" "3 3" "$kshift"
fi
assert_eq "step 3: task refused" 429 "${refused%% *}"
case "$refused" in
*'"agent under pressure: level '*) ;;
*) fail "step 3: 429 without the reason: $refused" ;;
esac
note "step 3 answer: $refused"

# Step 4: low-severity drops are counted (the storm's execs and clean exits).
drops=0
for _ in $(seq 1 40); do
	drops=$(sl_metric sandlens_events_dropped_total 'reason="pressure"')
	[ "$drops" -gt 0 ] && break
	sleep 0.5
done
[ "$drops" -gt 0 ] || fail "step 4: no sandlens_events_dropped_total{reason=\"pressure\"} while at level 4"
note "step 4: $drops events dropped (reason pressure), exec $(sl_metric sandlens_events_dropped_total 'reason="pressure",type="exec"')"
assert_eq "no high-severity drop" 0 "$(sl_metric sandlens_events_dropped_total 'reason="pressure",type="oom"')"
assert_eq "sandlens_pressure_step_active{step=4}" 1 "$(sl_metric sandlens_pressure_step_active 'step="4"')"

# The storm stops: back down to 0 (at most 180 s).
runc --root "$CT_RUNC_ROOT" kill "$CT_ID" KILL >/dev/null 2>&1
wait "$STORM_PID" 2>/dev/null
T1=$(date +%s)
t=0
while [ $t -lt 360 ]; do
	P=$(hz | jq -c .pressure)
	[ "$(jq .level <<<"$P")" = 0 ] && break
	sleep 0.5
	t=$((t + 1))
done
echo "$P" >"$SL_LOGDIR/pressure-end.json"
note "level $(jq .level <<<"$P") $(($(date +%s) - T1)) s after the storm ended"
assert_eq "level after the storm" 0 "$(jq .level <<<"$P")"
assert_eq "steps undone: stats interval" 1 "$(jq .stats_interval_seconds <<<"$P")"
assert_eq "steps undone: rate shift" 0 "$(jq .rate_shift <<<"$P")"
command -v bpftool >/dev/null &&
	assert_eq "steps undone: rate_shift in the BPF programs" "0 0" "$(bss_shift proc_bpf.bss) $(bss_shift sched_bp.bss)"
assert_eq "sandlens_pressure_level" 0 "$(sl_metric sandlens_pressure_level)"

# The transition log: one step at a time, up 0->1->2->3->4 first, and the
# last one 1->0 (in between it may have oscillated, still one step each).
TR=$(jq -c '[.transitions[] | [.from, .to]]' <<<"$P")
note "transitions: $TR ($(jq .transitions_total <<<"$P") in all)"
[ "$(jq .transitions_total <<<"$P")" -le 32 ] || fail "more transitions than the log keeps: $TR"
assert_eq "first four transitions" "[[0,1],[1,2],[2,3],[3,4]]" "$(jq -c '.[0:4]' <<<"$TR")"
assert_eq "last transition" "[1,0]" "$(jq -c '.[-1]' <<<"$TR")"
assert_eq "every transition one step" true "$(jq '[.[] | (.[1] - .[0]) | (. == 1 or . == -1)] | all' <<<"$TR")"
assert_eq "down in reverse order: 4->3, 3->2, 2->1, 1->0 all seen" true \
	"$(jq '[[4,3],[3,2],[2,1],[1,0]] - . == []' <<<"$TR")"
for s in 1 2 3; do
	[ "$(sl_metric sandlens_pressure_steps_total "step=\"$s\"")" -ge 2 ] ||
		fail "sandlens_pressure_steps_total{step=$s} < 2 (entered on the way up and on the way down)"
done
[ "$(sl_metric sandlens_pressure_steps_total 'step="4"')" -ge 1 ] || fail "sandlens_pressure_steps_total{step=4} is 0"

# Undone: a task is accepted again.
r=$(post_task)
assert_eq "task accepted after the storm" 201 "${r%% *}"
kill "$TPID" 2>/dev/null
sl_agent_stop || fail "agent exit status $?"
echo "PASS"
