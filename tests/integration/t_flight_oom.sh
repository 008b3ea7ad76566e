#!/bin/bash
# The per-container flight recorder (issue 15 items 4-5, docs/FLIGHT.md): a
# kubepods runc container under a 32 MiB limit (swap limit = memory limit)
# execs three known programs (/bin/true, /bin/id, /bin/ls), then
# `sl-testprog hog 64` allocates past the limit: its memcg is reclaimed
# (mem_stall events with mem.stall_threshold 20us) until the OOM killer
# kills it. Then, 3 s later (the recording is complete: post_trigger 1 s),
# the container crashes again (sl-testprog segv), within flight.freeze_interval.
# Checks:
#   - the oom event carries flight_recording_id R; the OOM killer's SIGKILL
#     event joined the same recording (same id);
#   - GET /api/v1/flight/R (admin): the container's id; its events in time
#     order, every one within [from, frozen] and the container's; the three
#     execs (filename and argv exact, in the order the script ran them),
#     the container's mem_stall events, the oom event itself, all before the
#     kill; and, as an independent reader of the same window, exactly the
#     container's events the store holds with a time in [from, frozen];
#   - GET /api/v1/events/{oom id}/flight is the same recording;
#   - a reader (uid 65534, no token) gets it with argv withheld;
#   - the second crash makes no recording: its signal event has no
#     flight_recording_id, GET /api/v1/flight?container= lists 1 recording,
#     sandlens_flight_freezes_total{result="rate_limited_container"} >= 1;
#   - the CLI: `sandlens flight R` prints the recording with its oom row,
#     `sandlens flight --event ID --json` the same id, `sandlens flight`
#     lists it.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
sl_init
sl_require_agent_env
ct_require

sl_agent_start "mem:
  stall_threshold: 20us
  stall_rate: 200
  stall_burst: 400"

cat >"$SL_TMP/run.sh" <<'EOF'
#!/bin/sh
/bin/sleep 1.5
/bin/true flight-mark-1
/bin/id >/dev/null
/bin/ls / >/dev/null
/bin/sl-testprog hog 64; echo "hog=$?"
/bin/sleep 3
(ulimit -c 0; exec /bin/sl-testprog segv); echo "segv=$?"
exit 0
EOF
cp "$SL_TMP/run.sh" "$SL_LOGDIR/run.sh"
ct_create flight kubepods --mem 32 --script "$SL_TMP/run.sh" -- /run.sh
CID=$CT_ID
ct_start_bg
ct_wait_bg 40 || fail "container exited with status $?"
grep -q '^hog=137$' "$CT_DIR/stdout" || fail "the hog was not SIGKILLed (stdout: $(cat "$CT_DIR/stdout"))"
grep -q '^segv=139$' "$CT_DIR/stdout" || fail "the second crash did not happen (stdout: $(cat "$CT_DIR/stdout"))"

OOM=$(sl_wait_events "type=oom&container=$CID" '.[0]' 20)
OOM_ID=$(jq .id <<<"$OOM")
R=$(jq '.flight_recording_id // 0' <<<"$OOM")
note "oom event $OOM_ID: flight_recording_id $R"
[ "$R" -gt 0 ] || fail "the oom event has no flight_recording_id: $OOM"
KILL=$(sl_wait_events "type=signal&container=$CID" '[.[] | select(.signal == 9)] | .[0]' 20)
assert_eq "the OOM SIGKILL event joined the recording" "$R" "$(jq '.flight_recording_id // 0' <<<"$KILL")"

# the recording (admin: the test's token)
for _ in $(seq 40); do
	curl -sf "$SL_API/api/v1/flight/$R" >"$SL_TMP/rec.json" && break
	sleep 0.25
