#!/bin/bash
# SCHED-2 throttling: a CPU hog under a CFS quota of 20 ms per 100 ms period
# must show throttled periods and throttled time (cpu.stat, v2 or v1) in
# GET /api/v1/sched and /metrics, and its throttled time must be plausible:
# about 80 ms per 100 ms period while it spins.
# sl-san: once (CFS throttling figures from the kernel: timing; the code runs under ASan in t_sched_fidelity)
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/lib_sched.sh"
sl_init
sl_require_agent_env
ct_require

sl_agent_start
SPIN=6
sched_ct q "" 20000 -- /bin/sl-testprog spin $SPIN
Q=$CT_ID
ct_start_bg
e=$(sched_wait "$Q" '.throttling != null and .throttling.nr_throttled >= 10 and .throttling.interval_nr_throttled >= 5' 20)
note "throttling: $(printf '%s' "$e" | jq -c .throttling)"
printf '%s' "$e" | jq -e '.throttling.nr_periods >= .throttling.nr_throttled' >/dev/null ||
	fail "more throttled periods than periods: $(printf '%s' "$e" | jq -c .throttling)"
# a 20% quota on a spinning task: throttled ~80 ms of each 100 ms period
printf '%s' "$e" | jq -e '(.throttling.throttled_seconds / .throttling.nr_throttled) > 0.04 and
	(.throttling.throttled_seconds / .throttling.nr_throttled) < 0.1' >/dev/null ||
	fail "throttled time per throttled period not in (40 ms, 100 ms): $(printf '%s' "$e" | jq -c .throttling)"
# exported once, by the statistics collector (cAdvisor's name; docs/STATS.md)
# (read every stats.interval: wait for a pass that saw the throttling)
n=0
while thr=$(sl_metric container_cpu_cfs_throttled_periods_total "name=\"$Q\""); [ "${thr:-0}" -lt 10 ] && [ $n -lt 30 ]; do
	sleep 0.5
	n=$((n + 1))
done
[ "${thr:-0}" -ge 10 ] || fail "container_cpu_cfs_throttled_periods_total for $Q is $thr"
note "container_cpu_cfs_throttled_periods_total = $thr"
ct_wait_bg $((SPIN + 20)) || fail "container exited with $?"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
