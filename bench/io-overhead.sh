#!/bin/bash
# Per-event BPF cost of sandlens' io module hooks vs libbpf-tools biolatency
# and a floor program, side by side on the same block load (issue 14 item 5).
#
#   bench/io-overhead.sh [BUILD_DIR] [REPEATS] [SECONDS]
#
# The three attach at the same time: sandlensd (defaults: io module on), 
# `biolatency -D` (per-disk histograms; its issue and complete programs) and
# bench/io_floor.bpf.c (ours: per hook only a timestamp into a hash keyed by
# the request and a per-CPU count; complete looks the timestamp up and
# deletes it). kernel.bpf_stats_enabled=1 makes the kernel count run time
# and runs per program; a figure is Δrun_time_ns / Δrun_cnt of one program
# over one load. Load per repeat (REPEATS, default 5, interleaved: the three
# tools measure the same events): fio 4 KiB random read/write, O_DIRECT,
# libaio depth 8, SECONDS (default 5) on a loop device over a tmpfs file with
# mq-deadline (so requests are inserted), then a buffered read of a file
# written with O_DIRECT (page-cache insertions). Prints per hook the median
# and spread (min..max) of ns/event for each tool and the ratios; with
# SL_BENCH_RESULTS=FILE writes the markdown section for bench/RESULTS.md.
set -u
cd "$(dirname "$0")/.." || exit 1
source tests/lib/common.sh
B=${1:-build}
REPEATS=${2:-5}
SECS=${3:-5}
export SL_BUILD=$B
sl_init
sl_require_root
sl_require_btf
sl_require_cmd fio jq curl bpftool clang losetup
sl_require_build
BIOLAT=$(command -v biolatency || echo /usr/sbin/biolatency)
[ -x "$BIOLAT" ] || skip "libbpf-tools biolatency not installed"

old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
sl_on_exit "echo $old_stats > /proc/sys/kernel/bpf_stats_enabled"
echo 1 >/proc/sys/kernel/bpf_stats_enabled

# the floor program
clang -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Werror -I"$SL_BUILD" -c bench/io_floor.bpf.c \
	-o "$SL_TMP/io_floor.bpf.o" || fail "cannot build the floor program"
cc -O2 -Wall -Wextra -Werror -o "$SL_TMP/io_floor" bench/io_floor.c -lbpf || fail "cannot build its loader"

# the device: a loop over a tmpfs file (fast: many events per second)
SHM=$(mktemp -d /dev/shm/sl-io-bench-io.XXXXXX)
sl_on_exit "rm -rf '$SHM'"
truncate -s 256M "$SHM/disk.img"
LOOP=$(losetup -f --show "$SHM/disk.img") || fail "losetup failed"
sl_on_exit "losetup -d '$LOOP'"
DEV=$(basename "$LOOP")
echo mq-deadline >"/sys/block/$DEV/queue/scheduler" 2>/dev/null || note "no mq-deadline: no inserts"

sl_agent_start
"$BIOLAT" -D 3600 1 >"$SL_TMP/biolat.out" 2>&1 &
BL=$!
sl_on_exit "kill -INT $BL 2>/dev/null"
"$SL_TMP/io_floor" "$SL_TMP/io_floor.bpf.o" >"$SL_TMP/floor.out" 2>&1 &
FL=$!
sl_on_exit "kill -TERM $FL 2>/dev/null"
sleep 2
grep -q ready "$SL_TMP/floor.out" || fail "floor program did not start: $(cat "$SL_TMP/floor.out")"
kill -0 "$BL" 2>/dev/null || fail "biolatency did not start: $(cat "$SL_TMP/biolat.out")"

# "name id" of the programs a process holds
progs_of() {
	local id
	for id in $(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -un); do
		bpftool prog show id "$id" -j 2>/dev/null | jq -r '"\(.name) \(.id)"'
	done
}
progs_of "$SL_AGENT_PID" | grep -E '^io_' >"$SL_TMP/p.sl"
progs_of "$BL" >"$SL_TMP/p.bl"
progs_of "$FL" >"$SL_TMP/p.fl"
# hook -> program id of each tool
pid_of() { awk -v n="$2" '$1 == n {print $2}' "$SL_TMP/p.$1"; }
HOOKS="insert issue complete pagecache_add"
declare -A ID
for h in $HOOKS; do
	case $h in
	pagecache_add) ID[sl,$h]=$(pid_of sl io_pagecache_add); ID[fl,$h]=$(pid_of fl floor_pagecache_add); ID[bl,$h]= ;;
	*) ID[sl,$h]=$(pid_of sl io_rq_$h); ID[fl,$h]=$(pid_of fl floor_rq_$h)
	   ID[bl,$h]=$(awk -v h="$h" '$1 ~ ("^block_rq_" h "(_btf)?$") {print $2; exit}' "$SL_TMP/p.bl") ;;
	esac
