#!/bin/bash
# The event store and a shared (1777) directory. Any store.path in a
# directory others can write is refused, sticky or not (they could plant
# SQLite's -wal/-shm between the agent's check and SQLite's own open):
# sandlensd exits 1 naming store.path and the directory. Files planted
# there before the directory was made private (chmod 755) are refused too:
# a symlink to a file of root's or a nobody-owned 0666 file: exit 1 naming
# store.path and the reason, the symlink's target is not turned into a
# database, the planted file stays nobody's, unchanged, with no -wal/-shm
# next to it. An agent on a fresh path in the private directory creates the
# store and its -wal/-shm 0600.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_require_cmd setpriv
sl_write_config
shared="$SL_TMP/shared"
mkdir "$shared"
chmod 1777 "$shared"

# $1: store.path; runs the agent until it exits (or 20 s); sets rc, log
run_agent() {
	local cfg="$SL_TMP/planted.yaml"
	sed "s|path: $SL_DB|path: $1|" "$SL_CONFIG" >"$cfg"
	printf 'tasks:\n  store_path: %s\n' "$SL_TMP/tasks.db" >>"$cfg"
	log="$SL_LOGDIR/planted.$(basename "$1").stderr"
	timeout -s INT 20 "$SL_BUILD/sandlensd" --config "$cfg" >/dev/null 2>"$log"
	rc=$?
}

# --- any path in the shared directory: refused for the directory
run_agent "$shared/new.db"
assert_eq "agent on a path in a 1777 directory: exit status" 1 "$rc"
grep -q "store.path $shared/new.db: .*writable by group or others" "$log" ||
	fail "no message naming store.path and the writable directory: $(cat "$log")"
[ -e "$shared/new.db" ] && fail "a database was created in the 1777 directory"
echo "ok - a store in a directory others can write was refused"

# --- a symlink to root's (empty) file: SQLite would make it a database
: >"$SL_TMP/empty_important"
chmod 600 "$SL_TMP/empty_important"
sum0=$(sha256sum <"$SL_TMP/empty_important")
setpriv --reuid=65534 --regid=65534 --clear-groups ln -s "$SL_TMP/empty_important" "$shared/evx.db" ||
	fail "nobody could not plant the symlink"
setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "touch '$shared/ev.db' && chmod 666 '$shared/ev.db'" ||
	fail "nobody could not plant the file"
chmod 755 "$shared" # private from now on; what was planted stays
run_agent "$shared/evx.db"
assert_eq "agent on a planted symlink: exit status" 1 "$rc"
grep -q "store.path $shared/evx.db: .*symbolic link" "$log" || fail "no message naming store.path and the symlink: $(cat "$log")"
assert_eq "the symlink's target (owner mode size)" "0 600 0 $sum0" \
	"$(stat -c '%u %a %s' "$SL_TMP/empty_important") $(sha256sum <"$SL_TMP/empty_important")"
[ -e "$SL_TMP/empty_important-wal" ] || [ -e "$shared/evx.db-wal" ] && fail "a -wal was created next to the planted symlink"
echo "ok - a planted symlink was refused; its target is unchanged"

# --- a nobody-owned 0666 file
run_agent "$shared/ev.db"
assert_eq "agent on a nobody-owned 0666 file: exit status" 1 "$rc"
grep -q "store.path $shared/ev.db: .*owned by another user" "$log" || fail "no message naming store.path and the owner: $(cat "$log")"
assert_eq "the planted file (owner mode size)" "65534 666 0" "$(stat -c '%u %a %s' "$shared/ev.db")"
for f in "$shared/ev.db-wal" "$shared/ev.db-shm"; do
	[ -e "$f" ] && fail "$f was created next to the planted file ($(stat -c '%u %a' "$f"))"
done
echo "ok - a nobody-owned 0666 file was refused and left as it was"

# --- a fresh path in the (now private) directory: created, private
cfg="$SL_TMP/fresh.yaml"
sed "s|path: $SL_DB|path: $shared/fresh.db|" "$SL_CONFIG" >"$cfg"
printf 'tasks:\n  store_path: %s\n' "$SL_TMP/tasks.db" >>"$cfg"
"$SL_BUILD/sandlensd" --config "$cfg" >/dev/null 2>"$SL_LOGDIR/fresh.stderr" &
pid=$!
sl_on_exit "kill -INT $pid 2>/dev/null; wait $pid 2>/dev/null"
n=0
until [ -e "$shared/fresh.db-shm" ] && grep -q "opened $shared/fresh.db" "$SL_LOGDIR/fresh.stderr"; do
	kill -0 "$pid" 2>/dev/null || fail "the agent on a fresh path exited: $(cat "$SL_LOGDIR/fresh.stderr")"
	[ $n -lt 120 ] || fail "the store at a fresh path was not opened"
	sleep 0.25
	n=$((n + 1))
done
for f in "$shared/fresh.db" "$shared/fresh.db-wal" "$shared/fresh.db-shm"; do
	assert_eq "$f (owner mode)" "0 600" "$(stat -c '%u %a' "$f")"
done
kill -INT "$pid"
wait "$pid"
echo "ok - a fresh store in the private directory and its -wal/-shm are 0600"

# --- a store path through another user's symlink to a private directory
# (break-it): refused before anything is created in the target
mkdir -m 700 "$SL_TMP/target"
chmod 1777 "$shared"
setpriv --reuid=65534 --regid=65534 --clear-groups ln -s "$SL_TMP/target" "$shared/plant" ||
	fail "nobody could not plant the directory symlink"
chmod 755 "$shared"
run_agent "$shared/plant/sub/events.db"
assert_eq "agent on a path through a nobody symlink: exit status" 1 "$rc"
grep -q "store.path $shared/plant/sub/events.db: .*symbolic link owned by uid 65534" "$log" ||
	fail "no message naming store.path and the symlink: $(cat "$log")"
assert_eq "what the target holds" "" "$(ls -A "$SL_TMP/target")"
echo "ok - a path through another user's symlink was refused; nothing made in its target"
