#!/bin/bash
# Runs every cmocka unit test program BUILD_DIR/tests/test_* (cwd = project
# root), counts passed/failed/skipped tests from cmocka's summary lines and
# prints per-program lines and totals. A program that exits non-zero without
# reporting a failure (crash, sanitizer abort) counts as one failed test.
# Usage: tests/run-unit.sh BUILD_DIR        Exit: 0 all passed, 1 otherwise.
# Last line (parsed by tests/run-all.sh):
#   run-unit: P passed, F failed, S skipped
set -u
B=${1:?usage: tests/run-unit.sh BUILD_DIR}
cd "$(dirname "$0")/.." || exit 1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
TIMEOUT=${SL_UNIT_TIMEOUT:-300}

tp=0 tf=0 ts=0 progs=0
log=$(mktemp /tmp/sl-unit.XXXXXX)
trap 'rm -f "$log"' EXIT
shopt -s nullglob
for t in "$B"/tests/test_*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	progs=$((progs + 1))
	name=$(basename "$t")
	start=$(date +%s.%N)
	timeout -k 10 "$TIMEOUT" "$t" >"$log" 2>&1
	rc=$?
	secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')
	# cmocka 1.1: "[  PASSED  ] N test(s)."  "[  FAILED  ] N test(s), listed below:"
	#             "[  SKIPPED ] N test(s), listed below:"  (one set per group)
	p=$(awk '/^\[  PASSED  \] [0-9]+ test\(s\)/{s+=$4} END{print s+0}' "$log")
	f=$(awk '/^\[  FAILED  \] [0-9]+ test\(s\)/{s+=$4} END{print s+0}' "$log")
	s=$(awk '/^\[  SKIPPED \] [0-9]+ test\(s\)/{s+=$4} END{print s+0}' "$log")
	note=""
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then note=" (timed out after ${TIMEOUT}s)"; else note=" (exit status $rc without a cmocka failure: crash or sanitizer report)"; fi
	fi
	if [ "$rc" -eq 0 ] && [ $((p + f + s)) -eq 0 ]; then
		f=1; note=" (no cmocka summary in output)"
	fi
	tp=$((tp + p)); tf=$((tf + f)); ts=$((ts + s))
	if [ "$f" -gt 0 ]; then
		printf 'FAIL %-36s %3d passed %3d failed %3d skipped  %ss%s\n' "$name" "$p" "$f" "$s" "$secs" "$note"
		echo "----- output of $t -----"
		cat "$log"
		echo "----- end of $name -----"
	else
		printf 'ok   %-36s %3d passed %3d failed %3d skipped  %ss\n' "$name" "$p" "$f" "$s" "$secs"
		grep -E '^\[  SKIPPED \] [^0-9]' "$log" | sed 's/^/     /'
	fi
done
if [ "$progs" -eq 0 ]; then
	echo "run-unit: no test programs in $B/tests (did 'make all' run?)"
	tf=$((tf + 1))
fi
echo "run-unit: $tp passed, $tf failed, $ts skipped"
[ "$tf" -eq 0 ]
