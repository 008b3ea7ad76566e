#!/bin/bash
# PROF-3, issue 12 item 2: symbolization that does not need the process
# alive. A runc container (busybox rootfs) runs an exec-heavy loop, the
# agent-sandbox shape `dd if=/dev/urandom | md5sum` with programs that have
# symbols: `sl-shorthash gen 8 | sl-shorthash sum`, two static processes
# that live a few ms each, far less than the task's 1 s snapshot poll.
# An on-CPU profile of the container for 5 s must give:
#  - >= 90 % of the samples of the short-lived processes with a symbolized
#    user leaf (a function, not [unknown] / [anon] / module+0xoff);
#  - >= 90 % of all samples (busybox sh included: stripped, so its frames
#    are busybox+0xOFF) with a user leaf of a known module (not [unknown]);
#  - no stack with the bogus outer frames of a frame-pointer walk above
#    glibc's start code (register_tm_clones, __do_global_dtors_aux,
#    frame_dummy, deregister_tm_clones): every sl-shorthash stack starts at
#    a start function (_start / __libc_start_main / __libc_start_call_main).
# The continuous profiler's windows of the same container over the same
# time (49 Hz, 2 s windows here) must name them too: >= 90 % of the
# short-lived processes' samples with a symbolized user leaf (its user
# stacks are build-id frames as well; with addresses alone they were
# [unknown]: the processes are gone before its 1 s snapshot poll).
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/lib_sched.sh"
source "$(dirname "$0")/lib_prof.sh"
sl_init
sl_require_agent_env
ct_require
[ -x "$SL_BUILD/helpers/sl-shorthash" ] || fail "sl-shorthash not built"

sl_agent_start "profiling:
  continuous:
    hz: 49
    window: 2s"
cat >"$SL_TMP/loop.sh" <<'EOS'
#!/bin/sh
while :; do /bin/sl-shorthash gen 8 | /bin/sl-shorthash sum >/dev/null; done
EOS
sched_ct loop "" "" -- /bin/sh /run.sh
install -m 755 "$SL_TMP/loop.sh" "$CT_DIR/rootfs/run.sh"
cp "$SL_BUILD/helpers/sl-shorthash" "$CT_DIR/rootfs/bin/sl-shorthash" || fail "copy sl-shorthash"
ID_CT=$CT_ID
ct_start_bg
ct_wait_running

O=$SL_TMP/out
mkdir -p "$O"
sl_cli profile --container "${ID_CT:0:12}" --duration 5s -o "$O/p.json" >"$SL_LOGDIR/cli.txt" 2>&1 ||
	{ cat "$SL_LOGDIR/cli.txt"; fail "sandlens profile failed"; }
TID=$(sl_cli tasks --json | head -1 | jq -r .id)
task_result "$TID" folded "$O/p.folded"
R=$(task_get "$TID")
printf '%s' "$R" | jq -c '{status, result: .result | {total_count, stacks, top_user_leaves, dropped}}'
assert_eq "status" "done" "$(printf '%s' "$R" | jq -r .status)"

# every stack with its user leaf: the last node of its path that is not
# kernel text (comm itself when there is no user frame)
# (python: a tree nests two levels a frame, and jq 1.6 refuses JSON deeper
# than 256 levels, i.e. a stack deeper than ~127 frames, user plus kernel)
user_leaves() {
	python3 - "$1" <<'EOP'
import json, sys
sys.setrecursionlimit(5000)
out = []
def leaves(n, leaf, comm):
    if n.get("self", 0) > 0:
        out.append({"comm": comm, "name": leaf.get("name"), "module": leaf.get("module") or "", "n": n["self"]})
    for c in n.get("children") or []:
        leaves(c, leaf if c.get("kernel") else c, comm)
t = json.load(open(sys.argv[1]))
for c in t["tree"].get("children") or []:
    leaves(c, {"name": "[none]"}, c["name"])
for o in out:
    print(json.dumps(o, separators=(",", ":")))
EOP
}
user_leaves "$O/p.json" >"$O/leaves.jsonl"
sym_ok() { jq -s "$1"' | map(select(.name | test("^\\[|\\+0x") | not)) | map(.n) | add // 0' "${2:-$O/leaves.jsonl}"; }
all_n() { jq -s "$1"' | map(.n) | add // 0' "${2:-$O/leaves.jsonl}"; }
SH_ALL=$(all_n 'map(select(.comm == "sl-shorthash"))')
SH_SYM=$(sym_ok 'map(select(.comm == "sl-shorthash"))')
ALL=$(all_n '.')
KNOWN=$(jq -s 'map(select(.name != "[unknown]" and .name != "[none]")) | map(.n) | add // 0' "$O/leaves.jsonl")
note "sl-shorthash samples: $SH_ALL, with a symbolized user leaf: $SH_SYM; all samples: $ALL, user leaf in a known module: $KNOWN"
jq -s -c 'group_by([.comm, .name]) | map({k: ((.[0].comm) + " " + (.[0].name)), n: (map(.n) | add)}) | sort_by(-.n) | .[:12]' "$O/leaves.jsonl"
[ "$SH_ALL" -ge 50 ] || fail "only $SH_ALL samples of the short-lived processes (the loop barely ran)"
[ $((SH_SYM * 100)) -ge $((SH_ALL * 90)) ] || fail "only $SH_SYM of $SH_ALL samples of short-lived processes have a symbolized user leaf (< 90 %)"
[ $((KNOWN * 100)) -ge $((ALL * 90)) ] || fail "only $KNOWN of $ALL samples have a user leaf in a known module (< 90 %)"
for f in shorthash_gen_block shorthash_sum_block; do
	grep -q "$f" "$O/p.folded" || fail "$f is not in the profile"
