#!/bin/bash
# The HTML flame graphs (issue 12 item 4, docs/PROFILING.md "HTML"):
#   1. a real profile: a runc container spinning in sl-profprog's
#      prof_spin_loop and in a shell loop, profiled for 3 s through the agent; `sandlens profile
#      -o a.html` and GET .../result?format=html give the same page, served
#      as text/html with nosniff and the CSP that allows only the page's own
#      inline script and style (the hashes of its <meta> policy), sandboxed;
#      the capabilities and the task summary list html;
#   2. the diff and hostile-name pages from unit-made profiles
#      (build/tests/test_flame_html with SL_FLAME_OUT);
#   3. in headless Chromium (Debian's /usr/bin/chromium driven by
#      puppeteer-core, set up as t_webui.sh does; SKIP when absent), each page
#      from a file:// URL with the network off: frames drawn, the title names
#      the container, host and time range, the hot table lists
#      prof_spin_loop first, hover details, search highlights and shows the
#      percentage the hot table gives its total, click widens it to the
#      full width, reset unzooms; the diff shows grow_fn red and
#      shrink_fn blue; hostile names are text. Screenshots in the log dir
#      (tests/lib/flame_check.js).
# sl-san: once
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/container.sh"
source "$(dirname "$0")/lib_sched.sh"
source "$(dirname "$0")/lib_prof.sh"
sl_init
sl_require_agent_env
ct_require
[ -x "$SL_BUILD/helpers/sl-profprog" ] || fail "sl-profprog not built"
[ -x "$SL_BUILD/tests/test_flame_html" ] || fail "test_flame_html not built"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

sl_agent_start
# two busy processes (two branches of the flame graph, so that zooming
# widens one): prof_spin_loop and a shell loop
printf '%s\n' '#!/bin/sh' '/bin/sl-profprog spin 60 >/dev/null &' "exec sh -c 'while :; do :; done'" >"$SL_TMP/run.sh"
prof_ct a "" -- /bin/sh /run.sh
install -m 755 "$SL_TMP/run.sh" "$CT_DIR/rootfs/run.sh"
A=$CT_ID
ct_start_bg
ct_wait_running

# ---- 1. the agent's HTML ----
O=$SL_TMP/out
mkdir -p "$O"
sl_cli profile --container "${A:0:12}" --duration 3s -o "$O/a.html" >"$SL_LOGDIR/cli.txt" 2>&1 ||
	{ cat "$SL_LOGDIR/cli.txt"; fail "sandlens profile -o a.html failed"; }
cat "$SL_LOGDIR/cli.txt"
head -c 15 "$O/a.html" | grep -qx '<!DOCTYPE html>' || fail "a.html is not an HTML page: $(head -c 100 "$O/a.html")"
grep -q 'prof_spin_loop' "$O/a.html" || fail "a.html does not show prof_spin_loop"
ID=$(sl_cli tasks --json | head -1 | jq -r .id)
R=$(task_get "$ID")
assert_eq "status" "done" "$(printf '%s' "$R" | jq -r .status)"
printf '%s' "$R" | jq -e '.result.formats | index("html")' >/dev/null || fail "summary formats lack html: $(printf '%s' "$R" | jq -c .result.formats)"
curl -sf "$SL_API/api/v1/capabilities" | jq -e '[.. | strings] | index("html")' >/dev/null ||
	fail "capabilities do not list html"
