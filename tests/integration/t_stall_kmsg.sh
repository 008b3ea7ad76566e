#!/bin/bash
# stall module, kernel-log events (docs/STALL.md "Kernel log"): the module
# reads a fixture file (stall.kmsg_path, records one a line as /dev/kmsg
# prints them: tests/unit/cases/stall_kmsg.txt, the kernel's own soft
# lockup, hard LOCKUP and RCU stall lines) instead of /dev/kmsg. Checks:
#   - soft_lockup (cpu 1, stuck_s 23, lockup_comm kworker/1:2, lockup_pid
#     4321), hard_lockup (cpu 0), two rcu_stall (rcu_sched self_detected
#     with cpus [1]; rcu_preempt other_cpus with cpus [0, 1]) come back
#     through GET /api/v1/events and `sandlens events --type ...`; the user
#     (facility 1) line that looks like a soft lockup does not;
#   - a line appended while the agent runs is read at the next tick;
#   - /metrics sandlens_stall_kernel_log_events_total counts them;
#   - /healthz: stall.missing_hooks [sched_process_hang] makes that hook
#     "degraded" with its reason; an unreadable kmsg_path makes the kmsg
#     hook "failed" with the open error, and the module still runs;
#   - a bad stall.missing_hooks entry stops the agent with exit 2 naming
#     the key.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env

FIX="$SL_TMP/kmsg.txt"
cp "$SL_ROOT/tests/unit/cases/stall_kmsg.txt" "$FIX"
sl_agent_start "stall:
  kmsg_path: $FIX
  missing_hooks: [sched_process_hang]"
H=$(sl_get /healthz)
assert_eq "kmsg hook" attached "$(jq -r '.modules[] | select(.name == "stall") | .hooks[] | select(.name == "kmsg") | .state' <<<"$H")"
assert_eq "sched_process_hang hook (missing_hooks)" degraded \
	"$(jq -r '.modules[] | select(.name == "stall") | .hooks[] | select(.name == "tp_btf/sched_process_hang") | .state' <<<"$H")"
jq -r '.modules[] | select(.name == "stall") | .hooks[] | select(.name == "tp_btf/sched_process_hang") | .reason' <<<"$H" |
	grep -q "treated as absent" || fail "no reason for the absent hook: $(jq -c '.modules[] | select(.name == "stall")' <<<"$H")"

soft=$(sl_wait_events "type=soft_lockup" 'first' 10)
note "soft_lockup: $(jq -c '{cpu, stuck_s, lockup_comm, lockup_pid, subject_kind, severity}' <<<"$soft")"
assert_eq "soft_lockup cpu" 1 "$(jq -r .cpu <<<"$soft")"
assert_eq "soft_lockup stuck_s" 23 "$(jq -r .stuck_s <<<"$soft")"
assert_eq "soft_lockup lockup_comm" "kworker/1:2" "$(jq -r .lockup_comm <<<"$soft")"
assert_eq "soft_lockup lockup_pid" 4321 "$(jq -r .lockup_pid <<<"$soft")"
assert_eq "soft_lockup subject_kind" cpu "$(jq -r .subject_kind <<<"$soft")"
hard=$(sl_wait_events "type=hard_lockup" 'first' 5)
assert_eq "hard_lockup cpu" 0 "$(jq -r .cpu <<<"$hard")"
assert_eq "hard_lockup severity" critical "$(jq -r .severity <<<"$hard")"
rcu=$(sl_wait_events "type=rcu_stall" 'if length >= 2 then . else empty end' 5)
note "rcu_stall: $(jq -c '[.[] | {flavor, how, cpus, cpu}]' <<<"$rcu")"
assert_eq "rcu_sched self_detected cpus" "[1]" "$(jq -c '[.[] | select(.flavor == "rcu_sched")][0].cpus' <<<"$rcu")"
assert_eq "rcu_sched how" self_detected "$(jq -r '[.[] | select(.flavor == "rcu_sched")][0].how' <<<"$rcu")"
assert_eq "rcu_preempt other_cpus cpus" "[0,1]" "$(jq -c '[.[] | select(.flavor == "rcu_preempt")][0].cpus' <<<"$rcu")"
assert_eq "soft_lockup events (the user-facility line is not one)" 1 \
	"$(curl -sf "$SL_API/api/v1/events?type=soft_lockup" | jq '.events | length')"

# live: a line appended now
echo '0,950,2000000,-;watchdog: BUG: soft lockup - CPU#0 stuck for 47s! [stress-ng:999]' >>"$FIX"
sl_wait_events "type=soft_lockup" '[.[] | select(.stuck_s == 47 and .lockup_pid == 999)] | first' 10 >/dev/null
echo "ok - appended line read"
assert_eq "kernel_log_events_total soft_lockup" 2 "$(sl_metric sandlens_stall_kernel_log_events_total 'kind="soft_lockup"')"
assert_eq "kernel_log_events_total rcu_stall" 2 "$(sl_metric sandlens_stall_kernel_log_events_total 'kind="rcu_stall"')"
assert_eq "kernel_log_events_total hard_lockup" 1 "$(sl_metric sandlens_stall_kernel_log_events_total 'kind="hard_lockup"')"

for t in soft_lockup hard_lockup rcu_stall; do
	sl_cli events --type "$t" >"$SL_TMP/cli-$t.txt" 2>&1 || fail "sandlens events --type $t: $(cat "$SL_TMP/cli-$t.txt")"
	grep -q "$t" "$SL_TMP/cli-$t.txt" || fail "CLI has no $t row: $(head -3 "$SL_TMP/cli-$t.txt")"
done
grep -q "stuck 47s in stress-ng:999" "$SL_TMP/cli-soft_lockup.txt" || fail "CLI DETAILS of soft_lockup: $(cat "$SL_TMP/cli-soft_lockup.txt")"
echo "ok - CLI lists soft_lockup, hard_lockup, rcu_stall"
sl_agent_stop || fail "agent exit status $?"

# an unreadable kernel log: the hook fails with its reason, the module runs
sl_agent_start "stall:
  kmsg_path: $SL_TMP/no-such-kmsg"
H=$(sl_get /healthz)
assert_eq "stall module state (a hook failed, the rest runs)" degraded "$(jq -r '.modules[] | select(.name == "stall") | .state' <<<"$H")"
assert_eq "kmsg hook without a file" failed "$(jq -r '.modules[] | select(.name == "stall") | .hooks[] | select(.name == "kmsg") | .state' <<<"$H")"
jq -r '.modules[] | select(.name == "stall") | .hooks[] | select(.name == "kmsg") | .reason' <<<"$H" | grep -q "No such file" ||
	fail "kmsg reason: $(jq -c '.modules[] | select(.name == "stall") | .hooks[] | select(.name == "kmsg")' <<<"$H")"
sl_agent_stop

# a bad key value: exit 2 naming it
sl_write_config "stall:
  missing_hooks: [no_such_hook]"
"$SL_BUILD/sandlensd" --config "$SL_CONFIG" >"$SL_TMP/bad.out" 2>&1
rc=$?
assert_eq "exit status for a bad stall.missing_hooks" 2 "$rc"
grep -q "stall.missing_hooks\[0\]" "$SL_TMP/bad.out" || fail "error does not name the key: $(cat "$SL_TMP/bad.out")"
echo "PASS"
