#!/bin/bash
# Files other users plant (issue 8 findings 3 and 4; docs/PROFILING.md
# "Files from other users", docs/CLI.md "profile"):
#  - a FIFO at /tmp/perf-<pid>.map of a profiled process (any host user can
#    make one) used to block the symbolizer in open() with the lock every
#    task shares held: the profile and every later task failed "deadline
#    exceeded" and SIGTERM no longer stopped the agent. Now: the profile is
#    done with its ELF symbols (prof_spin_loop), a second task is done too,
#    and SIGTERM stops the agent promptly.
#  - `sandlens profile -o F` run by root in a world-writable directory used
#    to write the predictable F.tmp.<pid> with fopen(): a symlink planted
#    there by another user let them truncate a root-only file. Symlinks are
#    planted at F.tmp.<pid> for the pids the CLI can get next, and at F
#    itself; the root-only target must be untouched, F a regular file with
#    the profile.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/lib_prof.sh"
sl_init
sl_require_agent_env
[ -x "$SL_BUILD/helpers/sl-profprog" ] || fail "sl-profprog not built"

sl_agent_start

"$SL_BUILD/helpers/sl-profprog" spin 60 >/dev/null &
PROG=$!
sl_on_exit "kill $PROG 2>/dev/null; rm -f /tmp/perf-$PROG.map"
MAP=/tmp/perf-$PROG.map
rm -f "$MAP"
mkfifo -m 666 "$MAP" || fail "mkfifo $MAP"
note "profiled pid $PROG, FIFO at $MAP"

# the world-writable output directory, a root-only file, the planted links
PUB=$SL_TMP/pub
mkdir -m 1777 "$PUB"
VICTIM=$SL_TMP/root-only
printf 'precious\n' >"$VICTIM"
chmod 600 "$VICTIM"
OUT=$PUB/prof.svg
ln -s "$VICTIM" "$OUT"

# the CLI's pid is known before it runs (stopped, then exec'ed): the
# temporary name the old code used, F.tmp.<pid>, is planted for it
START=$(date +%s)
( kill -STOP "$BASHPID"; exec "$SL_BUILD/sandlens" --api "$SL_API" profile --pid "$PROG" --duration 3s \
	-o "$OUT" ) >"$SL_LOGDIR/cli.txt" 2>&1 &
CLI=$!
n=0
until [ "$(awk '{print $3}' "/proc/$CLI/stat" 2>/dev/null)" = T ]; do
	[ $n -lt 100 ] || fail "the CLI wrapper did not stop"
	sleep 0.1
	n=$((n + 1))
done
ln -s "$VICTIM" "$OUT.tmp.$CLI"
kill -CONT "$CLI"
wait "$CLI"
RC=$?
cat "$SL_LOGDIR/cli.txt"
note "CLI pid $CLI, exit $RC after $(($(date +%s) - START)) s"
assert_eq "CLI exit status" 0 "$RC"
assert_eq "root-only file untouched" "precious" "$(cat "$VICTIM")"
assert_eq "root-only file mode" 600 "$(stat -c %a "$VICTIM")"
[ -f "$OUT" ] && [ ! -L "$OUT" ] || fail "$OUT is not a regular file: $(ls -l "$OUT")"
assert_eq "output file mode" 600 "$(stat -c %a "$OUT")"
head -c 200 "$OUT" | grep -q '<svg' || fail "$OUT is not an SVG"
grep -q prof_spin_loop "$OUT" || fail "$OUT does not show prof_spin_loop (ELF symbols despite the FIFO)"
[ -p "$MAP" ] || fail "the FIFO is gone"
ls -A "$PUB" | grep -v '^prof.svg' | grep -v '^prof.svg.tmp.[0-9]*$' | grep . &&
	fail "temporary files left in $PUB"

# the executor is not stuck: a second task ends done
ID=$(task_create "{\"type\":\"profile_on_cpu\",\"target\":{\"pid\":$PROG},\"duration_s\":2}")
REC=$(task_wait "$ID" 60)
assert_eq "second task" "done" "$(printf '%s' "$REC" | jq -r .status)"
assert_eq "second task's hottest function" prof_spin_loop \
	"$(printf '%s' "$REC" | jq -r '.result.top_user_leaves[0].function')"

# SIGTERM stops it (sl_agent_stop gives up after 20 s: 124)
T0=$(date +%s.%N)
sl_agent_stop
RC=$?
note "agent stopped with status $RC after $(awk -v s="$T0" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}') s"
assert_eq "agent exit status after SIGTERM" 0 "$RC"
sl_check_failed
echo "PASS"
