#!/bin/bash
# Cost of the hw and gpu modules (issue 11 item 5), outside the suite.
#
#   bench/hw-gpu.sh [BUILD_DIR] [REPEATS] [SECONDS]
#
# sysfs pass: an agent with hw.sysfs_root at a copy of tests/fixtures/hw/sys
# and hw.interval 100ms runs SECONDS (default 10); its own accounting
# (sandlens_hw_sysfs_pass_seconds_total / sandlens_hw_sysfs_passes_total)
# gives the mean time of one pass (the tick's whole work: scan, rate and
# link detectors, snapshot). Interleaved with it, the floor: bench/hw_floor.c
# (every regular file of the same tree opened, read and closed, nothing
# else) for 200 passes. No peer: node_exporter (whose edac and infiniband
# collectors read the same files) is not installed here.
# gpu: the sl-gpu thread's CPU over SECONDS
# (its /proc task schedstat run time, ns) with the test NVML (two GPUs,
# gpu.interval 1s): the module's sampling and
# event wait plus the shim's own cost (it re-reads its script file at every
# call), an upper bound of what real NVML calls would add on our side.
# BPF ns/event: kernel.bpf_stats_enabled=1 over the hw programs; no RAS
# event fires on this machine, so run counts stay 0 and the figure cannot be
# measured (printed as such).
# Prints median and spread (min..max) over REPEATS (default 5).
set -u
cd "$(dirname "$0")/.." || exit 1
source tests/lib/common.sh
B=${1:-build}
REPEATS=${2:-5}
SECS=${3:-10}
export SL_BUILD=$B
sl_init
sl_require_root
sl_require_btf
sl_require_cmd jq curl bpftool cc
sl_require_build
cc -O2 -o "$SL_TMP/hw_floor" bench/hw_floor.c || exit 1
cp -r tests/fixtures/hw/sys "$SL_TMP/sys"
old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
sl_on_exit "echo $old_stats > /proc/sys/kernel/bpf_stats_enabled"
echo 1 >/proc/sys/kernel/bpf_stats_enabled
# a sample's value as written (sl_metric rounds)
raw() { curl -sf -m 10 "$SL_API/metrics" | awk -v n="$1" '$1 == n {print $2; exit}'; }

med() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) {print "n/a"; exit} m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.4g (%.4g..%.4g)\n", m, v[1], v[NR]}'; }

: >"$SL_TMP/pass" ; : >"$SL_TMP/floor" ; : >"$SL_TMP/gpu"
export SL_FAKE_NVML_SCRIPT="$SL_TMP/nvml.script"
cat >"$SL_FAKE_NVML_SCRIPT" <<EOS
gpu 0 uuid GPU-a name A100 bus 0000:3b:00.0 temp 40 power_mw 60000 util 50 fb_total 42949672960 fb_used 1073741824
gpu 1 uuid GPU-b name A100 bus 0000:86:00.0 temp 41 power_mw 61000 util 51 fb_total 42949672960 fb_used 1073741824
proc 0 $$ 1073741824
EOS
for r in $(seq "$REPEATS"); do
	sl_agent_start "hw:
  sysfs_root: $SL_TMP/sys
  interval: 100ms
gpu:
  nvml_path: $SL_BUILD/helpers/libnvidia-ml.so.1
  interval: 1s"
	tid=$(grep -lx sl-gpu /proc/$SL_AGENT_PID/task/*/comm | head -1 | xargs dirname)
	g0=$(awk '{print $1}' "$tid/schedstat")
	p0=$(raw sandlens_hw_sysfs_passes_total); s0=$(raw sandlens_hw_sysfs_pass_seconds_total)
	sleep "$SECS"
	p1=$(raw sandlens_hw_sysfs_passes_total); s1=$(raw sandlens_hw_sysfs_pass_seconds_total)
	g1=$(awk '{print $1}' "$tid/schedstat")
	files=$(raw sandlens_hw_sysfs_files)
	awk -v a="$s0" -v b="$s1" -v x="$p0" -v y="$p1" 'BEGIN {printf "%.1f\n", (b - a) / (y - x) * 1e6}' >>"$SL_TMP/pass"
	awk -v a="$g0" -v b="$g1" -v s="$SECS" 'BEGIN {printf "%.3f\n", (b - a) / 1e6 / s}' >>"$SL_TMP/gpu"
	bpf=$(for id in $(grep -h '^prog_id:' /proc/"$SL_AGENT_PID"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -un); do
		bpftool prog show id "$id" -j 2>/dev/null | jq -r 'select(.name | test("^hw_")) | "\(.name) \(.run_cnt // 0)"'
	done | tr '\n' ' ')
	sl_agent_stop >/dev/null
	"$SL_TMP/hw_floor" "$SL_TMP/sys" 200 | awk '{printf "%.1f\n", $1 / 1000}' >>"$SL_TMP/floor"
	echo "repeat $r: pass $(tail -1 "$SL_TMP/pass") us ($files files), floor $(tail -1 "$SL_TMP/floor") us, sl-gpu $(tail -1 "$SL_TMP/gpu") ms CPU/s; hw programs run_cnt: $bpf"
done
echo "sysfs pass (agent), us:       $(med <"$SL_TMP/pass")"
echo "floor (open+read+close), us:  $(med <"$SL_TMP/floor")"
echo "ratio pass/floor (medians):   $(paste "$SL_TMP/pass" "$SL_TMP/floor" | awk '{print $1 / $2}' | med)"
echo "sl-gpu thread, ms CPU per s:  $(med <"$SL_TMP/gpu")"
echo "BPF ns/event: no RAS event fired (run_cnt 0 on every hw program): not measurable here"
