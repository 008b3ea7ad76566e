#!/bin/bash
# tests/check-module-names.sh on fixture trees: a minimal tree with one
# module "foo" passes clean; a copy with one planted violation of each kind
# fails and names the file, the line and what; comments, the module's own
# files and tests/ are not violations; the allow list suppresses a listed
# coincidence and is itself checked (stale, no reason); with
# src/modules/registry.c the module list comes from it. Needs no root.
# sl-san: once (the names-check script on fixture trees: no sandlens binary involved)
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_cmd cc nm
CHECK=$SL_ROOT/tests/check-module-names.sh

base=$SL_TMP/base
mkdir -p "$base"/{src/modules,src/agent,include/sandlens,bpf,tests/unit,docs}
cat >"$base/src/modules/foo.c" <<'C'
/* the foo module: names itself freely (sl_foo_*, "foo", sandlens_foo_) */
#include "modules/foo.h"
#include "sandlens/foo.h"
struct sl_event_kind { const char *name; };
struct sl_module_ops { int x; };
static const struct sl_event_kind foo_kinds[] = {
	{.name = "foo_stall"},
	{.name = "foo_event"},
};
const struct sl_module_ops sl_foo_module = {0};
int sl_foo_helper(void) { return foo_kinds[0].name[0] == 'f'; }
const char *sl_foo_family(void) { return "sandlens_foo_seconds"; }
C
echo 'int sl_foo_helper(void);' >"$base/src/modules/foo.h"
echo '#define SL_FOO_MAX 4' >"$base/include/sandlens/foo.h"
echo '#include "sandlens/foo.h" /* foo.bpf.c: own */' >"$base/bpf/foo.bpf.c"
echo 'see sl_foo_helper, "foo", sandlens_foo_' >"$base/docs/FOO.md"
echo 'int t(void) { return sl_foo_helper() + SL_FOO_MAX; } /* "foo_event" */' >"$base/tests/unit/test_foo.c"
cat >"$base/src/agent/agent.c" <<'C'
/* The agent knows modules through the ops only: a comment may say
 * sl_foo_helper, "foo" or sandlens_foo_total without being a violation. */
// so may a line comment: #include "modules/foo.h"
static const char *food = "food", *foobar = "foo_bar.x"; /* near misses */
int sl_foobar_x(void);
int agent_main(void) { return food[0] + foobar[0]; }
C
printf 'LIB_SRCS := $(wildcard src/modules/*.c)\n# a comment naming src/modules/foo.c\n' >"$base/Makefile"

# the symbol rule needs objects: the module's and an agent object that calls it
compile() { # $1 tree, $2 source (relative), $3 object (relative to build/obj)
	mkdir -p "$(dirname "$1/build/obj/$3")"
	cc -std=c11 -g -c -I"$1/src" -I"$1/include" -o "$1/build/obj/$3" "$1/$2" || fail "cc $2"
}
compile "$base" src/modules/foo.c modules/foo.o
compile "$base" src/agent/agent.c agent/agent.o

run_check() { # $1 tree; sets out, rc
	out=$("$CHECK" --root "$1" 2>"$SL_LOGDIR/check.err")
	rc=$?
}

run_check "$base"
[ "$rc" = 0 ] || fail "the clean tree failed (exit $rc): $out $(cat "$SL_LOGDIR/check.err")"
echo "$out" | grep -qx 'names: 1 passed, 0 failed, 0 skipped' || fail "clean tree: no 'names: 1 passed' line: $out"
echo "ok - the clean tree passes: $(echo "$out" | tail -1)"

