#!/bin/bash
# bench-section: exec-storm
# Exec storm benchmark (issue 2 item 10, issue 13 item 3): the BPF cost of
# sandlensd's exec/exit hot path (the proc module's handle_exec,
# handle_exit, handle_signal) per exec, side by side with libbpf-tools
# execsnoop and with a floor program of our own, all three observing the
# same storms, repeated.
#
#   bench/exec-storm.sh [BUILD_DIR]          (root; default build/)
#
# Env: BENCH_REPEATS  repeats (default 5; >= 5 for a figure)
#      BENCH_EXECS    execs per repeat (default 10000, >= 2000)
#      BENCH_PAR      parallel storm processes (default: number of CPUs)
#      BENCH_ALL_MODULES=1  run sandlensd with its default config (every
#                   module); default: the proc module only
#      SL_BENCH_RESULTS=FILE  write the markdown section to FILE (make bench)
#
# How: kernel.bpf_stats_enabled=1 (restored after). Each repeat starts the
# three tools in a rotated attach order (a tracepoint runs its programs in
# attach order; the first pays the cache misses on the task), so over the
# repeats each tool runs first, second and third:
#   sandlensd  proc module (exec_rate/exec_burst defaults: most execs of a
#              storm are rate limited; the few delivered carry argv,
#              filename and the task's identity)
#   execsnoop  libbpf-tools, defaults, stdout to /dev/null
#   floor      build/bench/sl-exec-floor (bench/floor/exec_floor.bpf.c):
#              on the same three tp_btf hooks, a clock read and a 16-byte
#              ring-buffer record per exec and per process exit, the fatal
#              signal test; a reader drains the ring (the least an
#              exec/exit event tool does)
# then BENCH_PAR processes run `sl-testprog storm N build/helpers/sl-true`
# (vfork+execve of a static no-op, one after another, waiting for each).
# Figures per repeat:
#   BPF ns per exec  Σ Δrun_time_ns of the tool's exec-path programs / execs
#                    (sandlensd: handle_exec + handle_exit + handle_signal
#                    + cprof_exec of continuous profiling;
#                    execsnoop: its two execve tracepoint programs; floor:
#                    its three), from bpftool prog show (prog ids from
#                    /proc/PID/fdinfo of each tool)
#   ratios           sandlensd / execsnoop and sandlensd / floor of the same
#                    repeat; median and min..max over the repeats
#   CPU              Δ(utime+stime) of /proc/<pid>/stat over the storm and
#                    1 s of drain, ms per 1,000 execs (user-space work; the
#                    BPF programs run in the exec'ing tasks' context)
# Goal (issue 13): median sandlensd/execsnoop <= 0.3.
set -u
cd "$(dirname "$0")/.." || exit 1
source tests/lib/common.sh
B=${1:-build}
export SL_BUILD=$B
REPS=${BENCH_REPEATS:-5}
N=${BENCH_EXECS:-10000}
PAR=${BENCH_PAR:-$(nproc)}
sl_init
export SL_START_TIMEOUT=${SL_START_TIMEOUT:-900}
sl_require_root
sl_require_btf
sl_require_cmd bpftool jq curl execsnoop
sl_require_build
FLOOR=$SL_BUILD/bench/sl-exec-floor
[ -x "$SL_BUILD/helpers/sl-testprog" ] && [ -x "$SL_BUILD/helpers/sl-true" ] || fail "helpers not built (make all)"
[ -x "$FLOOR" ] || fail "$FLOOR not built (make all)"
[ "$N" -ge 2000 ] || fail "BENCH_EXECS must be >= 2000"

