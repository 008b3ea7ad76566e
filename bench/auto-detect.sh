#!/bin/bash
# bench-section: auto-detect
# AutoTracing (issue 15 item 6; docs/AUTO.md):
#  (a) detector evaluation cost per container per interval at NCTR (1,000)
#      synthetic containers: bench/auto_detect_bench.c (built here with -O2
#      against src/auto/detect.c, the same source the agent links) feeds
#      every method (mean, ema, jump, consecutive), with a constant and a
#      baseline-relative threshold, realistic CPU-ratio readings (spikes,
#      1 % unknown) for INTERVALS intervals; ns per container per interval,
#      median and min..max over REPEATS; plus callgrind instructions per
#      container per interval (repeatable on a loaded host).
#  (b) detection latency, spike start -> capture start (the record's
#      created_ns), PSI trigger vs sampling: the real agent (stats.interval
#      1s, only cpupsi on, auto.containers = the bench's cgroups) watches a
#      container cgroup it attributes (/docker/<64 hex> on the v2 hierarchy);
#      three CPU spinners are moved into it at a known time (cpu "some"
#      pressure). Once with the PSI poll trigger (default text, widened by
#      the agent to 2 s without CAP_SYS_RESOURCE) and once with
#      `auto.cpupsi.trigger: ""` (the detector samples Δsome ÷ Δt every
#      stats pass). A fresh cgroup per repeat (the cooldown is per container).
#
#   bench/auto-detect.sh [BUILD_DIR] [REPEATS]
# With SL_BENCH_RESULTS=FILE writes the markdown section for bench/RESULTS.md.
set -u
cd "$(dirname "$0")/.." || exit 1
source tests/lib/common.sh
B=${1:-build}
REPS=${2:-5}
NCTR=${SL_AUTO_BENCH_CONTAINERS:-1000}
INTERVALS=${SL_AUTO_BENCH_INTERVALS:-600}
export SL_BUILD=$B
sl_init
sl_require_cmd jq cc
OUT=$SL_TMP/auto-detect-bench
cc -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Iinclude -Isrc \
	bench/auto_detect_bench.c src/auto/detect.c -o "$OUT" -lm || fail "building the bench program"
HOST="kernel $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# $HOST"

# ---- (a) evaluation cost
echo "# (a) $NCTR containers x $INTERVALS intervals, $REPS repeats"
A=$(nice "$OUT" "$NCTR" "$INTERVALS" "$REPS") || fail "bench program"
printf '%s\n' "$A"
CG=""
if command -v valgrind >/dev/null; then
	CI=200 # intervals under callgrind (the baseline warms after 60)
	for m in mean ema jump consecutive; do
		for b in 0 1; do
			f=$SL_TMP/cg.$m.$b
			nice valgrind --tool=callgrind --callgrind-out-file="$f" --toggle-collect=feed_all \
				"$OUT" "$NCTR" "$CI" 1 "$m" "$b" >/dev/null 2>"$f.err" || fail "callgrind $m $b"
			ir=$(awk '/^totals:/ { print $2 }' "$f")
			CG+="$m $([ $b = 1 ] && echo baseline || echo const) $(awk -v ir="$ir" -v n="$((NCTR * CI))" 'BEGIN { printf "%.0f", ir / n }')"$'\n'
		done
	done
	echo "# callgrind instructions per container per interval ($CI intervals)"
	printf '%s' "$CG"
fi

