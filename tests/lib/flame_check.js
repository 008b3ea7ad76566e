// Browser checks of the HTML flame graphs (tests/integration/t_flame_html.sh,
// docs/PROFILING.md "HTML"):
//   node flame_check.js CHROMIUM SHOTS_DIR PROFILE_DIR SINGLE.html DIFF.html HOSTILE.html EXPECT.json
// EXPECT: {"top": "prof_spin_loop", "container": ID, "host": NAME,
//          "grew": "grow_fn", "shrank": "shrink_fn", "hostile": NAME}.
// Each page is opened from a file:// URL with the network off (offline mode,
// and every request but the page itself aborted and counted as a failure);
// a CSP violation, a page error or a dialog fails. Prints "ok - ..." per
// check; exits 1 at the first failure, with a screenshot.
'use strict';
const puppeteer = require('puppeteer-core');
const path = require('path');
const fs = require('fs');

const [chromium, shots, profile, single, diff, hostile, expectFile] = process.argv.slice(2);
const X = JSON.parse(fs.readFileSync(expectFile, 'utf8'));
let page, browser, step = 0, url = '';
const dialogs = [], pageErrors = [], cspViolations = [], foreign = [];

const ok = (m) => console.log('ok - ' + m);
async function shot(name) {
  step++;
  await page.screenshot({ path: path.join(shots, String(step).padStart(2, '0') + '-' + name + '.png'), fullPage: true });
}
async function fail(m) {
  console.log('FAIL: ' + m);
  try { await shot('failure'); } catch (e) { /* page gone */ }
  try { await browser.close(); } catch (e) { /* already */ }
  process.exit(1);
}
async function until(what, fn, arg, timeoutMs = 10000) {
  try {
    const h = await page.waitForFunction(fn, { timeout: timeoutMs, polling: 100 }, arg);
    return await h.jsonValue();
  } catch (e) {
    return fail(what + ': ' + e.message.split('\n')[0]);
  }
}
async function open(file) {
  url = 'file://' + path.resolve(file);
  await page.goto(url, { waitUntil: 'load' });
  await until('frames drawn in ' + path.basename(file), () => Number(document.getElementById('flame').dataset.frames) > 3);
}
function clean(where) {
  if (foreign.length) return fail(where + ': requests left the page: ' + foreign.join(' '));
  if (cspViolations.length) return fail(where + ': CSP violations: ' + cspViolations.join(' | '));
  if (pageErrors.length) return fail(where + ': page errors: ' + pageErrors.join(' | '));
  if (dialogs.length) return fail(where + ': dialogs opened: ' + dialogs.join(' | '));
  return null;
}
// the centre of the (non-ancestor) frame named name
async function frameCentre(name) {
  const r = await page.evaluate((n) => {
    // the widest one (a function can be on several paths)
    const f = [...document.querySelectorAll('#flame .f:not(.anc)')].filter((e) => e.dataset.name === n)
      .sort((a, b) => b.getBoundingClientRect().width - a.getBoundingClientRect().width)[0];
    if (!f) return null;
    // a deep stack makes the page taller than the viewport: bring the frame
    // into view first (the mouse only reaches what is on screen)
    f.scrollIntoView({ block: 'center', inline: 'center' });
    const b = f.getBoundingClientRect();
    return { x: b.left + b.width / 2, y: b.top + b.height / 2, w: b.width };
  }, name);
  if (!r) await fail('no frame named ' + name);
  return r;
}

