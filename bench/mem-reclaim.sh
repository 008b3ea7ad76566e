#!/bin/bash
# bench-section: mem-reclaim
# Cost of sandlens' mem module during a reclaim storm (issue 9, item 7).
#
#   bench/mem-reclaim.sh [BUILD_DIR] [REPEATS] [ROUNDS]
#
# One storm = a kubepods runc container under a 64 MiB limit running
# `sl-testprog memstorm /data 24 ROUNDS 1` (24 MiB anonymous kept, a
# 192 MiB sparse file read ROUNDS times (default 300), 8 MiB anonymous churn
# per round): its memcg is reclaimed continuously (t_mem_reclaim's storm,
# longer). Each repeat (default 5) runs the storm twice, once under an
# agent with the mem module on and once with `mem: enabled: false`, and
# measures:
#   - BPF: kernel.bpf_stats_enabled=1; over the agent's mem_* programs
#     (found through its /proc/PID/fdinfo), Δrun_time_ns / Δrun_cnt = ns per
#     program run, and Σ Δrun_time_ns / memcg reclaim runs (the storm's
#     sandlens_mem_runs_total{kind="memcg_reclaim"} delta) = BPF ns per
#     reclaim run, everything a reclaim run costs (begin, end, the
#     lru_shrink_inactive calls inside it);
#   - agent CPU: utime+stime of sandlensd (/proc/PID/stat) from the start to
#     the end of the storm, mem on vs off; the difference is what the module
#     adds (its user half: the tick folding, /metrics is not scraped).
# Prints median and spread (min..max) over the repeats; with
# SL_BENCH_RESULTS=FILE writes the bench/RESULTS.md section to FILE. The
# host is shared: other agents and builds add noise to the CPU figures
# (the BPF figures are per run and do not depend on them).
set -u
cd "$(dirname "$0")/.." || exit 1
source tests/lib/common.sh
source tests/lib/container.sh
B=${1:-build}
REPEATS=${2:-5}
ROUNDS=${3:-300}
export SL_BUILD=$B
sl_init
sl_require_root
sl_require_btf
sl_require_cmd jq curl bpftool
sl_require_build
ct_require

old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
sl_on_exit "echo $old_stats > /proc/sys/kernel/bpf_stats_enabled"
echo 1 >/proc/sys/kernel/bpf_stats_enabled
HZ=$(getconf CLK_TCK)

mem_progs() {
	local id
	for id in $(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -un); do
		bpftool prog show id "$id" -j 2>/dev/null | jq -r 'select(.name | test("^mem_")) | .id'
	done
}
# "time cnt" summed over prog ids
stats() {
	local id
	for id in "$@"; do bpftool prog show id "$id" -j | jq -r '"\(.run_time_ns // 0) \(.run_cnt // 0)"'; done |
		awk '{t += $1; c += $2} END {printf "%.0f %.0f\n", t, c}'
}
cpu_ticks() { awk '{print $14 + $15}' /proc/"$1"/stat; }

# one storm under the running agent: prints "storm_s agent_cpu_s"
storm() {
	local name=$1 t0 c0 c1 t1 n=0
	ct_create "$name" kubepods --mem 64 -- /bin/sl-testprog memstorm /data 24 "$ROUNDS" 1
	truncate -s 192M "$CT_DIR/rootfs/data"
	c0=$(cpu_ticks "$SL_AGENT_PID")
	t0=$(date +%s.%N)
	ct_start_bg
	until grep -q '"rounds"' "$CT_DIR/stdout" 2>/dev/null; do
		sleep 0.2
		n=$((n + 1))
		[ $n -lt 3000 ] || fail "storm did not finish"
	done
	t1=$(date +%s.%N)
	c1=$(cpu_ticks "$SL_AGENT_PID")
	runc --root "$CT_RUNC_ROOT" kill "$CT_ID" KILL >/dev/null 2>&1
	ct_wait_bg 30 >/dev/null 2>&1
	ct_delete
	awk -v a="$t0" -v b="$t1" -v c="$c0" -v d="$c1" -v hz="$HZ" 'BEGIN {printf "%.3f %.3f\n", b - a, (d - c) / hz}'
}