if [ ! -e /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing || skip "cannot mount tracefs at /sys/kernel/tracing (execsnoop needs it)"
fi
old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
sl_on_exit "echo $old_stats > /proc/sys/kernel/bpf_stats_enabled"
echo 1 >/proc/sys/kernel/bpf_stats_enabled

HZ=$(getconf CLK_TCK)
START=$(date -u +%Y-%m-%dT%H:%MZ)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
OTHERS=$(pgrep -x sandlensd | wc -l)
OTHER_EXEC=$(bpftool prog show -j 2>/dev/null | jq '[.[] | select((.name // "") | test("handle_exec|sys_enter_execve|sys_exit_execve|sched_process_exec"))] | length')
COMMIT=$(git rev-parse --short HEAD 2>/dev/null)
echo "# exec-storm: $START, $(nproc) CPUs, kernel $(uname -r), load $LOAD0,"
echo "# $OTHERS other sandlensd, $OTHER_EXEC other exec programs loaded; commit $COMMIT"
echo "# repeats $REPS, $N execs each, $PAR storm processes"

cfg=""
if [ "${BENCH_ALL_MODULES:-0}" != 1 ]; then
	# the proc module and continuous profiling (on by default; its
	# cprof_exec program runs on every exec too)
	cfg=$(for m in sched mem stall io net hw gpu stats; do printf '%s:\n  enabled: false\n' "$m"; done)
fi

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# prog ids held by process $1 (from /proc/PID/fdinfo)
held_ids() { grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -un; }
# one snapshot: "tool id name run_time_ns run_cnt" for every program of IDMAP
snap() {
	bpftool prog show -j | jq -r --argjson m "$IDMAP" \
		'.[] | select($m[(.id|tostring)]) | "\($m[(.id|tostring)]) \(.id) \(.name) \(.run_time_ns // 0) \(.run_cnt // 0)"'
}

ES= FLP=
start_tool() {
	local n=0
	case $1 in
	sl)
		SL_LOG_LEVEL=warn sl_agent_start "$cfg"
		;;
	es)
		execsnoop >/dev/null 2>"$SL_TMP/execsnoop.stderr" &
		ES=$!
		until [ -n "$(held_ids "$ES")" ]; do
			kill -0 "$ES" 2>/dev/null || fail "execsnoop exited: $(cat "$SL_TMP/execsnoop.stderr")"
			n=$((n + 1)); [ $n -lt 100 ] || fail "execsnoop loaded no BPF program in 10 s"
			sleep 0.1
		done
		;;
	fl)
		"$FLOOR" >"$SL_TMP/floor.out" 2>&1 &
		FLP=$!
		until grep -q ready "$SL_TMP/floor.out" 2>/dev/null; do
			kill -0 "$FLP" 2>/dev/null || { cat "$SL_TMP/floor.out"; fail "sl-exec-floor did not start"; }
			n=$((n + 1)); [ $n -lt 100 ] || fail "sl-exec-floor not ready in 10 s"
			sleep 0.1
		done
		;;
	esac
	sleep 0.5 # the next tool attaches after this one
}
stop_tools() {
	sl_agent_stop || true
	[ -n "$ES" ] && { kill -INT "$ES" 2>/dev/null; wait "$ES" 2>/dev/null; ES=; }
	[ -n "$FLP" ] && { kill -TERM "$FLP" 2>/dev/null; wait "$FLP" 2>/dev/null; FLP=; }
}
sl_on_exit stop_tools

# The exec-path programs of each tool.
SL_PROGS="handle_exec handle_exit handle_signal cprof_exec"
FL_PROGS="handle_exec handle_exit handle_signal"
ES_PROGS="tracepoint__syscalls__sys_enter_execve tracepoint__syscalls__sys_exit_execve"

