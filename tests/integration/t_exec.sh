#!/bin/bash
# exec of a known command line inside a kubepods-style runc container: the
# exact argv array (spaces, empty, UTF-8, tab), filename, comm, container_id,
# pod_uid, runtime and cgroup id, through the API, `sandlens events --json`
# and `--follow`; an argv longer than SL_ARGV_BYTES comes back cut with
# args_truncated; /api/v1/containers, `sandlens containers`, `sandlens status`.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/../lib/checks.sh"
sl_init
sl_require_agent_env
ct_require
sl_agent_start

ct_script "$SL_TMP/run.sh" wait exec longargv
ct_create exec kubepods --script "$SL_TMP/run.sh" -- /run.sh
EXP_CID=$CT_ID EXP_POD=$CT_POD_UID EXP_RUNTIME=""
follow_start --container "$CT_ID"
ct_start_bg
capture_cgids
ct_wait_bg || fail "container exited with status $?"

check_exec_part
check_longargv_part
cli_check "exec" "$EXEC_EVENT"

follow_wait '.type == "exec" and .comm == "echo" and .argv[2] == "hello sandlens"'
follow_stop
cli_has_event "exec via --follow" "$EXEC_EVENT" "$FOLLOW_OUT"

# the container is known, with events counted
c=$(sl_get /api/v1/containers | jq -c --arg id "$CT_ID" '[.. | objects | select(.container_id? == $id)] | .[0] // empty')
[ -n "$c" ] || fail "/api/v1/containers does not list $CT_ID"
echo "ok - /api/v1/containers lists $CT_ID: $c"
sl_cli containers >"$SL_LOGDIR/cli-containers.txt" 2>&1 || fail "sandlens containers failed: $(cat "$SL_LOGDIR/cli-containers.txt")"
grep -q "${CT_ID:0:12}" "$SL_LOGDIR/cli-containers.txt" || fail "sandlens containers does not show $CT_ID"
echo "ok - sandlens containers shows ${CT_ID:0:12}"
sl_cli status >"$SL_LOGDIR/cli-status.txt" 2>&1 || fail "sandlens status failed: $(cat "$SL_LOGDIR/cli-status.txt")"
[ -s "$SL_LOGDIR/cli-status.txt" ] || fail "sandlens status printed nothing"
echo "ok - sandlens status"

sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
