#!/bin/sh
# Installs what sandlens needs to build, run and test on Debian 12 (as root).
# Idempotent: installs only what is missing, mounts tracefs if absent.
set -e
PKGS="make gcc clang llvm pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev
libmicrohttpd-dev libjansson-dev libsqlite3-dev sqlite3 libyaml-dev libcurl4-openssl-dev
uthash-dev libcmocka-dev runc busybox-static libbpf-tools jq curl procps iproute2
libc6-dev valgrind prometheus liburcu-dev libdw-dev protobuf-c-compiler libprotobuf-c-dev
golang-go chromium python3 libclang-rt-dev e2fsprogs"
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
