#!/bin/bash
# TASK-1/2/3: capabilities; five concurrent tasks against a limit of 4:
# exactly one refused, at once, with 429 RESOURCE_EXHAUSTED; a task whose
# target does not exist fails alone (status failed, reason) while the others
# run; bad requests are 400; result before the end is 409; DELETE stops a
# running task, destroys its BPF objects (the agent's BPF fds return to
# the baseline) and forgets it (404); durations beyond tasks.max_duration
# are refused; the agent keeps serving.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/lib_sched.sh"
source "$(dirname "$0")/lib_prof.sh"
sl_init
sl_require_agent_env
[ -x "$SL_BUILD/helpers/sl-profprog" ] || fail "sl-profprog not built"

sl_agent_start "tasks:
  max_concurrent_tasks: 4
  max_duration: 60s
  max_hz: 1000000"
CAPS=$(curl -sf "$SL_API/api/v1/capabilities") || fail "GET /api/v1/capabilities"
note "capabilities: $(printf '%s' "$CAPS" | jq -c '[.task_types[] | {type, supported, reason, event}], .limits')"
assert_eq "max_concurrent_tasks" 4 "$(printf '%s' "$CAPS" | jq .limits.max_concurrent_tasks)"
for t in profile_on_cpu profile_off_cpu trace_syscall_errors; do
	assert_eq "$t supported" true "$(printf '%s' "$CAPS" | jq --arg t "$t" '.task_types[] | select(.type == $t) | .supported')"
done

"$SL_BUILD/helpers/sl-profprog" spin 60 >/dev/null &
SPID=$!
sl_on_exit "kill $SPID"
sleep 0.2
BASE=$(bpf_fds "$SL_AGENT_PID")
note "agent BPF fds (progs maps links perf) before tasks: $BASE"

# five at once (background curls), each 8 s
cpids=()
for i in 1 2 3 4 5; do
	( curl -s -m 10 -o "$SL_TMP/r$i.body" -w '%{http_code} %{time_total}\n' -XPOST "$SL_API/api/v1/tasks" \
		-d "{\"type\":\"profile_on_cpu\",\"target\":{\"pid\":$SPID},\"duration_s\":8}" >"$SL_TMP/r$i.code" ) &
	cpids+=($!)
done
wait "${cpids[@]}"
codes="" refused=0 created=()
for i in 1 2 3 4 5; do
	read -r code secs <"$SL_TMP/r$i.code"
	codes="$codes $code"
	if [ "$code" = 429 ]; then
		refused=$((refused + 1))
		assert_eq "refusal code" RESOURCE_EXHAUSTED "$(jq -r .error.code "$SL_TMP/r$i.body")"
		note "refused in $secs s: $(jq -c . "$SL_TMP/r$i.body")"
		awk -v s="$secs" 'BEGIN { exit !(s < 0.5) }' || fail "the refusal took $secs s (must be at once)"
	elif [ "$code" = 201 ]; then
		created+=("$(jq -r .id "$SL_TMP/r$i.body")")
	fi
done
note "status codes:$codes"
assert_eq "refused" 1 "$refused"
assert_eq "created" 4 "${#created[@]}"
DURING=$(bpf_fds "$SL_AGENT_PID")
note "agent BPF fds with 4 tasks: $DURING"
# a sixth while four run: refused too
out=$(task_post "{\"type\":\"profile_off_cpu\",\"target\":{\"pid\":$SPID},\"duration_s\":1}")
assert_eq "sixth task" 429 "${out%% *}"

