#!/bin/bash
# api.unix_socket's directory is checked like the stores' (break-it): in a
# directory owned by another (non-root) user, in one group or others may
# write without the sticky bit, or under another user's symlink, sandlensd
# exits 2 naming api.unix_socket, the directory and why (before anything
# starts; --check-config says the same). A sticky world-writable directory
# (/tmp style), a root 0755 one and a missing one under it (created at start)
# are accepted. Only the config is read, except in the last case: a missing
# directory (in a sticky one) made by another user after the start-up check
# is refused before the agent binds there (the agent re-checks after its
# mkdir); directories above the socket's are checked too (another user's
# directory above, or one open to all without the sticky bit).
# sl-san: once (configuration checks; src/common/dir_trust.c runs under ASan in test_dir_trust)
source "$(dirname "$0")/../lib/common.sh"
sl_init
[ -x "$SL_BUILD/sandlensd" ] || fail "$SL_BUILD/sandlensd not built"
[ "$(id -u)" = 0 ] || skip "needs root (directories of another user)"

PORT=$(sl_free_port)
conf() { # SOCKET -> config file path
	local f="$SL_TMP/c-$RANDOM.yaml"
	printf 'api:\n  listen: "127.0.0.1:%s"\n  unix_socket: %s\n  token_file: ""\nstore:\n  path: %s/events.db\n' \
		"$PORT" "$1" "$SL_TMP" >"$f"
	echo "$f"
}
run() { # WHAT ARGS... -> rc in $rc, stderr in $SL_LOGDIR/WHAT.err
	local what=$1
	shift
	timeout -k 2 15 "$SL_BUILD/sandlensd" "$@" >"$SL_LOGDIR/$what.out" 2>"$SL_LOGDIR/$what.err"
	rc=$?
}
refused() { # WHAT DIR REASON
	local f
	f=$(conf "$2/api.sock")
	for mode in check start; do
		if [ $mode = check ]; then run "$1-$mode" --check-config --config "$f"; else run "$1-$mode" --config "$f"; fi
		assert_eq "$1 ($mode): exit status" 2 "$rc"
		grep -qF "api.unix_socket: $2/api.sock: refusing its directory: it $3" "$SL_LOGDIR/$1-$mode.err" ||
			fail "$1 ($mode): stderr does not name the key, the socket and '$3': $(head -c 400 "$SL_LOGDIR/$1-$mode.err")"
	done
	[ -e "$2/api.sock" ] && fail "$1: a socket was made in $2"
	echo "ok - $1: exit 2, $(head -n 1 "$SL_LOGDIR/$1-start.err" | head -c 200)"
}
accepted() { # WHAT SOCKET
	run "$1" --check-config --config "$(conf "$2")"
	assert_eq "$1: --check-config exit status" 0 "$rc"
	echo "ok - $1: accepted"
}

mkdir -m 0755 "$SL_TMP/nobody" && chown 65534:65534 "$SL_TMP/nobody"
refused "directory of uid 65534" "$SL_TMP/nobody" "is owned by another user"
refused "missing directory under uid 65534's" "$SL_TMP/nobody/run" "would be made in $SL_TMP/nobody, owned by another user"
mkdir -m 0777 "$SL_TMP/ww" && chmod 0777 "$SL_TMP/ww"
refused "0777 directory" "$SL_TMP/ww" "is writable by group or others (others could put their own socket"
mkdir -m 0770 "$SL_TMP/gw" && chmod 0770 "$SL_TMP/gw"
refused "0770 directory" "$SL_TMP/gw" "is writable by group or others"
ln -s /run "$SL_TMP/nobody/l" && chown -h 65534:65534 "$SL_TMP/nobody/l"
mkdir -m 0755 "$SL_TMP/ok" && ln -s /run "$SL_TMP/ok/l" && chown -h 65534:65534 "$SL_TMP/ok/l"
refused "uid 65534's symlink on the path" "$SL_TMP/ok/l/sandlens-x" "has $SL_TMP/ok/l on its path, a symbolic link owned by uid 65534"

