#!/bin/bash
# attribution: {enabled: false}: events still flow, cgroup_id is the
# container's cgroup id, container_id / pod_uid are empty and a container
# filter finds nothing.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/../lib/checks.sh"
sl_init
sl_require_agent_env
ct_require
sl_agent_start "attribution:
  enabled: false"

ct_script "$SL_TMP/run.sh" wait exec exit
ct_create attroff kubepods --script "$SL_TMP/run.sh" -- /run.sh
ct_start_bg
capture_cgids
ct_wait_bg || fail "container exited with status $?"

# no container filter: attribution is off
EXP_CID="" EXP_POD="" EXP_RUNTIME=""
ev=$(sl_wait_events "type=exec&limit=1000&order=desc" \
	'[.[] | select(.comm == "echo" and .argv[2] == "hello sandlens")] | .[0]')
echo "# exec event: $ev"
assert_eq "exec argv" "$(jq -c . <<<"$EXEC_ARGV_JSON")" "$(jc "$ev" .argv)"
check_attr "exec (attribution off)" "$ev"
pid=$(jr "$ev" .pid)
ex=$(sl_wait_events "type=exec&limit=1000&order=desc" \
	'[.[] | select(.comm == "sl-testprog" and .argv[1] == "exit")] | .[0]')
ev=$(sl_wait_events "type=exit&limit=1000&order=desc" "[.[] | select(.pid == $(jr "$ex" .pid))] | .[0]")
assert_eq "exit exit_code" 3 "$(jr "$ev" .exit_code)"
check_attr "exit (attribution off)" "$ev"
n=$(sl_get "/api/v1/events?container=$CT_ID" | jq '.events | length')
assert_eq "events with container=$CT_ID" 0 "$n"
sl_cli events --type exec --since 30m --limit 10000 --json >"$SL_LOGDIR/cli.jsonl" || fail "sandlens events failed"
got=$(jq -c "select(.pid == $pid and .type == \"exec\")" "$SL_LOGDIR/cli.jsonl" | head -n 1)
[ -n "$got" ] || fail "exec pid $pid not in sandlens events --json"
assert_eq "CLI container_id" "" "$(jr "$got" .container_id)"
assert_eq "CLI cgroup_id" "$(jr "$(sl_wait_events "type=exec&limit=1000&order=desc" "[.[] | select(.pid == $pid)] | .[0]")" .cgroup_id)" "$(jr "$got" .cgroup_id)"

sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
