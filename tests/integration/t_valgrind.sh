#!/bin/bash
# sandlensd under valgrind memcheck: start, real exec/exit/signal events,
# every API route, SIGTERM. Zero errors (tests/valgrind.supp holds only the
# bpf(2) syscall-parameter false positives) and no leaked heap blocks.
# Start-up alone took 249 s on a loaded 2-CPU host (libbpf's BTF work under
# valgrind): more than the runner's default 600 s for the whole test.
# sl-timeout: 1200
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_require_cmd valgrind
case "$SL_BUILD" in *-san) skip "valgrind cannot run an ASan-instrumented sandlensd (ASan covers this build)" ;; esac

# Continuous profiling off here: under valgrind every 10 s window symbolizes the
# whole host (kallsyms, every sampled binary), which took the run past its
# timeout on a loaded machine; its code runs under ASan in t_cprof_windows,
# t_auto_capture and test_cprof (valgrind covers the agent's core paths).
sl_write_config "profiling:
  continuous:
    enabled: false"
VG_LOG="$SL_LOGDIR/valgrind.log"
valgrind --leak-check=full --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible \
	--error-exitcode=99 --suppressions="$SL_ROOT/tests/valgrind.supp" --log-file="$VG_LOG" \
	"$SL_BUILD/sandlensd" --config "$SL_CONFIG" >"$SL_LOGDIR/agent.stdout" 2>"$SL_LOGDIR/agent.stderr" &
SL_AGENT_PID=$!
n=0
until curl -sf -m 2 "$SL_API/healthz" >/dev/null 2>&1; do
	kill -0 "$SL_AGENT_PID" 2>/dev/null || { cat "$VG_LOG"; fail "sandlensd under valgrind exited during start-up"; }
	[ $n -lt 3000 ] || fail "sandlensd under valgrind did not answer within 300 s"
	sleep 0.1
	n=$((n + 1))
done
note "sandlensd under valgrind up after $((n / 10)) s"

/bin/true
sh -c 'exit 3' &
exit3_pid=$!
wait $exit3_pid
(sh -c 'kill -SEGV $$') 2>/dev/null
# the newest 200 exits (newest first): the exit just made is among them; a larger
# page is slow to render under valgrind and each slow poll stretched the wait
sl_wait_events "type=exit&limit=200" ".[] | select(.pid == $exit3_pid and .exit_code == 3) | .pid" 120 >/dev/null ||
	fail "exit event did not arrive under valgrind"
for p in /healthz /metrics /api/v1/containers "/api/v1/events?limit=5" "/api/v1/events?type=signal"; do
	curl -sf -m 30 "$SL_API$p" >/dev/null || fail "GET $p failed"
done
curl -s -m 30 "$SL_API/api/v1/events?type=nope" | grep -q INVALID_ARGUMENT || fail "bad request not answered with a 400 body"

kill -TERM "$SL_AGENT_PID"
wait "$SL_AGENT_PID"
rc=$?
SL_AGENT_PID=
grep -E "ERROR SUMMARY|definitely lost|indirectly lost|possibly lost|in use at exit" "$VG_LOG" | sed 's/^/# /'
[ $rc -eq 0 ] || { grep -B2 -A30 "^==[0-9]*== [A-Z][a-z]" "$VG_LOG" | head -120; fail "sandlensd under valgrind exited $rc (99 = valgrind errors)"; }
grep -q "ERROR SUMMARY: 0 errors" "$VG_LOG" || fail "valgrind reported errors"
echo "PASS"
