#!/bin/bash
# make install DESTDIR=<tmp> (default PREFIX /usr/local): the binaries, the
# systemd unit (ExecStart at PREFIX, the unit's five capabilities), the
# config at /etc/sandlens/sandlensd.yaml, the reference copy and the docs,
# with their modes; a second install keeps an edited config; the installed
# unit passes `systemd-analyze verify` (skipped, with the reason, when it is
# absent); make uninstall removes what install wrote but the config.
# sl-san: once (packaging: make install layout)
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_build
sl_require_cmd make
D="$SL_TMP/root"
MK=(make -s -C "$SL_ROOT" BUILD_DIR="$SL_BUILD")
"${MK[@]}" install DESTDIR="$D" >"$SL_LOGDIR/install.log" 2>&1 || { cat "$SL_LOGDIR/install.log"; fail "make install failed"; }
( cd "$D" && find . -type f -printf '%m %p\n' | sort ) >"$SL_LOGDIR/files.txt"
expect() { # MODE PATH
	grep -qx "$1 ./${2#/}" "$SL_LOGDIR/files.txt" || fail "expected $2 with mode $1; installed: $(tr '\n' ' ' <"$SL_LOGDIR/files.txt")"
}
expect 755 usr/local/sbin/sandlensd
expect 755 usr/local/bin/sandlens
expect 644 usr/local/lib/systemd/system/sandlensd.service
expect 644 etc/sandlens/sandlensd.yaml
expect 644 usr/local/share/sandlens/sandlensd.yaml
expect 644 usr/local/share/doc/sandlens/README.md
expect 644 usr/local/share/doc/sandlens/DEPLOY.md
expect 644 usr/local/share/doc/sandlens/CONFIG.md
expect 644 usr/local/share/man/man1/sandlens.1
expect 644 usr/local/share/bash-completion/completions/sandlens
n=$(wc -l <"$SL_LOGDIR/files.txt")
docs=$(ls "$SL_ROOT"/docs/*.md | wc -l)
assert_eq "files installed (2 binaries, unit, 2 configs, man page, completion, README + docs/*.md)" $((7 + 1 + docs)) "$n"
cmp -s "$D/usr/local/sbin/sandlensd" "$SL_BUILD/sandlensd" || fail "installed sandlensd differs from the build's"
U="$D/usr/local/lib/systemd/system/sandlensd.service"
grep -qx 'ExecStart=/usr/local/sbin/sandlensd --config /etc/sandlens/sandlensd.yaml' "$U" || fail "ExecStart: $(grep ExecStart "$U")"
grep -q '/usr/sbin/' "$U" && fail "a /usr/sbin path left in the unit installed at /usr/local"
assert_eq "unit capabilities" "CAP_BPF CAP_PERFMON CAP_DAC_READ_SEARCH CAP_SYS_PTRACE CAP_SYSLOG" \
	"$(sed -n 's/^AmbientCapabilities=//p' "$U")"
assert_eq "bounding set = ambient set" "$(sed -n 's/^AmbientCapabilities=//p' "$U")" "$(sed -n 's/^CapabilityBoundingSet=//p' "$U")"
"$D/usr/local/sbin/sandlensd" --check-config --config "$D/etc/sandlens/sandlensd.yaml" >/dev/null ||
	fail "the installed config does not pass --check-config"
echo "ok - make install lays out $n files"

# the config is never overwritten
echo "# edited by the operator" >>"$D/etc/sandlens/sandlensd.yaml"
"${MK[@]}" install DESTDIR="$D" >>"$SL_LOGDIR/install.log" 2>&1 || fail "second make install failed"
grep -q "edited by the operator" "$D/etc/sandlens/sandlensd.yaml" || fail "make install overwrote /etc/sandlens/sandlensd.yaml"
echo "ok - a second install keeps the edited config"

# systemd-analyze verify: the unit as installed, with ExecStart pointing into
# DESTDIR (verify checks that the binary exists)
if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir -p "$SL_TMP/unit"
	sed "s|^ExecStart=/usr/local/sbin/|ExecStart=$D/usr/local/sbin/|" "$U" >"$SL_TMP/unit/sandlensd.service"
	if ! SYSTEMD_LOG_LEVEL=notice systemd-analyze verify "$SL_TMP/unit/sandlensd.service" >"$SL_LOGDIR/verify.log" 2>&1; then
		cat "$SL_LOGDIR/verify.log"
		fail "systemd-analyze verify failed"
	fi
	# an unknown or misspelt key is only a warning (status 0): any line
	# naming the unit fails, and a planted bad key must produce one
	grep -q "sandlensd.service" "$SL_LOGDIR/verify.log" &&
		fail "systemd-analyze verify warned about the unit: $(cat "$SL_LOGDIR/verify.log")"
	mkdir -p "$SL_TMP/bad"
	sed 's/^ProtectSystem=/ProtectSystemX=/' "$SL_TMP/unit/sandlensd.service" >"$SL_TMP/bad/sandlensd.service"
	SYSTEMD_LOG_LEVEL=notice systemd-analyze verify "$SL_TMP/bad/sandlensd.service" 2>&1 | grep -q "ProtectSystemX" ||
		fail "the verify check cannot fail: a planted unknown key was not reported"
	echo "ok - systemd-analyze verify accepts the unit"
else
	echo "# SKIP part: systemd-analyze not installed: the unit is not verified"
fi

"${MK[@]}" uninstall DESTDIR="$D" >>"$SL_LOGDIR/install.log" 2>&1 || fail "make uninstall failed"
left=$(cd "$D" && find . -type f | sort | tr '\n' ' ')
assert_eq "files left after uninstall" "./etc/sandlens/sandlensd.yaml " "$left"
echo "ok - make uninstall removes all but the config"
echo "PASS"
