#!/bin/bash
# Attribution of a short-lived container's scheduler figures: a container
# that lives ~0.3 s on a contended CPU and is gone (runc run deletes its
# cgroup and its state on exit) before the agent's next tick must still get
# its own series in GET /api/v1/sched, not be counted to the host. Both
# identities: a kubepods-style path (attribution cache, rmdir grace) and a
# plain runc cgroupsPath (runc state index, deleted-container grace).
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/lib_sched.sh"
sl_init
sl_require_agent_env
ct_require
sl_require_cmd taskset
[ -d /sys/fs/cgroup/cpuset ] || [ -f /sys/fs/cgroup/cpuset.cpus.effective ] || [ -f /sys/fs/cgroup/unified/cgroup.controllers ] ||
	skip "no cpuset controller to pin the containers"

sl_agent_start "attribution:
  runc_root: $CT_RUNC_ROOT
sched:
  watch: all"

# a host process competes on CPU 0 for the whole test
taskset -c 0 "$SL_BUILD/helpers/sl-testprog" spin 60 >/dev/null 2>&1 &
HOG=$!
sl_on_exit "kill $HOG 2>/dev/null"

for kind in kubepods plain; do
	if [ "$kind" = kubepods ]; then
		sched_ct "short-$kind" 0 "" -- /bin/sl-testprog spin 0.3
	else
		ct_create "short-$kind" plain -- /bin/sl-testprog spin 0.3
		jq '.linux.resources.cpu.cpus = "0"' "$CT_DIR/config.json" >"$CT_DIR/config.json.new" &&
			mv "$CT_DIR/config.json.new" "$CT_DIR/config.json" || fail "jq edit of config.json failed"
	fi
	ct_run 30 || fail "$kind container exited with an error"
	[ -d "/sys/fs/cgroup/unified$CT_CGPATH" ] && fail "$kind: the container's cgroup is still there"
	[ -e "$CT_RUNC_ROOT/$CT_ID" ] && fail "$kind: runc still lists the container"
	e=$(sched_wait "$CT_ID" ".total.waits > 0" 10)
	note "$kind $CT_ID: $(printf '%s' "$e" | jq -c '{container_id, runtime, host, total}')"
	assert_eq "$kind: series is the container's, not the host's" false "$(printf '%s' "$e" | jq -r .host)"
done
# the removed cgroups' queue is drained by user space after its read
n=0 gid=$(sched_map_id sched_gone)
[ -n "$gid" ] || fail "the agent has no sched_gone map (no map_id in its fdinfo?)"
until [ "$(bpftool -j map dump id "$gid" 2>/dev/null | jq 'length')" = 0 ]; do
	[ $n -lt 20 ] || fail "sched_gone not drained: $(bpftool -j map dump id "$gid" 2>&1 | head -c 300)"
	sleep 0.25
	n=$((n + 1))
done
echo "ok - sched_gone drained"
echo "PASS"
