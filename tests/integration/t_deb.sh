#!/bin/bash
# make deb: build/sandlens_<version>_<arch>.deb built by dpkg-deb with
# Depends from dpkg-shlibdeps. dpkg-deb -I: package name, version, arch,
# Depends naming the libraries the binaries link (every one installed here),
# conffiles = /etc/sandlens/sandlensd.yaml, postinst/prerm/postrm.
# dpkg-deb -c: the files, root-owned. Then dpkg --root=<scratch>
# --force-not-root --force-script-chrootless --force-depends -i into an
# empty dpkg database (the scratch root has no libc: Depends are forced, the
# maintainer scripts run chrootless with DPKG_ROOT): the user and group
# sandlens created in the scratch /etc/passwd and /etc/group, its
# /var/lib/sandlens 0700 and theirs; an edited conffile survives a
# reinstall; purge removes /var/lib/sandlens and the conffile.
# sl-san: once (packaging: dpkg-deb of the plain build)
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_build
sl_require_cmd make dpkg-deb dpkg-shlibdeps dpkg useradd groupadd
"$SL_ROOT/scripts/install-deps.sh" >/dev/null 2>&1 || true
make -s -C "$SL_ROOT" BUILD_DIR="$SL_BUILD" deb >"$SL_LOGDIR/deb.log" 2>&1 || { cat "$SL_LOGDIR/deb.log"; fail "make deb failed"; }
ver=$(sed -n 's/^#define SANDLENS_VERSION "\(.*\)"/\1/p' "$SL_ROOT/src/common/version.h")
DEB="$SL_BUILD/sandlens_${ver}_$(dpkg --print-architecture).deb"
[ -f "$DEB" ] || fail "$DEB not built: $(ls "$SL_BUILD"/*.deb 2>&1)"
dpkg-deb -I "$DEB" >"$SL_LOGDIR/info.txt"
assert_eq Package sandlens "$(dpkg-deb -f "$DEB" Package)"
assert_eq Version "$ver" "$(dpkg-deb -f "$DEB" Version)"
assert_eq Architecture "$(dpkg --print-architecture)" "$(dpkg-deb -f "$DEB" Architecture)"
dep=$(dpkg-deb -f "$DEB" Depends)
note "Depends: $dep"
for lib in libc6 libbpf1 libmicrohttpd12 libjansson4 libsqlite3-0 libyaml-0-2 libcurl4 libelf1 zlib1g; do
	grep -qE "(^|, )$lib( |,|$)" <<<"$dep" || fail "Depends lacks $lib: $dep"
