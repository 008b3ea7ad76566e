#!/bin/bash
# Config errors: an unknown key or a bad value makes sandlensd exit 2 with
# the key's dotted name on stderr (docs/CONFIG.md); a YAML syntax error and a
# missing file fail too. Needs no root: the config is read first.
source "$(dirname "$0")/../lib/common.sh"
sl_init
[ -x "$SL_BUILD/sandlensd" ] || fail "$SL_BUILD/sandlensd not built"

PORT=$(sl_free_port)
base="api:
  listen: \"127.0.0.1:$PORT\""

expect_error() { # WHAT WANT_RC KEY YAML (appended after the base)
	local what=$1 want=$2 key=$3 yaml=$4 f="$SL_TMP/c-$RANDOM.yaml" rc
	printf '%s\n' "$yaml" >"$f"
	timeout -k 2 10 "$SL_BUILD/sandlensd" --config "$f" >"$SL_LOGDIR/cfg.out" 2>"$SL_LOGDIR/cfg.err"
	rc=$?
	cp "$SL_LOGDIR/cfg.err" "$SL_LOGDIR/cfg-$what.err"
	[ "$rc" = 124 ] && fail "$what: sandlensd accepted the config and kept running"
	if [ "$want" = nonzero ]; then
		[ "$rc" -ne 0 ] || fail "$what: exit status 0"
	else
		[ "$rc" = "$want" ] || fail "$what: exit status $rc, expected $want (stderr: $(head -c 500 "$SL_LOGDIR/cfg.err"))"
	fi
	grep -qF -- "$key" "$SL_LOGDIR/cfg.err" || fail "$what: stderr does not name '$key': $(head -c 500 "$SL_LOGDIR/cfg.err")"
	echo "ok - $what: exit $rc, stderr: $(head -n 1 "$SL_LOGDIR/cfg.err" | head -c 200)"
}

expect_error "unknown top-level key" 2 bogus_key "$base
bogus_key: 1"
expect_error "unknown nested key" 2 store.bogus "$base
store:
  path: $SL_TMP/db.sqlite
  bogus: 1"
expect_error "unknown nested key (own map)" 2 proc.no_such_knob "$base
proc:
  no_such_knob: true"
expect_error "non-numeric rate" 2 proc.exec_rate "$base
proc:
  exec_rate: abc"
expect_error "bad duration" 2 store.max_age "$base
store:
  path: $SL_TMP/db.sqlite
  max_age: 5x"
expect_error "bad log level" 2 log_level "log_level: loud
$base"
expect_error "bad boolean" 2 attribution.enabled "$base
attribution:
  enabled: maybe"
expect_error "bad byte size" 2 proc.ringbuf_size "$base
proc:
  ringbuf_size: lots"
expect_error "negative count" 2 store.max_rows "$base
store:
  path: $SL_TMP/db.sqlite
  max_rows: -5"
expect_error "YAML syntax error" nonzero "$(basename "$SL_TMP")" "$base
proc: [unclosed"
f="$SL_TMP/missing.yaml"
timeout -k 2 10 "$SL_BUILD/sandlensd" --config "$f" >/dev/null 2>"$SL_LOGDIR/cfg.err"
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "missing config file: exit status $rc"
grep -qF "missing.yaml" "$SL_LOGDIR/cfg.err" || fail "missing config file: stderr does not name the file"
echo "ok - missing config file: exit $rc"
echo "PASS"
