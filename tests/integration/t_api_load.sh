#!/bin/bash
# API under load (issue 8 Deliver 5; bounded, loopback only, ~40 s): while
# a runc container execs /bin/true 2000 times and the agent records every
# exec (proc.exec_rate 0: no sampling), 8 concurrent root clients hammer the
# API over TCP and an unprivileged user keeps 129 trickling connections
# open. Checks: every probe over the unix socket is answered (200 within
# 5 s), no exec event is lost (delivered == executed, no drop counted), the
# concurrent clients are served. Prints the figures recorded in
# bench/RESULTS.md ("API under attack"): probe latency median/p99/max,
# requests served, connections the agent closed.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
sl_init
sl_require_agent_env
ct_require
sl_require_cmd setpriv
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 missing (the attacker runs as nobody)"
id -u nobody >/dev/null 2>&1 || skip "no user 'nobody'"

N=${SL_LOAD_EXECS:-2000} # execs of /bin/true in the container
ATTACK_S=${SL_LOAD_SECONDS:-30} # slow-connection attack
CLIENTS=8     # concurrent root clients over TCP
sl_agent_start "proc:
  exec_rate: 0
attribution:
  runc_root: $CT_RUNC_ROOT"
chmod 711 "$SL_TMP"
drops() { curl -sf "$SL_API/metrics" | awk '/^sandlens_events_dropped_total\{.*type="exec"/ {s += $2} /^sandlens_store_queue_dropped_total / {s += $2} END {printf "%.0f\n", s}'; }
D0=$(drops)

cat >"$SL_TMP/loop.sh" <<EOF
i=0
while [ \$i -lt $N ]; do
	/bin/true
	i=\$((i + 1))
	[ \$((i % 25)) = 0 ] && sleep 0.2
done
echo done \$i
EOF
ct_create load plain --script "$SL_TMP/loop.sh" -- /bin/sh /run.sh

# the attack and the clients start first; the container runs inside them
setpriv --reuid=65534 --regid=65534 --clear-groups \
	/usr/bin/python3 "$SL_ROOT/tests/lib/sl_slowconn.py" slow 127.0.0.1 "$SL_PORT" 129 2 "$ATTACK_S" >"$SL_TMP/attack.json" &
APID=$!
sl_on_exit "kill $APID"
END=$((SECONDS + ATTACK_S - 2))
client() { # N: loop until END over TCP; one line per request: code
	local paths=("/api/v1/events?limit=100" /metrics /healthz /api/v1/containers "/api/v1/events?type=exec&limit=500" /api/v1/sched)
	local k=$1
	while [ $SECONDS -lt $END ]; do
		curl -s -m 10 -o /dev/null -w '%{http_code}\n' "$SL_API${paths[$((k % 6))]}"
		k=$((k + 1))
		sleep 0.05
	done >"$SL_TMP/client-$1.txt"
}
cpids=()
for c in $(seq 1 $CLIENTS); do
	client "$c" &
	cpids+=($!)
done
sleep 2
ct_start_bg

: >"$SL_TMP/probes.txt"
while [ $SECONDS -lt $END ]; do
	curl -q -s -m 5 -o /dev/null -w '%{http_code} %{time_total}\n' --unix-socket "$SL_SOCK" \
		"http://sandlens/api/v1/events?limit=20" >>"$SL_TMP/probes.txt" || echo "000 5" >>"$SL_TMP/probes.txt"
	sleep 0.5
done
wait "${cpids[@]}"
wait "$APID"
ct_wait_bg 120 || fail "the exec loop exited with status $? ($(cat "$CT_DIR/stderr"))"
grep -q "^done $N$" "$CT_DIR/stdout" || fail "the exec loop did not finish: $(cat "$CT_DIR/stdout")"

# ---- the API stayed answerable over the socket ----
nprobe=$(wc -l <"$SL_TMP/probes.txt")
bad=$(awk '$1 != 200' "$SL_TMP/probes.txt" | wc -l)
read -r p50 p99 pmax < <(awk '{print $2}' "$SL_TMP/probes.txt" | sort -n | awk '{v[NR] = $1} END {
	i50 = int((NR + 1) * 0.5); i99 = int(NR * 0.99 + 0.999); if (i99 > NR) i99 = NR
	printf "%.1f %.1f %.1f\n", v[i50] * 1000, v[i99] * 1000, v[NR] * 1000 }')
note "unix-socket probes under attack: $nprobe, failed $bad, latency ms median $p50 p99 $p99 max $pmax"
[ "$nprobe" -ge $((ATTACK_S / 2)) ] || fail "only $nprobe probes ran"
assert_eq "socket probes not answered with 200 within 5 s" 0 "$bad"

# ---- the concurrent clients ----
creq=$(cat "$SL_TMP"/client-*.txt | wc -l)
cbad=$(cat "$SL_TMP"/client-*.txt | grep -vc '^200$')
note "concurrent TCP clients: $creq requests, $cbad not 200 ($(cat "$SL_TMP"/client-*.txt | sort | uniq -c | tr '\n' ' '))"
[ "$creq" -ge 100 ] || fail "the clients made only $creq requests"
[ "$cbad" -le $((creq / 50)) ] || fail "$cbad of $creq client requests failed (more than 2%)"
note "attack: $(cat "$SL_TMP/attack.json")"
note "closed by the agent: header_timeout $(sl_metric sandlens_api_connections_closed_total 'reason="header_timeout"'), client_limit $(sl_metric sandlens_api_connections_closed_total 'reason="client_limit"')"

# ---- no event lost ----
got=0 prev=-1 tries=0
while [ $tries -lt 60 ]; do
	sl_all_events "type=exec&container=$CT_ID" >"$SL_TMP/execs.jsonl"
	got=$(jq -s '[.[] | select(.filename == "/bin/true")] | length' "$SL_TMP/execs.jsonl")
	[ "$got" = "$N" ] && break
	[ "$got" = "$prev" ] && [ $tries -ge 10 ] && break
	prev=$got
	sleep 1
	tries=$((tries + 1))
done
D1=$(drops)
cp "$SL_TMP/execs.jsonl" "$SL_LOGDIR/" 2>/dev/null
note "exec events of the container: $(wc -l <"$SL_TMP/execs.jsonl"), first: $(head -c 300 "$SL_TMP/execs.jsonl")"
note "exec events delivered for /bin/true: $got of $N; drops counted (exec + store queue) +$((D1 - D0))"
assert_eq "exec events dropped" 0 "$((D1 - D0))"
assert_eq "exec events delivered" "$N" "$got"
ct_delete
sl_agent_stop || fail "agent exit status $?"
