#!/bin/bash
# bench-section: sched-overhead
# BPF cost per context switch of sandlens' sched module vs libbpf-tools
# runqlat and vs a floor program, side by side on the same scheduler loads,
# repeated.
#
#   bench/sched-overhead.sh [BUILD_DIR]        (root; default build/)
#
# Env: BENCH_REPEATS  repeats of each load (default 6, >= 5 for a figure; a
#                     multiple of 3 gives each tool each position equally)
#      BENCH_MODE     alone (default) or together, below
#      BENCH_AGENT    full (default: sandlensd's default config, every module
#                     and continuous profiling on) or sched (only the sched
#                     module: its hot path without the cache traffic of the
#                     agent's other hooks and threads)
#      BENCH_LOOPS    `perf bench sched messaging -l` loops (default 1000)
#      BENCH_BUSY_S   seconds of the CPU-bound load (default 6)
#      BENCH_WAKEUP   1 (default): also sandlensd with sched.wait_source:
#                     wakeup (the fallback where the kernel keeps no
#                     sched_info) as a fourth tool; 0: not
#      BENCH_BASE     a build dir of another commit (alone mode): its
#                     sandlensd runs as a fourth tool, "base", for a same-run
#                     before/after of the sched programs
#      BENCH_BASE_CFG  YAML appended to the base agent's config (with
#                     BENCH_BASE=build: the same build under another
#                     setting, e.g. "sched:\n  watch: none")
#      SL_BENCH_RESULTS=FILE  write the markdown section to FILE (make bench)
#
# The tools: sandlensd with its defaults (sched.wait_source auto: on a
# kernel with CONFIG_SCHED_INFO one program per switch, tp_btf/sched_switch,
# reading the kernel's own enqueue stamps, and one per freed task,
# tp_btf/sched_process_free, giving its state slot back; else the three
# hooks below), runqlat with
# its defaults (one global histogram) and build/bench/sl-sched-floor
# (bench/floor/sched_floor.bpf.c: clock read + task-storage write only on
# tp_btf sched_wakeup, sched_wakeup_new and sched_switch, the least a tool
# that stamps wakeups itself does). kernel.bpf_stats_enabled=1 (restored
# after); the cost of a tool = Σ Δrun_time_ns over its scheduler programs
# / Δrun_cnt of its sched_switch program during one load: BPF ns per
# context switch (every tool runs one program per switch; runqlat and the
# floor also one per wakeup, which this counts against them, and sandlensd
# by default none but one per freed task, counted against it likewise: a
# per-program-run average would hide that).
# Loads, each run in every repeat, alternating which goes first:
#   messaging  `perf bench sched messaging -g 10 -l LOOPS` in one v2 cgroup
#              (waits mostly internal: woken by / behind the same cgroup)
#   busy       two v2 cgroups ("containers") each with one CPU-bound shell
#              loop, both pinned to the same CPU, for BENCH_BUSY_S seconds
#              (waits external: the neighbour holds the CPU; cold caches)
# Modes:
#   alone     in every repeat each load runs three times back to back, once
#             under each tool attached alone (the order rotated per repeat):
#             each tool pays its own cache misses, as when it is the only
#             one on the host. The default.
#   together  the three tools attached at once, each load run once per
#             repeat (the same window for all three), the attach order
#             rotated per repeat. A tracepoint runs its programs in attach
#             order and the first one pays the cold task_struct and storage
#             lines of prev and next: on this kind of host that moves a
#             tool's figure by up to 2x, more than the programs differ, so
#             a together ratio mostly says who was first.
# The figures are the per-repeat ratios sandlens/runqlat and sandlens/floor:
# median and min..max over the repeats. Goals (issue 13): median
# sandlens/runqlat <= 0.35 and sandlens/floor <= 2 on both loads; printed as
# PASS/FAIL.
set -u
cd "$(dirname "$0")/.." || exit 1
source tests/lib/common.sh
B=${1:-build}
export SL_BUILD=$B
REPS=${BENCH_REPEATS:-6}
MODE=${BENCH_MODE:-alone}
case $MODE in alone | together) ;; *) echo "BENCH_MODE must be alone or together" >&2; exit 2 ;; esac
BASE=${BENCH_BASE:-}
if [ -n "$BASE" ]; then
	case $BASE in /*) ;; *) BASE=$PWD/$BASE ;; esac
	[ -x "$BASE/sandlensd" ] || { echo "BENCH_BASE: no $BASE/sandlensd" >&2; exit 2; }
	[ "$MODE" = alone ] || { echo "BENCH_BASE needs BENCH_MODE=alone" >&2; exit 2; }
fi
AGENT=${BENCH_AGENT:-full}
case $AGENT in
full) AGENT_CFG= ;;
sched)
	AGENT_CFG="stats:
  enabled: false
profiling:
  continuous:
    enabled: false"
	for m in proc mem io net stall hw gpu; do AGENT_CFG+=$'\n'"$m:"$'\n'"  enabled: false"; done
	;;
*) echo "BENCH_AGENT must be full or sched" >&2; exit 2 ;;
esac
LOOPS=${BENCH_LOOPS:-1000}
WAKEUP=${BENCH_WAKEUP:-1}
BUSY=${BENCH_BUSY_S:-6}
sl_init
export SL_START_TIMEOUT=${SL_START_TIMEOUT:-900}
sl_require_root
sl_require_btf
sl_require_cmd runqlat perf jq curl bpftool taskset
sl_require_build
FLOOR=$SL_BUILD/bench/sl-sched-floor
[ -x "$FLOOR" ] || fail "$FLOOR not built (make all)"

old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
sl_on_exit "echo $old_stats > /proc/sys/kernel/bpf_stats_enabled"
echo 1 >/proc/sys/kernel/bpf_stats_enabled

V2=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
[ -n "$V2" ] || skip "no cgroup v2 mount for the bench cgroups"
CG=$V2/sl-bench-sched-$$
mkdir -p "$CG-m" "$CG-a" "$CG-b" || fail "cannot create bench cgroups under $V2"
sl_on_exit "rmdir $CG-m $CG-a $CG-b 2>/dev/null"
BUSY_CPU=$(($(nproc) - 1))

START=$(date -u +%Y-%m-%dT%H:%MZ)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
OTHERS=$(pgrep -x sandlensd | wc -l)
# other programs on the scheduler tracepoints before we start (other
# agents' and tools' programs share the hooks and the caches)
OTHER_SCHED=$(bpftool prog show -j 2>/dev/null | jq '[.[] | select((.name // "") | test("sched_(wakeup|wakeup_new|switch)$"))] | length')
echo "# sched-overhead: $START, $(nproc) CPUs, kernel $(uname -r), load $LOAD0,"
echo "# $OTHERS other sandlensd, $OTHER_SCHED other programs named sched_wakeup/_new/switch loaded"
echo "# mode $MODE, agent $AGENT, repeats $REPS, messaging -g 10 -l $LOOPS, busy ${BUSY}s on CPU $BUSY_CPU, commit $(git rev-parse --short HEAD 2>/dev/null)"

# scheduler prog ids held by process $1 (from /proc/PID/fdinfo)
prog_ids() {
	local ids
	ids=$(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -un | paste -sd, -)
	[ -n "$ids" ] || return 0
	bpftool prog show -j | jq -r --argjson ids "[$ids]" \
		'.[] | select(.id as $i | $ids | index($i)) | select(.name | test("sched_(wakeup|wakeup_new|switch|switch_si|task_free)$")) | .id'
}

# one snapshot of every tool's programs: "tool name run_time_ns run_cnt"
snap() {
	bpftool prog show -j | jq -r --argjson m "$IDMAP" \
		'.[] | select($m[(.id|tostring)]) | "\($m[(.id|tostring)]) \(.name | sub("_si$"; "")) \(.run_time_ns // 0) \(.run_cnt // 0)"'
}

RQ= FLP= AGENT_KIND=sandlens
start_tool() {
	case $1 in
	sl)
		AGENT_KIND=sandlens
		SL_LOG_LEVEL=warn sl_agent_start "$AGENT_CFG"
		;;
	sw)
		AGENT_KIND=sandlens_wakeup
		SL_LOG_LEVEL=warn sl_agent_start "$AGENT_CFG${AGENT_CFG:+$'\n'}sched:
  wait_source: wakeup"
		;;
	sb)
		AGENT_KIND=base
		SL_BUILD=$BASE SL_LOG_LEVEL=warn sl_agent_start "$AGENT_CFG${BENCH_BASE_CFG:+$'\n'}${BENCH_BASE_CFG:-}"
		;;
	rq)
		runqlat 3600 1 >"$SL_TMP/runqlat.out" 2>&1 &
		RQ=$!
		;;
	fl)
		"$FLOOR" >"$SL_TMP/floor.out" 2>&1 &
		FLP=$!
		local n=0
		until grep -q ready "$SL_TMP/floor.out" 2>/dev/null; do
			kill -0 "$FLP" 2>/dev/null || { cat "$SL_TMP/floor.out"; fail "sl-sched-floor did not start"; }
			n=$((n + 1)); [ $n -lt 100 ] || fail "sl-sched-floor not ready in 10 s"
			sleep 0.1
		done
		;;
	esac
	sleep 0.5 # the next tool attaches after this one
}
stop_tools() {
	sl_agent_stop || true
	[ -n "$RQ" ] && { kill -INT "$RQ" 2>/dev/null; wait "$RQ" 2>/dev/null; RQ=; }
	[ -n "$FLP" ] && { kill -TERM "$FLP" 2>/dev/null; wait "$FLP" 2>/dev/null; FLP=; }
}
sl_on_exit stop_tools

load_messaging() {
	(echo $BASHPID >"$CG-m/cgroup.procs" && exec perf bench sched messaging -g 10 -l "$LOOPS" >/dev/null 2>&1)
}
load_busy() {
	local d pids=()
	for d in a b; do
		(echo $BASHPID >"$CG-$d/cgroup.procs" && exec taskset -c "$BUSY_CPU" sh -c 'while :; do :; done') &
		pids+=($!)
	done
	sleep "$BUSY"
	kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
}

# per-repeat results: RES lines "load rep tool prog ns runs" and
# "load rep tool ALL ns runs"
RES=$SL_TMP/res
: >"$RES"
: >"$SL_TMP/xlated"

# the scheduler programs of the running tools, checked: IDMAP (prog id ->
# tool name, JSON); the first time a tool is seen its program sizes go to
# $SL_TMP/xlated (instructions = bytes_xlated / 8)
map_tools() {
	local tool n
	IDMAP=$({
		[ -n "${SL_AGENT_PID:-}" ] && for i in $(prog_ids "$SL_AGENT_PID"); do echo "\"$i\":\"$AGENT_KIND\""; done
		[ -n "$RQ" ] && for i in $(prog_ids "$RQ"); do echo "\"$i\":\"runqlat\""; done
		[ -n "$FLP" ] && for i in $(prog_ids "$FLP"); do echo "\"$i\":\"floor\""; done
	} | paste -sd, - | sed 's/^/{/;s/$/}/')
	for tool in "$@"; do
		n=$(jq --arg t "$tool" '[.[] | select(. == $t)] | length' <<<"$IDMAP")
		# 3 (wakeup, wakeup_new, switch), or sandlensd's sched_switch_si and
		# sched_task_free (sched.wait_source sched_info; 1 for a build from
		# before sched_task_free, as BENCH_BASE)
		[ "$n" = 3 ] || [ "$n" = 2 ] || [ "$n" = 1 ] || fail "$tool: $n scheduler programs found, expected 3, 2 or 1 ($IDMAP)"
		grep -q "^$tool " "$SL_TMP/xlated" && continue
		bpftool prog show -j | jq -r --argjson m "$IDMAP" --arg t "$tool" \
			'.[] | select($m[(.id|tostring)] == $t) | "\($t) \(.name | sub("_si$"; "")) \(.bytes_xlated / 8) \(.bytes_jited)"' |
			sort | tee -a "$SL_TMP/xlated" |
			awk '{printf "# xlated: %-8s %-16s %4d insns, %5d bytes jited\n", $1, $2, $3, $4}'
	done
}
start_tools() {
	local t
	for t in "$@"; do start_tool "$t"; done
	[ -z "$RQ" ] || kill -0 "$RQ" 2>/dev/null || { cat "$SL_TMP/runqlat.out"; fail "runqlat did not start"; }
	local names=()
	for t in "$@"; do case $t in sl) names+=(sandlens) ;; sw) names+=(sandlens_wakeup) ;; sb) names+=(base) ;; rq) names+=(runqlat) ;; fl) names+=(floor) ;; esac; done
	map_tools "${names[@]}"
	sleep 1
}
# run load $1 of repeat $2 under the attached tools; RES lines
measure() {
	local l=$1 r=$2
	snap >"$SL_TMP/s0"
	load_$l
	snap >"$SL_TMP/s1"
	join <(awk '{print $1"/"$2, $3, $4}' "$SL_TMP/s0" | sort) <(awk '{print $1"/"$2, $3, $4}' "$SL_TMP/s1" | sort) |
		awk -v l="$l" -v r="$r" '{split($1, k, "/"); dt = $4 - $2; dc = $5 - $3
			printf "%s %d %s %s %.1f %d\n", l, r, k[1], k[2], dc ? dt / dc : 0, dc
			T[k[1]] += dt; if (k[2] == "sched_switch") C[k[1]] += dc }
			END { for (t in T) printf "%s %d %s ALL %.1f %d\n", l, r, t, C[t] ? T[t] / C[t] : 0, C[t] }' >>"$RES"
}

tools=(sl rq fl)
[ "$WAKEUP" = 1 ] && tools+=(sw)
[ -n "$BASE" ] && tools+=(sb)
NT=${#tools[@]}
for ((r = 1; r <= REPS; r++)); do
	order=()
	for ((i = 0; i < NT; i++)); do order+=("${tools[$(((i + r - 1) % NT))]}"); done
	if ((r % 2)); then loads=(messaging busy); else loads=(busy messaging); fi
	[ "$MODE" = together ] && start_tools "${order[@]}"
	for l in "${loads[@]}"; do
		t0=$(date +%s.%N)
		if [ "$MODE" = together ]; then
			measure "$l" "$r"
		else
			for t in "${order[@]}"; do
				start_tools "$t"
				measure "$l" "$r"
				stop_tools
			done
		fi
		t1=$(date +%s.%N)
		awk -v l="$l" -v r="$r" -v d="$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b - a}')" -v o="${order[*]}" '
			$1 == l && $2 == r && $4 == "ALL" { v[$3] = $5; c[$3] = $6 }
			END { printf "repeat %d %-9s %5ss order %-11s  sandlens %6.1f  runqlat %6.1f  floor %6.1f ns/switch (%d switches)  sl/rq %.3f  sl/floor %.2f",
				r, l, d, o, v["sandlens"], v["runqlat"], v["floor"], c["sandlens"], v["sandlens"] / v["runqlat"], v["sandlens"] / v["floor"]
				if (v["sandlens_wakeup"]) printf "  sandlens(wakeup) %6.1f /rq %.3f", v["sandlens_wakeup"], v["sandlens_wakeup"] / v["runqlat"]
				if (v["base"]) printf "  base %6.1f sl/base %.3f", v["base"], v["sandlens"] / v["base"]
				printf "\n" }' "$RES"
	done
	stop_tools
done

# median and min..max over the repeats of a per-repeat figure
# stat LOAD EXPR-over-(sl, rq, fl)  (awk expression)
summary() {
	awk -v l="$1" -v p="$2" '
		$1 == l && $4 == p { v[$2, $3] = $5; c[$2, $3] = $6; if ($2 > R) R = $2 }
		function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
		END {
			for (r = 1; r <= R; r++) {
				s[r] = v[r, "sandlens"]; q[r] = v[r, "runqlat"]; f[r] = v[r, "floor"]
				a[r] = s[r] / q[r]; b[r] = s[r] / f[r]; e[r] = c[r, "sandlens"]
				aa[r] = a[r]; bb[r] = b[r]
			}
			n = R
			mn_a = mx_a = a[1]; mn_b = mx_b = b[1]
			for (r = 2; r <= n; r++) { if (a[r] < mn_a) mn_a = a[r]; if (a[r] > mx_a) mx_a = a[r]; if (b[r] < mn_b) mn_b = b[r]; if (b[r] > mx_b) mx_b = b[r] }
			printf "%.1f %.1f %.1f %.0f %.3f %.3f %.3f %.2f %.2f %.2f\n", med(s, n), med(q, n), med(f, n), med(e, n),
				med(aa, n), mn_a, mx_a, med(bb, n), mn_b, mx_b
		}' "$RES"
}

verdict=PASS
echo
printf '%-10s %-16s %8s %8s %8s %9s  %-22s %-20s\n' load program sandlens runqlat floor switches "sl/rq med (min..max)" "sl/floor med (min..max)"
for l in messaging busy; do
	for p in ALL sched_wakeup sched_wakeup_new sched_switch; do
		read -r s q f e a amn amx b bmn bmx < <(summary "$l" "$p")
		printf '%-10s %-16s %8s %8s %8s %9s  %-22s %-20s\n' "$l" "$p" "$s" "$q" "$f" "$e" "$a ($amn..$amx)" "$b ($bmn..$bmx)"
		if [ "$p" = ALL ]; then
			awk -v a="$a" -v b="$b" 'BEGIN { exit !(a <= 0.35 && b <= 2.0) }' || verdict=FAIL
			eval "SUM_$l=\"\$s \$q \$f \$e \$a \$amn \$amx \$b \$bmn \$bmx\""
		fi
	done
done
echo
echo "goal (median sandlens/runqlat <= 0.35 and sandlens/floor <= 2 on both loads): $verdict"

# before/after: median ns of base and sandlens, median (min..max) of the
# per-repeat sandlens/base ratio. basesum LOAD PROG
basesum() {
	awk -v l="$1" -v p="$2" '
		$1 == l && $4 == p { v[$2, $3] = $5; if ($2 > R) R = $2 }
		function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
		END {
			for (r = 1; r <= R; r++) { b[r] = v[r, "base"]; s[r] = v[r, "sandlens"]; q[r] = b[r] ? s[r] / b[r] : 0; qq[r] = q[r] }
			mn = mx = q[1]; for (r = 2; r <= R; r++) { if (q[r] < mn) mn = q[r]; if (q[r] > mx) mx = q[r] }
			printf "%.1f %.1f %.3f %.3f %.3f\n", med(b, R), med(s, R), med(qq, R), mn, mx
		}' "$RES"
}
# the fallback (sandlens_wakeup) against runqlat and the floor. wakesum LOAD
wakesum() {
	awk -v l="$1" '
		$1 == l && $4 == "ALL" { v[$2, $3] = $5; if ($2 > R) R = $2 }
		function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
		END {
			for (r = 1; r <= R; r++) { w[r] = v[r, "sandlens_wakeup"]; q[r] = w[r] / v[r, "runqlat"]; f[r] = w[r] / v[r, "floor"]; qq[r] = q[r]; ff[r] = f[r] }
			qmn = qmx = q[1]; fmn = fmx = f[1]
			for (r = 2; r <= R; r++) { if (q[r] < qmn) qmn = q[r]; if (q[r] > qmx) qmx = q[r]; if (f[r] < fmn) fmn = f[r]; if (f[r] > fmx) fmx = f[r] }
			printf "%.1f %.3f %.3f %.3f %.2f %.2f %.2f\n", med(w, R), med(qq, R), qmn, qmx, med(ff, R), fmn, fmx
		}' "$RES"
}
if [ "$WAKEUP" = 1 ]; then
	echo
	echo "fallback (sched.wait_source: wakeup), ns per context switch:"
	for l in messaging busy; do
		read -r w q qmn qmx f fmn fmx < <(wakesum "$l")
		printf '%-10s sandlens(wakeup) %8s  /runqlat %s (%s..%s)  /floor %s (%s..%s)\n' "$l" "$w" "$q" "$qmn" "$qmx" "$f" "$fmn" "$fmx"
	done
fi
if [ -n "$BASE" ]; then
	echo
	echo "before/after (base = $BASE${BENCH_BASE_COMMIT:+, commit $BENCH_BASE_COMMIT}):"
	printf '%-10s %-16s %8s %8s  %s\n' load program base sandlens "sl/base med (min..max)"
	for l in messaging busy; do
		for p in ALL sched_wakeup sched_wakeup_new sched_switch; do
			read -r b sv q qmn qmx < <(basesum "$l" "$p")
			printf '%-10s %-16s %8s %8s  %s\n' "$l" "$p" "$b" "$sv" "$q ($qmn..$qmx)"
		done
	done
	awk '$1 == "base" {printf "# xlated: base     %-16s %4d insns\n", $2, $3}' "$SL_TMP/xlated"
fi

# xlated size of tool $1's program $2 ("-": none)
xl() { awk -v t="$1" -v p="$2" '$1 == t && $2 == p {n = $3 " insns"} END {print n ? n : "-"}' "$SL_TMP/xlated"; }
if [ -n "${SL_BENCH_RESULTS:-}" ]; then
	{
		echo "## sched module: BPF cost per context switch vs libbpf-tools runqlat and a floor (bench/sched-overhead.sh)"
		echo
		echo "Command: \`bench/sched-overhead.sh $B\` (BENCH_MODE=$MODE BENCH_AGENT=$AGENT BENCH_REPEATS=$REPS BENCH_LOOPS=$LOOPS BENCH_BUSY_S=$BUSY), $START,"
		echo "commit $(git rev-parse --short HEAD 2>/dev/null). Host: $(nproc) CPUs, kernel $(uname -r); load average before"
		echo "the run $LOAD0, after $(cut -d' ' -f1-3 /proc/loadavg); other sandlensd processes: $OTHERS; other programs"
		echo "on the scheduler hooks: $OTHER_SCHED."
		echo
		if [ "$MODE" = alone ]; then
			echo "Each tool attached alone for its own run of each load, the runs of a load back to back in every"
			echo "repeat, their order rotated per repeat;"
		else
			echo "All tools attached at once, restarted in a rotated attach order every repeat (the first attached pays"
			echo "the cold lines: see the script);"
		fi
		if [ "$AGENT" = sched ]; then
			echo "sandlensd with only the sched module (every other module, stats and continuous profiling off);"
		else
			echo "sandlensd with its default config (every module, continuous profiling on);"
		fi
		echo "sandlensd times waits from the kernel's sched_info (\`sched.wait_source\` auto: one program on"
		echo "tp_btf/sched_switch, \`sched_switch_si\`, shown as sched_switch below, and \`sched_task_free\` on"
		echo "tp_btf/sched_process_free, once per freed task; no wakeup programs); runqlat and the"
		echo "floor run on tp_btf sched_wakeup, sched_wakeup_new and sched_switch."
		echo "ns/switch = Σ Δrun_time_ns over a tool's scheduler programs / Δrun_cnt of its sched_switch program"
		echo "(\`kernel.bpf_stats_enabled=1\`): BPF ns per context switch of the load, wakeup and task-free programs included."
		echo "Floor: bench/floor/sched_floor.bpf.c (clock read + task-storage write only, on the three hooks). Loads: **messaging** = \`perf bench sched messaging -g 10 -l $LOOPS\` in one v2 cgroup;"
		echo "**busy** = two v2 cgroups with one CPU-bound loop each, both pinned to one CPU, ${BUSY} s."
		echo "The machine is shared (other agents, builds and test runs): see the load average."
		echo "Median over $REPS repeats (min..max of the same-run ratios):"
		echo
		echo "| load | sandlens ns/switch | runqlat ns/switch | floor ns/switch | switches | sandlens / runqlat | sandlens / floor |"
		echo "|---|---:|---:|---:|---:|---:|---:|"
		for l in messaging busy; do
			eval "set -- \$SUM_$l"
			echo "| $l | $1 | $2 | $3 | $4 | **$5** ($6..$7) | **$8** ($9..${10}) |"
		done
		echo
		echo "Goal (issue 13): median sandlens/runqlat ≤ 0.35 and sandlens/floor ≤ 2 on both loads: **$verdict**."
		echo
		echo "Per program, median ns/run (0: the tool has no such program), and size (xlated instructions):"
		echo
		echo "| load | program | sandlens | runqlat | floor |"
		echo "|---|---|---:|---:|---:|"
		for l in messaging busy; do
			for p in sched_wakeup sched_wakeup_new sched_switch; do
				read -r s q f _ < <(summary "$l" "$p")
				echo "| $l | $p | $s | $q | $f |"
			done
		done
		for p in sched_wakeup sched_wakeup_new sched_switch; do
			echo "| size | $p | $(xl sandlens $p) | $(xl runqlat $p) | $(xl floor $p) |"
		done
		if [ "$WAKEUP" = 1 ]; then
			echo
			echo "The fallback in the same run: sandlensd with \`sched.wait_source: wakeup\` (the wakeup and switch hooks, as"
			echo "runqlat; what a kernel without CONFIG_SCHED_INFO gets) as a fourth tool, \"sandlens (wakeup)\"; median ns per"
			echo "context switch and the median (min..max) of its per-repeat ratio to runqlat and to the floor:"
			echo
			echo "| load | sandlens (wakeup) ns/switch | / runqlat | / floor |"
			echo "|---|---:|---:|---:|"
			for l in messaging busy; do
				read -r w q qmn qmx f fmn fmx < <(wakesum "$l")
				echo "| $l | $w | $q ($qmn..$qmx) | $f ($fmn..$fmx) |"
			done
		fi
		if [ -n "$BASE" ]; then
			echo
			echo "Before/after in the same run: \"base\" = the sandlensd of commit ${BENCH_BASE_COMMIT:-?} as a fourth tool"
			echo "(BENCH_BASE), median ns/switch and the median (min..max) of the per-repeat ratio:"
			echo
			echo "| load | program | base | sandlens | sandlens / base |"
			echo "|---|---|---:|---:|---:|"
			for l in messaging busy; do
				for p in ALL sched_wakeup sched_wakeup_new sched_switch; do
					read -r b sv q qmn qmx < <(basesum "$l" "$p")
					echo "| $l | $p | $b | $sv | $q ($qmn..$qmx) |"
				done
			done
			for p in sched_wakeup sched_wakeup_new sched_switch; do
				echo "| size | $p | $(awk -v p=$p '$1 == "base" && $2 == p {print $3}' "$SL_TMP/xlated") insns | $(awk -v p=$p '$1 == "sandlens" && $2 == p {print $3}' "$SL_TMP/xlated") insns | |"
			done
		fi
	} >"$SL_BENCH_RESULTS"
	note "results section written to $SL_BENCH_RESULTS"
fi
[ "$verdict" = PASS ]
