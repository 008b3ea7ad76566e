#!/bin/bash
# Malformed MCP requests (issue 16 item 1, docs/MCP.md "Errors") over both
# transports get JSON-RPC errors, never a crash: bad JSON -32700, a wrong
# jsonrpc version / a batch / no method -32600, an unknown method -32601
# (HTTP 404 on 2026-07-28), bad params -32602, an oversized body 413 /
# -32600 (by Content-Length and chunked), a foreign Origin 403 (a loopback
# one passes), GET 405, 2026-07-28 header rules -32020 (missing or
# mismatched MCP-Protocol-Version, Mcp-Method, Mcp-Name; a base64 Mcp-Name
# that matches passes), an unsupported revision -32022 with the supported
# list, an unsupported legacy MCP-Protocol-Version 400, a notification 202;
# on stdio the same errors as lines, a notification unanswered, an
# oversized line answered and skipped; 300 random bodies later the agent
# still answers.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_agent_start

M=$SL_API/mcp
# post BODY [curl args]: "<status> <body>" (no token: a reader)
post() {
	local b=$1
	shift
	curl -q -s -m 10 -o "$SL_TMP/out" -w '%{http_code}' -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' "$@" --data-binary "$b" "$M"
	printf ' %s' "$(cat "$SL_TMP/out")"
}
# expect NAME STATUS JQ-EXPR BODY [curl args]
expect() {
	local name=$1 st=$2 ex=$3 body=$4
	shift 4
	local r b
	r=$(post "$body" "$@")
	b=${r#* }
	[ -n "$b" ] || b=null # no body (202)
	[ "${r%% *}" = "$st" ] || fail "$name: HTTP ${r%% *}, want $st: $b"
	printf '%s' "$b" | jq -e "$ex" >/dev/null 2>&1 || fail "$name: body does not satisfy $ex: $b"
	note "$name: HTTP $st, $(printf '%s' "$b" | jq -c '(.error // .result // {}) | {code, message}' 2>/dev/null | head -c 160)"
}
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
MH=(-H 'MCP-Protocol-Version: 2026-07-28')

expect "initialize" 200 '.result.protocolVersion == "2025-11-25"' "$INIT"
expect "bad JSON" 400 '.error.code == -32700 and .id == null' '{"jsonrpc":"2.0","id":1,'
expect "empty body" 400 '.error.code == -32700' ''
expect "not UTF-8" 400 '.error.code == -32700' "$(printf '{"jsonrpc":"2.0","id":1,"method":"\xff\xfe"}')"
expect "jsonrpc 1.0" 400 '.error.code == -32600 and .id == 7' '{"jsonrpc":"1.0","id":7,"method":"tools/list"}'
expect "no jsonrpc member" 400 '.error.code == -32600' '{"id":7,"method":"tools/list"}'
expect "batch" 400 '.error.code == -32600 and (.error.message | test("batch"))' "[$INIT]"
expect "id null" 400 '.error.code == -32600' '{"jsonrpc":"2.0","id":null,"method":"tools/list"}'
expect "no method" 400 '.error.code == -32600' '{"jsonrpc":"2.0","id":3}'
expect "a JSON string" 400 '.error.code == -32600' '"tools/list"'
expect "unknown method (2025-11-25: in band)" 200 '.error.code == -32601 and .id == 4' '{"jsonrpc":"2.0","id":4,"method":"tools/destroy"}'
expect "params an array" 200 '.error.code == -32602' '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[1]}'
expect "tools/call without name" 200 '.error.code == -32602' '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{}}'
expect "tools/call arguments not an object" 200 '.error.code == -32602' '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"hw_faults","arguments":"x"}}'
expect "tools/call unknown tool" 200 '.error.code == -32602' '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"rm_rf"}}'
expect "tools/call bad argument type: a tool error" 200 '.result.isError == true and (.result.content[0].text | test("since"))' \
	'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"hw_faults","arguments":{"since":5}}}'
expect "tools/call unknown argument: a tool error" 200 '.result.isError == true' \
	'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"hw_faults","arguments":{"sinse":"1h"}}}'
expect "tools/call bad since (the API's 400): a tool error" 200 '.result.isError == true and (.result.content[0].text | test("HTTP 400"))' \
	'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"recent_faults","arguments":{"since":"yesterday"}}}'
expect "reader capture_profile: -32010" 200 '.error.code == -32010' \
	'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"capture_profile","arguments":{"pid":1}}}'
expect "notification: 202, no body" 202 '. == null' '{"jsonrpc":"2.0","method":"notifications/initialized"}'
expect "a response from the client: 202" 202 '. == null' '{"jsonrpc":"2.0","id":9,"result":{}}'

# body size: by Content-Length, and chunked (no length known up front)
head -c $((2 << 20)) /dev/zero | tr '\0' ' ' >"$SL_TMP/big"
r=$(curl -q -s -m 20 -o "$SL_TMP/out" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary @"$SL_TMP/big" "$M")
assert_eq "2 MiB body (Content-Length): 413" 413 "$r"
jq -e '.error.code == -32600' "$SL_TMP/out" >/dev/null || fail "413 body: $(head -c 200 "$SL_TMP/out")"
r=$(curl -q -s -m 20 -o "$SL_TMP/out" -w '%{http_code}' -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' \
	--data-binary @"$SL_TMP/big" "$M")
assert_eq "2 MiB body (chunked): 413" 413 "$r"
jq -e '.error.code == -32600' "$SL_TMP/out" >/dev/null || fail "413 body (chunked): $(head -c 200 "$SL_TMP/out")"

# DNS rebinding protection
expect "Origin http://evil.example: 403" 403 '.error.code == -32600 and .id == null' "$INIT" -H 'Origin: http://evil.example'
expect "Origin http://127.0.0.1.evil.example: 403" 403 '.error.code == -32600' "$INIT" -H 'Origin: http://127.0.0.1.evil.example:80'
expect "Origin null: 403" 403 '.error.code == -32600' "$INIT" -H 'Origin: null'
expect "Origin http://localhost:6274 passes" 200 '.result.protocolVersion' "$INIT" -H 'Origin: http://localhost:6274'
expect "Origin http://[::1]:80 passes" 200 '.result.protocolVersion' "$INIT" -H 'Origin: http://[::1]:80'
r=$(curl -q -s -m 10 -o "$SL_TMP/out" -D "$SL_TMP/hdr" -w '%{http_code}' "$M")
assert_eq "GET /mcp: 405" 405 "$r"
grep -qi '^Allow: POST' "$SL_TMP/hdr" || fail "GET /mcp: no Allow: POST header"
r=$(curl -q -s -m 10 -o /dev/null -w '%{http_code}' -X DELETE "$M")
assert_eq "DELETE /mcp: 405" 405 "$r"

# 2026-07-28: the required headers mirror the body
DISC="{\"jsonrpc\":\"2.0\",\"id\":\"d\",\"method\":\"server/discover\",\"params\":{$META}}"
expect "server/discover" 200 '.result.resultType == "complete" and .result.supportedVersions == ["2026-07-28"] and .result.ttlMs > 0 and .result.cacheScope == "public"' \
	"$DISC" "${MH[@]}" -H 'Mcp-Method: server/discover'
expect "tools/list (2026-07-28): resultType, ttlMs, cacheScope" 200 '.result.resultType == "complete" and (.result.tools | length) == 9 and (.result.ttlMs | type) == "number"' \
	"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{$META}}" "${MH[@]}" -H 'Mcp-Method: tools/list'
expect "no MCP-Protocol-Version header: -32020" 400 '.error.code == -32020' "$DISC" -H 'Mcp-Method: server/discover'
expect "MCP-Protocol-Version disagrees with _meta: -32020" 400 '.error.code == -32020' "$DISC" -H 'MCP-Protocol-Version: 2025-11-25' -H 'Mcp-Method: server/discover'
expect "no Mcp-Method header: -32020" 400 '.error.code == -32020' "$DISC" "${MH[@]}"
expect "Mcp-Method disagrees: -32020" 400 '.error.code == -32020' "$DISC" "${MH[@]}" -H 'Mcp-Method: tools/list'
CALL="{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"hw_faults\",\"arguments\":{},$META}}"
expect "tools/call without Mcp-Name: -32020" 400 '.error.code == -32020' "$CALL" "${MH[@]}" -H 'Mcp-Method: tools/call'
expect "Mcp-Name disagrees: -32020" 400 '.error.code == -32020' "$CALL" "${MH[@]}" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: list_captures'
expect "Mcp-Name malformed base64: -32020" 400 '.error.code == -32020' "$CALL" "${MH[@]}" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: =?base64?***?='
expect "Mcp-Name as base64 passes" 200 '.result.resultType == "complete" and .result.structuredContent.present == false' \
	"$CALL" "${MH[@]}" -H 'Mcp-Method: tools/call' -H "Mcp-Name: =?base64?$(printf hw_faults | base64)?="
expect "unknown method (2026-07-28): HTTP 404, -32601" 404 '.error.code == -32601' \
	"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":{$META}}" "${MH[@]}" -H 'Mcp-Method: ping'
expect "unsupported revision in _meta: -32022 with the supported list" 400 '.error.code == -32022 and (.error.data.supported | index("2026-07-28")) and .error.data.requested == "2099-01-01"' \
	'{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}' \
	-H 'MCP-Protocol-Version: 2099-01-01' -H 'Mcp-Method: tools/list'
expect "no clientCapabilities in _meta: -32602" 400 '.error.code == -32602' \
	'{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}' "${MH[@]}" -H 'Mcp-Method: tools/list'
expect "header says 2026-07-28, body has no _meta: -32602" 400 '.error.code == -32602' '{"jsonrpc":"2.0","id":4,"method":"tools/list"}' "${MH[@]}" -H 'Mcp-Method: tools/list'
expect "unsupported legacy MCP-Protocol-Version: 400" 400 '.error.code == -32600' '{"jsonrpc":"2.0","id":4,"method":"tools/list"}' -H 'MCP-Protocol-Version: 1900-01-01'

# ---- stdio ----
big=$(head -c $((1200 << 10)) /dev/zero | tr '\0' 'x')
{
	echo '{"jsonrpc":"2.0","id":1,'
	echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	echo '{"jsonrpc":"1.0","id":2,"method":"ping"}'
	echo "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"$big\"}"
	echo '{"jsonrpc":"2.0","id":4,"method":"nope"}'
	echo '{"jsonrpc":"2.0","id":5,"method":"ping"}'
	echo "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\",\"params\":{$META}}"
	echo '{"jsonrpc":"2.0","id":7,"method":"server/discover"}'
} | timeout 30 "$SL_BUILD/sandlens" --socket "$SL_SOCK" mcp >"$SL_TMP/stdio.out" 2>"$SL_LOGDIR/stdio.err"
assert_eq "stdio: sandlens mcp exit status at end of input" 0 "$?"
assert_eq "stdio: 7 answers (the notification gets none)" 7 "$(wc -l <"$SL_TMP/stdio.out")"
jq -s -e '.[0].error.code == -32700 and .[1].error.code == -32600 and .[1].id == 2
	and .[2].error.code == -32600 and (.[2].error.message | test("longer"))
	and .[3].error.code == -32601 and .[4].id == 5 and .[4].result == {}
	and .[5].result.resultType == "complete" and .[6].error.code == -32601' "$SL_TMP/stdio.out" >/dev/null ||
	fail "stdio answers: $(cut -c1-200 "$SL_TMP/stdio.out")"
note "stdio: parse error, invalid request, oversized line, unknown method answered; ping and a 2026-07-28 tools/list served after them"

# ---- random bodies ----
for i in $(seq 1 300); do
	head -c $((RANDOM % 300 + 1)) /dev/urandom >"$SL_TMP/rnd"
	curl -q -s -m 5 -o /dev/null -H 'Content-Type: application/json' --data-binary @"$SL_TMP/rnd" "$M" || fail "random body $i: no answer"
done
r=$(curl -q -s -m 5 -o /dev/null -w '%{http_code}' "$SL_API/healthz")
assert_eq "the agent still answers after 300 random bodies" 200 "$r"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
