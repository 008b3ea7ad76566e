#!/bin/bash
# GET /api/v1/events/watch (OUT-7): raw SSE with curl (CloudEvents fields,
# heartbeats, resume with Last-Event-ID / after_id), a reader gets no argv,
# bad parameters are 400 JSON, the client bound (429, counted), a slow
# reader is disconnected (counted); `sandlens events --follow --json` across
# an agent restart on the same store: every event before and after arrives
# exactly once, one "lost" and one "back" line on stderr.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_require_cmd setpriv timeout
asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

sl_agent_start "$(printf 'proc:\n  exec_rate: 0\n')"
W="$SL_API/api/v1/events/watch"
TAG="wt$$"

BASE=$(curl -sf "$SL_API/api/v1/events?limit=1" | jq -r '.next_after_id')
# wait until the exec of /bin/true with argv[1]=$1 is stored; prints its id
# (pages after BASE: other work on the host execs too)
stored_id() {
	local i id cur
	for i in $(seq 100); do
		cur=$BASE
		while :; do
			body=$(curl -sf "$SL_API/api/v1/events?type=exec&order=asc&limit=10000&after_id=$cur") || break
			id=$(jq -r --arg m "$1" '[.events[] | select((.argv // [])[1] == $m)][0].id // empty' <<<"$body")
			[ -n "$id" ] && { echo "$id"; return 0; }
			[ "$(jq '.events | length' <<<"$body")" -lt 10000 ] && break
			cur=$(jq -r .next_after_id <<<"$body")
		done
		sleep 0.1
	done
	fail "the exec of $1 was not stored"
}

# ---- raw SSE ----
curl -sN -m 6 "$W?type=exec&heartbeat=1" >"$SL_LOGDIR/raw.sse" 2>/dev/null &
CURL=$!
sleep 1.5
/bin/true "$TAG-raw"
wait $CURL
grep -q '^retry: ' "$SL_LOGDIR/raw.sse" || fail "no retry: field at the start of the stream"
# heartbeats are sent when nothing else was for heartbeat s: a filter that
# matches nothing (the host's own execs never stop on a shared test host)
hb=$(curl -sN -m 3.5 "$W?container=nosuchcontainer0&heartbeat=1" 2>/dev/null | grep -c '^: heartbeat$')
[ "$hb" -ge 2 ] && [ "$hb" -le 4 ] || fail "$hb heartbeat comments in 3.5 s at heartbeat=1 (want 2..4)"
frame=$(awk -v m="$TAG-raw" '/^id: /{id=$2} /^data: /{ if (index($0, "\"" m "\"")) { print id; sub(/^data: /, ""); print; exit } }' "$SL_LOGDIR/raw.sse")
[ -n "$frame" ] || fail "the exec of $TAG-raw did not arrive on the stream"
sid=$(head -1 <<<"$frame"); ce=$(tail -1 <<<"$frame")
assert_eq "specversion" 1.0 "$(jq -r .specversion <<<"$ce")"
assert_eq "CloudEvents id = SSE id" "$sid" "$(jq -r .id <<<"$ce")"
assert_eq "data.id = SSE id" "$sid" "$(jq -r .data.id <<<"$ce")"
assert_eq "type" io.sandlens.event.exec "$(jq -r .type <<<"$ce")"
assert_eq "datacontenttype" application/json "$(jq -r .datacontenttype <<<"$ce")"
assert_eq "time = data.time" "$(jq -r .data.time <<<"$ce")" "$(jq -r .time <<<"$ce")"
assert_eq "subject (host process)" host "$(jq -r .subject <<<"$ce")"
jq -e '.source | startswith("/sandlens/")' <<<"$ce" >/dev/null || fail "source: $(jq -r .source <<<"$ce")"
assert_eq "admin sees argv" "$TAG-raw" "$(jq -r '.data.argv[1]' <<<"$ce")"
stored=$(curl -sf "$SL_API/api/v1/events?type=exec&after_id=$((sid - 1))&order=asc&limit=1" | jq -c '.events[0]')
assert_eq "data = the stored event" "$stored" "$(jq -c .data <<<"$ce")"
echo "ok - raw SSE: CloudEvents 1.0 fields, heartbeat, data is the stored event"

