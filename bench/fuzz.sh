#!/bin/bash
# Fuzzing figures for bench/RESULTS.md: runs tests/fuzz/run.sh (every
# libFuzzer target, EXECS executions each, default 1,000,000, nice 19, one at
# a time) and prints the "Fuzzing" section as Markdown. BENCH_WRITE=1 also
# replaces that section of bench/RESULTS.md.
# Usage: bench/fuzz.sh [EXECS]          run, then format
#        bench/fuzz.sh --from FILE      format the output of an earlier
#                                       tests/fuzz/run.sh run (FILE)
# Exit: run.sh's (non-zero when a target crashed).
set -u
cd "$(dirname "$0")/.." || exit 1
if [ "${1:-}" = --from ]; then
	log=${2:?usage: bench/fuzz.sh --from FILE}
	execs=$(awk '/^fuzz [a-z_]+: /{print $3; exit}' "$log")
	rc=0
	grep -q '^fuzz: [0-9]* passed, 0 failed' "$log" || rc=1
else
	execs=${1:-1000000}
	log=$(mktemp /tmp/sl-bench-fuzz.XXXXXX)
	tests/fuzz/run.sh "$execs" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
fi

section=$(mktemp /tmp/sl-bench-fuzz-md.XXXXXX)
{
	echo "## Fuzzing (bench/fuzz.sh, tests/fuzz/run.sh)"
	echo
	echo "Command: \`bench/fuzz.sh $execs\` (run $(date -u +%Y-%m-%dT%H:%MZ), nice 19, one target at a time)."
	echo "Host: $(nproc) CPUs, kernel $(uname -r), $(clang --version | head -n 1);"
	echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg) (shared with other builds and tests,"
	echo "so exec/s are lower bounds). libFuzzer with ASan + UBSan (\`-fsanitize=fuzzer,address,undefined\`,"
	echo "leak detection on), seeds: the shared cases, tests/unit/cases and tests/fuzz/seeds (docs/TESTING.md)."
	echo "No kmsg and no OCI annotations parser exists in sandlens, so there is no target for them."
	echo
	echo "| target | execs | seconds | exec/s | crashes |"
	echo "|---|---:|---:|---:|---:|"
	# fuzz <t>: <n> execs in <s> s (<r> exec/s), <c> crashes
	sed -nE 's/^fuzz ([a-z_]+): ([0-9]+) execs in ([0-9.]+) s \(([0-9]+) exec\/s\), ([0-9]+) crashes$/| \1 | \2 | \3 | \4 | \5 |/p' "$log"
	echo
	echo "Total: $(grep -c '^fuzz [a-z_]*: ' "$log") targets, $(awk '/^fuzz [a-z_]+: /{c += $(NF-1)} END{print c+0}' "$log") crashes."
} >"$section"
cat "$section"

if [ "${BENCH_WRITE:-0}" = 1 ]; then
	# replace "## Fuzzing ..." up to the next "## " heading (or the end), or append
	awk -v f="$section" '
		BEGIN { while ((getline l < f) > 0) sec = sec l "\n" }
		/^## Fuzzing/ { printf "%s", sec; skip = 1; done = 1; next }
		/^## / && skip { skip = 0; print "" }
		!skip { print }
		END { if (!done) printf "\n%s", sec }' bench/RESULTS.md >bench/RESULTS.md.new &&
		mv bench/RESULTS.md.new bench/RESULTS.md
	echo "bench/fuzz.sh: wrote the Fuzzing section of bench/RESULTS.md"
fi
rm -f "$section"
exit "$rc"
