#!/bin/bash
# A fresh clone without the shared cases beside it (../shared/cases): every
# unit test that reads them must FAIL (not skip: CI needs the cases), and say
# where the cases are expected: the path, and that it is the project's
# sibling directory shared/cases. Runs the unit test binaries from a stand-in
# project root whose parent has no shared/, and with SL_SHARED_CASES pointing
# nowhere. Needs no root.
source "$(dirname "$0")/../lib/common.sh"
sl_init

proj=$SL_TMP/clone/sandlens # ../shared/cases from here: $SL_TMP/clone/shared/cases, absent
mkdir -p "$proj/tests/unit"
ln -s "$SL_ROOT/tests/unit/cases" "$proj/tests/unit/cases"
for t in test_cgpath test_cgstat test_sym_cases; do
	bin=$SL_BUILD/tests/$t
	[ -x "$bin" ] || fail "$bin not built"
	for mode in default env; do
		out=$SL_LOGDIR/$t-$mode.out
		if [ $mode = default ]; then
			want="$SL_TMP/clone/shared/cases"
			(cd "$proj" && env -u SL_SHARED_CASES timeout -k 5 60 "$bin") >"$out" 2>&1
		else
			want="$SL_TMP/nowhere"
			(cd "$proj" && SL_SHARED_CASES=$SL_TMP/nowhere timeout -k 5 60 "$bin") >"$out" 2>&1
		fi
		rc=$?
		[ "$rc" -ne 0 ] || fail "$t ($mode): passed without the shared cases"
		[ "$rc" -ne 77 ] || fail "$t ($mode): skipped without the shared cases (must fail)"
		grep -q 'FAILED' "$out" || fail "$t ($mode): no cmocka failure reported: $(head -c 400 "$out")"
		grep -qF "$want" "$out" || fail "$t ($mode): output does not name $want: $(head -c 600 "$out")"
		grep -qF 'sibling directory shared/cases' "$out" ||
			fail "$t ($mode): output does not say the cases belong in the sibling directory shared/cases: $(head -c 600 "$out")"
		grep -qF 'SL_SHARED_CASES' "$out" || fail "$t ($mode): output does not mention SL_SHARED_CASES"
		echo "ok - $t ($mode): exit $rc, $(grep -m1 'missing' "$out" | head -c 160)"
	done
done
echo "PASS"
