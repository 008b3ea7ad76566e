#!/bin/bash
# The installed agent as the systemd unit runs it: `make install
# DESTDIR=<tmp>`, the build tree hidden (a tmpfs over the project in a
# private mount namespace: nothing but the installed files is used), uid and
# gid 65534, exactly the unit's AmbientCapabilities as inheritable + ambient
# (setpriv), NOTIFY_SOCKET at a test datagram listener. Checks: READY=1
# arrives only once /healthz answers, every module running (proc may be
# degraded for its optional kprobe), the capabilities of the process are the
# unit's, a profile task of a root process gets symbolized kernel frames
# (CAP_SYSLOG) and user frames (CAP_SYS_PTRACE), trace_syscall_errors is
# supported (tracefs through CAP_DAC_READ_SEARCH). SIGHUP with log_level
# debug: RELOADING=1 with MONOTONIC_USEC then READY=1, "log_level applied",
# debug lines afterwards, still serving; SIGHUP with a broken file: the key
# and reason logged, still running with the old config; SIGTERM: STOPPING=1,
# exit 0.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_require_cmd make setpriv unshare python3 capsh
D="$SL_TMP/root"
make -s -C "$SL_ROOT" BUILD_DIR="$SL_BUILD" install DESTDIR="$D" >"$SL_LOGDIR/install.log" 2>&1 || fail "make install failed"
U="$D/usr/local/lib/systemd/system/sandlensd.service"
caps=$(sed -n 's/^AmbientCapabilities=//p' "$U")
[ -n "$caps" ] || fail "no AmbientCapabilities in the unit"
setcaps=$(for c in $caps; do c=${c#CAP_}; printf '+%s,' "${c,,}"; done)
setcaps=${setcaps%,}
note "unit capabilities: $caps -> setpriv $setcaps"
# this host may lack one (a container without CAP_SYSLOG): a skip, not a pass
for c in $caps; do
	capsh --has-p="${c,,}" 2>/dev/null || skip "this test process lacks $c, which the unit grants"
done

W="$SL_TMP/w"   # the agent's own tree: /run/sandlens and /var/lib/sandlens stand-ins
mkdir -p "$W/run" "$W/state"
chown 65534:65534 "$W/run" "$W/state"
chmod 0755 "$W/run"; chmod 0700 "$W/state"
PORT=$(sl_free_port)
CONF="$W/sandlensd.yaml"
write_conf() { # LOG_LEVEL [extra]
	cat >"$CONF" <<EOC
log_level: $1
store:
  path: $W/state/events.db
api:
  listen: "127.0.0.1:$PORT"
  unix_socket: $W/run/api.sock
  token_file: $W/run/api.token
pressure:
  enabled: false
${2:-}
EOC
	cp "$CONF" "$SL_LOGDIR/sandlensd.yaml.$1"
}
write_conf info
chmod 644 "$CONF"

N="$SL_TMP/notify.sock" NOUT="$SL_LOGDIR/notify.txt"
python3 "$SL_ROOT/tests/lib/sl_notify_listen.py" "$N" "$NOUT" &
LPID=$!
trap 'kill $LPID 2>/dev/null' EXIT
for _ in $(seq 50); do grep -q LISTENING "$NOUT" 2>/dev/null && break; sleep 0.1; done

ERR="$SL_LOGDIR/agent.stderr"
NOTIFY_SOCKET="$N" unshare -m --propagation private sh -c '
	mount -t tmpfs -o ro,size=1m none "$1" || exit 90
	shift
	exec "$@"' sh "$SL_ROOT" \
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps="-all,$setcaps" --ambient-caps="-all,$setcaps" \
	"$D/usr/local/sbin/sandlensd" --config "$CONF" >"$SL_LOGDIR/agent.stdout" 2>"$ERR" &
SL_AGENT_PID=$!
API="http://127.0.0.1:$PORT"
up=0
for _ in $(seq 300); do
	kill -0 "$SL_AGENT_PID" 2>/dev/null || { wait "$SL_AGENT_PID"; fail "the installed agent exited with $? at start; $(tail -5 "$ERR")"; }
	curl -sf -m 2 "$API/healthz" >"$SL_LOGDIR/healthz.json" 2>/dev/null && { up=1; break; }
	sleep 0.1
done
[ $up = 1 ] || fail "no /healthz within 30 s"
for _ in $(seq 50); do grep -q '^READY=1' "$NOUT" && break; sleep 0.1; done
grep -q '^READY=1|STATUS=running$' "$NOUT" || fail "no READY=1 on NOTIFY_SOCKET: $(cat "$NOUT")"
ready_line=$(grep -n 'ready: api' "$ERR" | head -1 | cut -d: -f1)
[ -n "$ready_line" ] || fail "no 'ready' log line"
echo "ok - READY=1 received; the agent is up as uid 65534 from the installed files only"

st=$(grep -E '^(Uid|Gid|CapEff|CapAmb):' "/proc/$SL_AGENT_PID/status" | tr -s '\t ' ' ')
note "$st"
grep -q '^Uid: 65534 65534 65534 65534' <<<"$st" || fail "not running as 65534: $st"
eff=$(awk '/^CapEff:/ {print $2}' "/proc/$SL_AGENT_PID/status")
assert_eq "effective capabilities = the unit's" "$(capsh --decode="$eff" | sed 's/.*=//' | tr ',' '\n' | sort | tr '\n' ' ')" \
	"$(for c in $caps; do echo "${c,,}"; done | sort | tr '\n' ' ')"
# the start-up line about capabilities agrees with docs/DEPLOY.md's five
grep -q 'not running as root (uid 65534): CAP_BPF CAP_PERFMON CAP_DAC_READ_SEARCH CAP_SYS_PTRACE CAP_SYSLOG are effective' "$ERR" ||
	fail "no capability line naming the five of docs/DEPLOY.md: $(grep 'not running as root' "$ERR")"
grep -q 'and without CAP_' "$ERR" && fail "a capability reported missing: $(grep 'and without' "$ERR")"
jq -e '.modules | length > 0' "$SL_LOGDIR/healthz.json" >/dev/null || fail "no modules in /healthz"
bad=$(jq -r '.modules[] | select(.state != "running" and .state != "degraded") | "\(.name)=\(.state)"' "$SL_LOGDIR/healthz.json")
[ -z "$bad" ] || fail "modules not running as non-root: $bad"
deg=$(jq -r '.modules[] | .hooks[]? | select(.state == "failed") | "\(.name): \(.reason)"' "$SL_LOGDIR/healthz.json")
[ -z "$deg" ] || fail "hooks failed as non-root: $deg"
echo "ok - every module running, no hook failed: $(jq -c '[.modules[] | {(.name): .state}] | add' "$SL_LOGDIR/healthz.json")"

S=(curl -s -m 10 --unix-socket "$W/run/api.sock") # root's peer uid: admin
assert_eq "trace_syscall_errors supported (tracefs via CAP_DAC_READ_SEARCH)" true \
	"$("${S[@]}" http://x/api/v1/capabilities | jq -r '.task_types[] | select(.type == "trace_syscall_errors") | .supported')"
sh -c 'while :; do sleep 0.01; done' &
SPIN=$!
id=$("${S[@]}" -XPOST -d "{\"type\":\"profile_off_cpu\",\"target\":{\"pid\":$SPIN},\"duration_s\":2}" http://x/api/v1/tasks | jq -r .id)
[ -n "$id" ] && [ "$id" != null ] || fail "profile task not accepted"
for _ in $(seq 100); do
	s=$("${S[@]}" "http://x/api/v1/tasks/$id" | jq -r .status)
	[ "$s" = done ] || [ "$s" = failed ] && break
	sleep 0.2
done
kill $SPIN
assert_eq "profile task status" done "$s"
"${S[@]}" "http://x/api/v1/tasks/$id/result?format=folded" >"$SL_LOGDIR/profile.folded"
grep -q 'schedule' "$SL_LOGDIR/profile.folded" || fail "no symbolized kernel frame (schedule) in the off-CPU profile: $(head -3 "$SL_LOGDIR/profile.folded")"
grep -qE ';(wait4|__vfork|[a-z_]*waitpid|__libc_[a-z_]+|[a-z_]*nanosleep)[;]' "$SL_LOGDIR/profile.folded" ||
	fail "no symbolized libc frame of the root-owned process: $(head -3 "$SL_LOGDIR/profile.folded")"
echo "ok - a profile of a root process has kernel (CAP_SYSLOG) and libc (CAP_SYS_PTRACE) symbols"

# SIGHUP: log_level debug applied, agent keeps serving
before=$(wc -l <"$NOUT")
write_conf debug
kill -HUP "$SL_AGENT_PID"
for _ in $(seq 50); do grep -q 'reload: SIGHUP: .* reloaded' "$ERR" && break; sleep 0.1; done
grep -q 'reload: log_level applied (debug)' "$ERR" || fail "log_level not applied: $(grep reload "$ERR")"
tail -n +$((before + 1)) "$NOUT" >"$SL_TMP/after_hup"
grep -qE '^RELOADING=1\|MONOTONIC_USEC=[0-9]+$' "$SL_TMP/after_hup" || fail "no RELOADING=1 with MONOTONIC_USEC: $(cat "$SL_TMP/after_hup")"
[ "$(sed -n 2p "$SL_TMP/after_hup")" = 'READY=1|STATUS=running' ] || fail "no READY=1 after RELOADING=1: $(cat "$SL_TMP/after_hup")"
usec=$(sed -n 's/^RELOADING=1|MONOTONIC_USEC=//p' "$SL_TMP/after_hup")
now=$(python3 -c 'import time; print(int(time.monotonic() * 1e6))') # CLOCK_MONOTONIC
[ "$usec" -le "$now" ] && [ $((now - usec)) -lt 10000000 ] || fail "MONOTONIC_USEC $usec is not CLOCK_MONOTONIC of the reload (now $now us)"
curl -sf -m 5 "$API/metrics" >/dev/null || fail "no /metrics after SIGHUP"
sleep 1.5
grep -q ' DEBUG ' <(sed -n "/log_level applied/,\$p" "$ERR") || fail "no DEBUG line after log_level debug was applied"
kill -0 "$SL_AGENT_PID" || fail "the agent died on SIGHUP"
echo "ok - SIGHUP applied log_level debug, RELOADING=1/READY=1 sent, still serving"

# SIGHUP with a broken file: the key logged, the old configuration kept
printf 'log_level: debug\nstore:\n  path: %s/state/events.db\n  max_rows: lots\napi:\n  listen: "127.0.0.1:%s"\n  unix_socket: %s/run/api.sock\n  token_file: %s/run/api.token\n' \
	"$W" "$PORT" "$W" "$W" >"$CONF"
kill -HUP "$SL_AGENT_PID"
for _ in $(seq 50); do grep -q 'invalid configuration' "$ERR" && break; sleep 0.1; done
grep -q "reload: SIGHUP: invalid configuration $CONF: store.max_rows: .*keeping the running configuration" "$ERR" ||
	fail "the broken key was not logged: $(grep -i 'reload' "$ERR" | tail -3)"
sleep 1
kill -0 "$SL_AGENT_PID" || fail "the agent died on a SIGHUP with a broken file"
curl -sf -m 5 "$API/healthz" >/dev/null || fail "no /healthz after a broken reload"
echo "ok - SIGHUP with a broken store.max_rows: logged with the key, still running"

kill -TERM "$SL_AGENT_PID"
wait "$SL_AGENT_PID"
rc=$?
SL_AGENT_PID=
assert_eq "exit status on SIGTERM" 0 "$rc"
for _ in $(seq 20); do grep -q '^STOPPING=1$' "$NOUT" && break; sleep 0.1; done
grep -q '^STOPPING=1$' "$NOUT" || fail "no STOPPING=1: $(cat "$NOUT")"
echo "ok - STOPPING=1 and exit 0 on SIGTERM"
echo "PASS"