# ---- resume: Last-Event-ID and after_id start right after the id ----
mid=$sid
first_id() { awk '/^id: /{print $2; exit}'; }
got=$(curl -sN -m 2 -H "Last-Event-ID: $((mid - 1))" "$W?type=exec" 2>/dev/null | first_id)
assert_eq "Last-Event-ID resumes right after it" "$mid" "$got"
got=$(curl -sN -m 2 "$W?type=exec&after_id=$((mid - 1))" 2>/dev/null | first_id)
assert_eq "after_id resumes right after it" "$mid" "$got"
got=$(curl -sN -m 2 -H "Last-Event-ID: $mid" "$W?type=exec&after_id=$((mid - 1))" 2>/dev/null | first_id)
[ "${got:-0}" != "$mid" ] || fail "Last-Event-ID $mid did not win over after_id (event $mid sent again)"

# ---- a reader (TCP without the token, and the socket as uid 65534) gets no argv ----
r=$(asnobody curl -q -sN -m 2 "$W?type=exec&after_id=$((mid - 1))" 2>/dev/null | awk '/^data: /{sub(/^data: /, ""); print; exit}')
[ -n "$r" ] || fail "reader over TCP: no event"
assert_eq "reader: no argv" null "$(jq -c .data.argv <<<"$r")"
assert_eq "reader: argv_withheld" true "$(jq -c .data.argv_withheld <<<"$r")"
chmod 0666 "$SL_SOCK"
r=$(asnobody curl -q -sN -m 2 --unix-socket "$SL_SOCK" "http://localhost/api/v1/events/watch?type=exec&after_id=$((mid - 1))" 2>/dev/null | awk '/^data: /{sub(/^data: /, ""); print; exit}')
chmod 0600 "$SL_SOCK"
[ -n "$r" ] || fail "reader over the socket: no event"
assert_eq "reader (socket): no argv" null "$(jq -c .data.argv <<<"$r")"
echo "ok - readers get the stream without argv"

# ---- bad requests: 4xx JSON ----
for q in "limit=5" "order=asc" "heartbeat=0" "heartbeat=x" "type=nosuch" "bogus=1" "after_id=-1"; do
	code=$(curl -s -o "$SL_LOGDIR/bad.json" -w '%{http_code}' -m 3 "$W?$q")
	assert_eq "GET watch?$q status" 400 "$code"
	assert_eq "GET watch?$q code" INVALID_ARGUMENT "$(jq -r .error.code "$SL_LOGDIR/bad.json")"
done
code=$(curl -s -o "$SL_LOGDIR/bad.json" -w '%{http_code}' -m 3 -H 'Last-Event-ID: abc' "$W")
assert_eq "Last-Event-ID abc" 400 "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' -m 3 -X POST "$W")
assert_eq "POST (admin)" 405 "$code"
code=$(asnobody curl -q -s -o /dev/null -w '%{http_code}' -m 3 -X POST "$W")
assert_eq "POST (reader)" 403 "$code"

# ---- the client bound ----
pids=()
for i in $(seq 8); do
	curl -sN -m 30 "$W?heartbeat=1" >/dev/null 2>&1 &
	pids+=($!)
done
for i in $(seq 50); do
	[ "$(sl_metric sandlens_api_event_streams)" = 8 ] && break
	sleep 0.1
done
assert_eq "streams open" 8 "$(sl_metric sandlens_api_event_streams)"
code=$(curl -s -o "$SL_LOGDIR/429.json" -w '%{http_code}' -m 3 "$W")
assert_eq "the 9th stream" 429 "$code"
assert_eq "429 code" RESOURCE_EXHAUSTED "$(jq -r .error.code "$SL_LOGDIR/429.json")"
assert_eq "refusal counted" 1 "$(sl_metric sandlens_api_event_streams_closed_total 'reason="client_limit"')"
kill "${pids[@]}" 2>/dev/null
wait "${pids[@]}" 2>/dev/null
for i in $(seq 50); do
	[ "$(sl_metric sandlens_api_event_streams)" = 0 ] && break
	sleep 0.1
done
assert_eq "streams after the clients left" 0 "$(sl_metric sandlens_api_event_streams)"
echo "ok - at most 8 streams, the 9th is a 429 JSON, counted"

# ---- one local user cannot lock the others out ----
# uid 65534 (TCP without the token: a reader) asks for 8 streams: it gets
# its share (2), the others are 429 (counted); another non-admin uid still
# gets one, and root with the token gets its streams
refused0=$(sl_metric sandlens_api_event_streams_closed_total 'reason="client_limit"')
pids=()
for i in $(seq 8); do
	# setpriv itself (not the function: its subshell's pid would be killed, not curl)
	setpriv --reuid=65534 --regid=65534 --clear-groups curl -q -sN -m 30 "$W?heartbeat=1" >/dev/null 2>&1 &
	pids+=($!)
