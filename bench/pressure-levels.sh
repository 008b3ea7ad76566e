#!/bin/bash
# Pressure benchmark (PRES-1): the agent's CPU at each degradation level
# under one and the same exec storm.
#
#   bench/pressure-levels.sh [BUILD_DIR]     (root; default build/)
#
# Env: BENCH_HOLD   seconds each level is held (pressure.dwell_up, default 15)
#      BENCH_BUDGET pressure.cpu_budget (default 0.05: above an idle agent,
#                   below the storm's cost at levels 0..3, so the agent
#                   climbs to 4; dwell_down 1 h keeps it there)
#
# How: sandlensd with proc.exec_rate/burst 2000 (the storm's key is not
# rate limited at level 0 on a 2-core host; at level 2 it is 250/s), stats every 1 s, pressure window 5 s, dwell_up
# BENCH_HOLD, dwell_down 1 h (no step down during the run). First 10 s idle,
# then an endless `sl-testprog storm` of /bin/true in a kubepods container.
# Every second: the level from /healthz, the agent's utime+stime from
# /proc/<pid>/stat, sandlens_exec_seen_total, sandlens_events_total{exec},
# and sandlens_events_dropped_total{reason="pressure"}. Each 1 s interval is
# booked to the level in effect at its start; the first 3 s after a change
# are left out (the previous level's backlog). CPU = Σ Δcpu / Σ Δt.
# The agent sees every exec on the host: run it on a quiet machine.
set -u
cd "$(dirname "$0")/.." || exit 1
source tests/lib/common.sh
source tests/lib/container.sh
B=${1:-build}
export SL_BUILD=$B
HOLD=${BENCH_HOLD:-15}
BUDGET=${BENCH_BUDGET:-0.05}
sl_init
sl_require_agent_env
ct_require

sl_agent_start "proc:
  exec_rate: 2000
  exec_burst: 2000
stats:
  interval: 1s
pressure:
  cpu_budget: $BUDGET
  window: 5s
  dwell_up: ${HOLD}s
  dwell_down: 1h
  release_ratio: 0.5"
APID=$SL_AGENT_PID
HZ=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$APID/stat"; }
m() { sl_metric "$@"; }

declare -A T C X E D
sample_loop() { # SECONDS PHASE(idle|storm)
	local end=$(($(date +%s) + $1)) prev_l="" prev_c prev_t prev_x prev_e prev_d since=0
	prev_c=$(cpu_ticks) prev_t=$(date +%s.%N)
	prev_x=$(m sandlens_exec_seen_total) prev_e=$(m sandlens_events_total 'type="exec"')
	prev_d=$(m sandlens_events_dropped_total 'reason="pressure"')
	prev_l=$(curl -sf "$SL_API/healthz" | jq .pressure.level)
	while [ "$(date +%s)" -lt "$end" ]; do
		sleep 1
		local c t x e d l key
		c=$(cpu_ticks) t=$(date +%s.%N)
		x=$(m sandlens_exec_seen_total) e=$(m sandlens_events_total 'type="exec"')
		d=$(m sandlens_events_dropped_total 'reason="pressure"')
		l=$(curl -sf "$SL_API/healthz" | jq .pressure.level)
		key="$2-$prev_l"
		if [ "$since" -ge 3 ]; then
			T[$key]=$(awk -v a="${T[$key]:-0}" -v t="$t" -v p="$prev_t" 'BEGIN{print a + t - p}')
			C[$key]=$(( ${C[$key]:-0} + c - prev_c ))
			X[$key]=$(( ${X[$key]:-0} + x - prev_x ))
			E[$key]=$(( ${E[$key]:-0} + e - prev_e ))
			D[$key]=$(( ${D[$key]:-0} + d - prev_d ))
		fi
		if [ "$l" != "$prev_l" ]; then since=0; else since=$((since + 1)); fi
		prev_c=$c prev_t=$t prev_x=$x prev_e=$e prev_d=$d prev_l=$l
		[ "$2" = storm ] && [ "$l" = 4 ] && [ -n "${T[storm-4]:-}" ] &&
			awk -v t="${T[storm-4]}" -v h="$HOLD" 'BEGIN{exit !(t >= h - 3)}' && break
	done
}

sample_loop 10 idle
ct_create bench-storm kubepods -- /bin/sl-testprog storm 100000000 /bin/true
ct_start_bg
sample_loop $((HOLD * 6 + 30)) storm
runc --root "$CT_RUNC_ROOT" kill "$CT_ID" KILL >/dev/null 2>&1
wait "$CT_RUN_PID" 2>/dev/null

echo "| phase | level | seconds | agent CPU (share of one CPU) | execs seen/s (host) | agent CPU ms per 1,000 execs | exec events stored/s | dropped (pressure)/s |"
echo "|---|---|---|---|---|---|---|---|"
for key in idle-0 storm-0 storm-1 storm-2 storm-3 storm-4; do
	[ -n "${T[$key]:-}" ] || continue
	awk -v k="$key" -v t="${T[$key]}" -v c="${C[$key]}" -v hz="$HZ" -v x="${X[$key]}" -v e="${E[$key]}" -v d="${D[$key]}" '
		BEGIN { split(k, p, "-"); printf "| %s | %s | %.0f | %.3f | %.0f | %.1f | %.0f | %.0f |\n",
			p[1], p[2], t, c / hz / t, x / t, x ? c / hz * 1e6 / x : 0, e / t, d / t }'
done
sl_agent_stop >/dev/null
