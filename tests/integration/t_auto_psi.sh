#!/bin/bash
# AutoTracing PSI inputs (issue 15 items 1 and 5; docs/AUTO.md "PSI triggers"):
#  1. the trigger path: a container cgroup on the v2 hierarchy (named like
#     docker's, /docker/<64 hex>, attributed as a container) gets a PSI poll
#     trigger armed on its cpu.pressure (widened to 2 s when the agent lacks
#     CAP_SYS_RESOURCE, and the status says so); three CPU spinners moved
#     into it (more runnable tasks than CPUs: cpu "some" stall) make the
#     kernel wake the agent, which fires a cpupsi capture whose reason's
#     source is "psi_trigger" (not the 1 s sampling) and counts the trigger
#     event in sandlens_auto_psi_trigger_events_total;
#  2. the sampling fallback: a container that exists only in the v1
#     hierarchy (docker's cgroupfs driver on older hosts: no v2 directory, no
#     pressure file) is listed per container in GET /api/v1/auto with the
#     reason "no cgroup v2 directory: sampling", and the detector source
#     says "psi_trigger+sampling".
# SKIP only when the kernel lacks PSI (/proc/pressure/cpu absent, psi=0) or
# there is no cgroup v2 mount. Part 2 needs a v1 memory hierarchy (hybrid
# hosts); on pure v2 it is noted and left out.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_require_cmd jq
[ -r /proc/pressure/cpu ] || skip "kernel without PSI (/proc/pressure/cpu absent: CONFIG_PSI off or psi=0)"
V2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$V2" ] || skip "no cgroup v2 mount"
[ -e "$V2/cpu.pressure" ] || skip "cgroup v2 at $V2 has no cpu.pressure (kernel without cgroup PSI)"
V1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/self/mounts)

hex64() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }
P=$(hex64) # v2 container: the trigger path
Q=$(hex64) # v1-only container: sampling
PDIR=$V2/docker/$P
QDIR=${V1:+$V1/docker/$Q}
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	local n=0
	while [ $n -lt 50 ] && ! rmdir "$PDIR" 2>/dev/null && [ -d "$PDIR" ]; do sleep 0.1; n=$((n + 1)); done
	[ -n "$QDIR" ] && rmdir "$QDIR" 2>/dev/null
	rmdir "$V2/docker" 2>/dev/null
	[ -n "$V1" ] && rmdir "$V1/docker" 2>/dev/null
	true
}
sl_on_exit cleanup
mkdir -p "$PDIR" || fail "mkdir $PDIR"
[ -e "$PDIR/cpu.pressure" ] || skip "$PDIR has no cpu.pressure"
# an idle task in each, so the containers exist before the spike
sh -c "echo \$\$ >$PDIR/cgroup.procs && exec sleep 60" &
PIDS+=($!)
if [ -n "$QDIR" ]; then
	mkdir -p "$QDIR" || fail "mkdir $QDIR"
	sh -c "echo \$\$ >$QDIR/cgroup.procs && exec sleep 60" &
	PIDS+=($!)
else
	note "no v1 memory hierarchy (pure v2 host): the v1-only sampling case is left out"
fi

sl_agent_start "stats:
  interval: 1s
auto:
  enabled: true
  containers: \"${P:0:16},${Q:0:16}\"
  cooldown: 10m
  profile_duration: 2s
  cpu:
    enabled: false
  throttle:
    enabled: false
  runqueue:
    enabled: false
  dstate:
    enabled: false
  memgrowth:
    enabled: false
  iolat:
    enabled: false
  cpupsi:
    threshold: 0.15
  mempsi:
    threshold: 0.15"