done
for i in $(seq 50); do
	[ "$(sl_metric sandlens_api_event_streams_closed_total 'reason="client_limit"')" = $((refused0 + 6)) ] && break
	sleep 0.1
done
assert_eq "streams held by uid 65534" 2 "$(sl_metric sandlens_api_event_streams)"
assert_eq "uid 65534's other 6 refused, counted" $((refused0 + 6)) \
	"$(sl_metric sandlens_api_event_streams_closed_total 'reason="client_limit"')"
asnobody curl -q -s -w '\n%{http_code}' -m 3 "$W" >"$SL_LOGDIR/429-peer.json" # (uid 65534 cannot write the log dir)
assert_eq "uid 65534's third stream" 429 "$(tail -1 "$SL_LOGDIR/429-peer.json")"
head -1 "$SL_LOGDIR/429-peer.json" | jq -e '.error.message | test("per client")' >/dev/null ||
	fail "429 message does not name the per-client limit: $(cat "$SL_LOGDIR/429-peer.json")"
code=$(setpriv --reuid=65533 --regid=65533 --clear-groups curl -q -s -o /dev/null -w '%{http_code}' -m 2 "$W?heartbeat=1")
assert_eq "another uid's stream (200, cut by -m)" 200 "$code"
for i in $(seq 50); do # its slot is free once the agent saw it go
	[ "$(sl_metric sandlens_api_event_streams)" = 2 ] && break
	sleep 0.1
done
for i in $(seq 6); do
	curl -sN -m 30 "$W?heartbeat=1" >/dev/null 2>&1 &
	pids+=($!)
done
for i in $(seq 50); do
	[ "$(sl_metric sandlens_api_event_streams)" = 8 ] && break
	sleep 0.1
done
assert_eq "root's 6 streams next to uid 65534's 2" 8 "$(sl_metric sandlens_api_event_streams)"
kill "${pids[@]}" 2>/dev/null
wait "${pids[@]}" 2>/dev/null
for i in $(seq 50); do
	[ "$(sl_metric sandlens_api_event_streams)" = 0 ] && break
	sleep 0.1
done
assert_eq "streams after the clients left" 0 "$(sl_metric sandlens_api_event_streams)"
echo "ok - a non-admin uid holds at most 2 streams (429, counted), other users and root still get theirs"

# ---- a slow reader: sends the request, never reads ----
pad=$(head -c 900 /dev/zero | tr '\0' p)
for i in $(seq 2500); do /bin/true "$TAG-pad" "$pad"; done
stored_id "$TAG-pad" >/dev/null
exec 7<>"/dev/tcp/127.0.0.1/$SL_PORT"
printf 'GET /api/v1/events/watch?after_id=0 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n' "$(cat "$SL_TOKEN_FILE")" >&7
for i in $(seq 300); do
	[ "$(sl_metric sandlens_api_event_streams_closed_total 'reason="slow_reader"')" = 1 ] && break
	sleep 0.1
done
assert_eq "slow reader disconnected and counted" 1 "$(sl_metric sandlens_api_event_streams_closed_total 'reason="slow_reader"')"
assert_eq "no stream left" 0 "$(sl_metric sandlens_api_event_streams)"
exec 7>&-
echo "ok - a reader that does not read is closed within $(( i / 10 )) s"

# ---- sandlens events --follow --json across an agent restart ----
"$SL_BUILD/sandlens" --api "$SL_API" events --type exec --follow --json >"$SL_LOGDIR/follow.out" 2>"$SL_LOGDIR/follow.err" &
FOLLOW=$!
sleep 1
wait_line() { # wait_line MARK: the follower printed the exec of MARK
	local i
	for i in $(seq 150); do
		grep -qF "\"/bin/true\",\"$1\"" "$SL_LOGDIR/follow.out" && return 0
		sleep 0.1
	done
	fail "sandlens events --follow did not print the exec of $1"
}
for i in 1 2 3; do /bin/true "$TAG-A$i"; done
wait_line "$TAG-A3"
sl_agent_stop || fail "agent exit status $? on SIGTERM"
sleep 1.5
sl_agent_launch
for i in 1 2 3; do /bin/true "$TAG-C$i"; done
wait_line "$TAG-C3"
# the old store's part, checked while its events are still stored
cp "$SL_LOGDIR/follow.out" "$SL_LOGDIR/follow-old.out"
for m in A1 A2 A3 C1 C2 C3; do
	n=$(jq -r --arg m "$TAG-$m" 'select((.argv // [])[1] == $m) | .id' "$SL_LOGDIR/follow-old.out" | wc -l)
	assert_eq "exec $m printed" 1 "$n"
