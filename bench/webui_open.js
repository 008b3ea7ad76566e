// Hold a UI page open in headless Chromium for SECONDS (bench/webui-cost.sh):
//   node webui_open.js CHROMIUM URL SECONDS PROFILE_DIR [TOKEN]
// With TOKEN, types it into the page's token field first (admin view).
'use strict';
const puppeteer = require('puppeteer-core');
const [chromium, url, secs, profile, token] = process.argv.slice(2);
(async () => {
  const b = await puppeteer.launch({ executablePath: chromium, headless: true, userDataDir: profile,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'] });
  const p = await b.newPage();
  await p.setViewport({ width: 1400, height: 1000 });
  await p.goto(url, { waitUntil: 'load' });
  if (token) { await p.type('#token', token); await p.click('#token-set'); }
  await new Promise((r) => setTimeout(r, Number(secs) * 1000));
  await b.close();
})().catch((e) => { console.error(e); process.exit(1); });
