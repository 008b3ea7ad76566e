#!/bin/bash
# The same checks as t_exec, t_exit, t_crash and t_oom in one runc container
# with a plain cgroupsPath /sandlens-test/<id>. The path says nothing; the
# agent finds the container in runc's state root (attribution.runc_root =
# the --root the tests give runc; docs/ATTRIBUTION.md, docs/CONFIG.md), so
# container_id = the runc id, runtime "runc", no pod.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/../lib/checks.sh"
sl_init
sl_require_agent_env
ct_require
sl_agent_start "attribution:
  runc_root: $CT_RUNC_ROOT"

ct_script "$SL_TMP/run.sh" wait exec longargv exit crash oom
ct_create plain plain --mem 32 --core --script "$SL_TMP/run.sh" -- /run.sh
EXP_CID=$CT_ID EXP_POD="" EXP_RUNTIME=runc
follow_start --container "$CT_ID"
ct_start_bg
capture_cgids
ct_wait_bg || fail "container exited with status $?"
for want in exit3=3 segv=139 abort=134 hog=137; do
	grep -q "^$want\$" "$CT_DIR/stdout" || fail "expected '$want' from the container (stdout: $(cat "$CT_DIR/stdout"))"
done

check_exec_part
check_longargv_part
check_exit_part
check_crash_part
check_oom_part
for ev in "$EXEC_EVENT" "$EXIT_EVENT" "$SIGNAL_EVENT" "$OOM_EVENT"; do
	cli_check "plain $(jr "$ev" .type)" "$ev"
done
follow_wait ".type == \"oom\" and .victim.pid == $HOG_PID"
follow_stop
for ev in "$EXEC_EVENT" "$EXIT_EVENT" "$SIGNAL_EVENT" "$OOM_EVENT"; do
	cli_has_event "plain $(jr "$ev" .type) via --follow" "$ev" "$FOLLOW_OUT"
done

sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
