#!/bin/bash
# bench-section: prof-kinds-cost
# Kernel cost per event of the memory and lock profile hooks (issue 12,
# item 3): for each task type, a process target runs a known workload
# (tests/helpers/sl-kindprog) while the task runs; with
# kernel.bpf_stats_enabled=1 the run_time_ns / run_cnt of each of the
# task's programs (bpftool prog show, by program name) is read
# just before the task ends. run_cnt counts every hit on the host (the
# hooks are global; the filter is the program's first work), "matched"
# the hits of the target (task progress). Repeats: REPEATS runs per type,
# median and min-max of ns/run.
#
#   bench/prof-kinds-cost.sh [BUILD_DIR] [REPEATS]
#
# With SL_BENCH_RESULTS=FILE writes the markdown section for bench/RESULTS.md.
set -u
cd "$(dirname "$0")/.." || exit 1
source tests/lib/common.sh
source tests/integration/lib_prof.sh
B=${1:-build}
REPEATS=${2:-3}
export SL_BUILD=$B
sl_init
sl_require_agent_env
sl_require_cmd bpftool
P=$SL_BUILD/helpers/sl-kindprog
[ -x "$P" ] || fail "sl-kindprog not built"

old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
sl_on_exit "echo $old_stats > /proc/sys/kernel/bpf_stats_enabled"
echo 1 >/proc/sys/kernel/bpf_stats_enabled
sl_agent_start

OUT=$SL_TMP/res.txt
: >"$OUT"
# one TYPE EXTRA_JSON PROGS WORKLOAD...
one() {
	local type=$1 extra=$2 progs=$3
	shift 3
	"$P" "$@" >"$SL_TMP/prog.out" 2>&1 &
	local pid=$! n=0
	until grep -q ready "$SL_TMP/prog.out"; do
		[ $n -lt 100 ] || fail "workload not ready"
		sleep 0.1
		n=$((n + 1))
	done
	local id
	id=$(task_create "{\"type\":\"$type\",\"target\":{\"pid\":$pid},\"duration_s\":8$extra}")
	task_wait_running "$id"
	kill -USR1 "$pid"
	wait "$pid"
	sleep 0.5
	local js
	js=$(bpftool prog show --json)
	local p cnt ns
	for p in $progs; do
		# by name (bpftool here lists no pids): only this branch's task objects have these names
		read -r cnt ns < <(printf '%s' "$js" | jq -r --arg n "$p" \
			'[.[] | select(.name == $n)] |
			 "\(map(.run_cnt // 0) | add // 0) \(map(.run_time_ns // 0) | add // 0)"')
		echo "$type$extra $p $cnt $ns" >>"$OUT"
	done
	local r
	r=$(task_wait "$id" 60)
	echo "$type$extra progress $(printf '%s' "$r" | jq -r '.progress | "\(.events) \(.matched)"')" >>"$OUT"
}

for _ in $(seq 1 "$REPEATS"); do
	one profile_mem_virtual "" "mmap_enter mmap_exit munmap_enter munmap_exit brk_enter brk_exit" mem 1024 32
	one profile_page_faults "" "pf_user" mem 1024 32
	one profile_page_faults ',"fault_period":1' "pf_user" mem 1024 32
	one profile_resident "" "rss_stat" mem 1024 32
	one profile_futex "" "futex_enter futex_exit" futex 400
	one profile_lock_kernel "" "lock_begin lock_end" kmmap 2
done
sl_agent_stop >/dev/null

# median / min / max of ns per run for each (type, prog)
[ -n "${SL_BENCH_RAW:-}" ] && cp "$OUT" "$SL_BENCH_RAW"
table=$(python3 - "$OUT" <<'PY'
import sys, statistics
runs, prog = {}, {}
for line in open(sys.argv[1]):
    t, p, a, b = line.split()
    if p == "progress":
        prog.setdefault(t, (int(a), int(b)))
    elif int(a) > 0:
        runs.setdefault((t, p), []).append((int(b) / int(a), int(a)))
for (t, p), v in sorted(runs.items()):
    ns = sorted(x[0] for x in v)
    ev, m = prog.get(t, (0, 0))
    print("| `%s` | `%s` | %.0f | %.0f-%.0f | %d | %d of %d |" % (t, p, statistics.median(ns), ns[0], ns[-1], v[0][1], m, ev))
PY
)
{
	echo "### Memory and lock profile hooks: kernel ns per event"
	echo
	echo "\`bench/prof-kinds-cost.sh $B $REPEATS\`, $(date -u +%Y-%m-%d), kernel $(uname -r), $(nproc) CPUs;"
	echo "the machine was shared with other builds and tests (loaded). Per program: median and"
	echo "min-max over $REPEATS runs of run_time_ns/run_cnt (kernel.bpf_stats_enabled=1) over an 8 s task on a"
	echo "process target running sl-kindprog; runs and matched (target) events of the first run."
	echo
	echo "| task type | program | ns/run (median) | min-max | runs | matched of events |"
	echo "|---|---|---|---|---|---|"
	echo "$table"
} | tee "$SL_TMP/section.md"
[ -n "${SL_BENCH_RESULTS:-}" ] && cp "$SL_TMP/section.md" "$SL_BENCH_RESULTS"
exit 0
