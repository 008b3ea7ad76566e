#!/bin/bash
# hw module against a fixture sysfs tree (tests/fixtures/hw/sys: EDAC mc0
# with two csrows and two DIMMs, PCI 0000:3b:00.0 with AER files and a
# x16 16 GT/s link, InfiniBand mlx5_0 port 1), copied so the test can
# change counters between passes (hw.interval 1s):
#   - /healthz: every hw hook listed; the sysfs ones attached; each RAS
#     tracepoint attached when <tracefs>/events/<cat>/<name> exists here,
#     else degraded with a reason starting "absent:" and naming it;
#   - /metrics: the EDAC, AER, link and InfiniBand families with the
#     fixture's values (port_rcv_data x 4 as bytes), promtool clean;
#   - DIMM 0's corrected errors rising by 2 per pass past the threshold
#     (5 in a 30 s window): exactly one hw_error_rate event for
#     edac:mc0/dimm0, while it stays above;
#   - the link going from x16 to x4: sandlens_hw_pcie_link_degraded 1 and
#     one hw_pcie_link event (degraded, previous width 16), then back to
#     x16: gauge 0 and a restored event.
source "$(dirname "$0")/../lib/common.sh"
sl_init
# put VALUE FILE: replace an attribute at once, as sysfs reads are (a plain
# `echo >` truncates first: a pass in between reads an empty file)
put() { echo "$1" >"$2.tmp" && mv "$2.tmp" "$2"; }
sl_require_agent_env
command -v promtool >/dev/null || skip "promtool not installed"
FIX="$SL_ROOT/tests/fixtures/hw/sys"
[ -d "$FIX" ] || FIX="$(cd "$(dirname "$0")/../fixtures/hw/sys" && pwd)"
SYS="$SL_TMP/sys"
cp -r "$FIX" "$SYS"
MC="$SYS/devices/system/edac/mc/mc0"
DEV="$SYS/bus/pci/devices/0000:3b:00.0"
sl_agent_start "hw:
  sysfs_root: $SYS
  interval: 1s
  error_rate_window: 30s
  error_rate_threshold: 5"
curl -sf "$SL_API/healthz" >"$SL_TMP/healthz.json" || fail "GET /healthz"
cp "$SL_TMP/healthz.json" "$SL_LOGDIR/healthz.json"
H=$(jq -c '[.modules[] | select(.name == "hw") | .hooks[]]' "$SL_TMP/healthz.json")
assert_eq "hw hooks listed" 10 "$(jq length <<<"$H")"
hook() { jq -c --arg n "$1" '[.[] | select(.name == $n)][0]' <<<"$H"; }
for h in sysfs/edac sysfs/pci_aer sysfs/pci_link sysfs/infiniband; do
	assert_eq "$h state" attached "$(jq -r .state <<<"$(hook "$h")")"
done
TRACEFS=/sys/kernel/tracing
for tp in ras/mc_event ras/aer_event ras/non_standard_event ras/arm_event ras/memory_failure_event mce/mce_record; do
	o=$(hook "tp/$tp")
	st=$(jq -r .state <<<"$o")
	if [ -d "$TRACEFS/events/$tp" ]; then
		assert_eq "tp/$tp state (tracepoint exists)" attached "$st"
	else
		assert_eq "tp/$tp state (tracepoint absent)" degraded "$st"
		r=$(jq -r .reason <<<"$o")
		case "$r" in absent:*"${tp/\//:}"*) ;; *) fail "tp/$tp reason: '$r'" ;; esac
	fi
	echo "ok - tp/$tp: $st $(jq -r '.reason // ""' <<<"$o")"
done

sleep 1.5
curl -sf "$SL_API/metrics" >"$SL_TMP/m1.txt" || fail "GET /metrics"
cp "$SL_TMP/m1.txt" "$SL_LOGDIR/metrics-1.txt"
promtool check metrics <"$SL_TMP/m1.txt" >"$SL_TMP/promtool.txt" 2>&1 || fail "promtool check metrics: $(cat "$SL_TMP/promtool.txt")"
assert_eq "link width" 16 "$(sl_metric sandlens_hw_pcie_link_width 'device="0000:3b:00.0"')"
assert_eq "link max speed" 16 "$(sl_metric sandlens_hw_pcie_link_max_speed_gts 'device="0000:3b:00.0"')"
assert_eq "link degraded (x16)" 0 "$(sl_metric sandlens_hw_pcie_link_degraded 'device="0000:3b:00.0"')"
assert_eq "IB rcv bytes" $((2512 * 4)) "$(sl_metric sandlens_hw_infiniband_port_data_received_bytes_total 'device="mlx5_0",port="1"')"
assert_eq "IB rcv packets" 30 "$(sl_metric sandlens_hw_infiniband_port_stat_total 'device="mlx5_0",port="1",counter="port_rcv_packets"')"
grep -q '^sandlens_hw_infiniband_port_hw_stat_total{device="mlx5_0",port="1",counter="out_of_sequence"} 0$' "$SL_TMP/m1.txt" || fail "no hw_counters sample"
grep -q 'counter="lifespan"' "$SL_TMP/m1.txt" && fail "hw_counters/lifespan (a setting) exported as a counter"
grep -q '^sandlens_hw_edac_dimm_correctable_errors_total{controller="0",dimm="0",label="CPU_SrcID#0_MC#0_Chan#0_DIMM#0"} 0$' "$SL_TMP/m1.txt" || fail "no DIMM series"
grep -q '^sandlens_hw_pcie_aer_device_errors_total{device="0000:3b:00.0",severity="correctable"} 0$' "$SL_TMP/m1.txt" || fail "no AER total"

