#!/bin/bash
# net module: a network namespace's inode number is given to the next one
# once it is gone (the kernel's proc inode numbers are the lowest free
# ones), so per-netns counters must follow the netns, not the number
# (docs/NET.md "Attribution"). Three container cgroups A, X, Y (kubepods
# layout, every mounted hierarchy), one after the other: a shell in the
# container makes a netns (unshare -n) with an nftables input policy drop,
# sends N UDP packets to itself (3, 3, 7), and exits; the next one starts
# once the previous netns is gone. Checks:
#   - the netns inode numbers were reused (else the test cannot say
#     anything: SKIP);
#   - sandlens_net_drops_total{reason="NETFILTER_DROP"} of each container
#     equals what its own netns dropped (3, 3, 7), none added to a dead
#     namespace's container;
#   - the net_drop events carry each container's id.
# sl-san: once (user-space attribution logic; no new BPF)
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_require_cmd unshare nft ip

mapfile -t HIER < <(sl_cgroup_hierarchies)
[ ${#HIER[@]} -gt 0 ] || skip "no cgroup hierarchies"
POD=/kubepods/burstable/pod$(cat /proc/sys/kernel/random/uuid)
IDS=() CGS=()
for n in a b c; do
	id=$(printf 'be5e%04x%056x' $$ "$(printf '%d' "'$n")")
	IDS+=("$id")
	CGS+=("$POD/$id")
done
cleanup_cg() {
	local h c
	for h in "${HIER[@]}"; do
		for c in "${CGS[@]}"; do rmdir "$h$c" 2>/dev/null; done
		rmdir "$h$POD" 2>/dev/null
	done
}
sl_on_exit cleanup_cg
for c in "${CGS[@]}"; do
	for h in "${HIER[@]}"; do mkdir -p "$h$c" || fail "mkdir $h$c"; done
done

sl_agent_start "net:
  netns_files: true"

# $1 cgroup, $2 packets: a netns that drops everything it receives; prints
# the netns inode number; returns once the netns is gone
drop_in() {
	local cg=$1 n=$2 h
	(
		for h in "${HIER[@]}"; do echo $BASHPID >"$h$cg/cgroup.procs"; done
		exec unshare -n bash -c '
			ip link set lo up
			nft add table inet sl_reuse
			nft "add chain inet sl_reuse in { type filter hook input priority 0; policy drop; }"
			stat -L -c %i /proc/self/ns/net
			for ((i = 0; i < '"$n"'; i++)); do echo x >/dev/udp/127.0.0.1/9; done
			sleep 1.5'
	)
}
wait_gone() { # $1 inode: until no task is in it and the kernel freed it (proc inum released)
	local i
	for ((i = 0; i < 50; i++)); do
		find /proc/[0-9]*/ns/net -maxdepth 0 -printf '%l\n' 2>/dev/null | grep -q "net:\[$1\]" || break
		sleep 0.1
	done
	sleep 2 # cleanup_net runs from a workqueue
}
I0=$(drop_in "${CGS[0]}" 3) || fail "netns A"
wait_gone "$I0"
I1=$(drop_in "${CGS[1]}" 3) || fail "netns X"
wait_gone "$I1"
I2=$(drop_in "${CGS[2]}" 7) || fail "netns Y"
note "netns inodes: A $I0, X $I1, Y $I2"
[ "$I0" = "$I1" ] || [ "$I1" = "$I2" ] || skip "the kernel did not reuse a netns inode number here ($I0 $I1 $I2): nothing to check"

drops() { # $1 container id: NETFILTER_DROP drops in /metrics
	curl -sf "$SL_API/metrics" | awk -v id="container_id=\"$1\"" '/^sandlens_net_drops_total\{/ && index($0, id) && /reason="NETFILTER_DROP"/ {s += $NF} END {print s + 0}'
}
want=(3 3 7)
n=0
while :; do
	got=("$(drops "${IDS[0]}")" "$(drops "${IDS[1]}")" "$(drops "${IDS[2]}")")
	[ "${got[*]}" = "${want[*]}" ] && break
	[ $n -lt 40 ] || fail "NETFILTER_DROP per container: got A ${got[0]} X ${got[1]} Y ${got[2]}, want 3 3 7 (netns inodes $I0 $I1 $I2)"
	sleep 0.25
	n=$((n + 1))
done
echo "ok - drops per container follow the netns, not its inode number: ${got[*]}"

sl_cli events --type net_drop --json --limit 500 >"$SL_LOGDIR/drops.json" 2>"$SL_TMP/ev.err" ||
	fail "sandlens events --type net_drop: $(cat "$SL_TMP/ev.err")"
for i in 0 1 2; do
	c=$(jq -s '[.[] | if type == "array" then .[] else . end | select(.reason == "NETFILTER_DROP" and .container_id == "'"${IDS[$i]}"'")] | length' "$SL_LOGDIR/drops.json")
	[ "${c:-0}" -ge 1 ] || fail "no NETFILTER_DROP net_drop event of container ${IDS[$i]}; events by container: $(jq -sc '[.[] | if type == "array" then .[] else . end | {c: .container_id, r: .reason}] | group_by(.c) | map({(.[0].c): length}) | add' "$SL_LOGDIR/drops.json")"
done
echo "ok - net_drop events carry each container's id"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
