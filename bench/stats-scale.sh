#!/bin/bash
# Workload statistics at scale (issue 4, item 6).
#
#   1. N (default 1000) container cgroups in the kubepods layout
#      (/kubepods/burstable/pod<uid>/<64 hex>, 4 per pod) in every mounted
#      hierarchy, each holding a live `sleep`.
#   2. sandlensd with stats.interval 1s; once it reports N containers:
#      - GET /metrics R times (default 200) each: as Prometheus does it
#        (gzip, inflated by the client), gzip bytes only, and identity;
#        GET /api/v1/workloads/<pod>/stats R times: median and p99 wall
#        time (curl time_total);
#      - agent CPU per scrape: on-CPU ns (schedstat) of the agent's threads
#        but the collector ("sl-stats") over the scrapes, divided by R;
#      - the collector's own pass time (sandlens_stats_collect_duration_seconds,
#        median of 20 passes) against the floor: a minimal C loop reading the
#        same files of the same N cgroups (open+read+close, no parsing), in
#        the same run (ratio).
#   3. Churn: C (default 10000) more cgroups created and deleted in batches
#      of 500 (each batch lives across one collector pass) while the agent
#      runs; agent RSS (VmRSS) before and after, after the tombstone grace
#      period; the goal is a difference within 2 MiB.
# Prints a Markdown table; with --record, also replaces the "stats-scale"
# section of bench/RESULTS.md.
# Usage: bench/stats-scale.sh [BUILD_DIR] [--record]   (root; env N, R, C)
source "$(dirname "$0")/../tests/lib/common.sh"
RECORD=0
for a in "$@"; do
	case "$a" in
	--record) RECORD=1 ;;
	*) SL_BUILD=$a ;;
	esac
done
sl_init
sl_require_agent_env
N=${N:-1000}
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
R=${R:-200}
C=${C:-10000}

