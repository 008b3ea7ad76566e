#!/bin/bash
# The guest-agent statistics source (issue 17 items 2-4, STATS-5) end to end:
# sandlensd configured with a fixture Kata state root (laid out as the Go
# runtime writes it: <root>/sbs/<id>/persist.json, <root>/sbs/<id>/<cid>/
# persist.json, cloud-hypervisor's hybrid-vsock socket <root>/vm/<id>/clh.sock;
# kata-containers src/runtime/virtcontainers/persist/fs/fs.go, clh.go) whose
# socket is served by tests/helpers/kata_agent_fake.py, a stand-in for the
# guest's Kata agent that speaks the real wire protocol (hybrid-vsock
# handshake, ttrpc framing, agent.proto StatsContainer) with its own
# protobuf coding.
#   1. `sandlens stats --sandbox ID` chooses the guest source, answers with
#      source guest_agent, the epoch, and figures equal to the server's by
#      the rule (workload containers only, ns -> µs, working set = usage -
#      inactive_file / total_inactive_file floored at 0);
#   2. status codes: unknown sandbox 404, bad source 400, state "ready" 409
#      no_guest, a guest that never answers 503 guest_not_answering within
#      the timeout, one container missing 200 with containers_read 1, a
#      sandbox replaced mid-read 404;
#   3. --source cgroup for the same id gives the host-cgroup source.
# A live micro-VM cannot run here (no nested virtualization):
# t_stats_guest_live.sh covers a real Kata sandbox when one exists.
# sl-san: once
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_require_cmd python3

SB=sbx-int
K=$SL_TMP/kata
mkdir -p "$K/sbs/$SB/c1" "$K/sbs/$SB/c2" "$K/sbs/$SB/$SB" "$K/vm/$SB"
sandbox_state() { # state
	cat >"$K/sbs/$SB/persist.json.tmp" <<EOF2
{"State":"$1","SandboxContainer":"$SB","HypervisorState":{"Type":"clh","UUID":"u-1","Pid":0},
 "AgentState":{"URL":"hvsock://$K/vm/$SB/clh.sock:1024"},
 "Config":{"ContainerConfigs":[
  {"ID":"$SB","Annotations":{"io.kubernetes.cri.container-type":"sandbox"}},
  {"ID":"c1","Annotations":{"io.kubernetes.cri.container-type":"container"}},
  {"ID":"c2","Annotations":{"io.kubernetes.cri.container-type":"container"}}]}}
EOF2
	# in place, as the runtime rewrites it (O_TRUNC: same inode)
	cat "$K/sbs/$SB/persist.json.tmp" >"$K/sbs/$SB/persist.json"
	rm -f "$K/sbs/$SB/persist.json.tmp"
}
sandbox_state running
echo '{"State":"running","Process":{"StartTime":"2026-12-04T20:00:00Z","Pid":11}}' >"$K/sbs/$SB/c1/persist.json"
echo '{"State":"running","Process":{"StartTime":"2026-12-04T20:00:01Z","Pid":12}}' >"$K/sbs/$SB/c2/persist.json"
echo '{"State":"running","Process":{"Pid":10}}' >"$K/sbs/$SB/$SB/persist.json"
cat >"$SL_TMP/figures.json" <<'EOF2'
{"sbx-int": {"cpu_ns": 5000000000000, "usage": 1},
 "c1": {"cpu_ns": 2500000999, "user_ns": 2000000000, "sys_ns": 500000999, "usage": 209715200,
        "max_usage": 314572800, "stats": {"inactive_file": 52428800}, "pids": 5},
 "c2": {"cpu_ns": 1000999, "user_ns": 1000000, "sys_ns": 999, "usage": 10485760,
        "max_usage": 20971520, "stats": {"total_inactive_file": 1048576, "inactive_file": 9000000}, "pids": 2}}
EOF2

FAKE_PID=
start_fake() { # mode
	if [ -n "$FAKE_PID" ]; then kill "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null; fi
	rm -f "$SL_TMP/fake.out"
	python3 "$SL_ROOT/tests/helpers/kata_agent_fake.py" --socket "$K/vm/$SB/clh.sock" \
		--stats "$SL_TMP/figures.json" --mode "$1" --delay 5 --state-dir "$K" --sandbox "$SB" \
		>"$SL_TMP/fake.out" 2>>"$SL_LOGDIR/fake.stderr" &
	FAKE_PID=$!
	local n=0
	until grep -q ready "$SL_TMP/fake.out" 2>/dev/null; do
		[ $n -lt 200 ] || fail "the fake Kata agent did not start"
		sleep 0.1
		n=$((n + 1))
	done
}
sl_on_exit 'if [ -n "$FAKE_PID" ]; then kill "$FAKE_PID" 2>/dev/null; fi'
start_fake normal

