#!/bin/bash
# A bounded fork bomb in a kubepods-style runc container (issue 8, finding
# 8): sl-testprog forkbomb N mix forks N children (at most 64 alive; 80 %
# exit 0, 10 % exit 3, 10 % die of SIGSEGV), pauses 1.5 s, then one more
# child dies of SIGSEGV and the bomb exits. With proc.exit_rate 20/s and
# proc.exit_burst 50, for the key (container cgroup, comm sl-testprog):
#   - exit rows <= burst + rate * duration (+ slack), likewise signal rows:
#     one container can no longer flush the store;
#   - delivered exits + sum(truncated_count) == exits (N + 1 children and the
#     bomb itself), exactly; delivered abnormal exits + sum(truncated_abnormal)
#     == abnormal exits (exit 3 and SIGSEGV), exactly;
#   - delivered SIGSEGV signal events + sum(truncated_count) == crashes;
#   - an exit event carrying a large truncated_count arrives.
# Env: SL_BOMB_CHILDREN (default 10000).
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/../lib/checks.sh"
sl_init
sl_require_agent_env
ct_require
N=${SL_BOMB_CHILDREN:-10000}
RATE=20 BURST=50

sl_agent_start "proc:
  exit_rate: $RATE
  exit_burst: $BURST"
ct_create bomb kubepods -- /bin/sl-testprog forkbomb "$N" mix
EXP_CID=$CT_ID
ct_run 600 || fail "fork bomb container exited with status $? ($(cat "$CT_DIR/stderr"))"
res=$(tail -n 1 "$CT_DIR/stdout")
children=$(jq -r .children <<<"$res") e3=$(jq -r .exit3 <<<"$res") segv=$(jq -r .segv <<<"$res") secs=$(jq -r .seconds <<<"$res")
note "bomb: $children children ($e3 exit 3, $segv SIGSEGV) in ${secs}s (+1.5 s pause)"

# Read the container's exit and signal events until two reads agree.
prev="" tries=0
while [ $tries -lt 60 ]; do
	sl_all_events "type=exit&container=$CT_ID" >"$SL_LOGDIR/exits.jsonl"
	sl_all_events "type=signal&container=$CT_ID" >"$SL_LOGDIR/signals.jsonl"
	cur="$(wc -l <"$SL_LOGDIR/exits.jsonl") $(wc -l <"$SL_LOGDIR/signals.jsonl")"
	[ "$cur" = "$prev" ] && [ "${cur%% *}" -gt 0 ] && break
	prev=$cur
	sleep 1
	tries=$((tries + 1))
done
ex=$(jq -s -c '[.[] | select(.comm == "sl-testprog")] | {n: length, tr: (map(.truncated_count) | add // 0),
	abn: (map(select(.exit_code != 0 or .signal != 0)) | length), tra: (map(.truncated_abnormal) | add // 0),
	max: (map(.truncated_count) | max // 0)}' "$SL_LOGDIR/exits.jsonl")
sg=$(jq -s -c '[.[] | select(.target_comm == "sl-testprog" and .signal == 11)] | {n: length,
	tr: (map(.truncated_count) | add // 0)}' "$SL_LOGDIR/signals.jsonl")
note "exit events: $ex; SIGSEGV events: $sg"
note "metrics: exit rate limited $(sl_metric sandlens_exit_rate_limited_total) (abnormal $(sl_metric sandlens_exit_abnormal_rate_limited_total)), signal rate limited $(sl_metric sandlens_signal_rate_limited_total), exit drops $(sl_metric sandlens_events_dropped_total type=\"exit\"), signal drops $(sl_metric sandlens_events_dropped_total type=\"signal\")"

curl -sf "$SL_API/metrics" | grep -E '^sandlens_(exit|signal|events_dropped|ringbuf_reserve)' >"$SL_LOGDIR/metrics-after.txt"
jq -s -c 'group_by(.comm) | map({comm: .[0].comm, n: length, tr: (map(.truncated_count) | add)})' "$SL_LOGDIR/exits.jsonl" >"$SL_LOGDIR/exits-by-comm.json"
# the bomb phase, the 1.5 s pause and 2 s for start and exit
budget=$(awk -v b="$BURST" -v r="$RATE" -v s="$secs" 'BEGIN{printf "%d", b + r * (s + 3.5) + 3}')
[ "$(jr "$ex" .n)" -le "$budget" ] || fail "$(jr "$ex" .n) exit rows for one key, budget $budget ($BURST + $RATE/s * ${secs}s)"
echo "ok - exit rows $(jr "$ex" .n) <= budget $budget"
[ "$(jr "$sg" .n)" -le "$budget" ] || fail "$(jr "$sg" .n) SIGSEGV rows for one key, budget $budget"
echo "ok - signal rows $(jr "$sg" .n) <= budget $budget"
assert_eq "delivered exits + sum(truncated_count) == exits (children + the bomb)" "$((children + 1))" \
	"$(($(jr "$ex" .n) + $(jr "$ex" .tr)))"
assert_eq "delivered abnormal exits + sum(truncated_abnormal) == abnormal exits" "$((e3 + segv))" \
	"$(($(jr "$ex" .abn) + $(jr "$ex" .tra)))"
assert_eq "delivered SIGSEGV events + sum(truncated_count) == crashes" "$segv" "$(($(jr "$sg" .n) + $(jr "$sg" .tr)))"
[ "$(jr "$ex" .max)" -ge 10 ] || fail "no exit event carries a large truncated_count (max $(jr "$ex" .max))"
echo "ok - an exit event carries truncated_count $(jr "$ex" .max)"
ct_delete
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"

