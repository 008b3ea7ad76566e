#!/bin/bash
# The sched_info mode keeps each task's switch-out state in a slot of the
# sched_tasks array (bpf/sched_slots.bpf.h tstate_get): claimed at the task's
# first switch-out, given back when the task_struct is freed
# (tp_btf/sched_process_free). A slot never given back would keep naming a
# dead task's address: the table would fill and a new task at that address
# would take the dead one's state. Checks, against independent readers:
#  1. after 12,000 short-lived processes (more than the 8,192 slots), the
#     slots with an owner (the map read with bpftool) are no more than the
#     host's live threads (/proc/*/task) plus the few freed since;
#  2. 2,000 new processes after that find slots: the switch-outs served
#     from task storage (sandlens_sched_task_storage_switches_total) are
#     under 5 % of the host's context switches in the same window
#     (/proc/stat ctxt); with slots not given back nearly all of theirs
#     would be;
#  3. the waits are still counted: the host's runqueue waits in the API
#     grow by at least the new processes' switch-ins seen in that window.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_require_cmd bpftool jq
for h in sl-testprog sl-true; do
	[ -x "$SL_BUILD/helpers/$h" ] || fail "$h not built (make all)"
done
[ -r /proc/self/schedstat ] || skip "kernel without CONFIG_SCHED_INFO: the sched module times waits with the wakeup hooks (no slots)"

sl_agent_start ""
hooks=$(curl -sf -m 10 "$SL_API/healthz" | jq -c '[.modules[] | select(.name == "sched") | .hooks[] | select(.name == "tp_btf/sched_process_free")]')
state=$(jq -r '.[0].state // empty' <<<"$hooks")
[ "$state" = attached ] || fail "tp_btf/sched_process_free not attached: $hooks"

# the agent's sched_tasks map (its id from the agent's own fds)
ids=$(grep -h '^map_id:' /proc/"$SL_AGENT_PID"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -un | paste -sd, -)
MAP=$(bpftool map show -j | jq -r --argjson ids "[$ids]" '.[] | select(.id as $i | $ids | index($i)) | select(.name == "sched_tasks") | .id')
[ -n "$MAP" ] || fail "no sched_tasks map held by the agent (maps $ids)"
owned() { bpftool map dump id "$MAP" -j | jq '[.[] | select(.formatted.value.owner != 0)] | length'; }
threads() { ls -d /proc/[0-9]*/task/[0-9]* 2>/dev/null | wc -l; }
note "slots owned at start: $(owned), live threads $(threads)"

# 1. more short-lived processes than slots
"$SL_BUILD/helpers/sl-testprog" storm 12000 "$SL_BUILD/helpers/sl-true" >"$SL_TMP/storm1" ||
	fail "storm: $(cat "$SL_TMP/storm1")"
sleep 1 # RCU: sched_process_free runs after a grace period
O=$(owned)
T=$(threads)
note "after 12,000 processes: $O slots owned, $T live threads"
[ "$O" -le $((T + 64)) ] || fail "$O slots owned with $T live threads: slots of freed tasks not given back"
[ "$O" -gt 0 ] || fail "no slot owned at all: the slots are not used"

# 2. and 3. new processes find slots, their waits counted
S0=$(sl_metric sandlens_sched_task_storage_switches_total)
C0=$(awk '$1 == "ctxt" {print $2}' /proc/stat)
W0=$(curl -sf -m 10 "$SL_API/api/v1/sched" | jq '[.. | objects | select(has("total")) | .total.waits] | add // 0')
"$SL_BUILD/helpers/sl-testprog" storm 2000 "$SL_BUILD/helpers/sl-true" >"$SL_TMP/storm2" ||
	fail "storm: $(cat "$SL_TMP/storm2")"
S1=$(sl_metric sandlens_sched_task_storage_switches_total)
C1=$(awk '$1 == "ctxt" {print $2}' /proc/stat)
DS=$((S1 - S0))
DC=$((C1 - C0))
note "window: $DC context switches (/proc/stat), $DS from task storage"
[ "$DC" -ge 2000 ] || fail "only $DC context switches for 2,000 processes"
[ $((DS * 20)) -lt "$DC" ] || fail "$DS of $DC switch-outs from task storage (>= 5 %): new tasks found no free slot"
sleep 2.5 # two ticks: the waits reach the API
W1=$(curl -sf -m 10 "$SL_API/api/v1/sched" | jq '[.. | objects | select(has("total")) | .total.waits] | add // 0')
note "API waits: $W0 -> $W1"
[ $((W1 - W0)) -ge 2000 ] || fail "only $((W1 - W0)) waits counted for 2,000 new processes"
echo "ok - slots given back ($O owned, $T threads after 12,000 exits); $DS of $DC switches from task storage; $((W1 - W0)) waits counted"
sl_agent_stop || fail "agent exit status $?"
sl_check_failed
