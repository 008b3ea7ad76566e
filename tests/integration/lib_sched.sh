# Helpers for the sched integration tests (bash; source after common.sh and
# container.sh).
#
#   sched_ct NAME CPUS QUOTA -- ARGS...
#        ct_create NAME kubepods -- ARGS..., then pin the container to the
#        cpuset CPUS ("" = no pinning) and, when QUOTA (us per 100 ms
#        period) is not empty, give it that CFS quota. Sets the CT_* vars.
#   sched_json CID          the container's entry of GET /api/v1/sched ("" if absent)
#   sched_wait CID JQ [T]   poll GET /api/v1/sched until JQ (a jq boolean on
#                           the container's entry) holds; prints the entry
#   sched_map_id NAME       id of the running agent's BPF map NAME ("" if none)

sched_ct() {
	local name=$1 cpus=$2 quota=$3
	shift 3
	[ "$1" = "--" ] && shift
	ct_create "$name" kubepods -- "$@"
	jq --arg cpus "$cpus" --arg quota "$quota" '
		if $cpus != "" then .linux.resources.cpu.cpus = $cpus else . end
		| if $quota != "" then .linux.resources.cpu.quota = ($quota | tonumber)
					| .linux.resources.cpu.period = 100000 else . end
		' "$CT_DIR/config.json" >"$CT_DIR/config.json.new" || fail "jq edit of config.json failed"
	mv "$CT_DIR/config.json.new" "$CT_DIR/config.json"
	cp "$CT_DIR/config.json" "$SL_LOGDIR/ct-$name.config.json"
}

sched_json() {
	curl -sf -m 5 "$SL_API/api/v1/sched" | jq -c --arg id "$1" '.containers[] | select(.container_id == $id)'
}

sched_wait() {
	local id=$1 q=$2 t=${3:-20} n=0 out
	while [ $n -lt $((t * 4)) ]; do
		out=$(sched_json "$id")
		if [ -n "$out" ] && printf '%s\n' "$out" | jq -e "$q" >/dev/null 2>&1; then
			printf '%s\n' "$out"
			return 0
		fi
		sleep 0.25
		n=$((n + 1))
	done
	curl -sf -m 5 "$SL_API/api/v1/sched" >"$SL_LOGDIR/last-sched.json" 2>&1
	fail "container $id: '$q' did not hold within ${t}s (last answer in last-sched.json)"
}

# sched_map_id NAME: id of the running agent's ($SL_AGENT_PID) BPF map NAME,
# from the map_id lines of its fds' fdinfo (other agents on the host have
# maps of the same name); empty when not found.
sched_map_id() {
	local id
	for id in $(grep -h '^map_id:' /proc/"$SL_AGENT_PID"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -un); do
		[ "$(bpftool map show id "$id" -j 2>/dev/null | jq -r .name)" = "$1" ] && { echo "$id"; return; }
	done
}
