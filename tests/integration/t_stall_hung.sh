#!/bin/bash
# stall module, hung tasks (docs/STALL.md "Hung tasks"): tasks of a runc
# container blocked in uninterruptible sleep. The test builds a FUSE file
# system (tests/lib/sl_stall_fuse.c, libfuse3) whose writes wait while a
# gate file exists and bind-mounts it into the container; the container
# starts two `dd` writers of its file: the first waits for the FUSE server
# (TASK_KILLABLE, holding the inode lock), the second waits for that inode
# lock (rwsem, TASK_UNINTERRUPTIBLE: the kind khungtaskd reports). Checks:
#   - sandlens' own scan (stall.hung_threshold 3s) reports a hung_task
#     event (source sandlens) for the second dd (killable false):
#     container_id = the container, blocked_ns >= 3 s, a symbolized kernel
#     stack that shows the write path's inode-lock wait; exactly one per
#     blocking episode (still one 9 s after the start), and one from the
#     kernel too (khungtaskd re-reports at every check: deduplicated);
#   - with kernel.hung_task_timeout_secs lowered to 2 (restored in the EXIT
#     trap; that part SKIPs when the knob is absent), the kernel's
#     sched:sched_process_hang reaches us as hung_task source kernel for
#     the second dd, with the container;
#   - /metrics sandlens_stall_hung_tasks{container_id=it} >= 1 while blocked,
#     sandlens_stall_hung_task_events_total{source="sandlens"} >= 1; 0 hung
#     once the gate is removed (the writers complete, nothing stays in D);
#   - a reader (no token) gets kernel_stack_withheld, not the stack;
#   - `sandlens events --type hung_task` lists them; promtool accepts /metrics.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
sl_init
sl_require_agent_env
ct_require
sl_require_cmd cc pkg-config fusermount3
pkg-config --exists fuse3 || skip "libfuse3-dev not installed (pkg-config fuse3)"
[ -c /dev/fuse ] || skip "no /dev/fuse"
[ "$(cat /proc/sys/kernel/hung_task_panic 2>/dev/null || echo 0)" = 0 ] ||
	skip "kernel.hung_task_panic is set: a hung task would panic this host"

cc -O1 -Wall $(pkg-config --cflags fuse3) -o "$SL_TMP/sl_stall_fuse" "$SL_ROOT/tests/lib/sl_stall_fuse.c" \
	$(pkg-config --libs fuse3) || fail "cannot build the FUSE server"
MNT="$SL_TMP/fuse-stall-$$"
GATE="$SL_TMP/gate"
mkdir -p "$MNT"
touch "$GATE"
"$SL_TMP/sl_stall_fuse" "$GATE" "$MNT" -f >"$SL_LOGDIR/fuse.log" 2>&1 &
FUSE_PID=$!
OLD_TO=
# Teardown in reverse: the gate goes first so every reader completes, then
# the mount, the server; the sysctl is restored.
sl_on_exit "kill $FUSE_PID; sleep 0.2; kill -9 $FUSE_PID"
sl_on_exit "fusermount3 -u -z '$MNT'"
sl_on_exit "rm -f '$GATE'; sleep 1"
sl_on_exit '[ -n "$OLD_TO" ] && echo "$OLD_TO" >/proc/sys/kernel/hung_task_timeout_secs'
for _ in $(seq 50); do [ -e "$MNT/data" ] && break; sleep 0.1; done
[ -e "$MNT/data" ] || fail "FUSE mount did not come up: $(cat "$SL_LOGDIR/fuse.log")"
note "FUSE server $FUSE_PID on $MNT"

sl_agent_start "attribution:
  runc_root: $CT_RUNC_ROOT
stall:
  hung_threshold: 3s"
jq -e '.modules[] | select(.name == "stall") | .hooks[] | select(.name == "iter/task" and .state == "attached")' \
	"$SL_LOGDIR/healthz.json" >/dev/null || fail "stall iter/task not attached: $(jq -c '.modules[] | select(.name == "stall")' "$SL_LOGDIR/healthz.json")"

