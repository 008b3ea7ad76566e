#!/bin/bash
# What the MCP layer costs over the REST API it reads (issue 16 item 1).
#
#   bench/mcp-latency.sh [BUILD_DIR] [REPEATS] [N]
#
# Against one agent (its store filled by the host's own activity and a few
# hundred execs made here), each repeat (default 5) times N (default 50)
# requests of each of, interleaved:
#   floor     GET /healthz (the HTTP round trip and routing alone)
#   rest      the REST requests recent_faults makes itself: GET
#             /api/v1/schema/events, then GET /api/v1/events?type=K&since=1h
#             &limit=L for every kind K (L 50, 500 for kinds declared below
#             warning), one curl each, sequentially (as a client would)
#   mcp       POST /mcp tools/call recent_faults {"since":"1h"}: the same
#             requests made in process, plus JSON-RPC, filtering, sorting
#             and the text summary
#   mcp-list  POST /mcp tools/list (the dispatcher alone, no API request)
# with curl's time_total, and prints the median per request, the ratio
# mcp / rest, and the spread (min..max of the repeats' medians). The host
# is shared with other builds and agents: absolute times are noisy, the
# interleaving keeps the ratios comparable.
set -u
cd "$(dirname "$0")/.." || exit 1
source tests/lib/common.sh
B=${1:-build}
REPEATS=${2:-5}
N=${3:-50}
export SL_BUILD=$B
sl_init
sl_require_agent_env
sl_agent_start
for i in $(seq 1 300); do /bin/true; done

H=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
kinds=$(sl_get /api/v1/schema/events | jq -r '.kinds[] | "\(.name) \(.severity)"')
t() { curl -q -s -o /dev/null -w '%{time_total}\n' "$@"; }
rest_once() { # the total of recent_faults' own requests
	local s k sev lim
	s=$(t "$SL_API/api/v1/schema/events")
	while read -r k sev; do
		case $sev in warning | error | critical) lim=50 ;; *) lim=500 ;; esac
		s="$s + $(t "$SL_API/api/v1/events?type=$k&since=1h&limit=$lim")"
	done <<<"$kinds"
	echo "$s" | bc -l
}
CALL='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recent_faults","arguments":{"since":"1h"}}}'
LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
declare -A med
for r in $(seq 1 "$REPEATS"); do
	: >"$SL_TMP/floor" >"$SL_TMP/rest" >"$SL_TMP/mcp" >"$SL_TMP/list"
	for i in $(seq 1 "$N"); do
		t "$SL_API/healthz" >>"$SL_TMP/floor"
		rest_once >>"$SL_TMP/rest"
		t "${H[@]}" -d "$CALL" "$SL_API/mcp" >>"$SL_TMP/mcp"
		t "${H[@]}" -d "$LIST" "$SL_API/mcp" >>"$SL_TMP/list"
	done
	for k in floor rest mcp list; do med[$k]="${med[$k]:-} $(median <"$SL_TMP/$k")"; done
done
report() {
	echo "repeats $REPEATS x $N requests each, kinds $(wc -l <<<"$kinds"), median of medians (min..max), ms:"
	for k in floor rest mcp list; do
		printf '%s\n' ${med[$k]} | sort -g >"$SL_TMP/m.$k"
		printf '  %-6s %8.3f  (%.3f..%.3f)\n' "$k" "$(median <"$SL_TMP/m.$k" | awk '{print $1*1000}')" \
			"$(head -1 "$SL_TMP/m.$k" | awk '{print $1*1000}')" "$(tail -1 "$SL_TMP/m.$k" | awk '{print $1*1000}')"
	done
	echo "  ratio mcp / rest (same requests, in process + JSON-RPC): $(echo "$(median <"$SL_TMP/m.mcp") / $(median <"$SL_TMP/m.rest")" | bc -l | cut -c1-5)"
}
report
sl_agent_stop || true
