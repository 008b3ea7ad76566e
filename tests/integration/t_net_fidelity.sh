#!/bin/bash
# net module fidelity with real packets (docs/NET.md). A veth pair between
# the host and a netns made here (`ip netns add`), a runc container A that
# joins that netns (ct_create --netns), an idle container B in a netns of
# its own. Checks:
#   - retransmits: A sends 3 MiB to a host sink (busybox nc) while an
#     nftables rule in the host netns drops ~10 % of A's data packets
#     (numgen random mod 10 < 1): A's tcp_retransmit_segs + synack
#     retransmits in GET /api/v1/net equal the RetransSegs delta of A's netns
#     (/proc/<pid>/net/snmp Tcp line) within +-2 % (and are > 0); the
#     retransmits are not put in the host series; tcp_retransmit events
#     with A's container id;
#   - drops: the host sends 3 MiB to a sink in A while a rule in A's netns
#     drops ~10 % of it with a counter: A's drops NETFILTER_DROP equal the
#     nft counter's packets within +-2 %; net_drop events with reason
#     NETFILTER_DROP and A's container id, their stack withheld from a
#     reader, present (symbolized) for the admin;
#   - resets: A connects to a closed host port (A receives a reset) and the
#     host to a closed port in A (A's netns sends one): A's resets received
#     >= 1 and resets sent = the OutRsts delta of A's netns;
#   - B (idle) is listed with zero retransmits, resets and drops;
#   - /metrics: the sandlens_net_* families with A's labels, promtool clean;
#   - `sandlens net` shows A.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
sl_init
sl_require_agent_env
sl_require_cmd ip nft curl jq
ct_require

ID_TAG=net$$
NS="sl-$ID_TAG"
VH="slh$$"
VC="slc$$"
TABLE="sl_net_$$"
OCT=$(( ($$ % 200) + 20 ))
HIP="10.213.$OCT.1" CIP="10.213.$OCT.2"

ip netns add "$NS" 2>"$SL_TMP/netns.err" || skip "ip netns add failed: $(cat "$SL_TMP/netns.err")"
sl_on_exit "ip netns del '$NS' 2>/dev/null"
ip link add "$VH" type veth peer name "$VC" 2>"$SL_TMP/veth.err" || skip "veth unavailable: $(cat "$SL_TMP/veth.err")"
sl_on_exit "ip link del '$VH' 2>/dev/null"
ip link set "$VC" netns "$NS" || fail "move $VC into $NS"
ip addr add "$HIP/30" dev "$VH" && ip link set "$VH" up || fail "host side of the veth"
ip netns exec "$NS" sh -c "ip addr add $CIP/30 dev $VC && ip link set $VC up && ip link set lo up" ||
	fail "container side of the veth"
nft add table inet "$TABLE" 2>"$SL_TMP/nft.err" || skip "nftables unavailable: $(cat "$SL_TMP/nft.err")"
sl_on_exit "nft delete table inet '$TABLE' 2>/dev/null"
n=0
until busybox ping -c1 -W1 "$CIP" >/dev/null 2>&1; do
	n=$((n + 1))
	[ $n -lt 10 ] || fail "no ping across the veth $HIP -> $CIP"
	sleep 0.3
done

sl_agent_start "attribution:
  runc_root: $CT_RUNC_ROOT
net:
  event_rate: 2000
  event_burst: 2000"
curl -sf "$SL_API/api/v1/net" >/dev/null || fail "GET /api/v1/net failed (net module not running?)"

ct_create neta plain --netns "/run/netns/$NS" -- /bin/sleep 120
A=$CT_ID
ct_start_bg
ct_wait_running
ct_create netb plain -- /bin/sleep 120
B=$CT_ID
ct_start_bg
ct_wait_running
APID=$(runc --root "$CT_RUNC_ROOT" state "$A" | jq -r .pid)
[ "$(readlink "/proc/$APID/ns/net")" = "$(readlink "/run/netns/$NS" 2>/dev/null || ip netns exec "$NS" readlink /proc/self/ns/net)" ] ||
	note "netns link check: A $(readlink "/proc/$APID/ns/net")"
