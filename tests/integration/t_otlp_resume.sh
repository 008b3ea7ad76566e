#!/bin/bash
# OTLP export over TLS and across restarts (docs/EXPORT.md, "TLS" and
# "The cursor"), against the test receiver (tests/lib/otlp_receiver.py)
# serving https with certificates this test makes (openssl):
#   1. https with export.otlp.ca_file and a client certificate the receiver
#      requires (mutual TLS): events arrive;
#   2. the receiver answers 503 while an event is stored, the agent stops
#      (the request is unfinished), the receiver recovers, the agent starts
#      again: the event is sent (the cursor file kept the last accepted id;
#      /healthz export.logs.resumed), and an event accepted before the stop
#      is not sent twice;
#   3. without the CA (the system's store does not know it) the agent does
#      not send: /healthz export.last_error names the TLS failure;
#   4. bad TLS settings are exit 2 naming the key.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_require_cmd python3 openssl jq curl
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TAG=otr$$

# ---- certificates: a CA, a server certificate for 127.0.0.1, a client one ----
PKI=$SL_TMP/pki
mkdir -p "$PKI"
(
	cd "$PKI" || exit 1
	openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=sandlens test CA" &&
		openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj "/CN=127.0.0.1" &&
		printf 'subjectAltName=IP:127.0.0.1\n' >srv.ext &&
		openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile srv.ext &&
		openssl req -newkey rsa:2048 -nodes -keyout cli.key -out cli.csr -subj "/CN=sandlensd" &&
		openssl x509 -req -in cli.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out cli.pem -days 2
) >"$SL_LOGDIR/openssl.log" 2>&1 || fail "openssl could not make the test certificates: $(tail -n 3 "$SL_LOGDIR/openssl.log")"

RX=$SL_TMP/rx
mkdir -p "$RX"
echo ok >"$RX/mode"
RX_PORT=$(sl_free_port)
rx_start() {
	python3 "$ROOT/tests/lib/otlp_receiver.py" "$RX_PORT" "$RX" "$PKI/srv.pem" "$PKI/srv.key" "$PKI/ca.pem" \
		2>>"$SL_LOGDIR/receiver.stderr" &
	RX_PID=$!
	local n=0
	while ! sl_port_in_use "$RX_PORT"; do
		sleep 0.1; n=$((n + 1)); [ $n -lt 100 ] || fail "receiver did not listen on $RX_PORT"
	done
}
rx_stop() { [ -n "${RX_PID:-}" ] && kill "$RX_PID" 2>/dev/null && wait "$RX_PID" 2>/dev/null; RX_PID=; }
sl_on_exit 'rx_stop; cp "$RX/requests.log" "$SL_LOGDIR/" 2>/dev/null'
rx_start

yaml() { # $1: extra export.otlp lines
	printf '%s\n' "export:
  otlp:
    endpoint: \"https://127.0.0.1:$RX_PORT\"
    interval: 1h
    timeout: 2s
    retry_initial: 200ms
    retry_max_interval: 500ms
    max_retry_time: 10m
$1
proc:
  exec_rate: 0"
}
TLS="    ca_file: \"$PKI/ca.pem\"
    client_cert: \"$PKI/cli.pem\"
    client_key: \"$PKI/cli.key\""

