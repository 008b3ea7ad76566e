#!/bin/bash
# The MCP server (issue 16 item 1, docs/MCP.md) against a live agent and a
# real runc container, with the official MCP TypeScript SDK as the client
# (tests/lib/mcp_client.js; installed with npm into $SL_MCP_NODE_DIR,
# default /tmp/sl-mcp-node, never into the repo):
#   1. SDK 1.x (@modelcontextprotocol/sdk: 2025-11-25, initialize) over stdio
#      (StdioClientTransport spawning `sandlens --socket S mcp`, root: admin)
#      and over Streamable HTTP to /mcp without the token (a reader);
#   2. SDK 2.x (@modelcontextprotocol/client pinned to 2026-07-28:
#      server/discover, per-request _meta, the Mcp-* headers) over stdio
#      and over HTTP with the bearer token (an admin);
#   each lists the 9 tools (input and output schemas; readOnlyHint on all
#   but capture_profile) and calls every one: the container and its crash
#   (an exit by SIGSEGV, severity warning) are found, its runqueue figures
#   explained, hw_faults says none; an admin's capture_profile of the
#   container's CPU hog gives a profile whose top frame is the hog's
#   sl_spin_busy_loop, an off-CPU one, and their diff; a reader's
#   capture_profile / get_profile / diff_profiles / list_captures are
#   JSON-RPC errors -32010; an unknown tool is -32602 and a bad argument a
#   tool error (isError);
#   3. the MCP Inspector CLI (@modelcontextprotocol/inspector --cli) lists
#      the tools over both transports and calls one (left out, with a note,
#      when it cannot be installed).
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
sl_init
sl_require_agent_env
ct_require
sl_require_cmd node jq
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

NODE_DIR=${SL_MCP_NODE_DIR:-/tmp/sl-mcp-node}
if [ ! -d "$NODE_DIR/node_modules/@modelcontextprotocol/sdk" ] || [ ! -d "$NODE_DIR/node_modules/@modelcontextprotocol/client" ]; then
	command -v npm >/dev/null || skip "the MCP SDKs are not in $NODE_DIR and there is no npm to install them"
	mkdir -p "$NODE_DIR"
	timeout 240 npm install --prefix "$NODE_DIR" --no-audit --no-fund @modelcontextprotocol/sdk@1 @modelcontextprotocol/client@2 \
		>"$SL_LOGDIR/npm.log" 2>&1 ||
		skip "npm install of the MCP SDKs into $NODE_DIR failed (registry unreachable?): $(tail -n 3 "$SL_LOGDIR/npm.log")"
fi
note "SDKs: sdk $(jq -r .version "$NODE_DIR/node_modules/@modelcontextprotocol/sdk/package.json"), client $(jq -r .version "$NODE_DIR/node_modules/@modelcontextprotocol/client/package.json")"

sl_agent_start

# a container that crashes once (SIGSEGV: an exit event of severity
# warning), then burns CPU in sl_spin_busy_loop
cat >"$SL_TMP/run.sh" <<'EOF'
#!/bin/sh
/bin/sl-testprog segv
exec /bin/sl-testprog spin 50
EOF
chmod +x "$SL_TMP/run.sh"
ct_create mcp kubepods --script "$SL_TMP/run.sh" -- /run.sh
CID=$CT_ID
ct_start_bg
sl_on_exit "runc --root $CT_RUNC_ROOT kill $CID KILL >/dev/null 2>&1; ct_delete >/dev/null 2>&1"
ct_wait_running
sl_wait_events "type=exit&container=$CID" 'map(select(.signal == 11)) | .[0]' >/dev/null
# the sched view has the container once a tick saw it run
for _ in $(seq 1 50); do
	sl_get /api/v1/sched | jq -e --arg c "$CID" '[.. | objects | select(.container_id? == $c)] | length > 0' >/dev/null && break
	sleep 0.2
done

# and the statistics collector has read it (stats.interval, 5 s)
for _ in $(seq 1 75); do
	curl -sf -m 5 "$SL_API/api/v1/workloads/$CID/stats" >/dev/null && break
	sleep 0.2
