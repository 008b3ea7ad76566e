#!/bin/bash
# bench-section: agent-idle
# The agent's own cost when nothing happens (issue 13, item 4): N container
# cgroups (kubepods layout, one sleeping process each), sandlensd with its
# default configuration (every module, default intervals, self-protection
# on), CPU and RSS over a window.
#
#   bench/agent-idle.sh [BUILD_DIR]            (root; default build/)
#
# Env: BENCH_CONTAINERS  containers (default 100)
#      BENCH_WINDOW_S    one measured window, seconds (default 60)
#      BENCH_REPEATS     windows measured back to back (default 3): the
#                        CPU figure is their median (min..max)
#      BENCH_WARMUP_S    wait after the agent reports every container (default 15)
#      SL_BENCH_RESULTS=FILE  write the markdown section to FILE (make bench)
#      BENCH_PERF=FILE   also perf record -g the agent over the window into FILE
#                        (perf report -i FILE --no-children --sort comm,sym)
# Figures: CPU = Δ(utime + stime) of /proc/<pid>/stat over the window, in
# clock ticks / CLK_TCK, as a share of one core; RSS = VmRSS of
# /proc/<pid>/status sampled every second in the window (median and max).
# Goals: CPU <= 0.5 % of a core (median window), RSS <= 32 MiB (max over
# every window). The agent also sees
# everything else the host runs (every exec, every context switch of other
# users' work): on a shared host its CPU is an upper bound of the idle cost.
set -u
cd "$(dirname "$0")/.." || exit 1
source tests/lib/common.sh
B=${1:-build}
export SL_BUILD=$B
N=${BENCH_CONTAINERS:-100}
WIN=${BENCH_WINDOW_S:-60}
WARM=${BENCH_WARMUP_S:-15}
REP=${BENCH_REPEATS:-3}
sl_init
sl_require_agent_env
export SL_START_TIMEOUT=${SL_START_TIMEOUT:-900}
# production defaults: self-protection on (the test harness turns it off)
export SL_TEST_PRESSURE=1