note "A $A (pid $APID, netns $NS, $CIP), B $B (idle)"

view() { curl -sf "$SL_API/api/v1/net" >"$SL_TMP/net.json" || fail "GET /api/v1/net"; }
field() { jq -r --arg id "$1" "[.containers[] | select(.container_id == \$id) | $2] | add // 0" "$SL_TMP/net.json"; }
snmp() { awk -v f="$2" '/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++) n[i] = $i; h = 1 } else for (i = 1; i <= NF; i++) if (n[i] == f) print $i }' "/proc/$1/net/snmp"; }
settle() { sleep 2.5; view; }

n=0
until view && [ "$(jq --arg a "$A" --arg b "$B" '[.containers[] | select(.container_id == $a or .container_id == $b)] | length' "$SL_TMP/net.json")" = 2 ]; do
	n=$((n + 1))
	[ $n -lt 20 ] || fail "A and B not both in /api/v1/net after 10 s: $(jq -c '[.containers[].container_id]' "$SL_TMP/net.json")"
	sleep 0.5
done
B_DROPS0=$(field "$B" .drops_total)
note "B at start: drops $(jq -c --arg b "$B" '.containers[] | select(.container_id == $b) | .drops' "$SL_TMP/net.json") (its set-up)"
A_NS=$(jq -r --arg a "$A" '.containers[] | select(.container_id == $a) | .netns[0].netns_inode' "$SL_TMP/net.json")
assert_eq "A's netns in the view" "$(stat -Lc %i "/proc/$APID/ns/net")" "$A_NS"

# ---- retransmits: container -> host, 10 % of A's data dropped in the host netns
PORT=$(sl_free_port)
nft add chain inet "$TABLE" in '{ type filter hook input priority 0; }' || fail "nft add chain"
nft add rule inet "$TABLE" in iifname "$VH" tcp dport "$PORT" numgen random mod 10 '<' 1 drop || fail "nft rule (host)"
# the host's sink: python (busybox nc -l ends early when its stdin is at EOF)
python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(1); c, _ = s.accept(); n = 0
while True:
    b = c.recv(65536)
    if not b: break
    n += len(b)
print(n)' "$PORT" >"$SL_TMP/sink.out" &
SINK=$!
sl_on_exit "kill $SINK 2>/dev/null"
sleep 0.3
settle
R0=$(snmp "$APID" RetransSegs)
S0=$(( $(field "$A" .tcp_retransmit_segs) + $(field "$A" .tcp_synack_retransmits) ))
H0=$(field "" .tcp_retransmit_segs)
timeout 50 runc --root "$CT_RUNC_ROOT" exec "$A" /bin/sh -c "dd if=/dev/zero bs=64k count=48 2>/dev/null | /bin/busybox nc $HIP $PORT" ||
	fail "the transfer from A did not complete"
wait "$SINK" 2>/dev/null
assert_eq "bytes the host sink got from A" 3145728 "$(cat "$SL_TMP/sink.out")"
settle
R1=$(snmp "$APID" RetransSegs)
S1=$(( $(field "$A" .tcp_retransmit_segs) + $(field "$A" .tcp_synack_retransmits) ))
H1=$(field "" .tcp_retransmit_segs)
KR=$((R1 - R0)) OURS=$((S1 - S0))
note "retransmits: netns RetransSegs delta $KR, sandlens $OURS (host series +$((H1 - H0)))"
[ "$KR" -gt 0 ] || fail "no retransmits in A's netns (the nft rule dropped nothing?)"
DIFF=$(( OURS > KR ? OURS - KR : KR - OURS ))
[ $((DIFF * 100)) -le $((KR * 2)) ] || fail "A's retransmits $OURS vs RetransSegs delta $KR: off by $DIFF (> 2 %)"
echo "ok - retransmits within 2 % of the netns' RetransSegs: $OURS vs $KR"
[ $((H1 - H0)) -lt "$KR" ] || fail "host series gained $((H1 - H0)) retransmits (A's were $KR)"

