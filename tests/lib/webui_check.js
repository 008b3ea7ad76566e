// Browser checks of the web UI (tests/integration/t_webui.sh, docs/UI.md):
//   node webui_check.js CHROMIUM API TOKEN CONTAINER_ID SHOTS_DIR PROFILE_DIR
// Drives headless Chromium with puppeteer-core (NODE_PATH). Prints "ok - ..."
// per check; exits 1 at the first failure, with a screenshot of the page.
'use strict';
const puppeteer = require('puppeteer-core');
const path = require('path');

const [chromium, api, token, ctId, shots, profile] = process.argv.slice(2);
const XSS = '<img src=x onerror=alert(1)>';
let page, browser, step = 0;
const dialogs = [], pageErrors = [], cspViolations = [];

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
// poll fn (in the page) until it returns a truthy value
async function until(what, fn, arg, timeoutMs = 20000) {
  try {
    const h = await page.waitForFunction(fn, { timeout: timeoutMs, polling: 250 }, arg);
    return await h.jsonValue();
  } catch (e) {
    return fail(what + ': ' + e.message.split('\n')[0]);
  }
}
async function go(hash) {
  await page.evaluate((h) => { location.hash = h; }, hash);
}

(async () => {
  browser = await puppeteer.launch({
    executablePath: chromium, headless: true, userDataDir: profile,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--disable-extensions'],
  });
  page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 1000 });
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text()); });
  // no request may leave the agent's origin
  const foreign = [];
  page.on('request', (r) => { const u = r.url(); if (!u.startsWith(api) && !u.startsWith('data:') && !u.startsWith('blob:')) foreign.push(u); });

  // ---- containers table (reader) ----
  const resp = await page.goto(api + '/', { waitUntil: 'load' });
  if (!page.url().startsWith(api + '/ui/')) await fail('/ did not land on /ui/: ' + page.url());
  if (resp.headers()['content-security-policy'] === undefined) await fail('no CSP on the page');
  await until('containers table lists ' + ctId, (id) => [...document.querySelectorAll('#containers td a')].some((a) => a.textContent === id), ctId);
  const role = await page.$eval('#role', (e) => e.textContent);
  if (role !== 'reader') await fail('role without a token is ' + role);
  ok('containers table lists the container (as a reader)');
  await shot('containers');

  // ---- container page (reader) ----
  await go('#/container/' + encodeURIComponent(ctId));
  const pts = await until('runqueue plot has points',
    () => { const c = document.querySelector('canvas.plot[data-series="sched/sched_runqueue_latency_p99_seconds"]'); return c && Number(c.dataset.points) > 0 && Number(c.dataset.points); });
  ok('container page plots the runqueue series: ' + pts + ' points');
  await until('the timeline shows an exec event', () => document.querySelectorAll('#container-timeline svg .ev[data-type="exec"]').length > 0);
  await until('the event table shows exec rows', () => document.querySelectorAll('#container-events tr[data-type="exec"]').length > 0);
  const withheld = await page.$$eval('#container-events tr[data-type="exec"] td.detail', (tds) => tds.some((t) => t.textContent.includes('argv withheld')));
  if (!withheld) await fail('a reader sees exec argv (no "argv withheld")');
  const leaked = await page.evaluate((x) => document.body.innerText.includes(x), XSS);
  if (leaked) await fail('a reader sees the argv text');
  ok('events timeline and table show the exec events, argv withheld for a reader');
  await until('neighbours table', () => document.querySelector('#neighbours table.neighbours tbody tr'));
  ok('neighbours listed');
  await until('profiles are admin-only for a reader', () => document.getElementById('tasks-denied'));
  ok('profiles say admin only to a reader');
  await shot('container-reader');

  // ---- with the token ----
  await page.type('#token', token);
  await page.click('#token-set');
  await until('role admin', () => document.getElementById('role').textContent === 'admin');
  const inPage = await page.evaluate((t) => document.documentElement.outerHTML.includes(t), token);
  if (inPage) await fail('the token is in the DOM');
  const stored = await page.evaluate(() => ({ s: sessionStorage.getItem('sandlens.token'), l: localStorage.length, c: document.cookie }));
  if (stored.s !== token || stored.l !== 0 || stored.c !== '') await fail('token storage: ' + JSON.stringify({ l: stored.l, c: stored.c, s: !!stored.s }));
  ok('token kept in sessionStorage only (not in the DOM, localStorage or a cookie)');
  await until('the exec argv is shown as text', (x) => [...document.querySelectorAll('#container-events td.detail')].some((t) => t.textContent.includes(x)), XSS);
  await until('the comm <b id=pwn> is shown as text', () => [...document.querySelectorAll('#container-events td')].some((t) => t.textContent.includes('<b id=pwn>')));
  if (await page.evaluate(() => document.getElementById('pwn') !== null || document.querySelectorAll('b').length > 0))
    await fail('the comm <b id=pwn> became an element');
  const imgs = await page.evaluate(() => document.querySelectorAll('img').length);
  if (imgs) await fail(imgs + ' <img> elements in the page (argv rendered as HTML)');
  // the whole event, clicked on the timeline
  await page.evaluate(() => {
    const evs = [...document.querySelectorAll('#container-timeline svg .ev[data-type="exec"]')];
    evs[evs.length - 1].dispatchEvent(new MouseEvent('click', { bubbles: true }));
  });
  await until('event detail', () => document.getElementById('event-detail').textContent.includes('"type": "exec"'));
  ok('the XSS argv and comm are shown as text, no <img> or <b> element');
  await shot('container-admin');

  // ---- a profile taken from the page, its flame graph ----
  await until('profile button', () => { const b = document.querySelector('button[data-task-type="profile_on_cpu"]'); return b && !b.disabled; });
  await page.$eval('#task-duration', (e) => { e.value = '3'; });
  const old = await page.$$eval('#task-list tr[data-task]', (trs) => trs.map((t) => t.dataset.task));
  await page.click('button[data-task-type="profile_on_cpu"]');
  const tid = await until('the profile task is done', (old) => {
    const r = [...document.querySelectorAll('#task-list tr[data-status="done"]')].find((t) => !old.includes(t.dataset.task));
    return r && r.dataset.task;
  }, old, 30000);
  ok('profile task ' + tid + ' done');
  await page.click('#task-list tr[data-task="' + tid + '"] a');
  const nframes = await until('the flame graph renders frames', () => { const f = document.querySelector('#flame .flame'); return f && Number(f.dataset.frames) > 2 && Number(f.dataset.frames); });
  ok('flame graph renders ' + nframes + ' frames');
  const fmts = await page.$$eval('button[data-format]', (b) => b.map((x) => x.dataset.format).join(','));
  if (!fmts.includes('folded') || !fmts.includes('pprof')) await fail('download buttons: ' + fmts);
  await shot('flame');
  // zoom: click the narrowest frame at least 4 px wide that does not span
  // the graph (the container runs two programs: their comm frames split
  // it); it must then span the whole graph and the frames outside its
  // subtree must be gone
  const pick = await page.evaluate(() => {
    const box = document.querySelector('#flame .flame');
    const fr = [...document.querySelectorAll('#flame .frame')].filter((d) => parseFloat(d.style.width) >= 4 &&
      parseFloat(d.style.width) < box.clientWidth * 0.9);
    fr.sort((a, b) => parseFloat(a.style.width) - parseFloat(b.style.width));
    if (!fr.length) return null;
    fr[0].setAttribute('data-pick', '1');
    return { name: fr[0].dataset.name, top: fr[0].style.top, w: parseFloat(fr[0].style.width) / box.clientWidth };
  });
  if (!pick) await fail('no frame narrower than the graph to zoom into');
  const before = await page.evaluate(() => document.querySelectorAll('#flame .frame').length);
  await page.click('#flame .frame[data-pick="1"]');
  await until('zoomed to ' + pick.name, (n) => document.querySelector('#flame .flame').dataset.zoom === n, pick.name);
  const after = await page.evaluate((p) => {
    const box = document.querySelector('#flame .flame');
    const d = [...document.querySelectorAll('#flame .frame')].find((x) => x.dataset.name === p.name && x.style.top === p.top);
    return { w: d ? parseFloat(d.style.width) / box.clientWidth : 0, n: document.querySelectorAll('#flame .frame').length };
  }, pick);
  if (after.w < 0.95) await fail('zoomed frame ' + pick.name + ' is not full width: ' + after.w);
  if (after.n >= before) await fail('zoom kept every frame: ' + before + ' before, ' + after.n + ' after');
  ok('click zooms to ' + pick.name + ' (' + (100 * pick.w).toFixed(1) + '% wide -> full width, ' + before + ' -> ' + after.n + ' frames)');
  await shot('flame-zoom');
  await page.click('#flame-reset');
  await until('zoom reset', () => document.querySelector('#flame .flame').dataset.zoom === '');
  await page.type('#flame-search', 'prof_spin_loop');
  const matches = await until('search highlights', () => Number(document.querySelector('#flame .flame').dataset.matches));
  const info = await page.$eval('#flame .flame-info', (e) => e.textContent);
  if (!/matched "prof_spin_loop": \d+/.test(info)) await fail('search info: ' + info);
  ok('search highlights ' + matches + ' frames: ' + info);
  await shot('flame-search');

  // ---- node page ----
  await go('#/node');
  const health = await (await fetch(api + '/healthz')).json();
  await until('modules table', () => document.querySelectorAll('#modules tr[data-module]').length > 0);
  for (const m of health.modules) {
    const st = await page.$eval('#modules tr.module[data-module="' + m.name + '"] td[data-state]', (e) => e.dataset.state).catch(() => null);
    if (st !== m.state) await fail('module ' + m.name + ' state in the page ' + st + ', /healthz ' + m.state);
    for (const hk of m.hooks) {
      const hs = await page.evaluate((mod, name) => {
        const td = [...document.querySelectorAll('#modules td.hook')].find((t) => t.dataset.module === mod && t.dataset.hook === name);
        return td ? td.nextElementSibling.dataset.state : null;
      }, m.name, hk.name);
      if (hs !== hk.state) await fail('hook ' + m.name + '/' + hk.name + ' state in the page ' + hs + ', /healthz ' + hk.state);
    }
  }
  ok('node page lists ' + health.modules.length + ' modules and ' + health.modules.reduce((n, m) => n + m.hooks.length, 0) + ' hooks with their states');
  await until('agent cost', () => { const e = document.querySelector('#cost [data-cost="rss"]'); return e && /B$/.test(e.textContent); });
  ok('the agent\'s own cost shown');
  await shot('node');

  // ---- node timeline ----
  await go('#/timeline');
  const schema = await (await fetch(api + '/api/v1/schema/events')).json();
  await until('node timeline lanes', (n) => document.querySelectorAll('#node-timeline [data-lane]').length >= n, schema.kinds.length);
  await until('node timeline has events', () => document.querySelectorAll('#node-timeline .ev').length > 0);
  ok('node timeline: a lane per declared kind (' + schema.kinds.length + '), events drawn');
  await shot('timeline');
  // generic over modules: a kind of a module this tree does not have (a
  // hardware module's device event) gets its lane, tinted, in the module
  // order of /healthz, through the same functions the pages use
  const gen = await page.evaluate(() => {
    const schema = { kinds: [{ name: 'exec', module: 'proc' }, { name: 'pcie_aer', module: 'hw' }, { name: 'io_stall', module: 'io' }] };
    const health = { modules: [{ name: 'proc' }, { name: 'io' }, { name: 'hw' }] };
    const lanes = SL.lanes(schema, health);
    const host = document.createElement('div');
    document.body.appendChild(host);
    const now = Date.now(), iso = new Date(now - 1000).toISOString();
    SL.timeline(host, lanes, [
      { id: 1, type: 'pcie_aer', time: iso, severity: 'error', subject_kind: 'device', device: 'pci:0000:3b:00.0' },
      { id: 2, type: 'io_stall', time: iso, severity: 'warning', subject_kind: 'task', pid: 1 },
      { id: 3, type: 'nic_reset', time: iso, severity: 'warning', subject_kind: 'device' }], now - 60e3, now, null);
    const r = { order: lanes.map((l) => l.kind).join(','),
      labels: [...host.querySelectorAll('[data-lane]')].map((t) => t.textContent),
      hw: host.querySelectorAll('.lane-hw').length, marks: host.querySelectorAll('.ev').length };
    host.remove();
    return r;
  });
  if (gen.order !== 'exec,io_stall,pcie_aer' || gen.marks !== 3 || gen.hw !== 2 ||
      !gen.labels.some((l) => l.startsWith('hw · pcie_aer [device]')) || !gen.labels.some((l) => l.startsWith('? · nic_reset')))
    await fail('generic lanes: ' + JSON.stringify(gen));
  ok('a kind of an unknown module gets its lane (device lanes tinted): ' + gen.labels.join(' | '));

  if (dialogs.length) await fail('dialogs opened: ' + JSON.stringify(dialogs));
  if (pageErrors.length) await fail('page errors: ' + JSON.stringify(pageErrors.slice(0, 5)));
  if (cspViolations.length) await fail('CSP violations: ' + JSON.stringify(cspViolations.slice(0, 5)));
  if (foreign.length) await fail('requests outside the agent: ' + JSON.stringify(foreign.slice(0, 5)));
  ok('no alert dialog, no page error, no CSP violation, no foreign request');
  await browser.close();
})().catch((e) => fail('exception: ' + (e && e.stack || e)));
