#!/bin/bash
# SCHED-1/2/3: two kubepods-style runc containers pinned to CPU 0, each a CPU
# hog. Each one's histogram must hold waits > 1 ms, its external wait must
# dominate its internal wait and name the other container as the top
# container neighbour (API and `sandlens top`), and sched_delay events must name the
# other container as the neighbour. /metrics must pass `promtool check
# metrics`.
# sl-san: once (scheduler figures under two CPU hogs: timing; the sched code runs under ASan in t_sched_fidelity, t_sched_shortlived, t_sched_watch_churn)
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/lib_sched.sh"
sl_init
sl_require_agent_env
ct_require
sl_require_cmd promtool
[ -d /sys/fs/cgroup/cpuset ] || [ -f /sys/fs/cgroup/cpuset.cpus.effective ] || [ -f /sys/fs/cgroup/unified/cgroup.controllers ] ||
	skip "no cpuset controller to pin the containers"

sl_agent_start "sched:
  watch: all
  delay_threshold: 1ms
  delay_rate: 200
  delay_burst: 200"

SPIN=10
sched_ct a 0 "" -- /bin/sl-testprog spin $SPIN
A=$CT_ID A_POD=$CT_POD_UID
ct_start_bg
A_RUN=$CT_RUN_PID
sched_ct b 0 "" -- /bin/sl-testprog spin $SPIN
B=$CT_ID
ct_start_bg
B_RUN=$CT_RUN_PID
note "A=$A B=$B (both on CPU 0)"

for pair in "$A $B" "$B $A"; do
	set -- $pair
	v=$1 n=$2
	# neighbours are ranked by wait caused since first seen; host processes
	# (runc, other work on CPU 0) are neighbours too, so the check is on the
	# top neighbour that is a container
	e=$(sched_wait "$v" ".total.waits > 20 and .total.external_seconds > 0.5 and ([.neighbours[] | select(.host | not)][0].container_id == \"$n\") and ([.neighbours[] | select(.container_id == \"$n\")][0].wait_seconds > 0.2)" 20)
	note "$v: $(printf '%s' "$e" | jq -c '{total, neighbours: [.neighbours[] | {container_id, wait_seconds}], interval: .interval | {waits, p50_seconds, p99_seconds, max_seconds}}')"
	assert_eq "top container neighbour of $v" "$n" "$(printf '%s' "$e" | jq -r '[.neighbours[] | select(.host | not)][0].container_id')"
	printf '%s' "$e" | jq -e '.total.external_seconds > 4 * .total.internal_seconds' >/dev/null ||
		fail "$v: external wait does not dominate internal: $(printf '%s' "$e" | jq -c .total)"
	printf '%s' "$e" | jq -e '.interval.max_seconds >= 0.001' >/dev/null ||
		fail "$v: interval max wait below 1 ms: $(printf '%s' "$e" | jq -c .interval)"
	# histogram: waits above 1.024 ms (le is inclusive, so count - le(0.001024))
	cnt=$(sl_metric sandlens_runqueue_latency_seconds_count "container_id=\"$v\"")
	le1=$(sl_metric sandlens_runqueue_latency_seconds_bucket "container_id=\"$v\",le=\"0.001024\"")
	note "$v: histogram count $cnt, <= 1.024 ms: $le1"
	[ "$cnt" -gt 0 ] && [ $((cnt - le1)) -gt 0 ] || fail "$v: no wait > 1.024 ms in the histogram"
	# sched_delay events naming the neighbour
	ev=$(sl_wait_events "container=$v" "map(select(.type == \"sched_delay\" and .neighbour.container_id == \"$n\")) | .[0]" 20)
	note "$v sched_delay: $(printf '%s' "$ev" | jq -c '{pid, comm, wait_ns, cpu, contention, neighbour: .neighbour | {pid, comm, container_id}}')"
	# the neighbour as the sched_info mode records it per CPU (pid, tid,
	# key) and finds it again by its pid for comm (the spinner is alive)
	printf '%s' "$ev" | jq -e '.wait_ns >= 1000000 and .contention == "external" and .container_id != "" and .neighbour.comm == "sl-testprog" and .neighbour.pid > 0 and .neighbour.tid > 0' >/dev/null ||
		fail "$v: sched_delay event fields wrong: $ev"
	# the spinners never sleep: every wait is a preemption (a task's first
	# wait seen by the agent may be "unknown", nothing may be "wakeup")
	kinds=$(curl -sf -m 5 "$SL_API/api/v1/events?container=$v&type=sched_delay" |
		jq -c '[.events[] | .enqueue] | group_by(.) | map({(.[0]): length}) | add')
	note "$v sched_delay enqueue kinds: $kinds"
	printf '%s' "$kinds" | jq -e '(.preempted // 0) > 0 and (.wakeup // 0) == 0 and (.wakeup_new // 0) <= 1 and (.unknown // 0) <= 2' >/dev/null ||
		fail "$v: sched_delay enqueue kinds of a CPU-bound task wrong: $kinds"
done
assert_eq "pod_uid of A" "$A_POD" "$(sched_json "$A" | jq -r .pod_uid)"

# the whole exposition must be valid Prometheus text
curl -sf "$SL_API/metrics" >"$SL_LOGDIR/metrics.txt" || fail "GET /metrics"
grep -q '^sandlens_runqueue_latency_seconds_bucket{.*le="+Inf"}' "$SL_LOGDIR/metrics.txt" || fail "no +Inf bucket"
grep -q '^sandlens_runqueue_latency_seconds_bucket{container_id="",pod_uid="",runtime="host",le=' "$SL_LOGDIR/metrics.txt" ||
	fail "no host series"
promtool check metrics <"$SL_LOGDIR/metrics.txt" >"$SL_LOGDIR/promtool.txt" 2>&1 ||
	{ cat "$SL_LOGDIR/promtool.txt"; fail "promtool check metrics rejected /metrics"; }
note "promtool check metrics: ok"

# sandlens top names the neighbour
sl_cli top >"$SL_LOGDIR/top.txt" 2>&1 || { cat "$SL_LOGDIR/top.txt"; fail "sandlens top failed"; }
cat "$SL_LOGDIR/top.txt"
grep "^${A:0:12}" "$SL_LOGDIR/top.txt" | grep -q "${B:0:12}" || fail "sandlens top: row of A does not name B"
grep "^${B:0:12}" "$SL_LOGDIR/top.txt" | grep -q "${A:0:12}" || fail "sandlens top: row of B does not name A"

CT_RUN_PID=$A_RUN ct_wait_bg $((SPIN + 20)) || fail "container A exited with $?"
CT_RUN_PID=$B_RUN ct_wait_bg $((SPIN + 20)) || fail "container B exited with $?"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
