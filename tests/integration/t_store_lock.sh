#!/bin/bash
# One agent per store: a second sandlensd on the same store.path refuses to
# start (exit 1, message naming the store) before it loads any BPF program,
# so no event is recorded twice; the first agent is unaffected.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_agent_start
first_api=$SL_API
second="$SL_TMP/second.yaml"
sed "s/127.0.0.1:$SL_PORT/127.0.0.1:$(sl_free_port)/; s|unix_socket: .*|unix_socket: $SL_TMP/second.sock|" "$SL_CONFIG" >"$second"
before=$(bpftool prog show 2>/dev/null | grep -c "name handle_exec")
"$SL_BUILD/sandlensd" --config "$second" >"$SL_LOGDIR/second.stdout" 2>"$SL_LOGDIR/second.stderr"
rc=$?
assert_eq "second agent on the same store: exit status" 1 "$rc"
grep -q "in use by another sandlensd" "$SL_LOGDIR/second.stderr" || fail "no message naming the store lock: $(cat "$SL_LOGDIR/second.stderr")"
assert_eq "handle_exec programs loaded while the second agent ran" "$before" "$(bpftool prog show 2>/dev/null | grep -c 'name handle_exec')"
grep -q "hook " "$SL_LOGDIR/second.stderr" && fail "the second agent attached hooks before refusing"
curl -sf "$first_api/healthz" >/dev/null || fail "first agent stopped answering"
sl_agent_stop || fail "first sandlensd exited with status $? on SIGTERM"
echo "PASS"
