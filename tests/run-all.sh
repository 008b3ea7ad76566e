#!/bin/bash
# Every test, as CI runs it: `make all` then unit + integration tests with
# build/, then `make SAN=1 all` and the same with build-san/ under
# ASan+UBSan. Ends with the single line "N passed, N failed, N skipped"
# (sum over all four runs; a build that fails counts as one failure) and
# exits non-zero if anything failed.
# After the plain build and before its unit tests, the names check
# (tests/check-module-names.sh, counted as runner "names": one per module).
# Then each libFuzzer harness briefly (tests/fuzz/run.sh, counted as runner
# "fuzz"; SL_SKIP_FUZZ=1 skips it, local use only).
# Env: JOBS (make -j, default nproc), SL_SKIP_SAN=1 skips the sanitizer pass
# (local use only; CI runs both).
set -u
cd "$(dirname "$0")/.." || exit 1
JOBS=${JOBS:-$(nproc)}
P=0 F=0 S=0

add_totals() { # $1: file with a runner's output, $2: runner name
	local line
	line=$(grep -E "^$2: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$" "$1" | tail -n 1)
	if [ -z "$line" ]; then
		echo "run-all: $2 printed no totals; counting one failure"
		F=$((F + 1))
		return
	fi
	set -- $(echo "$line" | sed -E 's/^[^:]+: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/')
	P=$((P + $1)); F=$((F + $2)); S=$((S + $3))
}

stage() { # $1: label, $2: make args ("" or SAN=1), $3: build dir
	local label=$1 margs=$2 b=$3 out
	echo "=== $label: make $margs all"
	local t0=$SECONDS
	if ! make -j"$JOBS" $margs all; then
		echo "run-all: $label build failed; counting one failure"
		F=$((F + 1))
		return
	fi
	echo "=== $label: build took $((SECONDS - t0)) s"
	out=$(mktemp /tmp/sl-runall.XXXXXX)
	if [ "$label" = plain ]; then
		# no file outside a module's own names it (sources, then the
		# objects just built); counted as runner "names"
		echo "=== names: tests/check-module-names.sh --build $b"
		tests/check-module-names.sh --build "$b" 2>&1 | tee "$out"
		add_totals "$out" names
	fi
	t0=$SECONDS
	echo "=== $label: unit tests ($b)"
	tests/run-unit.sh "$b" 2>&1 | tee "$out"
	add_totals "$out" run-unit
	echo "=== $label: unit tests took $((SECONDS - t0)) s"
	t0=$SECONDS
	echo "=== $label: integration tests ($b)"
	tests/run-integration.sh "$b" 2>&1 | tee "$out"
	add_totals "$out" run-integration
	echo "=== $label: integration tests took $((SECONDS - t0)) s"
	rm -f "$out"
}

stage plain "" build
if [ "${SL_SKIP_SAN:-0}" != 1 ]; then
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
	export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
	export SL_SAN_PASS=1 # tests marked "# sl-san: once" run in the plain pass only
	stage "asan+ubsan" "SAN=1" build-san
fi
# Each libFuzzer target briefly (tests/fuzz/run.sh: seeds + 20k runs or 4 s
# each, about a minute with the build; 1M-run figures: bench/RESULTS.md).
# No clang fuzzer runtime: one skip, with the reason.
if [ "${SL_SKIP_FUZZ:-0}" != 1 ]; then
	echo "=== fuzz smoke: tests/fuzz/run.sh"
	t0=$SECONDS
	out=$(mktemp /tmp/sl-runall.XXXXXX)
	fdir=$(mktemp -d /tmp/sl-fuzz-ci.XXXXXX)
	SL_FUZZ_SECS=${SL_FUZZ_SECS:-4} SL_FUZZ_DIR=$fdir JOBS=$JOBS \
		tests/fuzz/run.sh "${SL_FUZZ_EXECS:-20000}" 2>&1 | tee "$out"
	add_totals "$out" fuzz
	if grep -q '^fuzz: [0-9]* passed, 0 failed' "$out"; then
		rm -rf "$fdir"
	else
		echo "run-all: fuzz logs and crash inputs kept in $fdir"
	fi
	rm -f "$out"
	echo "=== fuzz smoke took $((SECONDS - t0)) s"
fi
echo "$P passed, $F failed, $S skipped"
[ "$F" -eq 0 ]
