#!/bin/bash
# Workload statistics fidelity (issue 4, item 5) with a real runc container:
# it touches a known amount of anonymous memory (sl-testprog hog 64 MiB)
# and burns CPU for a known time (sl-testprog spin 3 s), then idles.
#   1. sandlens' figures (API, container and pod) equal the kernel's files
#      read around the same pass (counters are stable by then, checked by
#      reading the files before and after the answer);
#   2. they are within 5% of the known amounts: rss and working set vs the
#      64 MiB touched; user cpu vs the spinner's own user time (rusage via
#      busybox time -p), cpu usage vs the tasks' CPU from /proc/PID/stat and,
#      when the host let the spinner run (>= 95% of the 3 s), vs 3 s;
#   3. `sandlens stats <pod>` prints them;
#   4. /metrics carries the same container_* values;
#   5. deleting the container: 503 FAILED_PRECONDITION tearing_down, then
#      re-running it in the same cgroup path: a new epoch whose cpu counter
#      restarted.
# sl-san: once (stats figures against rusage and the kernel files; the stats code runs under ASan in t_stats_prometheus, t_stats_spec)
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
sl_init
sl_require_agent_env
ct_require

HOG_MIB=64
SPIN_S=3
cat >"$SL_TMP/run.sh" <<EOF
#!/bin/sh
/bin/sl-testprog hog $HOG_MIB &
busybox time -p /bin/sl-testprog spin $SPIN_S 2>&1
echo spun
exec sleep 600
EOF
ct_create fid kubepods --script "$SL_TMP/run.sh" -- /run.sh
ID=$CT_ID POD=$CT_POD_UID CG=$CT_CGPATH

sl_agent_start "stats:
  interval: 500ms
attribution:
  runc_root: $CT_RUNC_ROOT"

ct_start_bg
n=0
until grep -q spun "$CT_DIR/stdout" 2>/dev/null; do
	[ $n -lt 300 ] || fail "the container did not finish spinning within 30 s"
	sleep 0.1
	n=$((n + 1))
done
sleep 0.5 # let the hog's touching settle (it started before the spin)

V2=/sys/fs/cgroup/unified
[ -f /sys/fs/cgroup/cgroup.controllers ] && V2=/sys/fs/cgroup
KV=$(sl_get "/api/v1/workloads/$ID/stats" | jq -r '.containers[0].cgroup_version')
note "reader: cgroup v$KV"

