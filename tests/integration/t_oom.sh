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

# the OOM killer's SIGKILL: si_code SI_KERNEL, so the signal event says
# the kernel sent it and the CLI row says "kernel", not the running task
sig=$(sl_wait_events "type=signal&container=$EXP_CID" '[.[] | select(.signal == 9)] | .[0]' 20)
assert_eq "OOM SIGKILL si_code (SI_KERNEL)" 128 "$(jq .si_code <<<"$sig")"
assert_eq "OOM SIGKILL sender_kernel" true "$(jq .sender_kernel <<<"$sig")"
sl_cli events --type signal --container "$EXP_CID" >"$SL_LOGDIR/cli-signal.txt" || fail "sandlens events --type signal"
grep -q 'SIGKILL kernel -> ' "$SL_LOGDIR/cli-signal.txt" || fail "the OOM SIGKILL row does not say the kernel sent it: $(cat "$SL_LOGDIR/cli-signal.txt")"
echo "ok - the OOM SIGKILL row: $(grep -o 'SIGKILL kernel -> .*' "$SL_LOGDIR/cli-signal.txt" | head -1)"

# per-container event counters (sandlens_container_events_total) against
# the store: the container's stored events of each type, weighted by the
# suppressed events they carry (1 + truncated_count), in the same window
sl_all_events "container=$EXP_CID" >"$SL_LOGDIR/all-events.json"
for ty in oom exec exit; do
	want=$(jq -s --arg c "$EXP_CID" --arg t "$ty" \
		'[.[] | select(.container_id == $c and .type == $t) | 1 + (.truncated_count // 0)] | add // 0' \
		"$SL_LOGDIR/all-events.json")
	got=$(sl_metric sandlens_container_events_total "container_id=\"$EXP_CID\",type=\"$ty\"")
	assert_eq "sandlens_container_events_total{type=$ty} of the container = its stored events" "$want" "${got:-0}"
done

sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
