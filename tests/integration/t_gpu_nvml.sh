#!/bin/bash
# gpu module through the test NVML (build/helpers/libnvidia-ml.so.1,
# tests/helpers/nvml/sl_fake_nvml.c) loaded by the module's own dlopen path
# (gpu.nvml_path), values scripted in $SL_FAKE_NVML_SCRIPT:
#   - /healthz: nvml, nvml/xid_events, kmsg/nvrm_xid, nvml/processes attached,
#     a thread named sl-gpu runs;
#   - /metrics: DCGM_FI_DEV_* and sandlens_gpu_* equal the script's values
#     (power mW -> W, memory bytes -> MiB), promtool clean;
#   - a compute process whose pid is a real process in a runc container:
#     its GPU memory under that container's id; the test shell's (a host
#     process) under runtime="host";
#   - an XID from the NVML event set: a gpu_xid event (source nvml) and
#     DCGM_FI_DEV_XID_ERRORS = that XID;
#   - an NVRM Xid kernel-log line (fixture kmsg file, gpu.kmsg_path) naming
#     the container's pid: a gpu_xid event (source kmsg) attributed to the
#     container, reported_pid and process_name from the line;
#   - gpu.nvml_path pointing nowhere: every gpu hook degraded "absent: ...",
#     no sl-gpu thread, gpu families reduced to sandlens_gpu_devices 0.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
sl_init
sl_require_agent_env
ct_require
command -v promtool >/dev/null || skip "promtool not installed"
command -v python3 >/dev/null || skip "python3 not installed (metric parsing)"
SHIM="$SL_BUILD/helpers/libnvidia-ml.so.1"
# gm NAME LABELS: the value of the first sample of NAME whose label set has
# every comma-separated k="v" of LABELS (values here have spaces, which
# sl_metric's field split does not take)
gm() {
	curl -sf -m 10 "$SL_API/metrics" | python3 -c '
import re, sys
name, want = sys.argv[1], [w for w in re.findall(r"[A-Za-z_]+=\"[^\"]*\"", sys.argv[2])]
for line in sys.stdin:
    m = re.match(r"^([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})? (\S+)$", line.rstrip("\n"))
    if not m or m.group(1) != name:
        continue
    have = set(re.findall(r"[A-Za-z_]+=\"[^\"]*\"", m.group(3) or ""))
    if all(w in have for w in want):
        print(m.group(4)); break
else:
    print("none")
' "$1" "${2:-}"
}
[ -f "$SHIM" ] || fail "$SHIM not built"

ct_create gpu kubepods -- /bin/sl-testprog sleep 60
ct_start_bg
ct_wait_running
# runc state can miss the container for a moment after "running" (seen:
# "container does not exist" right after ct_wait_running): retry
for i in $(seq 50); do
	CPID=$(runc --root "$CT_RUNC_ROOT" state "$CT_ID" 2>"$SL_TMP/state.err" | jq -r '.pid // empty')
	[ -n "$CPID" ] && [ "$CPID" != 0 ] && break
	sleep 0.1
done
[ -n "$CPID" ] && [ "$CPID" != 0 ] || fail "no container pid: $(cat "$SL_TMP/state.err") $(cat "$CT_DIR/stderr" 2>/dev/null)"
echo "ok - container $CT_ID pid $CPID"
sleep 60 &
HPID=$!

export SL_FAKE_NVML_SCRIPT="$SL_TMP/nvml.script"
cat >"$SL_FAKE_NVML_SCRIPT" <<EOS
gpu 0 uuid GPU-5fd4f087-86f3-7a43-b711-4771313afc50 name NVIDIA_A100-SXM4-40GB bus 0000:3b:00.0 temp 41 power_mw 65432 util 37 memutil 12 fb_total 42949672960 fb_used 2147483648 ecc_sbe_vol 3 ecc_dbe_vol 0 ecc_sbe_agg 10 ecc_dbe_agg 1 retired_sbe 2 retired_dbe 0 remap_corr 1 remap_unc 0 remap_pending 0 remap_fail 0 throttle 4 replay 7 nvlink_crc_flit 5
gpu 1 uuid GPU-0c3a9e3e-1a2b-4c5d-8e9f-aabbccddeeff name NVIDIA_A100-SXM4-40GB bus 0000:86:00.0 temp 35 power_mw 50000 util 0 memutil 0 fb_total 42949672960 fb_used 0
proc 0 $CPID 1073741824
proc 0 $HPID 268435456
EOS
KMSG="$SL_TMP/kmsg"
: >"$KMSG"
sl_agent_start "gpu:
  nvml_path: $SHIM
  interval: 1s
  kmsg_path: $KMSG"