(async () => {
  browser = await puppeteer.launch({
    executablePath: chromium, headless: true, userDataDir: profile,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--disable-extensions'],
  });
  page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 900 });
  await page.setOfflineMode(true);
  await page.setRequestInterception(true);
  page.on('request', (r) => {
    if (r.url() === url || r.url().startsWith('data:')) return r.continue();
    foreign.push(r.url());
    return r.abort();
  });
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => { if (/Content Security Policy|Refused to/i.test(m.text())) cspViolations.push(m.text()); });

  // ---- a real profile ----
  await open(single);
  const frames = await page.$eval('#flame', (e) => Number(e.dataset.frames));
  ok('profile page: ' + frames + ' frames drawn');
  const meta = await page.evaluate(() => {
    const g = (k) => { const s = document.querySelector('#meta span[data-k="' + k + '"]'); return s ? s.textContent : ''; };
    return { title: document.getElementById('title').textContent, container: g('container'), host: g('host'), time: g('time'), type: g('type') };
  });
  if (!meta.container.includes(X.container)) await fail('title has no container ' + X.container + ': ' + JSON.stringify(meta));
  if (!meta.host.includes(X.host)) await fail('title has no host ' + X.host + ': ' + JSON.stringify(meta));
  if (!/^time: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z \.\. \d{4}-.* UTC \(\d+\.\d s\)$/.test(meta.time)) await fail('title time range: ' + meta.time);
  if (!/cpu samples \(samples\)/.test(meta.type)) await fail('title sample type: ' + meta.type);
  ok('title: ' + meta.title + ' | ' + meta.container + ' | ' + meta.host + ' | ' + meta.time + ' | ' + meta.type);
  const top = await page.$eval('#hot tbody tr td.sym', (e) => e.textContent);
  if (top !== X.top) await fail('hot table top symbol is ' + top + ', not ' + X.top);
  const topSelf = await page.$eval('#hot tbody tr td.num:nth-child(2)', (e) => e.textContent);
  ok('hot table lists ' + top + ' first (self ' + topSelf + ')');
  await shot('profile');

  // hover
  // a loaded machine can lay the page out after the first move: move away and
  // back (fresh mousemove events) up to three times before failing
  const hoverOk = (n) => { const t = document.getElementById('details').textContent; return t.startsWith(n) && /self/.test(t) && /%/.test(t) && t; };
  let det = null;
  for (let i = 0; i < 3 && !det; i++) {
    const c = await frameCentre(X.top);
    await page.mouse.move(1, 1);
    await page.mouse.move(c.x, c.y, { steps: 4 });
    try {
      det = await (await page.waitForFunction(hoverOk, { timeout: 5000, polling: 100 }, X.top)).jsonValue();
    } catch (e) {
      det = null;
    }
  }
  if (!det) det = await until('hover details', hoverOk, X.top);
  ok('hover shows: ' + det.replace(/\n/g, ' | '));

  // search
  await page.type('#search', X.top.slice(0, 9));
  const pct = await until('search shows a percentage', () => document.getElementById('matched').dataset.pct);
  const m = await page.evaluate(() => ({ n: Number(document.getElementById('flame').dataset.matches), text: document.getElementById('matched').textContent,
    bg: getComputedStyle(document.querySelector('#flame .f.match')).backgroundColor }));
  if (!(m.n > 0)) await fail('search highlights nothing');
  // the page's search sum (JS, over the tree) against the writer's hot
  // table (C, over the samples): the same share of the function's total
  const hotPct = await page.$eval('#hot tbody tr td.num:nth-child(4)', (e) => parseFloat(e.textContent));
  if (!(Number(pct) > 0) || Math.abs(Number(pct) - hotPct) > 0.011) await fail('search matched ' + pct + '%, the hot table says total ' + hotPct + '%');
  if (m.bg !== 'rgb(230, 0, 230)') await fail('matched frames are not highlighted: ' + m.bg);
  ok('search "' + X.top.slice(0, 9) + '": ' + m.n + ' frames highlighted, ' + m.text);
  await shot('search');

  // zoom: click a frame below the top function (its caller) and then the function itself
  const before = await frameCentre(X.top);
  const full = await page.$eval('#flame', (e) => e.clientWidth);
  if (before.w > full * 0.9) await fail(X.top + ' already spans ' + before.w + ' of ' + full + ' px: nothing to zoom (one branch only?)');
  await page.mouse.click(before.x, before.y);
  await until('click zooms', (n) => document.getElementById('flame').dataset.zoom === n, X.top);
  const after = await frameCentre(X.top);
  if (after.w < full - 2) await fail('zoomed frame is ' + after.w + ' px wide of ' + full);
  ok('click zooms: ' + X.top + ' from ' + before.w.toFixed(0) + ' px to ' + after.w.toFixed(0) + ' px');
  await shot('zoomed');
  await page.click('#reset');
  await until('reset unzooms', () => document.getElementById('flame').dataset.zoom === '');
  ok('reset zoom');
  await clean('profile page');

  // ---- a differential flame graph ----
  await open(diff);
  const d = await page.evaluate((x) => {
    const f = (n) => [...document.querySelectorAll('#flame .f')].find((e) => e.dataset.name === n);
    const g = f(x.grew), s = f(x.shrank);
    return { g: g && { cls: g.className, bg: getComputedStyle(g).backgroundColor, title: g.title },
      s: s && { cls: s.className, bg: getComputedStyle(s).backgroundColor, title: s.title },
      red: document.querySelectorAll('#flame .f.grew').length, blue: document.querySelectorAll('#flame .f.shrank').length,
      top: document.querySelector('#hot tbody tr td.sym').textContent,
      delta: document.querySelector('#hot tbody tr td.num:nth-child(3)').textContent,
      base: (document.querySelector('#meta span[data-k="base-time"]') || {}).textContent };
  }, X);
  if (!d.g || !/\bgrew\b/.test(d.g.cls) || d.g.bg !== 'rgb(255, 0, 0)') await fail('grown function not red: ' + JSON.stringify(d.g));
  const blue = /^rgb\((\d+), (\d+), 255\)$/.exec(d.s ? d.s.bg : '');
  if (!d.s || !/\bshrank\b/.test(d.s.cls) || !blue || Number(blue[1]) > 200) await fail('shrunk function not blue: ' + JSON.stringify(d.s));
  if (!/base 10 .*normalized 20.*cur 100.*delta \+80/.test(d.g.title)) await fail('grown frame hover: ' + d.g.title);
  if (d.top !== X.grew || d.delta !== '+80') await fail('diff hot table: ' + d.top + ' ' + d.delta);
  if (!d.base) await fail('diff title has no base time range');
  ok('diff: ' + X.grew + ' red (' + d.g.bg + '), ' + X.shrank + ' blue (' + d.s.bg + '); ' + d.red + ' grown / ' + d.blue + ' shrunk frames; hot table ' + d.top + ' ' + d.delta);
  const gc = await frameCentre(X.grew);
  await page.mouse.move(gc.x, gc.y);
  const dd = await until('diff hover', () => { const t = document.getElementById('details').textContent; return /delta/.test(t) && t; });
  ok('diff hover: ' + dd.replace(/\n/g, ' | '));
  await shot('diff');
  await clean('diff page');

  // ---- hostile names ----
  await open(hostile);
  const h = await page.evaluate((n) => ({
    imgs: document.querySelectorAll('img, #flame .f *, #title *, #hot td *, #details *, #matched *').length,
    frame: [...document.querySelectorAll('#flame .f')].some((e) => e.dataset.name === n && e.textContent === n),
    title: document.getElementById('title').textContent,
  }), X.hostile);
  if (h.imgs) await fail('hostile names made ' + h.imgs + ' elements');
  if (!h.frame) await fail('no frame shows the hostile name as text');
  if (h.title !== '<h1>t</h1>') await fail('hostile title not text: ' + h.title);
  await page.type('#search', '</script>');
  await until('hostile search', () => Number(document.getElementById('flame').dataset.matches) > 0);
  ok('hostile names are text: ' + JSON.stringify(X.hostile) + ', title ' + JSON.stringify(h.title) + ', no element, no dialog');
  await shot('hostile');
  await clean('hostile page');
  await browser.close();
})().catch((e) => fail('exception: ' + (e && e.stack || e)));
