#!/bin/bash
# Per-event BPF cost of sandlens' sched module vs libbpf-tools runqlat, side
# by side on the same scheduler load (issue 3, item 4).
#
#   bench/sched-overhead.sh [BUILD_DIR] [LOOPS]
#
# Both tools attach to sched_wakeup, sched_wakeup_new and sched_switch at the
# same time; kernel.bpf_stats_enabled=1 makes the kernel count run time and
# runs per program (bpf_prog_info.run_time_ns / run_cnt); the figure is
# Σ Δrun_time_ns / Σ Δrun_cnt over each tool's three programs during the load.
# Two loads, each `perf bench sched messaging -g 10 -l LOOPS` (default 2000):
#   1. one instance in one cgroup: every wait is internal (same cgroup);
#   2. two instances at once in two v2 cgroups: waits are also external, so
#      sandlens updates its (victim, neighbour) table too.
# sandlens runs with its defaults (per-cgroup histograms, neighbours, 1 ms
# sched_delay threshold; the bench cgroups are not containers, so no
# sched_delay event is emitted). runqlat runs with its defaults (one global
# histogram). Prints a table and, with SL_BENCH_RESULTS=FILE, writes the
# markdown section for bench/RESULTS.md to FILE.
set -u
cd "$(dirname "$0")/.." || exit 1
source tests/lib/common.sh
B=${1:-build}
LOOPS=${2:-2000}
export SL_BUILD=$B
sl_init
sl_require_root
sl_require_btf
sl_require_cmd runqlat perf jq curl
sl_require_build

old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
sl_on_exit "echo $old_stats > /proc/sys/kernel/bpf_stats_enabled"
echo 1 >/proc/sys/kernel/bpf_stats_enabled

V2=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
[ -n "$V2" ] || skip "no cgroup v2 mount for the bench cgroups"

others=$(pgrep -x sandlensd | wc -l)
load1=$(cut -d' ' -f1 /proc/loadavg)
[ "$others" -gt 0 ] && note "warning: $others other sandlensd process(es) running: their sched programs share the hooks and the caches"
sl_agent_start
runqlat 3600 1 >"$SL_TMP/runqlat.out" 2>&1 &
RQ=$!
sl_on_exit "kill -INT $RQ"
sleep 2
kill -0 "$RQ" 2>/dev/null || { cat "$SL_TMP/runqlat.out"; fail "runqlat did not start"; }

# prog ids a process holds (from /proc/PID/fdinfo), restricted to the
# scheduler programs
prog_ids() {
	local id
	for id in $(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -un); do
		bpftool prog show id "$id" -j 2>/dev/null | jq -r 'select(.name | test("sched_(wakeup|wakeup_new|switch)$")) | .id'
	done
}
SL_PROGS=$(prog_ids "$SL_AGENT_PID")
RQ_PROGS=$(prog_ids "$RQ")
[ "$(echo $SL_PROGS | wc -w)" = 3 ] || fail "sandlens sched programs not found (got: $SL_PROGS)"
[ "$(echo $RQ_PROGS | wc -w)" = 3 ] || fail "runqlat programs not found (got: $RQ_PROGS)"

# "time cnt" summed over prog ids
stats() {
	local id
	for id in "$@"; do bpftool prog show id "$id" -j | jq -r '"\(.run_time_ns // 0) \(.run_cnt // 0)"'; done |
		awk '{t += $1; c += $2} END {printf "%.0f %.0f\n", t, c}'
}
perprog() {
	local id
	for id in "$@"; do bpftool prog show id "$id" -j | jq -r '"\(.name) \(.run_time_ns // 0) \(.run_cnt // 0)"'; done
}

load_one() { perf bench sched messaging -g 10 -l "$LOOPS" >/dev/null 2>&1; }
load_two() {
	local d pids=()
	for d in a b; do
		mkdir -p "$V2/sl-bench-$d"
		sl_on_exit "rmdir $V2/sl-bench-$d"
		(echo $BASHPID >"$V2/sl-bench-$d/cgroup.procs" && exec perf bench sched messaging -g 10 -l "$LOOPS" >/dev/null 2>&1) &
		pids+=($!)
	done
	wait "${pids[@]}"
}

