#!/bin/bash
# One agent per store: a second sandlensd on the same store.path refuses to
# start (exit 1, message naming the store) before it opens the store or
# loads any BPF program, so no event is recorded twice and its retention
# settings never touch the first agent's rows; the first agent is
# unaffected. The same holds for the task store (tasks.store_path, by
# default tasks.db next to store.path): an agent with its own event store
# but the same task store is refused too.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_agent_start
first_api=$SL_API

# some events in the first agent's store
for i in $(seq 1 20); do /bin/true; done
n=0
until [ "$(curl -sf "$first_api/api/v1/events?type=exec&limit=1000" | jq '.events | length')" -ge 20 ]; do
	[ $n -lt 40 ] || fail "the first agent did not record 20 execs"
	sleep 0.25
	n=$((n + 1))
done
sleep 1.5 # the store's writer has flushed them
rows() { sqlite3 "file:$SL_DB?mode=ro" 'SELECT count(*) FROM events'; }
rows0=$(rows)
[ "$rows0" -ge 20 ] || fail "only $rows0 rows in the first store"

# a second agent on the same store with a retention that would delete it all
second="$SL_TMP/second.yaml"
sed "s/127.0.0.1:$SL_PORT/127.0.0.1:$(sl_free_port)/; s|unix_socket: .*|unix_socket: $SL_TMP/second.sock|; s|^store:|store:\n  max_age: 1s\n  max_rows: 1|" \
	"$SL_CONFIG" >"$second"
before=$(bpftool prog show 2>/dev/null | grep -c "name handle_exec")
for try in 1 2 3; do
	timeout -s INT 20 "$SL_BUILD/sandlensd" --config "$second" >"$SL_LOGDIR/second.stdout" 2>"$SL_LOGDIR/second.stderr"
	rc=$?
	assert_eq "second agent on the same store (try $try): exit status" 1 "$rc"
done
grep -q "store .* is in use by another sandlensd" "$SL_LOGDIR/second.stderr" || fail "no message naming the store lock: $(cat "$SL_LOGDIR/second.stderr")"
grep -q "opened" "$SL_LOGDIR/second.stderr" && fail "the second agent opened the store before refusing: $(cat "$SL_LOGDIR/second.stderr")"
assert_eq "handle_exec programs loaded while the second agent ran" "$before" "$(bpftool prog show 2>/dev/null | grep -c 'name handle_exec')"
grep -q "hook " "$SL_LOGDIR/second.stderr" && fail "the second agent attached hooks before refusing"
rows1=$(rows)
[ "$rows1" -ge "$rows0" ] || fail "the first store lost rows while the second agent tried: $rows0 -> $rows1"
echo "ok - the second agent was refused three times; the first store kept its $rows0 rows ($rows1 now)"

# a fourth agent that reaches the same store through a symlinked directory
ln -s "$SL_TMP" "$SL_TMP/alias"
fourth="$SL_TMP/fourth.yaml"
sed "s/127.0.0.1:$SL_PORT/127.0.0.1:$(sl_free_port)/; s|unix_socket: .*|unix_socket: $SL_TMP/fourth.sock|; s|path: $SL_DB|path: $SL_TMP/alias/events.db\n  max_age: 1s\n  max_rows: 1|" \
	"$SL_CONFIG" >"$fourth"
printf 'tasks:\n  store_path: %s\n' "$SL_TMP/fourth-tasks.db" >>"$fourth"
timeout -s INT 20 "$SL_BUILD/sandlensd" --config "$fourth" >"$SL_LOGDIR/fourth.stdout" 2>"$SL_LOGDIR/fourth.stderr"
rc=$?
assert_eq "agent on the same store through a symlink: exit status" 1 "$rc"
grep -q "store .* is in use by another sandlensd" "$SL_LOGDIR/fourth.stderr" || fail "no lock message: $(cat "$SL_LOGDIR/fourth.stderr")"
rows2=$(rows)
[ "$rows2" -ge "$rows0" ] || fail "the first store lost rows to the symlinked agent: $rows0 -> $rows2"
echo "ok - the same store through a symlink was refused; rows kept ($rows2)"

# a third agent with its own event store but the same (default) task store
third="$SL_TMP/third.yaml"
sed "s/127.0.0.1:$SL_PORT/127.0.0.1:$(sl_free_port)/; s|unix_socket: .*|unix_socket: $SL_TMP/third.sock|; s|path: $SL_DB|path: $SL_TMP/third-events.db|" \
	"$SL_CONFIG" >"$third"
timeout -s INT 20 "$SL_BUILD/sandlensd" --config "$third" >"$SL_LOGDIR/third.stdout" 2>"$SL_LOGDIR/third.stderr"
rc=$?
assert_eq "third agent on the same task store: exit status" 1 "$rc"
grep -q "tasks store .*tasks.db is in use by another sandlensd" "$SL_LOGDIR/third.stderr" ||
	fail "no message naming the task store lock: $(cat "$SL_LOGDIR/third.stderr")"
[ -e "$SL_TMP/third-events.db" ] && fail "the third agent created its event store before refusing"
echo "ok - an agent sharing only the task store was refused"

# a planted symlink at a lock path is refused, and its target is not touched
fifth="$SL_TMP/fifth.yaml"
victim="$SL_TMP/victim-file"
printf 'keep me\n' >"$victim"
ln -s "$victim" "$SL_TMP/fifth-events.db.lock"
sed "s/127.0.0.1:$SL_PORT/127.0.0.1:$(sl_free_port)/; s|unix_socket: .*|unix_socket: $SL_TMP/fifth.sock|; s|path: $SL_DB|path: $SL_TMP/fifth-events.db|" \
	"$SL_CONFIG" >"$fifth"
printf 'tasks:\n  store_path: %s\n' "$SL_TMP/fifth-tasks.db" >>"$fifth"
timeout -s INT 20 "$SL_BUILD/sandlensd" --config "$fifth" >"$SL_LOGDIR/fifth.stdout" 2>"$SL_LOGDIR/fifth.stderr"
rc=$?
assert_eq "agent whose lock path is a planted symlink: exit status" 1 "$rc"
grep -q "lock .*fifth-events.db.lock: is a symbolic link" "$SL_LOGDIR/fifth.stderr" ||
	fail "no message naming the symlinked lock: $(cat "$SL_LOGDIR/fifth.stderr")"
assert_eq "symlink target of the planted lock" "keep me" "$(cat "$victim")"
echo "ok - a planted symlink at the lock path was refused"

curl -sf "$first_api/healthz" >/dev/null || fail "first agent stopped answering"
sl_agent_stop || fail "first sandlensd exited with status $? on SIGTERM"
echo "PASS"
