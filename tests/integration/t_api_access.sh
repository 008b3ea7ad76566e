#!/bin/bash
# Access control (issue 8 finding 2, docs/API.md "Access control"): an
# unprivileged local user (uid 65534), over TCP without the token and over
# the unix socket, cannot start a task, read one, read a result, delete one
# or read argv from events (argv withheld, "argv_withheld": true); with the
# bearer token, as root over the socket, or as a member of api.admin_group
# over the socket, it can. A token file others can read, not owned by root
# or a symlink is a config error (exit 2 naming api.token_file); a missing
# one is generated (0600, 64 hex). The CLI sends the token (--token-file).
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_require_cmd setpriv
id -u nobody >/dev/null 2>&1 || skip "no user 'nobody'"
NOGROUP=$(id -gn nobody)

# as uid/gid 65534, no supplementary groups, without the test's .curlrc (-q)
asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# STATUS of METHOD PATH [curl args...] as nobody over TCP
nb_code() {
	local m=$1 p=$2
	shift 2
	asnobody curl -q -s -m 10 -o "$NB/body" -w '%{http_code}' -X "$m" "$@" "$SL_API$p"
}
# over the unix socket
nb_sock_code() {
	local m=$1 p=$2
	shift 2
	asnobody curl -q -s -m 10 -o "$NB/body" -w '%{http_code}' -X "$m" "$@" \
		--unix-socket "$SL_SOCK" "http://sandlens$p"
}
root_code() { # METHOD PATH [args]: root with the token (.curlrc)
	local m=$1 p=$2
	shift 2
	curl -s -m 10 -o "$SL_TMP/root.body" -w '%{http_code}' -X "$m" "$@" "$SL_API$p"
}

# Redaction (proc.redact_args, on by default) would mask the value below; this
# test is about who may read argv at all, so it is off here (t_exec_redact
# and test_proc_redact cover redaction).
sl_agent_start "proc:
  redact_args: []"
chmod 711 "$SL_TMP" # nobody may reach the socket (its own mode decides)
NB=$SL_TMP/nb && mkdir -p "$NB" && chmod 777 "$NB"

# a root process with a secret on its command line
MARK="s3cr3t-$RANDOM$RANDOM"
/bin/sh -c 'exit 0' sh "--db-password=$MARK"
ev=$(sl_wait_events "type=exec&limit=1000" "map(select(.argv != null and (.argv | index(\"--db-password=$MARK\")))) | .[0]")
note "the secret exec as root sees it: $(printf '%s' "$ev" | jq -c '{filename, argv}')"

# a running task (root, with the token) to poke at
sleep 30 &
SPID=$!
sl_on_exit "kill $SPID"
assert_eq "POST /api/v1/tasks with the token" 201 "$(root_code POST /api/v1/tasks -d "{\"type\":\"trace_syscall_errors\",\"target\":{\"pid\":$SPID},\"duration_s\":30}")"
TID=$(jq -r .id "$SL_TMP/root.body")

# ---- nobody over TCP, no token ----
assert_eq "nobody: GET /healthz" 200 "$(nb_code GET /healthz)"
assert_eq "nobody: GET /metrics" 200 "$(nb_code GET /metrics)"
assert_eq "nobody: GET /api/v1/capabilities" 200 "$(nb_code GET /api/v1/capabilities)"
assert_eq "nobody: POST /api/v1/tasks" 403 "$(nb_code POST /api/v1/tasks -d "{\"type\":\"trace_syscall_errors\",\"target\":{\"pid\":1},\"duration_s\":1}")"
assert_eq "nobody: 403 code" PERMISSION_DENIED "$(jq -r .error.code "$NB/body")"
assert_eq "nobody: GET /api/v1/tasks" 403 "$(nb_code GET /api/v1/tasks)"
assert_eq "nobody: GET /api/v1/tasks/ID" 403 "$(nb_code GET "/api/v1/tasks/$TID")"
assert_eq "nobody: GET /api/v1/tasks/ID/result" 403 "$(nb_code GET "/api/v1/tasks/$TID/result?format=json")"
assert_eq "nobody: DELETE /api/v1/tasks/ID" 403 "$(nb_code DELETE "/api/v1/tasks/$TID")"
assert_eq "nobody: wrong token, DELETE" 403 "$(nb_code DELETE "/api/v1/tasks/$TID" -H 'Authorization: Bearer 0123456789abcdef0123456789abcdef')"
assert_eq "nobody: POST /healthz (any non-GET is admin-only)" 403 "$(nb_code POST /healthz)"
assert_eq "the task survived nobody's DELETE" running "$(curl -sf "$SL_API/api/v1/tasks/$TID" | jq -r .status)"