# DELETE one running task: stops, tears down, forgets
task_wait_running "${created[0]}"
code=$(curl -s -o "$SL_TMP/del.body" -w '%{http_code}' -XDELETE "$SL_API/api/v1/tasks/${created[0]}")
assert_eq "DELETE running task" 200 "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$SL_API/api/v1/tasks/${created[0]}")
assert_eq "GET deleted task" 404 "$code"
# result of a running task: 409
code=$(curl -s -o "$SL_TMP/res.body" -w '%{http_code}' "$SL_API/api/v1/tasks/${created[1]}/result?format=folded")
assert_eq "result while running" 409 "$code"
# a slot is free again: a task on a pid that does not exist fails alone
BAD=$(task_create '{"type":"profile_off_cpu","target":{"pid":999999},"duration_s":2}')
R=$(task_wait "$BAD" 20)
assert_eq "bad target task" failed "$(printf '%s' "$R" | jq -r .status)"
note "failed alone: $(printf '%s' "$R" | jq -r .reason)"
# a hook that fails: perf_event_open refuses a frequency above
# kernel.perf_event_max_sample_rate
MAXR=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
HOOK=$(task_create "{\"type\":\"profile_on_cpu\",\"target\":{\"pid\":$SPID},\"duration_s\":2,\"hz\":$((MAXR * 2 > 1000000 ? 1000000 : MAXR * 2))}")
R=$(task_wait "$HOOK" 20)
assert_eq "task with a failing hook" failed "$(printf '%s' "$R" | jq -r .status)"
note "hook failure: $(printf '%s' "$R" | jq -r .reason)"
printf '%s' "$R" | jq -r .reason | grep -q perf_event_open || fail "reason does not name the hook: $R"
for id in "${created[1]}" "${created[2]}" "${created[3]}"; do
	[ "$(task_get "$id" | jq -r .status)" = running ] || fail "task $id stopped when another task failed: $(task_get "$id")"
done

# bad requests
for body in '{"type":"nope","target":{"pid":1}}' '{"type":"profile_on_cpu"}' \
	'{"type":"profile_on_cpu","target":{"pid":1},"duration_s":61}' \
	'{"type":"profile_on_cpu","target":{"pid":1},"hz":0}' \
	'{"type":"profile_off_cpu","target":{"pid":1},"hz":99}' \
	'{"type":"profile_on_cpu","target":{"pid":1,"container":"abcd"}}' \
	'{"type":"profile_on_cpu","target":{"pid":1},"bogus":1}' 'not json'; do
	out=$(task_post "$body")
	[ "${out%% *}" = 400 ] || fail "POST $body -> $out (want 400)"
	note "400 for $body: $(printf '%s' "${out#* }" | jq -r .error.message)"
done
code=$(curl -s -o /dev/null -w '%{http_code}' -XPUT "$SL_API/api/v1/tasks")
assert_eq "PUT /api/v1/tasks" 405 "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$SL_API/api/v1/tasks/no-such-task/result")
assert_eq "result of unknown task" 404 "$code"

# the three left finish with results; then the fds are back to the baseline
for id in "${created[1]}" "${created[2]}" "${created[3]}"; do
	R=$(task_wait "$id" 30)
	assert_eq "task $id" done "$(printf '%s' "$R" | jq -r .status)"
	[ "$(printf '%s' "$R" | jq .result.total_count)" -gt 0 ] || fail "task $id has no samples: $R"
done
code=$(curl -s -o /dev/null -w '%{http_code}' "$SL_API/api/v1/tasks/${created[1]}/result?format=svg")
assert_eq "svg result" 200 "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$SL_API/api/v1/tasks/${created[1]}/result?format=xml")
assert_eq "unknown format" 400 "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$SL_API/api/v1/tasks/$BAD/result")
assert_eq "result of a failed task" 409 "$code"
AFTER=$(bpf_fds "$SL_AGENT_PID")
assert_eq "agent BPF fds after the tasks (progs maps links perf)" "$BASE" "$AFTER"
sl_cli tasks >"$SL_LOGDIR/tasks.txt" || fail "sandlens tasks"
cat "$SL_LOGDIR/tasks.txt"
[ "$(grep -c '^t-' "$SL_LOGDIR/tasks.txt")" -ge 4 ] || fail "sandlens tasks lists fewer than 4 tasks"
curl -sf "$SL_API/healthz" >/dev/null || fail "agent unhealthy after the tasks"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
