#!/bin/bash
# Heavy readers do not starve cheap requests (break-it item 11): 15 loops of
# GET /api/v1/events?limit=10000 over TCP kept GET /healthz over TCP waiting
# up to 5.9 s (every thread of the listener's pool rendering a 1.5 MB list)
# while the unix socket, a listener of its own, stayed fast. Now at most
# api.threads - 1 heavy reads render at once per listener, the rest wait
# suspended (src/api/api_heavy.c). Checked by counts, not timings: during
# the flood two loops probe /healthz, one over TCP, one over the socket,
# and TCP must answer at least half as many probes as the socket (both share
# the host's load; before, TCP probes took 0.5..3 s each, socket ones ms);
# every answered reader got its 200 (none refused) and
# sandlens_api_heavy_reads_waited_total rose (the bound was reached).
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_agent_start "proc:
  exec_rate: 0
profiling:
  continuous:
    enabled: false"

for _ in $(seq 1 2000); do /bin/true; done
sl_wait_events "type=exec&limit=1" 'if length > 0 then .[0] else empty end' >/dev/null
w0=$(sl_metric sandlens_api_heavy_reads_waited_total)

SECS=${SL_HEAVY_SECONDS:-6}
end=$(($(date +%s) + SECS))
pids=()
for i in $(seq 15); do
	# each request bounded by the flood's end: what is still queued then is
	# cut (000, not counted; the agent renders it for nobody or answers it
	# 503 at its stop, which the ASan pass then checks for leaks)
	(while left=$((end - $(date +%s))) && [ $left -gt 0 ]; do
		curl -q -s -o /dev/null -m $left -w '%{http_code}\n' "$SL_API/api/v1/events?limit=10000"
	done >"$SL_TMP/reader.$i") &
	pids+=($!)
done
sleep 1
# two probe loops side by side, one per listener: each counts its answers
(while [ "$(date +%s)" -lt $((end - 1)) ]; do
	curl -q -s -o /dev/null -m 10 -w 'tcp %{http_code} %{time_total}\n' "$SL_API/healthz"
	sleep 0.1
done >"$SL_TMP/probes.tcp") &
pids+=($!)
(while [ "$(date +%s)" -lt $((end - 1)) ]; do
	curl -q -s -o /dev/null -m 10 --unix-socket "$SL_SOCK" -w 'unix %{http_code} %{time_total}\n' "http://localhost/healthz"
	sleep 0.1
done >"$SL_TMP/probes.unix") &
pids+=($!)
wait "${pids[@]}"
cat "$SL_TMP/probes.tcp" "$SL_TMP/probes.unix" >"$SL_LOGDIR/probes.txt"
cat "$SL_TMP"/reader.* >"$SL_LOGDIR/readers.txt"

reads=$(grep -cvx 000 "$SL_LOGDIR/readers.txt")
ok_reads=$(grep -cx 200 "$SL_LOGDIR/readers.txt")
note "heavy reads: $reads answered ($ok_reads 200), $(grep -cx 000 "$SL_LOGDIR/readers.txt") cut at the end"
[ "$reads" -ge 1 ] || fail "no heavy read answered in ${SECS} s"
assert_eq "heavy reads answered 200" "$reads" "$ok_reads"
count() { awk -v k="$1" -v lim="$2" '$1 == k && $2 == 200 && $3 < lim { n++ } END { print n + 0 }' "$SL_LOGDIR/probes.txt"; }
n_tcp=$(awk '$1 == "tcp"' "$SL_LOGDIR/probes.txt" | wc -l)
n_unix=$(awk '$1 == "unix"' "$SL_LOGDIR/probes.txt" | wc -l)
tcp_max=$(awk '$1 == "tcp" { if ($3 > m) m = $3 } END { print m + 0 }' "$SL_LOGDIR/probes.txt")
note "/healthz probes answered during the flood: tcp $n_tcp ($(count tcp 1) within 1 s, slowest ${tcp_max}s), unix socket $n_unix ($(count unix 1) within 1 s)"
[ "$n_unix" -ge 5 ] || fail "only $n_unix probes over the unix socket ran"
[ "$(count tcp 10)" = "$n_tcp" ] || fail "a /healthz over TCP was not answered 200 within 10 s"
# TCP as busy a prober as the socket's (a probe may still wait for one render)
[ "$n_tcp" -ge $((n_unix / 2)) ] ||
	fail "/healthz over TCP answered $n_tcp probes, over the unix socket $n_unix in the same loop and time: TCP starved by the heavy readers"
w1=$(sl_metric sandlens_api_heavy_reads_waited_total)
note "heavy reads that waited for a slot: $((w1 - w0))"
[ "$((w1 - w0))" -gt 0 ] || fail "no heavy read waited: the flood never reached the bound (sandlens_api_heavy_reads_waited_total $w0 -> $w1)"

sl_check_failed
echo PASS
