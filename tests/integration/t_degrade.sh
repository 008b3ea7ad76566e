#!/bin/bash
# Optional hooks degrade cleanly (P2): kprobe/oom_kill_process is probed at
# start. Without kprobe support (the dev/CI kernels) the proc module runs,
# /healthz reports the hook "degraded" with the reason, `sandlens status`
# shows it, the self-metrics still flow; with kprobes it is "attached".
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_agent_start

h=$(sl_get /healthz)
echo "# healthz: $h"
hook=$(jq -c '.modules[] | select(.name == "proc") | .hooks[] | select(.name == "kprobe/oom_kill_process")' <<<"$h")
[ -n "$hook" ] || fail "kprobe/oom_kill_process missing from /healthz"
if [ -e /sys/bus/event_source/devices/kprobe/type ]; then
	assert_eq "kprobe hook state (kernel has kprobes)" attached "$(jq -r .state <<<"$hook")"
else
	assert_eq "kprobe hook state (kernel has no kprobes)" degraded "$(jq -r .state <<<"$hook")"
	jq -r .reason <<<"$hook" | grep -q "kprobe" || fail "degraded hook has no reason naming kprobes"
	assert_eq "proc module state" degraded "$(jq -r '.modules[] | select(.name == "proc") | .state' <<<"$h")"
	assert_eq "overall status (degraded is not failed)" ok "$(jq -r .status <<<"$h")"
	sl_cli status | grep -E "kprobe/oom_kill_process +degraded" >/dev/null || fail "sandlens status does not show the degraded hook"
fi
# the portable hooks are attached and working
for hk in tp_btf/sched_process_exec tp_btf/sched_process_exit tp_btf/signal_generate tp_btf/mark_victim; do
	assert_eq "$hk" attached "$(jq -r --arg h "$hk" '.modules[] | .hooks[] | select(.name == $h) | .state' <<<"$h")"
done
/bin/true
sl_wait_events "type=exec" '.[] | select(.comm == "true") | .pid' 20 >/dev/null || fail "no exec event while degraded"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
