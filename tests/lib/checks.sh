# Event checks shared by the integration tests (bash; source after
# common.sh and container.sh).
#
# A scenario script runs in one container; each part leaves events whose
# exact values the checks know. Expected attribution comes from
#   EXP_CID      container_id the agent must report
#   EXP_POD      pod_uid ("" when not a pod)
#   EXP_RUNTIME  runtime ("" = the path does not say)
#   EXP_CGIDS    space-separated cgroup ids one of which cgroup_id must be
#                ("" = only check it is > 0)
#
#   ct_script FILE PART...  write /run.sh parts: wait (sleep 1.5 s so the test
#                  can read the cgroup ids), exec, longargv, exit, crash, oom
#   find_event TYPE JQSEL [TIMEOUT]  the first event of TYPE in container
#                  EXP_CID for which JQSEL (a jq boolean on one event) holds;
#                  on timeout it looks for the same event in any container
#                  and says what attribution it had
#   check_attr WHAT EVENT     container_id, pod_uid, runtime, cgroup_id
#   check_time WHAT EVENT     RFC 3339 with 9 fraction digits, within the test
#   check_exec_part / check_exit_part / check_crash_part / check_oom_part
#                  the exact values for each part (set *_PID variables)
#   cli_check EVENT           the same event through `sandlens events --json`
#                  (all contract fields present and equal to the API's)
#   follow_start ARGS / follow_wait JQSEL [TIMEOUT] / follow_stop
#                  `sandlens events --follow --json ARGS` in the background

EXEC_ARGV_JSON='["/bin/echo","-n","hello sandlens","x=1;y=2","","ünïcode","tab\there"]'
LONG_ARG=$(printf 'L%.0s' $(seq 1 1500))
T_START=$(date +%s)

ct_script() {
	local f=$1
	shift
	{
		echo '#!/bin/sh'
		local p
		for p in "$@"; do
			case "$p" in
			wait) echo '/bin/sleep 1.5' ;;
			exec) printf '%s\n' "/bin/echo -n 'hello sandlens' 'x=1;y=2' '' 'ünïcode' 'tab	here'; echo" ;;
			longargv) echo "/bin/echo -n $LONG_ARG >/dev/null" ;;
			exit)
				echo '/bin/sl-testprog sleep 0.3'
				echo '/bin/sl-testprog exit 3; echo "exit3=$?"'
				;;
			crash)
				echo '(ulimit -c 0; exec /bin/sl-testprog segv); echo "segv=$?"'
				echo '/bin/sl-testprog abort; echo "abort=$?"'
				;;
			oom) echo '/bin/sl-testprog hog 64; echo "hog=$?"' ;;
			*) fail "ct_script: unknown part $p" ;;
			esac
		done
		echo 'exit 0'
	} >"$f"
	cp "$f" "$SL_LOGDIR/$(basename "$f")"
}

# Read the container's cgroup ids while it runs (the "wait" part).
capture_cgids() {
	ct_wait_running
	sleep 0.3
	EXP_CGIDS=$(ct_cgroup_inos)
	note "cgroup ids of $CT_ID (v2 v1-memory): $EXP_CGIDS"
	[ "$EXP_CGIDS" != "0 0" ] || fail "cannot stat the cgroup directories of $CT_ID ($CT_CGPATH)"
}

find_event() {
	sl_check_failed
	local type=$1 sel=$2 timeout=${3:-20} n=0 out
	local q="type=$type&container=$EXP_CID&limit=1000&order=asc"
	while [ $n -lt $((timeout * 4)) ]; do
		out=$(curl -sf -m 5 "$SL_API/api/v1/events?$q" |
			jq -c "[.events[] | select($sel)] | .[0] // empty" 2>/dev/null)
		if [ -n "$out" ]; then
			printf '%s\n' "$out"
			return 0
		fi
		sleep 0.25
		n=$((n + 1))
	done
	# diagnose: the same event in any container?
	out=$(curl -sf -m 30 "$SL_API/api/v1/events?type=$type&since=${T_START}000000000&limit=10000&order=desc" |
		jq -c "[.events[] | select($sel)] | .[0] // empty" 2>/dev/null)
	if [ -n "$out" ]; then
		echo "found without the container filter: $out" >&2
		fail "$type event ($sel) has container_id '$(jq -r .container_id <<<"$out")' runtime '$(jq -r .runtime <<<"$out")', expected container_id '$EXP_CID'"
	fi
	curl -sf -m 5 "$SL_API/api/v1/events?type=$type&limit=200&order=desc" >"$SL_LOGDIR/last-$type-events.json"
	fail "no $type event matching '$sel' within ${timeout}s (latest $type events in last-$type-events.json)"
}

