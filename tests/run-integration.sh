#!/bin/bash
# Runs every tests/integration/t_*.sh (or the ones named on the command line)
# with cwd = project root and env SL_BUILD=BUILD_DIR (absolute) and
# SL_TEST_LOGDIR (a fresh dir per test: agent stderr, configs, container
# output). Exit 0 = pass, 77 = skip (reason = the test's "SKIP:" line),
# anything else = fail; a failed test's output and logs are printed.
# Usage: tests/run-integration.sh BUILD_DIR [t_name ...]
# Env: SL_IT_TIMEOUT per-test timeout in s (default 600); SL_IT_VERBOSE=1
# prints the notes and checks of passed tests too; SL_SAN_PASS=1 (set by
# run-all.sh for the ASan+UBSan pass) leaves out the tests whose header has
# a line "# sl-san: once REASON": tests that re-measure figures (timing,
# counts under load, packaging) whose code paths other tests already run
# under the sanitizers. They are listed ("ONCE") and not counted.
# Last line (parsed by tests/run-all.sh):
#   run-integration: P passed, F failed, S skipped
set -u
B=${1:?usage: tests/run-integration.sh BUILD_DIR [t_name ...]}
shift
cd "$(dirname "$0")/.." || exit 1
case "$B" in /*) ;; *) B="$PWD/$B" ;; esac
export SL_BUILD="$B"
TIMEOUT=${SL_IT_TIMEOUT:-600}

tests=()
if [ $# -gt 0 ]; then
	for n in "$@"; do n=${n%.sh}; tests+=("tests/integration/${n#tests/integration/}.sh"); done
else
	shopt -s nullglob
	tests=(tests/integration/t_*.sh)
fi

pass=0 failc=0 skipc=0 oncec=0
logroot=$(mktemp -d /tmp/sl-it-logs.XXXXXX)
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	if [ "${SL_SAN_PASS:-0}" = 1 ] && once=$(grep -m1 '^# sl-san: once' "$t"); then
		oncec=$((oncec + 1))
		printf 'ONCE %-16s         %s\n' "$name" "plain pass only:${once#\# sl-san: once}"
		continue
	fi
	export SL_TEST_LOGDIR="$logroot/$name"
	mkdir -p "$SL_TEST_LOGDIR"
	start=$(date +%s.%N)
	# a test may ask for more time than SL_IT_TIMEOUT: "# sl-timeout: N" (s) in its header
	tmo=$TIMEOUT
	if own=$(grep -m1 '^# sl-timeout: [0-9][0-9]*$' "$t"); then
		own=${own#\# sl-timeout: }
		[ "$own" -gt "$tmo" ] && tmo=$own
	fi
	timeout -k 15 "$tmo" bash "$t" >"$SL_TEST_LOGDIR/test.out" 2>&1
	rc=$?
	secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')
	case $rc in
	0)
		pass=$((pass + 1))
		printf 'PASS %-16s %6ss\n' "$name" "$secs"
		[ "${SL_IT_VERBOSE:-0}" = 1 ] && grep -E '^(#|ok -)' "$SL_TEST_LOGDIR/test.out" | cut -c1-300 | sed 's/^/     /'
		;;
	77)
		skipc=$((skipc + 1))
		reason=$(grep -m1 '^SKIP:' "$SL_TEST_LOGDIR/test.out" | sed 's/^SKIP: *//')
		printf 'SKIP %-16s %6ss  %s\n' "$name" "$secs" "${reason:-no reason given}"
		;;
	*)
		failc=$((failc + 1))
		why=$(grep -m1 '^FAIL:' "$SL_TEST_LOGDIR/test.out" | sed 's/^FAIL: *//')
		[ "$rc" = 124 ] && why="timed out after ${tmo}s"
		printf 'FAIL %-16s %6ss  exit %s: %s\n' "$name" "$secs" "$rc" "${why:-see output}"
		echo "----- $name: test output -----"
		cat "$SL_TEST_LOGDIR/test.out"
		for f in "$SL_TEST_LOGDIR"/*; do
			case "$(basename "$f")" in test.out | *.config.json) continue ;; esac
			[ -f "$f" ] || continue
			echo "----- $name: $(basename "$f") (last 80 lines) -----"
			tail -n 80 "$f"
		done
		echo "----- end of $name -----"
		;;
	esac
done
if [ ${#tests[@]} -eq 0 ]; then
	echo "run-integration: no tests found"
	failc=1
fi
[ "$failc" -eq 0 ] && rm -rf "$logroot" || echo "run-integration: logs kept in $logroot"
[ "$oncec" -gt 0 ] && echo "run-integration: $oncec test(s) marked sl-san: once not repeated in this pass"
echo "run-integration: $pass passed, $failc failed, $skipc skipped"
[ "$failc" -eq 0 ]