done
# every package named is a real, installed one (dpkg-shlibdeps, not a guess)
for p in $(sed 's/([^)]*)//g; s/,/ /g' <<<"$dep"); do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || fail "Depends names $p, which is not installed here"
done
# the NEEDED libraries of both binaries, by the package owning the file
# the loader resolves, are all in Depends
for b in sandlensd sandlens; do
	for path in $(ldd "$SL_BUILD/$b" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'); do
		so=$(basename "$path")
		readelf -d "$SL_BUILD/$b" | grep -q "(NEEDED).*\[$so\]" || continue # a library's own dependency
		pkg=$( (dpkg -S "$path" || dpkg -S "$(readlink -f "$path")") 2>/dev/null | head -1 | cut -d: -f1)
		[ -n "$pkg" ] || fail "no package owns $path ($b NEEDs $so)"
		grep -qE "(^|, )$pkg( |,|$)" <<<"$dep" || fail "$b needs $so of $pkg, not in Depends"
	done
done
grep -q ' conffiles' "$SL_LOGDIR/info.txt" || fail "no conffiles: $(cat "$SL_LOGDIR/info.txt")"
dpkg-deb --ctrl-tarfile "$DEB" | tar -xO ./conffiles >"$SL_TMP/conffiles"
assert_eq conffiles /etc/sandlens/sandlensd.yaml "$(cat "$SL_TMP/conffiles")"
for s in postinst prerm postrm; do grep -q " $s " "$SL_LOGDIR/info.txt" || fail "no $s in the package"; done
dpkg-deb -c "$DEB" >"$SL_LOGDIR/contents.txt"
for f in ./usr/sbin/sandlensd ./usr/bin/sandlens ./lib/systemd/system/sandlensd.service ./etc/sandlens/sandlensd.yaml \
	./usr/share/doc/sandlens/DEPLOY.md; do
	grep -q " $f\$" "$SL_LOGDIR/contents.txt" || fail "$f not in the package: $(cat "$SL_LOGDIR/contents.txt")"
done
grep -v ' root/root ' "$SL_LOGDIR/contents.txt" && fail "files not owned by root/root in the package"
grep -q 'ExecStart=/usr/sbin/sandlensd' <(dpkg-deb --fsys-tarfile "$DEB" | tar -xO ./lib/systemd/system/sandlensd.service) ||
	fail "the packaged unit does not start /usr/sbin/sandlensd"
echo "ok - $(basename "$DEB"): control, Depends, conffiles, scripts and contents"

R="$SL_TMP/scratch"
mkdir -p "$R/var/lib/dpkg/updates" "$R/var/lib/dpkg/info" "$R/etc"
: >"$R/var/lib/dpkg/status"
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$R/etc/passwd"
printf 'root:x:0:\n' >"$R/etc/group"
printf 'root:*:19000:0:99999:7:::\n' >"$R/etc/shadow"
printf 'root:*::\n' >"$R/etc/gshadow"
DPKG=(dpkg --root="$R" --force-not-root --force-script-chrootless --force-depends)
"${DPKG[@]}" -i "$DEB" >"$SL_LOGDIR/dpkg-i.log" 2>&1 || { cat "$SL_LOGDIR/dpkg-i.log"; fail "dpkg -i into the scratch root failed"; }
assert_eq "status" "install ok installed" "$(dpkg --root="$R" -s sandlens | sed -n 's/^Status: //p')"
[ -x "$R/usr/sbin/sandlensd" ] || fail "sandlensd not unpacked"
grep -q '^sandlens:x:[0-9]*:[0-9]*:.*:/var/lib/sandlens:/usr/sbin/nologin$' "$R/etc/passwd" || fail "no system user sandlens: $(cat "$R/etc/passwd")"
grep -q '^sandlens:' "$R/etc/group" || fail "no group sandlens"
uid=$(awk -F: '$1 == "sandlens" {print $3}' "$R/etc/passwd")
[ "$uid" -lt 1000 ] || fail "uid $uid is not a system uid"
assert_eq "state dir owner:mode" "$uid:700" "$(stat -c '%u:%a' "$R/var/lib/sandlens")"
echo "ok - dpkg --root install: user sandlens (uid $uid), /var/lib/sandlens 0700"

echo "# edited" >>"$R/etc/sandlens/sandlensd.yaml"
"${DPKG[@]}" --force-confold -i "$DEB" >>"$SL_LOGDIR/dpkg-i.log" 2>&1 || fail "reinstall failed"
grep -q '^# edited' "$R/etc/sandlens/sandlensd.yaml" || fail "reinstall replaced the edited conffile"
assert_eq "one user after reinstall" 1 "$(grep -c '^sandlens:' "$R/etc/passwd")"
"${DPKG[@]}" --purge sandlens >"$SL_LOGDIR/dpkg-purge.log" 2>&1 || { cat "$SL_LOGDIR/dpkg-purge.log"; fail "purge failed"; }
[ -e "$R/var/lib/sandlens" ] && fail "purge left /var/lib/sandlens"
[ -e "$R/etc/sandlens/sandlensd.yaml" ] && fail "purge left the conffile"
[ -e "$R/usr/sbin/sandlensd" ] && fail "purge left the binary"
echo "ok - conffile kept on reinstall; purge removes state and config"
echo "PASS"
