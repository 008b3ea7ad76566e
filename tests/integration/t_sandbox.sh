#!/bin/bash
# Sandbox identity (issue 17 items 1 and 3, ATTR-3, STATS-4/5) with a real
# runc container laid out as a Kata sandbox: its cgroup is the pod cgroup's
# kata_<id> child (kata-containers docs/design/host-cgroups.md), its
# processes are a fake VMM (tests/helpers/sl-fakevmm.c run as
# /bin/cloud-hypervisor --api-socket /run/vc/vm/<id>/clh-api.sock: two
# threads named "vcpu0"/"vcpu1" spinning, as cloud-hypervisor names its
# vCPU threads) and a process named like the Kata shim
# (containerd-shim-kata-v2 -id <id>); an empty overhead cgroup
# /kata_overhead/<id> sits outside the pod (sandbox_cgroup_only off).
# No real micro-VM can run here (no nested virtualization): what needs a
# live guest is tested against fixtures (tests/unit/test_sandbox.c) and by
# the guest-agent protocol tests.
#   0. `sandlens profile --sandbox ID` profiles the VMM: the folded stacks
#      of its vCPU threads start with their names (vcpu0, vcpu1; they spin
#      until the profile is done, SIGUSR1, at most 40 s);
#   0b. vCPU runqueue wait (docs/SCHED.md "Sandboxes"): the spinning vCPU
#      threads pinned on CPU 0 with a CPU hog (taskset) wait on the
#      runqueue; over a 2 s window the API's per-vCPU runqueue_wait_seconds
#      delta equals the run_delay delta of the same threads'
#      /proc/<pid>/task/<tid>/schedstat read by this test around each API
#      read (within 10 % or 20 ms), is > 0, and its interval figure is that
#      delta; the sandbox sum is the vCPUs' sum; /metrics carries
#      sandlens_sandbox_vcpu_{runqueue_wait_seconds,timeslices}_total per
#      vCPU and passes `promtool check metrics`;
#   1. `sandlens sandboxes` and GET /api/v1/sandboxes/{id}: runtime kata, vmm
#      cloud-hypervisor, the pod uid, the VMM pid and exactly its vCPU tids
#      (checked against /proc/<pid>/task/*/comm), the shim pid, the
#      overhead cgroup; an unknown id is 404, a malformed one 400;
#   2. the overhead cgroup is not a container: no container workload and no
#      container_* series for it; it is a member (role overhead) of the
#      sandbox's statistics;
#   3. `sandlens stats --sandbox ID` answers kind sandbox, source "cgroup"
#      and an epoch; re-creating the overhead cgroup starts a new epoch;
#      `stats --sandbox` of a non-sandbox id exits 1.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
sl_init
sl_require_agent_env
sl_require_cmd taskset promtool
ct_require
[ -x "$SL_BUILD/helpers/sl-fakevmm" ] || fail "$SL_BUILD/helpers/sl-fakevmm not built"

cat >"$SL_TMP/run.sh" <<'EOF2'
#!/bin/sh
/bin/containerd-shim-kata-v2 -namespace k8s.io -id "$SBX" &
exec /bin/cloud-hypervisor --api-socket "/run/vc/vm/$SBX/clh-api.sock" --vcpus 2 --spin 40
EOF2
ct_create sbx kubepods --script "$SL_TMP/run.sh" -- /run.sh
SBX=$CT_ID POD=$CT_POD_UID
KCG="/kubepods/burstable/pod$POD/kata_$SBX"
cp "$SL_BUILD/helpers/sl-fakevmm" "$CT_DIR/rootfs/bin/cloud-hypervisor"
cp "$SL_BUILD/helpers/sl-fakevmm" "$CT_DIR/rootfs/bin/containerd-shim-kata-v2"
jq --arg cg "$KCG" --arg sbx "SBX=$SBX" '.linux.cgroupsPath = $cg | .process.env += [$sbx]' \
	"$CT_DIR/config.json" >"$CT_DIR/config.json.new" && mv "$CT_DIR/config.json.new" "$CT_DIR/config.json"