RES=$SL_TMP/res # "rep tool prog ns_per_run runs dns" and "rep tool EXEC ns_per_exec execs 0"
CPU=$SL_TMP/cpu # "rep tool ms_per_1000_execs"
EVS=$SL_TMP/evs # "rep delivered rate_limited dropped exit_delivered execs_per_s"
: >"$RES"; : >"$CPU"; : >"$EVS"
tools=(sl es fl)
per=$(((N + PAR - 1) / PAR))
for ((r = 1; r <= REPS; r++)); do
	order=()
	for i in 0 1 2; do order+=("${tools[$(((i + r - 1) % 3))]}"); done
	for t in "${order[@]}"; do start_tool "$t"; done
	IDMAP=$({
		for i in $(held_ids "$SL_AGENT_PID"); do echo "\"$i\":\"sandlensd\""; done
		for i in $(held_ids "$ES"); do echo "\"$i\":\"execsnoop\""; done
		for i in $(held_ids "$FLP"); do echo "\"$i\":\"floor\""; done
	} | paste -sd, - | sed 's/^/{/;s/$/}/')
	if [ "$r" = 1 ]; then
		bpftool prog show -j | jq -r --argjson m "$IDMAP" \
			'.[] | select($m[(.id|tostring)]) | "\($m[(.id|tostring)]) \(.name) \(.bytes_xlated / 8) \(.bytes_jited)"' |
			sort >"$SL_TMP/xlated"
		grep -E "handle_(exec|exit|signal)|execve" "$SL_TMP/xlated" |
			awk '{printf "# xlated: %-9s %-40s %4d insns, %5d bytes jited\n", $1, $2, $3, $4}'
	fi
	sleep 1
	ag0=$(cpu_ticks "$SL_AGENT_PID"); es0=$(cpu_ticks "$ES"); fl0=$(cpu_ticks "$FLP")
	ev0=$(sl_metric sandlens_events_total 'type="exec"')
	ex0=$(sl_metric sandlens_events_total 'type="exit"')
	rl0=$(sl_metric sandlens_exec_rate_limited_total)
	dr0=$(sl_metric sandlens_events_dropped_total 'type="exec"')
	snap >"$SL_TMP/s0"
	pids=()
	for i in $(seq 1 "$PAR"); do
		"$SL_BUILD/helpers/sl-testprog" storm "$per" "$SL_BUILD/helpers/sl-true" >"$SL_TMP/storm.$i" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || fail "a storm process failed"; done
	snap >"$SL_TMP/s1"
	sleep 1 # let the readers drain
	ag1=$(cpu_ticks "$SL_AGENT_PID"); es1=$(cpu_ticks "$ES"); fl1=$(cpu_ticks "$FLP")
	ev1=$(sl_metric sandlens_events_total 'type="exec"')
	ex1=$(sl_metric sandlens_events_total 'type="exit"')
	rl1=$(sl_metric sandlens_exec_rate_limited_total)
	dr1=$(sl_metric sandlens_events_dropped_total 'type="exec"')
	execs=$(cat "$SL_TMP"/storm.* | jq -s 'map(.execs) | add')
	loop_s=$(cat "$SL_TMP"/storm.* | jq -s 'map(.seconds) | max')
	rate=$(awk -v e="$execs" -v s="$loop_s" 'BEGIN{printf "%.0f", e / s}')
	echo "$r $((ev1 - ev0)) $((rl1 - rl0)) $((dr1 - dr0)) $((ex1 - ex0)) $rate" >>"$EVS"
	for t in sandlensd:$ag0:$ag1 execsnoop:$es0:$es1 floor:$fl0:$fl1; do
		IFS=: read -r n a b <<<"$t"
		awk -v r="$r" -v n="$n" -v a="$a" -v b="$b" -v hz="$HZ" -v e="$execs" \
			'BEGIN{printf "%d %s %.2f\n", r, n, (b - a) / hz * 1000 * 1000 / e}' >>"$CPU"
	done
	join <(awk '{print $1"/"$2"/"$3, $4, $5}' "$SL_TMP/s0" | sort) <(awk '{print $1"/"$2"/"$3, $4, $5}' "$SL_TMP/s1" | sort) |
		awk -v r="$r" -v e="$execs" -v slp=" $SL_PROGS " -v esp=" $ES_PROGS " '
		{ split($1, k, "/"); dt = $4 - $2; dc = $5 - $3
		  printf "%d %s %s %.1f %d %d\n", r, k[1], k[3], dc ? dt / dc : 0, dc, dt
		  hot = (k[1] == "sandlensd" && index(slp, " " k[3] " ")) || (k[1] == "execsnoop" && index(esp, " " k[3] " ")) || k[1] == "floor"
		  if (hot) H[k[1]] += dt
		  A[k[1]] += dt }
		END { for (t in H) printf "%d %s EXEC %.1f %d 0\n", r, t, H[t] / e, e
		      for (t in A) printf "%d %s ALL %.1f %d 0\n", r, t, A[t] / e, e }' >>"$RES"
	awk -v r="$r" -v o="${order[*]}" -v rate="$rate" '
		$1 == r && $3 == "EXEC" { v[$2] = $4; e = $5 }
		END { printf "repeat %d order %-9s %6d execs (%s/s)  BPF ns/exec: sandlensd %7.1f  execsnoop %7.1f  floor %6.1f  sl/es %.3f  sl/floor %.2f\n",
			r, o, e, rate, v["sandlensd"], v["execsnoop"], v["floor"], v["sandlensd"] / v["execsnoop"], v["sandlensd"] / v["floor"] }' "$RES"
	stop_tools
