#!/bin/bash
# Finding 6 (issue 8): the store file deleted, replaced or made immutable
# while the agent runs. Before: the agent kept writing to the unlinked file
# (everything since lost at restart) with /healthz "ok", and an immutable
# database let the WAL grow without bound. Now: the condition is detected,
# reported in /healthz (.store: state, reason) and the log (once), the rows
# are held in memory while it lasts, the file is recreated (schema, WAL) at
# the path, and what was held is written there.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_require_cmd sqlite3 chattr
mkdir -p "$SL_TMP/db"
touch "$SL_TMP/db/probe"
chattr +i "$SL_TMP/db/probe" 2>/dev/null || skip "chattr +i is not supported on $SL_TMP's filesystem"
chattr -i "$SL_TMP/db/probe"
rm -f "$SL_TMP/db/probe"
sl_on_exit "chattr -i '$SL_TMP/db/events.db' 2>/dev/null"

# 8 MiB cap: the WAL bound is then 2 MiB (max_bytes / 4)
sl_write_config "tasks:
  store_path: $SL_TMP/tasks.db"
DB="$SL_TMP/db/events.db"
sed -i "s|path: $SL_DB|path: $DB\n  max_bytes: 8MiB|" "$SL_CONFIG"
WAL_LIMIT=$((2 << 20))
sl_agent_launch

source "$(dirname "$0")/../lib/store.sh"
# (the file, not the API: other activity on the host fills the newest pages)
wait_row() {
	local n=0
	until [ "$(in_file "$1")" = 1 ]; do
		[ $n -lt 120 ] || fail "the exec of /bin/true $1 is not in $DB within 30 s ($(in_file "$1"))"
		sleep 0.25
		n=$((n + 1))
	done
}

assert_eq "store state at start" ok "$(health | jq -r '.store.state')"
/bin/true mk-before
wait_row mk-before

# --- deleted: recreated at the path, later events land in the new file
rm -f "$DB"
/bin/true mk-after-delete
wait_store '.reopens >= 1 and .state == "ok"' 20 "store not reopened after deletion"
wait_row mk-after-delete
sleep 0.5
assert_eq "mk-after-delete rows in the file at the path" 1 "$(in_file mk-after-delete)"
grep -q "store unavailable (deleted)" "$SL_LOGDIR/agent.stderr" || fail "no log line for the deletion"
assert_eq "health status after recovery" ok "$(health | jq -r .status)"
echo "ok - a deleted store is recreated and later events are in the new file"

# --- deleted where it cannot be recreated: degraded, rows held, then
# written when it can be. An empty read-only tmpfs mounted over the
# directory (atomic: host activity makes the writer recreate a deleted file
# within milliseconds, so "rm, then make it unwritable" would race)
rm -f "$DB"
mount -t tmpfs -o ro,size=64k sl-store-ro "$SL_TMP/db" || skip "cannot mount a tmpfs here"
sl_on_exit "umount -l '$SL_TMP/db' 2>/dev/null"
/bin/true mk-held
wait_store '.state == "degraded" and (.reason | test("deleted"))' 20 "deleted store not reported degraded"
assert_eq "health status while the store is lost" degraded "$(health | jq -r .status)"
held=$(health | jq '.store.held_rows + .store.queue_depth')
[ "$held" -ge 1 ] || fail "no rows held in memory while the store is lost: $(health | jq -c .store)"
umount "$SL_TMP/db" || fail "umount of the read-only tmpfs failed"
wait_store '.state == "ok"' 30 "store not recovered after the directory became writable"
wait_row mk-held
sleep 0.5
assert_eq "mk-held rows in the recreated file" 1 "$(in_file mk-held)"
echo "ok - a deleted store that could not be recreated was degraded ($held rows held) and its rows were written on recovery"

# --- replaced by another file (a copy moved over it): reopened, written there
r0=$(health | jq '.store.reopens')
sqlite3 "$DB" ".backup '$SL_TMP/db/copy.db'"
# private, as the store requires of its file (the copy has the shell's umask)
chmod 600 "$SL_TMP/db/copy.db"
mv "$SL_TMP/db/copy.db" "$DB"
/bin/true mk-replaced
wait_row mk-replaced
wait_store ".reopens > $r0 and .state == \"ok\"" 20 "replaced store not reopened"
sleep 0.5
assert_eq "mk-replaced rows in the file now at the path" 1 "$(in_file mk-replaced)"
grep -q "store unavailable (replaced)" "$SL_LOGDIR/agent.stderr" || fail "no log line for the replacement"
echo "ok - a replaced store is reopened and written"

# --- immutable database: reported, writes held, WAL bounded, recovers
chattr +i "$DB"
wal0=$(stat -c %s "$DB-wal" 2>/dev/null || echo 0)
/bin/true mk-immutable
# a storm of execs from distinct parents (not rate-limited) and their exits
for i in $(seq 1 1500); do sh -c /bin/true; done
wait_store '.state != "ok" and (.reason | test("immutable"))' 20 "immutable store not reported"
wal1=$(stat -c %s "$DB-wal" 2>/dev/null || echo 0)
note "WAL $wal0 -> $wal1 bytes while immutable (bound $WAL_LIMIT)"
[ "$wal1" -le "$WAL_LIMIT" ] || fail "WAL grew to $wal1 bytes (bound $WAL_LIMIT) while the database was immutable"
kill -0 "$SL_AGENT_PID" || fail "agent died while the store was immutable"
held=$(health | jq '.store.held_rows + .store.queue_depth')
chattr -i "$DB"
wait_store '.state == "ok" and .held_rows == 0 and .queue_depth == 0' 30 "store not recovered after chattr -i"
wait_row mk-immutable
sleep 0.5
assert_eq "mk-immutable rows in the file" 1 "$(in_file mk-immutable)"
wal2=$(stat -c %s "$DB-wal" 2>/dev/null || echo 0)
[ "$wal2" -le "$WAL_LIMIT" ] || fail "WAL at $wal2 bytes after recovery (bound $WAL_LIMIT)"
dropped=$(health | jq '.store.dropped_unavailable')
assert_eq "records dropped while unavailable (queue large enough)" 0 "$dropped"
echo "ok - an immutable store was reported, $held rows held, WAL $wal1 <= $WAL_LIMIT bytes, all written after chattr -i"

lines=$(grep -c "store unavailable" "$SL_LOGDIR/agent.stderr")
conds=$(sl_metric sandlens_store_unavailable_total)
[ "$lines" -le "$conds" ] || fail "$lines 'store unavailable' lines for $conds conditions"
echo "ok - $lines 'store unavailable' log lines for $conds conditions"

sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
