# Helpers for the task/profiling integration tests (bash; source after
# common.sh, container.sh and lib_sched.sh).
#
#   prof_ct NAME CPUS -- ARGS...  kubepods runc container (sched_ct) with
#                                 build/helpers/sl-profprog in /bin
#   task_post JSON                POST /api/v1/tasks; prints "<http status> <body>"
#   task_create JSON              POST, fail unless 201; prints the task id
#   task_get ID                   the task record
#   task_wait ID [T]              poll until the task has ended; prints the record
#   task_wait_running ID [T]      poll until status running
#   task_result ID FMT FILE       GET the result into FILE (fail unless 200)
#   bpf_fds PID                   "<progs> <maps> <links> <perf events>" open in PID
#                                 (from /proc/PID/fd: anon_inode:bpf-prog,
#                                 bpf-map, bpf_link, [perf_event])
#   cg_cpu_ns CGPATH              CPU time (ns) used so far by the cgroup
#                                 (v2 cpu.stat usage_usec, else v1 cpuacct.usage)
#   folded_sum FILE [GREP...]     sum of the values of the folded lines that
#                                 contain every GREP string

prof_ct() {
	local name=$1 cpus=$2
	shift 2
	sched_ct "$name" "$cpus" "" "$@"
	cp "$SL_BUILD/helpers/sl-profprog" "$CT_DIR/rootfs/bin/sl-profprog" || fail "copy sl-profprog"
}

task_post() {
	curl -s -m 10 -o "$SL_TMP/post.body" -w '%{http_code}' -XPOST "$SL_API/api/v1/tasks" \
		-H 'Content-Type: application/json' -d "$1" >"$SL_TMP/post.code"
	echo "$(cat "$SL_TMP/post.code") $(cat "$SL_TMP/post.body")"
}

task_create() {
	local out code
	out=$(task_post "$1")
	code=${out%% *}
	[ "$code" = 201 ] || fail "POST /api/v1/tasks $1 -> $out"
	printf '%s' "${out#* }" | jq -r .id
}

task_get() { curl -sf -m 10 "$SL_API/api/v1/tasks/$1"; }

task_wait() {
	local id=$1 t=${2:-60} n=0 r
	while [ $n -lt $((t * 4)) ]; do
		r=$(task_get "$id")
		case "$(printf '%s' "$r" | jq -r .status)" in
		done | failed | cancelled) printf '%s\n' "$r"; return 0 ;;
		esac
		sleep 0.25
		n=$((n + 1))
	done
	fail "task $id did not end within ${t}s: $r"
}

task_wait_running() {
	local id=$1 t=${2:-20} n=0
	while [ $n -lt $((t * 10)) ]; do
		[ "$(task_get "$id" | jq -r .status)" = running ] && return 0
		sleep 0.1
		n=$((n + 1))
	done
	fail "task $id not running after ${t}s: $(task_get "$id")"
}

task_result() {
	local code
	code=$(curl -s -m 60 -o "$3" -w '%{http_code}' "$SL_API/api/v1/tasks/$1/result?format=$2")
	[ "$code" = 200 ] || fail "GET result of $1 as $2 -> HTTP $code: $(head -c 300 "$3")"
}

bpf_fds() {
	local l p=0 m=0 k=0 e=0
	for l in /proc/$1/fd/*; do
		case "$(readlink "$l" 2>/dev/null)" in
		anon_inode:bpf-prog) p=$((p + 1)) ;;
		anon_inode:bpf-map) m=$((m + 1)) ;;
		anon_inode:bpf_link) k=$((k + 1)) ;;
		anon_inode:\[perf_event\]) e=$((e + 1)) ;;
		esac
	done
	echo "$p $m $k $e"
}

folded_sum() {
	local f=$1
	shift
	awk -v pats="$*" 'BEGIN { n = split(pats, p, " ") }
		{ ok = 1; for (i = 1; i <= n; i++) if (index($0, p[i]) == 0) ok = 0
		  if (ok) s += $NF }
		END { printf "%d\n", s }' "$f"
}

cg_cpu_ns() {
	local u
	if [ -f "/sys/fs/cgroup/unified$1/cpu.stat" ] && u=$(awk '$1 == "usage_usec" {print $2}' "/sys/fs/cgroup/unified$1/cpu.stat") && [ -n "$u" ]; then
		echo $((u * 1000))
	elif [ -f "/sys/fs/cgroup/cpu.stat" ] && [ -f "/sys/fs/cgroup$1/cpu.stat" ]; then
		echo $(($(awk '$1 == "usage_usec" {print $2}' "/sys/fs/cgroup$1/cpu.stat") * 1000))
	elif [ -f "/sys/fs/cgroup/cpuacct$1/cpuacct.usage" ]; then
		cat "/sys/fs/cgroup/cpuacct$1/cpuacct.usage"
	else
		cat "/sys/fs/cgroup/cpu,cpuacct$1/cpuacct.usage"
	fi
}