# The kernel's figures for the container, as the API names them (JSON).
kernel_figures() {
	if [ "$KV" = 2 ]; then
		local d=$V2$CG
		jq -n --arg cur "$(cat $d/memory.current)" --arg stat "$(cat $d/memory.stat)" \
			--arg peak "$(cat $d/memory.peak 2>/dev/null || echo null)" --arg cpu "$(cat $d/cpu.stat)" \
			--arg pids "$(cat $d/pids.current)" '
			def kv($t; $k): ($t | split("\n") | map(split(" ")) | map(select(.[0] == $k)) | .[0][1] | tonumber);
			{memory_current_bytes: ($cur | tonumber),
			 memory_working_set_bytes: ([($cur | tonumber) - kv($stat; "inactive_file"), 0] | max),
			 memory_rss_bytes: kv($stat; "anon"), memory_cache_bytes: kv($stat; "file"),
			 memory_peak_bytes: ($peak | tonumber? // null),
			 cpu_usage_usec: kv($cpu; "usage_usec"), cpu_user_usec: kv($cpu; "user_usec"),
			 cpu_system_usec: kv($cpu; "system_usec"), pids_current: ($pids | tonumber)}'
	else
		local m=/sys/fs/cgroup/memory$CG a=/sys/fs/cgroup/cpuacct$CG p=/sys/fs/cgroup/pids$CG
		local hz
		hz=$(getconf CLK_TCK)
		jq -n --arg cur "$(cat $m/memory.usage_in_bytes)" --arg stat "$(cat $m/memory.stat)" \
			--arg peak "$(cat $m/memory.max_usage_in_bytes)" --arg usage "$(cat $a/cpuacct.usage)" \
			--arg cst "$(cat $a/cpuacct.stat)" --arg pids "$(cat $p/pids.current)" --argjson hz "$hz" '
			def kv($t; $k): ($t | split("\n") | map(split(" ")) | map(select(.[0] == $k)) | .[0][1] | tonumber);
			{memory_current_bytes: ($cur | tonumber),
			 memory_working_set_bytes: ([($cur | tonumber) - kv($stat; "total_inactive_file"), 0] | max),
			 memory_rss_bytes: kv($stat; "total_rss"), memory_cache_bytes: kv($stat; "total_cache"),
			 memory_peak_bytes: ($peak | tonumber),
			 cpu_usage_usec: (($usage | tonumber) / 1000 | floor),
			 cpu_user_usec: (kv($cst; "user") * 1000000 / $hz | floor),
			 cpu_system_usec: (kv($cst; "system") * 1000000 / $hz | floor),
			 pids_current: ($pids | tonumber)}'
	fi
}
KEYS='["memory_current_bytes","memory_working_set_bytes","memory_rss_bytes","memory_cache_bytes","memory_peak_bytes","cpu_usage_usec","cpu_user_usec","cpu_system_usec","pids_current"]'

# Kernel files, then a pass that starts after them, then the files again:
# when both reads agree, the counters did not move and the pass saw them.
ok=0
for try in $(seq 1 20); do
	k1=$(kernel_figures)
	t1=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
	sleep 1.2
	ans=$(sl_get "/api/v1/workloads/$ID/stats")
	k2=$(kernel_figures)
	[ "$k1" = "$k2" ] || { note "try $try: figures moved between the two kernel reads"; continue; }
	obs=$(jq -r .observed_at <<<"$ans")
	[[ "$obs" > "$t1" ]] || { note "try $try: answer observed $obs before $t1"; continue; }
	ok=1
	break
done
[ $ok = 1 ] || fail "the container's figures never held still for one collector pass"
printf '%s\n' "$ans" >"$SL_LOGDIR/container-stats.json"
printf '%s\n' "$k1" >"$SL_LOGDIR/kernel-figures.json"

for k in $(jq -r '.[]' <<<"$KEYS"); do
	assert_eq "container $k = kernel" "$(jq ".$k" <<<"$k1")" "$(jq ".$k" <<<"$ans")"
done
assert_eq "source" cgroup "$(jq -r .source <<<"$ans")"
assert_eq "containers_read" 1 "$(jq .containers_read <<<"$ans")"

# the pod (one container): the same figures
pod=$(sl_get "/api/v1/workloads/$POD/stats")
assert_eq "pod kind" pod "$(jq -r .kind <<<"$pod")"
if [ "$(jq -r .observed_at <<<"$pod")" = "$obs" ]; then
	for k in $(jq -r '.[]' <<<"$KEYS"); do
		assert_eq "pod $k = container" "$(jq ".$k" <<<"$ans")" "$(jq ".$k" <<<"$pod")"
	done
else
	assert_eq "pod cpu_usage_usec = kernel" "$(jq .cpu_usage_usec <<<"$k1")" "$(jq .cpu_usage_usec <<<"$pod")"
fi

# within 5% of the known amounts
within() { # what known actual
	awk -v k="$2" -v a="$3" -v w="$1" 'BEGIN {
		d = (a - k) / k; if (d < 0) d = -d
		printf "%s: known %.0f, measured %.0f (%.2f%%)\n", w, k, a, d * 100
		exit d <= 0.05 ? 0 : 1 }' || fail "$1 is not within 5% of the known amount"
}
within "anonymous memory (rss) vs ${HOG_MIB} MiB touched" $((HOG_MIB << 20)) "$(jq .memory_rss_bytes <<<"$ans")"
within "working set vs ${HOG_MIB} MiB touched" $((HOG_MIB << 20)) "$(jq .memory_working_set_bytes <<<"$ans")"
# The spinner runs for SPIN_S seconds of wall time; on a busy host it gets
# less CPU than that. Its own CPU time, from the kernel's per-task
# accounting (busybox time -p: rusage of the child), is the known amount.
spin_user=$(awk '$1 == "user" {printf "%.0f", $2 * 1000000}' "$CT_DIR/stdout")
spin_sys=$(awk '$1 == "sys" {printf "%.0f", $2 * 1000000}' "$CT_DIR/stdout")
[ -n "$spin_user" ] || fail "no 'time -p' output from the container: $(cat "$CT_DIR/stdout")"
note "spinner: user ${spin_user}us sys ${spin_sys}us in ${SPIN_S}s of wall time"
within "user cpu vs the spinner's user time (rusage)" "$spin_user" "$(jq .cpu_user_usec <<<"$ans")"
# every task's CPU from /proc (utime+stime, plus cutime+cstime of the
# reaped children: the spinner and `time`), summed over the cgroup's tasks
tasks_usec=0
for pid in $(cat "/sys/fs/cgroup/pids$CG/cgroup.procs" 2>/dev/null || cat "$V2$CG/cgroup.procs"); do
	t=$(awk -v hz="$(getconf CLK_TCK)" '{sub(/^.*\) /, ""); printf "%.0f", ($12 + $13 + $14 + $15) * 1000000 / hz}' "/proc/$pid/stat")
	tasks_usec=$((tasks_usec + t))