mapfile -t HIER < <(sl_cgroup_hierarchies)
[ ${#HIER[@]} -gt 0 ] || skip "no cgroup hierarchies"
if [ "${HIER[0]}" = /sys/fs/cgroup ]; then
	# pure v2: the controllers must be enabled down the path
	echo "+memory +cpu +io +pids" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
fi
BASE=/kubepods/burstable
ROOTS=()
PIDS=()
cleanup_bench() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait "${PIDS[@]}" 2>/dev/null
	local h
	for h in "${HIER[@]}"; do
		for p in "${ROOTS[@]}"; do
			[ -d "$h$p" ] || continue
			find "$h$p" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
			rmdir "$h$p" 2>/dev/null
		done
	done
}
sl_on_exit cleanup_bench

mkpods() { # prefix count -> creates count containers, 4 per pod, prints paths
	local prefix=$1 count=$2 i pod id
	for ((i = 0; i < count; i++)); do
		if ((i % 4 == 0)); then pod=$(cat /proc/sys/kernel/random/uuid); fi
		id=$(printf '%s%056x' "$prefix" "$i")
		echo "$BASE/pod$pod/$id"
	done
}

note "creating $N container cgroups with a live process each in: ${HIER[*]}"
mapfile -t CGS < <(mkpods 5eed0001 "$N")
for cg in "${CGS[@]}"; do
	ROOTS+=("$(dirname "$cg")")
	for h in "${HIER[@]}"; do mkdir -p "$h$cg"; done
	if [ "${HIER[0]}" = /sys/fs/cgroup ]; then
		echo "+memory +cpu +io +pids" >"/sys/fs/cgroup$BASE/cgroup.subtree_control" 2>/dev/null
		echo "+memory +cpu +io +pids" >"/sys/fs/cgroup$(dirname "$cg")/cgroup.subtree_control" 2>/dev/null
	fi
	sleep 3600 &
	p=$!
	PIDS+=("$p")
	for h in "${HIER[@]}"; do echo "$p" >"$h$cg/cgroup.procs"; done
done
mapfile -t ROOTS < <(printf '%s\n' "${ROOTS[@]}" | sort -u)
POD1=$(basename "${ROOTS[0]}")
POD1=${POD1#pod}

# The event modules are quietened so that the store (whose SQLite page cache
# grows with the events of whatever else runs on the host) does not move
# the agent's RSS during the churn: proc off, sched events above 60 s only.
sl_agent_start "stats:
  interval: 1s
  max_containers: $((N + C + 1000))
proc:
  enabled: false
sched:
  delay_threshold: 60s"
n=0
until [ "$(sl_metric sandlens_stats_containers)" -ge "$N" ]; do
	[ $n -lt 300 ] || fail "the agent did not report $N containers within 30 s"
	sleep 0.1
	n=$((n + 1))
done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$SL_AGENT_PID/stat"; }
# RSS swings by a snapshot's size within a pass (old and new live together
# until the swap); the floor between passes is what a leak would raise, so
# rss_kib samples for 3 s (3 passes) and prints the minimum
rss_kib() {
	local i v m=
	for ((i = 0; i < 30; i++)); do
		v=$(awk '/^VmRSS:/ {print $2}' "/proc/$SL_AGENT_PID/status")
		[ -z "$m" ] || [ "$v" -lt "$m" ] && m=$v
		sleep 0.1
	done
	echo "$m"
}
HZ=$(getconf CLK_TCK)
stats_of() { # file of numbers (s) -> "median p99" in ms
	sort -g "$1" | awk '{v[NR] = $1} END {
		m = v[int((NR + 1) / 2)]; i = int(NR * 0.99 + 0.999); if (i > NR) i = NR
		printf "%.2f %.2f\n", m * 1000, v[i] * 1000 }'
}

# idle CPU rate of the agent (collector passes only)
t0=$(date +%s.%N) c0=$(cpu_ticks)
sleep 10
t1=$(date +%s.%N) c1=$(cpu_ticks)
IDLE_RATE=$(awk -v c=$((c1 - c0)) -v hz="$HZ" -v t="$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" 'BEGIN { printf "%.6f", c / hz / t }')

# /metrics. Agent CPU per scrape: on-CPU time (schedstat, ns) of every agent
# thread but the collector ("sl-stats") over the scrapes, per scrape.
api_cpu_ns() {
	local t s=0 v
	for t in /proc/"$SL_AGENT_PID"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = sl-stats ] && continue
		read -r v _ <"$t/schedstat" 2>/dev/null && s=$((s + v))
	done
	echo "$s"
}
scrapes() { # name curl-options... -> $SL_TMP/name.times; sets MED P99 CPU
	local name=$1 c0 c1 i
	shift
	c0=$(api_cpu_ns)
	for ((i = 0; i < R; i++)); do
		curl -s -o /dev/null -w '%{time_total}\n' "$@" "$SL_API/metrics"
	done >"$SL_TMP/$name.times"
	c1=$(api_cpu_ns)
	read -r MED P99 < <(stats_of "$SL_TMP/$name.times")
	CPU=$(awk -v d=$((c1 - c0)) -v n="$R" 'BEGIN { printf "%.2f", d / n / 1e6 }')
}
curl -sf "$SL_API/metrics" >"$SL_TMP/metrics.txt"
curl -sf -H 'Accept-Encoding: gzip' "$SL_API/metrics" >"$SL_TMP/metrics.gz"
gzip -t "$SL_TMP/metrics.gz" || fail "/metrics with Accept-Encoding gzip is not gzip"
MBYTES=$(wc -c <"$SL_TMP/metrics.txt")
GZBYTES=$(wc -c <"$SL_TMP/metrics.gz")
MLINES=$(grep -vc '^#' "$SL_TMP/metrics.txt")
RENDER_MS=$(curl -sf "$SL_API/metrics" | awk '$1 == "sandlens_stats_render_duration_seconds" { printf "%.2f", $2 * 1000 }')
# as Prometheus scrapes (it sends Accept-Encoding: gzip and inflates)
scrapes gzip --compressed
SCRAPE_MED=$MED SCRAPE_P99=$P99 CPU_PER_SCRAPE=$CPU
# gzip bytes only (no inflate on the client)
scrapes wire -H 'Accept-Encoding: gzip'
WIRE_MED=$MED WIRE_P99=$P99 WIRE_CPU=$CPU
# identity (a client that does not ask for gzip)
scrapes plain
PLAIN_MED=$MED PLAIN_P99=$P99 PLAIN_CPU=$CPU