# ---- drops: host -> container, 10 % dropped in A's netns with a counter
PORT2=$(sl_free_port)
ip netns exec "$NS" nft add table inet "$TABLE" || fail "nft table in $NS"
ip netns exec "$NS" nft add chain inet "$TABLE" in '{ type filter hook input priority 0; }' || fail "nft chain in $NS"
ip netns exec "$NS" nft add rule inet "$TABLE" in tcp dport "$PORT2" numgen random mod 10 '<' 1 counter drop ||
	fail "nft rule in $NS"
# its stdin must not reach EOF (busybox nc -l stops then): a sleep feeds it
runc --root "$CT_RUNC_ROOT" exec "$A" /bin/sh -c "sleep 40 | /bin/busybox nc -l -p $PORT2 | wc -c" >"$SL_TMP/csink.out" &
CSINK=$!
sl_on_exit "kill $CSINK 2>/dev/null"
sleep 0.5
settle
D0=$(field "$A" '.drops.NETFILTER_DROP // 0')
timeout 50 sh -c "dd if=/dev/zero bs=64k count=48 2>/dev/null | busybox nc $CIP $PORT2" || fail "the transfer to A did not complete"
sleep 1 # the sender's tail (retransmitted after nc closed) arrives
settle
D1=$(field "$A" '.drops.NETFILTER_DROP // 0')
NFT=$(ip netns exec "$NS" nft -j list table inet "$TABLE" | jq '[.nftables[] | .rule? // empty | .expr[] | .counter? // empty | .packets] | add')
OURD=$((D1 - D0))
note "drops: nft counter $NFT packets, sandlens NETFILTER_DROP for A $OURD"
[ "${NFT:-0}" -gt 0 ] || fail "the nft rule in $NS dropped nothing"
DIFF=$(( OURD > NFT ? OURD - NFT : NFT - OURD ))
[ $((DIFF * 100)) -le $((NFT * 2)) ] || fail "A's NETFILTER_DROP $OURD vs nft counter $NFT: off by $DIFF (> 2 %)"
echo "ok - NETFILTER_DROP drops within 2 % of the nft counter: $OURD vs $NFT"

# ---- resets
O0=$(snmp "$APID" OutRsts)
RR0=$(field "$A" .tcp_resets_received) RS0=$(field "$A" .tcp_resets_sent)
CLOSED=$(sl_free_port)
runc --root "$CT_RUNC_ROOT" exec "$A" /bin/busybox nc -w 2 "$HIP" "$CLOSED" </dev/null >/dev/null 2>&1
busybox nc -w 2 "$CIP" "$CLOSED" </dev/null >/dev/null 2>&1
settle
O1=$(snmp "$APID" OutRsts)
RR1=$(field "$A" .tcp_resets_received) RS1=$(field "$A" .tcp_resets_sent)
note "resets: A received +$((RR1 - RR0)), sent +$((RS1 - RS0)); netns OutRsts +$((O1 - O0))"
[ $((RR1 - RR0)) -ge 1 ] || fail "the connect to a closed host port gave A no received reset"
[ $((RS1 - RS0)) -ge 1 ] || fail "the connect to a closed port in A gave A no sent reset"
assert_eq "A's resets sent = its netns' OutRsts delta" "$((O1 - O0))" "$((RS1 - RS0))"
echo "ok - resets counted for A"

# ---- idle B
for f in .tcp_retransmit_segs .tcp_synack_retransmits .tcp_resets_sent .tcp_resets_received; do
	assert_eq "idle container B $f" 0 "$(field "$B" "$f")"
done
# drops since B was up (runc's set-up of its netns may free a packet before)
assert_eq "idle container B drops during the test" 0 "$(( $(field "$B" .drops_total) - B_DROPS0 ))"
echo "ok - idle container shows zeros"

# ---- events
sl_cli events --type net_drop --container "$A" --json --limit 200 >"$SL_TMP/drops.json" 2>"$SL_TMP/ev.err" ||
	fail "sandlens events --type net_drop: $(cat "$SL_TMP/ev.err")"
