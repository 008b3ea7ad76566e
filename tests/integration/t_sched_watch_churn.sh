#!/bin/bash
# sched_watch after cgroup churn (issue 8, finding 9). sched_watch is the
# kernel map of watched cgroup keys (sched.watch) holding each key's
# sched_delay token bucket. A long-lived victim container V spins while
# short-lived containers N1..N3 spin one after another and are removed.
# A removed N can stay named in a slot of V's per-CPU neighbour table
# (struct sl_sched_hist.nb, never reassigned), and user space used to keep
# watching such a key: its sched_watch entry outlived the cgroup (and would
# be inherited by a recycled id). After the churn, no key of a removed
# container may be left in the agent's sched_watch, while V's key stays.
# The histogram slots (sched_hist is a per-CPU array; sched_slot names each
# key's slot, freed slots are given back a tick after the reap): no removed
# container keeps a slot, and no two keys share one (a slot given back
# twice would be handed to two keys).
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/../lib/checks.sh"
source "$(dirname "$0")/lib_sched.sh"
sl_init
sl_require_agent_env
ct_require
sl_require_cmd bpftool

sl_agent_start ""
WID=$(sched_map_id sched_watch) HID=$(sched_map_id sched_hist) SID=$(sched_map_id sched_slot)
[ -n "$WID" ] && [ -n "$HID" ] && [ -n "$SID" ] || skip "no map_id in the agent's fdinfo (kernel too old) or bpftool cannot show the maps"
# cgroup ids (v2 and v1) of every key in a map dump
ids() { bpftool map dump id "$1" -j 2>/dev/null | jq -r '[.. | objects | select(has("cgroup_id")) | .cgroup_id, .cgroup_v1_id] | map(tostring) | unique | .[]'; }

ct_create victim kubepods -- /bin/sh -c "/bin/sl-testprog spin 4; exec /bin/sl-testprog sleep 60"
V_ID=$CT_ID V_CG=$CT_CGPATH
ct_start_bg
ct_wait_running
# on this hybrid host runc's unified-hierarchy directory can appear a moment
# after runc says "running": wait for it (up to 5 s) rather than read id 0
for _ in $(seq 50); do
	set -- $(ct_cgroup_inos)
	[ "$1" != 0 ] && break
	sleep 0.1
done
V_V2=$1
[ "$V_V2" != 0 ] || fail "the victim has no unified-hierarchy cgroup after 5 s"
gone=()
for r in 1 2 3; do
	ct_create "churn$r" kubepods -- /bin/sl-testprog spin 1
	ct_start_bg
	ct_wait_running
	set -- $(ct_cgroup_inos)
	ct_wait_bg 60 || fail "churn$r exited with status $?"
	gone+=("$1")
	[ "$2" != 0 ] && gone+=("$2")
	ct_delete
done
note "removed containers' cgroup ids: ${gone[*]}; victim v2 id $V_V2"
sleep 4 # the removals are reaped at the next tick, the keys at the one after

ids "$HID" >"$SL_LOGDIR/hist-ids.txt"
ids "$WID" >"$SL_LOGDIR/watch-ids.txt"
named=0
for g in "${gone[@]}"; do grep -qx "$g" "$SL_LOGDIR/hist-ids.txt" && named=$((named + 1)); done
note "removed ids still named in sched_hist (victims' neighbour slots): $named;" \
	"sched_watch entries $(sl_metric sandlens_sched_watch_entries)"
[ "$named" -gt 0 ] || note "no removed container claimed a neighbour slot this run (the stale case was not set up)"
stale=()
for g in "${gone[@]}"; do grep -qx "$g" "$SL_LOGDIR/watch-ids.txt" && stale+=("$g"); done
[ ${#stale[@]} = 0 ] || fail "sched_watch still holds keys of removed cgroups: ${stale[*]}"
echo "ok - no key of a removed container is left in sched_watch"
grep -qx "$V_V2" "$SL_LOGDIR/watch-ids.txt" || fail "the live victim's key ($V_V2) is not in sched_watch"
echo "ok - the live victim's key is still watched"
bpftool map dump id "$SID" -j >"$SL_LOGDIR/slots.json" 2>/dev/null || fail "cannot dump sched_slot"
# bpftool prints BTF-formatted entries under .formatted
jq -r '.[] | (.formatted // .) | .key | .cgroup_id, .cgroup_v1_id' "$SL_LOGDIR/slots.json" | sort -u >"$SL_LOGDIR/slot-ids.txt"
held=()
for g in "${gone[@]}"; do grep -qx "$g" "$SL_LOGDIR/slot-ids.txt" && held+=("$g"); done
[ ${#held[@]} = 0 ] || fail "sched_slot still gives a histogram slot to removed cgroups: ${held[*]}"
nkeys=$(jq length "$SL_LOGDIR/slots.json") nslots=$(jq '[.[] | (.formatted // .) | .value] | unique | length' "$SL_LOGDIR/slots.json")
[ "$nkeys" -gt 0 ] && [ "$nkeys" = "$nslots" ] || fail "sched_slot: $nkeys keys on $nslots distinct slots"
grep -qx "$V_V2" "$SL_LOGDIR/slot-ids.txt" || fail "the live victim ($V_V2) has no histogram slot"
echo "ok - removed containers' slots were given back; $nkeys keys on $nkeys distinct slots"
_ct_delete_id "$V_ID" "$V_CG"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
