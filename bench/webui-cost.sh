#!/bin/bash
# What an open web UI tab costs the agent (docs/UI.md): the agent's CPU
# (utime+stime of sandlensd, /proc/PID/stat) over windows of SECS seconds
# with, interleaved in each repeat:
#   floor      no client at all;
#   peer       `sandlens top -f` (the CLI's live view, one request a second);
#   containers headless Chromium on #/ (the containers table, every 5 s);
#   container  #/container/<id> as an admin (stats, every series' history,
#              the sched view, module views, events feed, task list);
#   timeline   #/timeline (every event of the node, followed by id).
# One agent and one kubepods runc container (two spinners, an exec a
# second) for the whole run. Prints median (min..max) of the agent's CPU
# share of one CPU per mode and its ratio to the floor. The host is shared
# and Chromium runs on it too: only the agent's own CPU is counted.
#   bench/webui-cost.sh [BUILD_DIR] [REPEATS] [SECS]
set -u
cd "$(dirname "$0")/.." || exit 1
source tests/lib/common.sh
source tests/lib/container.sh
source tests/integration/lib_sched.sh
B=${1:-build}
REPEATS=${2:-3}
SECS=${3:-20}
export SL_BUILD=$B
sl_init
sl_require_agent_env
ct_require
sl_require_cmd node
CHROMIUM=${SL_CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || skip "no Chromium at $CHROMIUM"
NODE_DIR=${SL_WEBUI_NODE_DIR:-/tmp/sl-webui-node}
[ -d "$NODE_DIR/node_modules/puppeteer-core" ] || skip "no puppeteer-core in $NODE_DIR (run tests/integration/t_webui.sh once)"
export NODE_PATH=$NODE_DIR/node_modules

sl_agent_start
printf '%s\n' '#!/bin/sh' '/bin/sl-profprog spin 100000 >/dev/null &' '/bin/sl-profprog spin 100000 >/dev/null &' \
	'while :; do sh -c "sleep 1"; done' >"$SL_TMP/run.sh"
sched_ct bench "$(($(nproc) - 1))" 40000 -- /bin/sh /run.sh
cp "$SL_BUILD/helpers/sl-profprog" "$CT_DIR/rootfs/bin/sl-profprog"
install -m 755 "$SL_TMP/run.sh" "$CT_DIR/rootfs/run.sh"
ct_start_bg
sched_wait "$CT_ID" '.interval.waits > 0' 20 >/dev/null
TOKEN=$(cat "$SL_TOKEN_FILE")
HZ=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' /proc/"$SL_AGENT_PID"/stat; }

run_mode() { # prints the agent's CPU share over SECS s of mode $1
	local t0 t1 pid=
	case $1 in
	floor) ;;
	peer) "$SL_BUILD/sandlens" --api "$SL_API" top -f >/dev/null 2>&1 & pid=$! ;;
	containers) node bench/webui_open.js "$CHROMIUM" "$SL_API/ui/" $((SECS + 8)) "$SL_TMP/prof-$1" & pid=$! ;;
	container) node bench/webui_open.js "$CHROMIUM" "$SL_API/ui/#/container/$CT_ID" $((SECS + 8)) "$SL_TMP/prof-$1" "$TOKEN" & pid=$! ;;
	timeline) node bench/webui_open.js "$CHROMIUM" "$SL_API/ui/#/timeline" $((SECS + 8)) "$SL_TMP/prof-$1" & pid=$! ;;
	esac
	sleep 5 # the page loaded, its polling running
	t0=$(ticks)
	sleep "$SECS"
	t1=$(ticks)
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
	awk -v a="$t0" -v b="$t1" -v hz="$HZ" -v s="$SECS" 'BEGIN { printf "%.5f\n", (b - a) / hz / s }'
}

MODES="floor peer containers container timeline"
for r in $(seq 1 "$REPEATS"); do
	for m in $MODES; do
		v=$(run_mode "$m")
		echo "$m $v" >>"$SL_TMP/rows"
		echo "# repeat $r $m: agent CPU $(awk -v v="$v" 'BEGIN{printf "%.2f%%", v * 100}')"
	done
done
med() { grep "^$1 " "$SL_TMP/rows" | awk '{print $2}' | sort -g | awk '{a[NR]=$1} END {printf "%s %s %s\n", a[int((NR+1)/2)], a[1], a[NR]}'; }
read -r FM _ _ <<<"$(med floor)"
echo "agent CPU share of one CPU, $REPEATS repeats of ${SECS}s per mode, median (min..max), ratio to the floor:"
for m in $MODES; do
	read -r md mn mx <<<"$(med "$m")"
	awk -v m="$m" -v md="$md" -v mn="$mn" -v mx="$mx" -v f="$FM" \
		'BEGIN { printf "  %-10s %6.2f%% (%.2f..%.2f)  x%.2f\n", m, md * 100, mn * 100, mx * 100, (f > 0 ? md / f : 0) }'
done
