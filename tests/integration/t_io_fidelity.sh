#!/bin/bash
# io module (docs/IO.md) on a real slow device the test builds: a loop
# device over the one file of sl-slowfs (tests/fuse/sl-slowfs.c, a FUSE
# filesystem whose every read/write sleeps SL_IO_DELAY_US, default 2000 us,
# opened direct_io), I/O scheduler mq-deadline (so requests are inserted:
# a queue stage). A runc container (plain, cgroup /sandlens-test/<id>) gets
# the device node and reads/writes it with O_DIRECT dd (IO_READS x 4 KiB,
# IO_WRITES x 8 KiB); an idle neighbour container sleeps. Checks:
#   - GET /api/v1/io has the container's read and write series on the
#     loop disk with requests = the dd counts and bytes = the dd bytes
#     (the request belongs to its blkcg: on this hybrid host a v1 blkio
#     cgroup, mapped to the container: docs/IO.md "Attribution");
#   - request counts of the disk (every series of it) over the window
#     equal the deltas of /sys/block/<loop>/stat reads/writes completed
#     (a loaded host can make every request-keyed BPF tool miss a request's
#     tracepoint pair now and then: at most 1 % is allowed, and then
#     biolatency must have missed the same: its total equals ours);
#   - the device-stage distribution of the disk over the window agrees
#     with libbpf-tools `biolatency -D -d <loop>` run over the same window:
#     every bucket within +-5 % (at least +-2: each tool stamps the request
#     itself, an interrupt between the two programs can move one near a
#     bucket bound), the same total;
#   - the queue stage is populated (mq-deadline inserts) and every request
#     of the container is >= the FUSE delay at the device;
#   - with io.slow_io_threshold 1ms, slow_io events of the container come
#     back through the API (disk major:minor and name, op, bytes, the
#     submitting dd task) and the CLI (`sandlens events --type slow_io`);
#   - `sandlens io` shows the container's row; /metrics has
#     sandlens_io_device_seconds_count and sandlens_io_requests_total of it
#     (equal to the API), sandlens_io_disk_completed_total of the disk;
#     `promtool check metrics` is clean;
#   - the idle neighbour has no io series (API, /metrics);
#   - a buffered 1 MiB read of the disk by the container afterwards adds
#     >= 256 pages to the page cache and a synchronous readahead, both
#     counted for the container (filemap/readahead tracepoints), none for
#     the neighbour.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
sl_init
sl_require_agent_env
sl_require_cmd losetup fusermount3 pkg-config cc
ct_require
[ -x /usr/sbin/biolatency ] || command -v biolatency >/dev/null || skip "libbpf-tools biolatency not installed"
BIOLAT=$(command -v biolatency || echo /usr/sbin/biolatency)
pkg-config --exists fuse3 || skip "libfuse3-dev not installed (pkg-config fuse3)"
[ -c /dev/fuse ] || skip "no /dev/fuse"

READS=${IO_READS:-300}
WRITES=${IO_WRITES:-100}
DELAY=${SL_IO_DELAY_US:-2000}

# ---- the slow device ----
cc -O2 -Wall -Wextra -o "$SL_TMP/sl-slowfs" "$SL_ROOT/tests/fuse/sl-slowfs.c" $(pkg-config --cflags --libs fuse3) ||
	fail "cannot build sl-slowfs"
MNT="$SL_TMP/slowfs-io-$$"
mkdir -p "$MNT"
truncate -s 32M "$SL_TMP/backing.img"
SL_SLOWFS_DELAY_US=$DELAY "$SL_TMP/sl-slowfs" "$SL_TMP/backing.img" "$MNT" >"$SL_LOGDIR/slowfs.log" 2>&1 &
FUSE_PID=$!
sl_on_exit "fusermount3 -u '$MNT' 2>/dev/null; kill $FUSE_PID 2>/dev/null"
for _ in $(seq 50); do [ -f "$MNT/disk" ] && break; sleep 0.1; done
[ -f "$MNT/disk" ] || fail "sl-slowfs did not mount: $(cat "$SL_LOGDIR/slowfs.log")"
LOOP=$(losetup -f --show "$MNT/disk") || fail "losetup over the FUSE file failed"
sl_on_exit "losetup -d '$LOOP'"
DEV=$(basename "$LOOP")
MAJ=$(cut -d: -f1 "/sys/block/$DEV/dev")
MIN=$(cut -d: -f2 "/sys/block/$DEV/dev")
echo mq-deadline >"/sys/block/$DEV/queue/scheduler" 2>/dev/null || note "mq-deadline not available: no queue stage"
note "slow device $LOOP ($MAJ:$MIN) over sl-slowfs, ${DELAY} us per request"

