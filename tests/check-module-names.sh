#!/bin/bash
# The names check (issue 9 item 1, src/agent/module.h): no file
# outside a module's own files names the module.
#
#   tests/check-module-names.sh [--root DIR] [--build DIR]
#
# Modules: the lines "\tM(<name>)" of src/modules/registry.c; while
# that file does not exist, the files of src/modules/*.c that define
# "const struct sl_module_ops sl_<name>_module".
#
# A module m's own files (never scanned for m): bpf/<m>.bpf.c and the parts
# of it split out as bpf/<m>_*.bpf.h,
# include/sandlens/<m>.h, src/modules/<m>*.{c,h}, docs/<M>.md (M = m in
# capitals), tests/**, bench/**, and src/modules/registry.c.
#
# Scanned: every *.c and *.h under src/, bpf/ and include/, and the Makefile,
# with comments removed (C /* */ and //, Makefile #). In a file not m's own,
# a violation is:
#   include      #include of "modules/<m>...", "sandlens/<m>.h" or "<m>.skel.h"
#   identifier   sl_<m>_*, SL_<M>_* or <m>_bpf*
#   config       cfg.<m>. or cfg-><m>. (also ->cfg.<m>.)
#   string       a string literal "<m>" or "<m>.<key>..."
#   kind         a string literal equal to one of m's event kind names: the
#                .name of m's struct sl_event_kind declarations in
#                src/modules/<m>*.c, else (before the declarations exist)
#                the SL_EV_<NAME> record types of include/sandlens/<m>.h
#   metric       sandlens_<m>_* (m's metric family prefix)
#   path         (Makefile) modules/<m>, <m>.bpf, <m>.skel
#   symbol       in the built objects (BUILD/obj/**/*.o, default build/), an
#                undefined symbol of an object outside obj/modules/<m>*.o
#                and obj/modules/registry.o that m's objects define
#
# Allowed coincidences: tests/check-module-names.allow, one per line
#   FILE-GLOB  ERE  # reason
# (a bash glob on the path relative to the root, an extended regex matched
# against the violation's text; the reason is required). An entry that
# matches no violation is itself reported (stale).
#
# Prints each violation as "file:line: what", then
# "names: P passed, F failed, 0 skipped" (one count per module, plus one
# failure for stale or malformed allow entries). Exit 0 clean, 1 on any
# violation, 2 on a usage error.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=
while [ $# -gt 0 ]; do
	case $1 in
	--root) ROOT=$(cd "$2" && pwd) || exit 2; shift 2 ;;
	--build) BUILD=$2; shift 2 ;;
	*) echo "usage: $0 [--root DIR] [--build DIR]" >&2; exit 2 ;;
	esac
done
[ -n "$BUILD" ] || BUILD=$ROOT/build
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
cd "$ROOT" || exit 2
TMP=$(mktemp -d /tmp/sl-names.XXXXXX) || exit 2
trap 'rm -rf "$TMP"' EXIT

# ---- the modules ----
if [ -f src/modules/registry.c ]; then
	modules=$(sed -n 's/^\tM(\([a-z][a-z0-9_]*\)) *\\$/\1/p' src/modules/registry.c)
	from="src/modules/registry.c"
