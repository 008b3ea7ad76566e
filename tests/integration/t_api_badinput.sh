#!/bin/bash
# Bad input to the API (issue 8 finding 9): non-UTF-8 bytes in a query
# parameter are a 400 INVALID_ARGUMENT and in a path a 404 NOT_FOUND, each
# with a JSON error body (was: 500 "out of memory"); a flood of malformed
# requests does not flood the log (rate-limited lines, the rest counted in
# sandlens_log_suppressed_total).
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_require_cmd python3
sl_agent_start

# CODE STATUS ERROR_CODE of GET PATH (the body must be a JSON error)
expect() {
	local what=$1 want=$2 code=$3 path=$4 got
	got=$(curl -s -m 10 -o "$SL_TMP/b.json" -w '%{http_code}' "$SL_API$path")
	assert_eq "$what: status" "$want" "$got"
	assert_eq "$what: error code" "$code" "$(jq -r .error.code "$SL_TMP/b.json" 2>/dev/null)"
	note "$what: $(head -c 200 "$SL_TMP/b.json")"
}
expect "non-UTF-8 parameter value" 400 INVALID_ARGUMENT "/api/v1/events?container=%FF%FE"
grep -q "not valid UTF-8" "$SL_TMP/b.json" || fail "the message does not say why: $(cat "$SL_TMP/b.json")"
expect "overlong UTF-8 in a value" 400 INVALID_ARGUMENT "/api/v1/events?type=%C0%AF"
expect "non-UTF-8 parameter name" 400 INVALID_ARGUMENT "/api/v1/events?%FF=1"
expect "non-UTF-8 value on a no-parameter route" 400 INVALID_ARGUMENT "/healthz?x=%80"
expect "non-UTF-8 value on a task route" 400 INVALID_ARGUMENT "/api/v1/tasks?x=%80"
expect "non-UTF-8 path" 404 NOT_FOUND "/api/v1/%FF%FE"
expect "non-UTF-8 workload id (a malformed id, docs/STATS.md)" 400 INVALID_ARGUMENT "/api/v1/workloads/%FF/stats"
expect "non-UTF-8 task id" 404 NOT_FOUND "/api/v1/tasks/%FF%FE"
expect "valid UTF-8 still fine" 400 INVALID_ARGUMENT "/api/v1/events?container=%C3%A9t%C3%A9"

# malformed HTTP (bad request lines, no Host, bad header lines, HTTP/9.9)
s0=$(sl_metric sandlens_log_suppressed_total)
w0=$(grep -c "microhttpd:" "$SL_LOGDIR/agent.stderr")
python3 "$SL_ROOT/tests/lib/sl_slowconn.py" raw 127.0.0.1 "$SL_PORT" 400 >/dev/null
sleep 0.5
w1=$(grep -c "microhttpd:" "$SL_LOGDIR/agent.stderr")
s1=$(sl_metric sandlens_log_suppressed_total)
note "400 malformed requests: $((w1 - w0)) microhttpd log lines, suppressed +$((s1 - s0))"
[ $((w1 - w0)) -le 5 ] || fail "400 malformed requests wrote $((w1 - w0)) log lines (want at most 5)"
[ $((s1 - s0)) -ge 100 ] || fail "the suppressed lines are not counted: +$((s1 - s0))"
echo "ok - malformed requests: log rate-limited, the rest counted"
assert_eq "still serving" 200 "$(curl -s -m 10 -o /dev/null -w '%{http_code}' "$SL_API/healthz")"
sl_agent_stop || fail "agent exit status $?"
