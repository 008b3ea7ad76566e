#!/bin/bash
# BPF cost per event of each net module hook under load (issue 14, item 5).
#
#   bench/net-overhead.sh [BUILD_DIR] [REPEATS] [MIB]
#
# Load: a veth pair into a netns made here; from the netns, MIB MiB (default
# 64) to a host sink (python) while an nftables rule in the host netns drops
# ~10 % of it (kfree_skb NETFILTER_DROP, retransmits in the netns, NET_RX
# softirqs), then 200 connects to a closed host port (resets both ways).
# In the same run, on the same events, three sets of programs are attached:
#   - the agent's net_* programs (sandlensd, net module only besides proc);
#   - the floor: bench/net_floor.bpf.c, one per-CPU array increment on each
#     of the same tracepoints (loaded by bench/net_floor_load.c);
#   - the reference: libbpf-tools `softirqs` (per-packet softirq time, its
#     own entry/exit programs; tcpconnlat needs kprobes, absent here).
# kernel.bpf_stats_enabled=1; per program Δrun_time_ns / Δrun_cnt over the
# load. REPEATS (default 5) times; median and spread (min..max). With
# SL_BENCH_RESULTS=FILE writes the bench/RESULTS.md section to FILE. The
# host is shared (other helpers' builds and tests): per-run times are less
# sensitive to that than wall clock, but not immune (cache, SMT).
set -u
cd "$(dirname "$0")/.." || exit 1
source tests/lib/common.sh
B=${1:-build}
REPEATS=${2:-5}
MIB=${3:-64}
UDP=${SL_BENCH_UDP:-100000} # datagrams of the UDP blast
export SL_BUILD=$B
sl_init
sl_require_root
sl_require_btf
sl_require_cmd jq curl bpftool nft ip python3 clang busybox
sl_require_build
SOFTIRQS=/usr/sbin/softirqs
[ -x "$SOFTIRQS" ] || skip "libbpf-tools softirqs not installed"

# the floor object and its loader
clang -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -I"$B" -c bench/net_floor.bpf.c -o "$SL_TMP/net_floor.bpf.o" ||
	fail "cannot build bench/net_floor.bpf.c"
cc -O2 -Wall -Wextra -Werror -o "$SL_TMP/net_floor_load" bench/net_floor_load.c -lbpf || fail "cannot build the loader"

old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
sl_on_exit "echo $old_stats > /proc/sys/kernel/bpf_stats_enabled"
echo 1 >/proc/sys/kernel/bpf_stats_enabled

NS="sl-netbench$$" VH="sbh$$" VC="sbc$$" TABLE="sl_netbench_$$"
HIP=10.214.9.1 CIP=10.214.9.2
ip netns add "$NS" || skip "ip netns add failed"
sl_on_exit "ip netns del '$NS' 2>/dev/null"
ip link add "$VH" type veth peer name "$VC" || skip "veth unavailable"
sl_on_exit "ip link del '$VH' 2>/dev/null"
ip link set "$VC" netns "$NS"
ip addr add "$HIP/30" dev "$VH" && ip link set "$VH" up
ip netns exec "$NS" sh -c "ip addr add $CIP/30 dev $VC && ip link set $VC up && ip link set lo up"
nft add table inet "$TABLE" || skip "nftables unavailable"
sl_on_exit "nft delete table inet '$TABLE' 2>/dev/null"
nft add chain inet "$TABLE" in '{ type filter hook input priority 0; }'
PORT=$(sl_free_port)
nft add rule inet "$TABLE" in iifname "$VH" tcp dport "$PORT" numgen random mod 10 '<' 1 drop
UPORT=$(sl_free_port)
nft add rule inet "$TABLE" in iifname "$VH" udp dport "$UPORT" drop

# prog ids of a process (by its fdinfo) whose names match an ERE
progs_of() {
	local id
	for id in $(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -un); do
		bpftool prog show id "$id" -j 2>/dev/null | jq -r --arg re "$2" 'select(.name | test($re)) | "\(.id) \(.name)"'
	done
}
# "name time cnt" per prog id
snap() {
	local id name
	while read -r id name; do
		bpftool prog show id "$id" -j | jq -r --arg n "$name" '"\($n) \(.run_time_ns // 0) \(.run_cnt // 0)"'
	done <<<"$1"
}

load() {
	rm -f "$SL_TMP/sink.out" # a stale "ready" would race the new sink
	python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(1); print("ready", flush=True); c, _ = s.accept()
while c.recv(1 << 16): pass' "$PORT" >"$SL_TMP/sink.out" &
	local sink=$! n=0
	until grep -q ready "$SL_TMP/sink.out" 2>/dev/null; do
		n=$((n + 1)); [ $n -lt 100 ] || fail "the sink did not start"; sleep 0.1
	done
	if ! ip netns exec "$NS" sh -c "dd if=/dev/zero bs=1M count=$MIB 2>/dev/null | busybox nc $HIP $PORT"; then
		kill "$sink" 2>/dev/null
		fail "the transfer to the sink failed"
	fi
	wait "$sink"
	# a UDP blast, every datagram dropped by the rule: kfree_skb at packet rate
	ip netns exec "$NS" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); a = (sys.argv[1], int(sys.argv[2])); b = bytes(64)
for _ in range(int(sys.argv[3])): s.sendto(b, a)' "$HIP" "$UPORT" "$UDP" || fail "the UDP blast failed"
	local closed i
	closed=$(sl_free_port)
	for i in $(seq 200); do ip netns exec "$NS" busybox nc -w 1 "$HIP" "$closed" </dev/null >/dev/null 2>&1; done
}

