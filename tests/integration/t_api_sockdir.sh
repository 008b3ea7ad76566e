#!/bin/bash
# api.unix_socket's directory is checked like the stores' (break-it): in a
# directory owned by another (non-root) user, in one group or others may
# write without the sticky bit, or under another user's symlink, sandlensd
# exits 2 naming api.unix_socket, the directory and why (before anything
# starts; --check-config says the same). A sticky world-writable directory
# (/tmp style), a root 0755 one and a missing one under it (created at start)
# are accepted. Only the config is read: no BPF, no agent run.
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
sl_check_failed
