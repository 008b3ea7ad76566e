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
expect_error "relative store.path" 2 "store.path: must be an absolute path" "$base
store:
  path: relative.db"
expect_error "relative tasks.store_path" 2 "tasks.store_path: must be an absolute path" "$base
tasks:
  store_path: rel/x.db"
expect_error "task store is the event store" 2 tasks.store_path "$base
store:
  path: $SL_TMP/same.db
tasks:
  store_path: $SL_TMP/same.db"
mkdir -p "$SL_TMP/real" && ln -sfn "$SL_TMP/real" "$SL_TMP/alias"
expect_error "task store is the event store, directories not made yet" 2 tasks.store_path "$base
store:
  path: $SL_TMP/new/events.db
tasks:
  store_path: $SL_TMP/new/./sub/../events.db"
[ -e "$SL_TMP/new" ] && fail "--check-config made a directory"
expect_error "task store is the event store through a symlink" 2 tasks.store_path "$base
store:
  path: $SL_TMP/real/same.db
tasks:
  store_path: $SL_TMP/alias/same.db"
expect_error "capture store is the event store" 2 auto.store_path "$base
store:
  path: $SL_TMP/same.db
auto:
  enabled: true
  store_path: $SL_TMP/same.db"
expect_error "capture store is the profile window store" 2 auto.store_path "$base
store:
  path: $SL_TMP/ev.db
auto:
  enabled: true
  store_path: $SL_TMP/profiles.db"
expect_error "relative capture store" 2 auto.store_path "$base
auto:
  store_path: rel.db"
expect_error "relative profile window store" 2 profiling.continuous.store_path "$base
profiling:
  continuous:
    store_path: rel.db"
expect_error "unknown nested key" 2 store.bogus "$base
store:
  path: $SL_TMP/db.sqlite
  bogus: 1"
expect_error "unknown nested key (own map)" 2 proc.no_such_knob "$base
proc:
  no_such_knob: true"
expect_error "unknown mem tracepoint" 2 mem.missing_tracepoints "$base
mem:
  missing_tracepoints: [nonexistent_tp]"
grep -q "nonexistent_tp.*mm_vmscan_throttled" "$SL_LOGDIR/cfg.err" ||
	fail "mem.missing_tracepoints error does not list the known tracepoints: $(head -c 500 "$SL_LOGDIR/cfg.err")"
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
expect_error "pressure budget not a decimal" 2 pressure.cpu_budget "$base
pressure:
  cpu_budget: 10%"
expect_error "pressure cgroup name escapes" 2 pressure.cgroup.name "$base
pressure:
  cgroup:
    enabled: true
    name: ../x"
expect_error "pressure cgroup name checked while the cgroup is off" 2 pressure.cgroup.name "$base
pressure:
  cgroup:
    enabled: false
    name: ../x"
expect_error "negative count" 2 store.max_rows "$base
store:
  path: $SL_TMP/db.sqlite
  max_rows: -5"