# One planted violation per case: NAME, FILE, the text planted (a line
# appended to FILE), the text expected after "FILE:LINE: ".
n=0
plant() { # $1 name, $2 file, $3 line to append, $4 expected "what"
	local t=$SL_TMP/case$((n += 1)) f=$2 line
	cp -a "$base" "$t"
	mkdir -p "$(dirname "$t/$f")"
	printf '%s\n' "$3" >>"$t/$f"
	line=$(wc -l <"$t/$f")
	run_check "$t"
	[ "$rc" = 1 ] || fail "$1: exit $rc, not 1, with '$3' in $f: $out"
	echo "$out" | grep -qF "$f:$line: $4 (module foo)" ||
		fail "$1: no '$f:$line: $4 (module foo)' in: $out"
	echo "$out" | grep -qx 'names: 0 passed, 1 failed, 0 skipped' || fail "$1: counts: $out"
	echo "ok - $1: $f:$line: $4"
}
plant "include of modules/" src/agent/agent.c '#include "modules/foo.h"' 'include "modules/foo.h"'
plant "include of the ABI header" src/agent/agent.c '#include <sandlens/foo.h>' 'include <sandlens/foo.h>'
plant "include of the skeleton" src/agent/agent.c '#include "foo.skel.h"' 'include "foo.skel.h"'
plant "identifier sl_foo_*" src/agent/agent.c 'int use(void) { return sl_foo_helper(); }' 'identifier sl_foo_helper'
plant "identifier SL_FOO_*" include/sandlens/common.h '#define X SL_FOO_MAX' 'identifier SL_FOO_MAX'
plant "identifier foo_bpf*" bpf/other.bpf.c 'struct foo_bpf *skel;' 'identifier foo_bpf'
plant "config path" src/agent/agent.c 'int on(struct a *a) { return a->cfg.foo.enabled; }' 'config cfg.foo.enabled'
plant "config pointer" src/agent/agent.c 'int on2(struct a *a) { return a->cfg->foo.rate; }' 'config cfg->foo.rate'
plant "module name string" src/agent/agent.c 'const char *mn = "foo";' 'string "foo"'
plant "config key string" src/agent/agent.c 'const char *key = "foo.threshold";' 'string "foo.threshold"'
plant "event kind string" src/api/api.c 'const char *kind = "foo_stall";' 'event kind "foo_stall"'
plant "metric family" src/agent/agent.c 'const char *fam = "sandlens_foo_stalls_total";' 'metric family sandlens_foo_stalls_total'
plant "Makefile path" Makefile 'FUZZ_SRCS := src/modules/foo_parse.c' 'path modules/foo'
plant "another module's file" src/modules/bar.c 'int bar(void) { return sl_foo_helper(); }' 'identifier sl_foo_helper'

# the symbol rule alone: the name is pasted by the preprocessor, so no
# source rule sees it; nm over the object does
t=$SL_TMP/case-symbol
cp -a "$base" "$t"
cat >>"$t/src/agent/agent.c" <<'C'
#define HELPER(m) sl_##m##_helper
int HELPER(foo)(void);
int use_pasted(void) { return HELPER(foo)(); }
C
compile "$t" src/agent/agent.c agent/agent.o
run_check "$t"
[ "$rc" = 1 ] || fail "symbol: exit $rc: $out"
echo "$out" | grep -qE '^src/agent/agent.c:[0-9]+: undefined symbol sl_foo_helper, defined by the module \(module foo\)$' ||
	fail "symbol: no 'src/agent/agent.c:N: undefined symbol sl_foo_helper' in: $out"
[ "$(echo "$out" | grep -c 'module foo')" = 1 ] || fail "symbol: a source rule fired too: $out"
echo "ok - symbol: $(echo "$out" | head -1)"

# the allow list: a listed coincidence passes; a stale entry and one
# without a reason fail
t=$SL_TMP/case-allow
cp -a "$base" "$t"
echo 'static const char *const keys[] = {"foo_event"};' >>"$t/src/agent/agent.c"
run_check "$t"
[ "$rc" = 1 ] || fail "allow: the coincidence was not found: $out"
echo 'src/agent/*.c  ^event.kind."foo_event"  # a fixture: a file format key of the same name' >"$t/tests/check-module-names.allow"
run_check "$t"
[ "$rc" = 0 ] || fail "allow: a listed coincidence still fails: $out"
echo 'src/api/*.c  ^string  # matches nothing' >>"$t/tests/check-module-names.allow"
run_check "$t"
[ "$rc" = 1 ] && echo "$out" | grep -q 'tests/check-module-names.allow:2: entry matches no violation (stale)' ||
	fail "allow: a stale entry passed: $out"
printf 'src/agent/*.c  ^event.kind."foo_event"\n' >"$t/tests/check-module-names.allow"
run_check "$t"
[ "$rc" = 1 ] && echo "$out" | grep -q 'tests/check-module-names.allow:1: malformed entry' ||
	fail "allow: an entry without a reason passed: $out"
echo "ok - allow list: listed coincidence allowed, stale and reason-less entries fail"

# the registry names the modules once it exists: "bar" listed there is a
# module too (its name in the agent is a violation), "foo" stays one
t=$SL_TMP/case-registry
cp -a "$base" "$t"
printf '/* the registry */\n#define SL_MODULES(M) \\\n\tM(foo) \\\n\tM(bar) \\\n\t/* end */\n' \
	>"$t/src/modules/registry.c"
echo 'const char *b = "bar";' >>"$t/src/agent/agent.c"
run_check "$t"
[ "$rc" = 1 ] && echo "$out" | grep -qF "src/agent/agent.c:7: string \"bar\" (module bar)" ||
	fail "registry: bar not taken from src/modules/registry.c: $out"
echo "$out" | grep -qx 'names: 1 passed, 1 failed, 0 skipped' || fail "registry: counts: $out"
grep -q 'src/modules/registry.c' "$SL_LOGDIR/check.err" || fail "registry: does not say where the modules came from"
echo "ok - registry: modules from src/modules/registry.c"
echo "PASS"