KERNEL_PART=1
if [ -w /proc/sys/kernel/hung_task_timeout_secs ]; then
	OLD_TO=$(cat /proc/sys/kernel/hung_task_timeout_secs)
	echo 2 >/proc/sys/kernel/hung_task_timeout_secs
else
	KERNEL_PART=0
	note "SKIP (part): no kernel.hung_task_timeout_secs (CONFIG_DETECT_HUNG_TASK off): sched_process_hang not checked"
fi
jq -e '.modules[] | select(.name == "stall") | .hooks[] | select(.name == "tp_btf/sched_process_hang" and .state == "attached")' \
	"$SL_LOGDIR/healthz.json" >/dev/null || { KERNEL_PART=0; note "SKIP (part): sched_process_hang not attached"; }

cat >"$SL_TMP/writers.sh" <<'EOF'
#!/bin/sh
echo a | dd of=/mnt/data bs=1 count=1 conv=notrunc 2>/dev/null &
sleep 1
echo b | dd of=/mnt/data bs=1 count=1 conv=notrunc 2>/dev/null &
wait
echo done
EOF
ct_create hung plain --script "$SL_TMP/writers.sh" -- /bin/sh /run.sh
jq --arg src "$MNT" '.mounts += [{destination: "/mnt", type: "bind", source: $src, options: ["rbind", "rw"]}]' \
	"$CT_DIR/config.json" >"$CT_DIR/config.json.new" && mv "$CT_DIR/config.json.new" "$CT_DIR/config.json"
ct_start_bg
ct_wait_running
START=$(date +%s)

ev=$(sl_wait_events "type=hung_task&container=$CT_ID" \
	'[.[] | select(.source == "sandlens" and .comm == "dd" and .killable == false)] | first' 25)
LOCKED=$ev
note "own scan: $(jq -c '{comm, tid, container_id, blocked_ns, killable, state, stack: .kernel_stack[0:5]}' <<<"$ev")"
assert_eq "own hung_task container_id" "$CT_ID" "$(jq -r .container_id <<<"$ev")"
[ "$(jq -r .blocked_ns <<<"$ev")" -ge 3000000000 ] || fail "blocked_ns below the 3 s threshold: $(jq .blocked_ns <<<"$ev")"
[ "$(jq '.kernel_stack | length' <<<"$ev")" -ge 3 ] || fail "no kernel stack: $(jq -c '{kernel_stack, stack_error}' <<<"$ev")"
jq -e '.kernel_stack[0] | test("^[A-Za-z_][A-Za-z0-9_.]*\\+0x[0-9a-f]+")' <<<"$ev" >/dev/null ||
	fail "kernel stack not symbolized: $(jq -c '.kernel_stack[0:3]' <<<"$ev")"
jq -e '.kernel_stack | map(select(test("rwsem|down_write|inode_lock|fuse_file_write_iter"))) | length > 0' <<<"$ev" >/dev/null ||
	fail "the locked writer's stack does not show the inode-lock wait: $(jq -c .kernel_stack <<<"$ev")"
echo "ok - own scan: hung_task of the locked writer in $CT_ID with a symbolized stack"

if [ "$KERNEL_PART" = 1 ]; then
	kev=$(sl_wait_events "type=hung_task&container=$CT_ID" '[.[] | select(.source == "kernel" and .comm == "dd")] | first' 25)
	note "kernel: $(jq -c '{comm, tid, container_id, blocked_ns, stack: .kernel_stack[0:4]}' <<<"$kev")"
	assert_eq "sched_process_hang container_id" "$CT_ID" "$(jq -r .container_id <<<"$kev")"
	assert_eq "sched_process_hang tid = the locked writer" "$(jq -r .tid <<<"$LOCKED")" "$(jq -r .tid <<<"$kev")"
	echo "ok - sched:sched_process_hang reported the locked writer"
fi

