#!/bin/bash
# `sl-testprog hog 64` under a 32 MiB memory limit (swap limit = memory
# limit) in a kubepods-style runc container: an oom event with constraint
# memcg, victim = the hog (pid, comm, cgroup id, container id), actor = the
# hog too (the charging task), and its exit event with signal 9. API, CLI.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/../lib/checks.sh"
sl_init
sl_require_agent_env
ct_require
sl_agent_start

ct_script "$SL_TMP/run.sh" wait oom
ct_create oom kubepods --mem 32 --script "$SL_TMP/run.sh" -- /run.sh
EXP_CID=$CT_ID EXP_POD=$CT_POD_UID EXP_RUNTIME=""
ct_start_bg
capture_cgids
ct_wait_bg || fail "container exited with status $?"
grep -q '^hog=137$' "$CT_DIR/stdout" || fail "the hog was not SIGKILLed (stdout: $(cat "$CT_DIR/stdout"))"

check_oom_part
cli_check "oom" "$OOM_EVENT"

sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