sl_agent_start "stats:
  interval: 1s
  guest:
    kata_root: $K
    timeout: 700ms"

# 1. the guest source, chosen by --sandbox
OUT=$(sl_cli stats --sandbox "$SB" --json) || fail "sandlens stats --sandbox $SB failed: $OUT"
echo "$OUT" >"$SL_LOGDIR/guest.json"
assert_eq "source" guest_agent "$(jq -r .source <<<"$OUT")"
assert_eq "comparable_with_cgroup_source" false "$(jq -r .comparable_with_cgroup_source <<<"$OUT")"
assert_eq "epoch id" 16 "$(jq -r '.epoch.id | length' <<<"$OUT")"
assert_eq "epoch source" guest_agent "$(jq -r .epoch.source <<<"$OUT")"
assert_eq "containers_read" 2 "$(jq -r .containers_read <<<"$OUT")"
# the expected sums, by the rule, from the server's own figures
EXP=$(jq -c '[.c1, .c2] | {
	cpu: (map((.cpu_ns / 1000) | floor) | add),
	user: (map((.user_ns / 1000) | floor) | add),
	mem: (map(.usage) | add),
	ws: (map(.usage - (.stats.total_inactive_file // .stats.inactive_file // 0) | if . < 0 then 0 else . end) | add),
	peak: (map(.max_usage) | add),
	pids: (map(.pids) | add)}' "$SL_TMP/figures.json")
GOT=$(jq -c '{cpu: .cpu_usage_usec, user: .cpu_user_usec, mem: .memory_current_bytes,
	ws: .memory_working_set_bytes, peak: .memory_peak_bytes, pids: .pids_current}' <<<"$OUT")
assert_eq "summed figures" "$EXP" "$GOT"
EPOCH=$(jq -r .epoch.id <<<"$OUT")
TXT=$(sl_cli stats --sandbox "$SB") || fail "table output failed"
grep -q "source guest_agent" <<<"$TXT" || fail "table has no source line: $TXT"
grep -q "not comparable with the host-cgroup source" <<<"$TXT" || fail "table does not say not comparable"
grep -q "epoch $EPOCH" <<<"$TXT" || fail "table has no epoch $EPOCH"
# same epoch on the next read; the API route with ?source=guest_agent
B=$(sl_get "/api/v1/workloads/$SB/stats?source=guest_agent")
assert_eq "epoch continues" "$EPOCH" "$(jq -r .epoch.id <<<"$B")"

# 2. status codes
code() { curl -s -o "$SL_TMP/body" -w '%{http_code}' -m 10 "$SL_API$1"; }
assert_eq "unknown sandbox" 404 "$(code "/api/v1/workloads/nosuch/stats?source=guest_agent")"
assert_eq "bad source" 400 "$(code "/api/v1/workloads/$SB/stats?source=bogus")"
sandbox_state ready
assert_eq "booting sandbox" 409 "$(code "/api/v1/workloads/$SB/stats?source=guest_agent")"
assert_eq "booting reason" no_guest "$(jq -r .error.reason "$SL_TMP/body")"
sandbox_state running

start_fake never
t0=$(date +%s%N)
if ERR=$(sl_cli stats --sandbox "$SB" 2>&1); then fail "a guest that never answers gave figures"; fi
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
grep -q guest_not_answering <<<"$ERR" || fail "expected guest_not_answering: $ERR"
[ $ms -lt 5000 ] || fail "the read took ${ms} ms with a 700 ms timeout"
note "never-answering guest: 503 after ${ms} ms"

start_fake missing
B=$(sl_get "/api/v1/workloads/$SB/stats?source=guest_agent")
assert_eq "one container missing: read" 1 "$(jq -r .containers_read <<<"$B")"
assert_eq "one container missing: c2 only" 1000 "$(jq -r .cpu_usage_usec <<<"$B")"

start_fake replace
assert_eq "replaced mid-read" 404 "$(code "/api/v1/workloads/$SB/stats?source=guest_agent")"
B=$(sl_get "/api/v1/workloads/$SB/stats?source=guest_agent")
assert_eq "new incarnation, new epoch" sandbox_recreated "$(jq -r .epoch.reason <<<"$B")"

# 3. the host-cgroup source for the same id: no such cgroup workload here
if sl_cli stats "$SB" --source cgroup >/dev/null 2>"$SL_TMP/err"; then fail "--source cgroup found a cgroup"; fi
grep -q NOT_FOUND "$SL_TMP/err" || fail "--source cgroup: $(cat "$SL_TMP/err")"
echo "PASS"
