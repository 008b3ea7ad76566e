#!/bin/bash
# trace_syscall_errors: a kubepods runc container makes 500 failing
# openat (ENOENT) and 500 failing close(-1) (EBADF) calls while a task
# watches it; a busy neighbour container fails calls too and must not be
# counted. Counts come from the kernel map (no per-call event), names are
# resolved in user space. Also through `sandlens syscall-errors`.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/lib_sched.sh"
source "$(dirname "$0")/lib_prof.sh"
sl_init
sl_require_agent_env
ct_require
[ -x "$SL_BUILD/helpers/sl-profprog" ] || fail "sl-profprog not built"
[ "$(uname -m)" = x86_64 ] || [ "$(uname -m)" = aarch64 ] || skip "syscall names only for x86_64 and arm64"

sl_agent_start
cat >"$SL_TMP/errs.sh" <<'SH'
#!/bin/sh
# wait for the task, fail 500+500 calls, stay a little
while [ ! -e /tmp/go ]; do sleep 0.1; done
/bin/sl-profprog syserr 500
sleep 30
SH
cat >"$SL_TMP/noise.sh" <<'SH'
#!/bin/sh
while :; do /bin/sl-profprog syserr 100 >/dev/null; done
SH
ct_create e kubepods --script "$SL_TMP/errs.sh" -- /bin/sh /run.sh
cp "$SL_BUILD/helpers/sl-profprog" "$CT_DIR/rootfs/bin/"
jq '.root.readonly = false' "$CT_DIR/config.json" >"$CT_DIR/c.json" && mv "$CT_DIR/c.json" "$CT_DIR/config.json"
E=$CT_ID E_DIR=$CT_DIR; ct_start_bg; E_RUN=$CT_RUN_PID; ct_wait_running
ct_create n kubepods --script "$SL_TMP/noise.sh" -- /bin/sh /run.sh
cp "$SL_BUILD/helpers/sl-profprog" "$CT_DIR/rootfs/bin/"
N=$CT_ID; ct_start_bg; ct_wait_running

ID=$(task_create "{\"type\":\"trace_syscall_errors\",\"target\":{\"container\":\"$E\"},\"duration_s\":5}")
task_wait_running "$ID"
touch "$E_DIR/rootfs/tmp/go"
R=$(task_wait "$ID" 30)
note "record: $(printf '%s' "$R" | jq -c '{status, progress, result}')"
assert_eq "status" done "$(printf '%s' "$R" | jq -r .status)"
task_result "$ID" json "$SL_TMP/res.json"
jq -c '.errors[]' "$SL_TMP/res.json" | head -10
cnt() { jq -r --arg s "$1" --arg e "$2" '[.errors[] | select(.syscall == $s and .errno_name == $e) | .count] | add // 0' "$SL_TMP/res.json"; }
assert_eq "openat ENOENT" 500 "$(cnt openat ENOENT)"
assert_eq "close EBADF" 500 "$(cnt close EBADF)"
assert_eq "example comm" sl-profprog "$(jq -r '[.errors[] | select(.syscall == "close")][0].example.comm' "$SL_TMP/res.json")"
code=$(curl -s -o /dev/null -w '%{http_code}' "$SL_API/api/v1/tasks/$ID/result?format=svg")
assert_eq "svg of a syscall task" 400 "$code"

# the CLI, against the noisy neighbour: its own errors only
sl_cli syscall-errors --container "${N:0:12}" --duration 2s >"$SL_LOGDIR/cli.txt" 2>&1 || { cat "$SL_LOGDIR/cli.txt"; fail "sandlens syscall-errors"; }
cat "$SL_LOGDIR/cli.txt"
grep -Eq '^openat +ENOENT +[0-9]+' "$SL_LOGDIR/cli.txt" || fail "CLI table lacks openat ENOENT"
grep -Eq '^close +EBADF +[0-9]+' "$SL_LOGDIR/cli.txt" || fail "CLI table lacks close EBADF"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