mkdir -m 1777 "$SL_TMP/sticky" && chmod 1777 "$SL_TMP/sticky"
accepted "sticky 1777 directory" "$SL_TMP/sticky/api.sock"
accepted "root 0755 directory" "$SL_TMP/ok/api.sock"
accepted "missing directory under a root one" "$SL_TMP/ok/run/api.sock"
mkdir -m 0755 "$SL_TMP/nobody/sub"
refused "directory under uid 65534's" "$SL_TMP/nobody/sub" "has $SL_TMP/nobody on its path, a directory owned by uid 65534"
mkdir -m 0755 "$SL_TMP/ww/sub"
refused "directory under a 0777 one" "$SL_TMP/ww/sub" "has $SL_TMP/ww on its path, a directory writable by group or others (not sticky)"

# another user listening on the socket's path in a sticky directory: the
# agent cannot take the path and says whose socket is there
command -v python3 >/dev/null || fail "needs python3 (a listener as uid 65534; .ci/run installs it)"
runuser -u nobody -- python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); s.listen(4)
open(sys.argv[2], "w").close()
time.sleep(120)' "$SL_TMP/sticky/squat.sock" "$SL_TMP/sticky/squat.ready" &
squat=$!
sl_on_exit "kill $squat 2>/dev/null"
n=0
until [ -e "$SL_TMP/sticky/squat.ready" ]; do
	n=$((n + 1)); [ $n -lt 100 ] || fail "squat: uid 65534's listener did not start"
	sleep 0.1
done
run squat --config "$(conf "$SL_TMP/sticky/squat.sock")"
[ $rc != 0 ] && [ $rc != 124 ] || fail "squat: sandlensd exit status $rc with uid 65534 listening on its socket path"
grep -qF "api.unix_socket: $SL_TMP/sticky/squat.sock is in use by a running process (socket owned by uid 65534 (nobody))" \
	"$SL_LOGDIR/squat.err" || fail "squat: stderr does not name the socket's owner: $(tail -n 3 "$SL_LOGDIR/squat.err" | head -c 400)"
echo "ok - squat: exit $rc, $(grep -m1 'in use' "$SL_LOGDIR/squat.err" | head -c 200)"
kill $squat 2>/dev/null

# the race: uid 65534 makes the missing directory after the start-up check
chmod o+x "$SL_TMP"
f=$(conf "$SL_TMP/sticky/race/api.sock")
timeout -k 2 60 "$SL_BUILD/sandlensd" --config "$f" >"$SL_LOGDIR/race.out" 2>"$SL_LOGDIR/race.err" &
pid=$!
# past the start-up check (the store opens after it; the modules load, then the API binds)
n=0
until grep -q "store: opened" "$SL_LOGDIR/race.err" 2>/dev/null; do
	kill -0 $pid 2>/dev/null || fail "race: sandlensd exited before its store opened: $(tail -n 3 "$SL_LOGDIR/race.err")"
	n=$((n + 1)); [ $n -lt 300 ] || fail "race: the store did not open within 30 s"
	sleep 0.1
done
runuser -u nobody -- mkdir -m 0777 "$SL_TMP/sticky/race" || fail "uid 65534 could not make $SL_TMP/sticky/race"
wait $pid
rc=$?
[ $rc != 0 ] && [ $rc != 124 ] || fail "race: sandlensd exit status $rc (0/124: it ran with its socket in uid 65534's directory)"
grep -qF "api.unix_socket: $SL_TMP/sticky/race/api.sock: refusing its directory: it is owned by another user" "$SL_LOGDIR/race.err" ||
	fail "race: stderr does not refuse the directory: $(tail -n 3 "$SL_LOGDIR/race.err" | head -c 400)"
[ -e "$SL_TMP/sticky/race/api.sock" ] && fail "race: a socket was made in uid 65534's directory"
echo "ok - race: exit $rc, $(grep -m1 refusing "$SL_LOGDIR/race.err" | head -c 200)"
sl_check_failed
