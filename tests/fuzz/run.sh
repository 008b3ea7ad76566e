#!/bin/sh
# Build the libFuzzer harness for the symbolizer's parsers and run it for
# SECONDS (default 60) from a corpus seeded with small system ELF files.
# Usage: tests/fuzz/run.sh [SECONDS]     Exit: libFuzzer's (non-zero on a crash).
set -e
cd "$(dirname "$0")/../.."
secs=${1:-60}
out=${SL_FUZZ_DIR:-/tmp/sl-fuzz}
mkdir -p "$out/corpus"
for f in /usr/bin/true /usr/bin/env /usr/lib/x86_64-linux-gnu/libz.so.1; do
	[ -f "$f" ] && cp -L "$f" "$out/corpus/$(basename "$f")"
done
clang -std=c11 -D_GNU_SOURCE -g -O1 -Iinclude -Isrc -Itests/fuzz \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	tests/fuzz/fuzz_elf.c src/profile/symbolize_elf.c src/profile/symbolize_maps.c \
	src/profile/symbolize_kallsyms.c src/profile/symbolize.c src/profile/profile_build.c \
	src/profile/raw.c src/profile/tree.c src/profile/folded.c src/profile/flamegraph.c \
	src/profile/pprof.c src/profile/profile.pb-c.c src/profile/profile_json.c \
	-o "$out/fuzz_elf" -ljansson -ldw -lelf -lprotobuf-c -lz -lpthread
exec "$out/fuzz_elf" -max_total_time="$secs" -max_len=262144 -rss_limit_mb=4096 "$out/corpus"
