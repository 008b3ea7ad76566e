#!/bin/bash
# container_spec_* fidelity (issue 10 item 2): a runc container given a CPU
# quota and period, CPU shares (v2: runc writes cpu.weight), a memory limit,
# a swap limit and a memory reservation (v1: memory.soft_limit_in_bytes; v2:
# memory.min, which is what cAdvisor reads, set through linux.resources.
# unified). The test reads the kernel's files itself and expects /metrics to
# carry exactly those values, converted as cAdvisor does (weight -> shares:
# 2 + (w-1)*262142/9999; a byte limit above 2^62 -> 0). A container without
# limits has no container_spec_cpu_quota sample and 0 for its memory limit.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
sl_init
sl_require_agent_env
ct_require

MIB=1048576
V2=""
[ -f /sys/fs/cgroup/cgroup.controllers ] && V2=/sys/fs/cgroup
res=$(jq -cn --argjson m $MIB '{cpu: {quota: 25000, period: 50000, shares: 512},
	memory: {limit: (64 * $m), swap: (96 * $m), reservation: (16 * $m)}}')
[ -n "$V2" ] && res=$(jq -c --arg min $((16 * MIB)) '. + {unified: {"memory.min": $min}}' <<<"$res")
ct_create lim kubepods --resources "$res" -- sleep 600
LIM_ID=$CT_ID LIM_CG=$CT_CGPATH
ct_start_bg
ct_create free kubepods -- sleep 600
FREE_ID=$CT_ID
ct_start_bg

sl_agent_start "stats:
  interval: 500ms"

# value of NAME{...name="ID"...} in /metrics, or "absent"
metric() {
	awk -v n="$1" -v id="name=\"$2\"" '
		/^#/ { next }
		{ m = $1; i = index(m, "{"); if (!i || substr(m, 1, i - 1) != n) next
		  if (index(m, id)) { print $2; f = 1; exit } }
		END { if (!f) print "absent" }' "$SL_TMP/metrics"
}
spec_mem() { awk -v v="$1" 'BEGIN { if (v > 4611686018427387904) print 0; else print v }'; }

n=0
until curl -sf "$SL_API/metrics" >"$SL_TMP/metrics" && [ "$(metric container_spec_cpu_period "$LIM_ID")" != absent ] &&
	[ "$(metric container_start_time_seconds "$FREE_ID")" != absent ]; do
	[ $n -lt 100 ] || fail "no container_spec_cpu_period for the container within 20 s"
	sleep 0.2
	n=$((n + 1))
done
cp "$SL_TMP/metrics" "$SL_LOGDIR/metrics.txt"

if [ -n "$V2" ]; then
	d=$V2$LIM_CG
	read -r q p <"$d/cpu.max"
	w=$(cat "$d/cpu.weight")
	want_quota=$q want_period=$p want_shares=$((2 + ((w - 1) * 262142) / 9999))
	want_limit=$(cat "$d/memory.max") want_resv=$(cat "$d/memory.min") want_swap=$(cat "$d/memory.swap.max")
	note "v2: cpu.max '$q $p', cpu.weight $w, memory.max $want_limit, memory.min $want_resv, memory.swap.max $want_swap"
else
	c=/sys/fs/cgroup/cpu$LIM_CG m=/sys/fs/cgroup/memory$LIM_CG
	want_quota=$(cat "$c/cpu.cfs_quota_us") want_period=$(cat "$c/cpu.cfs_period_us") want_shares=$(cat "$c/cpu.shares")
	want_limit=$(cat "$m/memory.limit_in_bytes") want_resv=$(cat "$m/memory.soft_limit_in_bytes")
	want_swap=$(cat "$m/memory.memsw.limit_in_bytes" 2>/dev/null || echo absent)
	note "v1: quota $want_quota, period $want_period, shares $want_shares, limit $want_limit, soft $want_resv, memsw $want_swap"
fi
# what was asked for reached the kernel (else the test proves nothing)
assert_eq "kernel quota" 25000 "$want_quota"
assert_eq "kernel period" 50000 "$want_period"
assert_eq "kernel memory limit" $((64 * MIB)) "$want_limit"
assert_eq "kernel reservation" $((16 * MIB)) "$want_resv"

assert_eq "container_spec_cpu_quota" "$want_quota" "$(metric container_spec_cpu_quota "$LIM_ID")"
assert_eq "container_spec_cpu_period" "$want_period" "$(metric container_spec_cpu_period "$LIM_ID")"
assert_eq "container_spec_cpu_shares" "$want_shares" "$(metric container_spec_cpu_shares "$LIM_ID")"
assert_eq "container_spec_memory_limit_bytes" "$(spec_mem "$want_limit")" "$(metric container_spec_memory_limit_bytes "$LIM_ID")"
assert_eq "container_spec_memory_reservation_limit_bytes" "$(spec_mem "$want_resv")" "$(metric container_spec_memory_reservation_limit_bytes "$LIM_ID")"
if [ "$want_swap" = absent ]; then
	assert_eq "swap limit without swap accounting" absent "$(metric container_spec_memory_swap_limit_bytes "$LIM_ID")"
else
	[ "$want_swap" = max ] && want_swap=0
	assert_eq "container_spec_memory_swap_limit_bytes" "$(spec_mem "$want_swap")" "$(metric container_spec_memory_swap_limit_bytes "$LIM_ID")"
fi

# no limits: no quota sample (cAdvisor), memory limit 0 = none
assert_eq "quota of a container without one" absent "$(metric container_spec_cpu_quota "$FREE_ID")"
assert_eq "memory limit of a container without one" 0 "$(metric container_spec_memory_limit_bytes "$FREE_ID")"
if command -v promtool >/dev/null; then
	promtool check metrics <"$SL_TMP/metrics" >"$SL_LOGDIR/promtool.txt" 2>&1 || fail "promtool check metrics: $(head -5 "$SL_LOGDIR/promtool.txt")"
fi
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