cp "$SL_TMP/drops.json" "$SL_LOGDIR/"
EV=$(jq -sc '[.[] | if type == "array" then .[] else . end | select(.type == "net_drop" and .reason == "NETFILTER_DROP")]' "$SL_TMP/drops.json")
[ "$(jq length <<<"$EV")" -gt 0 ] || fail "no net_drop event with reason NETFILTER_DROP for A"
ONE=$(jq -c '.[0]' <<<"$EV")
note "a drop event: $(jq -c '{reason, protocol, saddr, sport, daddr, dport, container_id, netns, stack: (.stack[:3])}' <<<"$ONE")"
assert_eq "drop event container" "$A" "$(jq -r .container_id <<<"$ONE")"
assert_eq "drop event dport" "$PORT2" "$(jq -r .dport <<<"$ONE")"
[ "$(jq '.stack | length' <<<"$ONE")" -gt 0 ] || fail "drop event without a stack for the admin"
jq -e '.stack[0] | test("^[a-z_]")' <<<"$ONE" >/dev/null || fail "stack not symbolized: $(jq -c .stack <<<"$ONE")"
curl -q -sf "$SL_API/api/v1/events?type=net_drop&limit=5" >"$SL_TMP/reader.json" || fail "reader GET /api/v1/events"
jq -e '[.events[]? // .[]? | select(.stack != null)] | length == 0' "$SL_TMP/reader.json" >/dev/null ||
	fail "a reader got a stack"
jq -e '[.events[]? // .[]? | select(.stack_withheld == true)] | length > 0' "$SL_TMP/reader.json" >/dev/null ||
	fail "a reader's events do not say stack_withheld"
sl_cli events --type tcp_retransmit --container "$A" --json --limit 50 >"$SL_TMP/rt.json" ||
	fail "sandlens events --type tcp_retransmit"
[ "$(jq -s '[.[] | if type == "array" then .[] else . end | select(.type == "tcp_retransmit")] | length' "$SL_TMP/rt.json")" -gt 0 ] ||
	fail "no tcp_retransmit event for A"
echo "ok - net_drop and tcp_retransmit events for A"

# ---- /metrics and the CLI
curl -sf "$SL_API/metrics" >"$SL_TMP/metrics.txt" || fail "GET /metrics"
cp "$SL_TMP/metrics.txt" "$SL_LOGDIR/"
grep -q "^sandlens_net_tcp_retransmits_total{[^}]*container_id=\"$A\"[^}]*kind=\"data\"" "$SL_TMP/metrics.txt" ||
	fail "no sandlens_net_tcp_retransmits_total for A"
grep -q "^sandlens_net_drops_total{[^}]*container_id=\"$A\"[^}]*reason=\"NETFILTER_DROP\"" "$SL_TMP/metrics.txt" ||
	fail "no sandlens_net_drops_total{reason=NETFILTER_DROP} for A"
grep -q '^sandlens_net_softirq_latency_seconds_bucket{cpu="0",vector="NET_RX"' "$SL_TMP/metrics.txt" ||
	fail "no softirq latency histogram"
grep -q "^sandlens_net_netstat_total{[^}]*container_id=\"$A\"[^}]*counter=\"ListenOverflows\"" "$SL_TMP/metrics.txt" ||
	fail "no netstat counters for A"
grep -q "^sandlens_net_device_dropped_total{[^}]*container_id=\"$A\"[^}]*device=\"$VC\"" "$SL_TMP/metrics.txt" ||
	fail "no device counters for A's $VC"
if command -v promtool >/dev/null; then
	promtool check metrics <"$SL_TMP/metrics.txt" >"$SL_TMP/promtool.out" 2>&1
	grep -i "sandlens_net" "$SL_TMP/promtool.out" && fail "promtool complains about sandlens_net_*"
fi
sl_cli net >"$SL_TMP/cli.txt" 2>&1 || fail "sandlens net failed: $(cat "$SL_TMP/cli.txt")"
cp "$SL_TMP/cli.txt" "$SL_LOGDIR/"
grep -q "${A:0:12}" "$SL_TMP/cli.txt" || fail "sandlens net does not list A: $(cat "$SL_TMP/cli.txt")"
echo "ok - /metrics and sandlens net"

sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
