#!/bin/bash
# The CLI is a client, not a piece of the daemon (issue 9 item 4): no file
# of src/cli includes a header outside src/cli and src/common (system
# headers aside), the built `sandlens` needs only libcurl, jansson and libc
# (readelf NEEDED), and links no daemon object: no symbol of libsandlens.a
# is defined in it. Needs no root.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_cmd readelf nm

bad=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$SL_ROOT"/src/cli/*.[ch] |
	grep -vE '#[[:space:]]*include[[:space:]]*"(cli|common)/[^"]+"')
[ -z "$bad" ] || fail "src/cli includes headers outside src/cli and src/common:
$bad"
echo "ok - src/cli includes only cli/ and common/ headers"

bin=$SL_BUILD/sandlens
[ -x "$bin" ] || fail "$bin not built"
needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
for lib in $needed; do
	case $lib in
	libcurl.so.* | libjansson.so.* | libc.so.* | ld-linux*.so.* | libasan.so.* | libubsan.so.* | libm.so.* | libgcc_s.so.* | libstdc++.so.*) ;;
	*) fail "$bin needs $lib (NEEDED: $needed); the CLI links only libcurl, jansson and libc" ;;
	esac
done
echo "ok - NEEDED: $needed"

lib=$SL_BUILD/libsandlens.a
[ -f "$lib" ] || fail "$lib not built"
nm --defined-only -g "$lib" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$SL_TMP/daemon.syms"
nm --defined-only -g "$bin" | awk 'NF == 3 { print $3 }' | sort -u >"$SL_TMP/cli.syms"
both=$(comm -12 "$SL_TMP/daemon.syms" "$SL_TMP/cli.syms" | head -20)
[ -z "$both" ] || fail "$bin defines symbols of libsandlens.a (daemon code linked in): $both"
echo "ok - no symbol of libsandlens.a ($(wc -l <"$SL_TMP/daemon.syms") symbols) in the CLI"
echo "PASS"
