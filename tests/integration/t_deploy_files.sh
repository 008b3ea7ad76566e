#!/bin/bash
# The deployment files in deploy/: the Prometheus alert rules pass
# `promtool check rules` and their unit tests `promtool test rules` (and a
# broken copy of a test fails: the tests can fail); the Kubernetes manifest
# parses as YAML and holds what docs/DEPLOY.md promises (hostPID, every host
# mount read-only but the state hostPath, the unit's capabilities, requests
# and limits, a readiness probe on /healthz); the Grafana dashboard parses
# and every metric its queries name exists in a running agent's /metrics.
# sl-san: once (promtool over deploy/ files: no sandlens binary involved)
source "$(dirname "$0")/../lib/common.sh"
sl_init
sl_require_cmd python3 jq
P="$SL_ROOT/deploy/prometheus"
if command -v promtool >/dev/null 2>&1; then
	promtool check rules "$P/sandlens-alerts.yaml" >"$SL_LOGDIR/check.log" 2>&1 || { cat "$SL_LOGDIR/check.log"; fail "promtool check rules"; }
	(cd "$P" && promtool test rules sandlens-alerts.test.yaml) >"$SL_LOGDIR/test.log" 2>&1 || { cat "$SL_LOGDIR/test.log"; fail "promtool test rules"; }
	mkdir -p "$SL_TMP/p"
	cp "$P/sandlens-alerts.yaml" "$SL_TMP/p/"
	sed 's/summary: "sandlens agent on node-a:9753 is not scraped"/summary: "wrong"/' "$P/sandlens-alerts.test.yaml" >"$SL_TMP/p/t.yaml"
	(cd "$SL_TMP/p" && promtool test rules t.yaml) >/dev/null 2>&1 && fail "a broken rule test passed: the tests cannot fail"
	echo "ok - promtool check rules and test rules ($(grep -c 'alertname:' "$P/sandlens-alerts.test.yaml") alert checks)"
else
	echo "# SKIP part: promtool not installed (Debian package prometheus): rules not checked"
	PROMTOOL_SKIPPED=1
fi

python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml not installed: the manifest cannot be parsed"
U="$SL_ROOT/deploy/systemd/sandlensd.service"
caps=$(sed -n 's/^AmbientCapabilities=//p' "$U")
python3 - "$SL_ROOT/deploy/kubernetes/sandlens-daemonset.yaml" "$caps" <<'PY' || fail "the DaemonSet manifest"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
ds = [d for d in docs if d["kind"] == "DaemonSet"]
assert len(ds) == 1, "one DaemonSet"
ds = ds[0]
assert ds["apiVersion"] == "apps/v1"
spec = ds["spec"]["template"]["spec"]
assert spec.get("hostPID") is True, "hostPID"
assert ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items(), "selector matches"
c = [x for x in spec["containers"] if x["name"] == "sandlensd"][0]
want = sorted(x[len("CAP_"):] for x in sys.argv[2].split())
got = sorted(c["securityContext"]["capabilities"]["add"])
assert got == want, f"capabilities {got} != the unit's {want}"
assert c["securityContext"]["capabilities"]["drop"] == ["ALL"]
assert c["securityContext"].get("privileged") is False
r = c["resources"]
for k in ("requests", "limits"):
    assert "cpu" in r[k] and "memory" in r[k], f"resources.{k}"
p = c["readinessProbe"]["httpGet"]
assert p["path"] == "/healthz" and p["port"] == 9753, "readiness probe"
vols = {v["name"]: v for v in spec["volumes"]}
for m in c["volumeMounts"]:
    v = vols[m["name"]]
    if "hostPath" in v and m["mountPath"] != "/var/lib/sandlens":
        assert m.get("readOnly") is True, f"host mount {m['mountPath']} not read-only"
paths = {vols[m["name"]].get("hostPath", {}).get("path") for m in c["volumeMounts"]}
for need in ("/sys/kernel/btf", "/sys/fs/cgroup", "/sys/kernel/tracing", "/run/runc", "/run/containerd", "/var/lib/sandlens"):
    assert need in paths, f"host path {need} not mounted"
for v in vols.values():
    if "hostPath" in v:
        assert v["hostPath"].get("type") in ("Directory", "DirectoryOrCreate"), v
print("manifest ok:", len(docs), "objects")
PY
echo "ok - DaemonSet: hostPID, read-only host mounts, the unit's capabilities, resources, readiness on /healthz"
grep -q '^FROM debian:12 AS build' "$SL_ROOT/deploy/Containerfile" && grep -q '^FROM debian:12-slim' "$SL_ROOT/deploy/Containerfile" ||
	fail "Containerfile is not multi-stage on debian:12"

G="$SL_ROOT/deploy/grafana/sandlens-dashboard.json"
jq -e '.panels | length > 0' "$G" >/dev/null || fail "dashboard JSON does not parse or has no panels"
jq -r '.. | .expr? // empty, (.query? | objects | .query // empty)' "$G" >"$SL_TMP/exprs"
grep -oE '\b(sandlens|container|process|machine)_[a-z0-9_]+' "$SL_TMP/exprs" | sort -u >"$SL_TMP/names"
[ -s "$SL_TMP/names" ] || fail "no metric names found in the dashboard"
echo "ok - dashboard parses, $(wc -l <"$SL_TMP/names") metrics queried"

sl_require_agent_env
# pressure on (the test default turns it off): its families are on the dashboard
SL_TEST_PRESSURE=1 sl_agent_start "stats:
  interval: 1s"
sleep 2
curl -sf "$SL_API/metrics" >"$SL_LOGDIR/metrics.txt" || fail "no /metrics"
sed -n 's/^# TYPE \([^ ]*\) .*/\1/p' "$SL_LOGDIR/metrics.txt" | sort -u >"$SL_TMP/families"
missing=""
while read -r n; do
	base=$n
	for suf in _bucket _sum _count; do
		grep -qx "${n%$suf}" "$SL_TMP/families" && [ "${n%$suf}" != "$n" ] && base=${n%$suf}
	done
	grep -qx "$base" "$SL_TMP/families" || missing="$missing $n"
done <"$SL_TMP/names"
[ -z "$missing" ] || fail "the dashboard queries metrics /metrics does not have:$missing"
# and the alert rules' agent metrics (up is Prometheus's own)
grep -oE '\b(sandlens|container)_[a-z0-9_]+' "$P/sandlens-alerts.yaml" | sed 's/_bucket$//' | sort -u | while read -r n; do
	grep -qx "$n" "$SL_TMP/families" || fail "the alert rules use $n, not in /metrics"
done
echo "ok - every metric of the dashboard and the alert rules exists in /metrics"
[ -n "${PROMTOOL_SKIPPED:-}" ] && skip "promtool not installed: rules not checked (the rest passed)"
echo "PASS"