done
for h in $HOOKS; do note "hook $h: sandlens ${ID[sl,$h]:--} biolatency ${ID[bl,$h]:--} floor ${ID[fl,$h]:--}"; done
[ -n "${ID[sl,complete]}" ] && [ -n "${ID[fl,complete]}" ] || fail "programs not found"

snap() { # id -> "time cnt"
	[ -n "$1" ] || { echo "0 0"; return; }
	bpftool prog show id "$1" -j | jq -r '"\(.run_time_ns // 0) \(.run_cnt // 0)"'
}

RES="$SL_TMP/res"
: >"$RES"
for r in $(seq "$REPEATS"); do
	declare -A T0 C0
	for t in sl bl fl; do for h in $HOOKS; do read -r T0[$t,$h] C0[$t,$h] < <(snap "${ID[$t,$h]}"); done; done
	fio --name=sl-io-bench --filename="$LOOP" --direct=1 --rw=randrw --bs=4k --ioengine=libaio --iodepth=8 \
		--runtime="$SECS" --time_based --output=/dev/null >/dev/null 2>&1 || fail "fio failed"
	dd if=/dev/urandom of="$SL_TMP/pc.dat" bs=1M count=64 oflag=direct status=none
	dd if="$SL_TMP/pc.dat" of=/dev/null bs=1M status=none
	rm -f "$SL_TMP/pc.dat"
	for t in sl bl fl; do
		for h in $HOOKS; do
			read -r t1 c1 < <(snap "${ID[$t,$h]}")
			dc=$((c1 - ${C0[$t,$h]})); dt=$((t1 - ${T0[$t,$h]}))
			echo "$r $t $h $dt $dc" >>"$RES"
		done
	done
done
cp "$RES" "$SL_LOGDIR/res.txt"

# median / min / max of ns per event; ratios per repeat, then their median
summary=$(awk -v hooks="$HOOKS" '
	function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	{ if ($5 > 0) { ns[$2, $3, $1] = $4 / $5; ev[$2, $3] += $5 } ; rep[$1] = 1 }
	END {
		nr = 0; for (r in rep) nr++
		nh = split(hooks, H, " ")
		printf "| hook | events/run | sandlens ns/event | biolatency -D ns/event | floor ns/event | sandlens/floor | sandlens/biolatency |\n"
		printf "|---|---|---|---|---|---|---|\n"
		for (i = 1; i <= nh; i++) {
			h = H[i]; line = "| " h " | " int(ev["sl", h] / nr)
			for (ti = 1; ti <= 3; ti++) {
				t = ti == 1 ? "sl" : ti == 2 ? "bl" : "fl"; n = 0; lo = 1e18; hi = 0
				for (r = 1; r <= nr; r++) if ((t, h, r) in ns) { v[++n] = ns[t, h, r]; if (v[n] < lo) lo = v[n]; if (v[n] > hi) hi = v[n] }
				if (n) line = line sprintf(" | %.0f (%.0f..%.0f)", med(v, n), lo, hi); else line = line " | -"
			}
			for (q = 1; q <= 2; q++) {
				o = q == 1 ? "fl" : "bl"; n = 0
				for (r = 1; r <= nr; r++) if ((("sl", h, r) in ns) && ((o, h, r) in ns) && ns[o, h, r] > 0) x[++n] = ns["sl", h, r] / ns[o, h, r]
				line = line (n ? sprintf(" | %.2fx", med(x, n)) : " | -")
			}
			print line " |"
		}
	}' "$RES")
echo "$summary"
if [ -n "${SL_BENCH_RESULTS:-}" ]; then
	{
		echo "## io module"
		echo
		echo "\`bench/io-overhead.sh $B $REPEATS $SECS\` ($(date -u +%Y-%m-%d), kernel $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1 /proc/loadavg) at the end; the host was shared with other builds and tests: noisy)."
		echo "Per hook, BPF run time per event (kernel.bpf_stats_enabled) of sandlensd's io programs, libbpf-tools"
		echo "\`biolatency -D\` and a floor program (bench/io_floor.bpf.c: a timestamp into a hash keyed by the"
		echo "request + a per-CPU count; complete: lookup + delete + count), all attached at once, over $REPEATS"
		echo "interleaved repeats of fio 4 KiB randrw O_DIRECT libaio depth 8 for ${SECS} s on a loop device over"
		echo "tmpfs with mq-deadline, then a 64 MiB buffered read of a file written with O_DIRECT. Median"
		echo "(min..max) over the repeats; ratios are the median of the per-repeat ratios. biolatency -D has no"
		echo "insert program (queued time is its -Q) and no page-cache hook."
		echo
		echo "$summary"
	} >"$SL_BENCH_RESULTS"
fi