declare -A R
run() {
	local name=$1 fn=$2 s0 r0 s1 r1 p0 p1
	read -r s0 sc0 < <(stats $SL_PROGS)
	read -r r0 rc0 < <(stats $RQ_PROGS)
	perprog $SL_PROGS >"$SL_TMP/sl0"
	perprog $RQ_PROGS >"$SL_TMP/rq0"
	local t0=$(date +%s.%N)
	$fn
	local t1=$(date +%s.%N)
	read -r s1 sc1 < <(stats $SL_PROGS)
	read -r r1 rc1 < <(stats $RQ_PROGS)
	perprog $SL_PROGS >"$SL_TMP/sl1"
	perprog $RQ_PROGS >"$SL_TMP/rq1"
	R[$name]=$(awk -v s="$((s1 - s0))" -v sc="$((sc1 - sc0))" -v r="$((r1 - r0))" -v rc="$((rc1 - rc0))" \
		-v d="$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" \
		'BEGIN { printf "%.1f %d %.1f %d %.3f %.1f", s / sc, sc, r / rc, rc, (s / sc) / (r / rc), d }')
	echo "$name: sandlens: $(paste "$SL_TMP/sl0" "$SL_TMP/sl1" | awk '{ printf "%s %.1f ns/run (%d runs); ", $1, ($5 - $2) / ($6 - $3 + 1e-9), $6 - $3 }')"
	echo "$name: runqlat:  $(paste "$SL_TMP/rq0" "$SL_TMP/rq1" | awk '{ printf "%s %.1f ns/run (%d runs); ", $1, ($5 - $2) / ($6 - $3 + 1e-9), $6 - $3 }')"
}

run "one cgroup (internal waits)" load_one
run "two cgroups (external waits)" load_two

printf '\n%-30s %14s %10s %14s %10s %8s\n' "load" "sandlens ns/ev" "events" "runqlat ns/ev" "events" "ratio"
for k in "one cgroup (internal waits)" "two cgroups (external waits)"; do
	read -r sn sc rn rc ratio d <<<"${R[$k]}"
	printf '%-30s %14s %10s %14s %10s %8s\n' "$k" "$sn" "$sc" "$rn" "$rc" "$ratio"
done

if [ -n "${SL_BENCH_RESULTS:-}" ]; then
	{
		echo "## sched module: per-event BPF cost vs libbpf-tools runqlat"
		echo
		echo "Command: \`bench/sched-overhead.sh $B $LOOPS\` (as root; run $(date -u +%Y-%m-%dT%H:%MZ))."
		echo "Host: $(nproc) CPUs, kernel $(uname -r), $(runqlat --version 2>&1 | head -1 | sed 's/^/runqlat /' || true);"
		echo "load average before the run $load1; other sandlensd processes running: $others."
		echo "Both tools attached at once; \`kernel.bpf_stats_enabled=1\`; ns/event = Σ Δrun_time_ns / Σ Δrun_cnt"
		echo "over each tool's sched_wakeup, sched_wakeup_new and sched_switch programs during the load"
		echo "(\`perf bench sched messaging -g 10 -l $LOOPS\`; the second row runs two of them at once in two v2 cgroups)."
		echo
		echo "| load | sandlens ns/event | events | runqlat ns/event | events | ratio |"
		echo "|---|---:|---:|---:|---:|---:|"
		for k in "one cgroup (internal waits)" "two cgroups (external waits)"; do
			read -r sn sc rn rc ratio d <<<"${R[$k]}"
			echo "| $k | $sn | $sc | $rn | $rc | $ratio |"
		done
		echo
		echo "Goal: ratio ≤ 0.5 with per-cgroup histograms kept (sandlens keeps a per-cgroup log2"
		echo "histogram, the internal/external split, the (victim, neighbour) table and the"
		echo "sched_delay threshold check; runqlat keeps one global histogram)."
	} >"$SL_BENCH_RESULTS"
	note "results section written to $SL_BENCH_RESULTS"
fi
sl_agent_stop || true