sl_agent_start "io:
  slow_io_threshold: 1ms
  slow_io_rate: 1000
  slow_io_burst: 1000"
sl_get /api/v1/io >/dev/null

# ---- containers ----
cat >"$SL_TMP/io.sh" <<EOF
#!/bin/sh
while [ ! -e /go ]; do sleep 0.1; done
dd if=/dev/sldisk of=/dev/null bs=4096 count=$READS iflag=direct 2>/dev/null
dd if=/dev/zero of=/dev/sldisk bs=8192 count=$WRITES oflag=direct seek=1024 2>/dev/null
echo done
while [ ! -e /go2 ]; do sleep 0.1; done
dd if=/dev/sldisk of=/dev/null bs=65536 count=16 skip=64 2>/dev/null
echo done2
exec sleep 600
EOF
ct_create ioidle kubepods -- /bin/sleep 600
IDLE_ID=$CT_ID
ct_start_bg
ct_wait_running
ct_create iodd kubepods --script "$SL_TMP/io.sh" \
	--resources "{\"devices\":[{\"allow\":true,\"type\":\"b\",\"major\":$MAJ,\"minor\":$MIN,\"access\":\"rwm\"}]}" -- /run.sh
jq --argjson maj "$MAJ" --argjson min "$MIN" \
	'.linux.devices = ((.linux.devices // []) + [{path: "/dev/sldisk", type: "b", major: $maj, minor: $min, fileMode: 432, uid: 0, gid: 0}])' \
	"$CT_DIR/config.json" >"$CT_DIR/config.json.new" && mv "$CT_DIR/config.json.new" "$CT_DIR/config.json"
DD_ID=$CT_ID
ct_start_bg
ct_wait_running
note "dd container $DD_ID, idle neighbour $IDLE_ID"

# settle: nothing else touches the fresh loop device (udev probes done)
command -v udevadm >/dev/null && udevadm settle -t 5 2>/dev/null
sleep 1

# ---- the window ----
# one long interval, ended with SIGINT once the dd is done (biolatency then
# prints its histogram and exits): the same window however slow the host
"$BIOLAT" -D -d "$DEV" 300 1 >"$SL_TMP/biolat.txt" 2>"$SL_LOGDIR/biolat.err" &
BL_PID=$!
sl_on_exit "kill $BL_PID 2>/dev/null"
for _ in $(seq 50); do grep -q Tracing "$SL_TMP/biolat.txt" 2>/dev/null && break; sleep 0.1; done
sleep 2.5 # biolatency attached; two agent ticks so the "before" snapshot is fresh
read -r -a ST0 <"/sys/block/$DEV/stat"
sl_get /api/v1/io >"$SL_TMP/io0.json"
touch "$CT_DIR/rootfs/go"
n=0
until grep -q done "$CT_DIR/stdout" 2>/dev/null; do
	sleep 0.2
	n=$((n + 1))
	[ $n -lt 300 ] || fail "dd in the container did not finish in 60 s: $(cat "$CT_DIR/stderr")"
done
sleep 2.5
read -r -a ST1 <"/sys/block/$DEV/stat"
sl_get /api/v1/io >"$SL_TMP/io1.json"
kill -INT "$BL_PID"
wait "$BL_PID"
cp "$SL_TMP/io0.json" "$SL_TMP/io1.json" "$SL_TMP/biolat.txt" "$SL_LOGDIR/"

