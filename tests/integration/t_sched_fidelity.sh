#!/bin/bash
# Fidelity (SCHED-1): over the same window, sandlens' count of runqueue waits
# for one container must agree within 5% with an independent measurement:
# the kernel's own sched_info accounting, /proc/<pid>/task/<tid>/schedstat
# field 3 (pcount: times the task was switched in; field 2 run_delay: ns
# spent waiting on a runqueue, Documentation/scheduler/sched-stats.rst);
# the summed wait time must agree within 5% with run_delay as well.
# The window is bounded by stopping every task of the container (SIGSTOP):
# a stopped task does not run, so both counts are frozen at both ends and
# the agent's tick (1 s) is not a source of skew.
# SL_SCHED_WAIT_SOURCE (sched.wait_source: auto, the default, or wakeup)
# picks how the agent times waits; t_sched_fidelity_wakeup runs this with
# wakeup, whose wakeup/switch hooks are a reader independent of the
# kernel's sched_info that the default mode reads at each switch-in.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/lib_sched.sh"
sl_init
sl_require_agent_env
ct_require
[ -r /proc/self/schedstat ] || skip "/proc/<pid>/schedstat not available (kernel without CONFIG_SCHED_INFO)"

WS=${SL_SCHED_WAIT_SOURCE:-auto}
sl_agent_start "sched:
  wait_source: $WS"
hooks=$(jq -r '[.modules[] | select(.name == "sched") | .hooks[] | "\(.name)=\(.state)"] | join(" ")' "$SL_LOGDIR/healthz.json")
note "sched hooks ($WS): $hooks"
case $WS in
auto) want="tp_btf/sched_wakeup=disabled tp_btf/sched_wakeup_new=disabled tp_btf/sched_switch=attached" ;;
wakeup) want="tp_btf/sched_wakeup=attached tp_btf/sched_wakeup_new=attached tp_btf/sched_switch=attached" ;;
*) fail "unknown SL_SCHED_WAIT_SOURCE $WS" ;;
esac
for w in $want; do
	case " $hooks " in *" $w "*) ;; *) fail "sched hook state $w expected (wait source $WS), got: $hooks" ;; esac
done
cat >"$SL_TMP/hogs.sh" <<'SH'
#!/bin/sh
/bin/sl-testprog spin 60 &
/bin/sl-testprog spin 60 &
/bin/sl-testprog spin 60 &
wait
SH
sched_ct f 0 "" -- /bin/sh /run.sh
cp "$SL_TMP/hogs.sh" "$CT_DIR/rootfs/run.sh" && chmod 755 "$CT_DIR/rootfs/run.sh"
F=$CT_ID
ct_start_bg
ct_wait_running
CG=/sys/fs/cgroup/unified$CT_CGPATH
[ -r "$CG/cgroup.procs" ] || CG=/sys/fs/cgroup/memory$CT_CGPATH
n=0
while [ "$(wc -l <"$CG/cgroup.procs")" -lt 4 ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
[ "$(wc -l <"$CG/cgroup.procs")" -ge 4 ] || fail "container tasks did not start ($(cat "$CG/cgroup.procs" | tr '\n' ' '))"
sleep 1

pids() { cat "$CG/cgroup.procs"; }
signal_all() { local p; for p in $(pids); do kill -"$1" "$p" 2>/dev/null; done; }
wait_stopped() {
	local p n=0 all
	while [ $n -lt 50 ]; do
		all=1
		for p in $(pids); do
			[ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" = T ] || all=0
		done
		[ $all = 1 ] && return 0
		sleep 0.1
		n=$((n + 1))
	done
	fail "container tasks did not stop"
}
# Σ pcount and Σ run_delay over every thread of the container
kstat() {
	local p
	for p in $(pids); do cat /proc/"$p"/task/*/schedstat 2>/dev/null; done |
		awk '{d += $2; c += $3} END {printf "%.0f %.0f\n", c, d}'
}
sl_waits() { sched_json "$F" | jq -r '"\(.total.waits) \(.total.wait_seconds)"'; }
settle() { sleep 2.5; } # > 2 agent ticks: the snapshot holds everything before the stop

signal_all STOP
wait_stopped
settle
read -r k0 kd0 < <(kstat)
read -r s0 sd0 < <(sl_waits)
note "window start: kernel pcount $k0 run_delay ${kd0}ns; sandlens waits $s0 wait ${sd0}s"
signal_all CONT
sleep 5
signal_all STOP
wait_stopped
settle
read -r k1 kd1 < <(kstat)
read -r s1 sd1 < <(sl_waits)
note "window end:   kernel pcount $k1 run_delay ${kd1}ns; sandlens waits $s1 wait ${sd1}s"
signal_all KILL

dk=$((k1 - k0)) ds=$((s1 - s0))
[ "$dk" -ge 100 ] || fail "too few switch-ins in the window ($dk) for a meaningful comparison"
awk -v a="$ds" -v b="$dk" 'BEGIN { r = a / b; printf "# waits: sandlens %d, kernel schedstat %d, ratio %.4f\n", a, b, r; exit !(r >= 0.95 && r <= 1.05) }' ||
	fail "sandlens wait count differs from schedstat pcount by more than 5%"
awk -v a="$sd1" -v a0="$sd0" -v b="$kd1" -v b0="$kd0" 'BEGIN { x = (a - a0) * 1e9; y = b - b0; r = (y > 0 ? x / y : 0); printf "# wait time: sandlens %.0f ns, kernel run_delay %.0f ns, ratio %.4f\n", x, y, r; exit !(r >= 0.95 && r <= 1.05) }' ||
	fail "sandlens wait time differs from schedstat run_delay by more than 5%"
ct_wait_bg 20
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