: >"$SL_TMP/rows"
# one phase under an agent with config $2: rows "rep phase name dtime dcnt"
phase() {
	local r=$1 ph=$2 cfg=$3
	sl_agent_start "sched:
  enabled: false
mem:
  enabled: false
$cfg"
	"$SL_TMP/net_floor_load" "$SL_TMP/net_floor.bpf.o" >"$SL_TMP/floor.out" &
	FLOOR=$!
	"$SOFTIRQS" 3600 1 >/dev/null &
	SIRQ=$!
	for _ in $(seq 50); do grep -q ready "$SL_TMP/floor.out" 2>/dev/null && break; sleep 0.1; done
	sleep 1
	P_NET=$(progs_of "$SL_AGENT_PID" '^net_')
	P_FLOOR=$(progs_of "$FLOOR" '^floor_')
	P_SIRQ=$(progs_of "$SIRQ" '.')
	[ "$(wc -l <<<"$P_NET")" -ge 7 ] || fail "net programs not found: $P_NET"
	[ "$(wc -l <<<"$P_FLOOR")" -ge 7 ] || fail "floor programs not found: $P_FLOOR"
	A0=$(snap "$P_NET"; snap "$P_FLOOR"; snap "$P_SIRQ")
	load
	A1=$(snap "$P_NET"; snap "$P_FLOOR"; snap "$P_SIRQ")
	kill "$FLOOR" "$SIRQ" 2>/dev/null
	wait "$FLOOR" "$SIRQ" 2>/dev/null
	sl_agent_stop >/dev/null
	join <(sort <<<"$A0") <(sort <<<"$A1") | awk -v r="$r" -v ph="$ph" '{print r, ph, $1, $4 - $2, $5 - $3}' |
		tee -a "$SL_TMP/rows"
}
for r in $(seq "$REPEATS"); do
	phase "$r" events "" # the defaults: events rate-limited to 20/s per kind, stacks
	phase "$r" count "net:
  drop_events: false
  retransmit_events: false"
done

med() { # median (min..max) of column $1 values on stdin
	sort -g | awk '{v[NR] = $1} END { if (!NR) { printf "-"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.0f (%.0f..%.0f)", m, v[1], v[NR]}'
}
ns_of() { awk -v p="$1" -v n="$2" '$2 == p && $3 == n && $5 > 0 {print $4 / $5}' "$SL_TMP/rows" | med; }
cnt_of() { awk -v p="$1" -v n="$2" '$2 == p && $3 == n {print $5}' "$SL_TMP/rows" | med; }
ratio_of() { # per repeat net/floor within phase $1
	awk -v p="$1" -v a="$2" -v b="$3" '$2 != p {next} $3 == a && $5 > 0 {x[$1] = $4 / $5} $3 == b && $5 > 0 {y[$1] = $4 / $5}
		END {for (r in x) if (r in y && y[r] > 0) printf "%.2f\n", x[r] / y[r]}' "$SL_TMP/rows" |
		sort -g | awk '{v[NR] = $1} END { if (!NR) { printf "-"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.2f (%.2f..%.2f)", m, v[1], v[NR]}'
}
TABLE_ROWS=""
for h in tcp_retransmit tcp_retransmit_synack tcp_send_reset tcp_receive_reset kfree_skb softirq_raise softirq_entry; do
	TABLE_ROWS+="| $h | $(cnt_of count "net_$h") | $(ns_of events "net_$h") | $(ns_of count "net_$h") | $(ns_of count "floor_$h") | $(ratio_of events "net_$h" "floor_$h") | $(ratio_of count "net_$h" "floor_$h") |"$'\n'
done
SIRQ_ROWS=""
for n in $(awk '$3 !~ /^(net_|floor_)/ {print $3}' "$SL_TMP/rows" | sort -u); do
	SIRQ_ROWS+="| softirqs \`$n\` | $(cnt_of count "$n") | $(ns_of count "$n") | $(ratio_of count "$n" floor_softirq_entry) |"$'\n'
done
HDR="| hook | runs (count phase) | net ns/run, defaults (events) | net ns/run, counting only | floor ns/run | net/floor, defaults | net/floor, counting only |
|---|---|---|---|---|---|---|"
cat <<OUT
net module, $REPEATS repeats of a $MIB MiB transfer with 10 % dropped, $UDP dropped datagrams, 200 resets (median (min..max)):
$HDR
$TABLE_ROWS
reference (libbpf-tools softirqs, same run):
| program | runs | ns/run | / floor softirq_entry |
|---|---|---|---|
$SIRQ_ROWS
OUT
if [ -n "${SL_BENCH_RESULTS:-}" ]; then
	cat >"$SL_BENCH_RESULTS" <<OUT
## net module: BPF ns per event per hook (bench/net-overhead.sh)

$(date -u +%Y-%m-%d), kernel $(uname -r), $(nproc) CPUs, shared host (other helpers building and testing).
$REPEATS repeats; each: one agent (net + proc; sched and mem off), the floor (bench/net_floor.bpf.c:
one per-CPU array increment on each same tracepoint) and libbpf-tools \`softirqs\` attached at once, a
$MIB MiB transfer from a netns over a veth with ~10 % of it dropped by nftables in the host netns,
then 200 connects to a closed port. \`kernel.bpf_stats_enabled=1\`; ns per program run =
Δrun_time_ns / Δrun_cnt over the load. Median (min..max) over repeats; net/floor per repeat.

$HDR
$TABLE_ROWS
Reference, same run (libbpf-tools \`softirqs\`, per-softirq time, its own programs):

| program | runs | ns/run | / floor softirq_entry |
|---|---|---|---|
$SIRQ_ROWS
OUT
fi
