#!/bin/bash
# Per-event BPF cost of the stall module's hooks against a floor program on
# the same hooks (issue 11, item 5), and the per-tick hung-task scan time.
#
#   bench/stall-overhead.sh [BUILD_DIR] [ROUNDS]
#
# sandlensd (defaults: every stall hook) and the floor (bench/stall_floor.bpf.c:
# the same tracepoints and a cpu-clock perf event per CPU at the module's
# 1 ms period, each body one per-CPU array add; loaded by
# bench/stall_floor_load.c) are attached at the same time, so both see the
# same events. kernel.bpf_stats_enabled=1 makes the kernel count run time
# and runs per program; per round (ROUNDS, default 5) the figure of a hook
# is Δrun_time_ns / Δrun_cnt over a 6 s loopback TCP blast (iperf3 -P 2):
# NET_RX/NET_TX/TIMER softirqs, virtio and timer hardirqs. The iter/task
# program's runs are tasks visited (its ns are per task); the scan time is
# sandlens_stall_scan_seconds sampled every second of the round. Prints
# median and min..max over the rounds; with SL_BENCH_RESULTS=FILE writes
# the markdown section for bench/RESULTS.md to FILE.
set -u
cd "$(dirname "$0")/.." || exit 1
source tests/lib/common.sh
B=${1:-build}
ROUNDS=${2:-5}
export SL_BUILD=$B
sl_init
sl_require_root
sl_require_btf
sl_require_cmd iperf3 jq curl bpftool clang cc
sl_require_build
[ -f "$SL_BUILD/vmlinux.h" ] || fail "$SL_BUILD/vmlinux.h missing (make builds it)"

clang -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/') \
	-I"$SL_BUILD" -c bench/stall_floor.bpf.c -o "$SL_TMP/floor.bpf.o" || fail "cannot build the floor programs"
cc -O2 -Wall -o "$SL_TMP/floor_load" bench/stall_floor_load.c $(pkg-config --libs libbpf) || fail "cannot build the floor loader"

old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
sl_on_exit "echo $old_stats > /proc/sys/kernel/bpf_stats_enabled"
echo 1 >/proc/sys/kernel/bpf_stats_enabled

others=$(pgrep -x sandlensd | wc -l)
[ "$others" -gt 0 ] && note "warning: $others other sandlensd process(es) running on this host (shared machine)"
sl_agent_start
mkfifo "$SL_TMP/floor.in"
"$SL_TMP/floor_load" "$SL_TMP/floor.bpf.o" 1000000 <"$SL_TMP/floor.in" >"$SL_TMP/floor.out" 2>"$SL_TMP/floor.err" &
FL=$!
exec 9>"$SL_TMP/floor.in"
sl_on_exit "exec 9>&-; kill $FL"
for _ in $(seq 50); do grep -q ready "$SL_TMP/floor.out" 2>/dev/null && break; sleep 0.1; done
grep -q ready "$SL_TMP/floor.out" || fail "floor loader: $(cat "$SL_TMP/floor.err")"

# prog name -> id for a process (from its fds)
prog_ids() {
	local id
	for id in $(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -un); do
		bpftool prog show id "$id" -j 2>/dev/null | jq -r '"\(.name) \(.id)"'
	done
}
prog_ids "$SL_AGENT_PID" | grep -E '^stall_' >"$SL_TMP/sl.ids"
prog_ids "$FL" | grep -E '^floor_' >"$SL_TMP/fl.ids"
HOOKS="softirq_raise softirq_entry softirq_exit irq_entry irq_exit tick"
for h in $HOOKS; do
	grep -q "^stall_$h " "$SL_TMP/sl.ids" || fail "stall_$h not found in the agent (got $(tr '\n' ' ' <"$SL_TMP/sl.ids"))"
	grep -q "^floor_$h " "$SL_TMP/fl.ids" || fail "floor_$h not loaded"