done
ids=$(jq -r .id "$SL_LOGDIR/follow-old.out")
assert_eq "no id printed twice" "$(wc -l <<<"$ids")" "$(sort -u <<<"$ids" | wc -l)"
# in id order, but for neighbours swapped: the first page is in time order,
# and two events stored within microseconds from two CPUs can have ids the
# other way round (seen: 3561 at .328602029, 3560 at .328602159); an id
# displaced by more than one place is a real ordering bug
awk 'NR > 2 && $1 < p1 && $1 < p2 { bad = 1; print "out of order: " $1 " after " p2 ", " p1 }
	{ p2 = p1; p1 = $1 } END { exit bad }' <<<"$ids" >"$SL_LOGDIR/order.txt" ||
	fail "ids out of order beyond a neighbour swap: $(head -3 "$SL_LOGDIR/order.txt")"
lo=$(head -1 <<<"$ids") hi=$(tail -1 <<<"$ids")
want=$(curl -sf "$SL_API/api/v1/events?type=exec&order=asc&limit=10000&after_id=$((lo - 1))" | jq -r --argjson hi "$hi" '.events[] | select(.id <= $hi) | .id')
# compared as sets (sorted): the order was checked above, neighbour swaps allowed
assert_eq "every stored exec between the first and last printed, no gap" "$want" "$(sort -n <<<"$ids")"
assert_eq "one 'lost' line" 1 "$(grep -c 'lost the agent' "$SL_LOGDIR/follow.err")"
assert_eq "one 'back' line" 1 "$(grep -c 'agent back: resuming after id' "$SL_LOGDIR/follow.err")"
echo "ok - --follow survived the restart: $(wc -l <<<"$ids") execs, each once, no gap"
# ---- the same follower across a restart on a new store (ids start again) ----
ep1=$(sl_get /healthz | jq -r .store.epoch)
[ "${#ep1}" = 16 ] || fail "/healthz store.epoch: '$ep1' is not 16 hex digits"
sl_agent_stop || fail "agent exit status $? on SIGTERM"
rm -f "$SL_DB" "$SL_DB-wal" "$SL_DB-shm"
sleep 1.5
sl_agent_launch
ep2=$(sl_get /healthz | jq -r .store.epoch)
[ "$ep2" != "$ep1" ] || fail "a new store file kept the epoch $ep1"
for i in 1 2; do /bin/true "$TAG-D$i"; done
wait_line "$TAG-D2"
# and recreated under the running agent (deleted: the writer reopens a new
# file): the stream ends, the follower comes back on the new store
rm -f "$SL_DB" "$SL_DB-wal" "$SL_DB-shm"
for i in $(seq 100); do
	ep3=$(sl_get /healthz | jq -r .store.epoch)
	[ "$ep3" != "$ep2" ] && break
	/bin/true "$TAG-wait"
	sleep 0.1
done
[ "$ep3" != "$ep2" ] || fail "the store deleted under the agent was not recreated (epoch still $ep2)"
for i in 1 2; do /bin/true "$TAG-E$i"; done
wait_line "$TAG-E2"
kill -INT "$FOLLOW"
wait "$FOLLOW"
assert_eq "follow exit status after SIGINT" 0 "$?"
assert_eq "one 'recreated' line per new store" 2 "$(grep -c 'event store was recreated' "$SL_LOGDIR/follow.err")"
for m in D1 D2 E1 E2; do
	n=$(jq -r --arg m "$TAG-$m" 'select((.argv // [])[1] == $m) | .id' "$SL_LOGDIR/follow.out" | wc -l)
	assert_eq "exec $m (new store) printed" 1 "$n"
done
assert_eq "one 'lost' line per restart or recreation" 3 "$(grep -c 'lost the agent' "$SL_LOGDIR/follow.err")"
echo "ok - --follow on a recreated store (epochs $ep1 -> $ep2 -> $ep3) prints the new store's events from its first"
sl_agent_stop