done
within "cpu usage vs the tasks' own cpu time (/proc/PID/stat)" "$tasks_usec" "$(jq .cpu_usage_usec <<<"$ans")"
if [ $((spin_user + spin_sys)) -ge $((SPIN_S * 950000)) ]; then
	within "cpu usage vs ${SPIN_S} s spun" $((SPIN_S * 1000000)) "$(jq .cpu_usage_usec <<<"$ans")"
else
	note "host busy: the spinner got $((spin_user + spin_sys))us of CPU in ${SPIN_S}s; the wall-time comparison is skipped"
fi

# the CLI
out=$(sl_cli stats "$POD") || fail "sandlens stats $POD failed: $out"
printf '%s\n' "$out" >"$SL_LOGDIR/cli-stats.txt"
grep -q "^pod $POD" <<<"$out" || fail "sandlens stats: no pod header"
grep -q "containers read 1 of 1" <<<"$out" || fail "sandlens stats: no container count"
grep -q "${ID:0:12}" <<<"$out" || fail "sandlens stats: container row missing"
echo "ok - sandlens stats $POD"

# /metrics: the same cpu figure (seconds) for this container
m=$(curl -sf "$SL_API/metrics" | grep "^container_cpu_usage_seconds_total{id=\"$CG\"[,}]")
want=$(awk -v u="$(jq .cpu_usage_usec <<<"$k1")" 'BEGIN { printf "%.6f", u / 1e6 }')
assert_eq "container_cpu_usage_seconds_total" "$want" "$(awk '{print $2}' <<<"$m")"

epoch1=$(jq -r .epoch.id <<<"$ans")
start1=$(jq -r .epoch.start <<<"$ans")
cpu1=$(jq .cpu_usage_usec <<<"$ans")

# delete: tearing down (503 FAILED_PRECONDITION) within the grace period
runc --root "$CT_RUNC_ROOT" kill "$ID" KILL >/dev/null 2>&1
wait "$CT_RUN_PID" 2>/dev/null
runc --root "$CT_RUNC_ROOT" delete -f "$ID" >/dev/null 2>&1
_ct_rm_cgroups "$CG"
n=0
while :; do
	code=$(curl -s -o "$SL_TMP/gone.json" -w '%{http_code}' "$SL_API/api/v1/workloads/$ID/stats")
	[ "$code" = 503 ] && break
	[ $n -lt 50 ] || fail "deleted container: HTTP $code, wanted 503 ($(cat "$SL_TMP/gone.json"))"
	sleep 0.1
	n=$((n + 1))
done
assert_eq "deleted container reason" tearing_down "$(jq -r .error.reason "$SL_TMP/gone.json")"
assert_eq "deleted container code" FAILED_PRECONDITION "$(jq -r .error.code "$SL_TMP/gone.json")"

# run it again in the same cgroup path: a new epoch, counters restarted
ct_start_bg
ct_wait_running
n=0
while :; do
	ans2=$(curl -sf "$SL_API/api/v1/workloads/$ID/stats") && break
	[ $n -lt 50 ] || fail "the re-run container did not show up"
	sleep 0.1
	n=$((n + 1))
done
epoch2=$(jq -r .epoch.id <<<"$ans2")
[ "$epoch2" != "$epoch1" ] || fail "re-created cgroup kept epoch $epoch1"
[[ "$(jq -r .epoch.start <<<"$ans2")" > "$start1" ]] || fail "new epoch does not start later"
cpu2=$(jq .cpu_usage_usec <<<"$ans2")
[ "$cpu2" -lt "$cpu1" ] || fail "cpu counter did not restart with the epoch ($cpu2 >= $cpu1)"
echo "ok - new epoch $epoch2 (was $epoch1), cpu restarted at ${cpu2}us"

assert_eq "unknown id" 404 "$(curl -s -o /dev/null -w '%{http_code}' "$SL_API/api/v1/workloads/no-such-workload/stats")"
assert_eq "malformed id" 400 "$(curl -s -o /dev/null -w '%{http_code}' "$SL_API/api/v1/workloads/bad%20id/stats")"

sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