# ---- (b) detection latency
sl_require_agent_env
V2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
LAT_OK=1
[ -n "$V2" ] && [ -e "$V2/cpu.pressure" ] && [ -r /proc/pressure/cpu ] || LAT_OK=0
declare -A LAT
PIDS=()
DIRS=()
cleanup_load() {
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	PIDS=()
	for d in "${DIRS[@]}"; do
		local n=0
		while [ -d "$d" ] && ! rmdir "$d" 2>/dev/null && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
	done
	DIRS=()
	rmdir "$V2/docker" 2>/dev/null
	true
}
sl_on_exit cleanup_load
now_ns() { date +%s%N; }
# one mode: MODE (psi|sampling) -> LAT[MODE] = "ms ms ms ..."
run_mode() {
	local mode=$1 trig="" prefix ids=() r
	[ "$mode" = sampling ] && trig='
    trigger: ""'
	prefix=$(od -An -tx1 -N6 /dev/urandom | tr -d ' \n')
	for r in $(seq 1 "$REPS"); do ids+=("$prefix$(od -An -tx1 -N26 /dev/urandom | tr -d ' \n')"); done
	mkdir -p "$V2/docker"
	for id in "${ids[@]}"; do
		mkdir "$V2/docker/$id" || fail "mkdir"
		DIRS+=("$V2/docker/$id")
		sh -c "echo \$\$ >$V2/docker/$id/cgroup.procs && exec sleep 600" &
		PIDS+=($!)
	done
	sl_agent_start "stats:
  interval: 1s
auto:
  enabled: true
  containers: \"$prefix\"
  cooldown: 10m
  profile_duration: 2s
  cpu:
    enabled: false
  throttle:
    enabled: false
  runqueue:
    enabled: false
  dstate:
    enabled: false
  memgrowth:
    enabled: false
  iolat:
    enabled: false
  mempsi:
    enabled: false
  cpupsi:
    threshold: 0.15$trig"
	# all watched (and, for psi, armed) before the first spike
	local n=0 C
	while :; do
		C=$(curl -sf -m 5 "$SL_API/api/v1/auto" | jq -c '.detectors[] | select(.name == "cpupsi")')
		if [ "$mode" = psi ]; then
			printf '%s' "$C" | jq -e --argjson n "$REPS" '.containers_psi_trigger >= $n' >/dev/null && break
		else
			printf '%s' "$C" | jq -e --argjson n "$REPS" '.containers_sampling >= $n' >/dev/null && break
		fi
		n=$((n + 1))
		[ $n -lt 150 ] || fail "$mode: containers not watched within 30 s: $C"
		sleep 0.2
	done
	echo "# $mode: $(printf '%s' "$C" | jq -c '{source, trigger, trigger_note, containers_psi_trigger, containers_sampling}')"
	[ "$mode" = psi ] && NOTE_PSI=$(printf '%s' "$C" | jq -r '"`" + .trigger + "`" + (if .trigger_note then ", widened: no CAP_SYS_RESOURCE" else "" end)')
	local out="" sp=()
	for id in "${ids[@]}"; do
		sleep 3 # a quiet second or two between spikes (the last spinners are gone)
		local t0 cap=""
		t0=$(now_ns)
		sp=()
		for i in 1 2 3; do
			sh -c "echo \$\$ >$V2/docker/$id/cgroup.procs && exec sh -c 'while :; do :; done'" &
			sp+=($!)
			PIDS+=($!)
		done
		n=0
		while [ $n -lt 150 ]; do
			cap=$(curl -sf -m 5 "$SL_API/api/v1/captures?container=$id&detector=cpupsi" |
				jq -r '.captures[0] | select(.) | "\(.created_ns) \(.reason.source)"')
			[ -n "$cap" ] && break
			sleep 0.1
			n=$((n + 1))
		done
		for p in "${sp[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
		[ -n "$cap" ] || { echo "# $mode: no capture within 15 s for $id"; continue; }
		local ms
		ms=$(awk -v c="${cap% *}" -v t="$t0" 'BEGIN { printf "%.0f", (c - t) / 1e6 }')
		echo "# $mode: spike -> capture ${ms} ms (source ${cap#* })"
		out+="$ms "
	done
	LAT[$mode]=$out
	sl_agent_stop || note "agent exit status $?"
	cleanup_load
}
NOTE_PSI=""
if [ $LAT_OK = 1 ]; then
	run_mode psi
	run_mode sampling
else
	echo "# (b) skipped: no cgroup v2 pressure files"
