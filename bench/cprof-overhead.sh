#!/bin/bash
# bench-section: cprof-overhead
# Cost of continuous profiling (issue 12 item 6): 50 partly busy
# "containers" (cgroups named like docker's, /docker/<64 hex> on the v2
# hierarchy, one sl-profprog duty process each: prof_spin_loop() 2 ms of
# every 100 ms, ~1 CPU in all), the agent at the default rate (19 Hz,
# 10 s windows) next to `perf record -F 19 -a -g` on the same load in the
# same run.
#
#   bench/cprof-overhead.sh [BUILD_DIR] [SECONDS] [REPEATS]
#
# Per repeat, each phase SECONDS long on the same load:
#   off   the agent with profiling.continuous.enabled: false (its modules' cost)
#   on    the agent with continuous profiling on: agent CPU (every thread,
#         utime+stime of /proc/<pid>/stat), the window thread's CPU
#         (/healthz continuous_profiling.thread_cpu_ns), kernel ns per sample
#         (kernel.bpf_stats_enabled=1: run_time_ns / run_cnt of cprof_sample),
#         store bytes written, scaled to bytes per container-hour
#   perf  perf record -F 19 -a -g -o FILE -- sleep SECONDS under
#         /usr/bin/time (user+sys), perf.data bytes per container-hour
# Figures: median and min..max over the repeats. The machine is shared.
# With SL_BENCH_RESULTS=FILE writes the markdown section for bench/RESULTS.md.
set -u
cd "$(dirname "$0")/.." || exit 1
source tests/lib/common.sh
B=${1:-build}
SECS=${2:-60}
REPS=${3:-3}
N=${SL_CPROF_BENCH_CONTAINERS:-50}
HZ=19
export SL_BUILD=$B
sl_init
sl_require_agent_env
sl_require_cmd perf bpftool
[ -x /usr/bin/time ] || skip "/usr/bin/time not installed (Debian package time)"
[ -x "$SL_BUILD/helpers/sl-profprog" ] || fail "sl-profprog not built"
V2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$V2" ] || skip "no cgroup v2 mount"

old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
sl_on_exit "echo $old_stats > /proc/sys/kernel/bpf_stats_enabled"
echo 1 >/proc/sys/kernel/bpf_stats_enabled
TCK=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# the load: N cgroups with one duty-cycled spinner each
ROOT=$V2/docker
mkdir -p "$ROOT"
PIDS=()
cleanup_load() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	sleep 0.5
	for i in $(seq 1 "$N"); do rmdir "$ROOT/$(printf 'cafe%060x' "$i")" 2>/dev/null; done
	rmdir "$ROOT" 2>/dev/null
}
sl_on_exit cleanup_load
TOTAL=$(( SECS * (REPS * 3 + 1) + 120 ))
for i in $(seq 1 "$N"); do
	d=$ROOT/$(printf 'cafe%060x' "$i")
	mkdir -p "$d"
	sh -c "echo \$\$ > $d/cgroup.procs && exec $SL_BUILD/helpers/sl-profprog duty $TOTAL 2 100" >/dev/null &
	PIDS+=($!)
done
sleep 2
note "$N cgroups under $ROOT, one spinner each (2 ms / 100 ms)"

CFG_ON="profiling:
  continuous:
    hz: $HZ
    window: 10s"
CFG_OFF="profiling:
  continuous:
    enabled: false"
med() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
rng() { sort -g | awk 'NR==1{lo=$1} {hi=$1} END {print lo ".." hi}'; }
OFF=() ON=() THR=() NSS=() BCH=() PERF=() PBCH=() SAMP=()
for r in $(seq 1 "$REPS"); do
	# off
	sl_agent_start "$CFG_OFF"
	sleep 5
	t0=$(cpu_ticks "$SL_AGENT_PID"); sleep "$SECS"; t1=$(cpu_ticks "$SL_AGENT_PID")
	OFF+=($(awk -v t=$((t1 - t0)) -v k="$TCK" -v s="$SECS" 'BEGIN {printf "%.4f", 100 * t / k / s}'))
	sl_agent_stop
	# on
	sl_agent_start "$CFG_ON"
	sleep 12 # a first window ended
	PID_PROG=$(bpftool prog show -j | jq --arg p "$SL_AGENT_PID" '[.[] | select(.name == "cprof_sample") | select((.pids // []) | map(.pid | tostring) | index($p))] | .[0].id')
	[ "$PID_PROG" != null ] || PID_PROG=$(bpftool prog show -j | jq '[.[] | select(.name == "cprof_sample")] | max_by(.id) | .id')
	p0=$(bpftool prog show id "$PID_PROG" -j | jq -c '{run_time_ns, run_cnt}')
	h0=$(sl_get /healthz | jq -c .continuous_profiling)
	t0=$(cpu_ticks "$SL_AGENT_PID"); sleep "$SECS"; t1=$(cpu_ticks "$SL_AGENT_PID")
	p1=$(bpftool prog show id "$PID_PROG" -j | jq -c '{run_time_ns, run_cnt}')
	h1=$(sl_get /healthz | jq -c .continuous_profiling)
	ON+=($(awk -v t=$((t1 - t0)) -v k="$TCK" -v s="$SECS" 'BEGIN {printf "%.4f", 100 * t / k / s}'))
	THR+=($(jq -n --argjson a "$h0" --argjson b "$h1" --arg s "$SECS" '100 * ($b.thread_cpu_ns - $a.thread_cpu_ns) / 1e9 / ($s | tonumber) | . * 10000 | floor / 10000'))
	NSS+=($(jq -n --argjson a "$p0" --argjson b "$p1" '(($b.run_time_ns - $a.run_time_ns) / (($b.run_cnt - $a.run_cnt) | if . == 0 then 1 else . end)) | floor'))
	SAMP+=($(jq -n --argjson a "$h0" --argjson b "$h1" '$b.samples - $a.samples'))
	BCH+=($(jq -n --argjson a "$h0" --argjson b "$h1" --arg s "$SECS" --arg n "$N" '($b.store.bytes_written - $a.store.bytes_written) / ($n | tonumber) * 3600 / ($s | tonumber) | floor'))
	sl_agent_stop
	# perf
	/usr/bin/time -f '%U %S' -o "$SL_TMP/perf.time" perf record -q -F $HZ -a -g -o "$SL_TMP/perf.data" -- sleep "$SECS" \
		>/dev/null 2>"$SL_TMP/perf.err" || { cat "$SL_TMP/perf.err"; fail "perf record failed"; }
	PERF+=($(awk -v s="$SECS" '{printf "%.4f", 100 * ($1 + $2) / s}' "$SL_TMP/perf.time"))
	PBCH+=($(( $(stat -c %s "$SL_TMP/perf.data") / N * 3600 / SECS )))
	note "repeat $r: agent off ${OFF[-1]}% on ${ON[-1]}% (window thread ${THR[-1]}%), ${NSS[-1]} ns/sample, ${SAMP[-1]} samples, ${BCH[-1]} B/container-hour; perf record ${PERF[-1]}%, ${PBCH[-1]} B/container-hour"
done
row() { printf '%s\n' "$@" | med; }
rr() { printf '%s\n' "$@" | rng; }
DELTA=()
for i in $(seq 0 $((REPS - 1))); do DELTA+=($(awk -v a="${ON[$i]}" -v b="${OFF[$i]}" 'BEGIN {printf "%.4f", a - b}')); done
SECTION=$(cat <<MD
## Continuous profiling: 50 busy containers, default rate, vs perf record (bench/cprof-overhead.sh)

$N cgroups (\`/docker/<64 hex>\` on the v2 hierarchy, attributed as containers), one
\`sl-profprog duty\` spinner each (2 ms of every 100 ms), $HZ Hz, 10 s windows, ${SECS} s per
phase, $REPS repeats, median (min..max). \`$(uname -r)\`, $(nproc) CPUs, **shared with 7
other build/test sessions** (their load is in every figure; CPU figures are % of one CPU).

| figure | median | range |
|---|---|---|
| agent CPU, continuous profiling on (all threads, /proc/<pid>/stat) | $(row "${ON[@]}") % | $(rr "${ON[@]}") |
| agent CPU, continuous profiling off (same load) | $(row "${OFF[@]}") % | $(rr "${OFF[@]}") |
| difference on − off | $(row "${DELTA[@]}") % | $(rr "${DELTA[@]}") |
| window thread CPU (its own clock) | $(row "${THR[@]}") % | $(rr "${THR[@]}") |
| kernel ns per sample (cprof_sample run_time_ns / run_cnt) | $(row "${NSS[@]}") ns | $(rr "${NSS[@]}") |
| samples stored per phase | $(row "${SAMP[@]}") | $(rr "${SAMP[@]}") |
| store bytes per container-hour (gzip'd pprof per window) | $(row "${BCH[@]}") B | $(rr "${BCH[@]}") |
| \`perf record -F $HZ -a -g\` CPU (user+sys) | $(row "${PERF[@]}") % | $(rr "${PERF[@]}") |
| \`perf record\` perf.data bytes per container-hour | $(row "${PBCH[@]}") B | $(rr "${PBCH[@]}") |

perf record writes every sample (raw stacks) and symbolizes nothing; the agent aggregates in
the kernel, symbolizes, splits per container and stores compressed pprof, queryable by range.
MD
)
printf '%s\n' "$SECTION"
[ -n "${SL_BENCH_RESULTS:-}" ] && printf '%s\n' "$SECTION" >"$SL_BENCH_RESULTS"
exit 0
