#!/bin/bash
# stall module under load (docs/STALL.md): softirq and hardirq histograms,
# and no CPU stall on a loaded but healthy host. For 10 s: a loopback TCP
# blast (iperf3, 127.0.0.1) and two busy loops (one per core of the test
# host). Checks:
#   - sandlens_stall_softirq_seconds_count{vector="NET_RX"} and the NET_RX
#     latency histogram grew, and the NET_RX runs sandlens counted over the
#     window agree with /proc/softirqs NET_RX (the kernel's count of the
#     same handler runs) within 10 % (the two are read at slightly
#     different times);
#   - TIMER softirq runs are counted on every CPU (cpu label);
#   - every histogram's +Inf bucket equals its _count;
#   - no cpu_stall event and sandlens_stall_cpu_stalls_total stays 0 while
#     the CPUs are busy, while sandlens_stall_cpu_samples_total shows the
#     sampler ran (>= 50 % of 1000 samples/s per CPU: the check can fail);
#   - /healthz lists every stall hook attached; promtool accepts /metrics.
# sl-san: once (softirq counts against /proc/softirqs under load; the stall code runs under ASan in t_stall_hung, t_stall_kmsg)
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_require_cmd iperf3

sl_agent_start
H=$(sl_get /healthz)
jq -e '[.modules[] | select(.name == "stall") | .hooks[] | select(.state != "attached")] | length == 0' <<<"$H" >/dev/null ||
	fail "stall hooks not all attached: $(jq -c '.modules[] | select(.name == "stall") | .hooks' <<<"$H")"
NCPU=$(nproc)
net_rx_kernel() { awk '$1 == "NET_RX:" { s = 0; for (i = 2; i <= NF; i++) s += $i; print s }' /proc/softirqs; }
net_rx_sl() { sl_metric sandlens_stall_softirq_seconds_count 'vector="NET_RX"'; }
sleep 1.2
K0=$(net_rx_kernel)
S0=$(net_rx_sl)
L0=$(sl_metric sandlens_stall_softirq_latency_seconds_count 'vector="NET_RX"')
SAMP0=$(sl_metric sandlens_stall_cpu_samples_total)
T0=$(date +%s.%N)
# hardirq runs per IRQ, both sides: /proc/interrupts (summed over CPUs)
# and sandlens' hardirq histogram counts
irq_kernel() { awk '$1 ~ /^[0-9]+:$/ { s = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i; sub(/:/, "", $1); print $1, s }' /proc/interrupts; }
irq_sl() { curl -sf "$SL_API/metrics" | sed -n 's/^sandlens_stall_hardirq_seconds_count{irq="\([0-9]*\)",.*} \([0-9]*\)$/\1 \2/p'; }
irq_kernel >"$SL_TMP/irqk0"
irq_sl >"$SL_TMP/irqs0"

PORT=$(sl_free_port)
iperf3 -s -p "$PORT" -1 >"$SL_TMP/iperf-s.out" 2>&1 &
IS=$!
sl_on_exit "kill $IS"
sleep 0.3
busy() { local end=$((SECONDS + 10)); while [ $SECONDS -lt $end ]; do :; done; }
busy &
B1=$!
busy &
B2=$!
sl_on_exit "kill $B1 $B2"
# block I/O that bypasses the page cache: completions raise the disk's IRQ
dd if=/dev/zero of="$SL_TMP/direct" bs=4k count=3000 oflag=direct,dsync status=none 2>/dev/null &
DD=$!
iperf3 -c 127.0.0.1 -p "$PORT" -t 8 -P 2 >"$SL_TMP/iperf-c.out" 2>&1 || fail "iperf3 client: $(tail -3 "$SL_TMP/iperf-c.out")"
wait "$DD" || note "dd oflag=direct failed (no O_DIRECT here?): the hardirq check uses what fired"
rm -f "$SL_TMP/direct"
wait "$B1" "$B2"
note "iperf3: $(grep -E 'sender|receiver' "$SL_TMP/iperf-c.out" | tail -2 | tr -s ' ' | tr '\n' ';')"
# a tick for the snapshot, then both counts as close together as we can
sleep 1.2
S1=$(net_rx_sl)
K1=$(net_rx_kernel)
L1=$(sl_metric sandlens_stall_softirq_latency_seconds_count 'vector="NET_RX"')
SAMP1=$(sl_metric sandlens_stall_cpu_samples_total)
T1=$(date +%s.%N)
irq_sl >"$SL_TMP/irqs1"
irq_kernel >"$SL_TMP/irqk1"
DS=$((S1 - S0)) DK=$((K1 - K0)) DL=$((L1 - L0))
note "NET_RX runs over the window: sandlens $DS, /proc/softirqs $DK; latency samples $DL"
[ "$DK" -gt 1000 ] || fail "the loopback blast raised only $DK NET_RX softirqs (/proc/softirqs)"
[ "$DL" -gt 0 ] || fail "no NET_RX latency samples"
DIFF=$((DS > DK ? DS - DK : DK - DS))
[ $((DIFF * 10)) -le "$DK" ] || fail "NET_RX runs: sandlens $DS vs /proc/softirqs $DK (off by $DIFF, > 10 %)"
echo "ok - NET_RX runs within 10 % of /proc/softirqs ($DS vs $DK)"
# the IRQ that fired most in the window (/proc/interrupts): sandlens counted
# the same handler runs within 10 % (+ 20 for the reads' few ms apart)
read -r IRQ IK < <(join "$SL_TMP/irqk0" "$SL_TMP/irqk1" | awk '{print $1, $3 - $2}' | sort -k2,2nr | head -1)
IS0=$(awk -v i="$IRQ" '$1 == i {print $2}' "$SL_TMP/irqs0")
IS1=$(awk -v i="$IRQ" '$1 == i {print $2}' "$SL_TMP/irqs1")
ISD=$((${IS1:-0} - ${IS0:-0}))
note "busiest IRQ $IRQ ($(cat /sys/kernel/irq/$IRQ/actions 2>/dev/null)): /proc/interrupts +$IK, sandlens +$ISD"
[ "${IK:-0}" -ge 200 ] || fail "the busiest IRQ fired only ${IK:-0} times in the window (/proc/interrupts)"
IDIFF=$((ISD > IK ? ISD - IK : IK - ISD))
[ $((IDIFF * 10)) -le $((IK + 200)) ] || fail "IRQ $IRQ runs: sandlens $ISD vs /proc/interrupts $IK"
echo "ok - hardirq runs of IRQ $IRQ within 10 % of /proc/interrupts ($ISD vs $IK)"