# ---- the disk over the window vs /sys/block/<dev>/stat ----
disk_req() { # file op -> Σ requests of every series on the disk
	jq --arg d "$MAJ:$MIN" --arg op "$2" '[.series[] | select(.devnum == $d and .op == $op) | .requests] | add // 0' "$1"
}
DR=$(($(disk_req "$SL_TMP/io1.json" read) - $(disk_req "$SL_TMP/io0.json" read)))
DW=$(($(disk_req "$SL_TMP/io1.json" write) - $(disk_req "$SL_TMP/io0.json" write)))
SR=$((ST1[0] - ST0[0]))
SW=$((ST1[4] - ST0[4]))
note "window: sandlens read $DR write $DW; /sys/block/$DEV/stat read $SR write $SW"
for k in no_issue reissue partial start_full hist_full merged; do
	note "kernel $k over the window: $(($(jq ".accounting.$k" "$SL_TMP/io1.json") - $(jq ".accounting.$k" "$SL_TMP/io0.json")))"
done
command -v bpftool >/dev/null && bpftool prog show 2>/dev/null | grep -A3 -E "name (io_rq_|handle__block|block_rq)" >"$SL_LOGDIR/progs.txt"
# Requests the kernel counted and no tracing tool saw: on a loaded host a
# request's issue/complete pair is now and then missed by every BPF tool
# keyed by the request (biolatency -D misses the same ones: its total must
# equal ours, checked below). At most 1 % of the window, else exact.
LOST_R=$((SR - DR))
LOST_W=$((SW - DW))
for l in "$LOST_R:$SR:reads" "$LOST_W:$SW:writes"; do
	IFS=: read -r lost tot what <<<"$l"
	[ "$lost" -ge 0 ] || fail "$what: sandlens counted more than /sys/block/$DEV/stat ($((-lost)) more)"
	[ $((lost * 100)) -le "$tot" ] || fail "$what: sandlens missed $lost of $tot requests /sys/block/$DEV/stat counted (> 1 %)"
	if [ "$lost" = 0 ]; then echo "ok - $what vs /sys/block/$DEV/stat = $tot"; else
		note "$what: $lost of $tot not seen by the tracepoint pair (must be missed by biolatency too)"; fi
done

# ---- the container's series ----
sel() { # file op -> field of the container's series on the disk
	jq --arg id "$DD_ID" --arg d "$MAJ:$MIN" --arg op "$2" "[.series[] | select(.container_id == \$id and .devnum == \$d and .op == \$op) | $3] | add // 0" "$1"
}
R=$(sel "$SL_TMP/io1.json" read .requests)
W=$(sel "$SL_TMP/io1.json" write .requests)
RB=$(sel "$SL_TMP/io1.json" read .bytes)
WB=$(sel "$SL_TMP/io1.json" write .bytes)
note "container $DD_ID on $DEV: read $R requests $RB bytes, write $W requests $WB bytes"
# only the container does I/O on the disk: its requests are the dd's,
# less what the kernel counted and no tool saw (above)
assert_eq "container read requests" $((READS - LOST_R)) "$R"
assert_eq "container write requests" $((WRITES - LOST_W)) "$W"
assert_eq "container read bytes" $(((READS - LOST_R) * 4096)) "$RB"
assert_eq "container write bytes" $(((WRITES - LOST_W) * 8192)) "$WB"
QN=$(sel "$SL_TMP/io1.json" read .queue.count)
[ "$QN" -gt 0 ] || note "no queue stage counted (scheduler: $(cat /sys/block/$DEV/queue/scheduler))"
# every device time >= the FUSE delay: nothing in slots <= DELAY/2
LOW=$(jq --arg id "$DD_ID" --arg d "$MAJ:$MIN" --argjson k "$(awk -v d="$DELAY" 'BEGIN{k=0; while (2^k < d/2) k++; print k}')" \
	'[.series[] | select(.container_id == $id and .devnum == $d) | .device_stage.buckets[0:$k] | add] | add // 0' "$SL_TMP/io1.json")
