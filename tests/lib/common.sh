# Shared helpers for tests/integration/t_*.sh and bench/*.sh (bash; source it).
#
#   sl_init                 set SL_ROOT, SL_BUILD (absolute), SL_TMP (a fresh
#                           temp dir), SL_LOGDIR (kept for the runner), the
#                           EXIT trap (stops the agent, deletes containers)
#   skip REASON             print "SKIP: REASON", exit 77
#   fail MSG                print "FAIL: MSG", exit 1
#   sl_require_root / sl_require_btf / sl_require_cmd CMD... / sl_require_build
#   sl_free_port            a free random TCP port in 20000..59999
#   sl_agent_start [YAML]   write a config (own port, db, socket, token file;
#                           YAML lines appended verbatim at top level), start
#                           sandlensd, wait for /healthz; sets SL_PORT SL_API
#                           SL_AGENT_PID SL_DB SL_CONFIG SL_SOCK SL_TOKEN_FILE
#                           and CURL_HOME / SANDLENS_TOKEN_FILE, so that curl
#                           and the CLI send the admin token (curl -q: not)
#   sl_agent_stop           SIGTERM, wait; returns the agent's exit status
#   sl_get PATH             curl the API (fails the test on HTTP errors)
#   sl_cli ARGS...          run build/sandlens --api $SL_API ARGS...
#   sl_metric NAME [LABELS] value of one sample from /metrics (0 if absent);
#                           LABELS like 'type="exec"' (label order-insensitive
#                           subset match)
#   sl_wait_events QUERY JQ [TIMEOUT]
#                           poll GET /api/v1/events?QUERY until the jq filter
#                           JQ (applied to .events) outputs something
#                           non-empty and not "null"; prints that output
#   sl_all_events QUERY     every event matching QUERY (pages with after_id),
#                           one JSON object per line
#   assert_eq WHAT EXPECTED ACTUAL
#
# Environment: SL_BUILD (build dir, default build), SL_TEST_LOGDIR (where
# logs go; the runner prints them when a test fails), SL_KEEP_TMP=1 keeps
# SL_TMP.

SL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

skip() { echo "SKIP: $*"; exit 77; }
# In a command substitution, "exit" only leaves the subshell (and a trap
# run in the middle of a word expansion breaks bash 5.2's parser, so no
# signal to the main shell): record the failure; the main shell fails at its
# next check (sl_check_failed: assertions, API calls) and at exit at the
# latest.
fail() {
	if [ "${BASH_SUBSHELL:-0}" -gt 0 ]; then
		echo "FAIL: $*" >&2
		[ -n "${SL_TMP:-}" ] && [ ! -f "$SL_TMP/failed" ] && echo "$*" >"$SL_TMP/failed"
		exit 1
	fi
	echo "FAIL: $*"
	exit 1
}
sl_check_failed() {
	if [ "${BASH_SUBSHELL:-0}" -eq 0 ] && [ -n "${SL_TMP:-}" ] && [ -f "$SL_TMP/failed" ]; then
		echo "FAIL: $(cat "$SL_TMP/failed")"
		exit 1
	fi
	return 0
}
note() { sl_check_failed; echo "# $*"; }

assert_eq() {
	sl_check_failed
	if [ "$2" != "$3" ]; then
		fail "$1: expected '$2', got '$3'"
	fi
	echo "ok - $1 = '$3'"
}

sl_cleanup_hooks=()
sl_on_exit() { sl_cleanup_hooks+=("$*"); }