sl_on_exit "_ct_delete_id '$SBX' '$KCG'"

# the overhead cgroup, in every hierarchy the collector walks
OVH=()
for h in /sys/fs/cgroup /sys/fs/cgroup/*; do
	[ -d "$h" ] && [ ! -L "$h" ] && [ -e "$h/cgroup.procs" ] || continue
	mkdir -p "$h/kata_overhead/$SBX" && OVH+=("$h/kata_overhead/$SBX")
done
[ ${#OVH[@]} -gt 0 ] || skip "no cgroup hierarchy to make the overhead cgroup in"
sl_on_exit "for d in ${OVH[*]}; do rmdir \$d \$(dirname \$d) 2>/dev/null; done; true"

sl_agent_start "stats:
  interval: 500ms
attribution:
  runc_root: $CT_RUNC_ROOT"

ct_start_bg
n=0
until grep -q "vcpus up" "$CT_DIR/stdout" 2>/dev/null; do
	[ $n -lt 200 ] || fail "the fake VMM did not start within 20 s"
	sleep 0.1
	n=$((n + 1))
done

# --- 0. profile --sandbox: the VMM, vCPU threads told by their comm ----------
sl_cli profile --sandbox "$SBX" --duration 2s -o "$SL_LOGDIR/sbx.folded" >"$SL_LOGDIR/cli-profile.txt" 2>&1 ||
	{ cat "$SL_LOGDIR/cli-profile.txt"; fail "sandlens profile --sandbox failed"; }
for v in vcpu0 vcpu1; do
	grep -q "^$v;" "$SL_LOGDIR/sbx.folded" || fail "no on-CPU stacks of the vCPU thread $v in the --sandbox profile"
done
note "profile --sandbox: $(grep -c . "$SL_LOGDIR/sbx.folded") folded stacks, vcpu0 and vcpu1 present"

# --- 0b. vCPU runqueue wait against schedstat ---------------------------------
VMM=$(pgrep -f "^/bin/cloud-hypervisor --api-socket /run/vc/vm/$SBX/" | head -1)
VT=()
for t in /proc/$VMM/task/*; do
	case "$(cat "$t/comm" 2>/dev/null)" in vcpu[0-9]*) VT+=("${t##*/}") ;; esac