done

# med FIELD-EXPR over repeats: "median min max" of the values in stdin (one per line)
medspread() {
	sort -g | awk '{v[NR] = $1} END { if (!NR) { print "- - -"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%s %s %s\n", f(m), f(v[1]), f(v[NR]) }
		function f(x) { return x >= 100 || x <= -100 ? sprintf("%.0f", x) : sprintf("%.3g", x) }'
}
per_rep() { awk -v t="$1" -v p="$2" '$2 == t && $3 == p {print $1, $4}' "$RES" | sort -n; }
ratio() { join <(per_rep "$1" "$3") <(per_rep "$2" "$3") | awk '$3 > 0 {printf "%.4f\n", $2 / $3}'; }
read -r SL_M SL_MIN SL_MAX < <(per_rep sandlensd EXEC | awk '{print $2}' | medspread)
read -r ES_M ES_MIN ES_MAX < <(per_rep execsnoop EXEC | awk '{print $2}' | medspread)
read -r FL_M FL_MIN FL_MAX < <(per_rep floor EXEC | awk '{print $2}' | medspread)
read -r RE_M RE_MIN RE_MAX < <(ratio sandlensd execsnoop EXEC | medspread)
read -r RF_M RF_MIN RF_MAX < <(ratio sandlensd floor EXEC | medspread)
read -r SA_M SA_MIN SA_MAX < <(per_rep sandlensd ALL | awk '{print $2}' | medspread)
cpu_of() { awk -v t="$1" '$2 == t {print $3}' "$CPU" | medspread; }
read -r CS_M CS_MIN CS_MAX < <(cpu_of sandlensd)
read -r CE_M CE_MIN CE_MAX < <(cpu_of execsnoop)
read -r CF_M CF_MIN CF_MAX < <(cpu_of floor)
read -r RATE_M RATE_MIN RATE_MAX < <(awk '{print $6}' "$EVS" | medspread)
EV_SUM=$(awk '{d += $2; l += $3; x += $4; e += $5} END {printf "exec delivered %d, exec rate limited %d, exec dropped %d, exit delivered %d", d, l, x, e}' "$EVS")
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
verdict=PASS
awk -v a="$RE_M" 'BEGIN { exit !(a <= 0.3) }' || verdict=FAIL

echo
echo "BPF ns per exec, median (min..max) over $REPS repeats:"
echo "  sandlensd $SL_M ($SL_MIN..$SL_MAX)  execsnoop $ES_M ($ES_MIN..$ES_MAX)  floor $FL_M ($FL_MIN..$FL_MAX)"
echo "  sandlensd/execsnoop $RE_M ($RE_MIN..$RE_MAX)  sandlensd/floor $RF_M ($RF_MIN..$RF_MAX)"
echo "  sandlensd, all its programs: $SA_M ($SA_MIN..$SA_MAX) ns per exec"
echo "CPU ms per 1,000 execs: sandlensd $CS_M ($CS_MIN..$CS_MAX)  execsnoop $CE_M ($CE_MIN..$CE_MAX)  floor $CF_M ($CF_MIN..$CF_MAX)"
echo "storm rate $RATE_M execs/s ($RATE_MIN..$RATE_MAX); sandlensd events over the repeats: $EV_SUM"
echo "load $LOAD0 -> $LOAD1"
echo "goal (median sandlensd/execsnoop <= 0.3): $verdict"
echo "per program, median ns/run (runs):"
for t in sandlensd execsnoop floor; do
	case $t in execsnoop) ps=$ES_PROGS ;; floor) ps=$FL_PROGS ;; *) ps=$SL_PROGS ;; esac
	for p in $ps; do
		read -r m mn mx < <(per_rep "$t" "$p" | awk '{print $2}' | medspread)
		runs=$(awk -v t="$t" -v p="$p" '$2 == t && $3 == p {print $5}' "$RES" | medspread | cut -d' ' -f1)
		printf '  %-9s %-40s %7s (%s..%s) %s\n' "$t" "$p" "$m" "$mn" "$mx" "$runs"
	done
done

