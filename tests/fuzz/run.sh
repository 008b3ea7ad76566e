#!/bin/bash
# Runs every libFuzzer harness (tests/fuzz/fuzz_<name>.c, built by `make fuzz`
# into build-fuzz/) one after the other, each for EXECS executions (default
# 1000000), from a corpus seeded with the shared cases (../shared/cases, read
# in place), the project's own cases (tests/unit/cases) and tests/fuzz/seeds.
# Runs at nice 19, one target at a time (the machine is shared).
#
# Usage: tests/fuzz/run.sh [EXECS] [TARGET...]    (TARGET: cgpath, config, ...)
# Env:   SL_FUZZ_SECS=N  also stop each target after N seconds (CI smoke runs)
#        SL_FUZZ_DIR     work directory (default /tmp/sl-fuzz): corpus/<t>/,
#                        logs, crash-* artifacts
#        SL_SHARED_CASES the shared cases (default ../shared/cases)
# Output: one line per target, "fuzz <t>: <execs> execs in <s> s (<r> exec/s),
#         <n> crashes", then "fuzz: P passed, F failed, 0 skipped".
# Exit:   0 no crash in any target; 1 a target crashed, leaked or hit UB (its
#         input is kept as SL_FUZZ_DIR/crash-<t>-*); 2 build failed; 77 no
#         clang libFuzzer runtime ("SKIP: reason").
# CI (tests/run-all.sh) runs each target briefly: tests/run-all.sh sets
# SL_FUZZ_SECS=4 and EXECS=20000 (about 1 min with the build).
set -u
cd "$(dirname "$0")/../.." || exit 2
execs=${1:-1000000}
shift $(( $# > 0 ? 1 : 0 ))
out=${SL_FUZZ_DIR:-/tmp/sl-fuzz}
shared=${SL_SHARED_CASES:-../shared/cases}
own=tests/unit/cases
mkdir -p "$out"

# Prerequisite: clang with the libFuzzer runtime (libclang_rt.fuzzer).
probe=$out/probe
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$probe.c"
if ! ${FUZZ_CC:-clang} -fsanitize=fuzzer,address,undefined -o "$probe" "$probe.c" >"$probe.log" 2>&1; then
	echo "SKIP: no clang libFuzzer runtime (${FUZZ_CC:-clang} -fsanitize=fuzzer failed: $(head -c 200 "$probe.log"))"
	echo "fuzz: 0 passed, 0 failed, 1 skipped"
	exit 77
fi

if ! nice -n 19 make -s -j"${JOBS:-1}" fuzz >"$out/build.log" 2>&1; then
	echo "fuzz: make fuzz failed (log: $out/build.log):"
	tail -n 20 "$out/build.log"
	echo "fuzz: 0 passed, 1 failed, 0 skipped"
	exit 2
fi

# Seed directories and files of each target (missing ones are skipped).
seeds() {
	case $1 in
	cgpath) echo "$shared/cgroup_path $own/cgroup_path" ;;
	cgstat) echo "$shared/memory $shared/cpu $shared/psi $own/memory $own/cpu $own/psi $own/io" ;;
	mounts) echo "tests/fuzz/seeds/mounts /proc/self/mountinfo" ;;
	runc_state) echo "tests/fuzz/seeds/runc_state $shared/oci_annotations" ;;
	k8s_names) echo "tests/fuzz/seeds/k8s_names $shared/oci_annotations" ;;
	config) echo "tests/fuzz/seeds/config deploy/sandlensd.yaml" ;;
	api_params) echo "tests/fuzz/seeds/api_params" ;;
	task_spec) echo "tests/fuzz/seeds/task_spec" ;;
	maps | kallsyms) echo "$shared/symbolization /proc/self/maps" ;;
	perfmap) echo "tests/fuzz/seeds/perfmap" ;;
	elf) echo "/usr/bin/true /usr/bin/env /usr/lib/x86_64-linux-gnu/libz.so.1" ;;
	*) echo "" ;;
	esac
}

# Copies the inputs (not .json metadata / .expected answers) of the seed
# sources of target $1 into directory $2.
make_seed_dir() {
	local t=$1 dir=$2 src f
	rm -rf "$dir" && mkdir -p "$dir"
	for src in $(seeds "$t"); do
		if [ -d "$src" ]; then
			for f in "$src"/*; do
				case $f in *.json | *.expected) [ "$t" = runc_state ] || [ "$t" = task_spec ] || [ "$t" = k8s_names ] || continue ;; esac
				[ -f "$f" ] && cp "$f" "$dir/$(basename "$src")-$(basename "$f")"
			done
		elif [ -r "$src" ]; then
			head -c 262144 "$src" >"$dir/$(echo "$src" | tr / _)"
		fi
	done
}

if [ $# -gt 0 ]; then
	targets="$*"
else
	targets=$(ls tests/fuzz/fuzz_*.c | sed 's|.*/fuzz_||; s|\.c$||')
fi
pass=0 failed=0
for t in $targets; do
	bin=build-fuzz/fuzz_$t
	[ -x "$bin" ] || { echo "fuzz $t: no $bin"; failed=$((failed + 1)); continue; }
	corpus=$out/corpus/$t
	mkdir -p "$corpus"
	make_seed_dir "$t" "$out/seeds/$t"
	maxlen=65536
	[ "$t" = elf ] && maxlen=262144
	extra=()
	[ -n "${SL_FUZZ_SECS:-}" ] && extra+=(-max_total_time="$SL_FUZZ_SECS")
	log=$out/$t.log
	start=$(date +%s.%N)
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
		nice -n 19 "$bin" -runs="$execs" -max_len=$maxlen -rss_limit_mb=2048 -timeout=25 \
		-print_final_stats=1 -artifact_prefix="$out/crash-$t-" "${extra[@]}" \
		"$corpus" "$out/seeds/$t" >"$log" 2>&1
	rc=$?
	secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')
	n=$(awk '/^stat::number_of_executed_units:/{print $2}' "$log" | tail -n 1)
	n=${n:-0}
	rate=$(awk -v n="$n" -v s="$secs" 'BEGIN{printf "%d", (s > 0 ? n / s : 0)}')
	crashes=$(ls "$out"/crash-"$t"-* 2>/dev/null | wc -l)
	[ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ] && crashes=1
	echo "fuzz $t: $n execs in $secs s ($rate exec/s), $crashes crashes"
	if [ "$rc" -ne 0 ]; then
		failed=$((failed + 1))
		echo "----- $log (last 40 lines) -----"
		tail -n 40 "$log"
		echo "----- end of $t -----"
	else
		pass=$((pass + 1))
	fi
done
echo "fuzz: $pass passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