done
# (as callers: a process sampled in its exit or start code has them as its
# user leaf, e.g. call_fini;deregister_tm_clones, and that is true)
BOGUS=$(python3 - "$O/p.json" <<'EOP'
import json, sys
sys.setrecursionlimit(5000)
bad = {"register_tm_clones", "__do_global_dtors_aux", "frame_dummy", "deregister_tm_clones"}
found = []
def walk(n, path):
    user = [c["name"] for c in path if not c.get("kernel")]
    if n.get("self", 0) > 0 and any(f in bad for f in user[:-1]):
        found.append(";".join(user))
    for c in n.get("children") or []:
        walk(c, path + [c])
walk(json.load(open(sys.argv[1]))["tree"], [])
print("\n".join(found[:3]))
EOP
)
[ -z "$BOGUS" ] || fail "bogus outer frames above the start code (as callers): $BOGUS"
# the hash functions are reached through main from glibc's start code: each
# of their stacks must start there (the walk above it cut, nothing lost;
# main itself is skipped when the sample is in a leaf function that set up
# no frame pointer: the walk starts from the caller's frame)
BAD=$(grep -E '^sl-shorthash;.*shorthash_(gen|sum)_block' "$O/p.folded" |
	grep -Ev '^sl-shorthash;(_start;|__libc_start_main(_impl)?;)*__libc_start_call_main;(main;)?shorthash_' | head -3)
[ -z "$BAD" ] || fail "stacks of the hash functions that do not start at glibc's start code: $BAD"

# the continuous windows of the same container (the loop kept running), from
# after the task's profile (two samplers on one perf interrupt share the
# kernel's one irq_work that releases mmap_lock: the second finds it busy
# and keeps ips, BPF_STACK_BUILD_ID_IP), over 4+ windows
T0=$(date -u +%Y-%m-%dT%H:%M:%SZ)
sleep 11
sl_cli profile --container "${ID_CT:0:12}" --since "$T0" -o "$O/c.json" >"$SL_LOGDIR/cli-cont.txt" 2>&1 ||
	{ cat "$SL_LOGDIR/cli-cont.txt"; fail "sandlens profile --since 1m failed"; }
user_leaves "$O/c.json" >"$O/cleaves.jsonl"
C_ALL=$(all_n 'map(select(.comm == "sl-shorthash"))' "$O/cleaves.jsonl")
C_SYM=$(sym_ok 'map(select(.comm == "sl-shorthash"))' "$O/cleaves.jsonl")
note "continuous windows: sl-shorthash samples: $C_ALL, with a symbolized user leaf: $C_SYM"
jq -s -c 'group_by([.comm, .name]) | map({k: ((.[0].comm) + " " + (.[0].name)), n: (map(.n) | add)}) | sort_by(-.n) | .[:8]' "$O/cleaves.jsonl"
[ "$C_ALL" -ge 30 ] || fail "only $C_ALL continuous samples of the short-lived processes"
[ $((C_SYM * 100)) -ge $((C_ALL * 90)) ] ||
	fail "continuous windows: only $C_SYM of $C_ALL samples of short-lived processes have a symbolized user leaf (< 90 %)"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
