# runc containers for integration tests (bash; source after common.sh and
# call sl_init first).
#
#   ct_require              SKIP unless runc, busybox-static, jq are usable
#   ct_create NAME KIND [--mem MIB] [--pod-mem MIB] [--core] [--script FILE] [--resources JSON] [--netns PATH] -- ARGS...
#        Make a bundle in $SL_TMP/ct-NAME: busybox rootfs (sh, sleep, cat,
#        dd, true, echo, ... as symlinks), build/helpers/sl-testprog in
#        /bin, `runc spec` edited with jq: process.args = ARGS, terminal
#        false, cwd /, RLIMIT_CORE 0 (or 1 GiB and a writable rootfs with
#        --core), memory limit MIB MiB with swap limit = memory limit (no
#        swapping) with --mem, --script FILE copied to /run.sh, --resources
#        JSON (an OCI linux.resources object) merged into linux.resources
#        after --mem (e.g. '{"cpu":{"quota":25000,"period":50000}}'),
#        --netns PATH joins that network namespace (e.g. /run/netns/NAME of
#        `ip netns add NAME`: linux.namespaces network path) instead of a
#        new one.
#        KIND kubepods: id = 64 random hex, cgroupsPath
#          /kubepods/burstable/pod<uuid>/<id>, CT_POD_UID = <uuid>;
#          --pod-mem MIB makes the pod cgroup first, with its own memory
#          limit (v1 memory.limit_in_bytes, v2 memory.max) as a kubelet
#          does for a pod: the container below it has none unless --mem
#        KIND plain: id = sl-NAME-<8 hex>, cgroupsPath /sandlens-test/<id>
#        Sets CT_ID, CT_DIR, CT_CGPATH, CT_POD_UID ("" for plain), and
#        CT_KIND. Several containers: call ct_create again (the variables are
#        overwritten; copy them) and use ct_run_id.
#   ct_run [TIMEOUT]        runc run the last created container in the
#                           foreground; stdout/stderr to $CT_DIR/{stdout,stderr}
#                           (copied to the log dir); returns the container
#                           process' exit status (128+N for signal N)
#   ct_start_bg             same, in the background; sets CT_RUN_PID
#   ct_wait_bg [TIMEOUT]    wait for it; returns its status
#   ct_delete               runc delete -f, remove the cgroup dirs it left
#   ct_cgroup_inos          while running: "<v2 ino> <v1 memory ino>" of
#                           the container's cgroup directories

CT_RUNC_ROOT=

ct_require() {
	sl_require_cmd runc jq
	[ -x /bin/busybox ] || skip "busybox not installed (Debian package busybox-static)"
	if readelf -l /bin/busybox 2>/dev/null | grep -q "Requesting program interpreter"; then
		skip "/bin/busybox is dynamically linked; the container rootfs needs busybox-static"
	fi
	[ -x "$SL_BUILD/helpers/sl-testprog" ] || fail "$SL_BUILD/helpers/sl-testprog not built"
	CT_RUNC_ROOT="$SL_TMP/runc-state"
	mkdir -p "$CT_RUNC_ROOT"
}

_ct_hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }

ct_create() {
	local name=$1 kind=$2
	shift 2
	local mem="" podmem="" core=0 script="" res="{}" netns=""
	while [ $# -gt 0 ]; do
		case "$1" in
		--mem) mem=$2; shift 2 ;;
		--pod-mem) podmem=$2; shift 2 ;;
		--core) core=1; shift ;;
		--script) script=$2; shift 2 ;;
		--resources) res=$2; shift 2 ;;
		--netns) netns=$2; shift 2 ;;
		--) shift; break ;;
		*) fail "ct_create: unknown option $1" ;;
		esac
	done
	[ $# -gt 0 ] || fail "ct_create: no process args"
	CT_KIND=$kind
	CT_DIR="$SL_TMP/ct-$name"
	case "$kind" in
	kubepods)
		CT_ID=$(_ct_hex 32)
		CT_POD_UID=$(cat /proc/sys/kernel/random/uuid)
		CT_CGPATH="/kubepods/burstable/pod$CT_POD_UID/$CT_ID"
		;;
	plain)
		CT_ID="sl-$name-$(_ct_hex 4)"
		CT_POD_UID=""
		CT_CGPATH="/sandlens-test/$CT_ID"
		;;
	*) fail "ct_create: kind must be kubepods or plain" ;;
	esac
	if [ -n "$podmem" ]; then
		[ "$kind" = kubepods ] || fail "ct_create: --pod-mem needs KIND kubepods"
		_ct_pod_limit "$(dirname "$CT_CGPATH")" "$podmem"
	fi
	mkdir -p "$CT_DIR/rootfs/bin" "$CT_DIR/rootfs/proc" "$CT_DIR/rootfs/dev" \
		"$CT_DIR/rootfs/sys" "$CT_DIR/rootfs/tmp" "$CT_DIR/rootfs/etc"
	cp /bin/busybox "$CT_DIR/rootfs/bin/busybox"
	local a
	for a in sh sleep cat dd true false echo ls kill ps env id; do
		ln -sf busybox "$CT_DIR/rootfs/bin/$a"
	done
	cp "$SL_BUILD/helpers/sl-testprog" "$CT_DIR/rootfs/bin/sl-testprog"
	[ -n "$script" ] && install -m 755 "$script" "$CT_DIR/rootfs/run.sh"
	(cd "$CT_DIR" && runc spec) || fail "runc spec failed"

	local args_json
	args_json=$(jq -cn '$ARGS.positional' --args -- "$@")
	local core_lim=0 ro=true
	[ "$core" = 1 ] && core_lim=1073741824 && ro=false
	jq --argjson args "$args_json" --arg cg "$CT_CGPATH" --argjson core "$core_lim" \
		--argjson ro "$ro" --arg mem "$mem" --argjson res "$res" --arg netns "$netns" '
		.process.args = $args
		| .process.terminal = false
		| .process.cwd = "/"
		| .process.rlimits = ((.process.rlimits // []) | map(select(.type != "RLIMIT_CORE"))
			+ [{type: "RLIMIT_CORE", hard: $core, soft: $core}])
		| .root.readonly = $ro
		| .linux.cgroupsPath = $cg
		| if $mem != "" then
			.linux.resources.memory = {limit: (($mem | tonumber) * 1048576),
						   swap: (($mem | tonumber) * 1048576)}
		  else . end
		| .linux.resources = ((.linux.resources // {}) * $res)
		| if $netns != "" then
			.linux.namespaces = ((.linux.namespaces // []) | map(select(.type != "network"))
				+ [{type: "network", path: $netns}])
		  else . end
		' "$CT_DIR/config.json" >"$CT_DIR/config.json.new" || fail "jq edit of config.json failed"
	mv "$CT_DIR/config.json.new" "$CT_DIR/config.json"
	cp "$CT_DIR/config.json" "$SL_LOGDIR/ct-$name.config.json"
	# cleanup even if the test fails half-way
	sl_on_exit "_ct_delete_id '$CT_ID' '$CT_CGPATH'"
	export CT_ID CT_DIR CT_CGPATH CT_POD_UID CT_KIND
}

# A pod-level memory limit (ct_create --pod-mem): the pod directory on the
# hierarchy with the memory controller, made before runc makes the
# container's below it; removed with the container's (_ct_rm_cgroups).
_ct_pod_limit() {
	local pod=$1 mib=$2 bytes=$(($2 * 1048576)) d p
	if [ -d /sys/fs/cgroup/memory ] && mountpoint -q /sys/fs/cgroup/memory; then
		mkdir -p "/sys/fs/cgroup/memory$pod" || fail "mkdir /sys/fs/cgroup/memory$pod"
		echo "$bytes" >"/sys/fs/cgroup/memory$pod/memory.limit_in_bytes" ||
			fail "cannot set the pod's memory.limit_in_bytes"
	elif [ -e /sys/fs/cgroup/cgroup.controllers ]; then
		mkdir -p "/sys/fs/cgroup$pod" || fail "mkdir /sys/fs/cgroup$pod"
		d=""
		for p in ${pod//\// }; do # +memory down to the pod's parent
			echo +memory >"/sys/fs/cgroup$d/cgroup.subtree_control" 2>/dev/null
			d="$d/$p"
		done
		echo "$bytes" >"/sys/fs/cgroup$pod/memory.max" || fail "cannot set the pod's memory.max"
	else
		skip "no memory cgroup hierarchy for a pod-level limit"
	fi
	note "pod cgroup $pod: memory limit $mib MiB"
}

_ct_rm_cgroups() {
	local cg=$1 h
	for h in /sys/fs/cgroup/unified /sys/fs/cgroup/*/; do
		h=${h%/}
		[ -d "$h$cg" ] && rmdir "$h$cg" 2>/dev/null
		# parents this library created: pod<uuid> and /sandlens-test
		case "$cg" in
		/kubepods/burstable/pod*/* | /sandlens-test/*)
			[ -d "$h$(dirname "$cg")" ] && rmdir "$h$(dirname "$cg")" 2>/dev/null ;;
		esac
	done
	return 0
}

_ct_delete_id() {
	runc --root "$CT_RUNC_ROOT" delete -f "$1" >/dev/null 2>&1 || true
	_ct_rm_cgroups "$2"
}

ct_delete() { _ct_delete_id "$CT_ID" "$CT_CGPATH"; }

_ct_name() { basename "$CT_DIR" | sed 's/^ct-//'; }

ct_run() {
	local t=${1:-60} rc
	timeout -k 5 "$t" runc --root "$CT_RUNC_ROOT" run --bundle "$CT_DIR" "$CT_ID" \
		</dev/null >"$CT_DIR/stdout" 2>"$CT_DIR/stderr"
	rc=$?
	cp "$CT_DIR/stdout" "$SL_LOGDIR/ct-$(_ct_name).stdout" 2>/dev/null
	cp "$CT_DIR/stderr" "$SL_LOGDIR/ct-$(_ct_name).stderr" 2>/dev/null
	[ "$rc" = 124 ] && fail "container $CT_ID did not finish within ${t}s"
	note "container $CT_ID ($CT_CGPATH) exited with status $rc"
	return $rc
}

ct_start_bg() {
	runc --root "$CT_RUNC_ROOT" run --bundle "$CT_DIR" "$CT_ID" \
		</dev/null >"$CT_DIR/stdout" 2>"$CT_DIR/stderr" &
	CT_RUN_PID=$!
	export CT_RUN_PID
}

ct_wait_bg() {
	local t=${1:-60} n=0 rc
	while kill -0 "$CT_RUN_PID" 2>/dev/null && [ $n -lt $((t * 10)) ]; do
		sleep 0.1
		n=$((n + 1))
	done
	if kill -0 "$CT_RUN_PID" 2>/dev/null; then
		runc --root "$CT_RUNC_ROOT" kill "$CT_ID" KILL >/dev/null 2>&1
		wait "$CT_RUN_PID"
		fail "container $CT_ID did not finish within ${t}s"
	fi
	wait "$CT_RUN_PID"
	rc=$?
	cp "$CT_DIR/stdout" "$SL_LOGDIR/ct-$(_ct_name).stdout" 2>/dev/null
	cp "$CT_DIR/stderr" "$SL_LOGDIR/ct-$(_ct_name).stderr" 2>/dev/null
	note "container $CT_ID ($CT_CGPATH) exited with status $rc"
	return $rc
}

# Wait until the container's init is running (runc state "running").
ct_wait_running() {
	local n=0
	while [ $n -lt 100 ]; do
		if runc --root "$CT_RUNC_ROOT" state "$CT_ID" 2>/dev/null | jq -e '.status == "running"' >/dev/null; then
			ct_wait_cgroups
			return 0
		fi
		sleep 0.1
		n=$((n + 1))
	done
	fail "container $CT_ID not running after 10 s"
}

# On a hybrid host runc can say "running" a moment before the container's
# directories exist on every hierarchy (seen on the unified one under
# load): wait up to 5 s for each mounted hierarchy's directory, so tests
# do not read an id of 0 or a missing cgroup.procs. Not fatal: a hierarchy
# runc does not use for the container is simply not there.
ct_wait_cgroups() {
	local h n
	for h in /sys/fs/cgroup/unified /sys/fs/cgroup/memory /sys/fs/cgroup; do
		mountpoint -q "$h" 2>/dev/null || continue
		[ "$h" = /sys/fs/cgroup ] && [ ! -e /sys/fs/cgroup/cgroup.controllers ] && continue
		n=0
		while [ ! -e "$h$CT_CGPATH/cgroup.procs" ] && [ $n -lt 50 ]; do
			sleep 0.1
			n=$((n + 1))
		done
	done
}

ct_cgroup_inos() {
	echo "$(stat -c %i "/sys/fs/cgroup/unified$CT_CGPATH" 2>/dev/null || echo 0)" \
		"$(stat -c %i "/sys/fs/cgroup/memory$CT_CGPATH" 2>/dev/null || echo 0)"
}