jr() { jq -r "$2" <<<"$1"; }
jc() { jq -c "$2" <<<"$1"; }

check_time() {
	local what=$1 t
	t=$(jr "$2" .time)
	[[ "$t" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9}(Z|[+-][0-9]{2}:[0-9]{2})$ ]] ||
		fail "$what: time '$t' is not RFC 3339 with nanoseconds"
	local s
	s=$(date -d "$t" +%s 2>/dev/null) || fail "$what: time '$t' does not parse"
	[ "$s" -ge $((T_START - 5)) ] && [ "$s" -le $(($(date +%s) + 5)) ] ||
		fail "$what: time '$t' ($s) is outside the test's run ($T_START..now)"
	echo "ok - $what time $t"
}

check_attr() {
	local what=$1 ev=$2
	assert_eq "$what container_id" "$EXP_CID" "$(jr "$ev" .container_id)"
	assert_eq "$what pod_uid" "$EXP_POD" "$(jr "$ev" '.pod_uid // ""')"
	assert_eq "$what runtime" "$EXP_RUNTIME" "$(jr "$ev" '.runtime // ""')"
	local cg
	cg=$(jr "$ev" .cgroup_id)
	[[ "$cg" =~ ^[1-9][0-9]*$ ]] || fail "$what: cgroup_id '$cg' is not a positive integer"
	if [ -n "${EXP_CGIDS:-}" ]; then
		case " $EXP_CGIDS " in
		*" $cg "*) echo "ok - $what cgroup_id $cg is the container's cgroup" ;;
		*) fail "$what: cgroup_id $cg is neither of the container's cgroup ids ($EXP_CGIDS)" ;;
		esac
	fi
	check_time "$what" "$ev"
}

# exec event of "sl-testprog <mode>" (argv[1] == mode): prints it.
exec_of_mode() {
	find_event exec ".comm == \"sl-testprog\" and .argv[1] == \"$1\"" "${2:-20}"
}

check_exec_part() {
	local ev
	ev=$(find_event exec '.comm == "echo" and .argv[2] == "hello sandlens"')
	echo "# exec event: $ev"
	assert_eq "exec type" exec "$(jr "$ev" .type)"
	assert_eq "exec argv" "$(jq -c . <<<"$EXEC_ARGV_JSON")" "$(jc "$ev" .argv)"
	assert_eq "exec filename" /bin/echo "$(jr "$ev" .filename)"
	assert_eq "exec comm" echo "$(jr "$ev" .comm)"
	assert_eq "exec args_truncated" false "$(jr "$ev" .args_truncated)"
	assert_eq "exec truncated_count" 0 "$(jr "$ev" .truncated_count)"
	[ "$(jr "$ev" .pid)" -gt 0 ] && [ "$(jr "$ev" .ppid)" -gt 0 ] || fail "exec pid/ppid not positive"
	check_attr exec "$ev"
	EXEC_EVENT=$ev
}

check_longargv_part() {
	local ev
	ev=$(find_event exec '.comm == "echo" and (.argv[2] // "" | startswith("LLLL"))')
	assert_eq "long exec args_truncated" true "$(jr "$ev" .args_truncated)"
	assert_eq "long exec argv[0..1]" '["/bin/echo","-n"]' "$(jc "$ev" '.argv[0:2]')"
	local a2 bytes
	a2=$(jr "$ev" '.argv[2]')
	[ "${#a2}" -lt 1500 ] && [ "${LONG_ARG#"$a2"}" != "$LONG_ARG" ] ||
		fail "long exec argv[2] (${#a2} chars) is not a proper prefix of the 1500-char argument"
	# bytes kept (NUL separators included; the cut last argument has none)
	# within SL_ARGV_BYTES (include/sandlens/proc.h)
	bytes=$(jq '[.argv[] | (utf8bytelength + 1)] | add - 1' <<<"$ev")
	local max
	max=$(awk '/#define SL_ARGV_BYTES/{print $3}' "$SL_ROOT/include/sandlens/proc.h")
	[ "$bytes" -le "$max" ] || fail "long exec argv holds $bytes bytes > SL_ARGV_BYTES $max"
	echo "ok - long argv cut to $bytes bytes (SL_ARGV_BYTES $max), args_truncated true"
	check_attr "long exec" "$ev"
}

