#!/bin/bash
# Finding 8 (the byte cap): a store capped at store.max_bytes stays under it
# under an exec storm with long command lines: the file plus its WAL never
# exceed the cap, the oldest rows go first (counted in
# sandlens_store_retention_deleted_total{limit="bytes"}), the newest stay.
# Before: no byte cap at all (only rows and age).
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_require_cmd sqlite3

CAP=$((2 << 20))
sl_write_config "tasks:
  store_path: $SL_TMP/tasks.db"
sed -i "s|path: $SL_DB|path: $SL_DB\n  max_bytes: 2MiB|" "$SL_CONFIG"
sl_agent_launch

size() { echo $(($(stat -c %s "$SL_DB" 2>/dev/null || echo 0) + $(stat -c %s "$SL_DB-wal" 2>/dev/null || echo 0))); }
PAD=$(printf 'p%.0s' $(seq 1 900))
storm() { while :; do sh -c "/bin/true $PAD"; done; }
storm &
storm_pid=$!
sl_on_exit "kill $storm_pid 2>/dev/null"

peak=0 n=0 after=0
while :; do
	s=$(size)
	[ "$s" -gt "$peak" ] && peak=$s
	[ "$s" -le "$CAP" ] || fail "store file + WAL at $s bytes, over the $CAP-byte cap"
	del=$(sl_metric sandlens_store_retention_deleted_total 'limit="bytes"')
	if [ "$del" -gt 0 ]; then
		after=$((after + 1))
		[ $after -ge 20 ] && break # 10 s past the first trim
	fi
	[ $n -lt 240 ] || fail "the cap was not reached within 120 s (peak $peak bytes, deleted $del)"
	sleep 0.5
	n=$((n + 1))
done
kill "$storm_pid" 2>/dev/null
wait "$storm_pid" 2>/dev/null
sleep 1
s=$(size)
[ "$s" -le "$CAP" ] || fail "store file + WAL at $s bytes after the storm (cap $CAP)"
used=$(curl -sf "$SL_API/healthz" | jq '.store.used_bytes')
[ "$used" -le "$CAP" ] || fail "/healthz used_bytes $used over the cap $CAP"
rows=$(sqlite3 "file:$SL_DB?mode=ro" 'SELECT count(*) FROM events')
[ "$rows" -gt 100 ] || fail "only $rows rows kept under a $CAP-byte cap"
# the newest rows are kept: the last exec before the end of the storm is there
/bin/true mk-last
sleep 1.5
assert_eq "newest exec kept" 1 "$(sqlite3 "file:$SL_DB?mode=ro" "SELECT count(*) FROM events WHERE json_extract(json,'\$.argv[1]')='mk-last'")"
del=$(sl_metric sandlens_store_retention_deleted_total 'limit="bytes"')
note "cap $CAP: peak file+WAL $peak bytes, $rows rows kept, $del deleted by the byte cap"
echo "ok - the store stayed under its $CAP-byte cap (peak $peak) under a storm; $del rows deleted oldest first"

sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
