#!/bin/bash
# The statistics collector's kept cgroup descriptors (src/cgroup/cgfd.h,
# issue 13 item 4) on the real cgroupfs, with a budget smaller than the
# containers need, so that kept and open-per-read containers are both read:
#   1. 40 container cgroups (kubepods layout, every mounted hierarchy), each
#      with its own memory limit; sandlensd started with RLIMIT_NOFILE
#      1024:1024 (budget 512 descriptors: the log says so); every
#      container_spec_memory_limit_bytes equals its file, and the agent
#      holds fewer than 1,024 descriptors;
#   2. every limit changed in place: the next passes report the new values
#      (a kept descriptor's pread at offset 0 reads the current text);
#   3. 8 cgroups removed and re-created under the same paths with other
#      limits: the new values are reported, never the removed cgroups';
#   4. idle passes replay the hierarchy walk (cgwalk_cache.h), and a new
#      container cgroup is seen at the next pass, through a full walk.
# sl-san: once (the cache's paths run under ASan in test_cgfd and t_stats_spec)
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env

HIER=()
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	grep -qw memory /sys/fs/cgroup/cgroup.controllers || skip "cgroup v2 without the memory controller"
	HIER=(/sys/fs/cgroup)
	LIMF=memory.max
else
	for h in memory unified cpu cpuacct blkio pids; do
		[ -d "/sys/fs/cgroup/$h" ] && HIER+=("/sys/fs/cgroup/$h")
	done
	[ -d /sys/fs/cgroup/memory ] || skip "no v1 memory hierarchy"
	LIMF=memory.limit_in_bytes
fi
MEMH=${HIER[0]}
N=40
MIB=1048576
BASE=/kubepods/burstable/pod$(cat /proc/sys/kernel/random/uuid)
CGS=()
cleanup_cg() {
	local h c
	for h in "${HIER[@]}"; do
		for c in "${CGS[@]}"; do rmdir "$h$c" 2>/dev/null; done
		rmdir "$h$BASE" 2>/dev/null
	done
}
sl_on_exit cleanup_cg
mk() { # $1 cgroup, $2 limit in MiB
	local h
	for h in "${HIER[@]}"; do mkdir -p "$h$1" || fail "mkdir $h$1"; done
	[ "$MEMH" = /sys/fs/cgroup ] && echo "+memory" >"/sys/fs/cgroup$BASE/cgroup.subtree_control" 2>/dev/null
	echo $(($2 * MIB)) >"$MEMH$1/$LIMF" || fail "cannot set $MEMH$1/$LIMF"
}
if [ "$MEMH" = /sys/fs/cgroup ]; then
	mkdir -p /sys/fs/cgroup/kubepods/burstable
	echo "+memory" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	echo "+memory" >/sys/fs/cgroup/kubepods/cgroup.subtree_control 2>/dev/null
	echo "+memory" >/sys/fs/cgroup/kubepods/burstable/cgroup.subtree_control 2>/dev/null
fi
for ((i = 0; i < N; i++)); do
	CGS+=("$BASE/$(printf 'fdc0%060x' "$i")")
	mk "${CGS[$i]}" $((64 + i))
done

prlimit --pid $$ --nofile=1024:1024 || skip "prlimit cannot set RLIMIT_NOFILE"
sl_agent_start "stats:
  interval: 500ms"

# every container's limit equals want[i] (MiB) within 20 s
check_all() { # $1 what
	local n=0 bad i v
	while :; do
		curl -sf "$SL_API/metrics" >"$SL_TMP/metrics" || fail "GET /metrics"
		bad=""
		for ((i = 0; i < N; i++)); do
			v=$(awk -v id="id=\"${CGS[$i]}\"" '$1 ~ /^container_spec_memory_limit_bytes\{/ && index($1, id) {print $2; exit}' "$SL_TMP/metrics")
			[ "$v" = $((WANT[i] * MIB)) ] || { bad="${CGS[$i]}: ${v:-absent}, want $((WANT[i] * MIB))"; break; }
		done
		[ -z "$bad" ] && break
		[ $n -lt 100 ] || { cp "$SL_TMP/metrics" "$SL_LOGDIR/metrics.txt"; fail "$1: $bad"; }
		sleep 0.2
		n=$((n + 1))
	done
	echo "ok - $1: $N containers report their limits"
}

WANT=()
for ((i = 0; i < N; i++)); do WANT[i]=$((64 + i)); done
check_all "first passes"
grep -q "up to 512 descriptors kept" "$SL_LOGDIR/agent.stderr" ||
	fail "the collector's budget is not 512 descriptors: $(grep -o 'reader v[0-9].*' "$SL_LOGDIR/agent.stderr")"
nfd=$(ls "/proc/$SL_AGENT_PID/fd" | wc -l)
[ "$nfd" -lt 1024 ] || fail "agent holds $nfd descriptors (limit 1024)"
ncg=$(ls -l "/proc/$SL_AGENT_PID/fd" 2>/dev/null | grep -c "$BASE")
echo "ok - agent holds $nfd descriptors, $ncg of them in the test's cgroups"
[ "$ncg" -gt 0 ] || fail "no descriptor of the test's cgroups is kept"
[ "$ncg" -le 512 ] || fail "$ncg descriptors kept: over the budget of 512"

for ((i = 0; i < N; i++)); do
	WANT[i]=$((200 + i))
	echo $((WANT[i] * MIB)) >"$MEMH${CGS[$i]}/$LIMF" || fail "cannot change ${CGS[$i]}"
done
check_all "limits changed in place"

for ((i = 0; i < N; i += 5)); do
	for h in "${HIER[@]}"; do rmdir "$h${CGS[$i]}" || fail "rmdir $h${CGS[$i]}"; done
	WANT[i]=$((300 + i))
	mk "${CGS[$i]}" "${WANT[i]}"
done
check_all "cgroups re-created under the same paths"

# 4. the walk is replayed while no cgroup is made or removed
#    (src/cgroup/cgwalk_cache.h), and a new container is seen at the next
#    pass, not at the next full walk (at least every 12 passes)
walks() { sl_metric sandlens_stats_cgroup_walks_total "kind=\"$1\""; }
R0=$(walks replayed)
sleep 2 # 4 passes, nothing changes
R1=$(walks replayed)
[ "$R1" -gt "$R0" ] || fail "no replayed walk over 4 idle passes ($R0 -> $R1)"
echo "ok - idle passes replay the walk ($R0 -> $R1 replayed)"
F1=$(walks full)
NEW=$BASE/$(printf 'fdc1%060x' 0)
CGS+=("$NEW")
mk "$NEW" 77
n=0
until curl -sf "$SL_API/metrics" | grep -q "^container_spec_memory_limit_bytes{.*id=\"$NEW\".*} $((77 * MIB))$"; do
	[ $n -lt 100 ] || fail "the new container $NEW never showed up"
	sleep 0.1
	n=$((n + 1))
done
R2=$(walks replayed)
F2=$(walks full)
note "new container seen after $((R2 - R1)) replayed and $((F2 - F1)) full walks"
[ "$F2" -gt "$F1" ] || fail "the new container was found without a full walk"
# one pass = a walk of each hierarchy (v2 and, on v1/hybrid hosts, v1
# memory); at most the pass under way when mkdir ran replays the old tree
[ $((R2 - R1)) -le 2 ] || fail "the new container took $((R2 - R1)) replayed walks to be seen (mkdir not noticed)"
echo "ok - a new container is seen at the next pass (inotify on the walked directories)"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
