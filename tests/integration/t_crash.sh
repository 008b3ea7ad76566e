#!/bin/bash
# SIGSEGV (NULL write, RLIMIT_CORE 0) and SIGABRT (abort(3), RLIMIT_CORE
# 1 GiB, writable rootfs) in a kubepods-style runc container: a signal event
# (signal 11/6, sender = target = the helper) and an exit event with that
# signal; core_dumped false for the SEGV and, for the abort, whatever the
# kernel did on disk (a core file in the rootfs => true). API, CLI --json and
# --follow.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/../lib/checks.sh"
sl_init
sl_require_agent_env
ct_require
sl_agent_start

ct_script "$SL_TMP/run.sh" wait crash
ct_create crash kubepods --core --script "$SL_TMP/run.sh" -- /run.sh
EXP_CID=$CT_ID EXP_POD=$CT_POD_UID EXP_RUNTIME=""
follow_start --type signal
ct_start_bg
capture_cgids
ct_wait_bg || fail "container exited with status $?"
grep -q '^segv=139$' "$CT_DIR/stdout" || fail "segv helper did not die of SIGSEGV (stdout: $(cat "$CT_DIR/stdout"))"
grep -q '^abort=134$' "$CT_DIR/stdout" || fail "abort helper did not die of SIGABRT (stdout: $(cat "$CT_DIR/stdout"))"

check_crash_part
cli_check "segv signal" "$SIGNAL_EVENT"
follow_wait ".type == \"signal\" and .target_pid == $SEGV_PID and .signal == 11"
follow_wait ".type == \"signal\" and .target_pid == $ABORT_PID and .signal == 6"
follow_stop
cli_has_event "segv signal via --follow" "$SIGNAL_EVENT" "$FOLLOW_OUT"

sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
