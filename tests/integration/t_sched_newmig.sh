#!/bin/bash
# A new task moved to another CPU before its first run keeps its whole
# first wait (break-it, session 11). In the sched_info mode a wait is the
# run_delay gathered since the task's previous switch-in plus the interval
# now ending; a task's first switch-in has no previous one, and a migration
# while queued closes an interval into run_delay (sched_fork() zeroed it),
# so the first wait is run_delay + the current interval. Before the fix
# only the interval after the move was counted.
# Workload (one container, watched): a SCHED_FIFO parent pinned to CPU 1
# forks (reset-on-fork: the child is SCHED_OTHER, queued behind it), spins
# 30 ms, then moves the child to CPU 0 while it is still queued. The
# child's sched_delay event must carry exactly the kernel's run_delay of
# that first wait (/proc/<child>/schedstat, pcount 1), kind wakeup_new.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/lib_sched.sh"
sl_init
sl_require_agent_env
sl_require_cmd python3 chrt taskset
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs (the child is moved from CPU 1 to CPU 0)"
V2=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
[ -n "$V2" ] || skip "no cgroup v2 mount"
ID=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
CG=$V2/sl-newmig-$$.slice/docker-$ID.scope
mkdir -p "$CG" || fail "cannot create $CG"
cg_gone() { # kill what is left in the cgroup (the loop's last sleep), then remove it
	echo 1 >"$CG/cgroup.kill" 2>/dev/null
	local n=0
	while [ -s "$CG/cgroup.procs" ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
	rmdir "$CG" "$V2/sl-newmig-$$.slice"
}
sl_on_exit cg_gone

sl_agent_start "sched:
  watch: all"
# a process of the container that waits now and then: a cgroup is watched
# once it has a histogram (its first wait), from the next tick on
W0=$(sl_metric sandlens_sched_watch_entries)
sh -c "echo \$\$ >$CG/cgroup.procs; exec sh -c 'while sleep 0.1; do :; done'" &
SLP=$!
# killed and reaped before the cgroups are removed (an rmdir of a cgroup
# with a live process fails, and the directories stayed behind)
sl_on_exit "kill $SLP 2>/dev/null; wait $SLP 2>/dev/null"
sched_wait "$ID" '.total.waits >= 1' 20 >/dev/null
n=0
until [ "$(sl_metric sandlens_sched_watch_entries)" -gt "$W0" ]; do
	n=$((n + 1)); [ $n -lt 40 ] || fail "the container never entered sched_watch"
	sleep 0.25
done

cat >"$SL_TMP/newmig.py" <<'PY'
import os, sys, time
p = os.fork()
if p == 0:
    time.sleep(1.0)
    os._exit(0)
end = time.monotonic() + 0.03
while time.monotonic() < end:
    pass
os.sched_setaffinity(p, {0})
time.sleep(0.3)
with open("/proc/%d/schedstat" % p) as f:
    s = f.read().split()
with open(sys.argv[1], "w") as f:
    f.write("%d %s %s\n" % (p, s[1], s[2]))
os.waitpid(p, 0)
PY
sh -c "echo \$\$ >$CG/cgroup.procs; exec chrt -f -R 10 taskset -c 1 python3 $SL_TMP/newmig.py $SL_TMP/child.txt" ||
	fail "the workload failed"
read -r CHILD RD PCOUNT <"$SL_TMP/child.txt"
note "child $CHILD: kernel run_delay $RD ns, pcount $PCOUNT"
[ "$RD" -ge 25000000 ] || fail "child waited only $RD ns: the parent did not hold CPU 1 (was it SCHED_FIFO?)"
ev=$(sl_wait_events "type=sched_delay&container=$ID" "[.[] | select(.tid == $CHILD and .enqueue == \"wakeup_new\")] | .[0]" 20)
note "event: $ev"
W=$(jq -r .wait_ns <<<"$ev")
if [ "$PCOUNT" = 1 ]; then
	assert_eq "sched_delay wait_ns of the child's only wait = kernel run_delay" "$RD" "$W"
else
	# preempted again on CPU 0 (a loaded host): the first wait is part
	# of run_delay, and the 30 ms behind the parent are in it
	note "the child was switched in $PCOUNT times: first wait checked as 30 ms <= wait <= run_delay"
	[ "$W" -ge 30000000 ] && [ "$W" -le "$RD" ] ||
		fail "first wait $W ns: not within [30 ms, run_delay $RD ns] (the part before the move lost?)"
	echo "ok - first wait $W ns within [30 ms, run_delay $RD ns]"
fi
sl_agent_stop || fail "agent exit status $?"
sl_check_failed
