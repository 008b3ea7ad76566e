#!/bin/bash
# pressure.cgroup: the agent moves itself into its own cgroup with hard
# limits at start (v2 cpu.max/memory.max, or the v1 cpu and memory
# hierarchies on hybrid hosts), reports it in /healthz, and at exit moves
# back and removes the directories. The values written are checked in
# tests/unit/test_pressure_cgroup.c against fake hierarchies; this is the
# real kernel. SKIPs when the test itself does not run at the root of those
# hierarchies: moving the agent would take it out of the cgroup (and the
# limits) its caller put it in.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
for l in $(cut -d: -f2,3 /proc/self/cgroup); do
	ctrl=${l%%:*} path=${l#*:}
	case ",$ctrl," in
	*,cpu,* | *,memory,* | ,,) [ "$path" = / ] || skip "this test runs in cgroup $path ($ctrl), not at the root" ;;
	esac
done
NAME="sandlens-test/pcg-$$"
sl_agent_start "pressure:
  cgroup:
    enabled: true
    name: $NAME
    cpu_limit: 0.5
    memory_limit: 1GiB"
CG=$(sl_get /healthz | jq -c .pressure.cgroup)
note "cgroup: $CG"
state=$(jq -r .state <<<"$CG")
case "$state" in
v1)
	assert_eq "cpu cgroup of the agent" "/$NAME" "$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' /proc/"$SL_AGENT_PID"/cgroup)"
	assert_eq "memory cgroup of the agent" "/$NAME" "$(awk -F: '$2 == "memory" {print $3}' /proc/"$SL_AGENT_PID"/cgroup)"
	assert_eq "cpu.cfs_quota_us" 50000 "$(cat "$(jq -r .path <<<"$CG")/cpu.cfs_quota_us")"
	assert_eq "memory.limit_in_bytes" $((1 << 30)) "$(cat "$(jq -r .memory_path <<<"$CG")/memory.limit_in_bytes")"
	;;
v2)
	assert_eq "cgroup of the agent" "/$NAME" "$(awk -F: '$1 == 0 {print $3}' /proc/"$SL_AGENT_PID"/cgroup)"
	assert_eq "cpu.max" "50000 100000" "$(cat "$(jq -r .path <<<"$CG")/cpu.max")"
	assert_eq "memory.max" $((1 << 30)) "$(cat "$(jq -r .path <<<"$CG")/memory.max")"
	;;
*) fail "own cgroup not entered: $CG" ;;
esac
DIRS=$(jq -r '.path, (.memory_path // empty)' <<<"$CG")
sl_agent_stop || fail "agent exit status $?"
for d in $DIRS; do
	[ ! -d "$d" ] || fail "$d left behind at exit"
done
echo "PASS"
