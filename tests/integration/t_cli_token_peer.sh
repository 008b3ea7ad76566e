#!/bin/bash
# The CLI does not hand its admin token to whoever listens (break-it): a
# nobody user binds the loopback port (as it can while the agent is down)
# or serves a unix socket the CLI is pointed at; the request it receives
# must carry no Authorization header when the token was found in the
# default file unasked (TCP), and never over a socket served by another
# user, asked or not. A token asked for (--token-file) over TCP is sent as
# asked; a listener that is root's gets the default token.
# sl-san: once (the CLI's peer checks; no agent code runs)
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_cmd setpriv
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3 (a listener run as nobody needs a system python)"
CLI="$SL_BUILD/sandlens"
[ -x "$CLI" ] || fail "no $CLI"
unset SANDLENS_TOKEN_FILE SANDLENS_API SANDLENS_SOCKET
export CURL_HOME=$SL_TMP/nocurlrc
mkdir -p "$CURL_HOME"

TOK=/run/sandlens/api.token
if [ ! -e "$TOK" ]; then
	mkdir -p /run/sandlens
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TOK"
	chmod 600 "$TOK"
	sl_on_exit "rm -f $TOK"
fi
SECRET=$(cat "$TOK")
chmod 755 "$SL_TMP"

# $1: "tcp PORT" or "unix PATH"; $2: uid; the first request's head -> $SL_TMP/got
listen_as() {
	: >"$SL_TMP/got"
	chmod 666 "$SL_TMP/got"
	setpriv --reuid="$2" --regid="$2" --clear-groups /usr/bin/python3 -c '
import socket, sys, os
kind, where, out = sys.argv[1], sys.argv[2], sys.argv[3]
if kind == "tcp":
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", int(where)))
else:
    s = socket.socket(socket.AF_UNIX); s.bind(where)
s.listen(4); s.settimeout(15)
d = b""
while not d:  # a connection that sends nothing (a peer check) is skipped
    c, _ = s.accept(); c.settimeout(5)
    while b"\r\n\r\n" not in d:
        b = c.recv(4096)
        if not b: break
        d += b
open(out, "wb").write(d)
c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
c.close()' "$1" "$3" "$SL_TMP/got" &
	LPID=$!
	for _ in $(seq 50); do
		if [ "$1" = tcp ]; then ss -ltn "sport = :$3" | grep -q LISTEN && break
		else [ -S "$3" ] && break; fi
		sleep 0.1
	done
}

PORT=$(sl_free_port)
# --- the default token, unasked, to a nobody listener on loopback: not sent
listen_as tcp 65534 "$PORT"
"$CLI" --api "http://127.0.0.1:$PORT" status >"$SL_LOGDIR/cli1.txt" 2>&1
wait "$LPID"
grep -qi '^GET ' "$SL_TMP/got" || fail "the listener got no request: $(cat "$SL_LOGDIR/cli1.txt")"
grep -qi 'authorization' "$SL_TMP/got" && fail "the default token went to a nobody listener: $(cat "$SL_TMP/got")"
grep -q "$SECRET" "$SL_TMP/got" && fail "the token is in the request"
grep -q "not sending the token" "$SL_LOGDIR/cli1.txt" || fail "no word on stderr: $(cat "$SL_LOGDIR/cli1.txt")"
echo "ok - the default token does not go to a nobody listener on 127.0.0.1"

# --- nothing listens: the error says so, with no word on the token (break-it)
PORT=$(sl_free_port)
"$CLI" --api "http://127.0.0.1:$PORT" status >"$SL_LOGDIR/cli0.txt" 2>&1 && fail "status succeeded with nothing listening"
grep -q "not sending the token" "$SL_LOGDIR/cli0.txt" && fail "a token note with nothing listening: $(cat "$SL_LOGDIR/cli0.txt")"
echo "ok - nothing listening: $(head -n 1 "$SL_LOGDIR/cli0.txt" | head -c 160)"

# --- the same to a root listener: sent
PORT=$(sl_free_port)
listen_as tcp 0 "$PORT"
"$CLI" --api "http://127.0.0.1:$PORT" status >"$SL_LOGDIR/cli2.txt" 2>&1
wait "$LPID"
grep -q "Bearer $SECRET" "$SL_TMP/got" || fail "the default token did not go to root's listener: $(cat "$SL_TMP/got")"
echo "ok - root's listener gets the default token"

# --- a unix socket served by nobody, token asked for: not sent
mkdir -m 777 "$SL_TMP/sock"
listen_as unix 65534 "$SL_TMP/sock/fake.sock"
"$CLI" --socket "$SL_TMP/sock/fake.sock" --token-file "$TOK" status >"$SL_LOGDIR/cli3.txt" 2>&1
wait "$LPID"
grep -qi '^GET ' "$SL_TMP/got" || fail "the socket listener got no request: $(cat "$SL_LOGDIR/cli3.txt")"
grep -qi 'authorization' "$SL_TMP/got" && fail "the token went to a nobody unix socket: $(cat "$SL_TMP/got")"
grep -q "served by uid 65534" "$SL_LOGDIR/cli3.txt" || fail "no word on stderr: $(cat "$SL_LOGDIR/cli3.txt")"
echo "ok - a socket served by nobody gets no token, even one asked for"

# --- asked for over TCP: sent as asked (the user named the token)
PORT=$(sl_free_port)
listen_as tcp 65534 "$PORT"
"$CLI" --api "http://127.0.0.1:$PORT" --token-file "$TOK" status >"$SL_LOGDIR/cli4.txt" 2>&1
wait "$LPID"
grep -q "Bearer $SECRET" "$SL_TMP/got" || fail "--token-file over TCP was not sent as asked"
echo "ok - a token asked for over TCP is sent"
echo "PASS"