if [ -n "${SL_BENCH_RESULTS:-}" ]; then
	{
		echo "## Exec storm: the exec/exit hot path vs libbpf-tools execsnoop and a floor (bench/exec-storm.sh)"
		echo
		echo "Command: \`bench/exec-storm.sh $B\` (BENCH_REPEATS=$REPS BENCH_EXECS=$N BENCH_PAR=$PAR${BENCH_ALL_MODULES:+ BENCH_ALL_MODULES=$BENCH_ALL_MODULES}), $START,"
		echo "commit $COMMIT. Host: $(nproc) CPUs, kernel $(uname -r); load average before the run $LOAD0, after $LOAD1;"
		echo "other sandlensd processes: $OTHERS; other exec programs loaded: $OTHER_EXEC. The machine was shared"
		echo "(other builds and tests running): absolute figures are noisy, the same-repeat ratios less."
		echo
		echo "sandlensd ($( [ "${BENCH_ALL_MODULES:-0}" = 1 ] && echo 'default config, every module' || echo 'proc module and continuous profiling')), execsnoop (libbpf-tools, stdout to /dev/null) and the floor"
		echo "(bench/floor/exec_floor.bpf.c: clock + 16-byte ring-buffer record per exec and per process exit, the fatal-signal"
		echo "test, a reader draining the ring) attached together, restarted in a rotated attach order every repeat; each"
		echo "repeat: $PAR parallel \`sl-testprog storm $per sl-true\` (vfork+execve of a static no-op), $REPS repeats,"
		echo "storm rate $RATE_M execs/s median ($RATE_MIN..$RATE_MAX). BPF ns per exec = Σ Δrun_time_ns of the tool's"
		echo "exec-path programs / execs (\`kernel.bpf_stats_enabled=1\`; sandlensd: handle_exec + handle_exit + handle_signal"
		echo "+ the continuous profiler's cprof_exec)."
		echo "Median (min..max) over the repeats; ratios are per repeat:"
		echo
		echo "| | sandlensd | execsnoop | floor | sandlensd / execsnoop | sandlensd / floor |"
		echo "|---|---:|---:|---:|---:|---:|"
		echo "| BPF ns per exec | $SL_M ($SL_MIN..$SL_MAX) | $ES_M ($ES_MIN..$ES_MAX) | $FL_M ($FL_MIN..$FL_MAX) | **$RE_M** ($RE_MIN..$RE_MAX) | **$RF_M** ($RF_MIN..$RF_MAX) |"
		echo "| user-space CPU ms per 1,000 execs | $CS_M ($CS_MIN..$CS_MAX) | $CE_M ($CE_MIN..$CE_MAX) | $CF_M ($CF_MIN..$CF_MAX) | | |"
		echo
		echo "Goal (issue 13): median sandlensd/execsnoop ≤ 0.3: **$verdict**. All of sandlensd's programs over the storm"
		echo "(other hooks the storm touches included): $SA_M ($SA_MIN..$SA_MAX) ns per exec."
		echo
		echo "sandlensd events, summed over the repeats: $EV_SUM (default exec_rate/exec_burst: a storm from one parent"
		echo "is rate limited per (ppid, comm); clean exits of processes whose exec was suppressed are counted in"
		echo "sandlens_exit_suppressed_total, not sent)."
		echo
		echo "Per program: median ns/run over the repeats (runs per repeat), and size (xlated instructions):"
		echo
		echo "| tool | program | ns/run | runs | xlated insns |"
		echo "|---|---|---:|---:|---:|"
		for t in sandlensd execsnoop floor; do
			case $t in execsnoop) ps=$ES_PROGS ;; floor) ps=$FL_PROGS ;; *) ps=$SL_PROGS ;; esac
			for p in $ps; do
				read -r m _ _ < <(per_rep "$t" "$p" | awk '{print $2}' | medspread)
				runs=$(awk -v t="$t" -v p="$p" '$2 == t && $3 == p {print $5}' "$RES" | medspread | cut -d' ' -f1)
				x=$(awk -v t="$t" -v p="$p" '$1 == t && $2 == p {print $3; exit}' "$SL_TMP/xlated")
				echo "| $t | $p | $m | $runs | ${x:-?} |"
			done
		done
	} >"$SL_BENCH_RESULTS"
	note "results section written to $SL_BENCH_RESULTS"
fi
[ "$verdict" = PASS ]