: >"$SL_TMP/rows"
for r in $(seq "$REPEATS"); do
	sl_agent_start
	ids=$(mem_progs "$SL_AGENT_PID")
	[ "$(echo $ids | wc -w)" -ge 10 ] || fail "mem programs not found (got: $ids)"
	read -r T0 C0 <<<"$(stats $ids)"
	R0=$(sl_metric sandlens_mem_runs_total 'kind="memcg_reclaim"')
	read -r S_ON CPU_ON <<<"$(storm "on$r")"
	sleep 1.5 # a tick folds the last runs
	read -r T1 C1 <<<"$(stats $ids)"
	R1=$(sl_metric sandlens_mem_runs_total 'kind="memcg_reclaim"')
	sl_agent_stop >/dev/null
	sl_agent_start "mem:
  enabled: false"
	read -r S_OFF CPU_OFF <<<"$(storm "off$r")"
	sl_agent_stop >/dev/null
	echo "$r $((T1 - T0)) $((C1 - C0)) $((R1 - R0)) $S_ON $CPU_ON $S_OFF $CPU_OFF" | tee -a "$SL_TMP/rows"
done

# columns: rep dtime dcnt runs storm_on cpu_on storm_off cpu_off
summ() { # median min max of an awk expression over the rows
	awk "{print $1}" "$SL_TMP/rows" | sort -g | awk '{v[NR] = $1} END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.3f (%.3f..%.3f)", m, v[1], v[NR]}'
}
NS_PROG=$(summ '$3 ? $2 / $3 : 0')
NS_RUN=$(summ '$4 ? $2 / $4 : 0')
RUNS=$(summ '$4')
CALLS=$(summ '$4 ? $3 / $4 : 0')
CPU_ON=$(summ '$6')
CPU_OFF=$(summ '$8')
ADD=$(summ '$6 - $8')
STORM=$(summ '$5')
BPF_S=$(summ '$2 / 1e9')
cat <<OUT
mem module, $REPEATS repeats of a $ROUNDS-round memstorm (median (min..max)):
  memcg reclaim runs per storm         $RUNS
  mem program runs per reclaim run     $CALLS
  BPF ns per mem program run           $NS_PROG
  BPF ns per memcg reclaim run (all)   $NS_RUN
  BPF seconds per storm                $BPF_S
  storm wall seconds (mem on)          $STORM
  agent CPU s during storm, mem on     $CPU_ON
  agent CPU s during storm, mem off    $CPU_OFF
  agent CPU s added by mem             $ADD
OUT
if [ -n "${SL_BENCH_RESULTS:-}" ]; then
	cat >"$SL_BENCH_RESULTS" <<OUT
## mem module: BPF cost per reclaim run and agent CPU (bench/mem-reclaim.sh)

$(date -u +%Y-%m-%d), kernel $(uname -r), $(nproc) CPUs, shared host. $REPEATS repeats; each runs one
storm (64 MiB container, \`sl-testprog memstorm /data 24 $ROUNDS 1\`) under an agent with the mem module
and one under an agent with \`mem.enabled: false\`. \`kernel.bpf_stats_enabled=1\`. Median (min..max).

| figure | value |
|---|---|
| memcg reclaim runs per storm | $RUNS |
| mem program runs per reclaim run (begin, end, lru_shrink_inactive inside, others on the host) | $CALLS |
| BPF ns per mem program run | $NS_PROG |
| BPF ns per memcg reclaim run (Σ mem programs' run time / reclaim runs) | $NS_RUN |
| BPF seconds per storm | $BPF_S |
| storm wall seconds | $STORM |
| agent CPU s during the storm, mem on | $CPU_ON |
| agent CPU s during the storm, mem off | $CPU_OFF |
| agent CPU s added by mem | $ADD |
OUT
fi