curl -sf "$SL_API/healthz" >"$SL_TMP/healthz.json" || fail "GET /healthz"
cp "$SL_TMP/healthz.json" "$SL_LOGDIR/healthz.json"
H=$(jq -c '[.modules[] | select(.name == "gpu") | .hooks[]]' "$SL_TMP/healthz.json")
assert_eq "gpu hooks" 4 "$(jq length <<<"$H")"
assert_eq "gpu hooks attached" 4 "$(jq '[.[] | select(.state == "attached")] | length' <<<"$H")"
grep -qx sl-gpu /proc/$SL_AGENT_PID/task/*/comm || fail "no sl-gpu thread"

sleep 2.5
curl -sf "$SL_API/metrics" >"$SL_TMP/m.txt" || fail "GET /metrics"
cp "$SL_TMP/m.txt" "$SL_LOGDIR/metrics.txt"
promtool check metrics <"$SL_TMP/m.txt" >"$SL_TMP/promtool.txt" 2>&1 || fail "promtool: $(cat "$SL_TMP/promtool.txt")"
assert_eq "temp gpu0" 41 "$(gm DCGM_FI_DEV_GPU_TEMP 'gpu="0"')"
assert_eq "temp gpu1" 35 "$(gm DCGM_FI_DEV_GPU_TEMP 'gpu="1"')"
assert_eq "power W" 65.432 "$(gm DCGM_FI_DEV_POWER_USAGE 'gpu="0"')"
assert_eq "util" 37 "$(gm DCGM_FI_DEV_GPU_UTIL 'gpu="0"')"
assert_eq "mem copy util" 12 "$(gm DCGM_FI_DEV_MEM_COPY_UTIL 'gpu="0"')"
assert_eq "fb used MiB" 2048 "$(gm DCGM_FI_DEV_FB_USED 'gpu="0"')"
assert_eq "fb free MiB" $((40960 - 2048)) "$(gm DCGM_FI_DEV_FB_FREE 'gpu="0"')"
assert_eq "SBE volatile" 3 "$(gm sandlens_gpu_ecc_errors_total 'gpu="0",type="corrected",counter="volatile"')"
assert_eq "DBE aggregate" 1 "$(gm sandlens_gpu_ecc_errors_total 'gpu="0",type="uncorrected",counter="aggregate"')"
assert_eq "retired SBE pages" 2 "$(gm sandlens_gpu_retired_pages 'gpu="0",cause="multiple_single_bit_ecc"')"
assert_eq "remapped rows" 1 "$(gm sandlens_gpu_remapped_rows 'gpu="0",type="correctable"')"
assert_eq "PCIe replays" 7 "$(gm sandlens_gpu_pcie_replays_total 'gpu="0"')"
assert_eq "NVLink CRC flit" 5 "$(gm sandlens_gpu_nvlink_errors_total 'gpu="0",counter="crc_flit"')"
assert_eq "throttle reasons" 4 "$(gm DCGM_FI_DEV_CLOCK_THROTTLE_REASONS 'gpu="0"')"
grep -q '^DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-5fd4f087-86f3-7a43-b711-4771313afc50",device="nvidia0",model_name="NVIDIA A100-SXM4-40GB",pci_bus_id="00000000:3B:00.0"} 41$' "$SL_TMP/m.txt" || fail "DCGM labels: $(grep '^DCGM_FI_DEV_GPU_TEMP' "$SL_TMP/m.txt")"
assert_eq "container GPU memory" 1073741824 "$(gm sandlens_gpu_container_memory_used_bytes "gpu=\"0\",container_id=\"$CT_ID\"")"
assert_eq "container pod uid" 1 "$(grep -c "^sandlens_gpu_container_memory_used_bytes{.*container_id=\"$CT_ID\",pod_uid=\"$CT_POD_UID\"" "$SL_TMP/m.txt")"
assert_eq "host GPU memory" 268435456 "$(gm sandlens_gpu_container_memory_used_bytes 'gpu="0",container_id="",runtime="host"')"
assert_eq "container processes" 1 "$(gm sandlens_gpu_container_processes "gpu=\"0\",container_id=\"$CT_ID\"")"
assert_eq "XID gauge before" 0 "$(gm DCGM_FI_DEV_XID_ERRORS 'gpu="1"')"

# an XID from the event set
echo "xid 1 48" >>"$SL_FAKE_NVML_SCRIPT"
e=$(sl_wait_events "type=gpu_xid" '[.[] | select(.source == "nvml")] | .[0]' 10) || fail "no nvml gpu_xid event"
assert_eq "nvml xid" 48 "$(jq .xid <<<"$e")"
assert_eq "nvml xid gpu" 1 "$(jq .gpu <<<"$e")"
assert_eq "nvml xid device" gpu:1 "$(jq -r .device <<<"$e")"
assert_eq "nvml xid uuid" GPU-0c3a9e3e-1a2b-4c5d-8e9f-aabbccddeeff "$(jq -r .uuid <<<"$e")"
sleep 2.2
assert_eq "XID gauge after" 48 "$(gm DCGM_FI_DEV_XID_ERRORS 'gpu="1"')"
assert_eq "XID counter" 1 "$(gm sandlens_gpu_xid_errors_total 'gpu="1",xid="48",source="nvml"')"

# a look-alike line written by a process (facility 1, "<12>"): ignored
echo "12,5122,987654000,-;NVRM: Xid (PCI:0000:3b:00): 31, pid=$CPID, name=forged, GPU has fallen off the bus." >>"$KMSG"
# an NVRM Xid line naming the container's process
echo "3,5123,987654321,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=$CPID, name=sl-testprog, GPU has fallen off the bus." >>"$KMSG"
k=$(sl_wait_events "type=gpu_xid" '[.[] | select(.source == "kmsg")] | .[0]' 10) || fail "no kmsg gpu_xid event"
echo "ok - kmsg xid: $k"
assert_eq "kmsg xid" 79 "$(jq .xid <<<"$k")"
assert_eq "forged (user-space) Xid lines ignored" 0 "$(sl_get '/api/v1/events?type=gpu_xid&limit=1000' | jq '[.events[] | select(.xid == 31)] | length')"
assert_eq "kmsg xid gpu" 0 "$(jq .gpu <<<"$k")"
assert_eq "kmsg reported pid" "$CPID" "$(jq .reported_pid <<<"$k")"
assert_eq "kmsg process name" sl-testprog "$(jq -r .process_name <<<"$k")"
assert_eq "kmsg xid container" "$CT_ID" "$(jq -r .container_id <<<"$k")"
assert_eq "kmsg xid pod" "$CT_POD_UID" "$(jq -r .pod_uid <<<"$k")"
assert_eq "kmsg xid subject" task "$(jq -r .subject_kind <<<"$k")"
assert_eq "kmsg xid detail" "GPU has fallen off the bus." "$(jq -r .detail <<<"$k")"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"

# absent: no library at that path
sl_agent_start "gpu:
  nvml_path: $SL_TMP/no-such-libnvidia-ml.so.1"
curl -sf "$SL_API/healthz" >"$SL_TMP/healthz2.json" || fail "GET /healthz"
cp "$SL_TMP/healthz2.json" "$SL_LOGDIR/healthz-absent.json"
H=$(jq -c '[.modules[] | select(.name == "gpu") | .hooks[]]' "$SL_TMP/healthz2.json")
assert_eq "absent: hooks degraded" 4 "$(jq '[.[] | select(.state == "degraded" and (.reason | startswith("absent: no NVML")))] | length' <<<"$H")"
jq -r '.[0].reason' <<<"$H"
grep -qx sl-gpu /proc/$SL_AGENT_PID/task/*/comm && fail "sl-gpu thread runs without NVML"
assert_eq "devices (absent)" 0 "$(gm sandlens_gpu_devices)"
curl -sf "$SL_API/metrics" | grep -q '^DCGM_FI' && fail "DCGM samples without NVML"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
# an untrusted library is refused before anything loads it (exit 2 naming
# the key): writable by others, or in a directory others can write; a FIFO
# is refused without being opened (no hang)
mkdir -p "$SL_TMP/ww"
chmod 0777 "$SL_TMP/ww"
cp "$SHIM" "$SL_TMP/ww/libnvidia-ml.so.1"
mkdir -p "$SL_TMP/ok"
cp "$SHIM" "$SL_TMP/ok/lib666.so"
chmod 0666 "$SL_TMP/ok/lib666.so"
mkfifo "$SL_TMP/ok/fifo.so"
for lib in "$SL_TMP/ww/libnvidia-ml.so.1" "$SL_TMP/ok/lib666.so" "$SL_TMP/ok/fifo.so" relative/libnvidia-ml.so.1; do
	printf 'gpu:\n  nvml_path: %s\n' "$lib" >"$SL_TMP/untrusted.yaml"
	timeout 10 "$SL_BUILD/sandlensd" --config "$SL_TMP/untrusted.yaml" --check-config >"$SL_LOGDIR/untrusted.out" 2>&1
	rc=$?
	assert_eq "--check-config with gpu.nvml_path $lib" 2 "$rc"
	grep -q "gpu.nvml_path" "$SL_LOGDIR/untrusted.out" || fail "the error does not name gpu.nvml_path: $(cat "$SL_LOGDIR/untrusted.out")"
done
echo "ok - untrusted or non-regular gpu.nvml_path refused: $(tail -n 1 "$SL_LOGDIR/untrusted.out")"
kill $HPID 2>/dev/null
runc --root "$CT_RUNC_ROOT" kill "$CT_ID" KILL >/dev/null 2>&1
ct_wait_bg 10 || true
echo "PASS"