check_exit_part() {
	local ex sl ev pid
	ex=$(exec_of_mode exit)
	EXIT3_PID=$(jr "$ex" .pid)
	assert_eq "exit-3 exec argv" '["/bin/sl-testprog","exit","3"]' "$(jc "$ex" .argv)"
	ev=$(find_event exit ".pid == $EXIT3_PID")
	echo "# exit event: $ev"
	assert_eq "exit type" exit "$(jr "$ev" .type)"
	assert_eq "exit comm" sl-testprog "$(jr "$ev" .comm)"
	assert_eq "exit exit_code" 3 "$(jr "$ev" .exit_code)"
	assert_eq "exit signal" 0 "$(jr "$ev" .signal)"
	assert_eq "exit core_dumped" false "$(jr "$ev" .core_dumped)"
	assert_eq "exit ppid (same as its exec)" "$(jr "$ex" .ppid)" "$(jr "$ev" .ppid)"
	local lt
	lt=$(jr "$ev" .lifetime_ns)
	# a fork+exec+exit of a static binary: more than 0, far less than 5 s
	[ "$lt" -gt 0 ] && [ "$lt" -lt 5000000000 ] || fail "exit-3 lifetime_ns $lt not in (0, 5 s)"
	echo "ok - exit-3 lifetime_ns $lt"
	check_attr exit "$ev"
	EXIT_EVENT=$ev
	# "sl-testprog sleep 0.3" lives at least 0.3 s
	sl=$(exec_of_mode sleep)
	pid=$(jr "$sl" .pid)
	ev=$(find_event exit ".pid == $pid")
	assert_eq "sleep exit_code" 0 "$(jr "$ev" .exit_code)"
	lt=$(jr "$ev" .lifetime_ns)
	[ "$lt" -ge 300000000 ] && [ "$lt" -lt 10000000000 ] || fail "sleep-0.3 lifetime_ns $lt not in [0.3 s, 10 s)"
	echo "ok - sleep-0.3 lifetime_ns $lt"
}

# core_dumped the kernel must report for the abort, from what happened on
# disk: the rootfs is writable and RLIMIT_CORE is 1 GiB in the container.
expected_abort_core() {
	local pat
	pat=$(cat /proc/sys/kernel/core_pattern)
	case "$pat" in
	"|"*) echo unknown ;; # a pipe helper decides; nothing to look at
	*)
		if [ -n "$(find "$CT_DIR/rootfs" -xdev -type f -newer "$CT_DIR/config.json" ! -path '*/bin/*' ! -name run.sh 2>/dev/null)" ]; then
			echo true
		else
			echo false
		fi
		;;
	esac
}

