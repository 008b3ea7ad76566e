#!/bin/bash
# One identity layer (issue 9 item 3): a plain runc container whose cgroup is
# 42 levels deep (/sandlens-deep-<hex>/l01/.../l41/<id>) gets
#   1. workload statistics: GET /api/v1/workloads/<id>/stats 200 with its
#      container read, and `sandlens stats <id>` prints it;
#   2. event attribution: its exec events carry its container id (runtime runc);
#   3. a profile task target: POST /api/v1/tasks {"container": id} is accepted
#      and the task resolves to the container and ends done.
# Before the one walker (depth bound 128, src/cgroup/cgwalk.h) the statistics
# and task-target walkers stopped at 32 levels: 1 and 3 failed.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/lib_prof.sh"
sl_init
sl_require_agent_env
ct_require

DEPTH=42
BASE="/sandlens-deep-$(_ct_hex 4)"
CG=$BASE
for i in $(seq -w 1 $((DEPTH - 2))); do CG="$CG/l$i"; done
_rm_deep() {
	local h
	for h in /sys/fs/cgroup /sys/fs/cgroup/*/; do
		h=${h%/}
		[ -d "$h$BASE" ] && find "$h$BASE" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	return 0
}
# registered before ct_create: hooks run last-first, so runc delete goes first
sl_on_exit _rm_deep

cat >"$SL_TMP/run.sh" <<'EOF'
#!/bin/sh
/bin/sl-testprog exit 0
echo started
exec /bin/sl-testprog spin 40
EOF
ct_create deep plain --script "$SL_TMP/run.sh" -- /run.sh
CT_CGPATH="$CG/$CT_ID"
jq --arg cg "$CT_CGPATH" '.linux.cgroupsPath = $cg' "$CT_DIR/config.json" >"$CT_DIR/c.json" &&
	mv "$CT_DIR/c.json" "$CT_DIR/config.json" || fail "jq edit of cgroupsPath failed"
levels=$(tr -cd / <<<"$CT_CGPATH" | wc -c)
assert_eq "cgroup depth" "$DEPTH" "$levels"

sl_agent_start "stats:
  interval: 500ms
attribution:
  runc_root: $CT_RUNC_ROOT"

ct_start_bg
ct_wait_running
n=0
until grep -q started "$CT_DIR/stdout" 2>/dev/null; do
	[ $n -lt 100 ] || fail "the container did not start its workload within 10 s"
	sleep 0.1
	n=$((n + 1))
done
note "container $CT_ID at $CT_CGPATH ($levels levels)"

# 2. event attribution: the exec of sl-testprog in the container
ev=$(sl_wait_events "type=exec&container=$CT_ID" \
	'map(select(.comm == "sl-testprog" or .filename == "/bin/sl-testprog")) | .[0]' 20)
assert_eq "exec container_id" "$CT_ID" "$(jq -r .container_id <<<"$ev")"
assert_eq "exec runtime" "runc" "$(jq -r .runtime <<<"$ev")"
echo "ok - exec events carry the container id"

# 1. statistics
ans="" code=""
for try in $(seq 1 40); do
	code=$(curl -s -m 10 -o "$SL_TMP/stats.json" -w '%{http_code}' "$SL_API/api/v1/workloads/$CT_ID/stats")
	[ "$code" = 200 ] && break
	sleep 0.25
done
cp "$SL_TMP/stats.json" "$SL_LOGDIR/stats.json"
assert_eq "GET /api/v1/workloads/<id>/stats" 200 "$code"
ans=$(cat "$SL_TMP/stats.json")
assert_eq "containers read" 1 "$(jq -r .containers_read <<<"$ans")"
assert_eq "container path" "$CT_CGPATH" "$(jq -r '.containers[0].cgroup_path // .containers[0].path' <<<"$ans")"
out=$(sl_cli stats "$CT_ID") || fail "sandlens stats $CT_ID failed: $out"
printf '%s\n' "$out" >"$SL_LOGDIR/cli-stats.txt"
grep -q "containers read 1 of 1" <<<"$out" || fail "sandlens stats: no container count: $out"
echo "ok - workload statistics"

# 3. a profile task on the container
r=$(task_post "{\"type\":\"profile_on_cpu\",\"target\":{\"container\":\"$CT_ID\"},\"duration_s\":2}")
code=${r%% *}
body=${r#* }
printf '%s\n' "$body" >"$SL_LOGDIR/task-post.json"
case "$code" in 200 | 201 | 202) ;; *) fail "POST /api/v1/tasks: $code $body" ;; esac
tid=$(jq -r .id <<<"$body")
R=$(task_wait "$tid" 30)
printf '%s\n' "$R" >"$SL_LOGDIR/task.json"
assert_eq "task status" "done" "$(jq -r .status <<<"$R")"
assert_eq "resolved container" "$CT_ID" "$(jq -r .resolved.container_id <<<"$R")"
[ "$(jq -r '.result.total_count // 0' <<<"$R")" -gt 0 ] || fail "the profile has no samples: $(jq -c .result <<<"$R" | head -c 300)"
echo "ok - profile task target"

runc --root "$CT_RUNC_ROOT" kill "$CT_ID" KILL >/dev/null 2>&1
ct_wait_bg 20 || true
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