assert_eq "nobody: GET /api/v1/events" 200 "$(nb_code GET "/api/v1/events?type=exec&limit=1000")"
grep -q -- "$MARK" "$NB/body" && fail "nobody read the secret argv: $(grep -o ".\{80\}$MARK.\{20\}" "$NB/body" | head -1)"
echo "ok - the secret is not in nobody's events"
assert_eq "nobody: events carry no argv" 0 "$(jq '[.events[] | select(has("argv"))] | length' "$NB/body")"
assert_eq "nobody: exec events say argv_withheld" 0 "$(jq '[.events[] | select(.type == "exec" and .argv_withheld != true)] | length' "$NB/body")"
note "nobody's view of an exec: $(jq -c '[.events[] | select(.type == "exec")][0] | {type, filename, argv_withheld}' "$NB/body")"

# ---- nobody with the token (handed to it): admin ----
TOKEN=$(cat "$SL_TOKEN_FILE")
assert_eq "nobody with the token: GET /api/v1/tasks/ID" 200 "$(nb_code GET "/api/v1/tasks/$TID" -H "Authorization: Bearer $TOKEN")"
assert_eq "nobody with the token: GET events" 200 "$(nb_code GET "/api/v1/events?type=exec&limit=1000" -H "authorization: bearer  $TOKEN")"
grep -q -- "--db-password=$MARK" "$NB/body" || fail "the token holder does not see argv"
echo "ok - the token holder sees argv"

# ---- the unix socket ----
assert_eq "socket mode" 600 "$(stat -c %a "$SL_SOCK")"
assert_eq "root over the socket, no token: GET /api/v1/tasks" 200 "$(curl -q -s -m 10 -o /dev/null -w '%{http_code}' --unix-socket "$SL_SOCK" http://sandlens/api/v1/tasks)"
chmod 666 "$SL_SOCK" # for the test only: let nobody connect
assert_eq "nobody over the socket: GET /api/v1/tasks" 403 "$(nb_sock_code GET /api/v1/tasks)"
assert_eq "nobody over the socket: DELETE" 403 "$(nb_sock_code DELETE "/api/v1/tasks/$TID")"
assert_eq "nobody over the socket: POST" 403 "$(nb_sock_code POST /api/v1/tasks -d '{}')"
assert_eq "nobody over the socket: events" 200 "$(nb_sock_code GET "/api/v1/events?type=exec&limit=1000")"
grep -q -- "$MARK" "$NB/body" && fail "nobody read the secret argv over the socket"
echo "ok - no secret over the socket either"

# ---- the CLI ----
"$SL_BUILD/sandlens" --api "$SL_API" tasks list >"$NB/cli.out" 2>&1 || fail "root CLI tasks list (SANDLENS_TOKEN_FILE): $(cat "$NB/cli.out")"
grep -q "$TID" "$NB/cli.out" || fail "root CLI tasks list lacks $TID: $(cat "$NB/cli.out")"
echo "ok - CLI with the token lists the task"
cp "$SL_TOKEN_FILE" "$NB/token" && chown 65534 "$NB/token"
env -u SANDLENS_TOKEN_FILE setpriv --reuid=65534 --regid=65534 --clear-groups "$SL_BUILD/sandlens" --api "$SL_API" tasks list >"$NB/cli.out" 2>&1
assert_eq "nobody's CLI without a token: exit" 1 "$?"
grep -q "PERMISSION_DENIED" "$NB/cli.out" || fail "nobody's CLI error does not say PERMISSION_DENIED: $(cat "$NB/cli.out")"
env -u SANDLENS_TOKEN_FILE setpriv --reuid=65534 --regid=65534 --clear-groups "$SL_BUILD/sandlens" --api "$SL_API" --token-file "$NB/token" tasks stop "$TID" >"$NB/cli.out" 2>&1 ||
	fail "nobody's CLI with --token-file could not stop the task: $(cat "$NB/cli.out")"