check_crash_part() {
	local ex ev pid
	# SIGSEGV: a page fault at address 0, raised by the kernel in the task
	ex=$(exec_of_mode segv)
	pid=$(jr "$ex" .pid)
	SEGV_PID=$pid
	ev=$(find_event signal ".target_pid == $pid and .signal == 11")
	echo "# segv signal event: $ev"
	assert_eq "segv signal" 11 "$(jr "$ev" .signal)"
	assert_eq "segv target_comm" sl-testprog "$(jr "$ev" .target_comm)"
	assert_eq "segv sender_pid (the faulting task)" "$pid" "$(jr "$ev" .sender_pid)"
	assert_eq "segv sender_comm" sl-testprog "$(jr "$ev" .sender_comm)"
	check_attr "segv signal" "$ev"
	SIGNAL_EVENT=$ev
	local n
	n=$(curl -sf "$SL_API/api/v1/events?type=signal&container=$EXP_CID&limit=1000" |
		jq "[.events[] | select(.target_pid == $pid and .signal == 11)] | length")
	assert_eq "segv signal events for that pid" 1 "$n"
	ev=$(find_event exit ".pid == $pid")
	echo "# segv exit event: $ev"
	assert_eq "segv exit signal" 11 "$(jr "$ev" .signal)"
	assert_eq "segv exit exit_code" 0 "$(jr "$ev" .exit_code)"
	assert_eq "segv exit core_dumped (RLIMIT_CORE 0)" false "$(jr "$ev" .core_dumped)"
	check_attr "segv exit" "$ev"

	# SIGABRT: abort(3) -> tgkill(self)
	ex=$(exec_of_mode abort)
	pid=$(jr "$ex" .pid)
	ABORT_PID=$pid
	ev=$(find_event signal ".target_pid == $pid and .signal == 6")
	echo "# abort signal event: $ev"
	assert_eq "abort signal" 6 "$(jr "$ev" .signal)"
	assert_eq "abort target_comm" sl-testprog "$(jr "$ev" .target_comm)"
	assert_eq "abort sender_pid (itself)" "$pid" "$(jr "$ev" .sender_pid)"
	assert_eq "abort sender_comm" sl-testprog "$(jr "$ev" .sender_comm)"
	check_attr "abort signal" "$ev"
	ev=$(find_event exit ".pid == $pid")
	echo "# abort exit event: $ev"
	assert_eq "abort exit signal" 6 "$(jr "$ev" .signal)"
	local want
	want=$(expected_abort_core)
	note "core_pattern '$(cat /proc/sys/kernel/core_pattern)', core file written: $want"
	if [ "$want" = unknown ]; then
		note "core_pattern is a pipe: core_dumped $(jr "$ev" .core_dumped) not checked"
	else
		assert_eq "abort exit core_dumped" "$want" "$(jr "$ev" .core_dumped)"
	fi
	check_attr "abort exit" "$ev"
}

check_oom_part() {
	local ex ev pid
	ex=$(exec_of_mode hog)
	pid=$(jr "$ex" .pid)
	HOG_PID=$pid
	ev=$(find_event oom ".victim.pid == $pid")
	echo "# oom event: $ev"
	assert_eq "oom type" oom "$(jr "$ev" .type)"
	assert_eq "oom constraint" memcg "$(jr "$ev" .constraint)"
	assert_eq "oom victim.pid" "$pid" "$(jr "$ev" .victim.pid)"
	assert_eq "oom victim.comm" sl-testprog "$(jr "$ev" .victim.comm)"
	assert_eq "oom victim.container_id" "$EXP_CID" "$(jr "$ev" .victim.container_id)"
	# the hog is the only task charging memory: the OOM runs in its context
	assert_eq "oom actor.pid (the charging task)" "$pid" "$(jr "$ev" .actor.pid)"
	assert_eq "oom actor.comm" sl-testprog "$(jr "$ev" .actor.comm)"
	assert_eq "oom actor.container_id" "$EXP_CID" "$(jr "$ev" .actor.container_id)"
	local vcg
	vcg=$(jr "$ev" .victim.cgroup_id)
	[[ "$vcg" =~ ^[1-9][0-9]*$ ]] || fail "oom victim.cgroup_id '$vcg' not positive"
	if [ -n "${EXP_CGIDS:-}" ]; then
		case " $EXP_CGIDS " in *" $vcg "*) ;; *) fail "oom victim.cgroup_id $vcg not the container's ($EXP_CGIDS)" ;; esac
	fi
	check_attr oom "$ev"
	OOM_EVENT=$ev
	ev=$(find_event exit ".pid == $pid")
	echo "# hog exit event: $ev"
	assert_eq "hog exit signal" 9 "$(jr "$ev" .signal)"
	assert_eq "hog exit core_dumped" false "$(jr "$ev" .core_dumped)"
	check_attr "hog exit" "$ev"
}

CONTRACT_COMMON='["time","type","pid","ppid","comm","cgroup_id","container_id","pod_uid","runtime"]'
contract_fields() {
	case "$1" in
	exec) echo '["filename","argv","args_truncated","truncated_count"]' ;;
	exit) echo '["exit_code","signal","core_dumped","lifetime_ns"]' ;;
	signal) echo '["signal","sender_pid","sender_comm","target_pid","target_comm"]' ;;
	oom) echo '["constraint","actor","victim"]' ;;
	esac
}