# once per episode: no second own event while it stays blocked
sleep $((START + 9 - $(date +%s) > 0 ? START + 9 - $(date +%s) : 0))
LT=$(jq -r .tid <<<"$LOCKED")
ALL=$(curl -sf "$SL_API/api/v1/events?type=hung_task&container=$CT_ID")
assert_eq "own hung_task events of the locked writer (one episode)" 1 \
	"$(jq --argjson t "$LT" '[.events[] | select(.source == "sandlens" and .tid == $t)] | length' <<<"$ALL")"
[ "$KERNEL_PART" = 0 ] || assert_eq "kernel hung_task events of the locked writer (one episode; khungtaskd repeats)" 1 \
	"$(jq --argjson t "$LT" '[.events[] | select(.source == "kernel" and .tid == $t)] | length' <<<"$ALL")"
# the first writer may be reported too (its FUSE wait turns killable-D), so
# the container has 1 or 2 hung tasks and as many own events
G=$(sl_metric sandlens_stall_hung_tasks "container_id=\"$CT_ID\"")
E=$(sl_metric sandlens_stall_hung_task_events_total "container_id=\"$CT_ID\",source=\"sandlens\"")
[ "$G" -ge 1 ] && [ "$G" -le 2 ] || fail "sandlens_stall_hung_tasks of the container: $G (want 1 or 2)"
[ "$E" -ge 1 ] && [ "$E" -le 2 ] || fail "sandlens_stall_hung_task_events_total sandlens of the container: $E (want 1 or 2)"
echo "ok - /metrics: $G hung task(s), $E own event(s) for the container"
curl -sf "$SL_API/metrics" >"$SL_TMP/metrics.txt"
cp "$SL_TMP/metrics.txt" "$SL_LOGDIR/metrics.txt"

# a reader: no token -> the stack is withheld
rd=$(curl -q -sf "$SL_API/api/v1/events?type=hung_task&container=$CT_ID" | jq -c '[.events[] | select(.source == "sandlens")] | first')
assert_eq "reader: kernel_stack_withheld" true "$(jq -r .kernel_stack_withheld <<<"$rd")"
assert_eq "reader: no kernel_stack" null "$(jq -c .kernel_stack <<<"$rd")"

sl_cli events --type hung_task >"$SL_TMP/cli.txt" 2>&1 || fail "sandlens events --type hung_task: $(cat "$SL_TMP/cli.txt")"
cp "$SL_TMP/cli.txt" "$SL_LOGDIR/cli.txt"
grep -q "hung_task" "$SL_TMP/cli.txt" && grep -q "sandlens tid=" "$SL_TMP/cli.txt" ||
	fail "CLI table has no hung_task row: $(head -5 "$SL_TMP/cli.txt")"
echo "ok - CLI lists hung_task"

# unblock: the writers complete, the gauge drops to 0
rm -f "$GATE"
ct_wait_bg 20 >/dev/null
grep -q done "$CT_DIR/stdout" || fail "the writers did not finish after the unblock"
n=0
until [ "$(sl_metric sandlens_stall_hung_tasks "container_id=\"$CT_ID\"")" = 0 ]; do
	n=$((n + 1))
	[ $n -lt 20 ] || fail "sandlens_stall_hung_tasks of the container did not drop to 0 after the unblock"
	sleep 0.25
done
echo "ok - unblocked: hung gauge back to 0"
if ps -eo stat=,pid=,comm= | awk '$1 ~ /^D/' | grep -q " dd$"; then
	fail "a dd is still in D state after the unblock: $(ps -eo stat=,pid=,comm= | awk '$1 ~ /^D/')"
fi

if command -v promtool >/dev/null; then
	promtool check metrics <"$SL_TMP/metrics.txt" >"$SL_TMP/promtool.out" 2>&1
	grep -i "error" "$SL_TMP/promtool.out" && fail "promtool check metrics: $(head -5 "$SL_TMP/promtool.out")"
	echo "ok - promtool check metrics"
fi
echo "PASS"