done
[ ${#VT[@]} -eq 2 ] || fail "expected 2 vCPU threads of $VMM, found ${VT[*]}"
for t in "${VT[@]}"; do taskset -p -c 0 "$t" >/dev/null || fail "taskset -p -c 0 $t"; done
taskset -c 0 sh -c 'while :; do :; done' &
HOG=$!
sl_on_exit "kill $HOG 2>/dev/null; true"
rd() { awk '{print $2}' "/proc/$VMM/task/$1/schedstat"; } # run_delay ns
# the API's run_delay of tid $2 in the JSON $1, in ns
api_ns() { jq -r --argjson t "$2" '.vcpus[] | select(.tid == $t) | .runqueue_wait_seconds * 1e9 | round' "$1"; }
sleep 0.5
declare -A B1 A1 B2 A2
for t in "${VT[@]}"; do B1[$t]=$(rd "$t"); done
sl_get "/api/v1/sandboxes/$SBX" >"$SL_LOGDIR/rq1.json" || fail "GET /api/v1/sandboxes/$SBX failed"
for t in "${VT[@]}"; do A1[$t]=$(rd "$t"); done
sleep 2
for t in "${VT[@]}"; do B2[$t]=$(rd "$t"); done
sl_get "/api/v1/sandboxes/$SBX" >"$SL_LOGDIR/rq2.json" || fail "GET /api/v1/sandboxes/$SBX failed"
for t in "${VT[@]}"; do A2[$t]=$(rd "$t"); done
sl_get /metrics >"$SL_LOGDIR/rq-metrics.txt" || fail "GET /metrics failed"
kill "$HOG" 2>/dev/null
for t in "${VT[@]}"; do
	x1=$(api_ns "$SL_LOGDIR/rq1.json" "$t") x2=$(api_ns "$SL_LOGDIR/rq2.json" "$t")
	[[ "$x1" =~ ^[0-9]+$ && "$x2" =~ ^[0-9]+$ ]] || fail "vCPU $t: runqueue_wait_seconds unknown ($x1, $x2)"
	d=$((x2 - x1)) lo=$((B2[$t] - A1[$t])) hi=$((A2[$t] - B1[$t]))
	tol=$((d / 10 > 20000000 ? d / 10 : 20000000))
	note "vCPU tid $t: API runqueue wait delta ${d} ns, schedstat run_delay delta in [$lo, $hi] ns"
	[ "$d" -gt 0 ] || fail "vCPU $t: no runqueue wait while pinned with a hog (delta $d)"
	[ "$d" -ge $((lo - tol)) ] && [ "$d" -le $((hi + tol)) ] ||
		fail "vCPU $t: API runqueue wait delta $d ns outside schedstat's [$lo, $hi] ns ± $tol"
	iv=$(jq -r --argjson t "$t" '.vcpus[] | select(.tid == $t) | .interval.runqueue_wait_seconds * 1e9 | round' "$SL_LOGDIR/rq2.json")
	[ $((iv - d)) -le 1000 ] && [ $((d - iv)) -le 1000 ] || fail "vCPU $t: interval wait $iv ns is not the delta $d ns"
	[ "$(jq -r --argjson t "$t" '.vcpus[] | select(.tid == $t) | .interval.wait_per_timeslice_seconds > 0' "$SL_LOGDIR/rq2.json")" = true ] ||
		fail "vCPU $t: no wait per timeslice"
	ix=$(jq -r --argjson t "$t" '.vcpus[] | select(.tid == $t) | .index' "$SL_LOGDIR/rq2.json")
	m=$(grep "^sandlens_sandbox_vcpu_runqueue_wait_seconds_total{sandbox_id=\"$SBX\",vcpu=\"$ix\"}" "$SL_LOGDIR/rq-metrics.txt" | awk '{print $2}')
	[ -n "$m" ] || fail "no sandlens_sandbox_vcpu_runqueue_wait_seconds_total for vcpu $ix"
	awk -v m="$m" -v a="$x2" 'BEGIN { exit !(m * 1e9 >= a) }' || fail "vcpu $ix: /metrics wait $m s below the API's earlier $x2 ns"
	grep -q "^sandlens_sandbox_vcpu_timeslices_total{sandbox_id=\"$SBX\",vcpu=\"$ix\"} [1-9]" "$SL_LOGDIR/rq-metrics.txt" ||
		fail "no sandlens_sandbox_vcpu_timeslices_total for vcpu $ix"
done
assert_eq "sandbox runqueue wait = sum of its vCPUs" true \
	"$(jq '(.vcpu_runqueue.runqueue_wait_seconds - ([.vcpus[].runqueue_wait_seconds] | add)) | fabs < 1e-6' "$SL_LOGDIR/rq2.json")"
assert_eq "sandbox timeslices = sum of its vCPUs" true \
	"$(jq '.vcpu_runqueue.timeslices == ([.vcpus[].timeslices] | add)' "$SL_LOGDIR/rq2.json")"
promtool check metrics <"$SL_LOGDIR/rq-metrics.txt" >"$SL_LOGDIR/promtool.txt" 2>&1 ||
	{ cat "$SL_LOGDIR/promtool.txt"; fail "promtool check metrics rejected /metrics"; }
kill -USR1 "$VMM" # stop spinning

# --- 1. identity -------------------------------------------------------
VMM=$(pgrep -f "^/bin/cloud-hypervisor --api-socket /run/vc/vm/$SBX/" | head -1)
SHIM=$(pgrep -f "^/bin/containerd-shim-kata-v2 -namespace k8s.io -id $SBX" | head -1)
[ -n "$VMM" ] && [ -n "$SHIM" ] || fail "fake VMM ($VMM) or shim ($SHIM) not found"
want_tids=$(for t in /proc/$VMM/task/*; do
	c=$(cat "$t/comm" 2>/dev/null)
	case "$c" in vcpu[0-9]*) echo "${t##*/}" ;; esac
done | sort -n | paste -sd, -)
note "VMM $VMM (comm $(cat /proc/$VMM/comm)), vCPU tids $want_tids, shim $SHIM"

sl_get "/api/v1/sandboxes/$SBX" >"$SL_LOGDIR/sandbox.json" || fail "GET /api/v1/sandboxes/$SBX failed"
J=$SL_LOGDIR/sandbox.json
assert_eq "runtime" kata "$(jq -r .runtime "$J")"
assert_eq "vmm" cloud-hypervisor "$(jq -r .vmm "$J")"
assert_eq "pod uid" "$POD" "$(jq -r .pod_uid "$J")"
assert_eq "VMM pid" "$VMM" "$(jq -r .vmm_pid "$J")"
assert_eq "vCPU tids" "$want_tids" "$(jq -r '[.vcpus[].tid] | sort | map(tostring) | join(",")' "$J")"
assert_eq "vCPU thread names" "vcpu0,vcpu1" "$(jq -r '[.vcpus[].comm] | sort | join(",")' "$J")"
assert_eq "shim pid" "$SHIM" "$(jq -r '.shim_pids | map(tostring) | join(",")' "$J")"
assert_eq "sandbox cgroup" "$KCG" "$(jq -r .cgroup "$J")"
assert_eq "overhead cgroup" "/kata_overhead/$SBX" "$(jq -r .overhead_cgroup "$J")"
assert_eq "vm dir" "/run/vc/vm/$SBX" "$(jq -r .vm_dir "$J")"

sl_cli sandboxes >"$SL_LOGDIR/sandboxes.txt" || fail "sandlens sandboxes failed"
grep -Eq "^$SBX *kata *cloud-hypervisor *$VMM *2 *[0-9]+\.[0-9]{3}s *$POD" "$SL_LOGDIR/sandboxes.txt" ||
	fail "sandlens sandboxes does not list $SBX with its VMM pid and 2 vCPUs: $(cat "$SL_LOGDIR/sandboxes.txt")"
sl_cli sandboxes "$SBX" >"$SL_LOGDIR/sandbox.txt" || fail "sandlens sandboxes ID failed"
for t in ${want_tids//,/ }; do
	grep -Eq "tid $t +vcpu[01] +rq wait [0-9]+\.[0-9]{3}s \([0-9]+ timeslices" "$SL_LOGDIR/sandbox.txt" ||
		fail "sandlens sandboxes $SBX does not show vCPU tid $t with its runqueue wait: $(cat "$SL_LOGDIR/sandbox.txt")"
done
code=$(curl -s -o /dev/null -w '%{http_code}' -m 10 "$SL_API/api/v1/sandboxes/0123456789abcdef")
assert_eq "unknown sandbox id" 404 "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' -m 10 "$SL_API/api/v1/sandboxes/.bad")
assert_eq "malformed sandbox id" 400 "$code"

# --- 2. the overhead cgroup is not a container ---------------------------
n=0
until sl_get "/api/v1/workloads/$SBX/stats" 2>/dev/null | jq -e '.containers | map(select(.role == "overhead")) | length == 1' >/dev/null; do
	[ $n -lt 100 ] || fail "the sandbox's statistics never listed its overhead cgroup: $(curl -s "$SL_API/api/v1/workloads/$SBX/stats")"
	sleep 0.2
	n=$((n + 1))
done
sl_get /api/v1/workloads >"$SL_LOGDIR/workloads.json"
assert_eq "workloads named by the sandbox id" "container,sandbox" \
	"$(jq --arg s "$SBX" '[.workloads[] | select(.id == $s)] | map(.kind) | sort | join(",")' -r "$SL_LOGDIR/workloads.json")"
sl_get /metrics >"$SL_LOGDIR/metrics.txt"
if grep -q "{id=\"/kata_overhead/$SBX\"" "$SL_LOGDIR/metrics.txt"; then
	fail "the overhead cgroup has container series: $(grep "{id=\"/kata_overhead/$SBX\"" "$SL_LOGDIR/metrics.txt" | head -3)"
fi
grep -q "^sandlens_sandbox_overhead_memory_usage_bytes{sandbox_id=\"$SBX\"" "$SL_LOGDIR/metrics.txt" ||
	fail "no sandlens_sandbox_overhead_memory_usage_bytes for $SBX"
if jq -e --arg p "/kata_overhead/$SBX" '.containers[] | select(.cgroup_path == $p)' \
	<(sl_get "/api/v1/workloads/$POD/stats") >/dev/null; then
	fail "the overhead cgroup is counted in the pod"
fi

# --- 3. stats --sandbox: source and epoch ----------------------------------
sl_cli stats --sandbox "$SBX" --json >"$SL_LOGDIR/stats-sandbox.json" || fail "sandlens stats --sandbox failed"
S=$SL_LOGDIR/stats-sandbox.json
assert_eq "stats --sandbox kind" sandbox "$(jq -r .kind "$S")"
assert_eq "stats --sandbox source" cgroup "$(jq -r .source "$S")"
[ "$(jq -r .cpu_usage_usec "$S")" != null ] || fail "the sandbox's cpu usage is unknown"
EP1=$(jq -r .epoch.id "$S")
[ -n "$EP1" ] && [ "$EP1" != null ] || fail "no epoch id in the sandbox answer"
[ "$(jq -r .epoch.start "$S")" != null ] || fail "no epoch start in the sandbox answer"
assert_eq "members: the sandbox cgroup and its overhead cgroup" 2 "$(jq -r '.containers | length' "$S")"
sl_cli stats --sandbox "$SBX" >"$SL_LOGDIR/stats-sandbox.txt" || fail "sandlens stats --sandbox (table) failed"
grep -q "source cgroup" "$SL_LOGDIR/stats-sandbox.txt" || fail "the table does not say the source"
grep -q "epoch $EP1" "$SL_LOGDIR/stats-sandbox.txt" || fail "the table does not say the epoch"
sl_cli stats --sandbox "$POD" >/dev/null 2>"$SL_LOGDIR/notsandbox.err"
assert_eq "stats --sandbox of a pod uid exits 1" 1 "$?"

# re-create the overhead cgroup: a new epoch (STATS-4, source cgroup)
for d in "${OVH[@]}"; do rmdir "$d" || fail "rmdir $d"; done
for d in "${OVH[@]}"; do mkdir "$d" || fail "mkdir $d"; done
n=0
while :; do
	EP2=$(sl_get "/api/v1/workloads/$SBX/stats" 2>/dev/null | jq -r .epoch.id)
	[ -n "$EP2" ] && [ "$EP2" != null ] && [ "$EP2" != "$EP1" ] && break
	[ $n -lt 100 ] || fail "no new sandbox epoch after re-creating its overhead cgroup (still $EP2)"
	sleep 0.2
	n=$((n + 1))
done
note "epoch $EP1 -> $EP2 after the overhead cgroup was re-created"

# --- the sandbox going away ------------------------------------------------
runc --root "$CT_RUNC_ROOT" kill "$SBX" KILL >/dev/null 2>&1
ct_wait_bg 20 >/dev/null 2>&1
runc --root "$CT_RUNC_ROOT" delete -f "$SBX" >/dev/null 2>&1
n=0
until [ "$(sl_get "/api/v1/sandboxes/$SBX" 2>/dev/null | jq -r '.vmm_pid')" = null ]; do
	[ $n -lt 100 ] || fail "the sandbox still has a VMM after its container was deleted"
	sleep 0.1
	n=$((n + 1))
done
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