fi
stat_ms() { # "a b c" -> "median (min..max), n"
	printf '%s\n' $1 | sort -n | awk '{ v[NR] = $1 } END { if (!NR) { print "none"; exit } printf "%d ms (%d..%d), n=%d", v[int((NR + 1) / 2)], v[1], v[NR], NR }'
}
if [ $LAT_OK = 1 ]; then
	echo "# latency psi_trigger: $(stat_ms "${LAT[psi]}")"
	echo "# latency sampling:    $(stat_ms "${LAT[sampling]}")"
fi

if [ -n "${SL_BENCH_RESULTS:-}" ]; then
	{
		echo
		echo "## AutoTracing: detector cost and detection latency (bench/auto-detect.sh)"
		echo
		echo "$HOST. **The machine was shared and loaded** (other sessions' builds and a CI-like"
		echo "test run on its 2 cores): wall-clock figures are upper bounds with a wide spread;"
		echo "the callgrind counts are repeatable."
		echo
		echo "(a) Detector evaluation, \`sl_det_feed\` per container per interval: $NCTR synthetic"
		echo "containers × $INTERVALS intervals (CPU-ratio readings with spikes and 1 % unknown),"
		echo "median (min..max) over $REPS repeats; baseline-relative = factor 2 of the container's own p99."
		echo
		echo "| method | threshold | ns / container / interval | instructions (callgrind) | fired |"
		echo "|---|---|---|---|---|"
		while read -r m t _ med min max fired; do
			ir=$(printf '%s' "$CG" | awk -v m="$m" -v t="$t" '$1 == m && $2 == t { print $3 }')
			echo "| $m | $t | ${med#median=} (${min#min=}..${max#max=}) | ${ir:-n/a} | ${fired#fired=} |"
		done <<<"$A"
		echo
		echo "One detector's share of a stats pass at 1,000 containers is 1,000 × the figure above (0.04 to"
		echo "3 ms in the runs on this loaded host; eight detectors). A baseline-relative threshold adds ~400"
		echo "instructions per reading: the p99 is recomputed from the two 64-bucket histograms each time."
		echo "The whole pass (reading the figures included) is \`sandlens_auto_pass_seconds\`."
		if [ $LAT_OK = 1 ]; then
			echo
			echo "(b) Detection latency, spike start (three CPU spinners written into a watched"
			echo "\`/docker/<64 hex>\` v2 cgroup) → the capture record's \`created_ns\`; the real agent,"
			echo "\`stats.interval: 1s\`, only \`cpupsi\` on (threshold 0.15, mean of 1), a fresh cgroup per repeat:"
			echo
			echo "| path | latency median (min..max) |"
			echo "|---|---|"
			echo "| PSI poll trigger ($NOTE_PSI) | $(stat_ms "${LAT[psi]}") |"
			echo "| sampling (\`auto.cpupsi.trigger: \"\"\`: Δsome ÷ Δt per stats pass) | $(stat_ms "${LAT[sampling]}") |"
			echo
			echo "Read this the other way round from what \"sub-second PSI triggers\" suggests: the agent here"
			echo "lacks CAP_SYS_RESOURCE (the sandbox's capability set drops it), so the kernel takes only a"
			echo "2 s-multiple window, and it evaluates such unprivileged triggers in the averaging worker"
			echo "(\`psi_avgs_work\`, every \`PSI_FREQ\` = 2 s; kernel/sched/psi.c \`avg_triggers\`), not in the"
			echo "rtpoll thread that privileged triggers get (polled at window ÷ 10). A spike is therefore seen at"
			echo "the next 2 s aggregation after 300 ms of stall: ~2.3..3.4 s here, slower than sampling every 1 s"
			echo "stats pass (next pass after the spike, ≤ 1 interval plus the pass). The trigger still wins"
			echo "against the default \`stats.interval\` (5 s: a spike is seen up to 5..10 s later) and costs no reads between spikes;"
			echo "with CAP_SYS_RESOURCE the configured \`some 150000 1000000\` would be armed as is (not"
			echo "measurable on this host). For faster detection: grant CAP_SYS_RESOURCE (the shipped systemd"
			echo "unit and DaemonSet do not) or lower \`stats.interval\`."
		fi
	} >>"$SL_BENCH_RESULTS"
fi
echo "PASS"
