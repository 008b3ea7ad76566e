#!/bin/bash
# `make bench`: run every benchmark of bench/ that follows the section
# convention (bench/README.md) and rewrite bench/RESULTS.md: a header with
# the date, host, load average and the other BPF users present, then each
# benchmark's own section, replaced when the benchmark wrote one, kept as it
# was otherwise.
#
#   bench/run-all.sh [BUILD_DIR]                 (root; default build/)
#
# Env: BENCH_ONLY="name ..."  run only these (names as in `# bench-section:`)
#      BENCH_RESULTS=FILE     the results file (default bench/RESULTS.md)
# A benchmark is a bench/*.sh with a line `# bench-section: NAME`; it is run
# as `SL_BENCH_RESULTS=TMP bench/X.sh BUILD_DIR` and writes its markdown
# section (starting with a `## ` title) to TMP. Its section in RESULTS.md is
# the text between `<!-- NAME:begin ... -->` and `<!-- NAME:end -->`; a new
# name is appended. Exit status 0 when every benchmark ran (its own goals may
# still say FAIL inside its section), 1 when one could not run.
set -u
cd "$(dirname "$0")/.." || exit 1
B=${1:-build}
RES=${BENCH_RESULTS:-bench/RESULTS.md}
TMP=$(mktemp -d /tmp/sl-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
[ "$(id -u)" = 0 ] || { echo "bench/run-all.sh: needs root" >&2; exit 1; }

# processes holding BPF programs, "comm(pid): N programs"
bpf_users() {
	local p n
	for p in /proc/[0-9]*; do
		n=$(grep -hs '^prog_id:' "$p"/fdinfo/* 2>/dev/null | sort -u | wc -l)
		[ "$n" -gt 0 ] && echo "$(cat "$p/comm" 2>/dev/null)($(basename "$p")): $n"
	done | paste -sd';' - | sed 's/;/; /g'
}

names=()
for f in bench/*.sh; do
	n=$(sed -n 's/^# bench-section: *\([A-Za-z0-9_-]*\).*/\1/p' "$f" | head -1)
	[ -n "$n" ] || continue
	if [ -n "${BENCH_ONLY:-}" ] && ! grep -qw -- "$n" <<<"$BENCH_ONLY"; then continue; fi
	names+=("$n:$f")
done
[ ${#names[@]} -gt 0 ] || { echo "bench/run-all.sh: no benchmark selected" >&2; exit 1; }

start=$(date -u +%Y-%m-%dT%H:%MZ)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
nprog0=$(bpftool prog show -j 2>/dev/null | jq length 2>/dev/null || echo "?")
users0=$(bpf_users)
status=0
ran=() kept=()
for nf in "${names[@]}"; do
	n=${nf%%:*} f=${nf#*:}
	echo "=== $n ($f) ==="
	SL_BENCH_RESULTS=$TMP/$n.md "$f" "$B" 2>&1 | tee "$TMP/$n.log"
	rc=${PIPESTATUS[0]}
	if [ -s "$TMP/$n.md" ]; then
		ran+=("$n (exit $rc)")
	else
		kept+=("$n (exit $rc, no section written: previous section kept)")
		[ "$rc" = 77 ] || status=1
	fi
done

# the header section
{
	echo "## Last \`make bench\` run"
	echo
	echo "Started $start, finished $(date -u +%Y-%m-%dT%H:%MZ); commit $(git rev-parse --short HEAD 2>/dev/null)."
	echo "Host: $(uname -n), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), kernel $(uname -r)."
	echo "Load average before: $load0; after: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "Other BPF users before the run (\`bpftool prog list\`: $nprog0 programs loaded; holders from /proc/*/fdinfo):"
	echo "${users0:-none}."
	echo
	echo "Sections rewritten by this run: ${ran[*]:-none}."
	[ ${#kept[@]} -gt 0 ] && echo "Not rewritten: ${kept[*]}."
	echo "Sections not named here are from earlier runs (their own dates inside)."
} >"$TMP/bench-header.md"

# splice: replace NAME's marked block or append it
splice() {
	local name=$1 file=$2 title=$3
	awk -v name="$name" -v file="$file" -v title="$title" '
		BEGIN { b = "<!-- " name ":begin"; e = "<!-- " name ":end -->"
			body = ""
			while ((getline l < file) > 0) if (index(l, "<!-- " name ":") != 1) body = body l "\n" }
		function put() { print b " (written by " title ") -->"; printf "%s", body; print e; done = 1 }
		index($0, b) == 1 { put(); skip = 1; next }
		skip && $0 == e { skip = 0; next }
		skip { next }
		!done && index($0, "<!-- bench:legacy") == 1 { put(); print ""; print; next }
		{ print }
		END { if (!done) { print ""; put() } }' "$RES"
}
[ -f "$RES" ] || printf '# Benchmark results\n' >"$RES"
cp "$RES" "$TMP/res"
for nf in "${names[@]}"; do
	n=${nf%%:*} f=${nf#*:}
	[ -s "$TMP/$n.md" ] || continue
	RES=$TMP/res splice "$n" "$TMP/$n.md" "$f" >"$TMP/res.new" && mv "$TMP/res.new" "$TMP/res"
done
# the header goes right after the title line when it is new
if ! grep -q '^<!-- bench-header:begin' "$TMP/res"; then
	awk 'NR == 1 { print; print ""; print "<!-- bench-header:begin -->"; print "<!-- bench-header:end -->"; next } { print }' \
		"$TMP/res" >"$TMP/res.new" && mv "$TMP/res.new" "$TMP/res"
fi
RES=$TMP/res splice bench-header "$TMP/bench-header.md" "bench/run-all.sh" >"$TMP/res.new" && mv "$TMP/res.new" "$TMP/res"
cp "$TMP/res" "$RES"
echo "bench/run-all.sh: wrote $RES (rewritten: ${ran[*]:-none}${kept:+; kept: ${kept[*]}})"
exit $status