assert_eq "container requests faster than half the FUSE delay" 0 "$LOW"
# the blkcg on this host
HID=$(awk '$1 == "blkio" {print $2}' /proc/cgroups)
note "blkio hierarchy id $HID (0 or absent: pure v2)"

# ---- device-stage distribution vs biolatency -D ----
jq -r --arg d "$MAJ:$MIN" '[.series[] | select(.devnum == $d) | .device_stage.buckets] |
	transpose | map(add // 0) | @tsv' "$SL_TMP/io0.json" >"$SL_TMP/b0"
jq -r --arg d "$MAJ:$MIN" '[.series[] | select(.devnum == $d) | .device_stage.buckets] |
	transpose | map(add // 0) | @tsv' "$SL_TMP/io1.json" >"$SL_TMP/b1"
grep -q "disk = $DEV" "$SL_TMP/biolat.txt" || fail "biolatency printed no histogram for $DEV: $(cat "$SL_TMP/biolat.txt")"
# biolatency rows "low -> high : count": low 2^i us (row 0: 0 -> 1); our slot
# k (2^(k-1), 2^k] us is its row low = 2^(k-1) (slot 0: row 0 -> 1)
awk -v b0="$SL_TMP/b0" -v b1="$SL_TMP/b1" '
	BEGIN {
		getline l0 < b0; getline l1 < b1
		n0 = split(l0, a0, "\t"); n1 = split(l1, a1, "\t")
		for (k = 1; k <= n1; k++) ours[k - 1] = a1[k] - (k <= n0 ? a0[k] : 0)
	}
	$2 == "->" && $4 == ":" { lo = $1; k = lo == 0 ? 0 : int(log(lo) / log(2) + 1.5); theirs[k] += $5 }
	END {
		bad = 0
		for (k = 0; k < 26; k++) {
			o = ours[k] + 0; t = theirs[k] + 0
			if (o == 0 && t == 0) continue
			# 5 %, at least 2: the two programs take their own timestamps,
			# an interrupt between them (a loaded host) moves a request
			# near a bucket bound to the next bucket in one of them
			tol = t * 0.05; if (tol < 2) tol = 2
			d = o - t; if (d < 0) d = -d
			mark = (d > tol) ? "  <-- off" : ""
			printf "# slot %2d (<= %d us): sandlens %d, biolatency %d%s\n", k, 2^k, o, t, mark
			if (d > tol) bad++
			so += o; st += t
		}
		printf "# total: sandlens %d, biolatency %d\n", so, st
		if (st == 0) { print "not ok - biolatency counted nothing"; exit 1 }
		if (so != st) { print "not ok - totals differ"; exit 1 }
		exit bad ? 1 : 0
	}' "$SL_TMP/biolat.txt" || fail "device-stage buckets differ from biolatency -D by more than 5 %"
echo "ok - device-stage buckets within 5 % of biolatency -D"

# ---- slow_io events ----
EV=$(sl_wait_events "type=slow_io&container=$DD_ID&limit=100" \
	"map(select(.container_id == \"$DD_ID\" and .disk == \"$MAJ:$MIN\")) | .[0]" 10)
note "slow_io: $EV"
assert_eq "slow_io disk_name" "$DEV" "$(jq -r .disk_name <<<"$EV")"
assert_eq "slow_io subject" cgroup "$(jq -r .subject_kind <<<"$EV")"
assert_eq "slow_io blkcg container" "$DD_ID" "$(jq -r .blkcg.container_id <<<"$EV")"
assert_eq "slow_io submitter" dd "$(jq -r .task.comm <<<"$EV")"
assert_eq "slow_io submitter's container" "$DD_ID" "$(jq -r .task.container_id <<<"$EV")"
case "$(jq -r .op <<<"$EV")" in read | write) ;; *) fail "slow_io op $(jq -r .op <<<"$EV")" ;; esac
[ "$(jq -r '.device_ns' <<<"$EV")" -ge $((DELAY * 1000)) ] || fail "slow_io device_ns below the FUSE delay"
sl_cli events --type slow_io --container "$DD_ID" >"$SL_TMP/cli-events.txt" 2>&1 ||
	sl_cli events --type slow_io >"$SL_TMP/cli-events.txt" 2>&1 || fail "sandlens events --type slow_io failed"
