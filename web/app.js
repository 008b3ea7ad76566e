/* sandlens web UI: the router (#/..., #/container/<id>, #/task/<id>,
 * #/node, #/timeline) and the token form. */
'use strict';

const routes = [
  [/^#?\/?$/, 'containers', (v) => SL.pages.containers(v)],
  [/^#\/container\/([^/]+)$/, 'containers', (v, id) => SL.pages.container(v, id)],
  [/^#\/task\/([^/]+)$/, 'containers', (v, id) => SL.pages.task(v, id)],
  [/^#\/node$/, 'node', (v) => SL.pages.node(v)],
  [/^#\/timeline$/, 'timeline', (v) => SL.pages.timeline(v)],
];

async function show() {
  SL.stopTimers();
  SL.status('');
  const view = SL.clear(document.getElementById('view'));
  const h = location.hash || '#/';
  for (const [re, nav, fn] of routes) {
    const m = re.exec(h);
    if (!m) continue;
    for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.nav === nav);
    let arg;
    try { arg = m[1] !== undefined ? decodeURIComponent(m[1]) : undefined; } catch (e) { arg = undefined; }
    try { await fn(view, arg); } catch (e) { SL.status(e.message); view.appendChild(SL.el('p', { class: 'err' }, e.message)); }
    return;
  }
  view.appendChild(SL.el('p', { class: 'err' }, 'no such page'));
}

/* Who we are: the role the agent grants (a task list is admin-only). */
async function role() {
  const r = document.getElementById('role');
  let admin = false;
  if (SL.token()) {
    try { await SL.api('/api/v1/tasks'); admin = true; } catch (e) { SL.status(e.status === 403 ? 'the token was not accepted: reading as a reader' : e.message); }
  }
  SL.admin = admin;
  r.textContent = admin ? 'admin' : 'reader';
  r.classList.toggle('admin', admin);
}

document.getElementById('auth').addEventListener('submit', (e) => {
  e.preventDefault();
  const i = document.getElementById('token');
  SL.setToken(i.value.trim());
  i.value = '';
  role().then(show);
});
document.getElementById('token-clear').addEventListener('click', () => { SL.setToken(''); role().then(show); });
window.addEventListener('hashchange', show);
role().then(show);