# Project an event on its contract fields (sorted keys, compact).
contract_view() {
	local t
	t=$(jr "$1" .type)
	jq -cS --argjson c "$CONTRACT_COMMON" --argjson s "$(contract_fields "$t")" \
		'. as $e | reduce ($c + $s)[] as $k ({}; . + {($k): $e[$k]})' <<<"$1"
}

# Check that a line-per-object file holds EVENT with every contract field.
cli_has_event() {
	local what=$1 ev=$2 file=$3 t pid want got
	t=$(jr "$ev" .type)
	pid=$(jr "$ev" .pid)
	want=$(contract_view "$ev")
	got=$(jq -c --arg t "$t" --argjson pid "$pid" --arg time "$(jr "$ev" .time)" \
		'select(.type == $t and .pid == $pid and .time == $time)' "$file" 2>/dev/null | head -n 1)
	[ -n "$got" ] || fail "$what: no $t event pid $pid time $(jr "$ev" .time) in the CLI output ($(basename "$file"))"
	local missing
	missing=$(jq -r --argjson c "$CONTRACT_COMMON" --argjson s "$(contract_fields "$t")" \
		'. as $e | ($c + $s)[] as $k | select($e | has($k) | not) | $k' <<<"$got" | tr '\n' ' ')
	[ -z "$missing" ] || fail "$what: CLI JSON lacks fields: $missing"
	if [ "$t" = oom ]; then
		missing=$(jq -r '[.actor, .victim][] | ["pid","comm","cgroup_id","container_id"][] as $k | select(has($k) | not) | $k' <<<"$got" 2>/dev/null | sort -u | tr '\n' ' ')
		[ -z "$missing" ] || fail "$what: CLI oom actor/victim lack: $missing"
	fi
	assert_eq "$what: CLI --json = API (contract fields)" "$want" "$(contract_view "$got")"
}

cli_check() {
	local what=$1 ev=$2 out="$SL_LOGDIR/cli-events-$RANDOM.jsonl"
	sl_cli events --type "$(jr "$ev" .type)" --container "$EXP_CID" --since 30m --limit 10000 --json >"$out" 2>"$out.err" ||
		fail "$what: sandlens events --json failed: $(cat "$out.err")"
	cli_has_event "$what" "$ev" "$out"
}

follow_start() {
	FOLLOW_OUT="$SL_LOGDIR/follow.jsonl"
	# the binary itself in the background, not the sl_cli function: $! of a
	# function is a subshell, and killing it left sandlens running (orphaned)
	"$SL_BUILD/sandlens" --api "$SL_API" events --follow --json "$@" >"$FOLLOW_OUT" 2>"$SL_LOGDIR/follow.stderr" &
	FOLLOW_PID=$!
	sl_on_exit "kill $FOLLOW_PID"
	sleep 0.5
	kill -0 "$FOLLOW_PID" 2>/dev/null || fail "sandlens events --follow exited at once: $(cat "$SL_LOGDIR/follow.stderr")"
}

follow_wait() { # JQSEL [TIMEOUT]
	local sel=$1 timeout=${2:-20} n=0
	while [ $n -lt $((timeout * 4)) ]; do
		if [ -n "$(jq -c "select($sel)" "$FOLLOW_OUT" 2>/dev/null | head -n 1)" ]; then
			return 0
		fi
		kill -0 "$FOLLOW_PID" 2>/dev/null || fail "sandlens events --follow died: $(cat "$SL_LOGDIR/follow.stderr")"
		sleep 0.25
		n=$((n + 1))
	done
	fail "sandlens events --follow printed no event matching '$sel' within ${timeout}s"
}

follow_stop() {
	# SIGTERM: background jobs of a non-interactive shell ignore SIGINT
	kill -TERM "$FOLLOW_PID" 2>/dev/null
	local n=0
	while kill -0 "$FOLLOW_PID" 2>/dev/null && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
	kill -KILL "$FOLLOW_PID" 2>/dev/null
	wait "$FOLLOW_PID" 2>/dev/null
	return 0
}