mapfile -t HIER < <(sl_cgroup_hierarchies)
[ ${#HIER[@]} -gt 0 ] || skip "no cgroup hierarchies"
[ "${HIER[0]}" = /sys/fs/cgroup ] && echo "+memory +cpu +io +pids" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
BASE=/kubepods/burstable
PODS=() PIDS=()
cleanup_idle() {
	local p h
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait "${PIDS[@]}" 2>/dev/null
	for h in "${HIER[@]}"; do
		for p in "${PODS[@]}"; do
			[ -d "$h$p" ] || continue
			find "$h$p" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
			rmdir "$h$p" 2>/dev/null
		done
	done
}
sl_on_exit cleanup_idle

START=$(date -u +%Y-%m-%dT%H:%MZ)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
OTHERS=$(pgrep -x sandlensd | wc -l)
note "creating $N container cgroups (one sleeping process each) in: ${HIER[*]}"
for ((i = 0; i < N; i++)); do
	pod=$BASE/pod$(cat /proc/sys/kernel/random/uuid)
	cg=$pod/$(printf '1d1e%060x' "$i")
	PODS+=("$pod")
	for h in "${HIER[@]}"; do mkdir -p "$h$cg"; done
	if [ "${HIER[0]}" = /sys/fs/cgroup ]; then
		echo "+memory +cpu +io +pids" >"/sys/fs/cgroup$BASE/cgroup.subtree_control" 2>/dev/null
		echo "+memory +cpu +io +pids" >"/sys/fs/cgroup$pod/cgroup.subtree_control" 2>/dev/null
	fi
	sleep 3600 &
	p=$!
	PIDS+=("$p")
	for h in "${HIER[@]}"; do echo "$p" >"$h$cg/cgroup.procs"; done
done

sl_agent_start
n=0
until [ "$(sl_metric sandlens_stats_containers 2>/dev/null || echo 0)" -ge "$N" ] 2>/dev/null; do
	[ $n -lt 600 ] || fail "the agent did not report $N containers within 60 s"
	sleep 0.1
	n=$((n + 1))
done
note "agent reports $(sl_metric sandlens_stats_containers) containers; warm-up ${WARM}s"
sleep "$WARM"

HZ=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$SL_AGENT_PID/stat"; }
# per-thread "comm ticks" (threads named by the agent), summed by name
threads() {
	local t
	for t in /proc/"$SL_AGENT_PID"/task/*; do
		sed 's/^[0-9]* (\(.*\)) /\1 /' "$t/stat" 2>/dev/null | awk '{print $1, $13 + $14}'
	done | awk '{c[$1] += $2} END {for (k in c) print k, c[k]}' | sort
}
forks() { awk '$1 == "processes" {print $2}' /proc/stat; }
ctxt() { awk '$1 == "ctxt" {print $2}' /proc/stat; }
PERF_PID=
if [ -n "${BENCH_PERF:-}" ] && command -v perf >/dev/null; then
	# where the agent's CPU goes: perf record -g of the agent over the window
	perf record -q -g -F 499 -p "$SL_AGENT_PID" -o "$BENCH_PERF" >/dev/null 2>&1 &
	PERF_PID=$!
fi
threads >"$SL_TMP/th0"
f0=$(forks)
x0=$(ctxt)
e0=$(sl_metric sandlens_exec_seen_total)
c0=$(ticks)
t0=$(date +%s.%N)
: >"$SL_TMP/rss"
: >"$SL_TMP/wins"
cw=$c0 tw=$t0
for ((r = 0; r < REP; r++)); do
	for ((s = 0; s < WIN; s++)); do
		awk '/^VmRSS:/ {print $2}' "/proc/$SL_AGENT_PID/status" >>"$SL_TMP/rss"
		sleep 1
	done
	# this window's share of a core
	cn=$(ticks) tn=$(date +%s.%N)
	awk -v a="$cw" -v b="$cn" -v hz="$HZ" -v t0="$tw" -v t1="$tn" 'BEGIN { printf "%.3f\n", 100 * (b - a) / hz / (t1 - t0) }' >>"$SL_TMP/wins"
	cw=$cn tw=$tn
done
c1=$(ticks)
t1=$(date +%s.%N)
read -r win_med win_min win_max < <(sort -n "$SL_TMP/wins" | awk '{v[NR] = $1} END { printf "%s %s %s\n", v[int((NR + 1) / 2)], v[1], v[NR] }')
WINS=$(paste -sd' ' "$SL_TMP/wins")
[ -n "$PERF_PID" ] && { kill -INT "$PERF_PID"; wait "$PERF_PID" 2>/dev/null; }
f1=$(forks)
x1=$(ctxt)
e1=$(sl_metric sandlens_exec_seen_total)
threads >"$SL_TMP/th1"
FORKS=$((f1 - f0))
CTXT=$((x1 - x0))
EXECS=$((e1 - e0))
# RSS by kind at the end of the window (kB): anonymous memory, mapped
# files (the binary, libraries), BPF maps mapped into the agent (ring
# buffers count twice: their data pages are mapped twice)
read -r rss_anon rss_file rss_bpf < <(awk '/^[0-9a-f]+-[0-9a-f]+ / {name = $6} /^Rss:/ {
		if (name ~ /bpf-map/) b += $2; else if (name ~ /^\//) f += $2; else a += $2 }
		END {printf "%.1f %.1f %.1f\n", a / 1024, f / 1024, b / 1024}' "/proc/$SL_AGENT_PID/smaps")
BYTHREAD=$(join -a 2 -e 0 -o 0,1.2,2.2 "$SL_TMP/th0" "$SL_TMP/th1" |
	awk -v hz="$HZ" -v w="$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b - a}')" '{d = ($3 - $2) / hz; if (d > 0) printf "%s %.2f s (%.2f %%); ", $1, d, 100 * d / w}' | sed 's/; $//')
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b - a}')
read -r cpu_s pct < <(awk -v a="$c0" -v b="$c1" -v hz="$HZ" -v t0="$t0" -v t1="$t1" \
	'BEGIN { c = (b - a) / hz; printf "%.2f %.3f\n", c, 100 * c / (t1 - t0) }')
read -r rss_med rss_max < <(sort -n "$SL_TMP/rss" | awk '{v[NR] = $1} END { printf "%.1f %.1f\n", v[int((NR + 1) / 2)] / 1024, v[NR] / 1024 }')
CONT=$(sl_metric sandlens_stats_containers)
# the agent's CPU against what the host did in the window: per 1,000 execs
# it observed and per 100,000 context switches of the host (ms)
PER_EXEC=$(awk -v c="$cpu_s" -v n="$EXECS" 'BEGIN { if (n > 0) printf "%.2f", c * 1000 * 1000 / n; else print "n/a" }')
PER_CTXT=$(awk -v c="$cpu_s" -v n="$CTXT" 'BEGIN { if (n > 0) printf "%.2f", c * 1000 * 100000 / n; else print "n/a" }')
verdict=PASS
awk -v p="$win_med" -v r="$rss_max" 'BEGIN { exit !(p <= 0.5 && r <= 32) }' || verdict=FAIL
echo "# agent-idle: $START, $(nproc) CPUs, kernel $(uname -r), load $LOAD0 -> $LOAD1, $OTHERS other sandlensd"
echo "containers $CONT, $REP windows of ${WIN}s: agent CPU per window $WINS % of one core: median ${win_med} % (${win_min}..${win_max}); whole ${WALL}s: ${cpu_s}s = ${pct} %; RSS median ${rss_med} MiB, max ${rss_max} MiB"
echo "by thread: ${BYTHREAD:-none}"
echo "host activity in the window: $FORKS new tasks (forks, /proc/stat processes), $EXECS execs (sandlens_exec_seen_total), $CTXT context switches"
echo "agent CPU per host activity: $PER_EXEC ms per 1,000 execs, $PER_CTXT ms per 100,000 context switches"
echo "RSS by kind at the end: anon ${rss_anon} MiB, files ${rss_file} MiB, BPF maps ${rss_bpf} MiB"
echo "goal (CPU <= 0.5 % of a core, RSS <= 32 MiB): $verdict"

if [ -n "${SL_BENCH_RESULTS:-}" ]; then
	cat >"$SL_BENCH_RESULTS" <<MD
## Agent idle cost at $N containers (bench/agent-idle.sh)

Command: \`bench/agent-idle.sh $B\` (BENCH_CONTAINERS=$N BENCH_WINDOW_S=$WIN BENCH_REPEATS=$REP), $START, commit $(git rev-parse --short HEAD 2>/dev/null).
Host: $(nproc) CPUs, kernel $(uname -r); load average $LOAD0 before, $LOAD1 after; other sandlensd processes: $OTHERS.
$N container cgroups in the kubepods layout (in ${HIER[*]}), one sleeping process each; sandlensd with its
default configuration (every module, default intervals, self-protection on). CPU: Δ(utime+stime) of
/proc/<pid>/stat over each of $REP windows of ${WIN} s back to back (${WALL} s of wall time in all); RSS:
VmRSS every second in them ($((REP * WIN)) samples).

| figure | value | goal |
|---|---:|---:|
| containers reported by the agent | $CONT | |
| agent CPU per ${WIN} s window: median (min..max) | **${win_med} %** (${win_min}..${win_max}) of one core; windows: $WINS % | ≤ 0.5 % |
| agent CPU over all ${WALL} s | ${cpu_s} s = ${pct} % of one core | |
| agent RSS, median / max | ${rss_med} / **${rss_max} MiB** | ≤ 32 MiB |
| agent CPU by thread (name: CPU over the window) | ${BYTHREAD:-none} | |
| agent RSS by kind at the end: anonymous / mapped files / BPF maps | ${rss_anon} / ${rss_file} / ${rss_bpf} MiB | |
| host activity during the window | $FORKS new tasks (Δ processes of /proc/stat), $EXECS execs (Δ sandlens_exec_seen_total), $CTXT context switches (Δ ctxt) | |
| agent CPU per host activity | $PER_EXEC ms per 1,000 execs; $PER_CTXT ms per 100,000 context switches | |

Goal: **$verdict**. The agent observes the whole host: every exec and context switch of other
work on it is processed too, so on a shared host the CPU figure is an upper bound of the idle cost.
The per-activity row is the whole CPU divided by the host's activity (an upper bound per exec; the
marginal cost of an exec is the exec-storm section's user-space CPU per 1,000 execs); the BPF programs
run in the observed tasks and are not in this CPU figure. Where the idle CPU and RSS go: section
"Agent idle cost: where it goes" below.
MD
	note "results section written to $SL_BENCH_RESULTS"
fi
sl_agent_stop || true
[ "$verdict" = PASS ]