expect_error "YAML syntax error" nonzero "$(basename "$SL_TMP")" "$base
proc: [unclosed"
expect_error "section given a scalar" 2 "store: must be a mapping" "$base
store: 5"
expect_error "key given a mapping" 2 "api.threads: expected a single value" "$base
  threads:
    n: 2"
expect_error "key with no value" 2 "store.max_rows: no value" "$base
store:
  max_rows:"
expect_error "unknown v1 controller" 2 attribution.v1_controller "$base
attribution:
  v1_controller: bogus"
expect_error "second YAML document" 2 "only one YAML document" "$base
---
log_level: debug"
expect_error "dotted key" 2 "store.path: unknown key" "$base
store.path: $SL_TMP/db.sqlite"
expect_error "empty tracefs" 2 tracefs "$base
tracefs: \"\""
expect_error "empty runc_root" 2 attribution.runc_root "$base
attribution:
  runc_root: \"\""
expect_error "empty sched.watch" 2 sched.watch "$base
sched:
  watch: \"\""

# The config path is not a regular file: a FIFO (nobody writes it) and a
# device are refused at once, never waited on (SIGHUP re-reads the same
# path on the poll loop: a FIFO there must not stop the agent).
mkfifo "$SL_TMP/fifo.yaml"
for f in "$SL_TMP/fifo.yaml" /dev/zero; do
	timeout -k 2 10 "$SL_BUILD/sandlensd" --check-config --config "$f" >"$SL_LOGDIR/cfg.out" 2>"$SL_LOGDIR/cfg.err"
	rc=$?
	[ "$rc" = 124 ] && fail "config $f: sandlensd blocked on it"
	[ "$rc" = 2 ] || fail "config $f: exit $rc, expected 2"
	grep -q "not a regular file" "$SL_LOGDIR/cfg.err" || fail "config $f: $(head -c 300 "$SL_LOGDIR/cfg.err")"
	echo "ok - config $f refused at once: $(head -n 1 "$SL_LOGDIR/cfg.err")"
done

# Messages (finding 5): a plain number of an ns key names its unit, a key
# with a NUL byte is not reported as the valid key before it, and an ESC in a
# key or value reaches stderr escaped, never raw.
expect_error "plain number of an ns key" 2 "mem.stall_threshold: 5 (ns) out of range [1us, 1m]" "$base
mem:
  stall_threshold: 5"
expect_error "key with a NUL byte" 2 'mem.stall_rate\x00x: the key contains a NUL byte' "$base
mem:
  \"stall_rate\\0x\": 1"
expect_error "ESC in a key" 2 'mem.a\x1b[2Jb: unknown key' "$base
mem:
  \"a\\e[2Jb\": 1"
expect_error "ESC in a value" 2 "log_level: 'x\\x1b[2J'" "$base
log_level: \"x\\e[2J\""
for f in "$SL_LOGDIR"/cfg-*ESC*.err "$SL_LOGDIR/cfg-key with a NUL byte.err"; do
	if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$f"; then
		fail "raw control byte on stderr: $(head -c 300 "$f" | od -c | head -5)"
	fi
done

# Accepted: --check-config exits 0 (starts nothing).
# 40k nested flow mappings: libyaml alone took ~20 s to load them (quadratic
# in the depth); the depth limit refuses them before loading, at once.
deep=$(awk 'BEGIN { for (i = 0; i < 40000; i++) { o = o "{a: "; c = c "}" } print "store: " o "1" c }')
expect_error "nesting 40000 deep (depth limit)" 2 "depth limit" "$base
$deep"
unset deep
expect_ok() { # WHAT YAML
	local what=$1 f="$SL_TMP/ok-$RANDOM.yaml" rc
	printf '%s\n' "$2" >"$f"
	timeout -k 2 10 "$SL_BUILD/sandlensd" --check-config --config "$f" >"$SL_LOGDIR/cfg.out" 2>"$SL_LOGDIR/cfg.err"
	rc=$?
	[ "$rc" = 0 ] || fail "$what: exit status $rc, expected 0 (stderr: $(head -c 500 "$SL_LOGDIR/cfg.err"))"
	echo "ok - $what: accepted"
}
expect_ok "section with every key commented out" "$base
store:
  # path: /var/lib/sandlens/events.db
  # max_rows: 5
proc: ~"
expect_ok "v1 controller pids" "$base
attribution:
  v1_controller: pids"
expect_ok "shipped deploy/sandlensd.yaml" "$(cat "$SL_ROOT/deploy/sandlensd.yaml")"

f="$SL_TMP/missing.yaml"
timeout -k 2 10 "$SL_BUILD/sandlensd" --config "$f" >/dev/null 2>"$SL_LOGDIR/cfg.err"
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "missing config file: exit status $rc"
grep -qF "missing.yaml" "$SL_LOGDIR/cfg.err" || fail "missing config file: stderr does not name the file"
echo "ok - missing config file: exit $rc"

# a config others can write is refused (break-it item 12d): exit 2 naming the file and why
f="$SL_TMP/ww-config.yaml"
printf '%s\n' "$base" >"$f"
chmod 0666 "$f"
timeout -k 2 10 "$SL_BUILD/sandlensd" --config "$f" >/dev/null 2>"$SL_LOGDIR/cfg-ww.err"
rc=$?
assert_eq "world-writable config: exit status" 2 "$rc"
grep -qF "$f: refusing it: writable by group or others" "$SL_LOGDIR/cfg-ww.err" ||
	fail "world-writable config: stderr does not name the file and why: $(head -c 400 "$SL_LOGDIR/cfg-ww.err")"
if [ "$(id -u)" = 0 ]; then
	chmod 0644 "$f" && chown 65534:65534 "$f"
	timeout -k 2 10 "$SL_BUILD/sandlensd" --check-config --config "$f" >/dev/null 2>"$SL_LOGDIR/cfg-nb.err"
	rc=$?
	assert_eq "config owned by uid 65534: exit status" 2 "$rc"
	grep -qF "$f: refusing it: owned by another user" "$SL_LOGDIR/cfg-nb.err" ||
		fail "config owned by uid 65534: stderr: $(head -c 400 "$SL_LOGDIR/cfg-nb.err")"
fi
echo "ok - a config others can write or own: exit 2"
# ... but a 0777 directory on a read-only mount (a Kubernetes ConfigMap
# volume) is written by no one: accepted
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	d="$SL_TMP/cm" && mkdir -m 0777 "$d" && chmod 0777 "$d"
	printf '%s\n' "$base" >"$d/sandlensd.yaml"
	chmod 0644 "$d/sandlensd.yaml"
	timeout -k 2 10 "$SL_BUILD/sandlensd" --check-config --config "$d/sandlensd.yaml" >/dev/null 2>"$SL_LOGDIR/cfg-cm-rw.err"
	assert_eq "config in a writable 0777 directory: exit status" 2 "$?"
	timeout -k 2 10 unshare -m --propagation private sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" || exit 90
		exec "$2" --check-config --config "$1/sandlensd.yaml"' sh "$d" "$SL_BUILD/sandlensd" >/dev/null 2>"$SL_LOGDIR/cfg-cm-ro.err"
	rc=$?
	if [ "$rc" = 90 ]; then
		note "no read-only bind mount here: the ConfigMap case is not checked"
	else
		assert_eq "config in a 0777 directory mounted read-only: exit status" 0 "$rc"
	fi
fi
sl_check_failed
echo "PASS"
