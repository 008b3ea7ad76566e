#!/bin/bash
# /metrics with workload statistics: `promtool check metrics` is clean, and a
# real Prometheus server (Debian `prometheus`, temp config and data dir, own
# loopback port, 1 s scrape interval) scrapes the agent; a value queried back
# through its HTTP API equals the kernel's figure for a test cgroup.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_require_cmd prometheus promtool

# A kubepods-style container cgroup (in every mounted hierarchy) holding a
# sleeping process.
POD=$(cat /proc/sys/kernel/random/uuid)
CID=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
CG="/kubepods/besteffort/pod$POD/$CID"
dirs=()
for h in /sys/fs/cgroup/unified /sys/fs/cgroup/memory /sys/fs/cgroup/cpu /sys/fs/cgroup/cpuacct \
	/sys/fs/cgroup/pids /sys/fs/cgroup/blkio; do
	[ -d "$h" ] || continue
	mkdir -p "$h$CG" && dirs+=("$h$CG")
done
[ -f /sys/fs/cgroup/cgroup.controllers ] && mkdir -p "/sys/fs/cgroup$CG" && dirs+=("/sys/fs/cgroup$CG")
[ ${#dirs[@]} -gt 0 ] || skip "no cgroup hierarchy to create a test cgroup in"
# a distinctive figure to query back: a memory limit of ~117.7 MiB
for d in "${dirs[@]}"; do
	[ -f "$d/memory.limit_in_bytes" ] && echo 123456789 >"$d/memory.limit_in_bytes" && LIMF=$d/memory.limit_in_bytes
	[ -f "$d/memory.max" ] && echo 123456789 >"$d/memory.max" && LIMF=$d/memory.max
done
[ -n "${LIMF:-}" ] || skip "no memory controller directory for the test cgroup"
sleep 600 &
SLEEPER=$!
for d in "${dirs[@]}"; do echo "$SLEEPER" >"$d/cgroup.procs" || fail "cannot move $SLEEPER into $d"; done
cleanup_cg() {
	kill "$SLEEPER" 2>/dev/null
	wait "$SLEEPER" 2>/dev/null
	local d
	for d in "${dirs[@]}"; do rmdir "$d" "$(dirname "$d")" 2>/dev/null; done
}
sl_on_exit cleanup_cg

sl_agent_start "stats:
  interval: 500ms"

# the value Prometheus should report: pids.current of the test cgroup
n=0
until curl -sf "$SL_API/metrics" | grep -q "^container_threads{id=\"$CG\""; do
	[ $n -lt 50 ] || fail "container_threads for $CG never appeared in /metrics"
	sleep 0.1
	n=$((n + 1))
done
curl -sf "$SL_API/metrics" >"$SL_LOGDIR/metrics.txt" || fail "GET /metrics"
promtool check metrics <"$SL_LOGDIR/metrics.txt" >"$SL_LOGDIR/promtool.txt" 2>&1 ||
	fail "promtool check metrics: $(head -20 "$SL_LOGDIR/promtool.txt")"
echo "ok - promtool check metrics is clean ($(wc -l <"$SL_LOGDIR/metrics.txt") lines)"

# Prometheus asks for gzip; the answer is one gzip member (the pass's
# compressed container families + this scrape's own families) that gzip(1)
# reads whole and promtool accepts
curl -sf -H 'Accept-Encoding: gzip' -D "$SL_LOGDIR/gz.headers" -o "$SL_LOGDIR/metrics.gz" "$SL_API/metrics" ||
	fail "GET /metrics with gzip"
grep -qi '^Content-Encoding: gzip' "$SL_LOGDIR/gz.headers" || fail "no Content-Encoding: gzip: $(cat "$SL_LOGDIR/gz.headers")"
gzip -t "$SL_LOGDIR/metrics.gz" || fail "the gzip body is not valid gzip"
gzip -dc "$SL_LOGDIR/metrics.gz" | promtool check metrics >"$SL_LOGDIR/promtool-gz.txt" 2>&1 ||
	fail "promtool on the gzip body: $(head -20 "$SL_LOGDIR/promtool-gz.txt")"
grep -q "^container_threads{id=\"$CG\"[,}]" <(gzip -dc "$SL_LOGDIR/metrics.gz") || fail "the gzip body lacks the container"
echo "ok - gzip /metrics: $(stat -c %s "$SL_LOGDIR/metrics.gz") bytes for $(stat -c %s "$SL_LOGDIR/metrics.txt"), valid, promtool clean"

PPORT=$(sl_free_port)
mkdir -p "$SL_TMP/prom-data"
cat >"$SL_TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: sandlens
    static_configs:
      - targets: ["127.0.0.1:$SL_PORT"]
EOF
cp "$SL_TMP/prometheus.yml" "$SL_LOGDIR/prometheus.yml"
prometheus --config.file="$SL_TMP/prometheus.yml" --storage.tsdb.path="$SL_TMP/prom-data" \
	--web.listen-address="127.0.0.1:$PPORT" >"$SL_LOGDIR/prometheus.log" 2>&1 &
PROM=$!
sl_on_exit "kill $PROM; wait $PROM"

query() { # PromQL -> first value, "" when none yet
	curl -sf -G "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" |
		jq -r '.data.result[0].value[1] // empty'
}
q="container_threads{id=\"$CG\"}"
n=0
got=""
while [ -z "$got" ]; do
	[ $n -lt 60 ] || fail "Prometheus never returned $q (targets: $(curl -s "http://127.0.0.1:$PPORT/api/v1/targets" | head -c 600))"
	sleep 0.5
	n=$((n + 1))
	got=$(query "$q")
done
want=""
for d in "${dirs[@]}"; do [ -f "$d/pids.current" ] && want=$(cat "$d/pids.current") && break; done
assert_eq "Prometheus $q" "$want" "$got"
health=$(curl -sf "http://127.0.0.1:$PPORT/api/v1/targets" | jq -r '.data.activeTargets[0].health')
assert_eq "Prometheus target health" up "$health"
got=$(query "container_spec_memory_limit_bytes{id=\"$CG\"}")
assert_eq "Prometheus container_spec_memory_limit_bytes = $LIMF" "$(cat "$LIMF")" "$got"
# a pod-sum family, queried back
got=$(query "sandlens_workload_containers{kind=\"pod\",workload=\"$POD\",state=\"total\"}")
assert_eq "Prometheus sandlens_workload_containers for the pod" 1 "$got"

sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