# transport floor: the same body served as a static file (python http.server)
STATIC_MED=- STATIC_P99=-
if command -v python3 >/dev/null; then
	SPORT=$(sl_free_port)
	(cd "$SL_TMP" && exec python3 -m http.server "$SPORT" --bind 127.0.0.1 >/dev/null 2>&1) &
	SPY=$!
	sleep 1
	for ((i = 0; i < R; i++)); do
		curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$SPORT/metrics.txt"
	done >"$SL_TMP/static.times"
	kill "$SPY" 2>/dev/null
	wait "$SPY" 2>/dev/null
	read -r STATIC_MED STATIC_P99 < <(stats_of "$SL_TMP/static.times")
fi

# stats API (a pod of 4 containers)
for ((i = 0; i < R; i++)); do
	curl -s -o /dev/null -w '%{time_total}\n' "$SL_API/api/v1/workloads/$POD1/stats"
done >"$SL_TMP/api.times"
read -r API_MED API_P99 < <(stats_of "$SL_TMP/api.times")
[ "$(curl -s -o /dev/null -w '%{http_code}' "$SL_API/api/v1/workloads/$POD1/stats")" = 200 ] ||
	fail "stats API did not answer 200 for pod $POD1"

# the collector's pass time, 20 passes
for ((i = 0; i < 20; i++)); do
	curl -sf "$SL_API/metrics" | awk '/^sandlens_stats_collect_duration_seconds / {print $2}'
	sleep 1
done >"$SL_TMP/pass.times"
read -r PASS_MED PASS_P99 < <(stats_of "$SL_TMP/pass.times")