_sl_exit_trap() {
	local rc=$?
	[ "$rc" = 0 ] && [ -n "${SL_TMP:-}" ] && [ -f "$SL_TMP/failed" ] && rc=1
	local i
	for ((i = ${#sl_cleanup_hooks[@]} - 1; i >= 0; i--)); do
		eval "${sl_cleanup_hooks[$i]}" >/dev/null 2>&1 || true
	done
	if [ -n "${SL_AGENT_PID:-}" ] && kill -0 "$SL_AGENT_PID" 2>/dev/null; then
		if [ "$rc" != 0 ] && [ -n "${SL_API:-}" ]; then
			curl -sf -m 5 "$SL_API/metrics" | grep -v '^#' >"$SL_LOGDIR/metrics-at-failure.txt" 2>/dev/null
		fi
		kill -TERM "$SL_AGENT_PID" 2>/dev/null
		local n=0
		while kill -0 "$SL_AGENT_PID" 2>/dev/null && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
		kill -KILL "$SL_AGENT_PID" 2>/dev/null || true
	fi
	if [ -n "${SL_TMP:-}" ] && [ -d "$SL_TMP" ] && [ "${SL_KEEP_TMP:-0}" != 1 ]; then
		rm -rf "$SL_TMP"
	fi
	exit $rc
}

sl_init() {
	SL_BUILD=${SL_BUILD:-build}
	case "$SL_BUILD" in /*) ;; *) SL_BUILD="$SL_ROOT/$SL_BUILD" ;; esac
	SL_TMP=$(mktemp -d /tmp/sl-test.XXXXXX)
	chmod 755 "$SL_TMP"
	SL_LOGDIR=${SL_TEST_LOGDIR:-$SL_TMP/logs}
	mkdir -p "$SL_LOGDIR"
	export SL_BUILD SL_TMP SL_LOGDIR
	trap _sl_exit_trap EXIT
	trap 'exit 130' INT TERM
}

sl_require_root() { [ "$(id -u)" = 0 ] || skip "needs root (BPF programs, runc, cgroups)"; }
sl_require_btf() { [ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux missing)"; }
# The cgroup hierarchies a test container cgroup is made in, one a line:
# the v2 root on a pure v2 host, else the unified mount and each v1
# controller hierarchy that is mounted (hybrid hosts).
sl_cgroup_hierarchies() {
	local h
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		echo /sys/fs/cgroup
		return
	fi
	for h in unified memory cpu cpuacct blkio pids; do
		[ -d "/sys/fs/cgroup/$h" ] && echo "/sys/fs/cgroup/$h"
	done
	return 0
}
sl_require_cmd() {
	local c
	for c in "$@"; do command -v "$c" >/dev/null 2>&1 || skip "'$c' not installed"; done
}
sl_require_build() {
	[ -x "$SL_BUILD/sandlensd" ] || fail "$SL_BUILD/sandlensd not built"
	[ -x "$SL_BUILD/sandlens" ] || fail "$SL_BUILD/sandlens not built"
}
# The checks every agent test needs.
sl_require_agent_env() {
	sl_require_root
	sl_require_btf
	sl_require_cmd curl jq
	sl_require_build
}

sl_port_in_use() { ss -Htln "sport = :$1" 2>/dev/null | grep -q .; }
# A port below the kernel's ephemeral range: a port inside it can be taken,
# before the agent binds it, by any client socket — including the start-up
# poll's own curl to that very port (a TCP self-connect), which made
# "Address already in use" flakes while a slow (valgrind/ASan) agent started.
sl_free_port() {
	local p i lo=32768 span
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
	span=$((lo - 10000))
	[ "$span" -ge 1000 ] || fail "ephemeral port range starts at $lo: no room below it for test ports"
	for i in $(seq 1 200); do
		p=$((10000 + (RANDOM * 32768 + RANDOM) % span))
		sl_port_in_use "$p" || { echo "$p"; return 0; }
	done
	fail "no free TCP port found"
}

# Write the agent config. $1: extra YAML appended verbatim.
sl_write_config() {
	SL_PORT=$(sl_free_port)
	SL_API="http://127.0.0.1:$SL_PORT"
	SL_DB="$SL_TMP/events.db"
	SL_SOCK="$SL_TMP/api.sock"
	SL_CONFIG="$SL_TMP/sandlensd.yaml"
	# The admin bearer token (api.token_file, mode 0600): every curl of the
	# test sends it (CURL_HOME's .curlrc; `curl -q` skips it, as a reader
	# would), the CLI reads it through SANDLENS_TOKEN_FILE.
	SL_TOKEN_FILE="$SL_TMP/api.token"
	(umask 077; od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$SL_TOKEN_FILE")
	(umask 077; printf 'header = "Authorization: Bearer %s"\n' "$(cat "$SL_TOKEN_FILE")" >"$SL_TMP/.curlrc")
	CURL_HOME=$SL_TMP
	SANDLENS_TOKEN_FILE=$SL_TOKEN_FILE
	{
		echo "log_level: ${SL_LOG_LEVEL:-info}"
		echo "store:"
		echo "  path: $SL_DB"
		echo "api:"
		echo "  listen: \"127.0.0.1:$SL_PORT\""
		echo "  unix_socket: $SL_SOCK"
		echo "  token_file: $SL_TOKEN_FILE"
		[ -n "${1:-}" ] && printf '%s\n' "$1"
		# Self-protection degrades by the agent's own CPU, which on a shared
		# test host depends on everything else running: off unless the test
		# configures it (t_pressure) or SL_TEST_PRESSURE=1 keeps the defaults.
		if [ -z "${SL_TEST_PRESSURE:-}" ] && ! grep -q '^pressure:' <<<"${1:-}"; then
			printf 'pressure:\n  enabled: false\n'
		fi
	} >"$SL_CONFIG"
	export SL_PORT SL_API SL_DB SL_SOCK SL_CONFIG SL_TOKEN_FILE CURL_HOME SANDLENS_TOKEN_FILE
}

# Start sandlensd in the background. $1: extra YAML (see sl_write_config).
# The YAML must not repeat store/api (write the whole file with
# sl_write_config + edits and call sl_agent_launch for that).
sl_agent_start() {
	sl_write_config "${1:-}"
	sl_agent_launch
}

sl_agent_launch() {
	cp "$SL_CONFIG" "$SL_LOGDIR/sandlensd.yaml"
	"$SL_BUILD/sandlensd" --config "$SL_CONFIG" \
		>"$SL_LOGDIR/agent.stdout" 2>"$SL_LOGDIR/agent.stderr" &
	SL_AGENT_PID=$!
	export SL_AGENT_PID
	local n=0
	while [ $n -lt ${SL_START_TIMEOUT:-300} ]; do # tenths of a second
		if ! kill -0 "$SL_AGENT_PID" 2>/dev/null; then
			wait "$SL_AGENT_PID"
			local rc=$?
			SL_AGENT_PID=
			echo "--- agent stderr ---"; tail -n 50 "$SL_LOGDIR/agent.stderr"
			fail "sandlensd exited with status $rc during start-up"
		fi
		if curl -sf -m 2 "$SL_API/healthz" >"$SL_LOGDIR/healthz.json" 2>/dev/null; then
			note "sandlensd pid $SL_AGENT_PID up on $SL_API after $((n / 10)).$((n % 10)) s"
			return 0
		fi
		sleep 0.1
		n=$((n + 1))
	done
	fail "sandlensd did not answer $SL_API/healthz within $((${SL_START_TIMEOUT:-300} / 10)) s"
}

# SIGTERM the agent and wait; prints nothing, returns its exit status (124
# when it did not exit within 20 s; it is then killed).
sl_agent_stop() {
	[ -n "${SL_AGENT_PID:-}" ] || return 0
	kill -TERM "$SL_AGENT_PID" 2>/dev/null
	local n=0
	while kill -0 "$SL_AGENT_PID" 2>/dev/null && [ $n -lt 200 ]; do
		# a zombie still answers kill -0 until waited; check the state
		[ "$(awk '{print $3}' "/proc/$SL_AGENT_PID/stat" 2>/dev/null)" = Z ] && break
		sleep 0.1
		n=$((n + 1))
	done
	local rc
	if [ $n -ge 200 ]; then
		kill -KILL "$SL_AGENT_PID" 2>/dev/null
		wait "$SL_AGENT_PID" 2>/dev/null
		rc=124
	else
		wait "$SL_AGENT_PID"
		rc=$?
	fi
	SL_AGENT_PID=
	return $rc
}

sl_get() {
	sl_check_failed
	local out
	if ! out=$(curl -sS -f -m 10 "$SL_API$1" 2>&1); then
		fail "GET $1: $out"
	fi
	printf '%s\n' "$out"
}

sl_cli() { "$SL_BUILD/sandlens" --api "$SL_API" "$@"; }

# sl_metric NAME [LABELS]: sum of the samples of NAME whose labels include
# every label in LABELS (comma-separated k="v" pairs).
sl_metric() {
	sl_check_failed
	local name=$1 want=${2:-}
	curl -sf -m 10 "$SL_API/metrics" | awk -v name="$name" -v want="$want" '
		BEGIN { nw = split(want, w, /,/) }
		/^#/ { next }
		{
			metric = $1; labels = ""
			i = index(metric, "{")
			if (i) { labels = substr(metric, i + 1); sub(/}$/, "", labels); metric = substr(metric, 1, i - 1) }
			if (metric != name) next
			ok = 1
			for (k = 1; k <= nw; k++) if (index("," labels ",", "," w[k] ",") == 0) ok = 0
			if (ok) { sum += $2; found = 1 }
		}
		END { if (found) printf "%.0f\n", sum; else print 0 }'
}

sl_wait_events() {
	sl_check_failed
	local query=$1 filter=$2 timeout=${3:-20} out n=0
	while [ $n -lt $((timeout * 4)) ]; do
		out=$(curl -sf -m 5 "$SL_API/api/v1/events?$query" | jq -c ".events | $filter" 2>/dev/null)
		if [ -n "$out" ] && [ "$out" != null ] && [ "$out" != "[]" ]; then
			printf '%s\n' "$out"
			return 0
		fi
		sleep 0.25
		n=$((n + 1))
	done
	curl -sf -m 5 "$SL_API/api/v1/events?$query" >"$SL_LOGDIR/last-events.json" 2>&1
	fail "no event for '$query' matching '$filter' within ${timeout}s (last answer in last-events.json)"
}

sl_all_events() {
	sl_check_failed
	local query=$1 after=0 page next
	while :; do
		if ! page=$(curl -sS -f -m 120 "$SL_API/api/v1/events?$query&order=asc&limit=1000&after_id=$after" 2>"$SL_TMP/curl.err"); then
			fail "GET /api/v1/events?$query&after_id=$after failed: $(cat "$SL_TMP/curl.err") $(curl -s -m 30 "$SL_API/api/v1/events?$query&order=asc&limit=1000&after_id=$after" | head -c 300)"
		fi
		printf '%s\n' "$page" | jq -c '.events[]'
		next=$(printf '%s\n' "$page" | jq -r '.next_after_id // 0')
		[ "$(printf '%s\n' "$page" | jq '.events | length')" -eq 0 ] && break
		[ "$next" = 0 ] || [ "$next" = "$after" ] && break
		after=$next
	done
}
