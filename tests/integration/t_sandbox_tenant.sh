#!/bin/bash
# Sandbox roles are not the tenant's to claim (break-it, docs/ATTRIBUTION.md
# "Sandboxes"): root inside an ordinary runc container (uid 0, its own PID
# namespace, no user namespace) runs the fake VMM (tests/helpers/sl-fakevmm.c)
# as
#   /bin/firecracker --id tenantspoof              threads "fc_vcpu 0/1"
#   /bin/cloud-hypervisor --api-socket /run/vc/vm/tenantkata/clh-api.sock
#                                                  threads "vcpu0/1" (Kata)
#   /bin/firecracker --id realone                  threads "fc_vcpu 0/1"
# in a kubepods container cgroup, while the host's root runs
# `firecracker --id realone` (one "fc_vcpu 0" thread, started after the
# tenant's: the tenant's is older and has more "vCPUs").
#   1. GET /api/v1/sandboxes lists realone with the host process as its VMM
#      and its one vCPU, and no pod (the tenant's pod uid is not taken);
#   2. tenantspoof and tenantkata are not listed (404), and no sandbox
#      carries the tenant's pod uid or a pid of the container.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
sl_init
sl_require_agent_env
ct_require
[ -x "$SL_BUILD/helpers/sl-fakevmm" ] || fail "$SL_BUILD/helpers/sl-fakevmm not built"

cat >"$SL_TMP/run.sh" <<'EOF2'
#!/bin/sh
/bin/firecracker --id tenantspoof --vcpus 2 --spin 0 &
/bin/cloud-hypervisor --api-socket /run/vc/vm/tenantkata/clh-api.sock --vcpus 2 --spin 0 &
exec /bin/firecracker --id realone --vcpus 2 --spin 0
EOF2
ct_create tenant kubepods --script "$SL_TMP/run.sh" -- /run.sh
POD=$CT_POD_UID
cp "$SL_BUILD/helpers/sl-fakevmm" "$CT_DIR/rootfs/bin/firecracker"
cp "$SL_BUILD/helpers/sl-fakevmm" "$CT_DIR/rootfs/bin/cloud-hypervisor"
[ "$(jq -r '.process.user.uid' "$CT_DIR/config.json")" = 0 ] || fail "the container does not run as uid 0"
jq -e '.linux.namespaces | map(.type) | index("pid") != null and index("user") == null' "$CT_DIR/config.json" >/dev/null ||
	fail "the container is not a runc container with its own PID namespace and no user namespace"

sl_agent_start "attribution:
  runc_root: $CT_RUNC_ROOT"

ct_start_bg
n=0
until [ "$(grep -c "vcpus up" "$CT_DIR/stdout" 2>/dev/null)" = 3 ]; do
	[ $n -lt 200 ] || fail "the tenant's fake VMMs did not start within 20 s: $(cat "$CT_DIR/stdout" "$CT_DIR/stderr")"
	sleep 0.1
	n=$((n + 1))
done
TPIDS=$(pgrep -f "^/bin/(firecracker|cloud-hypervisor) " | paste -sd, -)
for p in ${TPIDS//,/ }; do
	[ "$(awk '/^Uid:/{print $2}' "/proc/$p/status")" = 0 ] || fail "tenant process $p is not uid 0"
	a=$(readlink "/proc/$p/ns/pid") b=$(readlink /proc/$$/ns/pid)
	[ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ] || fail "tenant process $p: PID namespace $a, not other than the host's $b"
done
note "tenant's uid-0 fake VMMs in the container's PID namespace: pids $TPIDS"

mkdir -p "$SL_TMP/host"
cp "$SL_BUILD/helpers/sl-fakevmm" "$SL_TMP/host/firecracker"
"$SL_TMP/host/firecracker" --id realone --vcpus 1 --spin 0 >"$SL_TMP/host.out" &
HOST=$!
sl_on_exit "kill $HOST 2>/dev/null; true"
n=0
until grep -q "vcpus up" "$SL_TMP/host.out" 2>/dev/null; do
	[ $n -lt 100 ] || fail "the host's fake firecracker did not start within 10 s"
	sleep 0.1
	n=$((n + 1))
done
HTID=$(for t in /proc/$HOST/task/*; do [ "$(cat "$t/comm" 2>/dev/null)" = "fc_vcpu 0" ] && echo "${t##*/}"; done)
[ -n "$HTID" ] || fail "no fc_vcpu 0 thread in the host's fake firecracker $HOST"

# --- 1. the real sandbox keeps its VMM and has no pod ------------------------
n=0
until sl_get /api/v1/sandboxes >"$SL_LOGDIR/sandboxes.json" &&
	[ "$(jq -r '.sandboxes[] | select(.id == "realone") | .vmm_pid' "$SL_LOGDIR/sandboxes.json")" = "$HOST" ]; do
	[ $n -lt 50 ] || fail "realone is not listed with the host's VMM $HOST: $(cat "$SL_LOGDIR/sandboxes.json")"
	sleep 0.2
	n=$((n + 1))
done
J=$SL_LOGDIR/realone.json
jq '.sandboxes[] | select(.id == "realone")' "$SL_LOGDIR/sandboxes.json" >"$J"
assert_eq "realone runtime" firecracker "$(jq -r .runtime "$J")"
assert_eq "realone vCPU tids" "$HTID" "$(jq -r '[.vcpus[].tid] | map(tostring) | join(",")' "$J")"
assert_eq "realone pod uid (not the tenant's)" null "$(jq -r .pod_uid "$J")"

# --- 2. the tenant's claims are not listed ----------------------------------
for id in tenantspoof tenantkata; do
	code=$(curl -s -o "$SL_LOGDIR/$id.json" -w '%{http_code}' -m 10 "$SL_API/api/v1/sandboxes/$id")
	assert_eq "GET /api/v1/sandboxes/$id (a tenant's root in its container)" 404 "$code"
done
assert_eq "sandboxes naming the tenant's pod" 0 \
	"$(jq --arg p "$POD" '[.sandboxes[] | select(.pod_uid == $p)] | length' "$SL_LOGDIR/sandboxes.json")"
assert_eq "sandboxes whose VMM is a tenant process" 0 \
	"$(jq --arg t "$TPIDS" '($t | split(",") | map(tonumber)) as $tp | [.sandboxes[] | select(.vmm_pid as $v | $tp | index($v))] | length' "$SL_LOGDIR/sandboxes.json")"
note "listed: $(jq -r '[.sandboxes[].id] | join(",")' "$SL_LOGDIR/sandboxes.json")"

kill "$HOST" 2>/dev/null
runc --root "$CT_RUNC_ROOT" kill "$CT_ID" KILL >/dev/null 2>&1
ct_wait_bg 20 >/dev/null 2>&1
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
