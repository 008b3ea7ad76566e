#!/bin/bash
# The guest-agent source against a live Kata micro-VM, when one runs on this
# host: for each running sandbox in /run/vc/sbs, `sandlens stats --sandbox
# ID` answers source guest_agent with an epoch and the guest's figures (cpu
# usage does not go down between two reads within one epoch). SKIPs without
# a running Kata sandbox or without /dev/kvm: the development and CI hosts
# have no nested virtualization, so no micro-VM can run there
# (docs/STATS.md "Guest-agent source"). t_stats_guest.sh covers the same
# path against a fake agent speaking the real protocol.
# sl-san: once
source "$(dirname "$0")/../lib/common.sh"
sl_init
[ -e /dev/kvm ] || skip "no /dev/kvm: no micro-VM can run here (no nested virtualization)"
SBS=()
for f in /run/vc/sbs/*/persist.json; do
	[ -f "$f" ] || continue
	[ "$(jq -r .State "$f" 2>/dev/null)" = running ] && SBS+=("$(basename "$(dirname "$f")")")
done
[ ${#SBS[@]} -gt 0 ] || skip "no running Kata sandbox in /run/vc/sbs (a live guest is required)"
sl_require_agent_env
sl_agent_start "stats:
  interval: 1s"
for sb in "${SBS[@]}"; do
	A=$(sl_cli stats --sandbox "$sb" --json) || fail "sandlens stats --sandbox $sb: $A"
	assert_eq "$sb source" guest_agent "$(jq -r .source <<<"$A")"
	B=$(sl_cli stats --sandbox "$sb" --json) || fail "second read of $sb"
	if [ "$(jq -r .epoch.id <<<"$A")" = "$(jq -r .epoch.id <<<"$B")" ]; then
		[ "$(jq -r .cpu_usage_usec <<<"$B")" -ge "$(jq -r .cpu_usage_usec <<<"$A")" ] ||
			fail "$sb: cpu went down within one epoch"
	fi
	note "$sb: $(jq -c '{epoch: .epoch.id, cpu: .cpu_usage_usec, ws: .memory_working_set_bytes}' <<<"$B")"
done
echo PASS
