#!/bin/bash
# A full exec token-bucket table hides nothing (break-it, session 11): the
# keys are (ppid, comm), so a local user exec'ing under many names could
# fill proc.exec_buckets and, while it stayed full, every other user's
# execs of a new key were dropped. Now an exec whose key finds no room is
# delivered without a limit and counted in
# sandlens_proc_ratelimit_table_full_total{type="exec"}.
# With proc.exec_buckets at its minimum (64), uid 65534 execs /bin/true
# under 100 names (symlinks) from one shell, then root execs a marker
# name at once: the marker's exec event is in the store, the counter
# moved, and no exec is counted as dropped for a full table.
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_agent_env
id nobody >/dev/null 2>&1 || skip "no user nobody"

sl_agent_start "proc:
  exec_buckets: 64"
chmod 711 "$SL_TMP"
D=$SL_TMP/names && mkdir -m 0755 "$D"
for i in $(seq -w 0 99); do ln -s /bin/true "$D/sl-fill-$i"; done
MARK=slvict$$
ln -s /bin/true "$D/$MARK"
full0=$(sl_metric sandlens_proc_ratelimit_table_full_total 'type="exec"')
# fill, then the marker while the table is still full (idle buckets are
# swept only after 10 s)
runuser -u nobody -- sh -c "for f in $D/sl-fill-*; do \"\$f\"; done"
"$D/$MARK"
full1=$(sl_metric sandlens_proc_ratelimit_table_full_total 'type="exec"')
note "execs delivered without a limit (table full): $((full1 - full0))"
[ "$((full1 - full0))" -ge 1 ] || fail "sandlens_proc_ratelimit_table_full_total{type=\"exec\"} did not move: the table of 64 never filled"
n=0 got=0
while [ $n -lt 50 ]; do
	got=$(sl_all_events "type=exec" | jq -s --arg m "$MARK" '[.[] | select(.comm == $m)] | length')
	[ "$got" -ge 1 ] && break
	sleep 0.2
	n=$((n + 1))
done
assert_eq "exec events of the marker $MARK after uid 65534 filled the table" 1 "$got"
echo "ok - the marker's exec was delivered while the table was full"
n=$(curl -sf -m 10 "$SL_API/metrics" | grep -c '^sandlens_events_dropped_total{reason="ratelimit_table_full",type="exec"}')
assert_eq "exec drop samples for a full table (nothing is dropped for it now)" 0 "$n"
sl_agent_stop || fail "agent exit status $?"
sl_check_failed