code=$(curl -s -m 30 -D "$O/h.txt" -o "$O/api.html" -w '%{http_code}' "$SL_API/api/v1/tasks/$ID/result?format=html")
assert_eq "GET result?format=html" 200 "$code"
tr -d '\r' <"$O/h.txt" >"$O/headers.txt"
cat "$O/headers.txt"
cmp -s "$O/a.html" "$O/api.html" || fail "the CLI's a.html differs from the API's answer"
grep -qix 'content-type: text/html; charset=utf-8' "$O/headers.txt" || fail "Content-Type"
grep -qix 'x-content-type-options: nosniff' "$O/headers.txt" || fail "no nosniff"
CSP=$(sed -n 's/^content-security-policy: //Ip' "$O/headers.txt")
[ -n "$CSP" ] || fail "no Content-Security-Policy header"
META=$(grep -o '<meta http-equiv="Content-Security-Policy" content="[^"]*"' "$O/api.html" | sed 's/.*content="//; s/"$//')
case "$CSP" in
"$META; frame-ancestors 'none'; sandbox allow-scripts") ;;
*) fail "header CSP '$CSP' is not the page's '$META' + frame-ancestors + sandbox" ;;
esac
grep -q "script-src 'sha256-" <<<"$CSP" || fail "CSP without a script hash: $CSP"
grep -q "unsafe-inline" <<<"$CSP" && fail "CSP allows unsafe-inline"
# (that the hashes are those of the inline script and style: test_flame_html,
# and Chromium below refuses a page whose script they do not allow)
# a format name in capitals reads the same result
curl -sf -o "$O/caps.html" "$SL_API/api/v1/tasks/$ID/result?format=HTML" || fail "format=HTML"
cmp -s "$O/caps.html" "$O/api.html" || fail "format=HTML differs"
echo "ok - profile task $ID: CLI -o a.html = GET ?format=html ($(wc -c <"$O/a.html") bytes), text/html, nosniff, CSP by hash, sandboxed"

# ---- 2. unit-made diff and hostile pages ----
SL_FLAME_OUT=$O "$SL_BUILD/tests/test_flame_html" >"$SL_LOGDIR/unit.txt" 2>&1 || { cat "$SL_LOGDIR/unit.txt"; fail "test_flame_html"; }
[ -s "$O/diff.html" ] && [ -s "$O/hostile.html" ] || fail "test_flame_html wrote no diff.html/hostile.html"
echo "ok - diff.html and hostile.html from test_flame_html"

# ---- 3. the browser ----
CHROMIUM=${SL_CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || skip "no Chromium at $CHROMIUM (Debian package chromium); checks 1-2 passed"
command -v node >/dev/null || skip "no node (Debian package nodejs); checks 1-2 passed"
NODE_DIR=${SL_WEBUI_NODE_DIR:-/tmp/sl-webui-node}
if [ ! -d "$NODE_DIR/node_modules/puppeteer-core" ]; then
	command -v npm >/dev/null || skip "puppeteer-core not in $NODE_DIR and no npm to install it; checks 1-2 passed"
	mkdir -p "$NODE_DIR"
	PUPPETEER_SKIP_DOWNLOAD=1 timeout 180 npm install --prefix "$NODE_DIR" --no-audit --no-fund \
		puppeteer-core@23 >"$SL_LOGDIR/npm.log" 2>&1 ||
		skip "npm install puppeteer-core into $NODE_DIR failed (registry unreachable?): $(tail -n 3 "$SL_LOGDIR/npm.log")"
fi
export NODE_PATH=$NODE_DIR/node_modules
jq -n --arg c "$A" --arg h "$(hostname)" \
	'{top: "prof_spin_loop", container: $c, host: $h, grew: "grow_fn", shrank: "shrink_fn",
	  hostile: "</script><img src=x onerror=alert(1)>"}' >"$O/expect.json"
SHOTS=$SL_LOGDIR/screenshots
mkdir -p "$SHOTS"
timeout 90 node "$ROOT/tests/lib/flame_check.js" "$CHROMIUM" "$SHOTS" "$SL_TMP/chrome-profile" \
	"$O/a.html" "$O/diff.html" "$O/hostile.html" "$O/expect.json" >"$SL_LOGDIR/flame_check.log" 2>&1
rc=$?
cat "$SL_LOGDIR/flame_check.log"
[ $rc = 0 ] || fail "browser checks failed (status $rc)"
ls "$SHOTS"/*.png >/dev/null 2>&1 || fail "no screenshots"
cp "$O"/*.html "$SL_LOGDIR/" 2>/dev/null
echo "ok - browser checks; screenshots in $SHOTS"
