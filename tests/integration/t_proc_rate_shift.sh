#!/bin/bash
# Runtime rate scaling of the proc token buckets (the degradation contract,
# bpf/proc.bpf.c rate_shift; sl_proc_set_rate_shift in src/modules/proc.h):
# rate_shift written into the running agent's proc .bss map (as the agent
# does through skel->bss) is reported by sandlens_proc_rate_shift and divides
# the exit bucket's rate and burst: a fork bomb (sl-testprog forkbomb) with
# proc.exit_rate 40, exit_burst 80 and shift 3 (5/s, burst 10) writes at
# most 10 + 5/s * duration exit rows, every exit still accounted; shift 0
# again restores the configured rates.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/../lib/checks.sh"
source "$(dirname "$0")/lib_sched.sh"
sl_init
sl_require_agent_env
ct_require
sl_require_cmd bpftool

sl_agent_start "proc:
  exit_rate: 40
  exit_burst: 80"
BSS=$(sched_map_id proc_bpf.bss)
[ -n "$BSS" ] || skip "cannot find the agent's proc .bss map (no map_id in its fdinfo?)"
set_shift() { bpftool map update id "$BSS" key 0 0 0 0 value "$1" 0 0 0 || fail "bpftool map update of .bss failed"; }
set_shift 3
assert_eq "sandlens_proc_rate_shift after writing 3" 3 "$(sl_metric sandlens_proc_rate_shift)"

ct_create shifted kubepods -- /bin/sl-testprog forkbomb 3000 exit0
ct_run 300 || fail "fork bomb exited with status $?"
res=$(tail -n 1 "$CT_DIR/stdout")
children=$(jq -r .children <<<"$res") secs=$(jq -r .seconds <<<"$res")
prev="" tries=0
while [ $tries -lt 60 ]; do
	sl_all_events "type=exit&container=$CT_ID" >"$SL_LOGDIR/exits.jsonl"
	cur=$(jq -s -c '[.[] | select(.comm == "sl-testprog")] | {n: length, tr: (map(.truncated_count) | add // 0)}' "$SL_LOGDIR/exits.jsonl")
	[ "$cur" = "$prev" ] && break
	prev=$cur
	sleep 1
	tries=$((tries + 1))
done
note "shift 3: $children children in ${secs}s (+1.5 s pause): $cur"
budget=$(awk -v s="$secs" 'BEGIN{printf "%d", 10 + 5 * (s + 3.5) + 3}')
[ "$(jr "$cur" .n)" -le "$budget" ] || fail "shift 3: $(jr "$cur" .n) exit rows, budget $budget (burst 80>>3, rate 40>>3)"
echo "ok - shift 3: $(jr "$cur" .n) exit rows <= $budget"
assert_eq "shift 3: delivered + sum(truncated_count) == exits" "$((children + 1))" "$(($(jr "$cur" .n) + $(jr "$cur" .tr)))"
ct_delete
set_shift 0
assert_eq "sandlens_proc_rate_shift after writing 0" 0 "$(sl_metric sandlens_proc_rate_shift)"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