echo "ok - CLI --token-file: the token holder stops the task"
assert_eq "root: the stopped task" 404 "$(root_code GET "/api/v1/tasks/$TID")"
env -u SANDLENS_TOKEN_FILE "$SL_BUILD/sandlens" --api "$SL_API" --token-file "$SL_TMP/missing" status >"$NB/cli.out" 2>&1
assert_eq "CLI --token-file missing: exit" 2 "$?"

# ---- token file checks (config errors, exit 2 naming the key) ----
sl_agent_stop || fail "agent exit status $?"
check_token() { # WHAT: sandlensd --check-config must exit 2 naming api.token_file
	timeout 20 "$SL_BUILD/sandlensd" --check-config --config "$SL_CONFIG" >"$SL_TMP/cc.out" 2>&1
	local rc=$?
	assert_eq "$1: --check-config exit" 2 "$rc"
	grep -q "api.token_file" "$SL_TMP/cc.out" || fail "$1: message does not name api.token_file: $(cat "$SL_TMP/cc.out")"
	note "$1: $(head -c 200 "$SL_TMP/cc.out")"
}
chmod 640 "$SL_TOKEN_FILE"
check_token "group-readable token file"
chmod 600 "$SL_TOKEN_FILE"
chown 65534 "$SL_TOKEN_FILE"
check_token "token file not owned by root"
chown 0 "$SL_TOKEN_FILE"
mv "$SL_TOKEN_FILE" "$SL_TMP/real.token"
ln -s "$SL_TMP/real.token" "$SL_TOKEN_FILE"
check_token "token file is a symlink"
rm -f "$SL_TOKEN_FILE"
mkdir "$SL_TOKEN_FILE"
check_token "token file is a directory"
rmdir "$SL_TOKEN_FILE"

# ---- missing token: generated; admin group over the socket ----
# the socket in the same missing directory: the agent makes it 0755 (its
# umask is 077), or the group's members could not reach the socket
sed -i "s|^  token_file: .*|  token_file: $SL_TMP/gen/api.token\n  admin_group: $NOGROUP|" "$SL_CONFIG"
sed -i "s|^  unix_socket: .*|  unix_socket: $SL_TMP/gen/api.sock|" "$SL_CONFIG"
SL_SOCK=$SL_TMP/gen/api.sock
sl_agent_launch
assert_eq "directory the agent made for the token and socket" "755 0" "$(stat -c '%a %u' "$SL_TMP/gen")"
assert_eq "generated token file mode" "600 0" "$(stat -c '%a %u' "$SL_TMP/gen/api.token")"
grep -qE '^[0-9a-f]{64}$' "$SL_TMP/gen/api.token" || fail "generated token is not 64 hex: $(wc -c <"$SL_TMP/gen/api.token") bytes"
echo "ok - the generated token is 64 hex characters"
assert_eq "socket with admin_group" "660 $NOGROUP" "$(stat -c '%a %G' "$SL_SOCK")"
assert_eq "group member over the socket (no chmod): GET /api/v1/tasks" 200 "$(nb_sock_code GET /api/v1/tasks)"
assert_eq "group member over the socket: events have argv" 200 "$(nb_sock_code GET "/api/v1/events?type=exec&limit=1000")"
grep -q -- "--db-password=$MARK" "$NB/body" || fail "the admin group member does not see argv"
echo "ok - the admin group member sees argv over the socket"
assert_eq "group member over TCP without token: GET /api/v1/tasks" 403 "$(nb_code GET /api/v1/tasks)"
assert_eq "the generated token works over TCP" 200 "$(curl -q -s -m 10 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$SL_TMP/gen/api.token")" "$SL_API/api/v1/tasks")"
assert_eq "the old token no longer does" 403 "$(curl -q -s -m 10 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$SL_API/api/v1/tasks")"
[ "$(sl_metric sandlens_api_denied_total)" -ge 1 ] || fail "sandlens_api_denied_total not counted"
echo "ok - denials counted: $(sl_metric sandlens_api_denied_total)"
sl_agent_stop || fail "agent exit status $?"