else
	modules=$(grep -ho 'const struct sl_module_ops sl_[a-z][a-z0-9_]*_module' src/modules/*.c 2>/dev/null |
		sed 's/.*sl_\(.*\)_module$/\1/')
	from="src/modules/*.c (no src/modules/registry.c yet)"
fi
modules=$(echo "$modules" | sort -u | grep . || true)
if [ -z "$modules" ]; then
	echo "check-module-names: no module found in $from" >&2
	exit 2
fi

# Event kind names of module $1, one per line.
kinds_of() {
	local m=$1 k
	k=$(awk '
		/struct[ \t]+sl_event_kind[^;(]*\[[^]]*\][ \t]*=/ { in_decl = 1 }
		in_decl {
			s = $0
			while (match(s, /\.name[ \t]*=[ \t]*"[a-z][a-z0-9_]*"/)) {
				t = substr(s, RSTART, RLENGTH); sub(/^[^"]*"/, "", t); sub(/"$/, "", t); print t
				s = substr(s, RSTART + RLENGTH)
			}
			s = $0
			while (match(s, /\{[ \t]*"[a-z][a-z0-9_]*"[ \t]*,/)) {
				t = substr(s, RSTART, RLENGTH); sub(/^[^"]*"/, "", t); sub(/".*$/, "", t); print t
				s = substr(s, RSTART + RLENGTH)
			}
			if ($0 ~ /^[ \t]*};/) in_decl = 0
		}' src/modules/"$m"*.c 2>/dev/null)
	if [ -z "$k" ] && [ -f include/sandlens/"$m".h ]; then
		k=$(grep -o 'SL_EV_[A-Z0-9_]*[[:space:]]*=' include/sandlens/"$m".h | sed 's/^SL_EV_//; s/[[:space:]]*=$//' |
			tr 'A-Z' 'a-z')
	fi
	echo "$k" | sort -u | grep . || true
}

: >"$TMP/modules"
for m in $modules; do
	printf '%s %s\n' "$m" "$(kinds_of "$m" | tr '\n' ',' | sed 's/,$//')" >>"$TMP/modules"
done

# ---- sources, comments removed (line numbers kept) ----
files=$( (find src bpf include -type f \( -name '*.c' -o -name '*.h' \) 2>/dev/null; [ -f Makefile ] && echo Makefile) | sort)
mkdir -p "$TMP/s"
for f in $files; do
	mkdir -p "$TMP/s/$(dirname "$f")"
	if [ "$f" = Makefile ]; then
		sed 's/#.*//' "$f" >"$TMP/s/$f"
	else
		awk '
		{
			line = $0
			if (!inc && index(line, "/") == 0) { print line; next }
			out = ""; i = 1; n = length(line); q = ""
			while (i <= n) {
				c = substr(line, i, 1)
				if (inc) {
					if (substr(line, i, 2) == "*/") { inc = 0; i += 2; out = out " " } else i++
					continue
				}
				if (q != "") {
					out = out c
					if (c == "\\") { out = out substr(line, i + 1, 1); i += 2; continue }
					if (c == q) q = ""
					i++
					continue
				}
				if (substr(line, i, 2) == "/*") { inc = 1; i += 2; continue }
				if (substr(line, i, 2) == "//") break
				if (c == "\"" || c == "'\''") q = c
				out = out c
				i++
			}
			print out
		}' "$f" >"$TMP/s/$f"
	fi
done

# ---- source rules ----
(cd "$TMP/s" && awk -v modlist="$TMP/modules" '
function own(m, f,   p) {
	p = "src/modules/" m
	return f == "bpf/" m ".bpf.c" || (substr(f, 1, length(m) + 5) == "bpf/" m "_" && f ~ /\.bpf\.h$/) ||
	       f == "include/sandlens/" m ".h" ||
	       (substr(f, 1, length(p)) == p && f ~ /\.[ch]$/) || f == "docs/" toupper(m) ".md" ||
	       f ~ /^tests\// || f ~ /^bench\// || f == "src/modules/registry.c"
}
function word_before(s, start) { return start == 1 || substr(s, start - 1, 1) !~ /[A-Za-z0-9_]/ }
# every occurrence of regex re in s starting at a word boundary: "what: <occurrence>"
function each(s, re, what,   t, off, r) {
	t = s; off = 0
	while (match(t, re)) {
		if (word_before(s, off + RSTART))
			report(what " " substr(t, RSTART, RLENGTH))
		off += RSTART + RLENGTH - 1
		t = substr(t, RSTART + RLENGTH)
	}
}
function report(what) { printf "%s:%d: %s (module %s)\n", FILENAME, FNR, what, M }
BEGIN {
	while ((getline l < modlist) > 0) {
		n = split(l, a, " "); nm++; mod[nm] = a[1]; kinds[nm] = (n > 1 ? a[2] : "")
	}
}
{
	line = $0
	for (i = 1; i <= nm; i++) {
		m = mod[i]; M = m
		if (own(m, FILENAME))
			continue
		if (index(line, m) == 0 && index(line, toupper(m)) == 0 && kinds[i] == "")
			continue
		U = toupper(m)
		if (FILENAME == "Makefile") {
			each(line, "modules/" m, "path")
			each(line, m "\\.bpf", "path")
			each(line, m "\\.skel", "path")
		} else if (line ~ /^[ \t]*#[ \t]*include/) {
			if (line ~ ("[<\"](modules/" m "[^\">]*|sandlens/" m "\\.h|([^\">]*/)?" m "\\.skel\\.h)[\">]")) {
				inc = line; sub(/^[ \t]*#[ \t]*include[ \t]*/, "", inc); sub(/[ \t].*$/, "", inc)
				report("include " inc)
			}
		}
		each(line, "sl_" m "_[A-Za-z0-9_]*", "identifier")
		each(line, "SL_" U "_[A-Za-z0-9_]*", "identifier")
		each(line, m "_bpf[A-Za-z0-9_]*", "identifier")
		each(line, "cfg(\\.|->)" m "\\.[A-Za-z0-9_]*", "config")
		each(line, "sandlens_" m "_[A-Za-z0-9_]*", "metric family")
		if (FILENAME == "Makefile" || index(line, "\"") == 0)
			continue
		# string literals
		t = line
		nk = split(kinds[i], ks, ",")
		while (match(t, /"([^"\\]|\\.)*"/)) {
			lit = substr(t, RSTART + 1, RLENGTH - 2)
			t = substr(t, RSTART + RLENGTH)
			if (lit == m)
				report("string \"" lit "\"")
			else if (substr(lit, 1, length(m) + 1) == m "." && substr(lit, length(m) + 2, 1) ~ /[A-Za-z0-9_]/)
				report("string \"" lit "\"")
			for (k = 1; k <= nk; k++)
				if (lit == ks[k])
					report("event kind \"" lit "\"")
		}
	}
}' $files) >"$TMP/violations"

# ---- symbol rule: undefined symbols of other objects that a module defines ----
OBJ=$BUILD/obj
if [ -d "$OBJ" ] && command -v nm >/dev/null; then
	for m in $modules; do
		own_objs=$(ls "$OBJ"/modules/"$m"*.o 2>/dev/null)
		[ -n "$own_objs" ] || continue
		# shellcheck disable=SC2086
		nm --defined-only -g $own_objs 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$TMP/def.$m"
		find "$OBJ" -name '*.o' | sort | while read -r o; do
			rel=${o#"$OBJ"/}
			case $rel in modules/"$m"*.o | modules/registry.o) continue ;; esac
			nm -l -u "$o" 2>/dev/null | awk -v defs="$TMP/def.$m" -v obj="${o#"$ROOT"/}" -v root="$ROOT/" -v m="$m" '
				BEGIN { while ((getline s < defs) > 0) def[s] = 1 }
				$1 == "U" && ($2 in def) {
					where = obj
					if (NF >= 3) { where = $3; if (index(where, root) == 1) where = substr(where, length(root) + 1) }
					printf "%s: undefined symbol %s, defined by the module (module %s)\n", where, $2, m
				}'
		done
	done >>"$TMP/violations"
else
	echo "check-module-names: note: no objects in $OBJ: the symbol rule was not checked" >&2
fi

# ---- allowed coincidences ----
ALLOW=tests/check-module-names.allow
bad_allow=0
: >"$TMP/allowed"
if [ -f "$ALLOW" ]; then
	n=0
	while IFS= read -r l || [ -n "$l" ]; do
		n=$((n + 1))
		case $l in '' | '#'*) continue ;; esac
		glob=$(echo "$l" | awk '{ print $1 }')
		re=$(echo "$l" | awk '{ print $2 }')
		reason=$(echo "$l" | sed -n 's/^[^#]*#[[:space:]]*//p')
		if [ -z "$glob" ] || [ -z "$re" ] || [ -z "$reason" ]; then
			echo "$ALLOW:$n: malformed entry (want: FILE-GLOB ERE # reason)"
			bad_allow=1
			continue
		fi
		hit=0
		while IFS= read -r v; do
			vf=${v%%:*}
			# shellcheck disable=SC2053
			if [[ $vf == $glob ]] && echo "${v#*: }" | grep -qE -- "$re"; then
				echo "$v" >>"$TMP/allowed"
				hit=1
			fi
		done <"$TMP/violations"
		if [ $hit = 0 ]; then
			echo "$ALLOW:$n: entry matches no violation (stale): $l"
			bad_allow=1
		fi
	done <"$ALLOW"
fi
sort -u "$TMP/allowed" >"$TMP/allowed.s"
sort -u "$TMP/violations" | sort -t: -k1,1 -k2,2n | grep -vxFf "$TMP/allowed.s" >"$TMP/left" || true
cat "$TMP/left"

P=0 F=0
for m in $modules; do
	if grep -q "(module $m)\$" "$TMP/left"; then F=$((F + 1)); else P=$((P + 1)); fi
done
F=$((F + bad_allow))
echo "check-module-names: modules from $from: $(echo $modules); $(wc -l <"$TMP/left") violation(s), $(wc -l <"$TMP/allowed.s") allowed" >&2
echo "names: $P passed, $F failed, 0 skipped"
[ "$F" -eq 0 ]
