#!/bin/bash
# deploy/prometheus/sandlens-k8s.rules.yml (the kubernetes-mixin's container
# CPU and working-set recording rules and CPUThrottlingHigh over sandlens'
# labels): `promtool check rules` is clean and `promtool test rules` passes
# its test file; a copy of the test with a wrong expected value fails (the
# test can fail).
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_cmd promtool
D=$SL_ROOT/deploy/prometheus
[ -f "$D/sandlens-k8s.rules.yml" ] || fail "missing $D/sandlens-k8s.rules.yml"
promtool check rules "$D/sandlens-k8s.rules.yml" >"$SL_LOGDIR/check.txt" 2>&1 ||
	fail "promtool check rules: $(cat "$SL_LOGDIR/check.txt")"
echo "ok - promtool check rules"
(cd "$D" && promtool test rules sandlens-k8s.rules.test.yml) >"$SL_LOGDIR/test.txt" 2>&1 ||
	fail "promtool test rules: $(cat "$SL_LOGDIR/test.txt")"
echo "ok - promtool test rules"
cp "$D/sandlens-k8s.rules.yml" "$SL_TMP/"
sed 's/value: 0.25/value: 0.3/' "$D/sandlens-k8s.rules.test.yml" >"$SL_TMP/bad.test.yml"
if (cd "$SL_TMP" && promtool test rules bad.test.yml) >"$SL_LOGDIR/bad.txt" 2>&1; then
	fail "promtool test rules passed a wrong expected value"
fi
echo "ok - a wrong expectation fails"
echo "PASS"