# wait until the agent watches both and has armed the trigger on P
det() { printf '%s' "$ST" | jq -c --arg d "$1" '.detectors[] | select(.name == $d)'; }
n=0
while :; do
	ST=$(curl -sf -m 5 "$SL_API/api/v1/auto")
	printf '%s\n' "$ST" >"$SL_LOGDIR/auto-status.json"
	C=$(det cpupsi)
	ok=1
	printf '%s' "$C" | jq -e '.containers_psi_trigger >= 1' >/dev/null || ok=0
	if [ -n "$QDIR" ]; then
		printf '%s' "$C" | jq -e --arg q "$Q" '.sampling_reasons | has($q)' >/dev/null || ok=0
	fi
	[ $ok = 1 ] && break
	n=$((n + 1))
	[ $n -lt 100 ] || fail "trigger not armed / containers not watched within 20 s: $C"
	sleep 0.2
done
note "cpupsi: $(printf '%s' "$C" | jq -c '{source, trigger, trigger_note, containers_psi_trigger, containers_sampling}')"
printf '%s' "$C" | jq -e --arg p "$P" '.sampling_reasons | has($p) | not' >/dev/null ||
	fail "the v2 container samples: $C"
# the trigger the kernel took: the configured one, or widened to 2 s with a note
TRIG=$(printf '%s' "$C" | jq -r .trigger)
case "$TRIG" in
"some 150000 1000000") ;;
"some 300000 2000000")
	printf '%s' "$C" | jq -e '.trigger_note | test("CAP_SYS_RESOURCE")' >/dev/null || fail "widened without a note: $C" ;;
*) fail "unexpected trigger '$TRIG'" ;;
esac
for d in cpupsi mempsi; do
	X=$(det $d)
	if [ -n "$QDIR" ]; then
		printf '%s' "$X" | jq -e --arg q "$Q" '.sampling_reasons[$q] == "no cgroup v2 directory: sampling"' >/dev/null ||
			fail "$d: v1-only container's reason: $X"
		printf '%s' "$X" | jq -e '.source == "psi_trigger+sampling" and .containers_sampling >= 1' >/dev/null ||
			fail "$d: source: $X"
	fi
done
EV0=$(sl_metric sandlens_auto_psi_trigger_events_total)

# the spike: three spinners join P (more runnable tasks than this host's CPUs)
for i in 1 2 3; do
	sh -c "echo \$\$ >$PDIR/cgroup.procs && exec sh -c 'while :; do :; done'" &
	PIDS+=($!)
done
caps() { curl -sf -m 5 "$SL_API/api/v1/captures?container=$1&detector=$2"; }
n=0
while :; do
	CAP=$(caps "$P" cpupsi)
	[ "$(printf '%s' "$CAP" | jq '.captures | length')" -ge 1 ] 2>/dev/null && break
	n=$((n + 1))
	[ $n -lt 60 ] || fail "no cpupsi capture of the spinning container within 15 s: $(det cpupsi)"
	sleep 0.25
done
printf '%s\n' "$CAP" >"$SL_LOGDIR/captures.json"
note "capture: $(printf '%s' "$CAP" | jq -c '.captures[0] | {id, detector, reason}')"
assert_eq "capture source" psi_trigger "$(printf '%s' "$CAP" | jq -r '.captures[0].reason.source')"
# the value is the trigger's lower bound (its threshold); the reading the file's some avg10 as a share
printf '%s' "$CAP" | jq -e '.captures[0].reason | (.reading | type == "number" and . >= 0 and . <= 1) and .value == .threshold and (.value_is | test("lower bound"))' >/dev/null ||
	fail "psi_trigger reason: $(printf '%s' "$CAP" | jq -c '.captures[0].reason')"
EV1=$(sl_metric sandlens_auto_psi_trigger_events_total)
[ "$EV1" -gt "$EV0" ] || fail "sandlens_auto_psi_trigger_events_total did not grow ($EV0 -> $EV1)"
# the v1-only idle container fired nothing
if [ -n "$QDIR" ]; then
	assert_eq "captures of the idle v1-only container" 0 "$(caps "$Q" cpupsi | jq '.captures | length')"
fi
for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
PIDS=()
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
