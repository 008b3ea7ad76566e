#!/bin/bash
# exit 3 in a kubepods-style runc container: exit_code 3, signal 0, not core
# dumped, lifetime plausible (a 0.3 s sleeper lives >= 0.3 s), through the API
# and `sandlens events --json`.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/../lib/checks.sh"
sl_init
sl_require_agent_env
ct_require
sl_agent_start

ct_script "$SL_TMP/run.sh" wait exit
ct_create exit kubepods --script "$SL_TMP/run.sh" -- /run.sh
EXP_CID=$CT_ID EXP_POD=$CT_POD_UID EXP_RUNTIME=""
ct_start_bg
capture_cgids
ct_wait_bg || fail "container exited with status $?"
grep -q '^exit3=3$' "$CT_DIR/stdout" || fail "the helper did not exit 3 (container stdout: $(cat "$CT_DIR/stdout"))"

check_exit_part
cli_check "exit" "$EXIT_EVENT"

sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
