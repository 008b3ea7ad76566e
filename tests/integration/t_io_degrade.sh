#!/bin/bash
# io module degradation (docs/IO.md "Figures and hooks"): a tracepoint the
# kernel lacks degrades only its figure. The kernel here has them all, so
# the test takes the BTF probe's path for a missing one with
# io.missing_tracepoints: balance_dirty_pages (a single hook) and
# block_rq_issue (half of the issue/complete pair: block_rq_complete is not
# loaded either). /healthz: module io "degraded", those three hooks
# "degraded" with a reason naming the tracepoint and the figure, the other
# io hooks attached, GET /api/v1/io answering; a name the module does not
# hook is a configuration error (exit 2 naming io.missing_tracepoints);
# io.slow_io_threshold out of range is exit 2 naming the key; without
# missing tracepoints every io hook is attached.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
sl_agent_start "io:
  missing_tracepoints:
    - balance_dirty_pages
    - block_rq_issue"
curl -sf "$SL_API/healthz" >"$SL_TMP/healthz.json" || fail "GET /healthz"
cp "$SL_TMP/healthz.json" "$SL_LOGDIR/healthz.json"
mstate() { jq -r '[.modules[] | select(.name == "io") | .state][0]' "$SL_TMP/healthz.json"; }
hooks() { jq -c '[.modules[] | select(.name == "io") | .hooks[]]' "$SL_TMP/healthz.json"; }
assert_eq "/healthz io module state" degraded "$(mstate)"
H=$(hooks)
[ "$(jq length <<<"$H")" -ge 9 ] || fail "io hooks not in /healthz: $H"
hook() { jq -c --arg n "$1" '[.[] | select(.name == $n)][0]' <<<"$H"; }
for h in tp_btf/balance_dirty_pages tp_btf/block_rq_issue tp_btf/block_rq_complete; do
	o=$(hook "$h")
	assert_eq "$h state" degraded "$(jq -r .state <<<"$o")"
	r=$(jq -r .reason <<<"$o")
	case "$h" in
	*dirty*) grep -q "balance_dirty_pages.*dirty-page throttling absent" <<<"$r" || fail "$h reason: '$r'" ;;
	*issue) grep -q "block:block_rq_issue.*treated as absent" <<<"$r" || fail "$h reason: '$r'" ;;
	*complete) grep -q "pair block:block_rq_issue" <<<"$r" || fail "$h reason: '$r'" ;;
	esac
	echo "ok - $h: $r"
done
for h in tp_btf/block_rq_insert tp_btf/mm_filemap_add_to_page_cache tp_btf/page_cache_sync_ra; do
	assert_eq "$h state" attached "$(jq -r .state <<<"$(hook "$h")")"
done
curl -sf "$SL_API/api/v1/io" >/dev/null || fail "GET /api/v1/io failed with degraded hooks"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"

# bad configuration: exit 2 naming the key
bad() {
	sl_write_config "$2"
	"$SL_BUILD/sandlensd" --config "$SL_CONFIG" >"$SL_TMP/bad.out" 2>&1
	local rc=$?
	assert_eq "$1: exit status" 2 "$rc"
	grep -q "$3" "$SL_TMP/bad.out" || fail "$1: message does not name $3: $(cat "$SL_TMP/bad.out")"
	echo "ok - $1: $(grep -m1 "$3" "$SL_TMP/bad.out")"
}
bad "unknown tracepoint" "io:
  missing_tracepoints: [sched_switch]" "io.missing_tracepoints\[0\]"
bad "threshold out of range" "io:
  slow_io_threshold: 0" "io.slow_io_threshold"
bad "ring buffer not a power of two" "io:
  ringbuf_size: 12KiB" "io.ringbuf_size"

sl_agent_start
curl -sf "$SL_API/healthz" >"$SL_TMP/healthz.json" || fail "GET /healthz"
H=$(hooks)
assert_eq "/healthz io module state (none missing)" running "$(mstate)"
assert_eq "io hooks not attached (none missing)" 0 "$(jq '[.[] | select(.state != "attached")] | length' <<<"$H")"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
