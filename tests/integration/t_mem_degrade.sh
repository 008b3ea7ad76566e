#!/bin/bash
# mem module degradation (docs/MEM.md "Degradation"): a tracepoint the
# kernel lacks degrades only its figure. The kernel here has them all, so
# the test takes the same path the BTF probe takes for a missing one with
# mem.missing_tracepoints: mm_vmscan_throttled (a single hook) and
# mm_vmscan_memcg_reclaim_begin (half of a pair: its _end is not loaded
# either). /healthz (.modules[] as src/agent/health.c emits it): module
# mem "degraded", those three hooks "degraded" with a reason naming the
# tracepoint and the figure, every other mem hook attached, the module
# running (GET /api/v1/mem answers); without missing tracepoints: mem
# "running", every hook attached.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_agent_start "mem:
  missing_tracepoints:
    - mm_vmscan_throttled
    - mm_vmscan_memcg_reclaim_begin"
curl -sf "$SL_API/healthz" >"$SL_TMP/healthz.json" || fail "GET /healthz"
cp "$SL_TMP/healthz.json" "$SL_LOGDIR/healthz.json"
mstate() { jq -r '[.modules[] | select(.name == "mem") | .state][0]' "$SL_TMP/healthz.json"; }
assert_eq "/healthz mem module state" degraded "$(mstate)"
hooks() { jq -c '[.modules[] | select(.name == "mem") | .hooks[]]' "$SL_TMP/healthz.json"; }
H=$(hooks)
[ "$(jq length <<<"$H")" -ge 12 ] || fail "mem hooks not in /healthz: $H"
hook() { jq -c --arg n "$1" '[.[] | select(.name == $n)][0]' <<<"$H"; }
for h in tp_btf/mm_vmscan_throttled tp_btf/mm_vmscan_memcg_reclaim_begin tp_btf/mm_vmscan_memcg_reclaim_end; do
	o=$(hook "$h")
	assert_eq "$h state" degraded "$(jq -r .state <<<"$o")"
	r=$(jq -r .reason <<<"$o")
	case "$h" in
	*throttled) grep -q "mm_vmscan_throttled.*reclaim throttling absent" <<<"$r" || fail "$h reason: '$r'" ;;
	*_begin) grep -q "mm_vmscan_memcg_reclaim_begin.*memcg reclaim latency absent" <<<"$r" || fail "$h reason: '$r'" ;;
	*_end) grep -q "pair.*mm_vmscan_memcg_reclaim_begin" <<<"$r" || fail "$h reason: '$r'" ;;
	esac
	echo "ok - $h: $r"
done
for h in tp_btf/mm_vmscan_direct_reclaim_begin tp_btf/mm_vmscan_direct_reclaim_end tp_btf/mm_compaction_end \
	tp_btf/mm_vmscan_kswapd_wake tp_btf/cgroup_rmdir; do
	assert_eq "$h state" attached "$(jq -r .state <<<"$(hook "$h")")"
done
curl -sf "$SL_API/api/v1/mem" >/dev/null || fail "GET /api/v1/mem failed with a degraded hook"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"

# and with nothing missing: every mem hook attached
sl_agent_start
curl -sf "$SL_API/healthz" >"$SL_TMP/healthz.json" || fail "GET /healthz"
H=$(hooks)
assert_eq "/healthz mem module state (none missing)" running "$(mstate)"
[ "$(jq length <<<"$H")" -ge 12 ] || fail "mem hooks not in /healthz: $H"
assert_eq "mem hooks not attached (none missing)" 0 "$(jq '[.[] | select(.state != "attached")] | length' <<<"$H")"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