done

client() { # NAME CONFIG_JSON: the report in $SL_TMP/NAME.json
	timeout 150 node "$ROOT/tests/lib/mcp_client.js" "$NODE_DIR" "$2" >"$SL_TMP/$1.json" 2>"$SL_LOGDIR/$1.stderr"
	local rc=$?
	cp "$SL_TMP/$1.json" "$SL_LOGDIR/$1.json"
	[ $rc = 0 ] || fail "$1: the client failed ($rc): $(head -c 600 "$SL_TMP/$1.json") $(tail -n 5 "$SL_LOGDIR/$1.stderr")"
}
# CHECK REPORT JQ-EXPR: the expression must be true of the report
check() {
	jq -e "$3" "$SL_TMP/$2.json" >/dev/null || fail "$2: $1: $(jq -c '[.calls[] | {name, ok, isError, code, t: ((.text // .message // "") | .[0:160])}]' "$SL_TMP/$2.json" | head -c 3000)"
	note "$2: $1"
}
STDIO="\"transport\":\"stdio\",\"command\":\"$SL_BUILD/sandlens\",\"args\":[\"--socket\",\"$SL_SOCK\",\"mcp\"],\"env\":{\"SANDLENS_TOKEN_FILE\":\"/nonexistent\"}"
HTTP="\"transport\":\"http\",\"url\":\"$SL_API/mcp\""
TOKEN=$(cat "$SL_TOKEN_FILE")

client v1-stdio "{\"sdk\":\"v1\",$STDIO,\"container\":\"$CID\",\"admin\":true}"
client v1-http "{\"sdk\":\"v1\",$HTTP,\"container\":\"$CID\",\"admin\":false}"
RUNS="v1-stdio v1-http" ADMIN_RUNS="v1-stdio" NTASKS=2
# the 2.x client needs Node.js >= 20 (its engines field)
if [ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ]; then
	client v2-stdio "{\"sdk\":\"v2\",$STDIO,\"container\":\"$CID\",\"admin\":true}"
	client v2-http "{\"sdk\":\"v2\",$HTTP,\"headers\":{\"Authorization\":\"Bearer $TOKEN\"},\"container\":\"$CID\",\"admin\":true}"
	RUNS="$RUNS v2-stdio v2-http" ADMIN_RUNS="$ADMIN_RUNS v2-stdio v2-http" NTASKS=6
else
	note "Node.js $(node -v) < 20: the 2.x SDK client (2026-07-28) left out; t_mcp_badinput checks that revision with raw JSON-RPC"
fi

call() { echo "[.calls[] | select(.name == \"$1\")][${2:-0}]"; }
for r in $RUNS; do
	case $r in v1*) want=2025-11-25 ;; *) want=2026-07-28 ;; esac
	check "negotiated $want" $r ".protocolVersion == \"$want\" and .serverVersion.name == \"sandlens\""
	check "9 tools, each with input and output schema; read-only all but capture_profile" $r \
		'(.tools | length) == 9 and all(.tools[]; .hasInput and .hasOutput and (.readOnly == (.name != "capture_profile")))'
	check "list_containers has the container" $r "$(call list_containers) | .ok and (.isError | not) and any(.structured.containers[]; .container_id == \"$CID\")"
	check "container_health: statistics, PSI pressure, runqueue figures and the crash" $r \
		"$(call container_health) | .ok and .structured.statistics.cpu_usage_usec > 0 and (.structured.pressure | type) == \"object\" and .structured.runqueue.waits >= 0 and any(.structured.faults[]; .type == \"exit\" and .signal == 11)"
	# all containers: other tests on the host may add newer faults, so only
	# the shape is checked there; the container's own call finds the crash
	check "recent_faults: all warning or worse, newest first; of the container: its SIGSEGV exit" $r \
		"($(call recent_faults 0) | .structured.count >= 1 and all(.structured.faults[]; .severity == \"warning\" or .severity == \"error\" or .severity == \"critical\") and ([.structured.faults[].id] == ([.structured.faults[].id] | sort | reverse))) and ($(call recent_faults 1) | all(.structured.faults[]; .container_id == \"$CID\") and any(.structured.faults[]; .type == \"exit\" and .signal == 11))"
	check "recent_faults limit 0 is a tool error naming the argument" $r "$(call recent_faults 2) | .ok and .isError and (.text | test(\"limit\"))"
	check "hw_faults: none, said so" $r "$(call hw_faults) | .ok and .structured.present == false and (.text | test(\"no hardware events\"))"
	check "explain_latency: runqueue wait component from the sched view, absent evidence named" $r \
		"$(call explain_latency) | .ok and any(.structured.components[]; .component == \"runqueue wait\" and .source == \"sched\") and (.text | test(\"absent\"))"
	check "unknown tool: JSON-RPC -32602" $r "$(call no_such_tool) | (.ok | not) and .code == -32602"
