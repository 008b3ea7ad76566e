#!/bin/bash
# TASK-3 chaos: a client creates a follow task (on-CPU, then off-CPU) on a
# runc container with curl and is killed with SIGKILL while the task runs.
# Within the task's TTL (duration + tasks.deadline_grace) the agent must
# have cancelled it and its BPF program, map, link and perf event counts
# (/proc/<agent>/fd, and the task programs bpftool lists) must be back to
# the pre-task baseline. Then SIGTERM during a running task: exit 0.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/lib_sched.sh"
source "$(dirname "$0")/lib_prof.sh"
sl_init
sl_require_agent_env
ct_require
[ -x "$SL_BUILD/helpers/sl-profprog" ] || fail "sl-profprog not built"

sl_agent_start "tasks:
  deadline_grace: 5s"
prof_ct a "" -- /bin/sl-profprog spin 60
A=$CT_ID; ct_start_bg; A_RUN=$CT_RUN_PID; ct_wait_running

bpftool_progs() { # task programs loaded in the kernel (by name; this bpftool lists no pids)
	bpftool prog show -j 2>/dev/null |
		jq '[.[] | select(.name == "on_cpu" or .name == "off_cpu_switch" or .name == "off_cpu_wakeup" or .name == "sys_exit")] | length'
}
BASE=$(bpf_fds "$SL_AGENT_PID")
BASE_BT=$(bpftool_progs)
note "baseline: fds (progs maps links perf) $BASE, bpftool programs $BASE_BT"

for type in profile_on_cpu profile_off_cpu; do
	DUR=30 GRACE=5
	curl -sN -m 100 -XPOST "$SL_API/api/v1/tasks" \
		-d "{\"type\":\"$type\",\"target\":{\"container\":\"$A\"},\"duration_s\":$DUR,\"follow\":true}" \
		>"$SL_TMP/follow-$type.out" 2>/dev/null &
	CURL=$!
	n=0
	until [ "$(head -1 "$SL_TMP/follow-$type.out" 2>/dev/null | jq -r .id 2>/dev/null)" != "" ] &&
		grep -q '"status":"running"' "$SL_TMP/follow-$type.out"; do
		sleep 0.1
		n=$((n + 1))
		[ $n -lt 200 ] || fail "$type: follow stream did not report running: $(cat "$SL_TMP/follow-$type.out")"
	done
	ID=$(head -1 "$SL_TMP/follow-$type.out" | jq -r .id)
	sleep 2
	DURING=$(bpf_fds "$SL_AGENT_PID")
	note "$type $ID running: fds $DURING, bpftool programs $(bpftool_progs), stream lines $(wc -l <"$SL_TMP/follow-$type.out")"
	[ "$DURING" != "$BASE" ] || fail "$type: no BPF objects while the task runs?"
	[ "$(bpftool_progs)" -gt "$BASE_BT" ] || fail "$type: bpftool shows no task program while the task runs"
	KILLED=$(date +%s.%N)
	kill -9 "$CURL"
	wait "$CURL" 2>/dev/null
	# within the TTL: cancelled and torn down
	n=0
	while :; do
		NOW=$(bpf_fds "$SL_AGENT_PID")
		ST=$(task_get "$ID" | jq -r .status)
		[ "$NOW" = "$BASE" ] && [ "$ST" = cancelled ] && break
		n=$((n + 1))
		[ $n -lt $(((DUR + GRACE) * 10)) ] || fail "$type: 
			after $((DUR + GRACE)) s: status $ST, fds $NOW (baseline $BASE)"
		sleep 0.1
	done
	SECS=$(awk -v a="$KILLED" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	note "$type: client killed -> cancelled and torn down in $SECS s: $(task_get "$ID" | jq -c '{status, reason}')"
	assert_eq "$type: fds after client loss" "$BASE" "$(bpf_fds "$SL_AGENT_PID")"
	assert_eq "$type: bpftool programs after client loss" "$BASE_BT" "$(bpftool_progs)"
	assert_eq "$type: reason" "follow client disconnected" "$(task_get "$ID" | jq -r .reason)"
done

# a follow client that stays gets every record and the final one
OUT=$(curl -sN -m 30 -XPOST "$SL_API/api/v1/tasks" \
	-d "{\"type\":\"trace_syscall_errors\",\"target\":{\"container\":\"$A\"},\"duration_s\":2,\"follow\":true}")
printf '%s\n' "$OUT" >"$SL_LOGDIR/follow-complete.out"
assert_eq "last streamed status" done "$(printf '%s\n' "$OUT" | tail -1 | jq -r .status)"
[ "$(printf '%s\n' "$OUT" | wc -l)" -ge 3 ] || fail "follow stream too short: $OUT"

# shutdown while tasks run, one of them followed: both are cancelled with
# the shutdown as their reason (not the follow stream's end), exit 0
ID=$(task_create "{\"type\":\"profile_off_cpu\",\"target\":{\"container\":\"$A\"},\"duration_s\":30}")
task_wait_running "$ID"
curl -sN -m 60 -XPOST "$SL_API/api/v1/tasks" \
	-d "{\"type\":\"trace_syscall_errors\",\"target\":{\"container\":\"$A\"},\"duration_s\":30,\"follow\":true}" \
	>"$SL_LOGDIR/follow-shutdown.out" 2>/dev/null &
FOLLOW=$!
n=0
until grep -q '"status":"running"' "$SL_LOGDIR/follow-shutdown.out" 2>/dev/null; do
	[ $n -lt 60 ] || fail "the followed task never ran: $(cat "$SL_LOGDIR/follow-shutdown.out")"
	sleep 0.25
	n=$((n + 1))
done
FID=$(head -1 "$SL_LOGDIR/follow-shutdown.out" | jq -r .id)
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM during a task"
wait "$FOLLOW" 2>/dev/null
grep -q "task $ID: cancelled: agent shutting down" "$SL_LOGDIR/agent.stderr" || fail "no cancel at shutdown in the agent log"
grep -q "task $FID: cancelled: agent shutting down" "$SL_LOGDIR/agent.stderr" ||
	fail "followed task $FID: not cancelled as a shutdown: $(grep "task $FID" "$SL_LOGDIR/agent.stderr")"
# the stream ended with the final record, not cut off
assert_eq "followed task: last streamed status" cancelled "$(tail -1 "$SL_LOGDIR/follow-shutdown.out" | jq -r .status)"
assert_eq "followed task: last streamed reason" "agent shutting down" "$(tail -1 "$SL_LOGDIR/follow-shutdown.out" | jq -r .reason)"
ct_delete
echo "PASS"
