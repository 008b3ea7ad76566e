#!/bin/bash
# The web UI (issue 16 item 2, OUT-8, docs/UI.md) in headless Chromium
# (Debian's /usr/bin/chromium driven by puppeteer-core, installed with npm
# into $SL_WEBUI_NODE_DIR, default /tmp/sl-webui-node, never into the repo;
# SKIP when neither is available), against a live agent and a real runc
# container that spins (runqueue waits: three spinners on one CPU, two
# sl-profprog and a shell loop, so that a profile has two branches) and keeps
# exec'ing `sh -c 'sleep 1' '<img src=x onerror=alert(1)>'`:
#   1. headers: /ui/ files with their Content-Type, a strict CSP,
#      nosniff; / and /ui redirect to /ui/; unknown files 404;
#   2. as a reader: the containers table lists the container, its page
#      plots the runqueue series with > 0 points, the events timeline holds
#      its exec event, argv withheld, profiles say admin only;
#   3. with the token typed in (sessionStorage only, never in the page):
#      the exec event's argv is shown as text (no <img> element, no alert
#      dialog), and so is the comm '<b id=pwn>' of another exec (no element), a profile taken from the page renders a flame graph whose
#      frames zoom on click and highlight on search;
#   4. the node page lists every module and hook of /healthz with its
#      state, the agent's own cost; the node timeline has lanes for the
#      schema's modules.
# Screenshots of each page go to the log dir (tests/lib/webui_check.js).
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/lib_sched.sh"
sl_init
sl_require_agent_env
ct_require
sl_require_cmd node
CHROMIUM=${SL_CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || skip "no Chromium at $CHROMIUM (Debian package chromium)"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

NODE_DIR=${SL_WEBUI_NODE_DIR:-/tmp/sl-webui-node}
if [ ! -d "$NODE_DIR/node_modules/puppeteer-core" ]; then
	command -v npm >/dev/null || skip "puppeteer-core not in $NODE_DIR and no npm to install it"
	mkdir -p "$NODE_DIR"
	PUPPETEER_SKIP_DOWNLOAD=1 timeout 180 npm install --prefix "$NODE_DIR" --no-audit --no-fund \
		puppeteer-core@23 >"$SL_LOGDIR/npm.log" 2>&1 ||
		skip "npm install puppeteer-core into $NODE_DIR failed (registry unreachable?): $(tail -n 3 "$SL_LOGDIR/npm.log")"
fi
export NODE_PATH=$NODE_DIR/node_modules

sl_agent_start "tasks:
  enabled: true"

# ---- 1. headers ----
hdr() { curl -q -s -o /dev/null -D - "$SL_API$1" | tr -d '\r'; }
H=$(hdr /ui/)
grep -qx 'HTTP/1.1 200 OK' <<<"$H" || fail "/ui/: $H"
grep -qix 'content-type: text/html; charset=utf-8' <<<"$H" || fail "/ui/ Content-Type: $H"
grep -qi "^content-security-policy: default-src 'self';" <<<"$H" || fail "/ui/ CSP: $H"
grep -qix 'x-content-type-options: nosniff' <<<"$H" || fail "/ui/ nosniff: $H"
grep -qix 'content-type: text/javascript; charset=utf-8' <<<"$(hdr /ui/app.js)" || fail "/ui/app.js Content-Type"
grep -qix 'content-type: text/css; charset=utf-8' <<<"$(hdr /ui/style.css)" || fail "/ui/style.css Content-Type"
for p in / /ui; do
	H=$(hdr "$p")
	grep -q '^HTTP/1.1 302' <<<"$H" && grep -qix 'location: /ui/' <<<"$H" || fail "$p does not redirect to /ui/: $H"
done
grep -q '^HTTP/1.1 404' <<<"$(hdr /ui/nope.js)" || fail "/ui/nope.js is not a 404"
curl -q -s "$SL_API/ui/" | grep -qi 'token' || fail "/ui/ has no token field"
if curl -q -s "$SL_API/ui/" "$SL_API/ui/app.js" | grep -qF "$(cat "$SL_TOKEN_FILE")"; then
	fail "the admin token is in the page"
fi
echo "ok - headers, redirects, 404, no token in the page"

# ---- the container ----
XSS='<img src=x onerror=alert(1)>'
XCOMM='<b id=pwn>' # a program of that name: the exec event's comm
printf '%s\n' '#!/bin/sh' \
	'/bin/sl-profprog spin 300 >/dev/null &' \
	'/bin/sl-profprog spin 300 >/dev/null &' \
	"sh -c 'while :; do :; done' &" \
	"while :; do sh -c 'sleep 1' '$XSS'; '/bin/$XCOMM' true 2>/dev/null; done" >"$SL_TMP/run.sh"
CPU=$(($(nproc) - 1))
sched_ct ui "$CPU" 40000 -- /bin/sh /run.sh
cp "$SL_BUILD/helpers/sl-profprog" "$CT_DIR/rootfs/bin/sl-profprog" || fail "copy sl-profprog"
install -m 755 "$SL_TMP/run.sh" "$CT_DIR/rootfs/run.sh"
ln -s busybox "$CT_DIR/rootfs/bin/$XCOMM" || fail "symlink $XCOMM"
ct_start_bg
sl_wait_events "container=$CT_ID&type=exec&limit=1000" \
	'[.[] | select(.argv[3]? == "<img src=x onerror=alert(1)>")][0].id' 20 >/dev/null ||
	fail "no exec event with the XSS argv from the container"
sl_wait_events "container=$CT_ID&type=exec&limit=1000" '[.[] | select(.comm == "<b id=pwn>")][0].id' 20 >/dev/null
sched_wait "$CT_ID" '.interval.waits > 0' 20 >/dev/null || fail "no runqueue waits of the container"
# a few history points of its runqueue series
n=0
until [ "$(curl -sf "$SL_API/api/v1/series/history?module=sched&name=sched_runqueue_latency_p99_seconds&container=$CT_ID" |
	jq '[.containers[].points[]] | length')" -ge 3 ]; do
	n=$((n + 1)); [ $n -lt 40 ] || fail "no runqueue history for the container"
	sleep 0.5
done
echo "ok - container $CT_ID runs, exec events and runqueue history"

if [ -n "${SL_WEBUI_HOLD:-}" ]; then # development: keep it all up
	echo "# holding $SL_WEBUI_HOLD s: $SL_API/ui/ token $(cat "$SL_TOKEN_FILE") ct $CT_ID"
	sleep "$SL_WEBUI_HOLD"
fi

# ---- 2..4: the browser ----
SHOTS=$SL_LOGDIR/screenshots
mkdir -p "$SHOTS"
timeout 80 node "$ROOT/tests/lib/webui_check.js" "$CHROMIUM" "$SL_API" "$(cat "$SL_TOKEN_FILE")" "$CT_ID" "$SHOTS" \
	"$SL_TMP/chrome-profile" >"$SL_LOGDIR/webui_check.log" 2>&1
rc=$?
cat "$SL_LOGDIR/webui_check.log"
[ $rc = 0 ] || fail "browser checks failed (status $rc)"
ls "$SHOTS"/*.png >/dev/null 2>&1 || fail "no screenshots"
echo "ok - browser checks; screenshots in $SHOTS"