done
[ -s "$SL_TMP/rec.json" ] || fail "GET /api/v1/flight/$R: $(curl -s "$SL_API/api/v1/flight/$R")"
cp "$SL_TMP/rec.json" "$SL_LOGDIR/recording.json"
note "recording: $(jq -c 'del(.events) + {events: (.events | length), types: ([.events[].type] | group_by(.) | map({(.[0]): length}) | add)}' "$SL_TMP/rec.json")"
assert_eq "recording id" "$R" "$(jq .id "$SL_TMP/rec.json")"
assert_eq "recording container" "$CID" "$(jq -r .container_id "$SL_TMP/rec.json")"
assert_eq "recording reason (the first trigger)" signal "$(jq -r .reason "$SL_TMP/rec.json")"
assert_eq "every event is the container's" 0 "$(jq --arg c "$CID" '[.events[] | select(.container_id != $c)] | length' "$SL_TMP/rec.json")"
assert_eq "events in time order" true "$(jq '[.events[].time] | . == sort' "$SL_TMP/rec.json")"
assert_eq "events within [from, frozen]" 0 "$(jq '.from as $f | .frozen as $z | [.events[] | select(.time < $f or .time > $z)] | length' "$SL_TMP/rec.json")"
OOM_T=$(jq -r .time <<<"$OOM")
assert_eq "the oom event is in it" 1 "$(jq --arg t "$OOM_T" '[.events[] | select(.type == "oom" and .time == $t)] | length' "$SL_TMP/rec.json")"

# the three execs, exact, in the script's order, before the kill
EXECS=$(jq -c --arg t "$OOM_T" '[.events[] | select(.type == "exec" and .time < $t and (.filename == "/bin/true" or .filename == "/bin/id" or .filename == "/bin/ls")) | {filename, argv, comm}]' "$SL_TMP/rec.json")
assert_eq "the execs before the kill" \
	'[{"filename":"/bin/true","argv":["/bin/true","flight-mark-1"],"comm":"true"},{"filename":"/bin/id","argv":["/bin/id"],"comm":"id"},{"filename":"/bin/ls","argv":["/bin/ls","/"],"comm":"ls"}]' \
	"$EXECS"
assert_eq "the hog's exec is in it, before the kill" 1 "$(jq --arg t "$OOM_T" '[.events[] | select(.type == "exec" and .filename == "/bin/sl-testprog" and .argv == ["/bin/sl-testprog","hog","64"] and .time < $t)] | length' "$SL_TMP/rec.json")"

# the reclaim stalls: the store's mem_stall events of the container (the
# memcg's) before the kill, every one in the recording
sl_all_events "container=$CID" >"$SL_TMP/store.jsonl"
cp "$SL_TMP/store.jsonl" "$SL_LOGDIR/store-events.jsonl"
NSTALL=$(jq -s --arg t "$OOM_T" '[.[] | select(.type == "mem_stall" and .time < $t)] | length' "$SL_TMP/store.jsonl")
RSTALL=$(jq --arg t "$OOM_T" '[.events[] | select(.type == "mem_stall" and .time < $t)] | length' "$SL_TMP/rec.json")
note "mem_stall events of the container before the kill: store $NSTALL, recording $RSTALL"
[ "$NSTALL" -gt 0 ] || fail "no mem_stall event of the container before the OOM kill (mem.stall_threshold 20us)"
assert_eq "the recording's reclaim stalls = the store's" "$NSTALL" "$RSTALL"
assert_eq "stalls are memcg reclaim of the container's memcg" 0 "$(jq --arg c "$CID" '[.events[] | select(.type == "mem_stall" and .memcg.container_id != $c)] | length' "$SL_TMP/rec.json")"

# an independent reader of the same window: the store's events of the
# container with a time in [from, frozen] are exactly the recording's
FROM=$(jq -r .from "$SL_TMP/rec.json") FROZEN=$(jq -r .frozen "$SL_TMP/rec.json")
WANT=$(jq -sc --arg f "$FROM" --arg z "$FROZEN" '[.[] | select(.time >= $f and .time <= $z) | [.time, .type, .pid]] | sort' "$SL_TMP/store.jsonl")
GOT=$(jq -c '[.events[] | [.time, .type, .pid]] | sort' "$SL_TMP/rec.json")
assert_eq "recording = the store's events of the container in [from, frozen]" "$WANT" "$GOT"
assert_eq "nothing dropped by the ring" 0 "$(jq .drops.ring_dropped "$SL_TMP/rec.json")"