# floor: open+read+close of the same files of the same cgroups, minimal C loop
cat >"$SL_TMP/floor.c" <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	/* argv[1]: file with one absolute file path per line; argv[2]: passes */
	static char paths[200000][160];
	int n = 0, passes = atoi(argv[2]);
	FILE *f = fopen(argv[1], "r");
	while (n < 200000 && fgets(paths[n], sizeof(paths[n]), f)) {
		paths[n][strcspn(paths[n], "\n")] = 0;
		n++;
	}
	fclose(f);
	char buf[8192];
	long bytes = 0;
	for (int p = 0; p < passes; p++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (int i = 0; i < n; i++) {
			int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			ssize_t r;
			while ((r = read(fd, buf, sizeof(buf))) > 0)
				bytes += r;
			close(fd);
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		printf("%.6f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	}
	fprintf(stderr, "%d files, %ld bytes per pass\n", n, bytes / (passes ? passes : 1));
	return 0;
}
EOF
sed -i 's/#include <unistd.h>/#include <unistd.h>\n#include <stdlib.h>/' "$SL_TMP/floor.c"
cc -O2 -o "$SL_TMP/floor" "$SL_TMP/floor.c" || fail "cannot build the floor loop"
# the files the collector reads per container (src/cgroup/cgstat.c readers)
: >"$SL_TMP/files.txt"
for cg in "${CGS[@]}"; do
	if [ "${HIER[0]}" = /sys/fs/cgroup ]; then
		for f in cpu.stat memory.current memory.stat memory.peak memory.max memory.swap.current \
			memory.events cpu.pressure memory.pressure io.pressure io.stat pids.current pids.max; do
			echo "/sys/fs/cgroup$cg/$f"
		done
	else
		for f in memory.usage_in_bytes memory.stat memory.max_usage_in_bytes memory.limit_in_bytes \
			memory.oom_control; do echo "/sys/fs/cgroup/memory$cg/$f"; done
		for f in cpuacct.usage cpuacct.stat; do echo "/sys/fs/cgroup/cpuacct$cg/$f"; done
		echo "/sys/fs/cgroup/cpu$cg/cpu.stat"
		for f in blkio.throttle.io_service_bytes_recursive blkio.throttle.io_serviced_recursive; do
			echo "/sys/fs/cgroup/blkio$cg/$f"
		done
		for f in pids.current pids.max; do echo "/sys/fs/cgroup/pids$cg/$f"; done
		for f in cpu.pressure memory.pressure io.pressure; do echo "/sys/fs/cgroup/unified$cg/$f"; done
	fi
done >>"$SL_TMP/files.txt"
NFILES=$(wc -l <"$SL_TMP/files.txt")
"$SL_TMP/floor" "$SL_TMP/files.txt" 20 >"$SL_TMP/floor.times" 2>"$SL_TMP/floor.err"
read -r FLOOR_MED FLOOR_P99 < <(stats_of "$SL_TMP/floor.times")
RATIO=$(awk -v a="$PASS_MED" -v b="$FLOOR_MED" 'BEGIN { printf "%.2f", a / b }')
SCRAPE_RATIO=$(awk -v a="$SCRAPE_MED" -v b="$FLOOR_MED" 'BEGIN { printf "%.2f", a / b }')
IDLE_PCT=$(awk -v r="$IDLE_RATE" 'BEGIN { printf "%.2f", r * 100 }')

note "scrape gzip $SCRAPE_MED/$SCRAPE_P99 ms (cpu $CPU_PER_SCRAPE ms), wire $WIRE_MED/$WIRE_P99 ms, plain $PLAIN_MED/$PLAIN_P99 ms (cpu $PLAIN_CPU ms), api $API_MED/$API_P99 ms, cpu/scrape $CPU_PER_SCRAPE ms, idle $IDLE_PCT %, pass $PASS_MED/$PASS_P99 ms, floor $FLOOR_MED/$FLOOR_P99 ms ($NFILES files)"

# churn: a small C program makes and removes the directories (a shell loop
# spends its time forking mkdir); each batch lives across one pass
cat >"$SL_TMP/churn.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
/* churn TOTAL BATCH SLEEP_MS BASE HIER...: per batch, pod directories of 4
 * containers under HIER/BASE in every hierarchy, a pause, then removal */
int main(int argc, char **argv)
{
	int total = atoi(argv[1]), batch = atoi(argv[2]), ms = atoi(argv[3]), nh = argc - 5;
	const char *base = argv[4];
	char p[512];
	int done = 0, b = 0;
	while (done < total) {
		int n = total - done < batch ? total - done : batch;
		for (int pass = 0; pass < 2; pass++) {
			for (int i = 0; i < n; i++)
				for (int h = 0; h < nh; h++) {
					snprintf(p, sizeof(p), "%s%s/podc4c4c4c4-%04x-4000-8000-%012x", argv[5 + h],
						 base, b, i / 4);
					if (pass == 0 && i % 4 == 0 && mkdir(p, 0755))
						perror(p);
					size_t l = strlen(p);
					snprintf(p + l, sizeof(p) - l, "/c4c4%04x%056x", b, i);
					if (pass == 0 ? mkdir(p, 0755) : rmdir(p))
						perror(p);
					if (pass == 1 && i % 4 == 3) {
						p[l] = 0;
						rmdir(p);
					}
				}
			if (pass == 0) {
				struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
				nanosleep(&ts, NULL);
			}
		}
		done += n;
		b++;
	}
	return 0;
}
EOF
cc -O2 -o "$SL_TMP/churn" "$SL_TMP/churn.c" || fail "cannot build the churn helper"
sleep 5 # several passes without scrapes: freed scrape buffers are trimmed
cleanup_churn() { # leftovers when the churn is interrupted
	local h d
	for h in "${HIER[@]}"; do
		for d in "$h$BASE"/podc4c4c4c4-*; do
			[ -d "$d" ] || continue
			rmdir "$d"/c4c4* "$d" 2>/dev/null
		done
	done
}
sl_on_exit cleanup_churn
RSS0=$(rss_kib)
note "churn: $C cgroups created and deleted in batches of 500 (agent RSS before: $RSS0 KiB)"
t0=$(date +%s)
"$SL_TMP/churn" "$C" 500 1200 "$BASE" "${HIER[@]}" 2>"$SL_LOGDIR/churn.err"
note "churn took $(($(date +%s) - t0)) s"
sleep 15 # tombstones expire after max(3 intervals, 10 s); no scrape meanwhile
RSS1=$(rss_kib)
DRSS=$((RSS1 - RSS0))
AFTER=$(sl_metric sandlens_stats_containers)
[ "$AFTER" -eq "$N" ] || note "after churn the agent reports $AFTER containers (want $N)"

kernel=$(uname -r)
cgv=$([ "${HIER[0]}" = /sys/fs/cgroup ] && echo "v2" || echo "hybrid (v1 controllers + v2 unified)")
table=$(cat <<EOF
| figure | value |
|---|---|
| containers (cgroups with a live process) | $N ($((N / 4)) pods of 4), kubepods layout |
| host | $(nproc) CPUs, kernel $kernel, cgroup $cgv |
| \`/metrics\` body | $MLINES samples, $((MBYTES / 1024)) KiB; gzip $((GZBYTES / 1024)) KiB |
| \`/metrics\` scrape as Prometheus does it (gzip, client inflates: \`curl --compressed\`), median / p99 | $SCRAPE_MED ms / $SCRAPE_P99 ms ($R scrapes) |
| \`/metrics\` gzip bytes only (no inflate), median / p99 | $WIRE_MED ms / $WIRE_P99 ms |
| \`/metrics\` identity (no Accept-Encoding), median / p99 | $PLAIN_MED ms / $PLAIN_P99 ms |
| transport floor: the identity body as a static file (python http.server), median / p99 | $STATIC_MED ms / $STATIC_P99 ms |
| agent CPU per scrape, gzip / identity | $CPU_PER_SCRAPE ms / $PLAIN_CPU ms (on-CPU time of the agent's threads but the collector) |
| stats API call (pod of 4), median / p99 | $API_MED ms / $API_P99 ms ($R calls) |
| render + gzip of the container families, once per pass | $RENDER_MS ms |
| agent CPU when idle (collector, 1 s interval) | $IDLE_PCT % of one CPU |
| collector pass (walk + read + group), median / p99 | $PASS_MED ms / $PASS_P99 ms |
| floor: minimal loop reading the same $NFILES files, median / p99 | $FLOOR_MED ms / $FLOOR_P99 ms |
| ratio collector pass / floor | $RATIO |
| ratio scrape / floor | $SCRAPE_RATIO (a scrape serves the published snapshot; it reads no cgroup file) |
| churn: cgroups created and deleted | $C in batches of 500 (each batch alive for one pass) |
| agent RSS before / after churn (minimum over 3 s) | $RSS0 KiB / $RSS1 KiB (difference $DRSS KiB; goal within 2048 KiB) |
EOF
)
echo "$table"
if [ "$RECORD" = 1 ]; then
	RES="$SL_ROOT/bench/RESULTS.md"
	[ -f "$RES" ] || printf '# Benchmark results\n' >"$RES"
	sect=$(printf '## Workload statistics (bench/stats-scale.sh)\n\nRun %s, `bench/stats-scale.sh --record` (N=%s, R=%s, C=%s; load average before the run: %s). Goal: `/metrics` at 1,000 containers <= 10 ms; RSS after churn within 2 MiB.\n\n%s\n' \
		"$(date -u +%Y-%m-%dT%H:%MZ)" "$N" "$R" "$C" "$LOAD0" "$table")
	awk -v sect="$sect" '
		/^## Workload statistics \(bench\/stats-scale.sh\)/ { skip = 1; if (!done) { print sect; done = 1 }; next }
		skip && /^## / { skip = 0 }
		!skip { print }
		END { if (!done) { print ""; print sect } }' "$RES" >"$RES.tmp" && mv "$RES.tmp" "$RES"
	note "recorded in bench/RESULTS.md"
fi
[ "$DRSS" -le 2048 ] && [ "$DRSS" -ge -2048 ] || fail "RSS changed by $DRSS KiB over the churn (goal: within 2048)"
sl_agent_stop || fail "sandlensd exited with status $? on SIGTERM"
echo "PASS"