cp "$SL_TMP/cli-events.txt" "$SL_LOGDIR/"
grep "slow_io" "$SL_TMP/cli-events.txt" | grep -q "$DEV($MAJ:$MIN)" || fail "no slow_io row for $DEV in the CLI"

# ---- CLI view, /metrics ----
sl_cli io >"$SL_TMP/cli-io.txt" 2>&1 || fail "sandlens io failed: $(cat "$SL_TMP/cli-io.txt")"
cp "$SL_TMP/cli-io.txt" "$SL_LOGDIR/"
grep "${DD_ID:0:12}" "$SL_TMP/cli-io.txt" | grep -q "$DEV" || fail "sandlens io shows no row of $DD_ID on $DEV"
curl -sf "$SL_API/metrics" >"$SL_TMP/metrics.txt"
cp "$SL_TMP/metrics.txt" "$SL_LOGDIR/"
PR=$(sl_metric sandlens_io_requests_total "container_id=\"$DD_ID\",device=\"$DEV\",op=\"read\"")
PC=$(sl_metric sandlens_io_device_seconds_count "container_id=\"$DD_ID\",device=\"$DEV\",op=\"read\"")
assert_eq "/metrics requests_total read" "$R" "$PR"
assert_eq "/metrics device_seconds_count read" "$R" "$PC"
PD=$(sl_metric sandlens_io_disk_completed_total "device=\"$DEV\",op=\"read\"")
assert_eq "/metrics disk_completed_total read = /sys/block stat" "${ST1[0]}" "$PD"
IDLE_SERIES=$(grep -c "^sandlens_io_[a-z_]*{[^}]*container_id=\"$IDLE_ID\"" "$SL_TMP/metrics.txt")
IDLE_API=$(jq --arg id "$IDLE_ID" '[.series[], .pagecache[] | select(.container_id == $id)] | length' "$SL_TMP/io1.json")
assert_eq "idle neighbour io series in /metrics" 0 "$IDLE_SERIES"
assert_eq "idle neighbour io series in the API" 0 "$IDLE_API"
# ---- above the block layer: a buffered read (page cache, readahead) ----
touch "$CT_DIR/rootfs/go2"
n=0
until grep -q done2 "$CT_DIR/stdout" 2>/dev/null; do
	sleep 0.2
	n=$((n + 1))
	[ $n -lt 100 ] || fail "buffered dd did not finish in 20 s"
done
sleep 2.5
sl_get /api/v1/io >"$SL_TMP/io2.json"
cp "$SL_TMP/io2.json" "$SL_LOGDIR/"
PC=$(jq --arg id "$DD_ID" '[.pagecache[] | select(.container_id == $id) | .pagecache_added_pages] | add // 0' "$SL_TMP/io2.json")
RA=$(jq --arg id "$DD_ID" '[.pagecache[] | select(.container_id == $id) | .readahead_sync] | add // 0' "$SL_TMP/io2.json")
note "buffered 1 MiB read: pages added $PC, sync readahead $RA"
[ "$PC" -ge 256 ] || fail "the container's buffered 1 MiB read added $PC pages to the page cache (< 256)"
[ "$RA" -ge 1 ] || fail "no synchronous readahead counted for the container's buffered read"
IDLE_PC=$(jq --arg id "$IDLE_ID" '[.pagecache[] | select(.container_id == $id)] | length' "$SL_TMP/io2.json")
assert_eq "idle neighbour page-cache series" 0 "$IDLE_PC"
if command -v promtool >/dev/null; then
	promtool check metrics <"$SL_TMP/metrics.txt" >"$SL_TMP/promtool.txt" 2>&1 ||
		{ cat "$SL_TMP/promtool.txt"; fail "promtool check metrics"; }
	echo "ok - promtool check metrics clean"
fi
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
