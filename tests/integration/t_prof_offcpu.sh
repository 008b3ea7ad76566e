#!/bin/bash
# PROF-2/SCHED-4: off-CPU profiles of three kubepods runc containers, taken
# by three concurrent tasks:
#   S sleeps in nanosleep (10 ms at a time): the do_nanosleep path is
#     "blocked" for the whole window, within 10 % of the real time;
#   P blocks reading a pipe (a child writes a byte every 20 ms): the
#     pipe_read path is "blocked" for the window, within 10 %;
#   R spins on CPU 0 next to a CPU hog H pinned to the same CPU: R's
#     off-CPU time is runqueue wait (preempted), not blocked.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/lib_sched.sh"
source "$(dirname "$0")/lib_prof.sh"
sl_init
sl_require_agent_env
ct_require
[ -x "$SL_BUILD/helpers/sl-profprog" ] || fail "sl-profprog not built"

sl_agent_start
RUN=40
OTHER=""
[ "$(nproc)" -ge 2 ] && OTHER=1 # keep S and P off the hogs' CPU
prof_ct s "$OTHER" -- /bin/sl-profprog sleeploop $RUN 10
S=$CT_ID; ct_start_bg; S_RUN=$CT_RUN_PID; ct_wait_running
prof_ct p "$OTHER" -- /bin/sl-profprog pipewait $RUN 20
P=$CT_ID; ct_start_bg; P_RUN=$CT_RUN_PID; ct_wait_running
prof_ct r 0 -- /bin/sl-profprog spin $RUN
R=$CT_ID; ct_start_bg; R_RUN=$CT_RUN_PID; ct_wait_running
prof_ct h 0 -- /bin/sl-profprog spin $RUN
H=$CT_ID; ct_start_bg; H_RUN=$CT_RUN_PID; ct_wait_running
note "S=$S P=$P R=$R H=$H"
sleep 1

DUR=6
IS=$(task_create "{\"type\":\"profile_off_cpu\",\"target\":{\"container\":\"$S\"},\"duration_s\":$DUR}")
IP=$(task_create "{\"type\":\"profile_off_cpu\",\"target\":{\"container\":\"$P\"},\"duration_s\":$DUR}")
IR=$(task_create "{\"type\":\"profile_off_cpu\",\"target\":{\"container\":\"$R\"},\"duration_s\":$DUR,\"min_off_cpu_us\":0}")
O=$SL_TMP/out
mkdir -p "$O"
for x in S:$IS P:$IP R:$IR; do
	n=${x%%:*} id=${x#*:}
	rec=$(task_wait "$id" 60)
	printf '%s\n' "$rec" >"$O/$n.json"
	note "$n: $(printf '%s' "$rec" | jq -c '{status, reason, progress, off_cpu: .result.off_cpu, total_ns: .result.total_ns, top: .result.top_user_leaves[0:2]}')"
	assert_eq "$n task status" done "$(printf '%s' "$rec" | jq -r .status)"
	task_result "$id" folded "$O/$n.folded"
	sort -t' ' -k2 -n "$O/$n.folded" | tail -4 >"$SL_LOGDIR/$n-top.folded"
done

# within pct % of expected (integers, microseconds)
within() { # what actual expected pct
	local d=$(($2 - $3))
	[ $d -lt 0 ] && d=$((-d))
	note "$1: $2 us vs $3 us expected ($((d * 100 / $3))% off)"
	[ $((d * 100)) -le $(($3 * $4)) ] || fail "$1: $2 us is not within $4% of $3 us"
}
win_us() { jq -r '.progress.elapsed_s * 1000000 | floor' "$O/$1.json"; }

# S: the sleeping thread is off CPU nearly all the window, on the
# do_nanosleep path: blocked while the timer runs, then runqueue until it
# is switched in again (the host is shared, so that part is not 0)
SBL=$(folded_sum "$O/S.folded" '[blocked]' do_nanosleep)
SRQ=$(folded_sum "$O/S.folded" '[runqueue]' do_nanosleep)
within "S off CPU in do_nanosleep (blocked $SBL + runqueue $SRQ)" $((SBL + SRQ)) "$(win_us S)" 10
[ $((SBL * 100)) -ge $(((SBL + SRQ) * 60)) ] || fail "S: blocked is not the main part of its off-CPU time"
[ "$(folded_sum "$O/S.folded" '[blocked]' __clock_nanosleep)" -gt 0 ] || fail "S: no user frame __clock_nanosleep"
# each blocked interval is one 10 ms nanosleep (+ timer slack)
MEAN=$(jq -r '.result.off_cpu.blocked | (.ns / .count / 1000) | floor' "$O/S.json")
within "S mean blocked interval" "$MEAN" 10000 10

# P: the reader blocks in pipe_read; the writer (same container) sleeps
PBL=$(folded_sum "$O/P.folded" '[blocked]' pipe_read)
PRQ=$(folded_sum "$O/P.folded" '[runqueue]' pipe_read)
within "P reader off CPU in pipe_read (blocked $PBL + runqueue $PRQ)" $((PBL + PRQ)) "$(win_us P)" 10
[ $((PBL * 100)) -ge $(((PBL + PRQ) * 60)) ] || fail "P: blocked is not the main part of the reader's off-CPU time"
WBL=$(folded_sum "$O/P.folded" '[blocked]' do_nanosleep)
WRQ=$(folded_sum "$O/P.folded" '[runqueue]' do_nanosleep)
within "P writer off CPU in do_nanosleep" $((WBL + WRQ)) "$(win_us P)" 10

# R: preempted by H on CPU 0 -> runqueue wait dominates, blocked is small
RQ=$(jq -r '.result.off_cpu.runqueue.ns / 1000 | floor' "$O/R.json")
BL=$(jq -r '.result.off_cpu.blocked.ns / 1000 | floor' "$O/R.json")
W=$(win_us R)
note "R: runqueue $RQ us, blocked $BL us in a $W us window"
[ $((RQ * 100)) -ge $((W * 25)) ] || fail "R: runqueue wait $RQ us is under 25% of the window next to a hog on its CPU"
[ "$RQ" -gt $((BL * 5)) ] || fail "R: runqueue $RQ us does not dominate blocked $BL us"
[ "$(folded_sum "$O/R.folded" '[runqueue]' prof_spin_loop)" -gt 0 ] || fail "R: runqueue time not on prof_spin_loop's stack"

for p in $S_RUN $P_RUN $R_RUN $H_RUN; do CT_RUN_PID=$p ct_wait_bg $((RUN + 30)) || fail "a container exited with $?"; done
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