done
for r in $ADMIN_RUNS; do
	check "admin: capture_profile + get_profile: top frame sl_spin_busy_loop" $r \
		"($(call capture_profile) | .ok and (.structured.id | startswith(\"t-\"))) and ($(call get_profile) | .structured.status == \"done\" and .structured.top[0].function == \"sl_spin_busy_loop\" and .structured.top[0].self_share > 0.5)"
	check "admin: off-CPU capture done, diff_profiles ranks changes, list_captures has both" $r \
		"($(call get_profile 1) | .structured.status == \"done\") and ($(call diff_profiles) | .ok and (.isError | not) and (.structured.changes | length) >= 1) and ($(call list_captures 1) | .structured.count >= 2)"
done
check "reader: capture_profile refused with JSON-RPC -32010, no task started" v1-http \
	"$(call capture_profile) | (.ok | not) and .code == -32010"
check "reader: get_profile, diff_profiles, list_captures refused (-32010)" v1-http \
	"all(.calls[] | select(.name == \"get_profile\" or .name == \"diff_profiles\" or .name == \"list_captures\"); (.ok | not) and .code == -32010)"
# the reader's refused captures started nothing
n=$(sl_get /api/v1/tasks | jq '.tasks | length')
assert_eq "tasks started: 2 per admin client, none by the reader" "$NTASKS" "$n"

# ---- the MCP Inspector CLI ----
INSP=$NODE_DIR/node_modules/.bin/mcp-inspector
if [ ! -x "$INSP" ]; then
	timeout 240 npm install --prefix "$NODE_DIR" --no-audit --no-fund @modelcontextprotocol/inspector >"$SL_LOGDIR/npm-inspector.log" 2>&1 || true
fi
if [ -x "$INSP" ]; then
	timeout 60 "$INSP" --cli "$SL_API/mcp" --transport http --method tools/list >"$SL_TMP/insp-http.json" 2>"$SL_LOGDIR/insp-http.stderr" ||
		fail "inspector over HTTP: $(tail -n 5 "$SL_LOGDIR/insp-http.stderr")"
	assert_eq "inspector (HTTP) tools/list" 9 "$(jq '.tools | length' "$SL_TMP/insp-http.json")"
	timeout 60 "$INSP" --cli "$SL_BUILD/sandlens" --socket "$SL_SOCK" mcp --method tools/call --tool-name recent_faults --tool-arg "container=$CID" \
		--tool-arg since=10m >"$SL_TMP/insp-stdio.json" 2>"$SL_LOGDIR/insp-stdio.stderr" ||
		fail "inspector over stdio: $(tail -n 5 "$SL_LOGDIR/insp-stdio.stderr")"
	jq -e --arg c "$CID" '.structuredContent.faults | any(.container_id == $c)' "$SL_TMP/insp-stdio.json" >/dev/null ||
		fail "inspector (stdio) recent_faults: $(head -c 400 "$SL_TMP/insp-stdio.json")"
	note "inspector $(jq -r .version "$NODE_DIR/node_modules/@modelcontextprotocol/inspector/package.json"): tools/list over HTTP, tools/call over stdio"
else
	note "MCP Inspector not installable here: left out ($(tail -n 2 "$SL_LOGDIR/npm-inspector.log" 2>/dev/null))"
fi
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