curl -sf "$SL_API/metrics" >"$SL_TMP/metrics.txt"
cp "$SL_TMP/metrics.txt" "$SL_LOGDIR/metrics.txt"
for c in $(seq 0 $((NCPU - 1))); do
	grep -q "^sandlens_stall_softirq_seconds_count{cpu=\"$c\",vector=\"TIMER\"} [1-9]" "$SL_TMP/metrics.txt" ||
		fail "no TIMER softirq runs on cpu $c"
done
echo "ok - TIMER softirq runs on all $NCPU CPUs"
grep -q '^sandlens_stall_hardirq_seconds_count{irq="[0-9]*",name="[^"]*"} [1-9]' "$SL_TMP/metrics.txt" ||
	fail "no hardirq histogram"
# each hardirq series is named from /sys/kernel/irq/<irq>/actions (read
# independently here; an IRQ without handlers has an empty name)
sed -n 's/^sandlens_stall_hardirq_seconds_count{irq="\([0-9]*\)",name="\([^"]*\)"}.*/\1 \2/p' "$SL_TMP/metrics.txt" >"$SL_TMP/irqnames"
nn=0
while read -r irq name; do
	want=$(head -n1 "/sys/kernel/irq/$irq/actions" 2>/dev/null || true)
	[ "$name" = "$want" ] || fail "irq $irq named '$name', /sys/kernel/irq/$irq/actions says '$want'"
	[ -n "$name" ] && nn=$((nn + 1))
done <"$SL_TMP/irqnames"
[ "$nn" -gt 0 ] || fail "no hardirq series carries a handler name"
echo "ok - hardirq names equal /sys/kernel/irq/<irq>/actions ($nn named)"
# +Inf bucket = _count for every histogram series
awk '
	/^sandlens_stall_[a-z_]*_bucket\{.*le="\+Inf"\}/ { k = $1; sub(/_bucket\{/, "{", k); sub(/,le="\+Inf"\}/, "}", k); inf[k] = $2 }
	/^sandlens_stall_[a-z_]*_count[{ ]/ { k = $1; sub(/_count/, "", k); cnt[k] = $2 }
	END { bad = 0; n = 0; for (k in cnt) { n++; if (inf[k] != cnt[k]) { print "mismatch " k " inf=" inf[k] " count=" cnt[k]; bad = 1 } }
	      if (n == 0) { print "no histogram"; bad = 1 } exit bad }' "$SL_TMP/metrics.txt" >"$SL_TMP/inf.out" ||
	fail "histogram +Inf != _count: $(head -3 "$SL_TMP/inf.out")"
echo "ok - every stall histogram's +Inf bucket equals its count"

# the false-positive check
RATE=$(awk -v a="$SAMP0" -v b="$SAMP1" -v t0="$T0" -v t1="$T1" -v n="$NCPU" 'BEGIN { printf "%d", (b - a) / (t1 - t0) / n }')
note "cpu-clock samples: $RATE per second per CPU during the load"
[ "$RATE" -ge 500 ] || fail "the stall sampler ran at $RATE samples/s/CPU (want >= 500 of 1000)"
assert_eq "sandlens_stall_cpu_stalls_total on a busy healthy host" 0 "$(sl_metric sandlens_stall_cpu_stalls_total)"
assert_eq "cpu_stall events" 0 "$(curl -sf "$SL_API/api/v1/events?type=cpu_stall" | jq '.events | length')"
note "late timers judged steal: $(sl_metric sandlens_stall_cpu_late_timers_total 'verdict="steal"'), idle: $(sl_metric sandlens_stall_cpu_late_timers_total 'verdict="idle"')"

if command -v promtool >/dev/null; then
	promtool check metrics <"$SL_TMP/metrics.txt" >"$SL_TMP/promtool.out" 2>&1
	grep -i "error" "$SL_TMP/promtool.out" && fail "promtool check metrics: $(head -5 "$SL_TMP/promtool.out")"
	echo "ok - promtool check metrics"
fi
echo "PASS"
