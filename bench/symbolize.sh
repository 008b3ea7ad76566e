#!/bin/sh
# Symbolization benchmark: builds bench/symbolize_bench.c with -O2 against
# src/profile (linking several large libraries so the process has many
# ELF modules to symbolize) and runs it. Prints the figures that go into
# bench/RESULTS.md ("Profiling: symbolization").
# Usage: bench/symbolize.sh [STACKS] [DEPTH]
set -e
cd "$(dirname "$0")/.."
out=${TMPDIR:-/tmp}/sl-symbolize-bench
cc -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Iinclude -Isrc \
	bench/symbolize_bench.c src/profile/*.c -o "$out" \
	-Wl,--no-as-needed $(pkg-config --libs libcurl sqlite3 jansson libmicrohttpd yaml-0.1 libbpf libdw libprotobuf-c) \
	-lcrypto -lssl -lz -lpthread -lm -Wl,--as-needed
echo "kernel $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
"$out" "$@"
