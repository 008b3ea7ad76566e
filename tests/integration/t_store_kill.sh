#!/bin/bash
# Durability figure (issue 8, deliver 3): kill -9 of the agent during a
# steady workload loses at most the last batch (<= 1 s of events). A
# container execs /bin/true N (N = 1, 2, ...) about 15 times a second and
# prints N after each; the agent is killed with SIGKILL mid-run and
# restarted on the same store. Every exec the container finished more than
# 1 s before the kill must be in the store, the stored ones form a prefix
# 1..J (losses can only be the newest), and the restarted agent keeps the
# old rows and records new ones. The loss (execs seen before the kill but
# not stored, and how long before the kill the last stored one was) is
# printed as the figure (docs/ARCHITECTURE.md "Store").
# sl-san: once (durability figure after kill -9; the store code runs under ASan in every test)
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
sl_init
sl_require_agent_env
sl_require_cmd sqlite3
ct_require

sl_agent_start
cat >"$SL_TMP/work.sh" <<'EOF'
#!/bin/sh
i=1
while [ $i -le 400 ]; do
	/bin/true $i
	echo $i
	sleep 0.05
	i=$((i + 1))
done
EOF
ct_create kill9 kubepods --script "$SL_TMP/work.sh" -- /bin/sh /run.sh
ct_start_bg
ct_wait_running
out="$CT_DIR/stdout"
last() { tail -n 1 "$out" 2>/dev/null | tr -dc 0-9; }

n=0
until [ "$(last)" ] && [ "$(last)" -ge 60 ]; do
	[ $n -lt 400 ] || fail "the workload did not reach 60 execs within 40 s (at '$(last)')"
	sleep 0.1
	n=$((n + 1))
done
k1=$(last) # finished at least 1 s before the kill
sleep 1
k=$(last)
t_kill=$(date +%s%N)
kill -KILL "$SL_AGENT_PID"
wait "$SL_AGENT_PID" 2>/dev/null
SL_AGENT_PID=
note "killed at index $k (index $k1 one second before)"

# restart on the same store (the lock died with the process)
sleep 1
sl_agent_launch
q() { sqlite3 "file:$SL_DB?mode=ro" "$1"; }
sel="FROM events WHERE type='exec' AND container_id='$CT_ID' AND json_extract(json,'\$.filename')='/bin/true'"
# indices stored from before the kill
idx=$(q "SELECT json_extract(json,'\$.argv[1]') $sel AND time_ns < $t_kill ORDER BY time_ns" | sort -n)
j=$(tail -n 1 <<<"$idx")
cnt=$(wc -l <<<"$idx")
[ -n "$j" ] || fail "no exec of the container stored before the kill"
assert_eq "stored execs from before the kill form a prefix 1..$j (no hole)" "$j" "$cnt"
assert_eq "no duplicate" "$cnt" "$(sort -un <<<"$idx" | wc -l)"
[ "$j" -ge "$k1" ] || fail "exec $k1 (finished 1 s before the kill) is not stored: stored up to $j"
t_j=$(q "SELECT max(time_ns) $sel AND time_ns < $t_kill")
lost=$((k - j))
[ $lost -ge 0 ] || lost=0
window_ms=$(((t_kill - t_j) / 1000000))
note "kill -9: $lost of $k execs seen before the kill not stored; the last stored one $window_ms ms before the kill"
echo "ok - kill -9 lost $lost execs (the last ${window_ms} ms); everything older than 1 s was stored"

# the restarted agent kept the old rows and records new ones
k_now=$(last)
n=0
until [ "$(q "SELECT count(*) $sel AND time_ns > $t_kill")" -ge 5 ]; do
	[ $n -lt 120 ] || fail "the restarted agent recorded no new exec of the container within 30 s"
	sleep 0.25
	n=$((n + 1))
done
assert_eq "rows from before the kill after the restart" "$cnt" \
	"$(q "SELECT count(*) $sel AND time_ns < $t_kill")"
echo "ok - the restarted agent kept the $cnt old rows and records new ones (workload at $k_now)"

runc --root "$CT_RUNC_ROOT" kill "$CT_ID" KILL >/dev/null 2>&1
wait "$CT_RUN_PID" 2>/dev/null
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