# corrected errors on DIMM 0: +2 per pass, 6 passes (12 > threshold 5 in 30 s)
for i in 1 2 3 4 5 6; do
	put $((i * 2)) "$MC/dimm0/dimm_ce_count"
	put $((i * 2)) "$MC/ce_count"
	sleep 1.1
done
ev=$(sl_wait_events "type=hw_error_rate" '.' 10) || fail "no hw_error_rate event"
sleep 2
n=$(curl -sf "$SL_API/api/v1/events?type=hw_error_rate" | jq '[.events[] | select(.device == "edac:mc0/dimm0")] | length')
assert_eq "hw_error_rate events for DIMM 0 (once per crossing)" 1 "$n"
e=$(curl -sf "$SL_API/api/v1/events?type=hw_error_rate" | jq -c '.events[0]')
assert_eq "rate event source" edac_dimm "$(jq -r .source <<<"$e")"
assert_eq "rate event label" "CPU_SrcID#0_MC#0_Chan#0_DIMM#0" "$(jq -r .label <<<"$e")"
assert_eq "rate event subject" device "$(jq -r .subject_kind <<<"$e")"
[ "$(jq .errors <<<"$e")" -ge 5 ] || fail "rate event errors < threshold: $e"
echo "ok - hw_error_rate: $e"
assert_eq "other DIMM quiet" 0 "$(curl -sf "$SL_API/api/v1/events?type=hw_error_rate" | jq '[.events[] | select(.device == "edac:mc0/dimm1")] | length')"
assert_eq "controller CE counter" 12 "$(sl_metric sandlens_hw_edac_correctable_errors_total 'controller="0"')"

# link x16 -> x4 -> x16
put 4 "$DEV/current_link_width"
sleep 2.5
assert_eq "link degraded (x4)" 1 "$(sl_metric sandlens_hw_pcie_link_degraded 'device="0000:3b:00.0"')"
assert_eq "link width (x4)" 4 "$(sl_metric sandlens_hw_pcie_link_width 'device="0000:3b:00.0"')"
l=$(sl_wait_events "type=hw_pcie_link" '[.[] | select(.degraded == true)] | .[0]' 10) || fail "no hw_pcie_link degraded event"
assert_eq "link event previous width" 16 "$(jq .previous_width <<<"$l")"
assert_eq "link event width" 4 "$(jq .width <<<"$l")"
assert_eq "link event severity" warning "$(jq -r .severity <<<"$l")"
assert_eq "link event device" "pci:0000:3b:00.0" "$(jq -r .device <<<"$l")"
put 16 "$DEV/current_link_width"
sleep 2.5
assert_eq "link degraded (back to x16)" 0 "$(sl_metric sandlens_hw_pcie_link_degraded 'device="0000:3b:00.0"')"
sl_wait_events "type=hw_pcie_link" '[.[] | select(.degraded == false)] | .[0]' 10 >/dev/null || fail "no restored event"
assert_eq "hw_pcie_link events" 2 "$(curl -sf "$SL_API/api/v1/events?type=hw_pcie_link" | jq '.events | length')"

# a FIFO planted as an attribute is an error, not a hang
rm "$MC/dimm1/dimm_ue_count" && mkfifo "$MC/dimm1/dimm_ue_count"
sleep 2.5
curl -sf -m 5 "$SL_API/healthz" >/dev/null || fail "agent stuck after a FIFO attribute"
[ "$(sl_metric sandlens_hw_sysfs_read_errors_total)" -ge 1 ] || fail "FIFO attribute not counted as a read error"
curl -sf "$SL_API/metrics" >"$SL_TMP/m2.txt"
cp "$SL_TMP/m2.txt" "$SL_LOGDIR/metrics-2.txt"
promtool check metrics <"$SL_TMP/m2.txt" >"$SL_TMP/promtool.txt" 2>&1 || fail "promtool check metrics (2): $(cat "$SL_TMP/promtool.txt")"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