# the same through the event
curl -sf "$SL_API/api/v1/events/$OOM_ID/flight" >"$SL_TMP/rec2.json" || fail "GET /api/v1/events/$OOM_ID/flight"
assert_eq "GET /api/v1/events/{oom}/flight is recording R" "$R" "$(jq .id "$SL_TMP/rec2.json")"
assert_eq "GET /api/v1/events/{id}/flight of an event without one" 404 \
	"$(curl -s -o /dev/null -w '%{http_code}' "$SL_API/api/v1/events/$(jq -s '[.[] | select(.type == "exec")][0].id' "$SL_TMP/store.jsonl")/flight")"
assert_eq "GET /api/v1/flight/0" 404 "$(curl -s -o /dev/null -w '%{http_code}' "$SL_API/api/v1/flight/0")"
assert_eq "GET /api/v1/flight?limit=x" 400 "$(curl -s -o /dev/null -w '%{http_code}' "$SL_API/api/v1/flight?limit=x")"

# a reader: no argv
if command -v setpriv >/dev/null && id -u nobody >/dev/null 2>&1; then
	NB=$(setpriv --reuid=65534 --regid=65534 --clear-groups curl -q -s -m 10 -w '\n%{http_code}' "$SL_API/api/v1/flight/$R")
	assert_eq "reader: GET /api/v1/flight/R" 200 "$(tail -n1 <<<"$NB")"
	BODY=$(sed '$d' <<<"$NB")
	assert_eq "reader: no event has argv" 0 "$(jq '[.events[] | select(has("argv"))] | length' <<<"$BODY")"
	assert_eq "reader: exec events say argv_withheld" 0 "$(jq '[.events[] | select(.type == "exec" and .argv_withheld != true)] | length' <<<"$BODY")"
	grep -q flight-mark-1 <<<"$BODY" && fail "the reader got an argv value"
	assert_eq "reader: the same events" "$(jq '.events | length' "$SL_TMP/rec.json")" "$(jq '.events | length' <<<"$BODY")"
	echo "ok - a reader gets the recording without argv"
else
	note "setpriv or user nobody missing: the reader's view not checked"
fi

# the second crash: rate-limited, no second recording
SEGV=$(sl_wait_events "type=signal&container=$CID" '[.[] | select(.signal == 11)] | .[0]' 20)
assert_eq "the second crash's signal event has no recording" null "$(jq .flight_recording_id <<<"$SEGV")"
LIST=$(sl_get "/api/v1/flight?container=$CID")
assert_eq "recordings of the container" 1 "$(jq '.recordings | length' <<<"$LIST")"
RL=$(sl_metric sandlens_flight_freezes_total 'result="rate_limited_container"')
[ "${RL:-0}" -ge 1 ] || fail "sandlens_flight_freezes_total{result=rate_limited_container} is $RL"
note "freezes: recorded $(sl_metric sandlens_flight_freezes_total 'result="recorded"'), joined $(sl_metric sandlens_flight_freezes_total 'result="joined"'), rate-limited (container) $RL"

# the CLI
sl_cli flight "$R" >"$SL_TMP/cli.txt" || fail "sandlens flight $R"
cp "$SL_TMP/cli.txt" "$SL_LOGDIR/cli-flight.txt"
grep -q "^flight recording $R of container $CID" "$SL_TMP/cli.txt" || fail "sandlens flight: no header: $(head -2 "$SL_TMP/cli.txt")"
grep -qE "^[^ ]+ +oom +${CID:0:12} " "$SL_TMP/cli.txt" || fail "sandlens flight: no oom row: $(cat "$SL_TMP/cli.txt")"
assert_eq "sandlens flight --event --json" "$R" "$(sl_cli flight --event "$OOM_ID" --json | jq .id)"
sl_cli flight --container "$CID" | grep -qE "^$R +" || fail "sandlens flight --container: not listed"

sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