# accepted logs requests that carry MARK (the receiver stores the gunzipped
# protobuf: the argv strings are in it as they are); the pattern goes
# through a file: a grep with MARK in its argv is an exec event with it
sent() {
	printf '%s\n' "$1" >"$SL_TMP/pat" # a builtin: no exec
	grep -laF -f "$SL_TMP/pat" "$RX"/*-logs-200.pb 2>/dev/null | wc -l
}
wait_sent() { # MARK [TIMEOUT]
	local i
	for i in $(seq $((${2:-15} * 4))); do
		[ "$(sent "$1")" -ge 1 ] && return 0
		sleep 0.25
	done
	return 1
}

# ---- 1: mutual TLS ----
sl_agent_start "$(yaml "$TLS")"
/bin/true "$TAG-one"
wait_sent "$TAG-one" || fail "no logs request with the exec of $TAG-one over https (last_error: $(sl_get /healthz | jq -r .export.last_error))"
assert_eq "export.logs.cursor_file" "$SL_DB.otlp-cursor" "$(sl_get /healthz | jq -r .export.logs.cursor_file)"
echo "ok - events arrive over mutual TLS"

# ---- 2: an unfinished request at stop is sent after the restart ----
for i in $(seq 40); do [ -f "$SL_DB.otlp-cursor" ] && break; sleep 0.25; done
[ -f "$SL_DB.otlp-cursor" ] || fail "no cursor file $SL_DB.otlp-cursor after an accepted request"
assert_eq "cursor file mode" 600 "$(stat -c %a "$SL_DB.otlp-cursor")"
echo 503 >"$RX/mode"
/bin/true "$TAG-two"
for i in $(seq 40); do grep -q -- '-logs-503' "$RX/requests.log" 2>/dev/null && break; sleep 0.25; done
grep -q -- '-logs-503' "$RX/requests.log" || fail "the receiver's 503 was never asked"
sl_agent_stop || fail "agent exit status $? on SIGTERM"
assert_eq "not accepted before the stop" 0 "$(sent "$TAG-two")"
echo ok >"$RX/mode"
sl_agent_launch
wait_sent "$TAG-two" || fail "the event stored before the stop was not sent after the restart (cursor: $(cat "$SL_DB.otlp-cursor"))"
assert_eq "/healthz export.logs.resumed" true "$(sl_get /healthz | jq -r .export.logs.resumed)"
assert_eq "$TAG-one sent once" 1 "$(sent "$TAG-one")"
echo "ok - the unfinished request's event was sent after the restart, the accepted one not again"
sl_agent_stop

# ---- 3: a CA the agent does not have ----
sl_agent_start "$(yaml "    client_cert: \"$PKI/cli.pem\"
    client_key: \"$PKI/cli.key\"")"
/bin/true "$TAG-three"
for i in $(seq 40); do
	LE=$(sl_get /healthz | jq -r '.export.last_error // ""')
	[ -n "$LE" ] && break
	sleep 0.25
done
case "$LE" in
*SSL* | *certificate* | *TLS*) echo "ok - an unknown CA fails the export: $LE" ;;
*) fail "/healthz export.last_error without the CA: '$LE'" ;;
esac
assert_eq "nothing accepted without the CA" 0 "$(sent "$TAG-three")"
sl_agent_stop

# ---- 4: bad settings are exit 2 naming the key ----
bad() { # KEY YAML-LINES
	printf '%s\n' "export:
  otlp:
$2" >"$SL_TMP/bad.yaml"
	timeout 10 "$SL_BUILD/sandlensd" --config "$SL_TMP/bad.yaml" --check-config >"$SL_LOGDIR/bad.out" 2>&1
	local rc=$?
	assert_eq "exit status for a bad $1" 2 "$rc"
	grep -q -- "$1" "$SL_LOGDIR/bad.out" || fail "the error does not name $1: $(cat "$SL_LOGDIR/bad.out")"
}
bad export.otlp.ca_file "    endpoint: \"http://127.0.0.1:1\"
    ca_file: \"$PKI/ca.pem\""
bad export.otlp.ca_file "    endpoint: \"https://127.0.0.1:1\"
    ca_file: relative.pem"
bad export.otlp.client_key "    endpoint: \"https://127.0.0.1:1\"
    client_cert: \"$PKI/cli.pem\""
mkfifo "$SL_TMP/fifo.pem"
bad export.otlp.ca_file "    endpoint: \"https://127.0.0.1:1\"
    ca_file: \"$SL_TMP/fifo.pem\""
bad export.otlp.client_cert "    endpoint: \"https://127.0.0.1:1\"
    client_cert: \"$SL_TMP/none.pem\"
    client_key: \"$PKI/cli.key\""
echo "ok - bad TLS settings (wrong scheme, relative, half a pair, a FIFO, a missing file) are exit 2 with the key"
