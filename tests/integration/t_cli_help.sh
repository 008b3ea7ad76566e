#!/bin/bash
# The CLI's help, typos, version, completion and man page, all derived from
# the command table (src/cli/commands.c; issue 16 item 3): each command's
# --help is its own (not the global text) and lists its options; a typo of
# a command or an option names the right one and exits 2; --version prints
# the version of src/common/version.h; `sandlens completion bash` loads in
# bash (`complete -p sandlens`) and completes commands and a command's
# options; the generated man page renders with `man -l` / groff without
# warnings and documents every command. Needs no root and no agent.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_build
bin=$SL_BUILD/sandlens
ver=$(sed -n 's/^#define SANDLENS_VERSION "\(.*\)"/\1/p' "$SL_ROOT/src/common/version.h")

assert_eq "--version" "sandlens $ver" "$("$bin" --version)"
assert_eq "version" "sandlens $ver" "$("$bin" version)"

"$bin" --help >"$SL_TMP/global.txt" || fail "--help exited $?"
cmds=$(sed -n '/^commands:/,/^$/p' "$SL_TMP/global.txt" | awk 'NR > 1 && /^  [a-z]/ {print $1}')
[ "$(wc -w <<<"$cmds")" -ge 12 ] || fail "--help lists too few commands: $cmds"
for c in $cmds; do
	"$bin" "$c" --help >"$SL_TMP/h.txt" || fail "$c --help exited $?"
	head -1 "$SL_TMP/h.txt" | grep -q "^usage: sandlens $c\b" || fail "$c --help is not its own: $(head -2 "$SL_TMP/h.txt")"
	cmp -s "$SL_TMP/h.txt" "$SL_TMP/global.txt" && fail "$c --help prints the global text"
	"$bin" help "$c" | cmp -s - "$SL_TMP/h.txt" || fail "sandlens help $c differs from $c --help"
done
"$bin" events --help | grep -q -- '--no-host' || fail "events --help does not show --no-host"
"$bin" profile --help | grep -q -- "-o, --output FILE" || fail "profile --help does not show -o"
"$bin" --api http://127.0.0.1:1 top -h | grep -q -- '--follow' || fail "top -h after a global option"
echo "ok - every command's --help is its own ($(wc -w <<<"$cmds") commands)"

typo() { # EXPECTED-SUGGESTION ARGS...
	local want=$1 rc
	shift
	"$bin" --api http://127.0.0.1:1 "$@" >"$SL_TMP/out" 2>"$SL_TMP/err"
	rc=$?
	assert_eq "exit of sandlens $*" 2 "$rc"
	grep -qF "did you mean $want" "$SL_TMP/err" || fail "sandlens $*: no 'did you mean $want': $(cat "$SL_TMP/err")"
	[ -s "$SL_TMP/out" ] && fail "sandlens $*: printed on stdout: $(cat "$SL_TMP/out")"
	return 0
}
typo "'events'?" evnts
typo "'status'?" stauts
typo "'top'?" tpo
typo "--container?" events --contianer abc
typo "--container?" --contianer abc events
typo "--follow?" top --folow
typo "--json?" containers --jsno
typo "--duration?" profile --pid 1 --duraton 1s -o x.svg
"$bin" frobnicate >/dev/null 2>"$SL_TMP/err" && fail "an unknown command succeeded"
grep -q "did you mean" "$SL_TMP/err" && fail "a far-off word got a suggestion: $(cat "$SL_TMP/err")"
echo "ok - typos of commands and options name the right one (exit 2)"

# bash completion, loaded as bash-completion would
command -v bash >/dev/null || skip "no bash"
"$bin" completion bash >"$SL_TMP/sandlens.bash" || fail "completion bash exited $?"
cmp -s "$SL_TMP/sandlens.bash" "$SL_BUILD/doc/sandlens.bash" || fail "build/doc/sandlens.bash is not what the binary generates"
out=$(bash --norc --noprofile -c '
	source "$1" || exit 3
	complete -p sandlens || exit 4
	comp() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _sandlens; echo "${COMPREPLY[*]}"; }
	echo "cmds: $(comp sandlens ev)"
	echo "opts: $(comp sandlens events --co)"
	echo "glob: $(comp sandlens --ap)"
	echo "tasks: $(comp sandlens tasks s)"
	echo "help: $(comp sandlens help sys)"
	echo "after-value: $(comp sandlens --api http://x ev)"
	echo "top: $(comp sandlens top --)"
' _ "$SL_TMP/sandlens.bash" 2>&1) || fail "loading the completion failed ($?): $out"
grep -qx 'complete -F _sandlens sandlens' <<<"$out" || fail "complete -p sandlens: $out"
grep -qx 'cmds: events' <<<"$out" || fail "sandlens ev<TAB>: $out"
grep -qx 'opts: --container' <<<"$out" || fail "sandlens events --co<TAB>: $out"
grep -qx 'glob: --api' <<<"$out" || fail "sandlens --ap<TAB>: $out"
grep -qx 'tasks: show stop' <<<"$out" || fail "sandlens tasks s<TAB>: $out"
grep -qx 'help: syscall-errors' <<<"$out" || fail "sandlens help sys<TAB>: $out"
grep -qx 'after-value: events' <<<"$out" || fail "sandlens --api URL ev<TAB>: $out"
top=$(sed -n 's/^top: //p' <<<"$out")
for o in --follow --json --api --help; do
	grep -qw -- "$o" <<<"$top" || fail "sandlens top --<TAB> lacks $o: $top"
done
grep -qw -- "--type" <<<"$top" && fail "sandlens top --<TAB> offers events' --type: $top"
echo "ok - bash completion: complete -p sandlens, commands, options, words"

# man page
"$bin" man >"$SL_TMP/sandlens.1" || fail "man exited $?"
cmp -s "$SL_TMP/sandlens.1" "$SL_BUILD/doc/sandlens.1" || fail "build/doc/sandlens.1 is not what the binary generates"
if command -v groff >/dev/null; then
	groff -man -Tutf8 -ww -z "$SL_TMP/sandlens.1" 2>"$SL_TMP/groff.err" || fail "groff failed: $(cat "$SL_TMP/groff.err")"
	[ -s "$SL_TMP/groff.err" ] && fail "groff warnings: $(cat "$SL_TMP/groff.err")"
fi
if command -v man >/dev/null; then
	MANWIDTH=100 man -l "$SL_TMP/sandlens.1" 2>"$SL_TMP/man.err" | col -b >"$SL_TMP/man.txt" || fail "man -l failed: $(cat "$SL_TMP/man.err")"
	grep -q "^SANDLENS(1)" "$SL_TMP/man.txt" || fail "man -l: no SANDLENS(1) header: $(head -3 "$SL_TMP/man.txt")"
	for c in $cmds; do
		grep -qE "^   $c( |$)" "$SL_TMP/man.txt" || fail "man page: no section for $c"
	done
	grep -q -- "--no-host" "$SL_TMP/man.txt" || fail "man page: no --no-host"
	echo "ok - man -l renders sandlens(1) with every command"
else
	echo "ok - groff checked the man page (no man(1) here)"
fi
echo "PASS"