done
# stats of one prog name: "run_time_ns run_cnt" (bpftool truncates names to 15 chars)
stats() { # FILE NAME
	local id
	id=$(awk -v n="$2" '$1 == n {print $2}' "$1")
	bpftool prog show id "$id" -j | jq -r '"\(.run_time_ns // 0) \(.run_cnt // 0)"'
}
snap() { # -> file with "name rt cnt"
	local f=$1 n
	: >"$f"
	for n in $(awk '{print $1}' "$SL_TMP/sl.ids" "$SL_TMP/fl.ids" | sort); do
		case "$n" in
		stall_*) echo "$n $(stats "$SL_TMP/sl.ids" "$n")" >>"$f" ;;
		*) echo "$n $(stats "$SL_TMP/fl.ids" "$n")" >>"$f" ;;
		esac
	done
}
PORT=$(sl_free_port)
: >"$SL_TMP/rounds.txt"
: >"$SL_TMP/scan.txt"
for r in $(seq "$ROUNDS"); do
	iperf3 -s -p "$PORT" -1 >/dev/null 2>&1 &
	IS=$!
	sleep 0.3
	snap "$SL_TMP/a"
	iperf3 -c 127.0.0.1 -p "$PORT" -t 6 -P 2 >/dev/null 2>&1 &
	IC=$!
	for _ in 1 2 3 4 5 6; do
		sleep 1
		sl_metric_raw=$(curl -sf "$SL_API/metrics" | awk '$1 == "sandlens_stall_scan_seconds" {print $2} $1 == "sandlens_stall_scan_tasks" {t = $2} END {}')
		echo "$sl_metric_raw" >>"$SL_TMP/scan.txt"
	done
	wait "$IC"
	snap "$SL_TMP/b"
	wait "$IS" 2>/dev/null
	join "$SL_TMP/a" "$SL_TMP/b" | awk -v r="$r" '{ dc = $5 - $3; printf "%s %s %.1f %d\n", r, $1, (dc > 0 ? ($4 - $2) / dc : 0), dc }' >>"$SL_TMP/rounds.txt"
done
# dtasks: ns per task visited
cp "$SL_TMP/rounds.txt" "$SL_LOGDIR/rounds.txt"
med() { sort -n | awk '{v[NR] = $1} END {if (NR == 0) {print "-"; exit} m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f %.1f %.1f\n", m, v[1], v[NR]}'; }
printf '%-16s %22s %22s %10s %12s\n' hook "stall ns/run (min..max)" "floor ns/run (min..max)" ratio "runs/round"
OUT=""
for h in $HOOKS; do
	read -r sm smin smax < <(awk -v n="stall_$h" '$2 == n {print $3}' "$SL_TMP/rounds.txt" | med)
	read -r fm fmin fmax < <(awk -v n="floor_$h" '$2 == n {print $3}' "$SL_TMP/rounds.txt" | med)
	runs=$(awk -v n="stall_$h" '$2 == n {s += $4; c++} END {printf "%d", c ? s / c : 0}' "$SL_TMP/rounds.txt")
	ratio=$(awk -v a="$sm" -v b="$fm" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')
	printf '%-16s %8s (%s..%s) %8s (%s..%s) %10s %12s\n' "$h" "$sm" "$smin" "$smax" "$fm" "$fmin" "$fmax" "$ratio" "$runs"
	OUT+="| \`$h\` | $sm ($smin..$smax) | $fm ($fmin..$fmax) | $ratio | $runs |"$'\n'
done
read -r dm dmin dmax < <(awk '$2 == "stall_dtasks" && $4 > 0 {print $3}' "$SL_TMP/rounds.txt" | med)
dt=$(awk '$2 == "stall_dtasks" {s += $4; c++} END {printf "%d", c ? s / c : 0}' "$SL_TMP/rounds.txt")
read -r scm scmin scmax < <(awk 'NF {print $1 * 1e6}' "$SL_TMP/scan.txt" | med)
NT=$(ls /proc | grep -c '^[0-9]')
printf 'iter/task: %s ns per task visited (%s..%s), %s task visits/round; scan %s us per tick (%s..%s), %s processes on the host\n' \
	"$dm" "$dmin" "$dmax" "$dt" "$scm" "$scmin" "$scmax" "$NT"
if [ -n "${SL_BENCH_RESULTS:-}" ]; then
	{
		echo "## stall module"
		echo
		echo "\`bench/stall-overhead.sh $B $ROUNDS\` ($(date -u +%Y-%m-%d), kernel $(uname -r), $(nproc) vCPUs, shared with"
		echo "other helpers' builds and tests: noisy). sandlensd (defaults) and a floor program on the same"
		echo "hooks (one per-CPU array add; cpu-clock at the same 1 ms period, pinned) attached together;"
		echo "$ROUNDS rounds of a 6 s loopback iperf3 -P 2 blast; BPF ns per run from kernel.bpf_stats_enabled"
		echo "(Δrun_time_ns / Δrun_cnt per round), median (min..max) over the rounds."
		echo
		echo "| hook | stall ns/run | floor ns/run | ratio | runs/round |"
		echo "|---|---|---|---|---|"
		printf '%s' "$OUT"
		echo
		echo "Hung-task scan (\`iter/task\` each tick): $dm ns of BPF per task visited ($dmin..$dmax; the program"
		echo "runs once per task, D or not, and writes a record only for D tasks), wall time of one scan"
		echo "(\`sandlens_stall_scan_seconds\`: iterator read + bookkeeping) $scm µs median ($scmin..$scmax)"
		echo "with $NT processes on the host; resolution 1 tick (1 s)."
		echo "\`sched_process_hang\` did not fire during the bench (no hung task): no figure."
	} >"$SL_BENCH_RESULTS"
fi
