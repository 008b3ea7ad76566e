#!/bin/bash
# SIGTERM: sandlensd exits 0, every BPF program it loaded is gone from
# `bpftool prog show`, and the events it saw right before the signal are in
# its SQLite store (WAL mode): a restart on the same database serves them.
# SIGINT: exits 0 too. SIGHUP is a reload, never a stop: the agent keeps
# running and serving, says so in the log, and stops cleanly on SIGTERM after.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/../lib/checks.sh"
sl_init
sl_require_agent_env
ct_require
sl_require_cmd bpftool sqlite3

prog_ids() { bpftool prog show -j 2>/dev/null | jq -r '.[].id' | sort -n; }

# Program names in our BPF objects (kernel names are cut to 15 chars).
our_names=$(for o in "$SL_BUILD"/bpf/*.bpf.o; do
	[ -f "$o" ] && readelf -sW "$o" | awk '$4 == "FUNC" && $5 == "GLOBAL" {print substr($8, 1, 15)}'
done | sort -u)

before=$(prog_ids)
sl_agent_start
after=$(bpftool prog show -j | jq -c '.[] | {id, name}')
ours=()
while read -r line; do
	id=$(jq -r .id <<<"$line") name=$(jq -r '.name // ""' <<<"$line")
	grep -qx "$id" <<<"$before" && continue
	if [ -n "$our_names" ] && ! grep -qxF "${name:0:15}" <<<"$our_names"; then
		continue
	fi
	ours+=("$id")
	note "agent program id $id name $name"
done <<<"$after"
[ ${#ours[@]} -gt 0 ] || fail "no new BPF programs appeared after sandlensd started"

ct_script "$SL_TMP/run.sh" exit
ct_create sig kubepods --script "$SL_TMP/run.sh" -- /run.sh
EXP_CID=$CT_ID EXP_POD=$CT_POD_UID EXP_RUNTIME="" EXP_CGIDS=""
ct_run || fail "container exited with status $?"
# Let the poll loop read the ring buffer, but do not wait for the store: the
# shutdown must flush what is queued.
sleep 0.5
sl_agent_stop
rc=$?
assert_eq "sandlensd exit status on SIGTERM" 0 "$rc"

left=$(prog_ids)
for id in "${ours[@]}"; do
	grep -qx "$id" <<<"$left" && fail "BPF program $id still loaded after sandlensd exited: $(bpftool prog show id "$id")"
done
echo "ok - all ${#ours[@]} programs of the agent are gone from bpftool prog show"

[ -f "$SL_DB" ] || fail "database $SL_DB missing"
assert_eq "journal_mode" wal "$(sqlite3 "$SL_DB" 'PRAGMA journal_mode;')"
assert_eq "integrity_check" ok "$(sqlite3 "$SL_DB" 'PRAGMA integrity_check;')"

# Restart on the same database: the exit-3 event is there.
sl_agent_launch
check_exit_part
sl_agent_stop
rc=$?
# stop_by SIG: start the agent, send SIG, wait (20 s) for it to exit; its status
stop_by() {
	sl_agent_launch
	kill -"$1" "$SL_AGENT_PID"
	local n=0
	while kill -0 "$SL_AGENT_PID" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$SL_AGENT_PID/stat" 2>/dev/null)" != Z ] && [ $n -lt 200 ]; do
		sleep 0.1; n=$((n + 1))
	done
	[ $n -lt 200 ] || fail "sandlensd did not exit within 20 s of SIG$1"
	wait "$SL_AGENT_PID"
	local rc=$?
	SL_AGENT_PID=
	return $rc
}
# and SIGINT
stop_by INT
assert_eq "sandlensd exit status on SIGINT" 0 "$?"
# and SIGHUP: a reload (docs/DEPLOY.md), not a stop: still running and
# serving 2 s later, the reload in the log, then SIGTERM stops it with 0
# (before the reload it was a clean stop; before that it killed the agent)
sl_agent_launch
kill -HUP "$SL_AGENT_PID"
sleep 2
kill -0 "$SL_AGENT_PID" 2>/dev/null || fail "sandlensd exited on SIGHUP"
assert_eq "healthz after SIGHUP" ok "$(curl -s -m 5 "http://127.0.0.1:$SL_PORT/healthz" | jq -r .status)"
grep -q "reload: SIGHUP: .* reloaded: 0 keys changed" "$SL_LOGDIR/agent.stderr" || fail "no reload line in the log"
# the config replaced by a FIFO nobody writes: the reload is refused at
# once, the poll loop goes on (events, SIGTERM), the old config kept
cp "$SL_CONFIG" "$SL_TMP/config.keep"
rm -f "$SL_CONFIG" && mkfifo "$SL_CONFIG"
kill -HUP "$SL_AGENT_PID"
for _ in $(seq 50); do grep -q "not a regular file" "$SL_LOGDIR/agent.stderr" && break; sleep 0.1; done
grep -q "not a regular file" "$SL_LOGDIR/agent.stderr" || fail "SIGHUP with a FIFO config: no refusal in the log (the poll loop is stuck?)"
kill -HUP "$SL_AGENT_PID"
sleep 1
[ "$(grep -c "not a regular file" "$SL_LOGDIR/agent.stderr")" -ge 2 ] || fail "a second SIGHUP after the FIFO was not handled"
rm -f "$SL_CONFIG" && cp "$SL_TMP/config.keep" "$SL_CONFIG"
echo "ok - SIGHUP with the config replaced by a FIFO: refused at once, the agent goes on"
sl_agent_stop
assert_eq "sandlensd exit status on SIGTERM after SIGHUP" 0 "$?"
[ -e "$SL_SOCK" ] && fail "the unix socket was left behind"
echo "ok - SIGHUP reloads and the agent keeps running"
echo "PASS"
