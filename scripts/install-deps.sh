#!/bin/sh
# Installs what sandlens needs on Debian 12 (as root). Idempotent: installs
# only what is missing, mounts tracefs if absent.
#   scripts/install-deps.sh         build and run (`make run`): compilers,
#                                   the -dev packages of the libraries the
#                                   binaries link, curl for the README's
#                                   examples
#   scripts/install-deps.sh --test  that, plus the test tools (`make test`,
#                                   .ci/run): cmocka, runc, busybox, jq,
#                                   valgrind, Prometheus, Go, chromium, Node.js
#                                   (t_otlp, t_mcp install their npm packages
#                                   under /tmp themselves), ...
set -e
RUN_PKGS="make gcc clang llvm pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev
libmicrohttpd-dev libjansson-dev libsqlite3-dev libyaml-dev libcurl4-openssl-dev
uthash-dev libc6-dev liburcu-dev libdw-dev libprotobuf-c-dev curl libdebuginfod-dev"
TEST_PKGS="libcmocka-dev sqlite3 runc busybox-static libbpf-tools jq procps iproute2
valgrind prometheus protobuf-c-compiler golang-go chromium nodejs python3 python3-yaml
libclang-rt-dev e2fsprogs dpkg-dev systemd fio iperf3 nftables fuse3 libfuse3-dev"
case "${1:-}" in
"") PKGS=$RUN_PKGS ;;
--test) PKGS="$RUN_PKGS $TEST_PKGS" ;;
*) echo "usage: $0 [--test]" >&2; exit 2 ;;
esac
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "install-deps: need root to install:$missing" >&2
		exit 1
	fi
	echo "install-deps: installing:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
if [ ! -e /sys/kernel/btf/vmlinux ]; then
	echo "install-deps: /sys/kernel/btf/vmlinux missing: the kernel has no BTF; sandlens cannot build its CO-RE objects here" >&2
	exit 1
fi
if [ "$(id -u)" = 0 ] && [ -d /sys/kernel/tracing ] && [ ! -e /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi
exit 0
